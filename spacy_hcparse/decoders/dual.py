"""Dual decomposition for non-projective parsing with head automata (Koo et al., EMNLP 2010).

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` scores head ``h`` ->
modifier ``m`` (``-inf``: an absent arc, see ``absent.py``); ``sib[h, s, m]`` scores ``m`` as the
next modifier of ``h`` after ``s`` on the same side, nearest first, ``s == h`` for the closest (no
stop factor; the root only has right modifiers); ``grand[g, h, m]`` scores the arcs ``g -> h`` and
``h -> m`` together; ``heads[0] == -1`` and exactly one word is attached to the root.

Decomposition. The objective is split between a maximum spanning tree over the arcs and one head
automaton per head (``head_automata.py``). A share ``tree_share`` of each arc score goes to the tree;
the rest goes to the automaton of the arc's head (``h -> m`` as an outgoing arc) or, with
grandparent factors, half to it and half to the automaton of the modifier, which then also chooses
its own head (grand-sibling automata). Lagrange multipliers ``lam[h, m]`` (outgoing copies) and
``mu[g, h]`` (incoming copies) tie every copy to the tree; subgradient steps drive them to
agreement. When all copies agree, or the dual value (an upper bound) meets the best tree's score,
the tree is optimal (``certified``). Otherwise the best tree seen is returned (every iteration's
spanning tree, the automata's choices repaired into a tree, and ``init`` when given).

Candidate arcs. Every subproblem sees only the arcs a tree may use: the allowed arcs of
``absent.py``, less the arcs that provably belong to no optimal tree given the score of the
starting tree (``dominance.py``; this also catches a caller's finite stand-in for pruned arcs).
The automata iterate over candidate heads and modifiers only.

Steps. By default Polyak's rule ``alpha = theta (dual - target) / |g|^2`` with ``target`` the best
tree score known (the caller's ``init`` or the best tree found so far), ``theta = 1.7`` halved after
``20`` iterations that did not lower the bound (Held & Karp's safeguard); a given ``step = c``
selects Koo et al.'s ``c / (t + 1)`` instead (``t``: the number of iterations in which the dual
value went up). Multipliers start at a per-column shift that makes the automata take the arcs of
the first-order optimum (or of ``init``), see ``DualEngine.shift_towards``.

Finishing. Where the subgradient iterations end without a certificate (the relaxation is not
tight, or the steps stall just above the optimum), ``max_nodes > 0`` goes on with branch and bound
(``branch_bound.py``) from the dual's multipliers, within the same time limit: it proves the best
tree optimal, finds a better one, or reports the best open bound.
"""
from typing import NamedTuple, Optional

import numpy as np

from ..compiling import clock, njit
from ._checks import check_counts, check_heads, check_inputs, zero_unused
from .absent import Allowed, true_score, uses_absent, with_floor
from .branch_bound import MAX_DEPTH, NODE_ITER, NODE_STALL, branch_and_bound
from .dominance import fixed_tree, prune_dominated
from .head_automata import build_graph, solve_root, solve_word
from .mst import mst_kernel
from .sampling import NO_REFCOUNT
from .scoring import full_score

# Slots of the kernel's float64 ``stats`` array.
_T, _PREV, _DUAL, _PRIMAL, _ITERS, _DONE, _FLOOR, _THETA, _STALL, _AGREE = range(10)
# Score of an excluded arc in the spanning-tree subproblem: never chosen while a tree over
# candidate arcs exists, whatever the multipliers.
TREE_EXCLUDED = -1e30
THETA = 1.7
PATIENCE = 20


