"""Minimum Bayes risk decoding: the tree with the most expected correct heads.

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` is the log-potential
of head ``h`` -> modifier ``m`` (``-inf``: an absent arc; column 0 and the diagonal are ignored);
heads are int64 (n+1,) with ``heads[0] == -1`` and exactly one word on the root.

Under the tree distribution ``P(tree) ~ exp(score / temperature)`` (single-root trees, projective
ones with ``projective=True``; the score is the arc part, plus the sibling part when ``sib``
``[h, s, m]`` is given, projective only), the expected number of correct heads of a tree ``y`` is
``sum_m P(y[m] -> m)``: a first-order score over the arc marginals (``marginals.py``:
inside-outside when projective, over the second-order chart with siblings; the matrix-tree
theorem otherwise). The MBR tree maximizes it with the matching exact first-order decoder (Eisner
or the single-root MST) over the marginals; absent arcs stay absent. Unlike the highest-scoring
tree, it depends on the temperature.
"""
from typing import Optional, Tuple

import numpy as np

from ._checks import check_arc
from .absent import usable_mask
from .eisner import decode_eisner
from .marginals import arc_marginals
from .mst import decode_mst


def decode_mbr(arc, projective: bool = False, temperature: float = 1.0, sib: Optional[np.ndarray] = None
               ) -> np.ndarray:
    """The heads of the tree maximizing the expected number of correct heads under
    ``arc / temperature`` (and ``sib / temperature``; see the module docstring). When no tree
    avoids the absent arcs, the exact decoder's last-resort tree over ``arc``. Raises
    ``ValueError`` on bad input."""
    return decode_mbr_gain(arc, projective, temperature, sib)[0]


def decode_mbr_gain(arc, projective: bool = False, temperature: float = 1.0, sib: Optional[np.ndarray] = None
                    ) -> Tuple[np.ndarray, float]:
    """``(heads, expected correct heads)`` of the MBR tree (``decode_mbr``); the expectation is
    ``nan`` when no tree avoids the absent arcs."""
    arc = check_arc(arc)
    decode = decode_eisner if projective else decode_mst
    gain = mbr_gain(arc, projective, temperature, sib)
    if gain is None:
        return decode(arc), (0.0 if arc.shape[0] < 2 else float("nan"))
    heads = decode(gain)
    words = np.arange(1, len(heads))
    return heads, float(gain[heads[1:], words].sum())


def mbr_gain(arc, projective: bool = False, temperature: float = 1.0, sib: Optional[np.ndarray] = None
             ) -> Optional[np.ndarray]:
    """The first-order scores MBR decodes: ``P(h -> m)`` under ``arc / temperature`` (and ``sib /
    temperature``, projective only) where the arc is usable, ``-inf`` where it is absent (float64
    (n+1, n+1)); a tree's score under them is its expected number of correct heads. None for
    n = 0 or when no tree avoids the absent arcs."""
    if not temperature > 0 or not np.isfinite(temperature):
        raise ValueError(f"temperature must be a positive finite number, got {temperature}")
    arc = check_arc(arc)
    if arc.shape[0] < 2:
        return None
    if sib is not None:
        sib = np.asarray(sib, dtype=np.float64) / temperature
    try:
        marg = arc_marginals(arc / temperature, projective, sib)
    except ValueError as err:  # no tree avoids the absent arcs (bad input raises)
        if "no single-root tree" not in str(err):
            raise
        return None
    return np.where(usable_mask(arc), marg, -np.inf)
