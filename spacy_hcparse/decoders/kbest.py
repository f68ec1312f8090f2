"""The k best trees: projective (k-best Eisner, arcs and siblings) and non-projective (k-best spanning trees).

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` scores head ``h`` ->
modifier ``m`` (column 0 and the diagonal are ignored; ``-inf`` marks an absent arc, see
``absent.py``); ``sib[h, s, m]`` (projective only, optional) scores ``m`` being the next modifier
of ``h`` after ``s`` on the same side, ``s == h`` for the closest; a tree is an int64 heads array of
shape (n+1,) with ``heads[0] == -1`` and EXACTLY ONE word attached to the root, as ``decode_eisner``
and ``decode_mst`` define it. A tree's score is the sum of its factors' scores (``tree_score``).

Both functions return ``(trees, scores)``: int64 (k', n+1) and float64 (k',), ``k' = min(k, number
of trees that avoid absent arcs)`` distinct trees by non-increasing score, the first being the tree
the exact decoder (``decode_eisner`` / ``decode_mst``) returns. When no tree avoids the absent arcs,
that decoder's last-resort tree alone is returned, with score ``-inf``.

Projective: Huang & Chiang's (2005) k-best parsing (their Algorithm 2) over Eisner's hypergraph
(``eisner.py``'s chart, first order or with McDonald & Pereira's sibling spans), which has one
derivation per projective tree. Items are the complete spans ``cr`` (headed left) and ``cl``
(headed right), the incomplete spans ``ir`` (``s -> t``) and ``il`` (``t -> s``), the sibling spans
``sb`` (second order), and the root item (the root's single child ``m``: ``arc[0, m] + cl[1, m] +
cr[m, n]``). Every hyperedge has two tails (a one-word span of value 0 stands for a missing one). Widest spans last, each item keeps its k best derivations, merged
from its incoming hyperedges with a heap: the best of each hyperedge first, then after popping
``(e, i, j)`` (the i-th derivation of the left tail with the j-th of the right) the successors
``(e, i, j + 1)`` and, when ``j == 0``, ``(e, i + 1, 0)``, which reaches every pair exactly once and
only after a better one. O(n^3 + n^2 k log(n + k)) time, O(n^2 k) memory. Ties are popped in the
order of Eisner's own search, so the first tree is ``decode_eisner``'s (checked all the same).

Non-projective: Lawler's (1972) partitioning, the scheme of Camerini, Fratta & Maffioli (1980) and
Hall (2007). Each subproblem is the set of trees containing some arcs and avoiding others; its best
tree comes from the exact single-root MST kernel (``mst.py``, included arcs forced by making their
word's other heads absent). Popping the best subproblem yields the next tree, and its tree's free
arcs ``e_1..e_p`` split the rest of the subproblem into ``p`` parts (``e_i`` excluded, ``e_1..e_{i-1}``
included). O(k n) MST solves, O(k n^3) time; Camerini's next-best-arc bookkeeping, which lowers
this to O(k n^2), is not used.
"""
import heapq
from typing import Optional, Tuple

import numpy as np

from ..compiling import njit
from ._checks import check_arc, check_inputs
from .absent import Allowed, has_single_root_tree, uses_absent, with_floor
from .eisner import eisner2_kernel, eisner_kernel
from .mst import mst_kernel
from .scoring import arc_part, full_score

# item kinds of the projective chart
_CR, _CL, _IR, _IL, _SB = 0, 1, 2, 3, 4
# the projective chart holds 5 (n+1)^2 k derivations of 20 bytes: refuse more than about 500 MB
MAX_CHART_CELLS = 5_000_000
_NO_CUBE = np.zeros((1, 1, 1))


