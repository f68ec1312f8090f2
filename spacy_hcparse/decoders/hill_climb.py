"""Randomized greedy hill climbing over single-root trees (Zhang, Lei, Barzilay & Jaakkola 2014,
"Greed is Good if Randomized"; RBGParser's ``HillClimbingDecoder``).

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` scores head ``h`` ->
modifier ``m`` (column 0 and the diagonal are ignored); ``sib[h, s, m]`` scores ``m`` being the next
modifier of ``h`` after ``s`` on the same side, modifiers on each side in order of increasing
distance from ``h``, ``s == h`` for the closest one (the root only has right modifiers);
``grand[g, h, m]`` scores the arcs ``g -> h`` and ``h -> m`` together (``h != 0``). A tree is an
int64 ``heads`` array of shape (n+1,), ``heads[0] == -1``, exactly one word attached to 0.

The first restarts climb the given start trees: a caller's ``init`` tree, then
(``projective_start``) the best projective tree under the arc and sibling factors (Eisner,
``eisner.py``) unless it is the same tree. Every later restart draws a start tree (see
``sampling.py``: uniform single-root trees and trees from the first-order scores, interleaved by
``uniform_share``). Each start then climbs: a pass visits the words deepest-first (the reverse of
a depth-first pre-order from the root, children in index order) and gives each word ``m`` its
best head among those that keep a valid single-root tree (not ``m``, not a descendant of ``m``,
never the root 0; the root child itself stays). Passes repeat until one changes nothing; then the
best improving *lift* is applied (a two-arc move: a child ``d`` of ``m`` takes ``m``'s head and
``m`` goes under the subtree of ``d``; for the root child ``m`` any descendant ``d`` may become
the new root child) and passes resume.
Lifts reach what single head changes cannot (a new root child, ``m`` under its own descendant);
they raise the rate of exact optima at n = 6 with sib + grand from about 90% to about 98%. The
gain of a move is computed from the factors it touches only (``arc[h, m]``, ``m``'s place in the
sibling chains of its old and new heads, ``grand[., h, m]`` and ``grand[h, m, c]`` for ``m``'s
children ``c``; see ``attach_part``), never by rescoring the tree: two tables hold the part of
every word under every head on the current tree (``_fill_tables``; a move refreshes the few
entries it changes, in O(n)), so scanning all heads for a word reads one row of each.

Restarts stop once the best score has been reached ``converge`` times after ``min_restarts``, or
after ``max_restarts``, or when ``time_limit`` seconds of search have passed (checked between kernel
calls, on ``compiling.clock()``: compiling a kernel does not count).

When the search ends (converged or at its cap), *pair moves* polish its best tree: two words
change heads together (``_pair_move``: each word to each of its ``_PAIR_HEADS`` best other heads,
then the best second move on that tree), then the tree climbs again, until no pair gains. Pairs
reach optima that restarts found only by chance (two siblings moving to a new head together, a
word taking the head its neighbour leaves), which no single move or lift passes.

The random stream is reseeded every ``_SEED_BLOCK`` restarts from ``seed``, so a fixed seed gives
the same result whether or not a time limit splits the work (unless the limit actually cuts it).

Kernels that never allocate are compiled with numba's internal ``_nrt=False`` option (no reference
counting) when this numba version accepts it (probed at import; otherwise they compile without
it, slower): the loops call small helpers with array arguments and row views, and the
reference-count updates around each call otherwise cost more than the arithmetic.
``_single_pass`` and ``_lift`` are inlined into ``climb``, their only caller, at numba's IR level
(``inline="always"``): numba compiles every jitted callee on its own and then links and optimizes
its code again in each caller, so one compile there instead of three. ``climb`` itself stays a
kernel of its own: inlined into ``_search``, which allocates, its row views would be
reference-counted in the inner loops.
"""
from typing import NamedTuple, Optional

import numpy as np

from ..compiling import clock, njit
from ._checks import check_heads, check_inputs
from .absent import Allowed, true_score, with_floor
from .eisner import eisner2_kernel, eisner_kernel
from .sampling import NO_REFCOUNT as _NO_REFCOUNT, head_tables, is_below, uniform_tree, weighted_tree
from .scoring import full_score


