"""Exact non-projective first-order decoding: the best single-root spanning arborescence.

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` scores the arc head
``h`` -> modifier ``m`` (column 0 and the diagonal are ignored); the result ``heads`` is an int64
array with ``heads[0] == -1`` and EXACTLY ONE word attached to the root.

Algorithm: Chu-Liu-Edmonds with Tarjan-style incremental bookkeeping (after a contraction only the
new node needs a new best incoming arc, so contracting is O(n^2) in total), plus the root
constraint of Gabow & Tarjan (1984) as adapted by Zmigrod, Vieira & Cotterell (2020, "Please Mind
the Root"): once the greedy graph is acyclic, while the root has several children, replace the
root arc whose replacement by the best other incoming arc of its node costs least, contracting any
cycle this closes. No "large constant on root arcs" trick is used, so scores keep their precision.

Nodes of the contracted graph live in "slots" (rows/columns of the work matrix): a contracted
cycle reuses the slot of one member. Each node also has an id (words keep theirs, a contraction
gets a fresh id ``>= n+1``) used to expand the contractions at the end.
"""
import numpy as np

from ..compiling import njit
from ._checks import check_arc
from .absent import with_floor


def decode_mst(arc) -> np.ndarray:
    """Return the heads of the highest-scoring non-projective tree with exactly one root child.

    ``arc`` is an (n+1, n+1) array (or nested list) with ``arc[h, m]`` the score of head ``h`` ->
    modifier ``m``, ``-inf`` for an absent arc (used only when no tree avoids absent arcs); index 0
    is the root, column 0 and the diagonal are ignored. Returns int64 ``heads`` with
    ``heads[0] == -1``. Raises ``ValueError`` on bad input.
    Ties are broken arbitrarily (any optimal tree may be returned).
    """
    return mst_kernel(with_floor(check_arc(arc)).arc)


@njit(cache=True)
def mst_kernel(arc):
    """njit kernel of :func:`decode_mst`: ``arc`` must be a C-contiguous finite float64 (n+1, n+1).

    Returns int64 heads; ``arc`` is not modified. Meant to be called in loops (dual
    decomposition): it allocates two (n+1, n+1) work arrays and a few O(n) vectors.
    """
    size = arc.shape[0]
    heads = np.full(size, -1, dtype=np.int64)
    if size <= 2:
        if size == 2:
            heads[1] = 0
        return heads
    score = arc.copy()
    orig = np.empty((size, size), dtype=np.int64)  # original arc (h * size + m) behind u -> v
    for u in range(size):
        for v in range(size):
            orig[u, v] = u * size + v
    alive = np.ones(size, dtype=np.bool_)
    best_in = np.full(size, -1, dtype=np.int64)
    slot_id = np.arange(size)
    # per id: absorbing contraction, incoming cycle arc; per contraction: its members' ids
    parent = np.full(2 * size, -1, dtype=np.int64)
    cycle_arc = np.full(2 * size, -1, dtype=np.int64)
    members = np.empty(2 * size, dtype=np.int64)
    member_start = np.zeros(size + 1, dtype=np.int64)
    counters = np.zeros(2, dtype=np.int64)  # [number of contractions, number of members stored]
    cycle = np.empty(size, dtype=np.int64)
    for m in range(1, size):
        best_in[m] = _best_head(score, alive, m, -1)
    books = (orig, alive, best_in, slot_id, parent, cycle_arc, members, member_start, counters, cycle)
    _break_all_cycles(score, books)
    _enforce_single_root(score, books)
    _expand(books, heads)
    return heads


@njit(cache=True)
def _best_head(score, alive, m, skip):
    """Slot of the best alive head of slot ``m`` other than ``m`` and ``skip``."""
    best = -np.inf
    arg = -1
    for h in range(score.shape[0]):
        if alive[h] and h != m and h != skip and score[h, m] > best:
            best = score[h, m]
            arg = h
    return arg


@njit(cache=True)
def _break_all_cycles(score, books):
    """Contract cycles of the greedy graph until every alive node reaches the root."""
    alive, best_in = books[1], books[2]
    size = score.shape[0]
    state = np.zeros(size, dtype=np.int64)  # -1: reaches the root; k > 0: seen in walk k
    state[0] = -1
    path = np.empty(size, dtype=np.int64)
    stamp = 0
    for s in range(1, size):
        if not alive[s] or state[s] == -1:
            continue
        start = s
        stamp += 1
        length = 0
        x = start
        while True:
            if state[x] == -1:
                for i in range(length):
                    state[path[i]] = -1
                break
            if state[x] == stamp:  # x lies on a cycle: contract it, restart from the new node
                start = _contract(score, books, x)
                stamp += 1
                length = 0
                x = start
                continue
            state[x] = stamp
            path[length] = x
            length += 1
            x = best_in[x]


