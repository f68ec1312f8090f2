"""Counting the local optima of first-order hill climbing.

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` scores head ``h`` ->
modifier ``m`` (``-inf``: an absent arc, e.g. pruned: no tree uses it and no move goes to it).

Two definitions (``single_root``):

* ``single_root=True`` (default; this package's trees): trees with exactly one word on the root,
  moves that keep that shape (below).
* ``single_root=False`` (Zhang, Lei, Barzilay & Jaakkola 2014, "Greed is Good if Randomized"; their
  RBGParser's hill climbing): any number of words on the root, and a move may give any word any
  allowed head that is not its descendant, the root included. The root then acts as one more
  head, and every node of the contraction below may point to it.

A tree is a *local optimum* when no single head change (one word moved to another head, the
result still a single-root tree) strictly raises the arc-factored score. Moving a word to the root
always makes a second root child, and the root child cannot move (every word is below it), so the
valid moves are: a word ``m`` that is not the root child takes a new head among the words that are
not its descendants. Hence the root row ``arc[0, :]`` plays no part, and a tree is a local optimum
iff every non-root-child word's head is a best head among the words outside its own subtree.

The rest of this docstring describes the single-root case; with ``single_root=False`` the same
search runs with the root as a possible pointer target (a node pointing to it, directly or
through other nodes, is settled), and a leaf is reached when no cycle is left.

Counting by contracting the cycles of the greedy head choice (cf. Zhang, Lei, Barzilay & Jaakkola
2014, "Greed is Good if Randomized"). Let every node (at first every word) point to its best head
among the words outside it. In a local optimum each cycle of this pointer graph is a vertical path
of the tree that uses every cycle arc but one: the missing arc enters the path's top, the "entry".
(Proof: a cycle arc ``a -> b`` is either used or ``a`` lies below ``b``; walking the cycle from its
highest node, used arcs go one level down and an unused arc jumps up to an already visited node,
so only the closing arc can be unused.) Contract each cycle into a node whose entry is the chosen
top, whose head scores are the entry's (``arc[u, top]``) and which points to the best word outside
it; repeat until a single node is left; its entry is the root child. Every sequence of entry
choices yields a distinct local optimum and every local optimum arises once, so the count is the
number of leaves of this branching, which the kernel walks depth first (the work is O(n^3) per
optimum at worst, and a final cycle's leaves are counted at once).

Size of the answer: under the single-root move set the count grows exponentially with n, also for
peaked ("trained-like") scores, because the root child is frozen and nobody may join the root
(counts in docs/decoders.md). Under Zhang et al.'s
definition (``single_root=False``) a word whose best head is the root settles at once, so trained
scores give far fewer optima (``benchmarks/decoders_real.py`` reports both on real scores). No exact method enumerating
optima (or supernode states, which also grow exponentially) reaches n = 40-60, so the count is
capped: ``max_count`` (default 10^6) turns the result into ``min(count,
max_count)``; report capped values as lower bounds.

Ties: with equal scores a node may point to any of its best heads; to count each tree once the
search uses a canonical choice (a cycle's top must point to its smallest best head) and checks
every leaf tree directly. Heavily tied inputs can have astronomically many optima (all-zero scores:
every tree), so use ``max_count`` to stop early.
"""
from typing import Optional

import numpy as np

from ..compiling import njit
from ._checks import check_arc
from .absent import usable_mask

_UNLIMITED = np.iinfo(np.int64).max


DEFAULT_MAX_COUNT = 1_000_000


def count_local_optima(arc, max_count: Optional[int] = DEFAULT_MAX_COUNT, *,
                       single_root: bool = True) -> int:
    """Return ``min(number of local optima, max_count)``.

    A local optimum is a tree (over allowed arcs: ``-inf`` marks an absent arc) that no single
    head change to an allowed head strictly improves. ``single_root=True``: trees with one word on
    the root, moves that keep it so (the root row does not matter, see the module docstring);
    ``single_root=False``: Zhang et al.'s (2014) definition, any number of root children and any
    word may move to the root. ``arc[h, m]``: head ``h`` -> modifier ``m`` (index 0 is the root).
    The enumeration stops once ``max_count`` optima are found, so a result equal to ``max_count``
    means "at least that many"; ``max_count=None`` removes the cap (exponential time in n).
    n = 0 gives 1; so does n = 1 unless its only arc is absent (0).
    Raises ``ValueError`` on bad input or a ``max_count`` below 1.
    """
    arc = check_arc(arc)
    if max_count is None:
        cap = _UNLIMITED
    else:
        cap = int(max_count)
        if cap < 1:
            raise ValueError(f"max_count must be a positive integer, got {max_count!r}")
    mask = usable_mask(arc)
    n = arc.shape[0] - 1
    if n == 0:
        return 1
    if n == 1:
        return int(mask[0, 1])
    free = not single_root
    return int(_count_kernel(arc, mask, cap, _has_ties(arc, mask, free), free))


