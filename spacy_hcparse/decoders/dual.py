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
``absent.py``, less the arcs that provably belong to no optimal tree (``dominated_arcs``: finite
but hopeless scores, such as a caller's finite stand-in for pruned arcs). The automata iterate over
candidate heads and modifiers only, and the step size is scaled on the candidate arcs' scores.

Step sizes. ``alpha_t = c / (t + 1)`` with ``t`` the number of iterations so far in which the dual
value went up (Koo et al.), ``c = step_scale`` times the standard deviation of the candidate arc
scores (``default_step``). With a known good tree (``init``), the step is Polyak's
``(dual - score(init)) / |g|^2`` whenever that is smaller: the multipliers then head straight for
a bound that certifies ``init``.
"""
import time
from typing import NamedTuple, Optional

import numpy as np
from numba import njit

from ._checks import check_heads, check_inputs
from .absent import Allowed, true_score, uses_absent, with_floor
from .head_automata import build_graph, solve_root, solve_word
from .mst import mst_kernel
from .scoring import full_score

# Slots of the kernel's float64 ``stats`` array.
_T, _PREV, _DUAL, _PRIMAL, _ITERS, _CERT, _TARGET = range(7)
# Score of an excluded arc in the spanning-tree subproblem: never chosen while a tree over
# candidate arcs exists, whatever the multipliers.
TREE_EXCLUDED = -1e30
DEFAULT_STEP_SCALE = 0.3


class DualResult(NamedTuple):
    """Output of ``decode_dual``.

    ``heads``: int64 (n+1,) tree; ``score``: its total score under arc + sib + grand (``-inf`` if
    it uses an absent arc); ``upper_bound``: the lowest dual value seen (>= the optimal score);
    ``certified``: ``heads`` is proven optimal (subproblems agreed, or the bound met the score);
    ``iterations``: subgradient iterations run; ``time_capped``: stopped by ``time_limit``.
    """

    heads: np.ndarray
    score: float
    upper_bound: float
    certified: bool
    iterations: int
    time_capped: bool


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
    step_scale: float = DEFAULT_STEP_SCALE,
) -> DualResult:
    """Best non-projective tree under arc + sibling + grandparent scores by dual decomposition.

    ``arc[h, m]`` (n+1, n+1), ``-inf`` for absent arcs; ``sib[h, s, m]`` and ``grand[g, h, m]``
    (n+1,)*3 or ``None``; index 0 is the root (see the module docstring). ``max_iter`` bounds the
    subgradient iterations; ``step`` is the initial step size ``c`` (default: ``step_scale`` times
    the spread of the candidate arc scores, see ``default_step``); ``time_limit`` (seconds) stops
    early with ``time_capped=True`` (after at least one iteration); ``tree_share`` in [0, 1] is the
    part of each arc score given to the spanning tree; ``repair`` also scores the automata's
    choices repaired into a tree at every iteration; ``init`` (a heads array, e.g. hill
    climbing's tree) is a tree to certify: it counts as a primal solution and steers the steps.
    Raises ``ValueError`` on malformed scores or parameters.
    """
    arc, sib, grand = check_inputs(arc, sib, grand)
    _check_params(max_iter, step, time_limit, tree_share, step_scale)
    size = arc.shape[0]
    if init is not None:
        init = check_heads(init, size)
    allowed = with_floor(_clean(arc), sib, grand)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    engine = DualEngine.build(allowed, sib, grand, tree_share, step, step_scale, init)
    if engine is None:
        return exact_without_search(allowed, sib, grand)
    capped = engine.run(max_iter, deadline, repair)
    return engine.result(capped)


def exact_without_search(allowed: Allowed, sib, grand) -> DualResult:
    """n <= 1, arc scores only, or no tree over allowed arcs: the spanning tree is the answer
    (in the last case every tree scores ``-inf``, so it is optimal too)."""
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
    if not allowed.feasible:
        return DualResult(heads, -np.inf, -np.inf, True, 0, False)
    return DualResult(heads, score, score, True, 0, False)


class DualEngine:
    """One dual decomposition problem and its state (multipliers, best tree, bound), so that runs
    can be split into time-checked chunks and branch and bound can start children from it."""

    def __init__(self, arc, sib, grand, cand, tree_share, c):
        size = arc.shape[0]
        self.arc, self.sib, self.grand = arc, _cube(sib), _cube(grand)
        self.use_sib, self.use_grand = sib is not None, grand is not None
        self.cand = cand
        self.tree_share = float(tree_share)
        self.c = float(c)
        self.graph = build_graph(cand, self.sib, self.use_sib)
        edges = self.graph[1].shape[0]
        self.lam = np.zeros((size, size))
        self.mu = np.zeros((size, size))
        self.chosen = np.zeros(edges, dtype=np.int8)
        self.head_of = np.full(size, -1, dtype=np.int64)
        self.values = np.zeros(size)
        self.dirty = np.ones(size, dtype=np.bool_)
        self.best_heads = np.full(size, -1, dtype=np.int64)
        self.tree = np.full(size, -1, dtype=np.int64)  # the last iteration's spanning tree
        self.stats = np.array([0.0, np.inf, np.inf, -np.inf, 0.0, 0.0, -np.inf])

    @classmethod
    def build(cls, allowed: Allowed, sib, grand, tree_share=0.5, step=None,
              step_scale=DEFAULT_STEP_SCALE, init=None) -> Optional["DualEngine"]:
        """The engine for a checked problem, or None when no search is needed (see
        ``exact_without_search``)."""
        size = allowed.arc.shape[0]
        if size <= 2 or (sib is None and grand is None) or not allowed.feasible:
            return None
        arc = allowed.arc
        lower = -np.inf
        if init is not None and not uses_absent(init, allowed.mask):
            lower = float(full_score(init, arc, _cube(sib), _cube(grand), sib is not None,
                                     grand is not None))
        cand = allowed.mask & ~dominated_arcs(arc, allowed.mask, sib, grand, lower)
        c = default_step(arc, cand, step_scale) if step is None else float(step)
        engine = cls(arc, sib, grand, cand, tree_share, c)
        if np.isfinite(lower):
            engine.set_incumbent(init, lower)
        return engine

    def set_incumbent(self, heads: np.ndarray, score: float) -> None:
        """A tree known by the caller: it is returned unless a better one is found, and its score
        is the target of Polyak's steps."""
        if score > self.stats[_PRIMAL]:
            self.best_heads[:] = heads
            self.stats[_PRIMAL] = score
        self.stats[_TARGET] = max(self.stats[_TARGET], score)

    def run(self, max_iter: int, deadline: Optional[float], repair: bool = True) -> bool:
        """Iterate until certified, ``max_iter`` iterations in all, or ``deadline``
        (``time.perf_counter()`` value); return whether the deadline stopped it."""
        stats = self.stats
        chunk = max_iter if deadline is None else 1
        while stats[_ITERS] < max_iter and stats[_CERT] == 0.0:
            # at least one iteration always runs: before it there is no tree to return
            if deadline is not None and stats[_ITERS] > 0 and time.perf_counter() >= deadline:
                return True
            todo = int(min(chunk, max_iter - stats[_ITERS]))
            started = time.perf_counter()
            _run(self.arc, self.sib, self.grand, self.use_sib, self.use_grand, self.tree_share,
                 self.c, todo, bool(repair), self.cand, *self.graph, self.lam, self.mu,
                 self.chosen, self.head_of, self.values, self.dirty, self.best_heads, self.tree,
                 stats)
            if deadline is not None:  # next chunk: about a tenth of the time left
                per_iter = (time.perf_counter() - started) / todo
                chunk = max(1, int(0.1 * (deadline - time.perf_counter()) / max(per_iter, 1e-9)))
        return False

    @property
    def certified(self) -> bool:
        return bool(self.stats[_CERT])

    @property
    def bound(self) -> float:
        """The best upper bound on this problem's optimum (never below the best tree's score)."""
        return max(float(self.stats[_DUAL]), float(self.stats[_PRIMAL]))

    @property
    def score(self) -> float:
        return float(self.stats[_PRIMAL])

    @property
    def iterations(self) -> int:
        return int(self.stats[_ITERS])

    def result(self, capped: bool) -> DualResult:
        return DualResult(self.best_heads.copy(), self.score, self.bound, self.certified,
                          self.iterations, capped)

    def child(self, cand: np.ndarray) -> "DualEngine":
        """A subproblem restricted to the candidate arcs ``cand`` (a subset of this one's),
        starting from this engine's multipliers and step counter."""
        kid = DualEngine(self.arc, None if not self.use_sib else self.sib,
                         None if not self.use_grand else self.grand, cand, self.tree_share, self.c)
        kid.lam[:] = np.where(cand, self.lam, 0.0)
        kid.mu[:] = np.where(cand, self.mu, 0.0)
        kid.stats[_T] = self.stats[_T]
        kid.stats[_TARGET] = self.stats[_TARGET]
        return kid

    def disagreement(self) -> np.ndarray:
        """Per word, how many copies of its head (automata, the head choice of its own automaton)
        disagree with the last iteration's spanning tree (int64 (n+1,))."""
        return _disagreement(self.tree, *self.graph[:2], self.chosen, self.head_of, self.use_grand)


def dominated_arcs(arc: np.ndarray, mask: np.ndarray, sib, grand, lower: float = -np.inf) -> np.ndarray:
    """Allowed arcs that belong to no optimal tree: ``arc[h, m]`` plus the best head score of
    every other word plus the largest possible higher-order total stays below the score of a
    known tree (``lower``, or the best first-order tree's full score). Only hopeless scores are
    caught (e.g. a caller's finite stand-in for pruned arcs); real candidates never are."""
    size = arc.shape[0]
    n = size - 1
    use_sib, use_grand = sib is not None, grand is not None
    s3, g3 = _cube(sib), _cube(grand)
    best_in = np.where(mask, arc, -np.inf).max(axis=0)
    best_in[0] = 0.0
    top = float(best_in[1:].sum())
    if use_sib:
        top += n * float(sib.max())
    if use_grand:
        top += (n - 1) * float(grand.max())
    if not np.isfinite(lower):
        tree = mst_kernel(np.where(mask, arc, TREE_EXCLUDED))
        lower = float(full_score(tree, arc, s3, g3, use_sib, use_grand))
    slack = top - lower
    margin = 1e-9 * (1.0 + abs(top) + abs(lower))
    with np.errstate(invalid="ignore"):
        return mask & (best_in[None, :] - arc > slack + margin)


def default_step(arc: np.ndarray, cand: np.ndarray, scale: float = DEFAULT_STEP_SCALE) -> float:
    """Initial step ``c``: ``scale`` times the standard deviation of the candidate arc scores, or
    ``scale`` when they are constant. Subgradient entries are 0/±1, so ``c`` is in score units:
    about the size of the score differences the multipliers must bridge."""
    spread = float(np.std(arc[cand])) if cand.any() else 0.0
    return scale * (spread if spread > 0.0 else 1.0)


def _clean(arc: np.ndarray) -> np.ndarray:
    """A copy of ``arc`` with column 0 and the diagonal (never used; may hold anything) at 0."""
    arc = arc.copy()
    arc[:, 0] = 0.0
    np.fill_diagonal(arc, 0.0)
    return arc


def _check_params(max_iter, step, time_limit, tree_share, step_scale=DEFAULT_STEP_SCALE) -> None:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if step is not None and not (_is_real(step) and np.isfinite(step) and step > 0):
        raise ValueError(f"step must be a positive finite number, got {step!r}")
    if not (_is_real(step_scale) and np.isfinite(step_scale) and step_scale > 0):
        raise ValueError(f"step_scale must be a positive finite number, got {step_scale!r}")
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
def _run(arc, sib, grand, use_sib, use_grand, tree_share, c, n_iter, repair, cand,
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
        for h in range(size):
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
                block = sib_block[sib_ptr[h]:sib_ptr[h + 1]].reshape((k, k)) if use_sib \
                    else sib_block[0:0].reshape((0, 0))
                values[h], head_of[h] = solve_word(
                    h, mods, out_split[h] - lo, heads, out_w[:k], in_w, sib_first[lo:hi], block,
                    grand, use_sib, use_grand, chosen[lo:hi], work, table, back)
            dirty[h] = False
        for h in range(size):
            for e in range(out_ptr[h], out_ptr[h + 1]):
                m = out_idx[e]
                tree_w[h, m] = tree_share * arc[h, m] + lam[h, m] + mu[h, m]
        tree = mst_kernel(tree_w)
        last_tree[:] = tree
        dual = values.sum()
        for m in range(1, size):
            dual += tree_w[tree[m], m]
        stats[_ITERS] += 1.0
        if dual > stats[_PREV]:
            stats[_T] += 1.0
        stats[_PREV] = dual
        stats[_DUAL] = min(stats[_DUAL], dual)
        _keep_better(tree, arc, sib, grand, use_sib, use_grand, cand, best_heads, stats)
        if repair:
            fixed = _repaired_tree(arc, cand, out_ptr, out_idx, chosen, head_of, use_grand)
            _keep_better(fixed, arc, sib, grand, use_sib, use_grand, cand, best_heads, stats)
        norm = _subgradient_norm(tree, out_ptr, out_idx, chosen, head_of, use_grand)
        if norm == 0.0:
            best_heads[:] = tree
            stats[_PRIMAL] = full_score(tree, arc, sib, grand, use_sib, use_grand)
            stats[_CERT] = 1.0
            return
        if stats[_PRIMAL] >= stats[_DUAL] - 1e-9 * (1.0 + abs(stats[_DUAL])):
            stats[_CERT] = 1.0
            return
        alpha = c / (stats[_T] + 1.0)
        if stats[_TARGET] > -np.inf:
            alpha = min(alpha, (dual - stats[_TARGET]) / norm)
        _subgradient_step(tree, out_ptr, out_idx, chosen, head_of, use_grand, alpha, lam, mu,
                          dirty)


@njit(cache=True)
def _keep_better(heads, arc, sib, grand, use_sib, use_grand, cand, best_heads, stats):
    for m in range(1, heads.shape[0]):
        if not cand[heads[m], m]:
            return
    score = full_score(heads, arc, sib, grand, use_sib, use_grand)
    if score > stats[_PRIMAL]:
        stats[_PRIMAL] = score
        best_heads[:] = heads


@njit(cache=True)
def _repaired_tree(arc, cand, out_ptr, out_idx, chosen, head_of, use_grand):
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
