"""Writing trees onto Docs: one tree per span, never crossing spans, one root each."""
from typing import List, Sequence, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.tokens import Doc


def write_trees(
    doc: Doc, spans: Sequence[Tuple[int, int]], heads: Sequence[np.ndarray], labels: Sequence[List[str]]
) -> None:
    """Set ``token.head`` and ``token.dep_`` from span-local trees.

    ``heads[i]`` is the (n+1,) heads array of ``spans[i]`` (index 0 the span's root, word ``m`` the
    token ``start + m - 1``); ``labels[i]`` holds the n labels. Tokens outside every span (none,
    when spans come from ``segment.sentence_spans``) become their own roots.
    """
    if len(doc) == 0:
        return
    positions = np.arange(len(doc), dtype=np.int64)
    absolute = positions.copy()  # a token heading itself is a root in spaCy
    deps = np.zeros(len(doc), dtype=np.uint64)
    strings = doc.vocab.strings
    for (start, end), tree, names in zip(spans, heads, labels):
        local = np.asarray(tree[1:], dtype=np.int64)
        span_pos = positions[start:end]
        absolute[start:end] = np.where(local == 0, span_pos, start + local - 1)
        deps[start:end] = [strings.add(name) for name in names]
    relative = (absolute - positions).astype(np.uint64)
    doc.from_array([HEAD, DEP], np.stack([relative, deps], axis=1))
