"""Split a ``.spacy`` training file into folds of whole docs, for cross-fitted teachers.

    python scripts/split_corpus.py corpus/RUN/train.spacy corpus/RUN/folds --folds 2

Fold ``k`` holds docs ``k, k + K, k + 2K, ...`` of the file (every K-th doc, so that each fold
samples every genre of a treebank sorted by genre). ``OUT/foldK/train.spacy`` is the fold's
training file (the docs outside fold ``k``: what teacher ``k`` trains on) and
``OUT/foldK/held_out.spacy`` the fold itself (the docs teacher ``k`` labels for the student);
``OUT/foldK/dev.spacy`` is a copy of the corpus's dev file, when there is one beside the input.
"""
import argparse
import shutil
from pathlib import Path

import spacy
from spacy.tokens import DocBin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("train", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--folds", type=int, default=2)
    args = parser.parse_args()
    if args.folds < 2:
        parser.error("--folds must be at least 2")
    nlp = spacy.blank("xx")
    docs = list(DocBin().from_disk(args.train).get_docs(nlp.vocab))
    dev = args.train.parent / "dev.spacy"
    for k in range(args.folds):
        out = args.output / f"fold{k}"
        out.mkdir(parents=True, exist_ok=True)
        held_out = docs[k::args.folds]
        rest = [doc for i, doc in enumerate(docs) if i % args.folds != k]
        DocBin(docs=rest, store_user_data=True).to_disk(out / "train.spacy")
        DocBin(docs=held_out, store_user_data=True).to_disk(out / "held_out.spacy")
        if dev.exists():
            shutil.copyfile(dev, out / "dev.spacy")
        print(f"fold {k}: {len(rest)} training docs, {len(held_out)} held out -> {out}")


if __name__ == "__main__":
    main()
