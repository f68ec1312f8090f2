"""Exact head-automaton subproblems for dual decomposition (``dual.py``).

Conventions: index 0 is the root, words are ``1..n``; ``sib[h, s, m]`` scores ``m`` as the next
modifier of ``h`` after ``s`` on the same side (``s == h`` for the closest one, no stop factor);
``grand[g, h, m]`` scores the arcs ``g -> h`` and ``h -> m`` together.

The automaton of a word ``h`` chooses ``h``'s modifiers on each side (a chain scored by ``sib``) and,
when grandparent factors are used, ``h``'s own head ``g`` (exactly one, never one of its modifiers).
The root automaton chooses exactly one modifier. Each is solved exactly by dynamic programming:
``O(n^2)`` for the chains, times ``n`` candidate heads for a word automaton with a head choice.
"""
import numpy as np
from numba import njit

# Stands for "excluded": finite, so the max-plus loops below stay branch-free and vectorisable.
EXCLUDED = -1e300


@njit(cache=True)
def sib_slice(h, sib, use_sib, trans):
    """Fill ``trans[m, p] = sib[h, p, m]`` so that the DP's inner loop reads memory in order."""
    size = trans.shape[0]
    if not use_sib:
        return
    for p in range(size):
        for m in range(size):
            trans[m, p] = sib[h, p, m]


@njit(cache=True)
def side_range(h, size, right):
    """(first, stop, step) of the words on one side of ``h``, nearest first."""
    if right:
        return h + 1, size, 1
    return h - 1, 0, -1


@njit(cache=True, fastmath={"nsz", "arcp", "contract", "reassoc"})
def chain_value(h, weights, trans, use_sib, right, table):
    """Best chain of modifiers of ``h`` on one side (the empty chain scores 0).

    ``weights[m]`` scores modifier ``m`` (``EXCLUDED`` to forbid it); ``trans[m, p]`` is
    ``sib[h, p, m]``. ``table[m]`` receives the best chain ending at ``m`` (read by ``chain_mark``).
    """
    first, stop, step = side_range(h, weights.shape[0], right)
    best = 0.0
    if not use_sib:
        for m in range(first, stop, step):
            table[m] = weights[m]
            if weights[m] > 0.0:
                best += weights[m]
        return best
    for m in range(first, stop, step):
        inner = trans[m, h]
        if right:
            for p in range(first, m):
                inner = max(inner, table[p] + trans[m, p])
        else:
            for p in range(m + 1, first + 1):
                inner = max(inner, table[p] + trans[m, p])
        table[m] = weights[m] + inner
        best = max(best, table[m])
    return best


@njit(cache=True)
def chain_mark(h, weights, trans, use_sib, right, table, chosen):
    """Set ``chosen[m] = 1`` for the modifiers of the chain ``chain_value`` just scored."""
    first, stop, step = side_range(h, weights.shape[0], right)
    if not use_sib:
        for m in range(first, stop, step):
            if weights[m] > 0.0:
                chosen[m] = 1
        return
    end, best = -1, 0.0
    for m in range(first, stop, step):
        if table[m] > best:
            end, best = m, table[m]
    while end >= 0:  # walk back to the predecessor that produced table[end]
        chosen[end] = 1
        target = table[end] - weights[end]
        prev, gap = -1, abs(trans[end, h] - target)
        for p in range(first, end, step):
            cand = abs(table[p] + trans[end, p] - target)
            if cand < gap:
                prev, gap = p, cand
        end = prev


@njit(cache=True)
def solve_root(weights, sib, use_sib, chosen):
    """Root automaton: exactly one modifier. Returns its value; marks the modifier in ``chosen``."""
    size = weights.shape[0]
    best, arg = -np.inf, 1
    for m in range(1, size):
        val = weights[m] + (sib[0, 0, m] if use_sib else 0.0)
        if val > best:
            best, arg = val, m
    chosen[:] = 0
    chosen[arg] = 1
    return best


@njit(cache=True)
def solve_word(h, out_w, in_w, sib, grand, use_sib, use_grand, chosen, work, trans, table):
    """Automaton of word ``h``: returns (value, chosen head or -1); marks modifiers in ``chosen``.

    ``out_w[m]``: score of the arc ``h -> m``; ``in_w[g]``: score of the arc ``g -> h``, used only
    with ``use_grand``, when the automaton also picks ``h``'s head ``g`` (never one of its
    modifiers) and adds ``grand[g, h, m]`` for each modifier ``m``. ``work``, ``trans`` and
    ``table`` are scratch arrays of shape (n+1,), (n+1, n+1) and (n+1,).
    """
    size = out_w.shape[0]
    sib_slice(h, sib, use_sib, trans)
    chosen[:] = 0
    best_g = -1
    if use_grand:
        best = -np.inf
        for g in range(size):
            if g != h:
                val = in_w[g] + _chains(h, g, out_w, grand, trans, use_sib, work, table)
                if val > best:
                    best, best_g = val, g
    _fill_weights(h, best_g, out_w, grand, work)  # redo the winner, reading its modifiers
    total = in_w[best_g] if use_grand else 0.0
    for right in (True, False):
        total += chain_value(h, work, trans, use_sib, right, table)
        chain_mark(h, work, trans, use_sib, right, table, chosen)
    return total, best_g


@njit(cache=True)
def _chains(h, g, out_w, grand, trans, use_sib, work, table):
    """Both sides' best chains when ``h``'s head is ``g`` (``g < 0``: no grandparent factors)."""
    _fill_weights(h, g, out_w, grand, work)
    return chain_value(h, work, trans, use_sib, True, table) + chain_value(
        h, work, trans, use_sib, False, table
    )


@njit(cache=True)
def _fill_weights(h, g, out_w, grand, work):
    """``work[m]``: modifier ``m``'s score given head ``g``; ``g`` and ``h`` are excluded."""
    for m in range(out_w.shape[0]):
        work[m] = out_w[m] + (grand[g, h, m] if g >= 0 else 0.0)
    if g >= 0:
        work[g] = EXCLUDED
    work[h] = EXCLUDED