class DualResult(NamedTuple):
    """Output of ``decode_dual``.

    ``heads``: int64 (n+1,) tree; ``score``: its total score under arc + sib + grand (``-inf`` if
    it uses an absent arc); ``upper_bound``: the lowest bound found (>= the optimal score);
    ``certified``: ``heads`` is proven optimal (subproblems agreed, or the bound met the score);
    ``iterations``: subgradient iterations run (branch and bound's included); ``time_capped``:
    stopped by ``time_limit``; ``nodes``: branch and bound subproblems solved; ``method``: what
    proved it (``"exact"``: no search needed, ``"dual"``, ``"branch_and_bound"``; ``""`` when
    unproven).
    """

    heads: np.ndarray
    score: float
    upper_bound: float
    certified: bool
    iterations: int
    time_capped: bool
    nodes: int = 0
    method: str = ""


def decode_dual(
    arc,
    sib: Optional[np.ndarray] = None,
    grand: Optional[np.ndarray] = None,
    *,
    max_iter: int = 500,
    step: Optional[float] = None,
    time_limit: Optional[float] = None,
    tree_share: float = 0.5,
    repair: bool = True,
    init=None,
    max_nodes: int = 0,
    max_depth: int = MAX_DEPTH,
    node_iter: int = NODE_ITER,
) -> DualResult:
    """Best non-projective tree under arc + sibling + grandparent scores by dual decomposition.

    ``arc[h, m]`` (n+1, n+1), ``-inf`` for absent arcs; ``sib[h, s, m]`` and ``grand[g, h, m]``
    (n+1,)*3 or ``None``; index 0 is the root (see the module docstring). ``max_iter`` bounds the
    subgradient iterations; ``step``: ``None`` for Polyak steps towards the best tree score known,
    or ``c`` for steps ``c / (t + 1)``; ``time_limit`` (seconds) stops early with
    ``time_capped=True`` (after at least one iteration); ``tree_share`` in [0, 1] is the part of
    each arc score given to the spanning tree; ``repair`` also scores the automata's choices
    repaired into a tree at every iteration; ``init`` (a heads array, e.g. hill climbing's tree)
    is a tree to certify: it counts as a primal solution, is the steps' first target and shapes
    the starting multipliers; ``max_nodes``, ``max_depth``, ``node_iter``: branch and bound's caps
    (subproblems, branchings on a path, iterations per subproblem) after iterations that end
    uncertified (``max_nodes`` 0: no branch and bound; see the module docstring). Raises
    ``ValueError`` on malformed scores or parameters.
    """
    arc, sib, grand = check_inputs(arc, sib, grand)
    _check_params(max_iter, step, time_limit, tree_share)
    check_counts(max_nodes=(max_nodes, 0), max_depth=(max_depth, 0), node_iter=(node_iter, 1))
    size = arc.shape[0]
    if init is not None:
        init = check_heads(init, size)
    deadline = None if time_limit is None else clock() + time_limit
    return dual_search(with_floor(zero_unused(arc), sib, grand), sib, grand, max_iter=max_iter,
                       deadline=deadline, tree_share=tree_share, step=step, repair=repair,
                       init=init, max_nodes=max_nodes, max_depth=max_depth, node_iter=node_iter)


def dual_search(allowed: Allowed, sib, grand, *, max_iter: int, deadline: Optional[float] = None,
                tree_share: float = 0.5, step: Optional[float] = None, repair: bool = True,
                init: Optional[np.ndarray] = None, init_score: Optional[float] = None,
                cand: Optional[np.ndarray] = None, max_nodes: int = 0,
                max_depth: int = MAX_DEPTH, node_iter: int = NODE_ITER) -> DualResult:
    """``decode_dual`` on checked inputs (``allowed`` from ``absent.with_floor``), and the last
    steps of ``certified.decode_certified``: the subgradient iterations, then branch and bound
    while uncertified and not stopped by ``deadline`` (a ``compiling.clock()`` value).
    ``init_score``: ``init``'s score where the caller has it; ``cand``: the candidate arcs where
    the caller pruned them already (``DualEngine.build``)."""
    engine = DualEngine.build(allowed, sib, grand, tree_share=tree_share, step=step, init=init,
                              init_score=init_score, cand=cand)
    if engine is None:
        return exact_without_search(allowed, sib, grand)
    capped = engine.run(max_iter, deadline, repair)
    if capped or engine.certified or max_nodes == 0:
        return engine.result(capped)
    found = branch_and_bound(engine, engine.best_heads, engine.score, max_nodes=max_nodes,
                             max_depth=max_depth, node_iter=node_iter, deadline=deadline,
                             stall=NODE_STALL)
    return DualResult(found.heads.copy(), found.score, found.upper_bound, found.proven,
                      engine.iterations + found.iterations, found.time_capped, found.nodes,
                      "branch_and_bound" if found.proven else "")


