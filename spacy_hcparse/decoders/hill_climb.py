"""Randomized greedy hill climbing over single-root trees (Zhang, Lei, Barzilay & Jaakkola 2014,
"Greed is Good if Randomized"; RBGParser's ``HillClimbingDecoder``).

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` scores head ``h`` ->
modifier ``m`` (column 0 and the diagonal are ignored); ``sib[h, s, m]`` scores ``m`` being the next
modifier of ``h`` after ``s`` on the same side, modifiers on each side in order of increasing
distance from ``h``, ``s == h`` for the closest one (the root only has right modifiers);
``grand[g, h, m]`` scores the arcs ``g -> h`` and ``h -> m`` together (``h != 0``). A tree is an
int64 ``heads`` array of shape (n+1,), ``heads[0] == -1``, exactly one word attached to 0.

Each restart draws a start tree (see ``sampling.py``: uniform single-root trees and trees from the
first-order scores, interleaved by ``uniform_share``; a caller's ``init`` tree comes first), then
climbs: a pass visits the words deepest-first (the reverse of a depth-first pre-order from the root,
children in index order) and gives each word ``m`` its best head among those that keep a valid
single-root tree (not ``m``, not a descendant of ``m``, never the root 0; the root child itself
stays). Passes repeat until one changes nothing; then the best improving *lift* is applied (a
two-arc move: a child ``d`` of ``m`` takes ``m``'s head and ``m`` goes under the subtree of ``d``;
for the root child ``m`` any descendant ``d`` may become the new root child) and passes resume.
Lifts reach what single head changes cannot (a new root child, ``m`` under its own descendant);
they raise the rate of exact optima at n = 6 with sib + grand from about 90% to about 98%. The
gain of a move is computed from the factors it touches only (``arc[h, m]``, ``m``'s place in the
sibling chains of its old and new heads, ``grand[., h, m]`` and ``grand[h, m, c]`` for ``m``'s
children ``c``; see ``attach_part``), never by rescoring the tree.

Restarts stop once the best score has been reached ``converge`` times after ``min_restarts``, or
after ``max_restarts``, or when ``time_limit`` seconds have passed (checked between kernel calls).
The random stream is reseeded every ``_SEED_BLOCK`` restarts from ``seed``, so a fixed seed gives
the same result whether or not a time limit splits the work (unless the limit actually cuts it).

Kernels that never allocate are compiled with ``_nrt=False`` (no numba reference counting): the
inner loops call small helpers with many array arguments, and the atomic reference-count updates
around each call otherwise cost more than the arithmetic (measured 20-40x on the candidate loop).
"""
import time
from typing import NamedTuple, Optional

import numpy as np
from numba import njit

from ._checks import check_heads, check_inputs
from .sampling import head_tables, uniform_tree, weighted_tree
from .scoring import full_score

_SEED_BLOCK = 8
_RESTART_BUDGET = 4000  # default_max_restarts: restarts x n^2
_MIN_CAP, _MAX_CAP = 10, 100
_NO_CUBE = np.zeros((1, 1, 1))


class HillClimbResult(NamedTuple):
    """``heads``: int64 (n+1,) best tree found; ``score``: its total score under the given factors;
    ``restarts``: start trees climbed; ``hits``: how many of them ended at the best score;
    ``time_capped``: the time limit stopped the search before its other stopping rules."""

    heads: np.ndarray
    score: float
    restarts: int
    hits: int
    time_capped: bool


def decode_hill_climb(
    arc,
    sib: Optional[np.ndarray] = None,
    grand: Optional[np.ndarray] = None,
    *,
    seed: int = 0,
    init=None,
    max_restarts: Optional[int] = None,
    min_restarts: int = 5,
    converge: int = 10,
    time_limit: Optional[float] = None,
    uniform_share: float = 0.5,
    temperature: float = 1.0,
) -> HillClimbResult:
    """Best single-root tree found by randomized hill climbing under ``arc`` (+ ``sib``, ``grand``).

    Scores follow the module conventions (``arc[h, m]``, ``sib[h, s, m]``, ``grand[g, h, m]``;
    ``sib``/``grand`` optional). ``init``: a valid heads array climbed first. ``uniform_share``:
    the fraction of sampled starts drawn uniformly; the rest come from ``exp(arc / temperature)``.
    ``time_limit`` (seconds, ``None`` for no limit) is checked between batches of restarts; at
    least one restart always runs. n = 0 gives ``[-1]``; n = 1 gives ``[-1, 0]`` (no search).
    """
    arc, sib, grand = check_inputs(arc, sib, grand)
    size = arc.shape[0]
    if init is not None:
        init = check_heads(init, size)
    _check_settings(max_restarts, min_restarts, converge, time_limit, uniform_share, temperature)
    if max_restarts is None:
        max_restarts = default_max_restarts(size - 1)
        min_restarts = min(min_restarts, max_restarts)
    if size <= 2:
        heads = np.array([-1, 0][:size], dtype=np.int64)
        score = full_score(heads, arc, *_cubes(sib, grand))
        return HillClimbResult(heads, float(score), 0, 0, False)
    search = _Search(arc, sib, grand, init, seed, uniform_share, temperature)
    return search.run(int(max_restarts), int(min_restarts), int(converge), time_limit)