def _has_ties(arc: np.ndarray, mask: np.ndarray, root_free: bool) -> bool:
    """Whether two allowed heads of some word are equally good (the only comparisons made)."""
    first = 0 if root_free else 1
    for m in range(1, arc.shape[0]):
        values = arc[first:, m][mask[first:, m]]
        if len(values) > 1 and len(np.unique(values)) < len(values):
            return True
    return False


# states of the iterative search (no recursion: numba's cache cannot reload recursive kernels)
_ENTER, _POINTERS, _TOPS, _NEXT_TOPS, _NEXT_POINTERS, _BACK = 0, 1, 2, 3, 4, 5


@njit(cache=True)
def _count_kernel(arc, mask, cap, ties, root_free):
    """Depth-first over levels; level ``d`` has ``size[d]`` nodes, those ``>= first_new[d]`` new.
    ``root_free``: the root is a possible head of every node (Zhang et al.'s definition)."""
    n = arc.shape[0] - 1
    st = _State(n, n + 1)
    comp, entry, ptr, beta, nbest, cyc, cyc_off, digit, pdigit, tops, heads, work, ncycs = st
    size = np.zeros(n + 1, dtype=np.int64)
    first_new = np.zeros(n + 1, dtype=np.int64)
    for u in range(1, n + 1):
        comp[0, u] = u - 1
        entry[0, u - 1] = u
    size[0] = n
    total = 0
    d = 0
    mode = _ENTER
    while True:
        if mode == _ENTER:  # a new level: best outside heads of its new nodes
            for x in range(first_new[d], size[d]):
                _best_outside(arc, mask, comp[d], entry[d, x], x, beta[d], nbest[d], root_free)
                pdigit[d, x] = 0
            # A node that no allowed arc enters from outside ("sink") has no tree below this
            # choice, unless (single root) it is the only one: then its entry is the root child.
            sinks, sink = 0, -1
            for x in range(size[d]):
                if nbest[d, x] == 0:
                    sinks += 1
                    sink = x
            mode = _BACK if sinks > (0 if root_free else 1) else _POINTERS
            if sinks == 1 and not mask[0, entry[d, sink]]:
                mode = _BACK
        elif mode == _POINTERS:  # pointers of the new nodes chosen by pdigit: find the cycles
            for x in range(first_new[d], size[d]):
                if nbest[d, x] == 0:
                    ptr[d, x] = 0  # the single-root sink: its entry hangs from the root
                else:
                    ptr[d, x] = _nth_best(arc, mask, comp[d], entry[d, x], x, beta[d, x],
                                          pdigit[d, x], root_free)
            ncycs[d] = _find_cycles(comp[d], ptr[d], size[d], cyc[d], cyc_off[d], work)
            if ncycs[d] == 0:  # root free, or single root with a sink: all settled
                total = _count_settled(arc, mask, st, d, size[d], ties, total, root_free)
                if total >= cap:
                    return cap
                mode = _NEXT_POINTERS
            elif not root_free and ncycs[d] == 1 and cyc_off[d, 1] == size[d]:
                total = _count_leaves(arc, mask, st, d, size[d], ties, total, cap)
                if total >= cap:
                    return cap
                mode = _NEXT_POINTERS
            else:
                for c in range(ncycs[d]):
                    digit[d, c] = 0
                mode = _TOPS
        elif mode == _TOPS:  # try the current choice of tops; descend if canonical
            ok = True
            for c in range(ncycs[d]):
                top = cyc[d, cyc_off[d, c] + digit[d, c]]
                if ties and not _canonical_top(arc, mask, st, d, top, root_free):
                    ok = False
                    break
                _set_cycle_heads(st, d, c, digit[d, c])
            if ok:
                first_new[d + 1], size[d + 1] = _contract_level(st, d, size[d], ncycs[d])
                d += 1
                mode = _ENTER
            else:
                mode = _NEXT_TOPS
        elif mode == _NEXT_TOPS:
            mode = _TOPS if _advance_cycles(digit[d], cyc_off[d], ncycs[d]) else _NEXT_POINTERS
        elif mode == _NEXT_POINTERS:
            mode = _POINTERS if _advance(pdigit[d], nbest[d], first_new[d], size[d]) else _BACK
        else:  # _BACK: this level is exhausted
            if d == 0:
                return total
            d -= 1
            mode = _NEXT_TOPS


