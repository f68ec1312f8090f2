"""Scoring a given tree under first-order, sibling and grandparent factors.

Conventions (shared by every decoder in this package):

* index 0 is the artificial root, words are ``1..n``;
* ``arc[h, m]`` scores the arc head ``h`` -> modifier ``m``;
* ``sib[h, s, m]`` scores ``m`` being the next modifier of ``h`` after ``s`` on the same side,
  modifiers on each side taken in order of increasing distance from ``h``; ``s == h`` marks the
  closest modifier on that side;
* ``grand[g, h, m]`` scores the arcs ``g -> h`` and ``h -> m`` together (``h != 0``);
* ``heads[0] == -1`` and exactly one word is attached to the root.
"""
from typing import Optional

import numpy as np

from ..compiling import njit
from ._checks import check_heads, check_inputs


def tree_score(
    heads, arc, sib: Optional[np.ndarray] = None, grand: Optional[np.ndarray] = None
) -> float:
    """Return the sum of the arc, sibling and grandparent factors of the tree ``heads``."""
    arc, sib, grand = check_inputs(arc, sib, grand)
    heads = check_heads(heads, arc.shape[0])
    total = arc_part(heads, arc)
    if sib is not None:
        total += sib_part(heads, sib)
    if grand is not None:
        total += grand_part(heads, grand)
    return float(total)


@njit(cache=True)
def arc_part(heads, arc):
    total = 0.0
    for m in range(1, heads.shape[0]):
        total += arc[heads[m], m]
    return total


@njit(cache=True)
def _sibling_factors(heads, out):
    """Writes the ``(h, s, m)`` sibling factors the tree ``heads`` uses into ``out`` ((n+1, 3) at
    least): for each head, its modifiers chained outward on each side (right, then left), nearest
    first, ``s == h`` for the first; returns their count."""
    size = heads.shape[0]
    count = 0
    for h in range(size):
        for step in (1, -1):  # the right side, then the left, nearest first
            prev = h
            m = h + step
            while 0 < m < size:
                if heads[m] == h:
                    out[count, 0], out[count, 1], out[count, 2] = h, prev, m
                    count += 1
                    prev = m
                m += step
    return count


@njit(cache=True)
def sib_part(heads, sib):
    """Sum of ``sib`` over the tree's sibling factors (``_sibling_factors``' walk, in its order)."""
    factors = np.empty((max(1, heads.shape[0]), 3), dtype=np.int64)
    total = 0.0
    for k in range(_sibling_factors(heads, factors)):
        total += sib[factors[k, 0], factors[k, 1], factors[k, 2]]
    return total


@njit(cache=True)
def grand_part(heads, grand):
    total = 0.0
    for m in range(1, heads.shape[0]):
        h = heads[m]
        if h != 0:
            total += grand[heads[h], h, m]
    return total


@njit(cache=True)
def full_score(heads, arc, sib, grand, use_sib, use_grand):
    """Kernel-side total score; ``sib``/``grand`` are ignored unless the flags are set."""
    total = arc_part(heads, arc)
    if use_sib:
        total += sib_part(heads, sib)
    if use_grand:
        total += grand_part(heads, grand)
    return total
