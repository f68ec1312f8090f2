"""Exact head-automaton subproblems for dual decomposition (``dual.py``), over candidate arcs only.

Conventions: index 0 is the root, words are ``1..n``; ``sib[h, s, m]`` scores ``m`` as the next
modifier of ``h`` after ``s`` on the same side (``s == h`` for the closest one, no stop factor);
``grand[g, h, m]`` scores the arcs ``g -> h`` and ``h -> m`` together; ``mask[h, m]`` is True for
the arcs a tree may use (``absent.py``).

The automaton of a word ``h`` chooses ``h``'s modifiers on each side among its allowed modifiers
(a chain scored by ``sib``) and, when grandparent factors are used, ``h``'s own head ``g`` among
its allowed heads (exactly one, never one of its modifiers). The root automaton chooses exactly
one modifier. Each is solved exactly by dynamic programming over the candidate lists, as
TurboParser builds its automata: ``O(k_out^2)`` per side for ``k_out`` allowed modifiers, times
``k_in`` allowed heads with a head choice. With ``top_k`` pruning an iteration costs
``O(n k^3)`` instead of ``O(n^4)``.

``Graph`` (a tuple of arrays, built once per sentence by ``build_graph``) lists the candidates:
``out_ptr``/``out_idx``: the allowed modifiers of each head in index order (edge ``e`` is
``out_idx[e]``'s arc from its head), ``out_split[h]``: the first position right of ``h``;
``in_ptr``/``in_idx``: the allowed heads of each word; ``eid[h, m]``: the edge of ``h -> m`` or -1;
``sib_first[e] = sib[h, h, m]``; ``sib_block`` at ``sib_ptr[h]``: the (k, k) matrix
``B[i, j] = sib[h, out_idx[j], out_idx[i]]`` of ``h``'s candidate modifiers.
"""
import numpy as np

from ..compiling import njit
from .sampling import NO_REFCOUNT

# Stands for "excluded": finite, so the max-plus loops below stay branch-free.
EXCLUDED = -1e300


@njit(cache=True)
def build_graph(mask, sib, use_sib):
    """The candidate lists of ``mask`` and the sibling scores along them (module docstring)."""
    size = mask.shape[0]
    out_ptr = np.zeros(size + 1, dtype=np.int64)
    in_ptr = np.zeros(size + 1, dtype=np.int64)
    for h in range(size):
        for m in range(1, size):
            if mask[h, m]:
                out_ptr[h + 1] += 1
                in_ptr[m + 1] += 1
    for i in range(size):
        out_ptr[i + 1] += out_ptr[i]
        in_ptr[i + 1] += in_ptr[i]
    edges = out_ptr[size]
    out_idx = np.empty(edges, dtype=np.int64)
    in_idx = np.empty(edges, dtype=np.int64)
    out_split = np.empty(size, dtype=np.int64)
    eid = np.full((size, size), -1, dtype=np.int64)
    fill = in_ptr[:size].copy()
    e = 0
    for h in range(size):
        out_split[h] = out_ptr[h]
        for m in range(1, size):
            if mask[h, m]:
                out_idx[e] = m
                eid[h, m] = e
                if m < h:
                    out_split[h] = e + 1
                e += 1
    for m in range(1, size):
        for h in range(size):
            if mask[h, m]:
                in_idx[fill[m]] = h
                fill[m] += 1
    sib_ptr = np.zeros(size + 1, dtype=np.int64)
    for h in range(size):
        k = out_ptr[h + 1] - out_ptr[h]
        sib_ptr[h + 1] = sib_ptr[h] + (k * k if use_sib else 0)
    sib_first = np.zeros(edges)
    sib_block = np.zeros(sib_ptr[size])
    if use_sib:
        for h in range(size):
            lo, k = out_ptr[h], out_ptr[h + 1] - out_ptr[h]
            for i in range(k):
                m = out_idx[lo + i]
                sib_first[lo + i] = sib[h, h, m]
                for j in range(k):
                    sib_block[sib_ptr[h] + i * k + j] = sib[h, out_idx[lo + j], m]
    return out_ptr, out_idx, out_split, in_ptr, in_idx, eid, sib_first, sib_ptr, sib_block


