"""Dropping the arcs that no optimal tree uses, given the score of a known tree.

Conventions: index 0 is the root, words are ``1..n``; ``arc[h, m]``, ``sib[h, s, m]`` (``s == h``
for the closest modifier on a side), ``grand[g, h, m]``; ``mask[h, m]``: the arcs still allowed.

Every tree's score splits over its words: word ``m`` with head ``h`` contributes ``arc[h, m]``,
one sibling factor ``sib[h, s, m]`` (``s`` the previous modifier of ``h`` on ``m``'s side, or
``h``) and, when ``h != 0``, one grandparent factor ``grand[g, h, m]`` (``g`` the head of ``h``).
So ``phi[h, m] = arc[h, m] + max_s sib[h, s, m] + max_g grand[g, h, m]``, the maxima over the
``s`` and ``g`` that allowed arcs permit (``s`` an allowed modifier of ``h`` between ``h`` and
``m``; ``g`` an allowed head of ``h`` other than ``m``), bounds what ``m`` can contribute under
``h``, and a tree using ``h -> m`` scores at most ``phi[h, m] + sum of the other words' best phi``.
When that is below ``lower`` (the score of a known tree), no optimal tree uses ``h -> m``. Dropping
arcs lowers the maxima, so the test repeats until nothing changes. On real parser scores with the
hill-climbing tree as ``lower`` this leaves one head for most words (often for all: the known tree
is then the only candidate, hence optimal), so dual decomposition works on far smaller automata.
"""
import numpy as np

from ..compiling import njit

_ROUNDS = 8


@njit(cache=True)
def prune_dominated(arc, mask, sib, grand, use_sib, use_grand, lower):
    """The arcs of ``mask`` that an optimal tree may use (a copy), given a tree scoring
    ``lower``; the arcs of any tree scoring at least ``lower`` are always kept."""
    size = arc.shape[0]
    cand = mask.copy()
    phi = np.full((size, size), -np.inf)
    best = np.empty(size)
    for _ in range(_ROUNDS):
        fill_phi(arc, cand, sib, grand, use_sib, use_grand, phi)
        total = 0.0
        for m in range(1, size):
            best[m] = -np.inf
            for h in range(size):
                if cand[h, m] and phi[h, m] > best[m]:
                    best[m] = phi[h, m]
            total += best[m]
        slack = total - lower + 1e-9 * (1.0 + abs(total) + abs(lower))
        dropped = False
        for h in range(size):
            for m in range(1, size):
                if cand[h, m] and best[m] - phi[h, m] > slack:
                    cand[h, m] = False
                    dropped = True
        if not dropped:
            break
    return cand


@njit(cache=True)
def fill_phi(arc, cand, sib, grand, use_sib, use_grand, phi):
    """``phi[h, m]`` for the arcs of ``cand`` (module docstring); other cells are left alone."""
    size = arc.shape[0]
    heads = np.empty((size, size), dtype=np.int64)  # row h: the candidate heads of word h
    n_heads = np.zeros(size, dtype=np.int64)
    mods = np.empty((size, size), dtype=np.int64)  # row h: its candidate modifiers, by index
    n_mods = np.zeros(size, dtype=np.int64)
    for h in range(size):
        for m in range(1, size):
            if cand[h, m]:
                heads[m, n_heads[m]] = h
                n_heads[m] += 1
                mods[h, n_mods[h]] = m
                n_mods[h] += 1
    for h in range(size):
        for i in range(n_mods[h]):
            m = mods[h, i]
            value = arc[h, m]
            if use_sib:
                top = sib[h, h, m]
                for j in range(n_mods[h]):  # candidate modifiers strictly between h and m
                    s = mods[h, j]
                    if (h < s < m or m < s < h) and sib[h, s, m] > top:
                        top = sib[h, s, m]
                value += top
            if use_grand and h != 0:
                top = -np.inf
                for j in range(n_heads[h]):
                    g = heads[h, j]
                    if g != m and grand[g, h, m] > top:
                        top = grand[g, h, m]
                value += top
            phi[h, m] = value


@njit(cache=True)
def fixed_tree(cand):
    """The heads array when every word has exactly one candidate head, else an empty array."""
    size = cand.shape[0]
    heads = np.full(size, -1, dtype=np.int64)
    for m in range(1, size):
        if candidate_count(cand, m, heads) != 1:
            return np.empty(0, dtype=np.int64)
    return heads


@njit(cache=True)
def candidate_count(cand, m, heads):
    """How many candidate heads word ``m`` has (``cand[:, m]``); the last of them goes in
    ``heads[m]``."""
    count = 0
    for h in range(cand.shape[0]):
        if cand[h, m]:
            count += 1
            heads[m] = h
    return count