@njit(cache=True)
def _count_leaves(arc, mask, st, d, size, ties, total, cap):
    """Single root, one cycle through all ``size`` nodes: each top whose entry may attach to the
    root is a leaf (it becomes the root child)."""
    entry, cyc = st[1], st[5]
    for j in range(size):
        if not mask[0, entry[d, cyc[d, j]]]:
            continue
        if ties:
            _set_cycle_heads(st, d, 0, j)
            if not (_canonical_top(arc, mask, st, d, cyc[d, j], False)
                    and _verify(arc, mask, st, d, False)):
                continue
        total += 1
        if total >= cap:
            return cap
    return total


@njit(cache=True)
def _count_settled(arc, mask, st, d, size, ties, total, root_free):
    """No cycle left: every node hangs from the root (root free) or from the single-root sink
    through its pointers; one leaf."""
    entry, ptr, heads = st[1], st[2], st[10]
    for x in range(size):
        heads[entry[d, x]] = ptr[d, x]
    if ties and not _verify(arc, mask, st, d, root_free):
        return total
    return total + 1


@njit(cache=True)
def _State(n, levels):
    comp = np.zeros((levels, n + 1), dtype=np.int64)  # word -> node label at each level
    entry = np.zeros((levels, n + 1), dtype=np.int64)  # node -> its entry word
    ptr = np.zeros((levels, n + 1), dtype=np.int64)  # node -> chosen best outside word (0: root)
    beta = np.zeros((levels, n + 1))  # node -> score of its best outside head
    nbest = np.zeros((levels, n + 1), dtype=np.int64)  # node -> number of tied best heads
    cyc = np.zeros((levels, n + 1), dtype=np.int64)  # nodes of the cycles, grouped
    cyc_off = np.zeros((levels, n + 2), dtype=np.int64)
    digit = np.zeros((levels, n + 1), dtype=np.int64)  # which member tops each cycle
    pdigit = np.zeros((levels, n + 1), dtype=np.int64)  # which tied best head each node takes
    tops = np.zeros((levels, n + 1), dtype=np.int64)  # node on top of each cycle
    heads = np.full(n + 1, -1, dtype=np.int64)
    work = np.zeros(n + 1, dtype=np.int64)
    ncyc = np.zeros(levels, dtype=np.int64)  # number of cycles at each level
    return comp, entry, ptr, beta, nbest, cyc, cyc_off, digit, pdigit, tops, heads, work, ncyc


@njit(cache=True)
def _best_outside(arc, mask, comp_d, t, x, beta_d, nbest_d, root_free):
    """Best score of an allowed head of word ``t`` outside node ``x`` (the root too when
    ``root_free``), and how many heads reach it (0: none allowed)."""
    best = -np.inf
    count = 0
    for u in range(0 if root_free else 1, comp_d.shape[0]):
        if (u > 0 and comp_d[u] == x) or not mask[u, t]:
            continue
        val = arc[u, t]
        if count == 0 or val > best:
            best = val
            count = 1
        elif val == best:
            count += 1
    beta_d[x] = best
    nbest_d[x] = count


@njit(cache=True)
def _nth_best(arc, mask, comp_d, t, x, best, k, root_free):
    """The ``k``-th (0-based, by index) allowed head outside node ``x`` scoring ``best`` for ``t``."""
    for u in range(0 if root_free else 1, comp_d.shape[0]):
        if (u == 0 or comp_d[u] != x) and mask[u, t] and arc[u, t] == best:
            if k == 0:
                return u
            k -= 1
    return -1


@njit(cache=True)
def _advance(dig, radix, lo, hi):
    for i in range(lo, hi):
        dig[i] += 1
        if dig[i] < radix[i]:
            return True
        dig[i] = 0
    return False


@njit(cache=True)
def _advance_cycles(dig, off, ncyc):
    for c in range(ncyc):
        dig[c] += 1
        if dig[c] < off[c + 1] - off[c]:
            return True
        dig[c] = 0
    return False