@njit(cache=True, fastmath={"nsz", "arcp", "contract", "reassoc"}, **NO_REFCOUNT)
def chain_value(w, first, block, use_sib, lo, hi, step, table, back):
    """Best chain over the candidate positions ``lo, lo + step, ..`` (``hi`` excluded), nearest to
    the head first; the empty chain scores 0. ``w[i]``: score of the modifier at position ``i``
    (``EXCLUDED`` forbids it); ``first[i]``: its ``sib`` score as the closest modifier;
    ``block[i, j]``: its score right after position ``j``. ``table[i]`` receives the best chain
    ending at ``i`` and ``back[i]`` its previous position (-1: none), read by ``chain_mark``."""
    best = 0.0
    if not use_sib:
        for i in range(lo, hi, step):
            table[i] = w[i]
            if w[i] > 0.0:
                best += w[i]
        return best
    for i in range(lo, hi, step):
        inner = first[i]
        arg = -1
        for j in range(lo, i, step):
            val = table[j] + block[i, j]
            if val > inner:
                inner = val
                arg = j
        table[i] = w[i] + inner
        back[i] = arg
        best = max(best, table[i])
    return best


@njit(cache=True, **NO_REFCOUNT)
def chain_mark(w, use_sib, lo, hi, step, table, back, chosen):
    """Set ``chosen[i] = 1`` for the positions of the chain ``chain_value`` just scored."""
    if not use_sib:
        for i in range(lo, hi, step):
            if w[i] > 0.0:
                chosen[i] = 1
        return
    end, best = -1, 0.0
    for i in range(lo, hi, step):
        if table[i] > best:
            end, best = i, table[i]
    while end >= 0:
        chosen[end] = 1
        end = back[end]


@njit(cache=True, **NO_REFCOUNT)
def solve_root(w, first, use_sib, chosen):
    """Root automaton over its candidates: exactly one modifier. ``w[i]``, ``first[i]``: arc and
    closest-sibling scores of candidate ``i``. Returns the value; marks the choice in ``chosen``."""
    best, arg = -np.inf, 0
    for i in range(w.shape[0]):
        val = w[i] + (first[i] if use_sib else 0.0)
        if val > best:
            best, arg = val, i
    chosen[:] = 0
    if w.shape[0] > 0:
        chosen[arg] = 1
    return best


@njit(cache=True, **NO_REFCOUNT)
def solve_word(h, mods, split, heads, out_w, in_w, first, block, grand, use_sib, use_grand,
               chosen, work, table, back):
    """Automaton of word ``h``: returns (value, chosen head or -1); marks modifiers in ``chosen``.

    ``mods``: ``h``'s candidate modifiers in index order, ``split`` of them left of ``h``;
    ``out_w[i]``: score of the arc ``h -> mods[i]``; ``first``/``block``: sibling scores along
    ``mods`` (see ``chain_value``). With ``use_grand`` the automaton also picks ``h``'s head among
    ``heads`` (``in_w[j]``: score of ``heads[j] -> h``), never one of its modifiers, and adds
    ``grand[g, h, m]`` for each modifier ``m``. ``chosen``, ``work``, ``table``, ``back``: scratch
    of ``len(mods)`` entries (``chosen`` is int8).
    """
    k = mods.shape[0]
    chosen[:] = 0
    best_g = -1
    total = 0.0
    if use_grand:
        best, best_j = -np.inf, -1
        for j in range(heads.shape[0]):
            g = heads[j]
            _fill_weights(h, g, mods, out_w, grand, work)
            val = in_w[j] + chain_value(work, first, block, use_sib, split - 1, -1, -1, table, back)
            val += chain_value(work, first, block, use_sib, split, k, 1, table, back)
            if val > best:
                best, best_j = val, j
        best_g = heads[best_j]
        total = in_w[best_j]
    _fill_weights(h, best_g, mods, out_w, grand, work)  # redo the winner, reading its modifiers
    total += chain_value(work, first, block, use_sib, split - 1, -1, -1, table, back)
    chain_mark(work, use_sib, split - 1, -1, -1, table, back, chosen)
    total += chain_value(work, first, block, use_sib, split, k, 1, table, back)
    chain_mark(work, use_sib, split, k, 1, table, back, chosen)
    return total, best_g


@njit(cache=True, **NO_REFCOUNT)
def _fill_weights(h, g, mods, out_w, grand, work):
    """``work[i]``: the score of modifier ``mods[i]`` given head ``g`` (``g < 0``: no grandparent
    factors); ``g`` itself is excluded."""
    for i in range(mods.shape[0]):
        m = mods[i]
        if g >= 0:
            work[i] = EXCLUDED if m == g else out_w[i] + grand[g, h, m]
        else:
            work[i] = out_w[i]