@njit(cache=True)
def _settle(score, books, s):
    """Contract the cycles through ``s`` (the rest of the greedy graph being acyclic)."""
    best_in = books[2]
    size = score.shape[0]
    while True:
        x = best_in[s]
        steps = 0
        while x != 0 and x != s and steps < size:
            x = best_in[x]
            steps += 1
        if x != s:
            return
        s = _contract(score, books, s)


@njit(cache=True)
def _enforce_single_root(score, books):
    """Swap the cheapest root arc for its node's best other arc while the root has several children.

    If the swap closes a cycle, the cycle is contracted; its best incoming arc is then a root arc
    (the swapped one, discounted by the swap cost), so the number of root children never grows
    and each step removes a root child or a node.
    """
    alive, best_in = books[1], books[2]
    size = score.shape[0]
    while True:
        n_children = 0
        best_cost = np.inf
        drop = -1
        repl = -1
        for j in range(1, size):
            if alive[j] and best_in[j] == 0:
                n_children += 1
                other = _best_head(score, alive, j, 0)
                cost = score[0, j] - score[other, j]
                if cost < best_cost:
                    best_cost = cost
                    drop = j
                    repl = other
        if n_children <= 1:
            return
        best_in[drop] = repl  # swap; the root arc stays available (a new cycle re-enters by it)
        _settle(score, books, drop)


@njit(cache=True)
def _contract(score, books, start):
    """Contract the greedy cycle through slot ``start``; return the slot of the new node."""
    orig, alive, best_in, slot_id, parent, cycle_arc, members, member_start, counters, cycle = books
    size = score.shape[0]
    k = 0
    x = start
    while True:
        cycle[k] = x
        k += 1
        x = best_in[x]
        if x == start:
            break
    new_id = size + counters[0]
    rep = cycle[0]
    pos = counters[1]
    member_start[counters[0]] = pos
    for i in range(k):
        c = cycle[i]
        cid = slot_id[c]
        parent[cid] = new_id
        cycle_arc[cid] = orig[best_in[c], c]
        members[pos + i] = cid
    counters[0] += 1
    counters[1] = pos + k
    member_start[counters[0]] = pos + k
    for i in range(k):
        alive[cycle[i]] = False  # temporarily: marks "in the cycle" for the loops below
    for v in range(size):
        if not alive[v]:
            continue
        # arc v -> cycle: enter at the member that loses least its cycle arc
        best = -np.inf
        arg = -1
        for i in range(k):
            c = cycle[i]
            val = score[v, c] - score[best_in[c], c]
            if val > best:
                best = val
                arg = c
        if arg >= 0:
            orig[v, rep] = orig[v, arg]
        score[v, rep] = best
        if v == 0:
            continue
        # arc cycle -> v: leave from the best member
        best = -np.inf
        arg = -1
        for i in range(k):
            c = cycle[i]
            if score[c, v] > best:
                best = score[c, v]
                arg = c
        score[rep, v] = best
        orig[rep, v] = orig[arg, v]
        if not alive[best_in[v]]:  # v's best head was in the cycle: it is now the new node
            best_in[v] = rep
    alive[rep] = True
    slot_id[rep] = new_id
    best_in[rep] = _best_head(score, alive, rep, -1)
    return rep


@njit(cache=True)
def _expand(books, heads):
    """Undo the contractions from the last one down, reading each word's original head."""
    orig, alive, best_in, slot_id, parent, cycle_arc, members, member_start, counters, cycle = books
    size = heads.shape[0]
    incoming = np.full(2 * size, -1, dtype=np.int64)
    for s in range(1, size):
        if alive[s]:
            incoming[slot_id[s]] = orig[best_in[s], s]
    for c in range(counters[0] - 1, -1, -1):
        cid = size + c
        arc = incoming[cid]
        x = arc % size  # the original word the entering arc points to ...
        while parent[x] != cid:  # ... and the member of this cycle that contains it
            x = parent[x]
        for i in range(member_start[c], member_start[c + 1]):
            y = members[i]
            incoming[y] = arc if y == x else cycle_arc[y]
    for m in range(1, size):
        heads[m] = incoming[m] // size
