"""Exact projective decoding: Eisner (1996) first order, McDonald & Pereira (2006) with siblings.

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` scores head ``h`` ->
modifier ``m``; ``sib[h, s, m]`` scores ``m`` being the next modifier of ``h`` after ``s`` on the same
side (modifiers on a side taken outward from ``h``; ``s == h`` for the closest one, which is
McDonald & Pereira's "no previous sibling" case). The root takes exactly one child.

The charts span the words ``1..n`` only; the root then picks its single child ``m``:
``arc[0, m] (+ sib[0, 0, m])`` + the left complete span headed by ``m`` + its right complete span.
Chart cells (``s < t``): ``cr`` complete headed ``s``, ``cl`` complete headed ``t``, ``ir``
incomplete ``s -> t``, ``il`` incomplete ``t -> s``, ``sb`` (second order) adjacent siblings
``s`` and ``t`` of a head outside ``[s, t]``. Each cell keeps the split point that produced it.
"""
from typing import Optional

import numpy as np

from ..compiling import njit
from ._checks import check_inputs
from .absent import with_floor

# chart item kinds on the backtracking stack
_CR, _CL, _IR, _IL, _SB = 0, 1, 2, 3, 4


def decode_eisner(arc, sib: Optional[np.ndarray] = None) -> np.ndarray:
    """Return the heads of the best projective tree with exactly one root child, in O(n^3).

    ``arc[h, m]``: head ``h`` -> modifier ``m`` (index 0 is the root). ``sib[h, s, m]`` (optional):
    ``m`` is the next modifier of ``h`` after ``s`` on the same side, ``s == h`` for the closest.
    ``-inf`` arcs are absent: used only when no projective tree avoids them.
    Returns int64 ``heads`` with ``heads[0] == -1``. Raises ``ValueError`` on bad input.
    """
    arc, sib, _ = check_inputs(arc, sib, None)
    arc = with_floor(arc, sib).arc
    if sib is None:
        return eisner_kernel(arc)
    return eisner2_kernel(arc, sib)


@njit(cache=True)
def eisner_kernel(arc):
    """First-order kernel: ``arc`` C-contiguous finite float64 (n+1, n+1); returns int64 heads."""
    size = arc.shape[0]
    cr, cl, ir, il, bcr, bcl, bi, _, _ = _charts(size)
    for width in range(1, size - 1):
        for s in range(1, size - width):
            t = s + width
            best = -np.inf
            for u in range(s, t):
                val = cr[s, u] + cl[u + 1, t]
                if val > best:
                    best = val
                    bi[s, t] = u
            ir[s, t] = best + arc[s, t]
            il[s, t] = best + arc[t, s]
            _complete(cr, cl, ir, il, bcr, bcl, s, t)
    return _backtrack(_root_and_heads(arc, np.zeros(size), cr, cl), bcr, bcl, bi, bi, bi, False)


@njit(cache=True)
def eisner2_kernel(arc, sib):
    """Second-order (sibling) kernel; ``sib`` C-contiguous finite float64 (n+1, n+1, n+1)."""
    size = arc.shape[0]
    cr, cl, ir, il, bcr, bcl, bir, bil, sb = _charts(size)
    bsb = np.zeros((size, size), dtype=np.int64)
    for width in range(1, size - 1):
        for s in range(1, size - width):
            t = s + width
            best = -np.inf
            for u in range(s, t):  # adjacent siblings s, t: s's right span meets t's left span
                val = cr[s, u] + cl[u + 1, t]
                if val > best:
                    best = val
                    bsb[s, t] = u
            sb[s, t] = best
            # s -> t: t closest to s (r == s), or previous right modifier r of s
            best, bir[s, t] = _previous_modifier(ir, sb, sib, s, t, s, t, sib[s, s, t] + cl[s + 1, t], s)
            ir[s, t] = best + arc[s, t]
            # t -> s: s closest to t (r == t), or previous left modifier r of t
            best, bil[s, t] = _previous_modifier(sb, il, sib, t, s, s, t, sib[t, t, s] + cr[s, t - 1], t)
            il[s, t] = best + arc[t, s]
            _complete(cr, cl, ir, il, bcr, bcl, s, t)
    return _backtrack(_root_and_heads(arc, sib[0, 0].copy(), cr, cl), bcr, bcl, bir, bil, bsb, True)


@njit(cache=True)
def _previous_modifier(first, second, sib, h, m, s, t, best, arg):
    """The best of ``best`` (``m`` the closest modifier of ``h``, split ``arg``) and, for each
    ``r`` strictly between ``s`` and ``t``, ``first[s, r] + second[r, t] + sib[h, r, m]`` (``r``
    the previous modifier of ``h`` on ``m``'s side): ``(value, split)``."""
    for r in range(s + 1, t):
        val = first[s, r] + second[r, t] + sib[h, r, m]
        if val > best:
            best = val
            arg = r
    return best, arg