@njit(cache=True)
def _target(comp_d, ptr_d, x):
    """The node that node ``x`` points to, or -1 for the root."""
    return -1 if ptr_d[x] == 0 else comp_d[ptr_d[x]]


@njit(cache=True)
def _find_cycles(comp_d, ptr_d, size, cyc_d, off_d, color):
    """Cycles of the node pointer graph (node x -> node holding word ptr[x]; the root is a sink);
    returns their count."""
    for x in range(size):
        color[x] = -1
    ncyc = 0
    pos = 0
    for s in range(size):
        x = s
        while x >= 0 and color[x] == -1:
            color[x] = s
            x = _target(comp_d, ptr_d, x)
        if x >= 0 and color[x] == s:  # closed a new cycle at x
            off_d[ncyc] = pos
            y = x
            while True:
                cyc_d[pos] = y
                pos += 1
                y = _target(comp_d, ptr_d, y)
                if y == x:
                    break
            ncyc += 1
    off_d[ncyc] = pos
    return ncyc


@njit(cache=True)
def _set_cycle_heads(st, d, c, j):
    """Cycle ``c`` at level ``d`` with member ``j`` on top: the others take their pointers."""
    entry, ptr, cyc, cyc_off, tops, heads = st[1], st[2], st[5], st[6], st[9], st[10]
    lo, hi = cyc_off[d, c], cyc_off[d, c + 1]
    for i in range(lo, hi):
        x = cyc[d, i]
        if i == lo + j:
            tops[d, c] = x
            heads[entry[d, x]] = 0  # provisional: a later level (or the root) overrides it
        else:
            heads[entry[d, x]] = ptr[d, x]


@njit(cache=True)
def _contract_level(st, d, size, ncyc):
    """Build level ``d + 1``: untouched nodes first (they keep their pointer), then the cycles."""
    comp, entry, ptr, beta, nbest, cyc, cyc_off, digit, pdigit, tops, heads, label, _ = st
    for x in range(size):
        label[x] = -1
    for c in range(ncyc):
        for i in range(cyc_off[d, c], cyc_off[d, c + 1]):
            label[cyc[d, i]] = -2 - c
    k = 0
    for x in range(size):
        if label[x] == -1:
            label[x] = k
            entry[d + 1, k] = entry[d, x]
            ptr[d + 1, k] = ptr[d, x]
            beta[d + 1, k] = beta[d, x]
            nbest[d + 1, k] = nbest[d, x]
            k += 1
    first_new = k
    for c in range(ncyc):
        entry[d + 1, k + c] = entry[d, tops[d, c]]
    for x in range(size):
        if label[x] <= -2:
            label[x] = first_new + (-2 - label[x])
    for u in range(1, comp.shape[1]):
        comp[d + 1, u] = label[comp[d, u]]
    return first_new, first_new + ncyc


@njit(cache=True)
def _canonical_top(arc, mask, st, d, x, root_free):
    """With ties, a cycle's top must point to its smallest tied best head (one search path per tree)."""
    comp, entry, ptr, beta = st[0], st[1], st[2], st[3]
    return ptr[d, x] == _nth_best(arc, mask, comp[d], entry[d, x], x, beta[d, x], 0, root_free)


@njit(cache=True)
def _verify(arc, mask, st, d, root_free):
    """Leaf check used with ties: the tree is a local optimum reached by its canonical path."""
    entry, beta, cyc, cyc_off, tops, heads = st[1], st[3], st[5], st[6], st[9], st[10]
    n = heads.shape[0] - 1
    for m in range(1, n + 1):
        h = heads[m]
        if h == 0 and not root_free:
            continue  # the root child cannot move
        for u in range(0 if root_free else 1, n + 1):
            if u != m and mask[u, m] and arc[u, m] > arc[h, m] and not in_subtree(heads, u, m):
                return False
    # a top's entry must not have ended up under one of its tied best heads
    ncycs = st[12]
    for lv in range(d):
        for c in range(ncycs[lv]):
            t = entry[lv, tops[lv, c]]
            if heads[t] != 0 and arc[heads[t], t] >= beta[lv, tops[lv, c]]:
                return False
            if root_free and heads[t] == 0 and arc[0, t] >= beta[lv, tops[lv, c]]:
                return False
    return True


@njit(cache=True)
def in_subtree(heads, u, m):
    """Whether word ``u`` lies in the subtree of word ``m`` (``u == m`` included)."""
    steps = 0
    while u > 0 and steps < heads.shape[0]:
        if u == m:
            return True
        u = heads[u]
        steps += 1
    return False
