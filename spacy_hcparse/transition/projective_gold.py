"""Pseudo-projective gold for the transition parser: each example's gold: the reference's
sentences as spans of the predicted doc, their trees as label ids (``-1`` where a head or label
is unknown), the sentence starts and the tags.

spaCy's pseudo-projective transform (``Example.get_aligned_parse(projectivize=True)``) lifts
non-projective arcs and decorates their labels ``head||dep``; decorated labels rarer than a
cutoff in the training data are not learned (``learning.gold.lifted_labels``) and fall back to
their plain label.
"""
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from spacy.training import Example

from ..learning.gold import DECORATION, aligned_gold, partial_span_tree, partially_annotated, reference_spans
from ..names import ROOT_LABEL, Span
from ..segment import continues

def span_gold(
    heads: np.ndarray, deps: Sequence[str], start: int, end: int, label_ids: Dict[str, int], root: int,
    chunk: bool = False,
) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """Span-local projectivized gold (heads (n+1,), label ids (n,)) from absolute ``heads``
    (``-1`` unknown), ``-1`` where a head is unknown (or outside a ``chunk`` of a longer sentence)
    and where a label is: one the component does not know, or ``ROOT`` on a word that does not
    attach to the root. None if the known arcs cannot be part of one tree
    (``learning.gold.partial_span_tree``). Decorated labels not kept at initialization fall back to their
    plain label; the root's dependent gets ``ROOT``."""
    local = partial_span_tree(heads, start, end, chunk)
    if local is None:
        return None
    labels = np.full(end - start, -1, dtype=np.int64)
    for m in range(end - start):
        if local[m + 1] < 0:
            continue
        if local[m + 1] == 0:
            labels[m] = root
            continue
        dep = deps[start + m] or ""
        label = label_ids.get(dep, label_ids.get(dep.split(DECORATION)[0], -1))
        labels[m] = -1 if label == root else label
    return local, labels


class ExampleGold(NamedTuple):
    """An example's gold for the transition parser."""

    spans: List[Span]  # the reference's sentences (chunked) whose gold can be part of one tree
    trees: List[Tuple[np.ndarray, np.ndarray, np.ndarray]]  # per span: heads (n+1,), label ids (n,), tag ids (n+1,)
    starts: np.ndarray  # (n_tokens,) sentence starts: 1, 0, or -1 unknown (always the first token)
    skipped: List[Tuple[Span, bool]]  # spans whose gold cannot be one tree, and whether each is a chunk
    heads: List[Optional[int]]  # the aligned absolute heads (for reports)


def example_gold(eg: Example, max_length: int, label_ids: Dict[str, int], tag_ids: Dict[str, int]) -> ExampleGold:
    """The gold the transition parser trains on from ``eg``: the reference's sentences whatever
    the predicted doc carries (``learning.gold.reference_spans``), their trees (``span_gold``; tag ids
    ``-1`` on the root row and where unknown), and the sentence starts, the first token's left
    unknown (it always begins a sentence: nothing to learn there).

    A fully annotated reference is projectivized. Heads the reference leaves missing (spaCy keeps
    them as the token heading itself with no label) are unknown (``-1``), and such a reference is
    not projectivized: spaCy's transform would read each missing head as one more root and lift
    known arcs over it; the dynamic oracle learns the known arcs of any tree as they are."""
    partial = partially_annotated(eg)
    heads, deps, tags = aligned_gold(eg, projectivize=not partial, tags=bool(tag_ids))
    tags = np.array([tag_ids.get(t, -1) if t else -1 for t in (tags or [None] * len(heads))], dtype=np.int64)
    absolute = np.array([-1 if h is None or (h == i and not d) else h for i, (h, d) in enumerate(zip(heads, deps))],
                        dtype=np.int64)
    spans, starts = reference_spans(eg, max_length, absolute if partial else None)
    joined = continues(spans, np.flatnonzero(starts == 1).tolist())
    kept, trees, skipped = [], [], []
    for i, (start, end) in enumerate(spans):
        chunk = joined[i] or (i + 1 < len(joined) and joined[i + 1])
        gold = span_gold(absolute, deps, start, end, label_ids, label_ids[ROOT_LABEL], chunk)
        if gold is None:
            skipped.append(((start, end), chunk))
            continue
        kept.append((start, end))
        trees.append((*gold, np.concatenate([[-1], tags[start:end]])))
    starts = np.concatenate([[-1], starts[1:]]).astype(np.int64) if len(starts) else starts
    return ExampleGold(kept, trees, starts, skipped, heads)