_SEED_BLOCK = 8
_RESTART_BUDGET = 4000  # default_max_restarts: restarts x n^2
_MIN_CAP, _MAX_CAP = 30, 100
_PAIR_HEADS = 2  # new heads tried for the first word of a pair move: its best ones
_PAIR_ROUNDS = 10  # pair moves applied at most, each followed by a climb
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
    temperature: float = 2.0,
    pair_moves: bool = True,
    projective_start: bool = True,
) -> HillClimbResult:
    """Best single-root tree found by randomized hill climbing under ``arc`` (+ ``sib``, ``grand``).

    Scores follow the module conventions (``arc[h, m]``, ``sib[h, s, m]``, ``grand[g, h, m]``;
    ``sib``/``grand`` optional). ``init``: a valid heads array climbed first. ``uniform_share``:
    the fraction of sampled starts drawn uniformly; the rest come from ``exp(arc / temperature)``.
    ``pair_moves``: polish the best tree with pair moves when the search ends (module docstring).
    ``projective_start``: climb the best projective tree under ``arc`` and ``sib`` as a start too,
    after ``init``.
    ``time_limit`` (seconds, ``None`` for no limit) is checked between batches of restarts; at
    least one restart always runs. n = 0 gives ``[-1]``; n = 1 gives ``[-1, 0]`` (no search).
    ``-inf`` arcs are absent: used only when no tree avoids them (the score is then ``-inf``).

    The defaults were tuned against proven optima on real parser scores (EWT dev, every
    sentence; ``benchmarks/decoders_real.py``): at least 30 restarts for long sentences, starts
    drawn half uniformly and half from ``exp(arc / 2)``, stop after 10 hits of the best score;
    the projective start and the pair moves find optima that the MST start and the restarts miss
    (docs/decoders.md).
    """
    arc, sib, grand = check_inputs(arc, sib, grand)
    allowed = with_floor(arc, sib, grand)
    if init is not None:
        init = check_heads(init, arc.shape[0])
    _check_settings(max_restarts, min_restarts, converge, time_limit, uniform_share, temperature)
    return hill_climb_checked(allowed, sib, grand, seed=seed, init=init,
                              max_restarts=max_restarts, min_restarts=min_restarts,
                              converge=converge, time_limit=time_limit,
                              uniform_share=uniform_share, temperature=temperature, pair_moves=pair_moves,
                              projective_start=projective_start)


def hill_climb_checked(allowed: Allowed, sib, grand, *, seed, init, max_restarts, min_restarts,
                       converge, time_limit, uniform_share, temperature, pair_moves,
                       projective_start) -> HillClimbResult:
    """``decode_hill_climb`` on inputs already checked (``allowed`` from ``absent.with_floor``)."""
    arc = allowed.arc
    size = arc.shape[0]
    if max_restarts is None:
        max_restarts, min_restarts = default_caps(size - 1, min_restarts)
    if size <= 2:
        heads = np.array([-1, 0][:size], dtype=np.int64)
        score = true_score(heads, allowed.mask, full_score(heads, arc, *_cubes(sib, grand)))
        return HillClimbResult(heads, score, 0, 0, False)
    search = _Search(arc, sib, grand, init, projective_start, seed, uniform_share, temperature, pair_moves)
    result = search.run(int(max_restarts), int(min_restarts), int(converge), time_limit)
    if allowed.any_absent:
        result = result._replace(score=true_score(result.heads, allowed.mask, result.score))
    return result