class _Search:
    """The state carried between kernel calls: the best tree so far, its score, hits, restarts."""

    def __init__(self, arc, sib, grand, init, seed, uniform_share, temperature):
        size = arc.shape[0]
        self.arc = arc
        self.sib, self.grand, self.use_sib, self.use_grand = _cubes(sib, grand)
        self.arc_t, self.grand_t = score_tables(arc, sib, grand)
        self.use_init = init is not None
        self.init = init if init is not None else np.zeros(size, dtype=np.int64)
        self.head_cdf, self.root_cdf = head_tables(arc, float(temperature))
        self.seed = int(seed) % (2**32)
        self.share = float(uniform_share)
        self.tol = _tolerance(arc, sib, grand)
        self.best = np.empty(size, dtype=np.int64)
        self.stats = np.array([-np.inf, 0.0, 0.0])  # best score, hits, restarts done

    def run(self, max_restarts, min_restarts, converge, time_limit) -> HillClimbResult:
        if time_limit is None:
            self._call(max_restarts, min_restarts, converge)
            return self._result(capped=False)
        start = time.perf_counter()
        batch = 1
        while True:
            first = int(self.stats[2])
            done = self._call(min(first + batch, max_restarts), min_restarts, converge)
            if done or int(self.stats[2]) >= max_restarts:
                return self._result(capped=False)
            elapsed = time.perf_counter() - start
            if elapsed >= time_limit:
                return self._result(capped=True)
            per_restart = elapsed / max(int(self.stats[2]), 1)
            batch = int(min(64, max(1, 0.25 * (time_limit - elapsed) / max(per_restart, 1e-9))))

    def _call(self, stop, min_restarts, converge) -> bool:
        return _search(
            self.arc, self.sib, self.grand, self.arc_t, self.grand_t, self.use_sib, self.use_grand,
            self.init, self.use_init,
            self.head_cdf, self.root_cdf, self.share, self.seed, self.tol, stop, min_restarts,
            converge, self.best, self.stats,
        )

    def _result(self, capped) -> HillClimbResult:
        score = full_score(self.best, self.arc, self.sib, self.grand, self.use_sib, self.use_grand)
        return HillClimbResult(
            self.best.copy(), float(score), int(self.stats[2]), int(self.stats[1]), capped
        )