def exact_without_search(allowed: Allowed, sib, grand) -> DualResult:
    """n <= 1, arc scores only, or no tree over allowed arcs: the spanning tree is the answer
    (in the last case every tree scores ``-inf``, so any tree is optimal)."""
    arc = allowed.arc
    size = arc.shape[0]
    if size == 1:
        heads = np.array([-1], dtype=np.int64)
    elif size == 2:
        heads = np.array([-1, 0], dtype=np.int64)
    else:
        heads = mst_kernel(arc)
    score = float(full_score(heads, arc, _cube(sib), _cube(grand), sib is not None,
                             grand is not None))
    score = true_score(heads, allowed.mask, score)
    return DualResult(heads, score, score, True, 0, False, 0, "exact")


class DualEngine:
    """One dual decomposition problem and its state (multipliers, best tree, bound), so that runs
    can be split into time-checked chunks and branch and bound can start children from it.

    ``cand``: the arcs the subproblems may use; ``c``: the step constant of the ``c / (t + 1)``
    rule (``polyak`` False) and the scale of the starting shift."""

    def __init__(self, arc, sib, grand, cand, tree_share, c, polyak=True, graph=None):
        size = arc.shape[0]
        self.arc, self.sib, self.grand = arc, _cube(sib), _cube(grand)
        self.use_sib, self.use_grand = sib is not None, grand is not None
        self.cand = cand
        self.tree_share = float(tree_share)
        self.c = float(c)
        self.polyak = bool(polyak)
        self.graph = build_graph(cand, self.sib, self.use_sib) if graph is None else graph
        edges = self.graph[1].shape[0]
        self.lam = np.zeros((size, size))
        self.mu = np.zeros((size, size))
        self.chosen = np.zeros(edges, dtype=np.int8)
        self.head_of = np.full(size, -1, dtype=np.int64)
        self.values = np.zeros(size)
        self.dirty = np.ones(size, dtype=np.bool_)
        self.best_heads = np.full(size, -1, dtype=np.int64)
        self.tree = np.full(size, -1, dtype=np.int64)  # the last iteration's spanning tree
        self.stats = np.array([0.0, np.inf, np.inf, -np.inf, 0.0, 0.0, -np.inf, THETA, 0.0, 0.0])

    @classmethod
    def build(cls, allowed: Allowed, sib, grand, *, tree_share=0.5, step=None, init=None,
              init_score=None, cand=None) -> Optional["DualEngine"]:
        """The engine for a checked problem, or None when no search is needed (see
        ``exact_without_search``). ``init``: a tree to certify (``init_score``: its score, if
        the caller has it), else the first-order optimum shapes the starting multipliers;
        ``cand``: the candidate arcs if the caller pruned them already (``dominance.py``)."""
        size = allowed.arc.shape[0]
        if size <= 2 or (sib is None and grand is None) or not allowed.feasible:
            return None
        arc = allowed.arc
        s3, g3 = _cube(sib), _cube(grand)
        use_sib, use_grand = sib is not None, grand is not None
        if init is not None and uses_absent(init, allowed.mask):
            init = None
        if init is None:
            start = mst_kernel(np.where(allowed.mask, arc, TREE_EXCLUDED))
        else:
            start = init
        score = init_score if init is not None and init_score is not None else float(
            full_score(start, arc, s3, g3, use_sib, use_grand))
        if cand is None:
            cand = prune_dominated(arc, allowed.mask, s3, g3, use_sib, use_grand, score)
        c = _spread(arc, cand) if step is None else float(step)
        engine = cls(arc, sib, grand, cand, tree_share, c, polyak=step is None)
        engine.shift_towards(start)
        engine.set_incumbent(start, score)
        if fixed_tree(cand).shape[0]:  # one candidate head per word: ``start`` is the optimum
            engine.stats[_DUAL] = score
            engine.stats[_AGREE] = engine.stats[_DONE] = 1.0
        return engine

    def shift_towards(self, heads: np.ndarray) -> None:
        """Start the multipliers at a per-column shift ``lam[., m] = b_m`` that makes the automata
        take the arcs of ``heads`` (``b_m`` halfway between the automata's share of
        ``heads[m] -> m`` and of the next lower candidate). A constant per column leaves the
        spanning tree's choice unchanged, so this only moves the automata towards the tree."""
        out_share = (1.0 - self.tree_share) * (0.5 if self.use_grand else 1.0)
        _shift_columns(self.arc, self.graph[3], self.graph[4], heads, out_share, self.c, self.lam)
        self.dirty[:] = True

    def set_incumbent(self, heads: np.ndarray, score: float) -> None:
        """A tree over candidate arcs: returned unless a better one is found."""
        if score > self.stats[_PRIMAL]:
            self.best_heads[:] = heads
            self.stats[_PRIMAL] = score

    def set_floor(self, score: float) -> None:
        """The score of a tree known elsewhere (branch and bound's incumbent, maybe not a tree of
        this subproblem): the run stops once the bound falls to it, and Polyak's steps aim at it."""
        self.stats[_FLOOR] = max(self.stats[_FLOOR], score)

    def run(self, max_iter: int, deadline: Optional[float] = None, repair: bool = True,
            stall: int = 0) -> bool:
        """Iterate until done (certified, or bounded by the floor), ``max_iter`` iterations in
        all, ``deadline`` (a ``compiling.clock()`` value), or (``stall`` > 0, below the
        halving patience of 20) ``stall`` iterations in a row without a lower bound; return
        whether the deadline stopped it."""
        stats = self.stats
        chunk = max_iter if deadline is None else 1
        while stats[_ITERS] < max_iter and stats[_DONE] == 0.0:
            # at least one iteration always runs: before it there is no tree to return
            if deadline is not None and stats[_ITERS] > 0 and clock() >= deadline:
                return True
            todo = int(min(chunk, max_iter - stats[_ITERS]))
            started = clock()
            _run(self.arc, self.sib, self.grand, self.use_sib, self.use_grand, self.tree_share,
                 self.c, self.polyak, todo, bool(repair), int(stall), self.cand, *self.graph,
                 self.lam,
                 self.mu, self.chosen, self.head_of, self.values, self.dirty, self.best_heads,
                 self.tree, stats)
            if stall and stats[_STALL] >= stall:
                return False
            if deadline is not None:  # next chunk: about a tenth of the time left
                per_iter = (clock() - started) / todo
                chunk = max(1, int(0.1 * (deadline - clock()) / max(per_iter, 1e-9)))
        return False

    @property
    def certified(self) -> bool:
        """The best tree is proven optimal for this subproblem."""
        return bool(self.stats[_AGREE]) or self.stats[_PRIMAL] >= self.stats[_DUAL] - _tol(
            self.stats[_DUAL])

    @property
    def done(self) -> bool:
        """Certified, or the bound fell to the floor (nothing better than it in here)."""
        return bool(self.stats[_DONE])

    @property
    def bound(self) -> float:
        """The best upper bound on this subproblem's optimum (never below the best tree's
        score; ``inf`` before the first iteration)."""
        return max(float(self.stats[_DUAL]), float(self.stats[_PRIMAL]))

    @property
    def score(self) -> float:
        return float(self.stats[_PRIMAL])

    @property
    def iterations(self) -> int:
        return int(self.stats[_ITERS])

    def result(self, capped: bool) -> DualResult:
        certified = self.certified
        return DualResult(self.best_heads.copy(), self.score, self.bound, certified,
                          self.iterations, capped, 0, "dual" if certified else "")

    def child(self, cand: np.ndarray) -> "DualEngine":
        """A subproblem restricted to the candidate arcs ``cand`` (a subset of this one's),
        starting from this engine's multipliers and step state."""
        kid = DualEngine(self.arc, self.sib if self.use_sib else None,
                         self.grand if self.use_grand else None, cand, self.tree_share, self.c,
                         self.polyak)
        kid.lam[:] = np.where(cand, self.lam, 0.0)
        kid.mu[:] = np.where(cand, self.mu, 0.0)
        kid.stats[_T] = self.stats[_T]
        kid.stats[_FLOOR] = self.stats[_FLOOR]
        return kid

    def disagreement(self) -> np.ndarray:
        """Per word, how many copies of its head (automata, the head choice of its own automaton)
        disagree with the last iteration's spanning tree (int64 (n+1,))."""
        return _disagreement(self.tree, *self.graph[:2], self.chosen, self.head_of, self.use_grand)


