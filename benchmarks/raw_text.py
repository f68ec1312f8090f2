"""Parsing from raw text: CoNLL 2018 scores and speed of spaCy pipelines, in one run.

The gold file's text (``# text`` lines; see ``spacy_hcparse.evaluation.raw_text``) is cut into documents of
``--group`` consecutive sentences (0: one per gold document). Each pipeline runs ``nlp.pipe`` on
those texts: spaCy's tokenizer, whatever sentence segmentation, tagging and parsing it has. Its
Docs are written as system CoNLL-U (``spacy_hcparse.evaluation.system_output``) and scored against the gold
file with the CoNLL 2018 shared task evaluation (``spacy_hcparse.evaluation.conll18``): F1 of Tokens,
Sentences, Words, UPOS, UAS and LAS in the table, every metric in ``--json``.

Speed is gold syntactic words per second of ``nlp.pipe`` over all documents: the pipelines take
turns for ``--repeats`` rounds after an untimed warm-up (``harness.interleaved_raw_speeds``, so a
slow spell of a shared machine falls on all of them); words/sec is the median of the rounds, the
ratio to the peer the median of the per-round ratios. Set ``OMP_NUM_THREADS=1`` for comparable
speeds.

A pipeline is a path to a saved spaCy pipeline, or ``blank:LANG``: ``spacy.blank(LANG)`` with a
``sentencizer`` (tokens and sentences only, no parse: every word attaches to the sentence's first),
or ``ud:FILE``: ``spacy.blank("xx")`` with the trained ``UDTokenizer`` at FILE (what
``python -m spacy_hcparse train-tokenizer`` writes; its own sentences, no parse), or
``PIPELINE@FILE``: the saved pipeline with that tokenizer in place of its own. ``--flat``: paragraph
breaks become spaces (text without line breaks) instead of blank lines.

    OMP_NUM_THREADS=1 python benchmarks/raw_text.py --gold ../shared/treebanks/UD_English-EWT/en_ewt-ud-test.conllu \\
        --group 10 --peer training/spacy/model-best --model blank=blank:en --model fast=training/fast/model-best
"""
import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Dict

import spacy
from spacy.language import Language

from spacy_hcparse.evaluation.conll18 import read_treebank
from spacy_hcparse.evaluation.harness import evaluate_raw, interleaved_raw_speeds, speed_ratio
from spacy_hcparse.evaluation.raw_text import raw_documents, sentence_texts
from spacy_hcparse.tokenizer import UDTokenizer, ud_tokenizer_for, use_ud_tokenizer

TABLE = ("Tokens", "Sentences", "Words", "UPOS", "UAS", "LAS")


def load_pipeline(spec: str) -> Language:
    if spec.startswith("ud:"):
        nlp = spacy.blank("xx")
        return use_ud_tokenizer(nlp, UDTokenizer(nlp.vocab).from_disk(spec[3:]))
    if "@" in spec:
        path, tokenizer = spec.rsplit("@", 1)
        nlp = spacy.load(path)
        return use_ud_tokenizer(nlp, ud_tokenizer_for(nlp, tokenizer))
    if spec.startswith("blank:"):
        nlp = spacy.blank(spec.split(":", 1)[1])
        nlp.add_pipe("sentencizer")
        return nlp
    return spacy.load(spec)


def run_pipeline(name: str, spec: str, nlp: Language, gold, docs, args) -> Dict:
    """The CoNLL 2018 scores of one pipeline (one untimed parse; speeds come from the turns)."""
    result = evaluate_raw(nlp, gold, docs, args.out_dir / f"{name}.conllu", repeats=1, batch_size=args.batch_size)
    if result["repairs"]:
        print(f"warning: {name}: heads repaired to write one tree per sentence: {result['repairs']}")
    return {"pipeline": name, "path": spec, "components": nlp.pipe_names, "system_file": result["system_output"],
            "scores": result["scores"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, required=True, help="gold CoNLL-U file")
    parser.add_argument("--peer", required=True, help="reference pipeline (path or blank:LANG)")
    parser.add_argument("--model", action="append", default=[], help="NAME=PATH (or NAME=blank:LANG), repeatable")
    parser.add_argument("--group", type=int, default=10, help="sentences per document (0: per gold document)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--flat", action="store_true", help="paragraph breaks as spaces, not blank lines")
    parser.add_argument("--limit", type=int, default=0, help="only the first N gold sentences (development)")
    parser.add_argument("--out-dir", type=Path, default=None, help="where system CoNLL-U files go (default: a temp dir)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if os.environ.get("OMP_NUM_THREADS") != "1":
        print("note: OMP_NUM_THREADS is not 1; speeds depend on the threads numpy's BLAS uses")
    args.out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="raw_text_"))
    args.out_dir.mkdir(parents=True, exist_ok=True)

    gold = read_treebank(args.gold)
    if args.limit:
        gold = gold.first_sentences(args.limit)
    docs = raw_documents(gold, args.group, paragraphs=not args.flat)
    rebuilt = sentence_texts(gold)[1]
    n_words = sum(d.n_words for d in docs)
    specs = [("peer", args.peer)] + [tuple(m.split("=", 1)) for m in args.model]
    pipelines = {name: load_pipeline(spec) for name, spec in specs}
    rows = [run_pipeline(name, spec, pipelines[name], gold, docs, args) for name, spec in specs]
    speeds = interleaved_raw_speeds(pipelines, docs, repeats=args.repeats, batch_size=args.batch_size)
    for row in rows:
        row["speeds"] = speeds[row["pipeline"]]
        row["wps"] = statistics.median(row["speeds"])
        row["ratio"] = speed_ratio(row["speeds"], speeds["peer"])

    print(f"{args.gold.name}: {len(gold.sentences)} sentences, {len(gold.tokens)} tokens, {n_words} words; "
          f"raw text in {len(docs)} documents of {args.group or 'a gold document'} sentences"
          + (f" ({rebuilt} sentence texts rebuilt from tokens)" if rebuilt else "")
          + ("; paragraph breaks as spaces" if args.flat else "; paragraph breaks as blank lines"))
    print(f"CoNLL 2018 F1 (%); words/s: gold words per second of nlp.pipe, median of {args.repeats} rounds "
          f"taken in turns; x peer: median of the per-round ratios")
    header = f"{'pipeline':<12}" + "".join(f"{m:>10}" for m in TABLE) + f"{'words/s':>10}{'x peer':>8}"
    print(header)
    for row in rows:
        cells = "".join(f"{100 * row['scores'][m]['f1']:10.2f}" for m in TABLE)
        print(f"{row['pipeline']:<12}{cells}{row['wps']:10.0f}{row['ratio']:8.2f}")
    print(f"system files: {args.out_dir}")
    if args.json:
        meta = {"gold": str(args.gold), "group": args.group, "flat": args.flat, "sentences": len(gold.sentences), "words": n_words,
                "documents": len(docs), "repeats": args.repeats, "batch_size": args.batch_size,
                "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
        args.json.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
