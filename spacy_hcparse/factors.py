"""Candidate pruning and factor bookkeeping between the scorers and the decoders.

The decoders work on dense arrays (``arc`` (n+1, n+1), ``sib``/``grand`` (n+1, n+1, n+1), index 0
the root). The higher-order scorers only score the triples allowed by first-order pruning: each
word keeps its ``top_k`` best heads, the root always among them. This module builds those triples,
scatters their scores into dense cubes, and lists the factors a tree uses (for the hinge loss).
"""
from typing import Tuple

import numpy as np
from numba import njit

# Score given to arcs pruned away: far below any real score, yet finite (the decoders reject inf)
# and small enough that sums of a few hundred of them keep float64 precision on real scores.
PRUNED = -1.0e4


def candidate_heads(arc: np.ndarray, top_k: int, keep=None) -> np.ndarray:
    """Boolean (n+1, n+1) mask ``mask[h, m]``: h is among m's ``top_k`` heads, or the root.

    ``keep`` (a heads array) adds those arcs too, so gold arcs stay scorable in training.
    Ties at the k-th score keep the lower head index.
    """
    mask = _top_heads(np.ascontiguousarray(arc, dtype=np.float64), int(top_k))
    if keep is not None and len(mask) > 1:
        mask[keep[1:], np.arange(1, len(mask))] = True
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


def pruned_arc(arc: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``arc`` with the arcs outside ``mask`` set to ``PRUNED``."""
    return np.where(mask, arc, PRUNED)


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
    out = np.empty((total, 3), dtype=np.int64)
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
    out = np.empty((total, 3), dtype=np.int64)
    k = 0
    for m in range(1, size):
        for h in range(1, size):
            if mask[h, m]:
                for g in range(size):
                    if g != m and mask[g, h]:
                        out[k, 0], out[k, 1], out[k, 2] = g, h, m
                        k += 1
    return out


def dense_cube(size: int, triples: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A (size, size, size) float64 array holding ``values`` at ``triples``, 0 elsewhere."""
    cube = np.zeros((size, size, size), dtype=np.float64)
    if len(triples):
        cube[triples[:, 0], triples[:, 1], triples[:, 2]] = values
    return cube


def tree_sibling_factors(heads: np.ndarray) -> np.ndarray:
    """(F, 3) array of the (h, s, m) sibling factors the tree ``heads`` uses."""
    out = []
    size = len(heads)
    for h in range(size):
        for side in (range(h + 1, size), range(h - 1, 0, -1)):
            prev = h
            for m in side:
                if heads[m] == h:
                    out.append((h, prev, m))
                    prev = m
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def tree_grand_factors(heads: np.ndarray) -> np.ndarray:
    """(F, 3) array of the (g, h, m) grandparent factors the tree ``heads`` uses."""
    out = [(heads[heads[m]], heads[m], m) for m in range(1, len(heads)) if heads[m] > 0]
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def factor_gradient(
    triples: np.ndarray, predicted: np.ndarray, gold: np.ndarray, size: int
) -> np.ndarray:
    """d(score(predicted) - score(gold)) / d(values at ``triples``): +1/-1 per triple used.

    ``predicted`` and ``gold`` list each factor of their tree once (as trees do).
    """
    if not len(triples):
        return np.zeros(0, dtype=np.float64)
    keys = _keys(triples, size)
    grad = np.isin(keys, _keys(predicted, size)).astype(np.float64)
    grad -= np.isin(keys, _keys(gold, size))
    return grad


def _keys(triples: np.ndarray, size: int) -> np.ndarray:
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    return (triples[:, 0] * size + triples[:, 1]) * size + triples[:, 2]


def arc_gradient(predicted: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """d(score(predicted) - score(gold)) / d arc, an (n+1, n+1) array of +1/-1."""
    size = len(gold)
    d_arc = np.zeros((size, size), dtype=np.float64)
    words = np.arange(1, size)
    np.add.at(d_arc, (predicted[1:], words), 1.0)
    np.add.at(d_arc, (gold[1:], words), -1.0)
    return d_arc


def hamming_augmented(arc: np.ndarray, gold: np.ndarray, cost: float = 1.0) -> np.ndarray:
    """``arc`` plus ``cost`` on every arc that is not gold (cost-augmented decoding)."""
    out = arc + cost
    out[gold[1:], np.arange(1, len(gold))] -= cost
    return out


def tree_arrays(heads: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Both factor lists of a tree: (sibling factors, grandparent factors)."""
    return tree_sibling_factors(heads), tree_grand_factors(heads)