@njit(cache=True)
def _backtrack(heads, bcr, bcl, bir, bil, bsb, second_order):
    """``heads`` (the root's child set) completed from the back-pointers. First order: an
    incomplete span's halves meet at ``bsb`` (the split); second order: ``bir``/``bil`` hold the
    previous modifier (the head itself for the closest), ``bsb`` the sibling spans' splits."""
    stack = _start_stack(heads, heads.shape[0])
    while stack[0, 0] > 0:
        kind, s, t = _pop(stack)
        if kind == _IR:
            heads[t] = s
        elif kind == _IL:
            heads[s] = t
        if (kind == _IR or kind == _IL) and not second_order:
            _push(stack, _SB, s, t)
        elif kind == _IR:
            r = bir[s, t]
            if r == s:
                _push(stack, _CL, s + 1, t)
            else:
                _push(stack, _IR, s, r)
                _push(stack, _SB, r, t)
        elif kind == _IL:
            r = bil[s, t]
            if r == t:
                _push(stack, _CR, s, t - 1)
            else:
                _push(stack, _SB, s, r)
                _push(stack, _IL, r, t)
        elif kind == _SB:
            u = bsb[s, t]
            _push(stack, _CR, s, u)
            _push(stack, _CL, u + 1, t)
        else:
            _split_complete(stack, kind, s, t, bcr, bcl)
    return heads


@njit(cache=True)
def _charts(size):
    cr = np.zeros((size, size))
    cl = np.zeros((size, size))
    ir = np.zeros((size, size))
    il = np.zeros((size, size))
    sb = np.zeros((size, size))
    bcr = np.zeros((size, size), dtype=np.int64)
    bcl = np.zeros((size, size), dtype=np.int64)
    bir = np.zeros((size, size), dtype=np.int64)
    bil = np.zeros((size, size), dtype=np.int64)
    return cr, cl, ir, il, bcr, bcl, bir, bil, sb


@njit(cache=True)
def _complete(cr, cl, ir, il, bcr, bcl, s, t):
    """Fill the complete cells of span [s, t] from incomplete ones (already filled for [s, t])."""
    best = -np.inf
    for r in range(s + 1, t + 1):
        val = ir[s, r] + cr[r, t]
        if val > best:
            best = val
            bcr[s, t] = r
    cr[s, t] = best
    best = -np.inf
    for r in range(s, t):
        val = cl[s, r] + il[r, t]
        if val > best:
            best = val
            bcl[s, t] = r
    cl[s, t] = best


@njit(cache=True)
def _root_and_heads(arc, root_bonus, cr, cl):
    """Heads array with the root's single child chosen; other heads are filled by backtracking.

    ``root_bonus[m]`` is added to the root arc to ``m`` (``sib[0, 0, m]`` at second order).
    """
    size = arc.shape[0]
    n = size - 1
    heads = np.full(size, -1, dtype=np.int64)
    best = -np.inf
    child = 0
    for m in range(1, size):
        val = arc[0, m] + root_bonus[m] + cl[1, m] + cr[m, n]
        if val > best:
            best = val
            child = m
    if n > 0:
        heads[child] = 0
    return heads


@njit(cache=True)
def _start_stack(heads, size):
    """Backtracking stack (row 0 holds the depth) seeded with the root child's two spans."""
    stack = np.zeros((4 * size + 2, 3), dtype=np.int64)
    n = size - 1
    for m in range(1, size):
        if heads[m] == 0:
            _push(stack, _CL, 1, m)
            _push(stack, _CR, m, n)
    return stack


@njit(cache=True)
def _push(stack, kind, s, t):
    if s >= t:  # single-word spans carry no arcs
        return
    depth = stack[0, 0] + 1
    stack[depth, 0] = kind
    stack[depth, 1] = s
    stack[depth, 2] = t
    stack[0, 0] = depth


@njit(cache=True)
def _pop(stack):
    depth = stack[0, 0]
    stack[0, 0] = depth - 1
    return stack[depth, 0], stack[depth, 1], stack[depth, 2]


@njit(cache=True)
def _split_complete(stack, kind, s, t, bcr, bcl):
    if kind == _CR:
        r = bcr[s, t]
        _push(stack, _IR, s, r)
        _push(stack, _CR, r, t)
    else:
        r = bcl[s, t]
        _push(stack, _CL, s, r)
        _push(stack, _IL, r, t)
