"""Command line: ``python -m spacy_hcparse parse|evaluate``.

    python -m spacy_hcparse parse MODEL INPUT [--format conllu|json] [--output FILE]
    python -m spacy_hcparse evaluate GOLD SYSTEM [--json FILE]

``parse`` reads plain text (one sentence or paragraph per line; the pipeline tokenizes and the
parser splits) or CoNLL-U (gold words and sentences are kept: one Doc per sentence with its start
preset, the input's other columns copied through) and writes CoNLL-U or JSON. ``evaluate`` prints
the UD metrics of ``spacy_hcparse.evaluation`` (punctuation counted, label subtypes dropped).
"""
import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional, TextIO

from .conllu import ConlluError, parse_conllu, read_lines
from .evaluation import doc_rows, input_doc, score_conllu, sentence_conllu

CONLLU_SUFFIXES = (".conllu", ".conll", ".conllx")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spacy_hcparse", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("parse", help="parse text or CoNLL-U with a trained pipeline")
    p.add_argument("model", help="pipeline directory or installed package name")
    p.add_argument("input", type=Path, help="text file (one sentence/paragraph a line) or CoNLL-U; '-' for stdin")
    p.add_argument("--format", choices=("conllu", "json"), default="conllu", help="output format")
    p.add_argument("--input-format", choices=("auto", "text", "conllu"), default="auto")
    p.add_argument("--output", type=Path, default=None, help="output file (default: stdout)")
    p.add_argument("--batch-size", type=int, default=64)
    e = sub.add_parser("evaluate", help="UD metrics of a system CoNLL-U file against gold")
    e.add_argument("gold", type=Path)
    e.add_argument("system", type=Path)
    e.add_argument("--json", type=Path, default=None, help="also write the metrics as JSON")
    e.add_argument("--per-label", action="store_true", help="print the per-label table")
    args = parser.parse_args(argv)
    try:
        if args.command == "parse":
            return _parse(args)
        return _evaluate(args)
    except (ConlluError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


def _parse(args) -> int:
    import spacy

    nlp = spacy.load(args.model)
    lines = _read_input(args.input)
    conllu = args.input_format == "conllu" or (args.input_format == "auto" and _looks_like_conllu(args.input, lines))
    with _open_output(args.output) as out:
        if conllu:
            name = "<stdin>" if str(args.input) == "-" else str(args.input)
            sentences = list(parse_conllu(lines, name, words_only=True))  # heads, if any, are replaced
            docs = nlp.pipe((input_doc(nlp, s) for s in sentences), batch_size=args.batch_size)
            _write(out, args.format, _progress(docs, len(sentences)), sentences)
        else:
            texts = [line.strip() for line in lines if line.strip()]
            docs = nlp.pipe(texts, batch_size=args.batch_size)
            _write(out, args.format, _progress(docs, len(texts)), None)
    return 0


def _write(out: TextIO, fmt: str, docs, sentences) -> None:
    if fmt == "conllu":
        if sentences is not None:
            for doc, sent in zip(docs, sentences):
                out.write(sentence_conllu(doc, sent))
            return
        for doc in docs:
            for i, sent in enumerate(doc.sents):
                out.write(f"# text = {sent.text}\n")
                out.write(sentence_conllu(sent.as_doc()))
        return
    records = []
    for doc in docs:
        records.append(
            {
                "text": doc.text,
                "sentences": [
                    [{"id": i, "form": f, "head": h, "deprel": d} for i, (f, h, d) in enumerate(doc_rows(s.as_doc()), 1)]
                    for s in doc.sents
                ],
            }
        )
    json.dump(records, out, ensure_ascii=False, indent=1)
    out.write("\n")


def _evaluate(args) -> int:
    scores = score_conllu(args.gold, args.system)
    print(f"{args.system} against {args.gold}: {scores['sentences']} sentences, {scores['words']} words")
    print("UD-style: punctuation counted, label subtypes dropped")
    for key in ("ud_uas", "ud_las", "exact_uas", "exact_las"):
        print(f"  {key:<10} {_pct(scores[key])}")
    np_ = scores["nonprojective"]
    print(
        f"  non-projective arcs: gold {np_['gold_arcs']}, system {np_['system_arcs']}, "
        f"precision {_pct(np_['precision'])}, recall {_pct(np_['recall'])}"
    )
    if args.per_label:
        print(f"  {'label':<12} {'gold':>6} {'P':>7} {'R':>7} {'F':>7}")
        for label, s in scores["ud_las_per_label"].items():
            print(f"  {label:<12} {s['gold']:>6} {_pct(s['p']):>7} {_pct(s['r']):>7} {_pct(s['f']):>7}")
    if args.json:
        args.json.write_text(json.dumps(scores, indent=2) + "\n")
    return 0


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def _read_input(path: Path) -> List[str]:
    return read_lines(path)  # errors name the line that is not UTF-8


def _looks_like_conllu(path: Path, lines: List[str]) -> bool:
    if path.suffix.lower() in CONLLU_SUFFIXES:
        return True
    for line in lines:
        if line.strip() and not line.startswith("#"):
            return len(line.rstrip("\r\n").split("\t")) == 10
    return False


class _open_output:
    def __init__(self, path: Optional[Path]):
        self.path = path

    def __enter__(self) -> TextIO:
        self.handle = sys.stdout if self.path is None else self.path.open("w", encoding="utf8")
        return self.handle

    def __exit__(self, *exc) -> None:
        if self.path is not None:
            self.handle.close()


def _progress(docs, total: int):
    if total < 200 or not sys.stderr.isatty():
        return docs
    from tqdm import tqdm

    return tqdm(docs, total=total, unit="doc", file=sys.stderr, mininterval=1.0)
