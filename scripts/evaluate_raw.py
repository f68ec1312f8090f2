"""Evaluate a run's raw-text pipelines from the text of its gold files: metrics/RUN/raw_text.json.

    python scripts/evaluate_raw.py corpus/RUN training/RUN metrics/RUN [--group 10] [--repeats 3]
        [--pipelines hc_pipeline,hc_pipeline_ud,hc_parser,spacy_pipeline] [--peer spacy_pipeline]
        [--tokenizer training/RUN/tokenizer/tokenizer] [--flat]

Each pipeline (``training/RUN/<name>/model-best``: the raw-text pipeline, the same pipeline shipped
with the trained UD tokenizer, the fast ``hc_parser`` alone, which segments, tags and parses with
one tok2vec, and spaCy's pipeline) parses the text of the run's gold dev and test
files (``corpus/RUN/<split>.conllu``, test only when dev was the training set) as a user would:
``nlp.pipe`` on documents of ``--group`` consecutive sentences (the ``# text`` lines; 10, as
``spacy convert -n 10`` made the training docs), so the tokenizer, the pipeline's own
sentence boundaries, tags and parse are all scored. Scoring is
``spacy_hcparse.evaluation.harness.evaluate_raw`` (the CoNLL 2018 shared task evaluation); the
system CoNLL-U goes to ``training/RUN/<name>/output/<split>.raw.conllu`` (``.raw_flat.conllu``). Speed: gold words per
second of ``nlp.pipe``, the pipelines taking turns for ``--repeats`` rounds
(``harness.interleaved_raw_speeds``): words/sec is each one's median, ``ratio_to_spacy`` the median
of its per-round ratios to the peer's (``--peer``, spaCy's pipeline with spaCy's tokenizer).

Both tokenizers: ``--tokenizer FILE`` (the trained ``UDTokenizer``, ``train-tokenizer``'s output)
scores every listed pipeline that has spaCy's tokenizer a second time with FILE in its place, as
``<name>_ud`` (system files ``<split>.raw_ud.conllu``), unless ``<name>_ud`` is itself listed: a
saved pipeline that carries the UD tokenizer (``scripts/use_tokenizer.py``, what the workflow
ships) is scored as saved. Each entry records its ``tokenizer`` ("spaCy rules" or "UD").

``--flat``: paragraph breaks become spaces instead of blank lines (text without line breaks, where
a blank line gives away a sentence boundary), written to ``raw_text_flat.json``.

``raw_text.json``: per pipeline and split, every CoNLL 2018 metric (precision, recall, F1, aligned
accuracy), the speeds, ``ratio_to_spacy`` (against the peer, same split) and
the head repairs made to write one tree per sentence. A pipeline without a trained model is an
error (checked before any is evaluated), and so is a ``--tokenizer`` file that is missing.
"""
import argparse
import json
import platform
import statistics
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import spacy
from spacy.language import Language
from wasabi import msg

from spacy_hcparse.evaluation.conll18 import read_treebank
from spacy_hcparse.evaluation.harness import evaluate_raw, interleaved_raw_speeds, speed_ratio
from spacy_hcparse.evaluation.raw_text import raw_documents, sentence_texts
from spacy_hcparse.tokenizer import UDTokenizer, use_ud_tokenizer

PIPELINES = ("hc_pipeline", "hc_pipeline_ud", "hc_parser", "spacy_pipeline")
PEER = "spacy_pipeline"
UD = "_ud"  # the suffix of a pipeline name with the UD tokenizer
TABLE = ("Tokens", "Sentences", "Words", "UPOS", "UAS", "LAS", "CLAS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("training", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--group", type=int, default=10, help="sentences per document (0: per gold document)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--pipelines", default=",".join(PIPELINES))
    parser.add_argument("--peer", default=PEER, help="the pipeline the speed ratios are to (default: %(default)s)")
    parser.add_argument("--tokenizer", type=Path, default=None,
                        help="trained UD tokenizer: also score each listed pipeline with it, as NAME_ud")
    parser.add_argument("--flat", action="store_true", help="paragraph breaks as spaces, not blank lines")
    args = parser.parse_args()
    suffix = "_flat" if args.flat else ""  # of the output files: raw_text_flat.json, <split>.raw_flat.conllu
    data = json.loads((args.corpus / "data.json").read_text())
    result = {"treebank": data["treebank"], "data_source": data["source"], "train_on": data["train_on"],
              "group": args.group, "paragraphs": "space" if args.flat else "blank line", "repeats": args.repeats, "batch_size": args.batch_size,
              "peer": args.peer, "tokenizer": str(args.tokenizer) if args.tokenizer else None,
              "machine": platform.processor() or platform.machine(), "splits": {}, "pipelines": {}}
    inputs = {}
    for split in data["eval_splits"]:
        gold = read_treebank(args.corpus / f"{split}.conllu")
        docs = raw_documents(gold, args.group, paragraphs=not args.flat)
        inputs[split] = (gold, docs)
        result["splits"][split] = {"sentences": len(gold.sentences), "words": sum(d.n_words for d in docs),
                                   "documents": len(docs), "texts_rebuilt": sentence_texts(gold)[1]}
    names = args.pipelines.split(",")
    for name in names:
        if not (args.training / name / "model-best").exists():
            msg.fail(f"{name}: no trained pipeline at {args.training / name / 'model-best'}", exits=1)
    if args.tokenizer is not None and not args.tokenizer.is_file():
        msg.fail(f"no trained UD tokenizer at {args.tokenizer}", exits=1)
    if args.peer not in names:
        msg.warn(f"the peer {args.peer} is not among the pipelines: no speed ratios")
    loaded = load_pipelines(args.training, names, args.tokenizer)
    pipelines = {name: nlp for name, (_, nlp) in loaded.items()}
    for name, (model, nlp) in loaded.items():
        swapped = UD if name not in names else ""  # a listed pipeline with the UD tokenizer swapped in
        result["pipelines"][name] = evaluate_pipeline(name, nlp, model, inputs, f"raw{swapped}{suffix}")
    for split, (_, docs) in inputs.items():
        msg.info(f"timing on {split}: {args.repeats} rounds, the pipelines taking turns")
        speeds = interleaved_raw_speeds(pipelines, docs, repeats=args.repeats, batch_size=args.batch_size)
        add_speeds(result["pipelines"], split, speeds, args.peer)
    args.output.mkdir(parents=True, exist_ok=True)
    path = args.output / f"raw_text{suffix}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    for split in inputs:
        print("\n".join(table_lines(result["pipelines"], split)))
    msg.good(f"wrote {path}")