class _Search:
    """The state carried between kernel calls: the best tree so far, its score, hits, restarts."""

    def __init__(self, arc, sib, grand, init, projective, seed, uniform_share, temperature, pairs):
        size = arc.shape[0]
        self.pairs = bool(pairs)
        self.arc = arc
        self.sib, self.grand, self.use_sib, self.use_grand = _cubes(sib, grand)
        use_init = init is not None
        self.starts = start_trees(init if use_init else np.zeros(size, dtype=np.int64), use_init, arc, self.sib,
                                  self.use_sib, bool(projective))
        self.head_cdf, self.root_cdf = head_tables(arc, float(temperature))
        self.seed = int(seed) % (2**32)
        self.share = float(uniform_share)
        self.tol = _tolerance(arc, sib, grand)
        self.best = np.empty(size, dtype=np.int64)
        self.stats = np.array([-np.inf, 0.0, 0.0])  # best score, hits, restarts done

    def run(self, max_restarts, min_restarts, converge, time_limit) -> HillClimbResult:
        if time_limit is None:
            self._call(max_restarts, min_restarts, converge, True)
            return self._result(capped=False)
        start = clock()
        batch = 1
        while True:
            first = int(self.stats[2])
            stop = min(first + batch, max_restarts)
            done = self._call(stop, min_restarts, converge, stop == max_restarts)
            if done or int(self.stats[2]) >= max_restarts:
                return self._result(capped=False)
            elapsed = clock() - start
            if elapsed >= time_limit:
                return self._result(capped=True)
            per_restart = elapsed / max(int(self.stats[2]), 1)
            batch = int(min(64, max(1, 0.25 * (time_limit - elapsed) / max(per_restart, 1e-9))))

    def _call(self, stop, min_restarts, converge, final) -> bool:
        return _search(
            self.arc, self.sib, self.grand, self.use_sib, self.use_grand, self.starts, self.head_cdf,
            self.root_cdf, self.share, self.seed, self.tol, stop, min_restarts, converge, self.pairs, final,
            self.best, self.stats,
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
    return int(default_caps(n, 0)[0])


@njit(cache=True)
def default_caps(n, min_restarts):
    """``max_restarts=None`` for ``n`` words: ``(stop, low)``, the restarts
    (``default_max_restarts``) and ``min_restarts`` cut to them."""
    stop = min(_MAX_CAP, max(_MIN_CAP, _RESTART_BUDGET // max(n, 1) ** 2))
    return stop, min(min_restarts, stop)


def _tolerance(arc, sib, grand) -> float:
    """Smallest gain counted as an improvement: rounding noise at the scale of the scores
    (only the ``arc`` entries a tree can use: column 0 and the diagonal may hold anything)."""
    top = max(1.0, _arc_abs_max(arc))
    for scores in (sib, grand):
        if scores is not None and scores.size:  # abs max of finite floats, two passes without a temporary
            top = max(top, float(scores.max()), -float(scores.min()))
    return 1e-11 * top


@njit(cache=True)
def _arc_abs_max(arc):
    top = 0.0
    for h in range(arc.shape[0]):
        for m in range(1, arc.shape[0]):
            if m != h:
                top = max(top, abs(arc[h, m]))
    return top


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


@njit(cache=True)
def _search(arc, sib, grand, use_sib, use_grand, starts, head_cdf, root_cdf, share, seed,
            tol, stop, min_restarts, converge, pairs, final, best, stats):
    """Run restarts ``stats[2]`` .. ``stop - 1``; update ``best``/``stats``; True once converged.
    Restart ``k`` climbs ``starts[k]`` while ``k < len(starts)``, then sampled trees.
    When the search ends here (converged, or ``final``: ``stop`` is the last restart), pair moves
    polish ``best`` (``_polish``) if ``pairs``."""
    size = arc.shape[0]
    heads = np.empty(size, dtype=np.int64)
    in_tree = np.zeros(size, dtype=np.bool_)
    work = _workspace(size)
    tables = _tables(size)
    for k in range(int(stats[2]), stop):
        if k % _SEED_BLOCK == 0:
            np.random.seed((seed * 69069 + (k // _SEED_BLOCK) * 1013904223 + 1) % 4294967296)
        if k < starts.shape[0]:
            for j in range(heads.shape[0]):  # element by element: no shape-error formatting to compile
                heads[j] = starts[k, j]
        elif _is_uniform_start(k - starts.shape[0], share):
            uniform_tree(heads, in_tree, work[0])
        else:
            weighted_tree(heads, in_tree, work[0], head_cdf, root_cdf)
        climb(heads, arc, sib, grand, use_sib, use_grand, tol, work, tables)
        score = full_score(heads, arc, sib, grand, use_sib, use_grand)
        stats[2] += 1
        if score > stats[0] + tol:
            stats[0] = score
            stats[1] = 1
            for j in range(best.shape[0]):
                best[j] = heads[j]
        elif score >= stats[0] - tol:
            stats[1] += 1
        if stats[2] >= min_restarts and stats[1] >= converge:
            if pairs:
                _polish(heads, best, stats, arc, sib, grand, use_sib, use_grand, tol, work, tables)
            return True
    if final and pairs:
        _polish(heads, best, stats, arc, sib, grand, use_sib, use_grand, tol, work, tables)
    return False


@njit(cache=True, inline="always")
def _polish(heads, best, stats, arc, sib, grand, use_sib, use_grand, tol, work, tables):
    """Improve ``best`` (score ``stats[0]``) by pair moves, each followed by a climb, until none
    improves (at most ``_PAIR_ROUNDS``). Inlined into ``_search`` so that ``climb`` keeps one
    caller (numba links a callee's code into each caller and optimizes it there again)."""
    for j in range(best.shape[0]):
        heads[j] = best[j]
    for _ in range(_PAIR_ROUNDS):
        _fill_tables(heads, arc, sib, grand, use_sib, use_grand, work, tables)
        if not _pair_move(heads, arc, sib, grand, use_sib, use_grand, tol, work, tables):
            return
        climb(heads, arc, sib, grand, use_sib, use_grand, tol, work, tables)
        score = full_score(heads, arc, sib, grand, use_sib, use_grand)
        if not score > stats[0] + tol:
            return
        stats[0] = score
        for j in range(best.shape[0]):
            best[j] = heads[j]


@njit(cache=True)
def start_trees(init, use_init, arc, sib, use_sib, projective):
    """The trees the search climbs first, one per row (int64 (k, n+1), k <= 2): ``init`` if
    ``use_init``, then, if ``projective``, the best projective tree under ``arc`` (floored:
    finite) and ``sib`` if ``use_sib`` where it differs from ``init``."""
    size = arc.shape[0]
    starts = np.empty((2, size), dtype=np.int64)
    count = 0
    if use_init:
        for j in range(size):  # element by element: no shape-error formatting to compile
            starts[0, j] = init[j]
        count = 1
    if projective:
        tree = eisner2_kernel(arc, sib) if use_sib else eisner_kernel(arc)
        same = use_init
        for j in range(size):
            starts[count, j] = tree[j]
            same = same and tree[j] == init[j]
        if not same:
            count += 1
    return starts[:count]


@njit(cache=True)
def _is_uniform_start(k, share):
    """Spread uniform starts evenly: start ``k`` is uniform when it passes a multiple of 1/share."""
    return np.floor((k + 1) * share) > np.floor(k * share)


@njit(cache=True)
def _workspace(size):
    """Scratch int64 rows: 0 walk pointers / visiting order, 1 pre-order, 2 stale ``below`` rows
    (1: recompute before reading, ``_fresh_below``), 3 a pair move's first heads, 4 its second words, 5 stack,
    6 children of one word, 7 child offsets, 8 children grouped by head (in index order), 9 pre-order position,
    10 subtree size."""
    return np.zeros((11, size + 1), dtype=np.int64)


@njit(cache=True)
def _tables(size):
    """Float scratch ``(4, size, size)``: 0 ``attach``, 1 ``below``, 3 ``links`` (see
    ``_fill_tables``), 2 row 0 the parts of one modifier under every head; for pair moves
    (``_pair_move``) row 1 the first word's, row 2 each word's part under its head."""
    return np.empty((4, size, size))


@njit(cache=True, **_NO_REFCOUNT)
def climb(heads, arc, sib, grand, use_sib, use_grand, tol, work, tables):
    """Hill-climb ``heads`` in place to a local optimum: passes of single head changes, deepest
    word first, until one changes nothing; then one best lift move (see ``_lift``), and again.
    ``work``, ``tables``: scratch from ``_workspace(n + 1)`` and ``_tables(n + 1)``."""
    _fill_tables(heads, arc, sib, grand, use_sib, use_grand, work, tables)
    while True:
        while _single_pass(heads, arc, sib, grand, use_sib, use_grand, tol, work, tables):
            pass
        # a pass that moved nothing leaves ``work`` indexing ``heads`` (``_index_tree``)
        if not _lift(heads, arc, sib, grand, use_sib, use_grand, tol, work, tables, True):
            return


@njit(cache=True, inline="always", **_NO_REFCOUNT)
def _single_pass(heads, arc, sib, grand, use_sib, use_grand, tol, work, tables):
    """Move each word, deepest first, to its best valid head; return whether any moved. Needs
    ``tables`` filled for ``heads`` (``_fill_tables``) and keeps them up to date."""
    n = heads.shape[0] - 1
    order, pre, pos, span = work[0], work[1], work[9], work[10]
    parts = tables[2, 0]
    _index_tree(heads, work)
    for i in range(n + 1):
        order[i] = pre[i]  # the visiting order stays fixed while the tree changes
    changed = False
    for i in range(n, 0, -1):
        m = order[i]
        p = heads[m]
        if p == 0:
            continue  # the root child: any other head would leave the root childless
        _head_parts(m, heads, grand, use_grand, work, tables)
        parts[m] = -np.inf
        best_h = _best_head(p, parts, tol)
        if best_h != p and is_below(heads, best_h, m):
            _index_tree(heads, work)  # rarely needed: rule out m's whole subtree, then retry
            for j in range(pos[m], pos[m] + span[m]):
                parts[pre[j]] = -np.inf
            best_h = _best_head(p, parts, tol)
        if best_h != p:
            heads[m] = best_h
            changed = True
            _after_move(m, p, best_h, heads, arc, sib, grand, use_sib, use_grand, work, tables)
    return changed


@njit(cache=True, **_NO_REFCOUNT)
def _best_head(p, parts, tol):
    """The first ``h`` with the highest ``parts[h]``, if it beats ``parts[p]`` by ``tol``, else ``p``."""
    best_h, best = p, parts[p] + tol
    for h in range(1, parts.shape[0]):
        if parts[h] > best:
            best_h, best = h, parts[h]
    return best_h


@njit(cache=True, inline="always", **_NO_REFCOUNT)
def _lift(heads, arc, sib, grand, use_sib, use_grand, tol, work, tables, indexed=False):
    """Apply the best improving lift, if any, and return whether one was applied (``tables``
    filled for ``heads`` and kept up to date; ``indexed``: ``work`` already indexes ``heads``).

    A lift takes a word ``m`` with head ``p``, a child ``d`` of ``m`` (any descendant when ``m`` is
    the root child, ``p == 0``) and ``x`` in the subtree of ``d``: ``d`` moves up to ``p`` and
    ``m`` moves under ``x``. The result is a valid single-root tree (for ``p == 0``, ``d`` is the
    new root child). Its gain is the sum of two single-move gains, the second one taken on the
    intermediate heads array where ``m`` and ``d`` share the head ``p``. The parts of ``m`` under
    every ``x`` come from the tables of the current tree; on the intermediate tree they differ
    only by ``d`` leaving ``m``'s children and by ``d``'s own new head (grand factors).
    """
    n = heads.shape[0] - 1
    pre, grouped, offsets, pos, span = work[1], work[8], work[7], work[9], work[10]
    parts = tables[2, 0]
    if not indexed:
        _index_tree(heads, work)
    best_m, best_d, best_x, best_gain = -1, -1, -1, tol
    for m in range(1, n + 1):
        p = heads[m]
        if span[m] == 1:
            continue
        m_kids = grouped[offsets[m]:]
        n_mk = offsets[m + 1] - offsets[m]
        _head_parts(m, heads, grand, use_grand, work, tables)
        for j in range(pos[m] + 1, pos[m] + span[m]):
            d = pre[j]
            q = heads[d]
            if q != m and p != 0:
                continue
            d_kids = grouped[offsets[d]:]
            n_dk = offsets[d + 1] - offsets[d]
            s, t = _listed_neighbours(grouped, offsets, p, d, -1)
            gain = attach_part(p, d, s, t, heads, arc, sib, grand, use_sib, use_grand, d_kids,
                               n_dk, -1)
            s, t = _listed_neighbours(grouped, offsets, q, d, -1)
            gain -= attach_part(q, d, s, t, heads, arc, sib, grand, use_sib, use_grand, d_kids,
                                n_dk, -1)
            heads[d] = p  # for a moment m and d share the head p
            s, t = _listed_neighbours(grouped, offsets, p, m, d)
            gain -= attach_part(p, m, s, t, heads, arc, sib, grand, use_sib, use_grand, m_kids,
                                n_mk, d if q == m else -1)
            heads[d] = q
            for jj in range(j, j + span[d]):
                x = pre[jj]
                total = gain + parts[x]
                if use_grand:
                    if q == m:
                        total -= grand[x, m, d]  # d is no longer a child of m
                    if x == d:
                        total += grand[p, d, m] - grand[q, d, m]  # d's new head
                if total > best_gain:
                    best_m, best_d, best_x, best_gain = m, d, x, total
    if best_m < 0:
        return False
    p, q = heads[best_m], heads[best_d]
    heads[best_d] = p
    heads[best_m] = best_x
    _after_move(best_d, q, p, heads, arc, sib, grand, use_sib, use_grand, work, tables)
    _after_move(best_m, p, best_x, heads, arc, sib, grand, use_sib, use_grand, work, tables)
    return True


@njit(cache=True, **_NO_REFCOUNT)
def _pair_move(heads, arc, sib, grand, use_sib, use_grand, tol, work, tables):
    """Apply the best improving pair move to ``heads``, if any, and return whether one was applied
    (``tables`` filled for ``heads``; after a move they are stale: climb next, it refills them).

    A pair moves a word ``a`` (not the root child) to one of its ``_PAIR_HEADS`` best other valid
    heads ``x``, then a second word ``b`` to a head ``y`` on the tree after the first move. Only
    second moves whose gain the first changed are tried (``_second_move``): on a local optimum
    of single moves and lifts the others lose. The pair's gain is exact: the first move's gain
    from the tables, the second's from the tables brought up to date (``_after_move``) and back.
    Pairs reach optima where two words must change heads together (two siblings to a new head; a
    word taking the head its neighbour leaves), which no single move or lift passes.
    """
    n = heads.shape[0] - 1
    own, cur, chosen = tables[2, 1], tables[2, 2], work[3]
    _index_tree(heads, work)
    for b in range(1, n + 1):
        cur[b] = _part(b, heads[b], heads, grand, use_grand, work, tables)
    best_gain, best_a, best_x, best_b, best_y = tol, -1, -1, -1, -1
    for a in range(1, n + 1):
        p = heads[a]
        if p == 0:
            continue
        _head_parts(a, heads, grand, use_grand, work, tables)
        for h in range(1, n + 1):
            own[h] = tables[2, 0, h]
        for i in range(_top_heads(a, p, own, work, chosen)):
            x = chosen[i]
            first = own[x] - own[p]
            heads[a] = x
            _after_move(a, p, x, heads, arc, sib, grand, use_sib, use_grand, work, tables)
            second, b, y = _second_move(a, p, x, heads, grand, use_grand, work, tables)
            heads[a] = p
            _after_move(a, x, p, heads, arc, sib, grand, use_sib, use_grand, work, tables)
            if b > 0 and first + second > best_gain:
                best_gain, best_a, best_x, best_b, best_y = first + second, a, x, b, y
    if best_a < 0:
        return False
    heads[best_a] = best_x
    heads[best_b] = best_y
    return True


@njit(cache=True, **_NO_REFCOUNT)
def _top_heads(a, p, own, work, chosen):
    """Into ``chosen``: up to ``_PAIR_HEADS`` valid new heads of ``a`` (not the root, ``a``,
    ``p`` or a word of ``a``'s subtree: ``work`` indexes the tree), best ``own`` part first;
    return how many."""
    pos, span = work[9], work[10]
    count = 0
    for _ in range(_PAIR_HEADS):
        best_h, best = -1, -np.inf
        for h in range(1, own.shape[0]):
            if h == p or pos[a] <= pos[h] < pos[a] + span[a] or not own[h] > best:
                continue
            if not _listed(chosen, count, h):
                best_h, best = h, own[h]
        if best_h < 0:
            break
        chosen[count] = best_h
        count += 1
    return count


@njit(cache=True, **_NO_REFCOUNT)
def _second_move(a, p, x, heads, grand, use_grand, work, tables):
    """The best valid second move ``(gain, b, y)`` after ``a`` moved from ``p`` to ``x``
    (``heads`` and ``tables`` hold the moved tree; ``work`` indexes the tree before it,
    ``tables[2, 2]`` holds each word's part there; ``b = -1``: none).

    On a local optimum only the moves whose gain the first one changed can gain. It changed every
    part of ``p`` and ``x`` (their children), of ``a``'s children and of ``a``'s chain neighbours
    under ``p`` and ``x``: those rows are read whole. ``a``'s old ancestors may now move into
    ``a``'s subtree. Every other word's part (theirs too) changed only under ``a`` (``a``'s head,
    through the grand factors) and under ``p`` and ``x`` between ``a``'s chain neighbours
    (``_relink``)."""
    n = heads.shape[0] - 1
    grouped, offsets, rows, pre, pos, span = work[8], work[7], work[4], work[1], work[9], work[10]
    parts, cur = tables[2, 0], tables[2, 2]
    s, t = _listed_neighbours(grouped, offsets, p, a, -1)
    u, v = _listed_neighbours(grouped, offsets, x, a, -1)
    count = 0
    for b in (p, x, s, t, u, v):
        count = _push(rows, count, b)
    for k in range(offsets[a], offsets[a + 1]):
        count = _push(rows, count, grouped[k])
    whole = count
    w = heads[p]
    while w > 0 and heads[w] != 0:
        count = _push(rows, count, w)
        w = heads[w]
    best, best_b, best_y = -np.inf, -1, -1
    for k in range(count):
        b = rows[k]
        if b == a or heads[b] == 0:
            continue
        _head_parts(b, heads, grand, use_grand, work, tables)
        q = heads[b]
        first, stop = (1, n + 1) if k < whole else (pos[a], pos[a] + span[a])
        for j in range(first, stop):
            y = j if k < whole else pre[j]  # an old ancestor: only a's subtree is new to it
            gain = parts[y] - parts[q]
            if y != q and y != b and gain > best and not is_below(heads, y, b):
                best, best_b, best_y = gain, b, y
    for h, near, far in ((a, -1, -1), (p, s, t), (x, u, v)):
        if h == a and not use_grand:
            continue
        first, stop, step = _changed_span(h, a, near, far, n)
        for b in range(first, stop, step):
            q = heads[b]
            if b == a or q == 0 or q == h:
                continue
            gain = _part(b, h, heads, grand, use_grand, work, tables) - cur[b]
            if gain > best and not _listed(rows, whole, b) and not is_below(heads, h, b):
                best, best_b, best_y = gain, b, h
    return best, best_b, best_y


@njit(cache=True, **_NO_REFCOUNT)
def _changed_span(h, a, near, far, n):
    """``(first, stop, step)``: the words whose part under ``h`` changed when ``a`` joined or
    left ``h``'s children, ``near`` and ``far`` its chain neighbours there (``_relink``); every
    word for ``h == a`` (``near == -1``)."""
    if near < 0:
        return 1, n + 1, 1
    step = 1 if a > h else -1
    first = h + step if near == h else near
    stop = (n + 1 if step > 0 else 0) if far < 0 else far + step
    return first, stop, step


@njit(cache=True, **_NO_REFCOUNT)
def _listed(rows, count, b):
    """Whether ``b`` is one of ``rows[:count]``."""
    for k in range(count):
        if rows[k] == b:
            return True
    return False


@njit(cache=True, **_NO_REFCOUNT)
def _push(rows, count, b):
    """Append the word ``b`` (not the root, not one already there) to ``rows[:count]``."""
    if b <= 0 or _listed(rows, count, b):
        return count
    rows[count] = b
    return count + 1


@njit(cache=True, **_NO_REFCOUNT)
def _part(m, h, heads, grand, use_grand, work, tables):
    """``attach_part(h, m, ...)`` on the current tree, from the tables (``_head_parts``' entry)."""
    if use_grand:
        _fresh_below(m, heads, grand, work, tables)
        return tables[0, m, h] + tables[1, m, h]
    return tables[0, m, h]


@njit(cache=True, **_NO_REFCOUNT)
def _head_parts(m, heads, grand, use_grand, work, tables):
    """``parts[h] = attach_part(h, m, ...)`` for every word ``h``, into ``parts = tables[2, 0]``
    (two table rows)."""
    size = heads.shape[0]
    up, parts = tables[0, m], tables[2, 0]
    if use_grand:
        _fresh_below(m, heads, grand, work, tables)
        down = tables[1, m]
        for h in range(1, size):
            parts[h] = up[h] + down[h]
    else:
        for h in range(1, size):
            parts[h] = up[h]


@njit(cache=True, **_NO_REFCOUNT)
def _fill_tables(heads, arc, sib, grand, use_sib, use_grand, work, tables):
    """Tables of the parts of every word ``m`` under every word ``h`` on the tree ``heads``:
    ``attach[m, h]``: the factors on ``h``'s side (``arc[h, m]``, ``m``'s links in ``h``'s
    sibling chain, ``grand[heads[h], h, m]``); ``below[m, h]``: ``grand[h, m, c]`` summed over
    ``m``'s children ``c``. ``attach_part(h, m) == attach[m, h] + below[m, h]``. Column ``h`` of
    ``attach`` depends only on ``h``'s children and head, row ``m`` of ``below`` only on ``m``'s
    children, so a move refreshes a few columns and marks two rows stale (``_after_move``).
    ``links[m, h]`` keeps the sibling-chain term of ``attach[m, h]`` (``_link_span``), so a
    column whose head changed is rebuilt without walking the chain (``_refresh_column``). Rows
    of ``below`` are computed when the search reads them (``_fresh_below``), not here or after
    moves: a word often gains or loses children several times before its row is read."""
    size = heads.shape[0]
    attach, links = tables[0], tables[3]
    for h in range(1, size):
        links[h, h] = 0.0
        _link_span(h, 1, h + 1, size, heads, arc, sib, grand, use_sib, use_grand, attach, links)
        _link_span(h, -1, h - 1, 0, heads, arc, sib, grand, use_sib, use_grand, attach, links)
        attach[h, h] = _attach_entry(h, h, heads[h], 0.0, arc, sib, grand, use_sib, use_grand)
    if use_grand:
        for m in range(1, size):
            work[2, m] = 1


@njit(cache=True, **_NO_REFCOUNT)
def _after_move(m, old, new, heads, arc, sib, grand, use_sib, use_grand, work, tables):
    """Bring the tables up to date after ``m`` moved from ``old`` to ``new`` (``heads`` already
    holds the move; a lift calls this once per moved word, on the heads after both moves). The
    columns of ``old`` and ``new`` change only where the sibling links near ``m`` change
    (``_relink``); with grandparent factors, every entry of ``m``'s own column changes."""
    attach, links = tables[0], tables[3]
    if use_sib:
        for h in (old, new):
            if h != 0:
                _relink(h, m, heads, arc, sib, grand, use_sib, use_grand, attach, links)
    if use_grand:
        _refresh_column(m, heads, arc, sib, grand, use_sib, use_grand, attach, links)
        for h in (old, new):
            work[2, h] = 1


@njit(cache=True, **_NO_REFCOUNT)
def _refresh_column(h, heads, arc, sib, grand, use_sib, use_grand, attach, links):
    """``attach[m, h]`` for every word ``m`` (``h >= 1``) from the sibling links kept in
    ``links[:, h]`` (valid for ``h``'s children as they are)."""
    size = heads.shape[0]
    g = heads[h]
    for m in range(1, size):
        attach[m, h] = _attach_entry(h, m, g, links[m, h], arc, sib, grand, use_sib, use_grand)


@njit(cache=True, **_NO_REFCOUNT)
def _attach_entry(h, m, g, link, arc, sib, grand, use_sib, use_grand):
    """``attach[m, h]`` for ``h``'s head ``g`` and ``m``'s sibling-chain term ``link``, summed in
    one fixed order (the tables must not depend on which refresh wrote them)."""
    value = arc[h, m]
    if use_grand:
        value += grand[g, h, m]
    if use_sib:
        value += sib[h, h, m]
        value += link
    return value


@njit(cache=True, **_NO_REFCOUNT)
def _relink(h, m, heads, arc, sib, grand, use_sib, use_grand, attach, links):
    """Refresh column ``h`` after ``m`` joined or left ``h``'s children: only the words whose
    chain neighbours changed, those from ``m``'s nearer chain neighbour to its farther one (both
    included; ``chain_neighbours`` without ``m``) on ``m``'s side of ``h``."""
    step = 1 if m > h else -1
    end = heads.shape[0] if step > 0 else 0
    s = _next_child(heads, h, m - step, h, -step)
    t = _next_child(heads, h, m + step, end, step)
    start = h + step if s < 0 else s
    stop = end if t < 0 else t + step
    _link_span(h, step, start, stop, heads, arc, sib, grand, use_sib, use_grand, attach, links)


@njit(cache=True, **_NO_REFCOUNT)
def _link_span(h, step, start, stop, heads, arc, sib, grand, use_sib, use_grand, attach, links):
    """``links[m, h]`` and ``attach[m, h]`` for the words ``m`` from ``start`` to ``stop``
    (excluded) on one side of ``h`` (``step`` +1 right, -1 left): ``m`` between its chain
    neighbours ``s`` and ``t`` (``chain_neighbours``) links by ``sib[h, s, m] - sib[h, h, m]``
    and ``sib[h, m, t] - sib[h, s, t]``."""
    end = heads.shape[0] if step > 0 else 0
    g = heads[h]
    s = h
    t = -1
    if use_sib:
        s = _next_child(heads, h, start - step, h, -step)
        if s < 0:
            s = h
        t = _next_child(heads, h, start, end, step)
    for m in range(start, stop, step):
        link = 0.0
        if use_sib:
            if m == t:  # a modifier of h: its neighbours once it leaves are s and the next one
                t = _next_child(heads, h, m + step, end, step)
            if s != h:
                link += sib[h, s, m] - sib[h, h, m]
            if t >= 0:
                link += sib[h, m, t] - sib[h, s, t]
            if heads[m] == h:
                s = m
        links[m, h] = link
        attach[m, h] = _attach_entry(h, m, g, link, arc, sib, grand, use_sib, use_grand)


@njit(cache=True, **_NO_REFCOUNT)
def _next_child(heads, h, start, end, step):
    for k in range(start, end, step):
        if heads[k] == h:
            return k
    return -1


@njit(cache=True, **_NO_REFCOUNT)
def _fresh_below(m, heads, grand, work, tables):
    """Make row ``m`` of ``below`` (``tables[1]``) hold its values for the tree ``heads``:
    recompute it if it is marked stale in ``work[2]``."""
    if work[2, m]:
        _refresh_below(m, heads, grand, work[6], tables[1])
        work[2, m] = 0


@njit(cache=True, **_NO_REFCOUNT)
def _refresh_below(m, heads, grand, kids, below):
    """``below[m, h] = sum(grand[h, m, c] for c in children of m)`` (``kids``: scratch)."""
    size = below.shape[0]
    n_kids = 0
    for c in range(1, size):
        if heads[c] == m:
            kids[n_kids] = c
            n_kids += 1
    for h in range(1, size):
        total = 0.0
        for i in range(n_kids):
            total += grand[h, m, kids[i]]
        below[m, h] = total


@njit(cache=True, **_NO_REFCOUNT)
def attach_part(h, m, s, t, heads, arc, sib, grand, use_sib, use_grand, kids, n_kids, skip):
    """The factors that depend on ``m`` hanging from ``h`` (``kids[:n_kids]`` its children, less
    ``skip``; ``s``, ``t`` its neighbours in ``h``'s sibling chain, see ``chain_neighbours``): the
    arc, ``m``'s links in ``h``'s chain, and the grand factors through ``m``. A head change's gain
    is the difference of two such parts."""
    part = arc[h, m]
    if use_sib:
        part += sib[h, s, m]
        if t >= 0:
            part += sib[h, m, t] - sib[h, s, t]
    if use_grand:
        if h != 0:
            part += grand[heads[h], h, m]
        for i in range(n_kids):
            if kids[i] != skip:
                part += grand[h, m, kids[i]]
    return part


@njit(cache=True, **_NO_REFCOUNT)
def chain_neighbours(heads, h, m):
    """``m``'s neighbours in ``h``'s sibling chain on ``m``'s side if ``m`` hung from ``h``: the
    closest modifier of ``h`` between ``h`` and ``m`` (``h`` if none) and the closest one beyond
    ``m`` (-1 if none). ``m`` itself is never counted."""
    step = 1 if m > h else -1
    s = _next_child(heads, h, m - step, h, -step)
    t = _next_child(heads, h, m + step, heads.shape[0] if m > h else 0, step)
    return (h if s < 0 else s), t


@njit(cache=True, **_NO_REFCOUNT)
def _listed_neighbours(grouped, offsets, h, m, extra):
    """``chain_neighbours`` from ``h``'s children in index order (``_index_tree``), plus the word
    ``extra`` counted as one more child of ``h`` when ``extra >= 0``."""
    s, t = h, -1
    for i in range(offsets[h], offsets[h + 1] + 1):
        c = grouped[i] if i < offsets[h + 1] else extra
        if c < 0 or c == m:
            continue
        if m > h:
            if h < c < m and (s == h or c > s):
                s = c
            elif c > m and (t < 0 or c < t):
                t = c
        else:
            if m < c < h and (s == h or c < s):
                s = c
            elif c < m and c > t:
                t = c
    return s, t


@njit(cache=True, **_NO_REFCOUNT)
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


@njit(cache=True, **_NO_REFCOUNT)
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