def kbest_eisner(arc, k: int, sib: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    """The ``k`` best projective single-root trees of ``arc`` ((n+1, n+1), ``arc[h, m]``, index 0
    the root) and optional sibling factors ``sib[h, s, m]`` (``s == h`` for the closest modifier
    on a side, as ``decode_eisner``), with their scores, best first; see the module docstring.
    Raises ``ValueError`` on bad input, ``k < 1``, or a chart over ``MAX_CHART_CELLS``."""
    arc, sib, _ = check_inputs(arc, sib, None)
    k = _check_k(k)
    size = arc.shape[0]
    if size * size * k > MAX_CHART_CELLS:
        raise ValueError(f"kbest_eisner: {size - 1} words with k={k} exceed the chart limit; use a smaller k")
    allowed = with_floor(arc, sib)
    use_sib = sib is not None
    cube = sib if use_sib else np.zeros((1, 1, 1))
    if size <= 2:
        return _finish(_tiny_tree(size), allowed, None, cube, use_sib)
    trees = kbest_eisner_kernel(allowed.arc, cube, use_sib, k)
    lead = eisner2_kernel(allowed.arc, sib) if use_sib else eisner_kernel(allowed.arc)
    return _finish(trees, allowed, lead, cube, use_sib)


def kbest_mst(arc, k: int) -> Tuple[np.ndarray, np.ndarray]:
    """The ``k`` best (non-projective) single-root spanning trees of ``arc`` ((n+1, n+1),
    ``arc[h, m]``, index 0 the root) and their scores, best first; see the module docstring.
    Raises ``ValueError`` on bad input or ``k < 1``."""
    arc = check_arc(arc)
    k = _check_k(k)
    size = arc.shape[0]
    allowed = with_floor(arc)
    if size <= 2:
        return _finish(_tiny_tree(size), allowed, None, _NO_CUBE, False)
    first = mst_kernel(allowed.arc)
    if not allowed.feasible:
        return _finish(first[None, :], allowed, None, _NO_CUBE, False)
    fixed = np.full(size, -1, dtype=np.int64)
    banned = np.zeros((size, size), dtype=np.bool_)
    queue = [(-arc_part(first, allowed.arc), 0, first, fixed, banned)]
    found, counter = [], 1
    while queue and len(found) < k:
        _, _, tree, fixed, banned = heapq.heappop(queue)
        found.append(tree)
        if len(found) == k:
            break
        for part_fixed, part_banned in _partition(tree, fixed, banned):
            best = _constrained_mst(arc, allowed.mask, part_fixed, part_banned)
            if best is not None:
                heapq.heappush(queue, (-arc_part(best, allowed.arc), counter, best, part_fixed, part_banned))
                counter += 1
    return _finish(np.array(found, dtype=np.int64), allowed, first, _NO_CUBE, False)


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return int(k)


def _tiny_tree(size: int) -> np.ndarray:
    """The only tree of 0 or 1 words."""
    tree = np.full((1, size), -1, dtype=np.int64)
    if size == 2:
        tree[0, 1] = 0
    return tree


def _partition(tree: np.ndarray, fixed: np.ndarray, banned: np.ndarray):
    """The parts of a subproblem (arcs ``fixed``, ``-1`` free; ``banned[h, m]`` excluded) left
    once its best tree ``tree`` is taken: one per free arc of ``tree``."""
    fixed = fixed.copy()
    for m in np.flatnonzero(fixed[1:] < 0) + 1:
        part_banned = banned.copy()
        part_banned[tree[m], m] = True
        yield fixed.copy(), part_banned
        fixed[m] = tree[m]


def _constrained_mst(arc: np.ndarray, mask: np.ndarray, fixed: np.ndarray, banned: np.ndarray):
    """The best single-root tree over the allowed arcs ``mask`` that has the arcs ``fixed`` and
    none of ``banned``, or None when there is none."""
    allowed = mask & ~banned
    words = np.flatnonzero(fixed >= 0)
    allowed[:, words] = False
    allowed[fixed[words], words] = True
    if not has_single_root_tree(allowed):
        return None
    work = arc.copy()
    work[mask & ~allowed] = -np.inf
    return mst_kernel(with_floor(work).arc)


def _finish(trees: np.ndarray, allowed: Allowed, lead, sib: np.ndarray, use_sib: bool) -> Tuple[np.ndarray, np.ndarray]:
    """Trees avoiding absent arcs (all but the first dropped when none does), by non-increasing
    score (arcs, and siblings with ``use_sib``), the exact decoder's tree ``lead`` (when given and
    optimal) first; with their scores."""
    scores = np.array([full_score(tree, allowed.arc, sib, sib, use_sib, False) for tree in trees])
    valid = np.array([not uses_absent(tree, allowed.mask) for tree in trees], dtype=bool)
    if not valid.any():
        return trees[:1].copy(), np.full(1, -np.inf)
    trees, scores = trees[valid], scores[valid]
    order = np.argsort(-scores, kind="stable")
    trees, scores = trees[order], scores[order]
    if lead is not None and not uses_absent(lead, allowed.mask):
        trees, scores = _lead_with(trees, scores, lead, full_score(lead, allowed.arc, sib, sib, use_sib, False))
    return trees, scores


def _lead_with(trees: np.ndarray, scores: np.ndarray, lead: np.ndarray, lead_score: float):
    """Put the exact decoder's tree first when it ties with the best (it is optimal, so it does;
    only rounding could say otherwise). A tie left out of a full list takes the last place."""
    if lead_score < scores[0] - 1e-9 * (1.0 + abs(scores[0])):
        return trees, scores
    same = np.flatnonzero((trees == lead).all(axis=1))
    rest = np.ones(len(trees), dtype=bool)
    if len(same):
        rest[same[0]] = False
    else:
        rest[-1] = False
    trees = np.concatenate([lead[None, :], trees[rest]])
    scores = np.concatenate([[max(lead_score, scores[0])], scores[rest]])
    return trees, scores


@njit(cache=True)
def kbest_eisner_kernel(arc, sib, use_sib, k):
    """k-best Eisner kernel: ``arc`` C-contiguous finite float64 (n+1, n+1), n >= 2; ``sib``
    (n+1, n+1, n+1), read when ``use_sib``; returns int64 (k', n+1) trees, best first
    (k' = min(k, number of projective trees))."""
    size = arc.shape[0]
    n = size - 1
    val = np.full((5, size, size, k), -np.inf)
    cnt = np.zeros((5, size, size), dtype=np.int64)
    back = np.zeros((5, size, size, k, 3), dtype=np.int32)  # split, left rank, right rank
    for s in range(1, size):
        for kind in (_CR, _CL):
            val[kind, s, s, 0] = 0.0
            cnt[kind, s, s] = 1
    tails = np.zeros((size, 7), dtype=np.int64)  # per edge: split, left (kind, s, t), right (kind, s, t)
    weight = np.zeros(size)
    heap = _new_heap(size + 2 * k + 2)
    out_val = np.empty(k)
    out_back = np.zeros((k, 3), dtype=np.int32)
    for width in range(1, n):
        for s in range(1, size - width):
            t = s + width
            ne = 0
            for u in range(s, t):  # sb / first-order ir, il: cr[s, u] + cl[u + 1, t]
                _set_edge(tails, weight, ne, u, _CR, s, u, _CL, u + 1, t, 0.0)
                ne += 1
            got = _merge(val, cnt, tails, weight, ne, k, heap, out_val, out_back)
            if use_sib:
                _store(val, cnt, back, _SB, s, t, got, out_val, out_back, 0.0)
                _sibling_incomplete(val, cnt, back, tails, weight, arc, sib, s, t, k, heap, out_val, out_back)
            else:
                _store(val, cnt, back, _IR, s, t, got, out_val, out_back, arc[s, t])
                _store(val, cnt, back, _IL, s, t, got, out_val, out_back, arc[t, s])
            ne = 0
            for r in range(s + 1, t + 1):  # cr[s, t]: ir[s, r] + cr[r, t]
                _set_edge(tails, weight, ne, r, _IR, s, r, _CR, r, t, 0.0)
                ne += 1
            got = _merge(val, cnt, tails, weight, ne, k, heap, out_val, out_back)
            _store(val, cnt, back, _CR, s, t, got, out_val, out_back, 0.0)
            ne = 0
            for r in range(s, t):  # cl[s, t]: cl[s, r] + il[r, t]
                _set_edge(tails, weight, ne, r, _CL, s, r, _IL, r, t, 0.0)
                ne += 1
            got = _merge(val, cnt, tails, weight, ne, k, heap, out_val, out_back)
            _store(val, cnt, back, _CL, s, t, got, out_val, out_back, 0.0)
    for m in range(1, size):  # the root's single child m
        bonus = sib[0, 0, m] if use_sib else 0.0
        _set_edge(tails, weight, m - 1, m, _CL, 1, m, _CR, m, n, arc[0, m] + bonus)
    got = _merge(val, cnt, tails, weight, n, k, heap, out_val, out_back)
    trees = np.full((got, size), -1, dtype=np.int64)
    stack = np.zeros((4 * size + 2, 4), dtype=np.int64)
    for j in range(got):
        _backtrack(back, out_back[j], trees[j], stack, n, use_sib)
    return trees


@njit(cache=True)
def _sibling_incomplete(val, cnt, back, tails, weight, arc, sib, s, t, k, heap, out_val, out_back):
    """The second-order incomplete spans of [s, t] (McDonald & Pereira's chart, as ``eisner.py``):
    ``s -> t`` with ``t`` closest to ``s`` (split ``r == s``: ``cl[s + 1, t]``, the right tail a
    one-word span of value 0) or after the previous right modifier ``r`` (``ir[s, r] + sb[r, t]``);
    ``t -> s`` likewise (``r == t``: ``cr[s, t - 1]``; else ``sb[s, r] + il[r, t]``)."""
    _set_edge(tails, weight, 0, s, _CL, s + 1, t, _CR, t, t, sib[s, s, t] + arc[s, t])
    for r in range(s + 1, t):  # edge r - s
        _set_edge(tails, weight, r - s, r, _IR, s, r, _SB, r, t, sib[s, r, t] + arc[s, t])
    got = _merge(val, cnt, tails, weight, t - s, k, heap, out_val, out_back)
    _store(val, cnt, back, _IR, s, t, got, out_val, out_back, 0.0)
    _set_edge(tails, weight, 0, t, _CR, s, t - 1, _CR, s, s, sib[t, t, s] + arc[t, s])
    for r in range(s + 1, t):
        _set_edge(tails, weight, r - s, r, _SB, s, r, _IL, r, t, sib[t, r, s] + arc[t, s])
    got = _merge(val, cnt, tails, weight, t - s, k, heap, out_val, out_back)
    _store(val, cnt, back, _IL, s, t, got, out_val, out_back, 0.0)


@njit(cache=True)
def _set_edge(tails, weight, e, split, kind_a, s_a, t_a, kind_b, s_b, t_b, w):
    tails[e, 0] = split
    tails[e, 1] = kind_a
    tails[e, 2] = s_a
    tails[e, 3] = t_a
    tails[e, 4] = kind_b
    tails[e, 5] = s_b
    tails[e, 6] = t_b
    weight[e] = w


@njit(cache=True)
def _store(val, cnt, back, kind, s, t, got, out_val, out_back, offset):
    """Keep the ``got`` derivations of ``_merge`` as item ``(kind, s, t)``, ``offset`` added."""
    for j in range(got):
        val[kind, s, t, j] = out_val[j] + offset
        for c in range(out_back.shape[1]):  # element by element: no shape-error formatting to compile
            back[kind, s, t, j, c] = out_back[j, c]
    cnt[kind, s, t] = got


@njit(cache=True)
def _edge_value(val, tails, weight, e, i, j):
    return weight[e] + val[tails[e, 1], tails[e, 2], tails[e, 3], i] + val[tails[e, 4], tails[e, 5], tails[e, 6], j]


@njit(cache=True)
def _merge(val, cnt, tails, weight, ne, k, heap, out_val, out_back):
    """The k best derivations over the ``ne`` hyperedges in ``tails``/``weight`` into ``out_val``
    and ``out_back`` (split, left rank, right rank); returns how many there are."""
    hv, hk = heap
    size = 0
    for e in range(ne):
        size = _heap_push(hv, hk, size, _edge_value(val, tails, weight, e, 0, 0), e, 0, 0)
    got = 0
    while got < k and size > 0:
        value, e, i, j = hv[0], hk[0, 0], hk[0, 1], hk[0, 2]
        size = _heap_pop(hv, hk, size)
        out_val[got] = value
        out_back[got, 0] = tails[e, 0]
        out_back[got, 1] = i
        out_back[got, 2] = j
        got += 1
        if j + 1 < cnt[tails[e, 4], tails[e, 5], tails[e, 6]]:
            size = _heap_push(hv, hk, size, _edge_value(val, tails, weight, e, i, j + 1), e, i, j + 1)
        if j == 0 and i + 1 < cnt[tails[e, 1], tails[e, 2], tails[e, 3]]:
            size = _heap_push(hv, hk, size, _edge_value(val, tails, weight, e, i + 1, 0), e, i + 1, 0)
    return got


@njit(cache=True)
def _new_heap(capacity):
    return np.empty(capacity), np.empty((capacity, 3), dtype=np.int64)


@njit(cache=True)
def _before(hv, hk, a, b):
    """Whether heap entry ``a`` pops before ``b``: higher value, ties by (edge, i, j) (Eisner's
    own search keeps the first best split, so its tree comes first)."""
    if hv[a] != hv[b]:
        return hv[a] > hv[b]
    for c in range(3):
        if hk[a, c] != hk[b, c]:
            return hk[a, c] < hk[b, c]
    return False


@njit(cache=True)
def _swap(hv, hk, a, b):
    hv[a], hv[b] = hv[b], hv[a]
    for c in range(3):
        hk[a, c], hk[b, c] = hk[b, c], hk[a, c]


@njit(cache=True)
def _heap_push(hv, hk, size, value, e, i, j):
    hv[size] = value
    hk[size, 0] = e
    hk[size, 1] = i
    hk[size, 2] = j
    pos = size
    while pos > 0:
        parent = (pos - 1) // 2
        if not _before(hv, hk, pos, parent):
            break
        _swap(hv, hk, pos, parent)
        pos = parent
    return size + 1


@njit(cache=True)
def _heap_pop(hv, hk, size):
    size -= 1
    _swap(hv, hk, 0, size)
    pos = 0
    while True:
        best = pos
        for child in (2 * pos + 1, 2 * pos + 2):
            if child < size and _before(hv, hk, child, best):
                best = child
        if best == pos:
            return size
        _swap(hv, hk, pos, best)
        pos = best


@njit(cache=True)
def _backtrack(back, root, heads, stack, n, use_sib):
    """Fill ``heads`` from the root derivation ``root`` (child, left rank, right rank)."""
    m, left, right = np.int64(root[0]), np.int64(root[1]), np.int64(root[2])  # int64 as the stack: one _push
    heads[m] = 0
    depth = 0
    depth = _push(stack, depth, _CL, 1, m, left)
    depth = _push(stack, depth, _CR, m, n, right)
    while depth > 0:
        depth -= 1
        kind, s, t, j = stack[depth, 0], stack[depth, 1], stack[depth, 2], stack[depth, 3]
        split = np.int64(back[kind, s, t, j, 0])
        left, right = np.int64(back[kind, s, t, j, 1]), np.int64(back[kind, s, t, j, 2])
        if kind == _IR:
            heads[t] = s
        elif kind == _IL:
            heads[s] = t
        if kind == _SB or (not use_sib and (kind == _IR or kind == _IL)):
            depth = _push(stack, depth, _CR, s, split, left)
            depth = _push(stack, depth, _CL, split + 1, t, right)
        elif kind == _IR:
            if split == s:
                depth = _push(stack, depth, _CL, s + 1, t, left)
            else:
                depth = _push(stack, depth, _IR, s, split, left)
                depth = _push(stack, depth, _SB, split, t, right)
        elif kind == _IL:
            if split == t:
                depth = _push(stack, depth, _CR, s, t - 1, left)
            else:
                depth = _push(stack, depth, _SB, s, split, left)
                depth = _push(stack, depth, _IL, split, t, right)
        elif kind == _CR:
            depth = _push(stack, depth, _IR, s, split, left)
            depth = _push(stack, depth, _CR, split, t, right)
        else:
            depth = _push(stack, depth, _CL, s, split, left)
            depth = _push(stack, depth, _IL, split, t, right)


@njit(cache=True)
def _push(stack, depth, kind, s, t, j):
    if s >= t:  # single-word spans carry no arcs
        return depth
    stack[depth, 0] = kind
    stack[depth, 1] = s
    stack[depth, 2] = t
    stack[depth, 3] = j
    return depth + 1
