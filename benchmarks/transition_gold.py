"""How much of a training corpus ``hc_transition_parser`` learns from: words whose gold arc it
trains on, words of spans it skips, and what skipping every span with unknown gold would lose.

Reads a spaCy corpus the way ``spacy train`` does (``spacy.Corpus``; ``--raw`` for
``gold_preproc = false``: whole documents tokenized by spaCy's tokenizer, so some tokens do not
align with the reference), builds each example's gold as the component does
(``transition.projective_gold.example_gold``: the reference's sentences, projectivized, labels
learned at the given cutoff) and prints, over all predicted words:

- known: words whose head (and so whose arc) is known: what training learns from;
- unknown head: words in kept spans whose head is unknown (no aligned token, or an arc leaving a
  chunk of a long sentence): the dynamic oracle learns nothing about their arcs;
- in skipped spans: words of spans whose gold cannot be one tree (treebank defects);
- whole-sentence skipping: the words of every span with any unknown head or label, plus the
  skipped ones: what dropping partial sentences would lose.

    python benchmarks/transition_gold.py /work/main/corpus/UD_English-EWT/train.spacy --raw
"""
import argparse
from collections import Counter

import spacy
from spacy.training import Corpus

from spacy_hcparse.learning.gold import lifted_labels
from spacy_hcparse.names import ROOT_LABEL
from spacy_hcparse.transition.projective_gold import example_gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("--raw", action="store_true", help="gold_preproc = false (default: gold tokens)")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--cutoff", type=int, default=30, help="label_freq_cutoff")
    parser.add_argument("--max-length", type=int, default=200)
    args = parser.parse_args()
    nlp = spacy.blank(args.lang)
    corpus = Corpus(args.corpus, gold_preproc=not args.raw)
    labels = [ROOT_LABEL] + [label for label in lifted_labels(corpus(nlp), args.cutoff) if label != ROOT_LABEL]
    label_ids = {label: i for i, label in enumerate(labels)}
    counts: Counter = Counter()
    for eg in corpus(nlp):
        gold = example_gold(eg, args.max_length, label_ids, {})
        counts["words"] += len(eg.predicted)
        counts["reference words"] += len(eg.reference)
        counts["docs"] += 1
        counts["spans"] += len(gold.spans) + len(gold.skipped)
        counts["skipped spans"] += len(gold.skipped)
        counts["in skipped spans"] += sum(end - start for (start, end), _ in gold.skipped)
        for (start, end), (heads, span_labels, _) in zip(gold.spans, gold.trees):
            known = int((heads[1:] >= 0).sum())
            counts["known"] += known
            counts["unknown head"] += end - start - known
            if known < end - start or (span_labels < 0).any():
                counts["partial spans"] += 1
                counts["in partial spans"] += end - start
    words = counts["words"]
    print(f"{args.corpus} ({'raw text, spaCy tokens' if args.raw else 'gold tokens'}): {counts['docs']} docs, "
          f"{words} predicted words ({counts['reference words']} reference), {counts['spans']} sentence spans")
    for key in ("known", "unknown head", "in skipped spans"):
        print(f"  {key:<17} {counts[key]:>7}  {counts[key] / words:7.2%}")
    print(f"  spans kept with partial gold: {counts['partial spans']} ({counts['in partial spans']} words); "
          f"skipped: {counts['skipped spans']}")
    lost = counts["in partial spans"] + counts["in skipped spans"]
    print(f"  whole-sentence skipping would lose {lost} words ({lost / words:.2%}); "
          f"now lost: {words - counts['known']} ({(words - counts['known']) / words:.2%})")


if __name__ == "__main__":
    main()