def load_pipelines(training: Path, names: List[str], tokenizer: Optional[Path] = None) -> Dict[str, Tuple[Path, Language]]:
    """``{name: (model path, pipeline)}``: each listed pipeline as saved, each followed, with a
    ``tokenizer``, by ``<name>_ud``: the same pipeline with the UD tokenizer in place of spaCy's
    (not for a pipeline that already has a UDTokenizer, nor where ``<name>_ud`` is listed)."""
    loaded: Dict[str, Tuple[Path, Language]] = {}
    for name in names:
        model = training / name / "model-best"
        nlp = spacy.load(model)
        loaded[name] = (model, nlp)
        if tokenizer is not None and not isinstance(nlp.tokenizer, UDTokenizer) and name + UD not in names:
            swapped = spacy.load(model)
            loaded[name + UD] = (model, use_ud_tokenizer(swapped, UDTokenizer(swapped.vocab).from_disk(tokenizer)))
    return loaded


def tokenizer_kind(nlp: Language) -> str:
    """Which tokenizer a pipeline has: "UD" (the trained UDTokenizer) or "spaCy rules"."""
    return "UD" if isinstance(nlp.tokenizer, UDTokenizer) else "spaCy rules"


def evaluate_pipeline(name: str, nlp: Language, model: Path, inputs: Dict, kind: str = "raw") -> Dict:
    """Every CoNLL 2018 score of one pipeline (saved at ``model``) on each split (one untimed
    parse; the system output in ``model``'s sibling ``output/<split>.<kind>.conllu``)."""
    out_dir = model.parent / "output"
    out_dir.mkdir(exist_ok=True)
    entry = {"model": str(model), "pipeline": nlp.pipe_names, "tokenizer": tokenizer_kind(nlp), "splits": {}}
    for split, (gold, docs) in inputs.items():
        msg.info(f"{name} on {split} (raw text, {len(docs)} documents)")
        scores = evaluate_raw(nlp, gold, docs, out_dir / f"{split}.{kind}.conllu", repeats=1)
        if scores["repairs"]:
            msg.warn(f"{name}/{split}: heads repaired to write one tree per sentence: {scores['repairs']}")
        entry["splits"][split] = scores
    return entry


def add_speeds(pipelines: Dict, split: str, speeds: Dict[str, List[float]], peer: str = PEER) -> None:
    """Words/sec (median of the rounds) and ``ratio_to_spacy`` (median per-round ratio to the
    ``peer``'s; None without the peer) of every pipeline on ``split``."""
    for name, runs in speeds.items():
        scores = pipelines[name]["splits"][split]
        scores["words_per_sec"], scores["words_per_sec_runs"] = statistics.median(runs), runs
        scores["ratio_to_spacy"] = speed_ratio(runs, speeds[peer]) if peer in speeds else None


def table_lines(pipelines: Dict, split: str) -> List[str]:
    """The console table of one split: CoNLL 2018 F1 (%), words/sec, ratio to the peer."""
    lines = [f"{split}: CoNLL 2018 F1 (%) from raw text",
             f"{'pipeline':<20}" + "".join(f"{m:>10}" for m in TABLE) + f"{'words/s':>10}{'x spaCy':>9}"]
    for name, entry in pipelines.items():
        s = entry["splits"].get(split)
        if s is None:
            continue
        ratio = "n/a" if s["ratio_to_spacy"] is None else f"{s['ratio_to_spacy']:.2f}"
        lines.append(f"{name:<20}" + "".join(f"{100 * s['scores'][m]['f1']:10.2f}" for m in TABLE)
                     + f"{s['words_per_sec']:10.0f}{ratio:>9}")
    return lines


if __name__ == "__main__":
    main()
