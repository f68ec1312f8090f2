"""Save a trained pipeline with the trained UD tokenizer as its own: the pipeline the workflow ships.

    python scripts/use_tokenizer.py MODEL TOKENIZER OUTPUT

``MODEL``: a saved pipeline (e.g. ``training/RUN/hc_pipeline/model-best``, trained on gold words);
``TOKENIZER``: the file ``python -m spacy_hcparse train-tokenizer`` writes
(``training/RUN/tokenizer/tokenizer``). ``OUTPUT`` (e.g. ``training/RUN/hc_pipeline_ud/model-best``)
is the same pipeline with ``[nlp.tokenizer] @tokenizers = "spacy_hcparse.UDTokenizer.v1"`` and the
trained weights in its ``tokenizer`` file (``use_ud_tokenizer``), so that ``spacy.load(OUTPUT)``,
and the package built from it, segments raw text as the treebank does (multiword tokens, sentence
starts) with no extra step. Sentence starts are the tokenizer's unless the pipeline has a parser
that segments itself (``hc_parser``, ``hc_transition_parser``): then the parser's
(``ud_tokenizer_for``). The pipeline's components are not retrained: they were trained on
the gold words, which is what the UD tokenizer produces.

The output is loaded back and must tokenize a text as the tokenizer does alone; otherwise the
step fails (exit 1). ``meta.json`` records the tokenizer (``hcparse_tokenizer``: its file and its
scores on the development text, from ``scores.json`` beside it where present).
"""
import argparse
import json
from pathlib import Path
from typing import Dict

import spacy
from spacy.language import Language
from wasabi import msg

from spacy_hcparse.tokenizer import UDTokenizer, ud_tokenizer_for, use_ud_tokenizer

CHECK_TEXT = "This is a check. It has two sentences, and a number: 3.5%."


def with_tokenizer(model: Path, tokenizer: Path) -> Language:
    """The pipeline at ``model`` with the trained UD tokenizer at ``tokenizer`` as its own."""
    nlp = spacy.load(model)
    use_ud_tokenizer(nlp, ud_tokenizer_for(nlp, tokenizer))
    nlp.meta["hcparse_tokenizer"] = tokenizer_meta(tokenizer)
    return nlp


def tokenizer_meta(tokenizer: Path) -> Dict:
    """Where the tokenizer came from and its development scores as it tokenizes (``scores.json``):
    those of the hint weight training chose and kept (``hint_weights``), else the best checkpoint's
    (scored with the model alone)."""
    meta: Dict = {"file": str(tokenizer)}
    scores = tokenizer.parent / "scores.json"
    if scores.exists():
        report = json.loads(scores.read_text())
        kept = (report.get("cfg") or {}).get("hint_weight")
        chosen = next((dict(row) for row in report.get("hint_weights") or [] if row.get("hint_weight") == kept), None)
        if chosen is not None:
            chosen.pop("score", None)
        meta.update({"train": report.get("train"), "dev": report.get("dev"),
                     "dev_scores": chosen or (report.get("best") or {}).get("scores")})
    return meta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("tokenizer", type=Path)
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    nlp = with_tokenizer(args.model, args.tokenizer)
    args.output.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.output)
    loaded = spacy.load(args.output)
    alone = UDTokenizer(loaded.vocab).from_disk(args.tokenizer)
    if not isinstance(loaded.tokenizer, UDTokenizer):
        msg.fail(f"{args.output}: loads with {type(loaded.tokenizer).__name__}, not UDTokenizer", exits=1)
    if [t.text for t in loaded.tokenizer(CHECK_TEXT)] != [t.text for t in alone(CHECK_TEXT)]:
        msg.fail(f"{args.output}: its tokenizer does not tokenize as {args.tokenizer}", exits=1)
    if loaded.tokenizer.cfg["set_sent_starts"] != nlp.tokenizer.cfg["set_sent_starts"]:
        msg.fail(f"{args.output}: its tokenizer loads with set_sent_starts={loaded.tokenizer.cfg['set_sent_starts']}", exits=1)
    msg.good(f"{args.output}: {args.model} ({', '.join(nlp.pipe_names)}) with the UD tokenizer {args.tokenizer}")


if __name__ == "__main__":
    main()
