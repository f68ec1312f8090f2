"""Absent arcs: ``-inf`` entries of ``arc`` (arcs pruned away by the caller).

Conventions: index 0 is the root, words are ``1..n``; ``arc[h, m]`` scores head ``h`` -> modifier
``m``; column 0 and the diagonal are never used. An off-diagonal ``arc[h, m] == -inf`` (``m >= 1``)
marks the arc as absent: no tree should use it, and a tree that does scores ``-inf``.

The kernels work on finite arrays. ``with_floor`` replaces every absent arc by one finite ``floor``
low enough that any tree using an absent arc scores below every tree that uses none, under the
arc, sibling and grandparent factors together (see ``absent_floor``), and returns the mask of the
allowed arcs for the kernels that can skip absent arcs. If no single-root tree over allowed arcs
exists (``feasible`` False), the decoders still return a tree (absent arcs as a last resort) whose
true score is ``-inf``.
"""
from typing import NamedTuple, Optional

import numpy as np

from ..compiling import njit


class Allowed(NamedTuple):
    """``arc``: the input with absent arcs set to ``floor`` (the input itself when none is absent);
    ``mask``: bool (n+1, n+1), True on the arcs a tree may use (finite, ``h != m``, ``m >= 1``);
    ``any_absent``: some usable cell was ``-inf``; ``feasible``: a single-root tree over allowed
    arcs exists."""

    arc: np.ndarray
    mask: np.ndarray
    floor: float
    any_absent: bool
    feasible: bool


def with_floor(arc: np.ndarray, sib: Optional[np.ndarray] = None,
               grand: Optional[np.ndarray] = None) -> Allowed:
    """Split a checked float64 ``arc`` (see ``_checks.check_arc``) into finite scores and a mask."""
    mask = usable_mask(arc)
    if not _any_absent(arc, mask):
        return Allowed(arc, mask, -np.inf, False, True)
    floor = absent_floor(arc, mask, sib, grand)
    out = arc.copy()
    _fill_absent(out, mask, floor)
    return Allowed(out, mask, floor, True, bool(has_single_root_tree(mask)))


def absent_floor(arc: np.ndarray, mask: np.ndarray, sib: Optional[np.ndarray],
                 grand: Optional[np.ndarray]) -> float:
    """A finite score for absent arcs: any tree using one scores below every allowed tree.

    With ``lo``/``hi`` the extreme allowed arc scores and ``R`` the spread of the higher-order part
    of a tree score (each of its n sibling and n-1 grandparent factors lies in the range of its
    cube), a tree with an absent arc scores at most ``floor + (n-1) hi + top`` and an allowed tree
    at least ``n lo + top - R``; ``floor = lo - 2 (n (hi - lo) + R) - 1`` keeps a margin for
    rounding. The floor stays at the scale of the scores, so sums keep their precision.
    """
    size = arc.shape[0]
    n = size - 1
    if not mask.any():
        return -1.0
    used = arc[mask]
    lo, hi = float(used.min()), float(used.max())
    spread = n * (hi - lo)
    for cube in (sib, grand):
        if cube is not None and cube.size:
            low, high = cube_range(cube)
            spread += n * (high - low)
    return lo - 2.0 * spread - 1.0


def cube_range(cube: np.ndarray):
    """(min, max) of a C-contiguous float64 array, in one compiled pass."""
    return _flat_range(cube.ravel())


@njit(cache=True)
def _flat_range(flat):
    low, high = np.inf, -np.inf
    for i in range(flat.shape[0]):
        low = min(low, flat[i])
        high = max(high, flat[i])
    return low, high


def true_score(heads: np.ndarray, mask: np.ndarray, score: float) -> float:
    """``score`` (the kernels' score of ``heads``), or ``-inf`` if ``heads`` uses an absent arc."""
    return -np.inf if uses_absent(heads, mask) else float(score)


@njit(cache=True)
def uses_absent(heads, mask):
    """Whether the tree ``heads`` uses an arc outside ``mask``."""
    for m in range(1, heads.shape[0]):
        if not mask[heads[m], m]:
            return True
    return False


@njit(cache=True)
def usable_mask(arc):
    """True where ``arc[h, m]`` is a finite score a tree can use (``m >= 1``, ``h != m``)."""
    size = arc.shape[0]
    mask = np.zeros((size, size), dtype=np.bool_)
    for h in range(size):
        for m in range(1, size):
            if h != m and np.isfinite(arc[h, m]):
                mask[h, m] = True
    return mask


@njit(cache=True)
def _any_absent(arc, mask):
    size = arc.shape[0]
    for h in range(size):
        for m in range(1, size):
            if h != m and not mask[h, m]:
                return True
    return False


@njit(cache=True)
def _fill_absent(arc, mask, floor):
    size = arc.shape[0]
    for h in range(size):
        for m in range(1, size):
            if h != m and not mask[h, m]:
                arc[h, m] = floor


@njit(cache=True)
def has_single_root_tree(mask):
    """Whether some word ``r`` with ``mask[0, r]`` reaches every word along allowed word-to-word
    arcs (then a single-root tree rooted at ``r`` exists). A word that a failed candidate reaches
    reaches no more than it did, so it is not tried again: O(n^2) in all."""
    size = mask.shape[0]
    if size <= 1:
        return True
    tried = np.zeros(size, dtype=np.bool_)
    seen = np.zeros(size, dtype=np.bool_)
    stack = np.empty(size, dtype=np.int64)
    for r in range(1, size):
        if not mask[0, r] or tried[r]:
            continue
        seen[:] = False
        seen[r] = True
        stack[0] = r
        top, count = 1, 1
        while top > 0:
            top -= 1
            u = stack[top]
            for v in range(1, size):
                if mask[u, v] and not seen[v]:
                    seen[v] = True
                    stack[top] = v
                    top += 1
                    count += 1
        if count == size - 1:
            return True
        for v in range(1, size):
            if seen[v]:
                tried[v] = True
    return False
