"""Label classes a head takes at most once, learned from training trees.

A label that no head of the training trees has twice (``nsubj``, ``obj``, ``iobj``, ``xcomp``
in UD English) is its own class; subject labels (``nsubj``, ``csubj`` and their subtypes, UD's
and ClearNLP's names) that never share a head form one class, so that a predicate gets one
subject. ``decoders.batch.labels_batch`` labels trees under these classes.
"""
from collections import Counter
from itertools import combinations
from typing import Dict, Iterable, List, Sequence, Set, Tuple

# A label needs this many heads in the training trees before "never twice" counts as evidence:
# a label repeated under 8% of its heads (English amod) shows no repeat in 50 heads 1% of the time.
MIN_HEADS = 50
SUBJECTS = ("nsubj", "csubj", "nsubjpass", "csubjpass")


def label_classes(trees: Iterable[Tuple[Sequence[int], Sequence[str]]], *, min_heads: int = MIN_HEADS,
                  exclude: Sequence[str] = ("ROOT", "root")) -> List[List[str]]:
    """The classes (lists of labels, at most one child per head from each) of ``trees``: per
    tree, each word's head (any integers; a word heading itself is a root and is skipped) and
    label (empty: unknown, skipped). Labels in ``exclude`` stay unconstrained."""
    heads_with: Counter = Counter()
    repeated: Set[str] = set()
    together: Set[Tuple[str, str]] = set()
    for heads, labels in trees:
        for children in _children_labels(heads, labels).values():
            counts = Counter(children)
            heads_with.update(counts.keys())
            repeated.update(label for label, n in counts.items() if n > 1)
            together.update(combinations(sorted(counts), 2))
    single = sorted(label for label, n in heads_with.items()
                    if n >= min_heads and label not in repeated and label not in exclude)
    subjects: List[str] = []
    for label in sorted((l for l in single if l.split(":")[0] in SUBJECTS), key=lambda l: (-heads_with[l], l)):
        if not any(tuple(sorted((label, other))) in together for other in subjects):
            subjects.append(label)
    classes = [[label] for label in single if label not in subjects]
    return ([subjects] if subjects else []) + classes


def _children_labels(heads: Sequence[int], labels: Sequence[str]) -> Dict[int, List[str]]:
    children: Dict[int, List[str]] = {}
    for i, (head, label) in enumerate(zip(heads, labels)):
        if head != i and label:
            children.setdefault(head, []).append(label)
    return children