def default_max_restarts(n: int) -> int:
    """The restart cap used when ``max_restarts`` is None: ``_RESTART_BUDGET // n**2`` clipped to
    ``[_MIN_CAP, _MAX_CAP]``. A climbing pass costs O(n^2), so the cap keeps the work per sentence
    roughly flat: short sentences get many restarts (near-exact search), long ones few."""
    return int(min(_MAX_CAP, max(_MIN_CAP, _RESTART_BUDGET // max(n, 1) ** 2)))


def _tolerance(arc, sib, grand) -> float:
    """Smallest gain counted as an improvement: rounding noise at the scale of the scores
    (only the ``arc`` entries a tree can use: column 0 and the diagonal may hold anything)."""
    used = arc[:, 1:].copy()
    used[1:][np.diag_indices(arc.shape[0] - 1)] = 0.0
    top = 1.0
    for scores in (used, sib, grand):
        if scores is not None and scores.size:
            top = max(top, float(scores.max()), -float(scores.min()))
    return 1e-11 * top


def _cubes(sib, grand):
    """(sib, grand, use_sib, use_grand) with a dummy array standing in for a missing factor."""
    return (
        _NO_CUBE if sib is None else sib,
        _NO_CUBE if grand is None else grand,
        sib is not None,
        grand is not None,
    )


def _check_settings(max_restarts, min_restarts, converge, time_limit, uniform_share, temperature):
    for name, value in (("max_restarts", max_restarts), ("min_restarts", min_restarts),
                        ("converge", converge)):
        if name == "max_restarts" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if max_restarts is not None and min_restarts > max_restarts:
        raise ValueError(f"min_restarts ({min_restarts}) exceeds max_restarts ({max_restarts})")
    if time_limit is not None and not time_limit >= 0:
        raise ValueError(f"time_limit must be None or >= 0 seconds, got {time_limit!r}")
    if not 0.0 <= uniform_share <= 1.0:
        raise ValueError(f"uniform_share must be in [0, 1], got {uniform_share!r}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")


# ----------------------------------------------------------------------------- kernels


def score_tables(arc, sib, grand):
    """(arc_t, grand_t): the layouts the climbing kernels read, so that scanning the candidate
    heads ``h`` of a fixed modifier ``m`` reads contiguous memory. ``arc_t[m, h] = arc[h, m] +
    sib[h, h, m]`` (the sibling term only when ``sib`` is given): the part of ``m`` under ``h`` when
    ``m`` is alone on its side of ``h``. ``grand_t[m, h, g] = grand[g, h, m]`` (a dummy when
    ``grand`` is None), so ``grand[h, m, c] = grand_t[c, m, h]`` is contiguous in ``h`` too."""
    arc_t = arc.T.copy()
    if sib is not None:
        arc_t += np.diagonal(sib, axis1=0, axis2=1)  # [m, h] = sib[h, h, m]
    grand_t = _NO_CUBE if grand is None else np.ascontiguousarray(grand.transpose(2, 1, 0))
    return arc_t, grand_t


@njit(cache=True)
def _search(arc, sib, grand, arc_t, grand_t, use_sib, use_grand, init, use_init, head_cdf,
            root_cdf, share, seed, tol, stop, min_restarts, converge, best, stats):
    """Run restarts ``stats[2]`` .. ``stop - 1``; update ``best``/``stats``; True once converged."""
    size = arc.shape[0]
    heads = np.empty(size, dtype=np.int64)
    in_tree = np.zeros(size, dtype=np.bool_)
    work = _workspace(size)
    parts = np.zeros(size)
    for k in range(int(stats[2]), stop):
        if k % _SEED_BLOCK == 0:
            np.random.seed((seed * 69069 + (k // _SEED_BLOCK) * 1013904223 + 1) % 4294967296)
        if use_init and k == 0:
            heads[:] = init
        elif _is_uniform_start(k - int(use_init), share):
            uniform_tree(heads, in_tree, work[0])
        else:
            weighted_tree(heads, in_tree, work[0], head_cdf, root_cdf)
        climb(heads, arc_t, sib, grand_t, use_sib, use_grand, tol, work, parts)
        score = full_score(heads, arc, sib, grand, use_sib, use_grand)
        stats[2] += 1
        if score > stats[0] + tol:
            stats[0] = score
            stats[1] = 1
            best[:] = heads
        elif score >= stats[0] - tol:
            stats[1] += 1
        if stats[2] >= min_restarts and stats[1] >= converge:
            return True
    return False


@njit(cache=True)
def _is_uniform_start(k, share):
    """Spread uniform starts evenly: start ``k`` is uniform when it passes a multiple of 1/share."""
    return np.floor((k + 1) * share) > np.floor(k * share)


@njit(cache=True)
def _workspace(size):
    """Scratch int64 rows: 0 walk pointers / visiting order, 1 pre-order, 2 prev, 3 next,
    4 unused, 5 stack, 6 unused, 7 child offsets, 8 children grouped by head (in index order),
    9 pre-order position, 10 subtree size."""
    return np.zeros((11, size + 1), dtype=np.int64)


@njit(cache=True, _nrt=False)
def climb(heads, arc_t, sib, grand_t, use_sib, use_grand, tol, work, parts):
    """Hill-climb ``heads`` in place to a local optimum: passes of single head changes, deepest
    word first, until one changes nothing; then one best lift move (see ``_lift``), and again.
    ``arc_t``, ``grand_t``: from ``score_tables``; ``parts``: float scratch of size n+1."""
    while True:
        while _single_pass(heads, arc_t, sib, grand_t, use_sib, use_grand, tol, work, parts):
            pass
        if not _lift(heads, arc_t, sib, grand_t, use_sib, use_grand, tol, work, parts):
            return


@njit(cache=True, _nrt=False)
def _single_pass(heads, arc_t, sib, grand_t, use_sib, use_grand, tol, work, parts):
    """Move each word, deepest first, to its best valid head; return whether any moved."""
    n = heads.shape[0] - 1
    order, pre, prev, nxt, grouped, offsets = work[0], work[1], work[2], work[3], work[8], work[7]
    pos, span = work[9], work[10]
    _index_tree(heads, work)
    for i in range(n + 1):
        order[i] = pre[i]  # the visiting order stays fixed while the tree changes
    changed = False
    for i in range(n, 0, -1):
        m = order[i]
        p = heads[m]
        if p == 0:
            continue  # the root child: any other head would leave the root childless
        first = offsets[m]
        head_parts(m, heads, arc_t, sib, grand_t, use_sib, use_grand, grouped[first:],
                   offsets[m + 1] - first, prev, nxt, parts)
        best = parts[p] + tol
        for j in range(pos[m], pos[m] + span[m]):
            parts[pre[j]] = -np.inf  # m's subtree: m would hang from its own descendant
        best_h = p
        for h in range(1, n + 1):
            if parts[h] > best:
                best_h, best = h, parts[h]
        if best_h != p:
            heads[m] = best_h
            changed = True
            _index_tree(heads, work)
    return changed


@njit(cache=True, _nrt=False)
def _lift(heads, arc_t, sib, grand_t, use_sib, use_grand, tol, work, parts):
    """Apply the best improving lift, if any, and return whether one was applied.

    A lift takes a word ``m`` with head ``p``, a child ``d`` of ``m`` (any descendant when ``m`` is
    the root child, ``p == 0``) and ``x`` in the subtree of ``d``: ``d`` moves up to ``p`` and
    ``m`` moves under ``x``. The result is a valid single-root tree (for ``p == 0``, ``d`` is the
    new root child). Its gain is the sum of two single-move gains, the second one taken on the
    intermediate heads array where ``m`` and ``d`` share the head ``p``. The parts of ``m`` under
    every ``x`` are computed once per ``m`` on the current tree; on the intermediate tree they
    differ only by ``d`` leaving ``m``'s children and by ``d``'s own new head (grand factors).
    """
    n = heads.shape[0] - 1
    pre, prev, nxt, grouped, offsets = work[1], work[2], work[3], work[8], work[7]
    pos, span = work[9], work[10]
    _index_tree(heads, work)
    best_m, best_d, best_x, best_gain = -1, -1, -1, tol
    for m in range(1, n + 1):
        p = heads[m]
        if span[m] == 1:
            continue
        m_kids = grouped[offsets[m]:]
        n_mk = offsets[m + 1] - offsets[m]
        head_parts(m, heads, arc_t, sib, grand_t, use_sib, use_grand, m_kids, n_mk, prev, nxt,
                   parts)
        for j in range(pos[m] + 1, pos[m] + span[m]):
            d = pre[j]
            q = heads[d]
            if q != m and p != 0:
                continue
            d_kids = grouped[offsets[d]:]
            n_dk = offsets[d + 1] - offsets[d]
            gain = attach_part(p, d, heads, arc_t, sib, grand_t, use_sib, use_grand, d_kids,
                               n_dk, -1)
            gain -= attach_part(q, d, heads, arc_t, sib, grand_t, use_sib, use_grand, d_kids,
                                n_dk, -1)
            heads[d] = p  # for a moment m and d share the head p
            gain -= attach_part(p, m, heads, arc_t, sib, grand_t, use_sib, use_grand, m_kids,
                                n_mk, d if q == m else -1)
            heads[d] = q
            for jj in range(j, j + span[d]):
                x = pre[jj]
                total = gain + parts[x]
                if use_grand:
                    if q == m:
                        total -= grand_t[d, m, x]  # d is no longer a child of m
                    if x == d:
                        total += grand_t[m, d, p] - grand_t[m, d, q]  # d's new head
                if total > best_gain:
                    best_m, best_d, best_x, best_gain = m, d, x, total
    if best_m < 0:
        return False
    heads[best_d] = heads[best_m]
    heads[best_m] = best_x
    return True


@njit(cache=True, _nrt=False)
def head_parts(m, heads, arc_t, sib, grand_t, use_sib, use_grand, kids, n_kids, prev, nxt, out):
    """``out[h] = attach_part(h, m, ...)`` for every word ``h`` in ``1..n`` at once (``kids[:n_kids]``
    the children of ``m``; ``prev``, ``nxt``: scratch). Each term is one sweep over ``h``:
    contiguous rows of ``arc_t`` and ``grand_t``; sibling corrections only where ``h`` has
    modifiers on ``m``'s side (``neighbours``)."""
    size = heads.shape[0]
    row = arc_t[m]
    for h in range(1, size):
        out[h] = row[h]
    if use_grand:
        up = grand_t[m]
        for h in range(1, size):
            out[h] += up[h, heads[h]]
        for i in range(n_kids):
            down = grand_t[kids[i], m]
            for h in range(1, size):
                out[h] += down[h]
    if use_sib:
        neighbours(heads, m, prev, nxt)
        for h in range(1, size):
            s, t = prev[h], nxt[h]
            if s != h:
                out[h] += sib[h, s, m] - sib[h, h, m]
            if t >= 0:
                out[h] += sib[h, m, t] - sib[h, s, t]


@njit(cache=True, _nrt=False)
def attach_part(h, m, heads, arc_t, sib, grand_t, use_sib, use_grand, kids, n_kids, skip):
    """The factors that depend on ``m`` hanging from ``h`` (``kids[:n_kids]`` its children, less
    ``skip``): the arc, ``m``'s links in ``h``'s sibling chain, and the grand factors through
    ``m``. A head change's gain is the difference of two such parts. ``arc_t``, ``grand_t``: from
    ``score_tables``."""
    part = arc_t[m, h]
    if use_sib:
        s, t = chain_neighbours(heads, h, m)
        if s != h:
            part += sib[h, s, m] - sib[h, h, m]
        if t >= 0:
            part += sib[h, m, t] - sib[h, s, t]
    if use_grand:
        if h != 0:
            part += grand_t[m, h, heads[h]]
        for i in range(n_kids):
            if kids[i] != skip:
                part += grand_t[kids[i], m, h]
    return part


@njit(cache=True, _nrt=False)
def chain_neighbours(heads, h, m):
    """``m``'s neighbours in ``h``'s sibling chain on ``m``'s side if ``m`` hung from ``h``: the
    closest modifier of ``h`` between ``h`` and ``m`` (``h`` if none) and the closest one beyond
    ``m`` (-1 if none). ``m`` itself is never counted."""
    size = heads.shape[0]
    step = 1 if m > h else -1
    s, t = h, -1
    for k in range(m - step, h, -step):
        if heads[k] == h:
            s = k
            break
    end = size if m > h else 0
    for k in range(m + step, end, step):
        if heads[k] == h:
            t = k
            break
    return s, t


@njit(cache=True, _nrt=False)
def neighbours(heads, m, prev, nxt):
    """``chain_neighbours`` for every head ``h`` at once: ``prev[h]`` and ``nxt[h]``."""
    size = heads.shape[0]
    for h in range(size):
        prev[h] = h
        nxt[h] = -1
    for k in range(m - 1, 0, -1):  # words left of m, nearest first
        q = heads[k]
        if q < k:  # q < k < m: k lies between q and m
            if prev[q] == q:
                prev[q] = k
        elif q > m:  # k < m < q: k lies beyond m, seen from q
            if nxt[q] == -1:
                nxt[q] = k
    for k in range(m + 1, size):  # words right of m, nearest first
        q = heads[k]
        if q > k:  # m < k < q
            if prev[q] == q:
                prev[q] = k
        elif q < m:  # q < m < k
            if nxt[q] == -1:
                nxt[q] = k


@njit(cache=True, _nrt=False)
def _preorder(heads, pre, offsets, grouped, stack):
    """``pre[:n+1]``: depth-first pre-order from the root 0, children in index order."""
    size = heads.shape[0]
    offsets[: size + 1] = 0
    for m in range(1, size):
        offsets[heads[m] + 1] += 1
    for h in range(size):
        offsets[h + 1] += offsets[h]
    fill = stack  # borrowed: the next free slot per head
    for h in range(size):
        fill[h] = offsets[h]
    for m in range(1, size):
        h = heads[m]
        grouped[fill[h]] = m
        fill[h] += 1
    stack[0] = 0
    top = 1
    i = 0
    while top > 0:
        top -= 1
        u = stack[top]
        pre[i] = u
        i += 1
        for k in range(offsets[u + 1] - 1, offsets[u] - 1, -1):
            stack[top] = grouped[k]
            top += 1


@njit(cache=True, _nrt=False)
def _index_tree(heads, work):
    """Fill the pre-order (row 1), children grouped by head (rows 7, 8), each node's pre-order
    position (row 9) and subtree size (row 10): ``v`` is in the subtree of ``m`` iff
    ``pos[m] <= pos[v] < pos[m] + span[m]``."""
    n = heads.shape[0] - 1
    pre, pos, span = work[1], work[9], work[10]
    _preorder(heads, pre, work[7], work[8], work[5])
    for i in range(n + 1):
        pos[pre[i]] = i
        span[i] = 1
    for i in range(n, 0, -1):
        span[heads[pre[i]]] += span[pre[i]]
