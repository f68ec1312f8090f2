"""Pseudo-projective gold for the transition parser: which labels it learns, and each span's
gold tree as label ids.

spaCy's pseudo-projective transform (``Example.get_aligned_parse(projectivize=True)``) lifts
non-projective arcs and decorates their labels ``head||dep``; decorated labels rarer than a
cutoff in the training data are not learned and fall back to their plain label.
"""
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.pipeline._parser_internals import nonproj
from spacy.training import Example

from .base import span_tree

DECORATION = nonproj.DELIMITER  # "||"
ROOT_LABEL = "ROOT"  # the label of the root's dependent, and of nothing else


def lifted_labels(examples: Iterable[Example], cutoff: int) -> List[str]:
    """The labels of the examples' projectivized trees: every plain label and the decorated ones
    seen at least ``cutoff`` times, sorted, without the root's."""
    counts: Counter = Counter()
    for eg in examples:
        _, deps = eg.get_aligned_parse(projectivize=True)
        counts.update(d for d in deps if d)
    plain = {d.split(DECORATION)[0] for d in counts}
    decorated = {d for d, c in counts.items() if DECORATION in d and c >= cutoff}
    return sorted((plain | decorated) - {ROOT_LABEL, "root", ""})


def span_gold(
    heads: np.ndarray, deps: Sequence[str], start: int, end: int, label_ids: Dict[str, int], root: int
) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """Span-local projectivized gold (heads (n+1,), label ids (n,)) from absolute ``heads``
    (``-1`` unknown), or None if the gold is not one tree inside the span (the oracle needs one)
    or uses an unknown label. Decorated labels not kept at initialization fall back to their
    plain label; the root's dependent gets ``ROOT``."""
    local = span_tree(heads, start, end)
    if local is None:
        return None
    labels = np.empty(end - start, dtype=np.int64)
    for m in range(end - start):
        if local[m + 1] == 0:
            labels[m] = root
            continue
        dep = deps[start + m] or ""
        label = label_ids.get(dep, label_ids.get(dep.split(DECORATION)[0], -1))
        if label < 0 or label == root:
            return None
        labels[m] = label
    return local, labels
