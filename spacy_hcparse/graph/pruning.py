"""First-order pruning and the higher-order factors it allows: the graph parser's search space.

Each word keeps its ``top_k`` best heads by first-order score, the root always among them; the
sibling and grandparent scorers then score only the triples of kept arcs. Conventions as in
``spacy_hcparse.decoders``: ``mask[h, m]``, index 0 the root; triples ``(h, s, m)`` with
``s == h`` for the closest modifier, and ``(g, h, m)``.
"""
import numpy as np
from numba import njit


def candidate_heads(arc: np.ndarray, top_k: int, keep=None) -> np.ndarray:
    """Boolean (n+1, n+1) mask ``mask[h, m]``: h is among m's ``top_k`` heads, or the root.

    ``keep`` (a heads array, ``-1`` where a head is unknown) adds those arcs too, so gold arcs
    stay scorable in training. Ties at the k-th score keep the lower head index.
    """
    mask = _top_heads(np.ascontiguousarray(arc, dtype=np.float64), int(top_k))
    if keep is not None and len(mask) > 1:
        words = np.arange(1, len(mask))
        known = keep[1:] >= 0
        mask[keep[1:][known], words[known]] = True
    return mask


@njit(cache=True)
def _top_heads(arc, top_k):
    size = arc.shape[0]
    mask = np.zeros((size, size), dtype=np.bool_)
    k = min(top_k, size - 1)
    column = np.empty(size, dtype=np.float64)
    for m in range(1, size):
        for h in range(size):
            column[h] = arc[h, m] if h != m else -np.inf
        order = np.argsort(-column, kind="mergesort")  # stable: ties keep the lower head
        for r in range(k):
            mask[order[r], m] = True
        mask[0, m] = True
        mask[m, m] = False
    return mask


def sibling_triples(mask: np.ndarray) -> np.ndarray:
    """(T, 3) int array of the (h, s, m) sibling factors compatible with ``mask``.

    ``s == h`` for the closest modifier; otherwise ``s`` lies strictly between ``h`` and ``m``
    and is itself a candidate modifier of ``h``.
    """
    return _sibling_triples(np.ascontiguousarray(mask, dtype=np.bool_))


def grandparent_triples(mask: np.ndarray) -> np.ndarray:
    """(T, 3) int array of the (g, h, m) grandparent factors compatible with ``mask``."""
    return _grandparent_triples(np.ascontiguousarray(mask, dtype=np.bool_))


@njit(cache=True)
def _sibling_triples(mask):
    size = mask.shape[0]
    total = 0
    for h in range(size):
        for step in (1, -1):
            count = 0
            m = h + step
            while 0 < m < size:
                if mask[h, m]:
                    count += 1
                    total += count  # h itself plus every closer candidate
                m += step
    out = np.empty((total, 3), dtype=np.int32)
    mods = np.empty(size, dtype=np.int64)
    k = 0
    for h in range(size):
        for step in (1, -1):
            count = 0
            m = h + step
            while 0 < m < size:
                if mask[h, m]:
                    out[k, 0], out[k, 1], out[k, 2] = h, h, m
                    k += 1
                    for i in range(count):
                        out[k, 0], out[k, 1], out[k, 2] = h, mods[i], m
                        k += 1
                    mods[count] = m
                    count += 1
                m += step
    return out


@njit(cache=True)
def _grandparent_triples(mask):
    size = mask.shape[0]
    total = 0
    for m in range(1, size):
        for h in range(1, size):
            if mask[h, m]:
                for g in range(size):
                    if g != m and mask[g, h]:
                        total += 1
    out = np.empty((total, 3), dtype=np.int32)
    k = 0
    for m in range(1, size):
        for h in range(1, size):
            if mask[h, m]:
                for g in range(size):
                    if g != m and mask[g, h]:
                        out[k, 0], out[k, 1], out[k, 2] = g, h, m
                        k += 1
    return out
