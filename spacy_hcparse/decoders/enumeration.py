"""Exact search over the arcs that survive dominance pruning (``dominance.py``).

Conventions: index 0 is the root, words are ``1..n``; ``arc[h, m]``, ``sib[h, s, m]``,
``grand[g, h, m]``; ``cand[h, m]``: the arcs an optimal tree may use; ``heads[0] == -1`` with
exactly one word on the root.

After pruning with a good tree's score most words keep one candidate head. This search tries the
head assignments of the other ("open") words depth first, bounding each partial assignment by
``phi`` (``dominance.py``): a word's contribution under head ``h`` is at most ``phi[h, m]``, so an
assignment that gives up more than ``sum_m max_h phi[h, m] - best`` against the per-word maxima
cannot beat the best tree found. Partial assignments that close a cycle or give the root a second
child are cut at once. When the search finishes within ``limit`` nodes, its best tree is optimal
over ``cand``, hence optimal.
"""
import numpy as np

from ..compiling import njit
from .dominance import candidate_count, fill_phi
from .local_optima import in_subtree
from .scoring import full_score


@njit(cache=True)
def search_candidates(arc, cand, sib, grand, use_sib, use_grand, heads, score, limit):
    """(finished, best heads, best score, nodes): depth-first search of the trees over ``cand``
    that beat ``score`` (the score of the tree ``heads``), visiting at most ``limit`` nodes."""
    size = arc.shape[0]
    phi = np.full((size, size), -np.inf)
    fill_phi(arc, cand, sib, grand, use_sib, use_grand, phi)
    best_phi = np.full(size, -np.inf)
    for m in range(1, size):
        for h in range(size):
            if cand[h, m] and phi[h, m] > best_phi[m]:
                best_phi[m] = phi[h, m]
    total = 0.0
    for m in range(1, size):
        total += best_phi[m]
    # open words (more than one candidate), each with its candidates by increasing loss
    words = np.empty(size, dtype=np.int64)
    n_open = 0
    current = np.full(size, -1, dtype=np.int64)
    roots = 0
    for m in range(1, size):
        if candidate_count(cand, m, current) > 1:
            words[n_open] = m
            n_open += 1
            current[m] = -1
        elif current[m] == 0:
            roots += 1
    if roots > 1:
        return True, heads.copy(), score, 0
    options = np.full((n_open, size), -1, dtype=np.int64)
    losses = np.zeros((n_open, size))
    n_opt = np.zeros(n_open, dtype=np.int64)
    for i in range(n_open):
        m = words[i]
        k = 0
        for h in range(size):
            if cand[h, m]:
                options[i, k] = h
                losses[i, k] = best_phi[m] - phi[h, m]
                k += 1
        n_opt[i] = k
        _sort_by_loss(options[i], losses[i], k)
    best_heads = heads.copy()
    best = score
    choice = np.full(n_open + 1, -1, dtype=np.int64)
    loss = np.zeros(n_open + 1)
    nodes = 0
    depth = 0
    while depth >= 0:
        if depth == n_open:  # a full assignment: a tree (cycles and roots were cut on the way)
            value = full_score(current, arc, sib, grand, use_sib, use_grand)
            if value > best + _tol(best):
                best = value
                for w in range(best_heads.shape[0]):  # element by element: no shape-error formatting to compile
                    best_heads[w] = current[w]
            depth -= 1
            continue
        m = words[depth]
        current[m] = -1  # this depth's previous choice, if any, is withdrawn
        j = choice[depth] + 1
        found = False
        while j < n_opt[depth]:
            nodes += 1
            if nodes > limit:
                return False, best_heads, best, nodes
            if total - (loss[depth] + losses[depth, j]) <= best + _tol(best):
                j = n_opt[depth]  # sorted by loss: the later options cannot do better
                break
            if _fits(m, options[depth, j], current):
                found = True
                break
            j += 1
        if found:
            choice[depth] = j
            current[m] = options[depth, j]
            loss[depth + 1] = loss[depth] + losses[depth, j]
            depth += 1
            choice[depth] = -1
        else:
            choice[depth] = -1
            depth -= 1
    return True, best_heads, best, nodes


@njit(cache=True)
def _tol(value):
    """Rounding tolerance at the scale of ``value`` (0 for an infinite one)."""
    return 1e-9 * (1.0 + abs(value)) if np.isfinite(value) else 0.0


@njit(cache=True)
def _fits(m, h, current):
    """Whether ``m`` may take head ``h`` given the heads assigned so far: no cycle through the
    assigned heads, and at most one root child."""
    if h == 0:
        for v in range(1, current.shape[0]):
            if current[v] == 0:
                return False
        return True
    return not in_subtree(current, h, m)


@njit(cache=True)
def _sort_by_loss(options, losses, k):
    for i in range(1, k):
        o, l = options[i], losses[i]
        j = i - 1
        while j >= 0 and losses[j] > l:
            options[j + 1] = options[j]
            losses[j + 1] = losses[j]
            j -= 1
        options[j + 1] = o
        losses[j + 1] = l
