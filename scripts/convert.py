"""Gold CoNLL-U splits and spaCy corpora for one workflow run.

    python scripts/convert.py assets/ud/TREEBANK corpus/RUN [--train-limit N] [--eval-limit N]

Reads ``source.json`` from fetch_treebank.py. Writes ``train/dev/test.conllu`` (the gold files the
evaluation reads; sentences whose heads are not one tree, i.e. a cycle, no root or several roots,
are dropped: each is reported by file, line and ``sent_id`` on the console and listed in
``data.json`` under ``dropped_sentences``; a malformed line stops the step with its file and
line), the matching
``.spacy`` files made by ``spacy convert --converter conllu`` (gold syntactic words: multiword
tokens are split as in the CoNLL-U word lines, which is what the evaluation aligns to; gold
sentence boundaries), and ``data.json`` describing the run's data. Without a train file, dev is
split: every ``--heldout``-th dev sentence (default 10th) is held out as the dev corpus for model
selection and the rest is the training set; only test is evaluated. (Selecting checkpoints on the
training sentences themselves picks the most overfitted one, which costs most where a treebank has
a few hundred sentences.)
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

from wasabi import msg

from spacy_hcparse.conllu import ConlluError, read_conllu

SHOW = 20  # dropped sentences printed per split (all of them are in data.json)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assets", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--train-limit", type=int, default=0, help="first N training sentences (0: all)")
    parser.add_argument("--eval-limit", type=int, default=0, help="first N dev/test sentences (0: all)")
    parser.add_argument("--n-sents", type=int, default=10, help="sentences per Doc in the .spacy files")
    parser.add_argument("--heldout", type=int, default=10,
                        help="without a train file: every Nth dev sentence is the dev corpus, the rest trains")
    args = parser.parse_args()
    source = json.loads((args.assets / "source.json").read_text())
    files = source["files"]
    args.output.mkdir(parents=True, exist_ok=True)
    train_on = "train" if files.get("train") else "dev"
    plan = {"train": (files[train_on], args.train_limit), "dev": (files["dev"], args.eval_limit),
            "test": (files["test"], args.eval_limit)}
    counts, dropped, splits = {}, {}, {}
    for split, (path, limit) in plan.items():
        try:
            blocks, bad = valid_blocks(Path(path))
        except ConlluError as err:
            print(f"error: cannot convert {split}: {err}", file=sys.stderr, flush=True)  # unwrapped: file:line
            sys.exit(1)
        splits[split] = (blocks, limit)
        dropped[split] = bad
    if train_on == "dev":
        train, heldout = split_heldout(splits["dev"][0], args.heldout)
        splits["train"] = (train, args.train_limit)
        splits["dev"] = (heldout, 0)
        dropped["train"] = []  # the dev file's dropped sentences are listed once, under dev
    for split, (blocks, limit) in splits.items():
        if limit:
            blocks = blocks[:limit]
        out = args.output / f"{split}.conllu"
        out.write_text("".join(b + "\n" for b in blocks), encoding="utf8")
        counts[split] = {"sentences": len(blocks), "words": sum(len(s.words) for s in read_conllu(out))}
        spacy_convert(out, args.output, args.n_sents)
    info = {
        "treebank": source["treebank"],
        "source": source["source"],
        "source_note": source.get("note", ""),
        "train_on": train_on,
        "dev_heldout": f"every {args.heldout}th sentence of the dev file (the rest trains)" if train_on == "dev" else None,
        "eval_splits": ["dev", "test"] if train_on == "train" else ["test"],
        "train_limit": args.train_limit,
        "eval_limit": args.eval_limit,
        "counts": counts,
        "dropped_not_trees": {k: len(v) for k, v in dropped.items()},
        "dropped_sentences": dropped,
    }
    (args.output / "data.json").write_text(json.dumps(info, indent=2) + "\n")
    if train_on == "dev":
        msg.warn(f"{source['treebank']} has no train file: training on dev (every {args.heldout}th sentence held "
                 "out for model selection), evaluating on test only")
    for split, bad in dropped.items():
        if bad:  # one unwrapped line per sentence, so the file:line and sent_id can be grepped
            msg.warn(f"{split}: {len(bad)} sentences are not trees and were dropped")
        for message in bad[:SHOW]:
            print(f"  dropped ({split}): {message}", flush=True)
        if len(bad) > SHOW:
            print(f"  dropped ({split}): {len(bad) - SHOW} more, listed in {args.output / 'data.json'}", flush=True)
    msg.good(f"{args.output}: " + ", ".join(f"{k} {v['sentences']} sents / {v['words']} words" for k, v in counts.items()))


def valid_blocks(path: Path) -> Tuple[List[str], List[str]]:
    """Raw sentence blocks (multiword-token lines kept) of the sentences that are trees, and the
    messages of the dropped ones. Malformed lines raise ``ConlluError`` with file and line."""
    skipped: List[str] = []
    keep = {s.line for s in read_conllu(path, skip_invalid=True, skipped=skipped)}
    blocks, lines, first = [], [], 0
    with path.open(encoding="utf8") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if raw.strip():
                first = first or lineno
                lines.append(raw.rstrip("\r\n"))
                continue
            if lines and first in keep:
                blocks.append("\n".join(lines) + "\n")
            lines, first = [], 0
    if lines and first in keep:
        blocks.append("\n".join(lines) + "\n")
    return blocks, skipped


def split_heldout(blocks: List[str], every: int) -> Tuple[List[str], List[str]]:
    """(training blocks, held-out blocks): every ``every``-th block (the 10th, 20th, ...) is held
    out, spread over the file so it covers its documents and genres."""
    if every < 2:
        raise ValueError(f"--heldout must be >= 2, got {every}")
    heldout = [b for i, b in enumerate(blocks, start=1) if i % every == 0]
    return [b for i, b in enumerate(blocks, start=1) if i % every], heldout


def spacy_convert(path: Path, output: Path, n_sents: int) -> None:
    cmd = [sys.executable, "-m", "spacy", "convert", str(path), str(output), "--converter", "conllu",
           "--n-sents", str(n_sents), "--file-type", "spacy"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        msg.fail(f"spacy convert failed on {path}:\n{result.stdout}\n{result.stderr}", exits=1)


if __name__ == "__main__":
    main()