def _tol(value: float) -> float:
    return 1e-9 * (1.0 + abs(value))


def _check_params(max_iter, step, time_limit, tree_share) -> None:
    check_counts(max_iter=(max_iter, 1))
    if step is not None and not (_is_real(step) and np.isfinite(step) and step > 0):
        raise ValueError(f"step must be a positive finite number, got {step!r}")
    if time_limit is not None and not (_is_real(time_limit) and time_limit > 0):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if not (_is_real(tree_share) and 0.0 <= tree_share <= 1.0):
        raise ValueError(f"tree_share must be a number in [0, 1], got {tree_share!r}")


def _is_real(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _cube(scores: Optional[np.ndarray]) -> np.ndarray:
    return np.zeros((1, 1, 1)) if scores is None else scores


# ----------------------------------------------------------------------------- kernels


@njit(cache=True)
def _spread(arc, cand):
    """0.3 x the standard deviation of the candidate arcs' scores (1.0 if they are constant)."""
    size = arc.shape[0]
    total, total_sq, count = 0.0, 0.0, 0
    for h in range(size):
        for m in range(1, size):
            if cand[h, m]:
                total += arc[h, m]
                count += 1
    mean = total / max(count, 1)
    for h in range(size):
        for m in range(1, size):
            if cand[h, m]:
                total_sq += (arc[h, m] - mean) ** 2
    spread = np.sqrt(total_sq / max(count, 1))
    return 0.3 * (spread if spread > 0.0 else 1.0)


@njit(cache=True)
def _shift_columns(arc, in_ptr, in_idx, heads, share, c, lam):
    """See ``DualEngine.shift_towards``."""
    for m in range(1, heads.shape[0]):
        a = share * arc[heads[m], m]
        lower = a - 2.0 * c
        for j in range(in_ptr[m], in_ptr[m + 1]):
            h = in_idx[j]
            v = share * arc[h, m]
            if h != heads[m] and lower < v < a:
                lower = v
        b = 0.5 * (a + lower)
        for j in range(in_ptr[m], in_ptr[m + 1]):
            lam[in_idx[j], m] = b


@njit(cache=True)
def _run(arc, sib, grand, use_sib, use_grand, tree_share, c, polyak, n_iter, repair, stall, cand,
         out_ptr, out_idx, out_split, in_ptr, in_idx, eid, sib_first, sib_ptr, sib_block,
         lam, mu, chosen, head_of, values, dirty, best_heads, last_tree, stats):
    """Run up to ``n_iter`` subgradient iterations, updating the state arrays in place."""
    size = arc.shape[0]
    out_share = (1.0 - tree_share) * (0.5 if use_grand else 1.0)
    in_share = (1.0 - tree_share) * 0.5
    most = 1
    for h in range(size):
        most = max(most, out_ptr[h + 1] - out_ptr[h], in_ptr[h + 1] - in_ptr[h])
    out_w = np.empty(most)
    in_w = np.zeros(most)
    work = np.empty(most)
    table = np.empty(most)
    back = np.empty(most, dtype=np.int64)
    tree_w = np.full((size, size), TREE_EXCLUDED)
    for _ in range(n_iter):
        _solve_automata(arc, sib, grand, use_sib, use_grand, out_share, in_share, out_ptr,
                        out_idx, out_split, in_ptr, in_idx, sib_first, sib_ptr, sib_block, lam, mu,
                        chosen, head_of, values, dirty, out_w, in_w, work, table, back)
        for h in range(size):
            for e in range(out_ptr[h], out_ptr[h + 1]):
                m = out_idx[e]
                tree_w[h, m] = tree_share * arc[h, m] + lam[h, m] + mu[h, m]
        tree = mst_kernel(tree_w)
        for j in range(last_tree.shape[0]):  # element by element: no shape-error formatting to compile
            last_tree[j] = tree[j]
        dual = values.sum()
        for m in range(1, size):
            dual += tree_w[tree[m], m]
        stats[_ITERS] += 1.0
        if dual > stats[_PREV]:
            stats[_T] += 1.0
        stats[_PREV] = dual
        if dual < stats[_DUAL]:
            stats[_DUAL] = dual
            stats[_STALL] = 0.0
        else:
            stats[_STALL] += 1.0
            if stall and stats[_STALL] >= stall:
                return
            if stats[_STALL] >= PATIENCE:
                stats[_THETA] *= 0.5
                stats[_STALL] = 0.0
        _keep_better(tree, arc, sib, grand, use_sib, use_grand, cand, best_heads, stats)
        if repair:
            fixed = _repaired_tree(arc, out_ptr, out_idx, chosen, head_of, use_grand)
            _keep_better(fixed, arc, sib, grand, use_sib, use_grand, cand, best_heads, stats)
        norm = _subgradient_norm(tree, out_ptr, out_idx, chosen, head_of, use_grand)
        if norm == 0.0:  # every copy agrees: the tree is optimal
            for j in range(best_heads.shape[0]):
                best_heads[j] = tree[j]
            stats[_PRIMAL] = full_score(tree, arc, sib, grand, use_sib, use_grand)
            stats[_AGREE] = 1.0
            stats[_DONE] = 1.0
            return
        target = max(stats[_PRIMAL], stats[_FLOOR])
        if target >= stats[_DUAL] - 1e-9 * (1.0 + abs(stats[_DUAL])):
            stats[_DONE] = 1.0
            return
        if polyak:
            alpha = stats[_THETA] * (dual - target) / norm
        else:
            alpha = c / (stats[_T] + 1.0)
        _subgradient_step(tree, out_ptr, out_idx, chosen, head_of, use_grand, alpha, lam, mu,
                          dirty)


@njit(cache=True, **NO_REFCOUNT)
def _solve_automata(arc, sib, grand, use_sib, use_grand, out_share, in_share, out_ptr, out_idx,
                    out_split, in_ptr, in_idx, sib_first, sib_ptr, sib_block, lam, mu, chosen,
                    head_of, values, dirty, out_w, in_w, work, table, back):
    """Re-solve the automata whose multipliers changed (``dirty``)."""
    for h in range(arc.shape[0]):
        if not dirty[h]:
            continue
        lo, hi = out_ptr[h], out_ptr[h + 1]
        k = hi - lo
        mods = out_idx[lo:hi]
        for i in range(k):
            out_w[i] = out_share * arc[h, mods[i]] - lam[h, mods[i]]
        if h == 0:
            values[0] = solve_root(out_w[:k], sib_first[lo:hi], use_sib, chosen[lo:hi])
        else:
            heads = in_idx[in_ptr[h]:in_ptr[h + 1]]
            if use_grand:
                for j in range(heads.shape[0]):
                    in_w[j] = in_share * arc[heads[j], h] - mu[heads[j], h]
            if use_sib:
                block = sib_block[sib_ptr[h]:sib_ptr[h + 1]].reshape((k, k))
            else:
                block = sib_block[0:0].reshape((0, 0))
            values[h], head_of[h] = solve_word(
                h, mods, out_split[h] - lo, heads, out_w[:k], in_w, sib_first[lo:hi], block,
                grand, use_sib, use_grand, chosen[lo:hi], work, table, back)
        dirty[h] = False


@njit(cache=True)
def _keep_better(heads, arc, sib, grand, use_sib, use_grand, cand, best_heads, stats):
    for m in range(1, heads.shape[0]):
        if not cand[heads[m], m]:
            return
    score = full_score(heads, arc, sib, grand, use_sib, use_grand)
    if score > stats[_PRIMAL]:
        stats[_PRIMAL] = score
        for j in range(best_heads.shape[0]):
            best_heads[j] = heads[j]


@njit(cache=True)
def _repaired_tree(arc, out_ptr, out_idx, chosen, head_of, use_grand):
    """The spanning tree agreeing with most automaton choices, arc scores breaking ties."""
    size = arc.shape[0]
    lo, hi = np.inf, -np.inf
    for h in range(size):
        for e in range(out_ptr[h], out_ptr[h + 1]):
            lo = min(lo, arc[h, out_idx[e]])
            hi = max(hi, arc[h, out_idx[e]])
    weight = 2.0 * (hi - lo) * size + 1.0
    votes = np.full((size, size), TREE_EXCLUDED)
    for h in range(size):
        for e in range(out_ptr[h], out_ptr[h + 1]):
            m = out_idx[e]
            vote = float(chosen[e])
            if use_grand and head_of[m] == h:
                vote += 1.0
            votes[h, m] = weight * vote + arc[h, m]
    return mst_kernel(votes)


@njit(cache=True)
def _subgradient_norm(tree, out_ptr, out_idx, chosen, head_of, use_grand):
    """Squared norm of the subgradient: the number of disagreeing copies."""
    size = tree.shape[0]
    total = 0.0
    for h in range(size):
        for e in range(out_ptr[h], out_ptr[h + 1]):
            m = out_idx[e]
            in_tree = 1 if tree[m] == h else 0
            if in_tree != chosen[e]:
                total += 1.0
            if use_grand and in_tree != (1 if head_of[m] == h else 0):
                total += 1.0
    return total


@njit(cache=True)
def _subgradient_step(tree, out_ptr, out_idx, chosen, head_of, use_grand, alpha, lam, mu, dirty):
    """Move the multipliers against the disagreements; mark the changed automata."""
    size = tree.shape[0]
    for h in range(size):
        for e in range(out_ptr[h], out_ptr[h + 1]):
            m = out_idx[e]
            in_tree = 1.0 if tree[m] == h else 0.0
            diff = in_tree - chosen[e]
            if diff != 0.0:
                lam[h, m] -= alpha * diff
                dirty[h] = True
            if use_grand:
                diff = in_tree - (1.0 if head_of[m] == h else 0.0)
                if diff != 0.0:
                    mu[h, m] -= alpha * diff
                    dirty[m] = True


@njit(cache=True)
def _disagreement(tree, out_ptr, out_idx, chosen, head_of, use_grand):
    """See ``DualEngine.disagreement``."""
    size = tree.shape[0]
    count = np.zeros(size, dtype=np.int64)
    for h in range(size):
        for e in range(out_ptr[h], out_ptr[h + 1]):
            m = out_idx[e]
            if (tree[m] == h) != (chosen[e] == 1):
                count[m] += 1
    if use_grand:
        for m in range(1, size):
            if head_of[m] != tree[m]:
                count[m] += 1
    return count
