"""Dual decomposition for non-projective parsing with head automata (Koo et al., EMNLP 2010).

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` scores head ``h`` ->
modifier ``m``; ``sib[h, s, m]`` scores ``m`` as the next modifier of ``h`` after ``s`` on the same
side, nearest first, ``s == h`` for the closest (no stop factor; the root only has right modifiers);
``grand[g, h, m]`` scores the arcs ``g -> h`` and ``h -> m`` together; ``heads[0] == -1`` and
exactly one word is attached to the root.

Decomposition. The objective is split between a maximum spanning tree over the arcs and one head
automaton per head (``head_automata.py``). A share ``tree_share`` of each arc score goes to the tree;
the rest goes to the automaton of the arc's head (``h -> m`` as an outgoing arc) or, with
grandparent factors, half to it and half to the automaton of the modifier, which then also chooses
its own head (grand-sibling automata). Lagrange multipliers ``lam[h, m]`` (outgoing copies) and
``mu[g, h]`` (incoming copies) tie every copy to the tree; subgradient steps ``step / (t + 1)``, with
``t`` the number of iterations so far in which the dual value went up, drive them to agreement.
When all copies agree, the tree is optimal (``certified``). Otherwise the best tree seen is returned
(every iteration's spanning tree, and the automata's choices repaired into a tree).
"""
import time
from typing import NamedTuple, Optional

import numpy as np
from numba import njit

from ._checks import check_inputs
from .head_automata import solve_root, solve_word
from .mst import mst_kernel
from .scoring import full_score

# Slots of the kernel's float64 ``stats`` array.
_T, _PREV, _DUAL, _PRIMAL, _ITERS, _CERT = range(6)


class DualResult(NamedTuple):
    """Output of ``decode_dual``.

    ``heads``: int64 (n+1,) tree; ``score``: its total score under arc + sib + grand;
    ``upper_bound``: the lowest dual value seen (>= the optimal score); ``certified``: the
    subproblems agreed (or the bound met the score), so ``heads`` is optimal; ``iterations``:
    subgradient iterations run; ``time_capped``: stopped by ``time_limit``.
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
) -> DualResult:
    """Best non-projective tree under arc + sibling + grandparent scores by dual decomposition.

    ``arc[h, m]`` (n+1, n+1); ``sib[h, s, m]`` and ``grand[g, h, m]`` (n+1,)*3 or ``None``; index 0
    is the root (see the module docstring). ``max_iter`` bounds the subgradient iterations;
    ``step`` is the initial step size ``c`` (default: the spread of the arc scores, see
    ``default_step``); ``time_limit`` (seconds) stops early with ``time_capped=True``
    (after at least one iteration);
    ``tree_share`` in [0, 1] is the part of each arc score given to the spanning tree; ``repair``
    also scores the automata's choices repaired into a tree at every iteration.
    Raises ``ValueError`` on malformed scores or parameters.
    """
    arc, sib, grand = check_inputs(arc, sib, grand)
    _check_params(max_iter, step, time_limit, tree_share)
    arc = arc.copy()  # column 0 and the diagonal are unused and may hold anything, even NaN
    arc[:, 0] = 0.0
    np.fill_diagonal(arc, 0.0)
    size = arc.shape[0]
    use_sib, use_grand = sib is not None, grand is not None
    if size <= 2 or not (use_sib or use_grand):
        return _exact_small(arc, sib, grand)
    c = default_step(arc, sib, grand) if step is None else float(step)
    state = _State(size)
    stats = state.stats
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    chunk = max_iter if deadline is None else 1
    time_capped = False
    while stats[_ITERS] < max_iter and stats[_CERT] == 0.0:
        # at least one iteration always runs: before it there is no tree to return
        if deadline is not None and stats[_ITERS] > 0 and time.perf_counter() >= deadline:
            time_capped = True
            break
        todo = int(min(chunk, max_iter - stats[_ITERS]))
        started = time.perf_counter()
        _run(arc, _cube(sib), _cube(grand), use_sib, use_grand, float(tree_share), c, todo,
             bool(repair), *state.arrays())
        if deadline is not None:  # next chunk: about a tenth of the time left
            per_iter = (time.perf_counter() - started) / todo
            chunk = max(1, int(0.1 * (deadline - time.perf_counter()) / max(per_iter, 1e-9)))
    score = float(stats[_PRIMAL])
    bound = max(float(stats[_DUAL]), score)  # only rounding can put the dual below a tree's score
    return DualResult(state.best_heads.copy(), score, bound, bool(stats[_CERT]),
                      int(stats[_ITERS]), time_capped)


def default_step(arc: np.ndarray, sib: Optional[np.ndarray], grand: Optional[np.ndarray]) -> float:
    """Initial step ``c``: the largest standard deviation among the score arrays (arc entries a
    tree can use), or 1.0 when every score is constant. Subgradient entries are 0/±1, so ``c``
    is in score units: about the size of the score differences the multipliers must bridge."""
    size = arc.shape[0]
    mask = np.ones((size, size), dtype=bool)
    mask[:, 0] = False
    np.fill_diagonal(mask, False)
    spreads = [float(np.std(arc[mask]))] if mask.any() else []
    spreads += [float(np.std(cube)) for cube in (sib, grand) if cube is not None]
    spread = max(spreads, default=0.0)
    return spread if spread > 0.0 else 1.0


class _State:
    """Arrays the kernel updates in place, so a run can be split into time-checked chunks."""

    def __init__(self, size: int):
        self.lam = np.zeros((size, size))
        self.mu = np.zeros((size, size))
        self.chosen = np.zeros((size, size), dtype=np.int8)
        self.head_of = np.full(size, -1, dtype=np.int64)
        self.values = np.zeros(size)
        self.dirty = np.ones(size, dtype=np.bool_)
        self.best_heads = np.full(size, -1, dtype=np.int64)
        self.stats = np.array([0.0, np.inf, np.inf, -np.inf, 0.0, 0.0])

    def arrays(self):
        return (self.lam, self.mu, self.chosen, self.head_of, self.values, self.dirty,
                self.best_heads, self.stats)


def _check_params(max_iter, step, time_limit, tree_share) -> None:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
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


def _exact_small(arc, sib, grand) -> DualResult:
    """n <= 1, or arc scores only: the spanning tree is exact."""
    size = arc.shape[0]
    if size == 1:
        heads = np.array([-1], dtype=np.int64)
    elif size == 2:
        heads = np.array([-1, 0], dtype=np.int64)
    else:
        heads = mst_kernel(arc)
    score = float(full_score(heads, arc, _cube(sib), _cube(grand), sib is not None,
                             grand is not None))
    return DualResult(heads, score, score, True, 0, False)


@njit(cache=True)
def _run(arc, sib, grand, use_sib, use_grand, tree_share, c, n_iter, repair,
         lam, mu, chosen, head_of, values, dirty, best_heads, stats):
    """Run up to ``n_iter`` subgradient iterations, updating the state arrays in place."""
    size = arc.shape[0]
    out_share = (1.0 - tree_share) * (0.5 if use_grand else 1.0)
    in_share = (1.0 - tree_share) * 0.5
    out_w = np.empty(size)
    in_w = np.zeros(size)
    work = np.empty(size)
    trans = np.empty((size, size))
    table = np.empty(size)
    tree_w = np.empty((size, size))
    for _ in range(n_iter):
        for h in range(size):
            if not dirty[h]:
                continue
            for m in range(size):
                out_w[m] = out_share * arc[h, m] - lam[h, m]
                if use_grand:
                    in_w[m] = in_share * arc[m, h] - mu[m, h]
            if h == 0:
                values[0] = solve_root(out_w, sib, use_sib, chosen[0])
            else:
                values[h], head_of[h] = solve_word(h, out_w, in_w, sib, grand, use_sib, use_grand,
                                                   chosen[h], work, trans, table)
            dirty[h] = False
        for h in range(size):
            for m in range(size):
                tree_w[h, m] = tree_share * arc[h, m] + lam[h, m] + mu[h, m]
        tree = mst_kernel(tree_w)
        dual = values.sum()
        for m in range(1, size):
            dual += tree_w[tree[m], m]
        stats[_ITERS] += 1.0
        if dual > stats[_PREV]:
            stats[_T] += 1.0
        stats[_PREV] = dual
        stats[_DUAL] = min(stats[_DUAL], dual)
        _keep_better(tree, arc, sib, grand, use_sib, use_grand, best_heads, stats)
        if repair:
            fixed = _repaired_tree(arc, chosen, head_of, use_grand)
            _keep_better(fixed, arc, sib, grand, use_sib, use_grand, best_heads, stats)
        alpha = c / (stats[_T] + 1.0)
        agree = _subgradient_step(tree, chosen, head_of, use_grand, alpha, lam, mu, dirty)
        if agree:
            best_heads[:] = tree
            stats[_PRIMAL] = full_score(tree, arc, sib, grand, use_sib, use_grand)
            stats[_CERT] = 1.0
            return
        if stats[_PRIMAL] >= stats[_DUAL] - 1e-12 * (1.0 + abs(stats[_DUAL])):
            stats[_CERT] = 1.0
            return


@njit(cache=True)
def _keep_better(heads, arc, sib, grand, use_sib, use_grand, best_heads, stats):
    score = full_score(heads, arc, sib, grand, use_sib, use_grand)
    if score > stats[_PRIMAL]:
        stats[_PRIMAL] = score
        best_heads[:] = heads


@njit(cache=True)
def _repaired_tree(arc, chosen, head_of, use_grand):
    """The spanning tree agreeing with most automaton choices, arc scores breaking ties."""
    size = arc.shape[0]
    lo, hi = np.inf, -np.inf
    for h in range(size):
        for m in range(1, size):
            if h != m:
                lo = min(lo, arc[h, m])
                hi = max(hi, arc[h, m])
    weight = 2.0 * (hi - lo) * size + 1.0
    votes = np.empty((size, size))
    for h in range(size):
        for m in range(size):
            vote = float(chosen[h, m])
            if use_grand and m > 0 and head_of[m] == h:
                vote += 1.0
            votes[h, m] = weight * vote + arc[h, m]
    return mst_kernel(votes)


@njit(cache=True)
def _subgradient_step(tree, chosen, head_of, use_grand, alpha, lam, mu, dirty):
    """Move the multipliers against the disagreements; mark changed automata. True if none."""
    size = tree.shape[0]
    agree = True
    for m in range(1, size):
        for h in range(size):
            if h == m:
                continue
            in_tree = 1.0 if tree[m] == h else 0.0
            diff = in_tree - chosen[h, m]
            if diff != 0.0:
                lam[h, m] -= alpha * diff
                dirty[h] = True
                agree = False
            if use_grand:
                diff = in_tree - (1.0 if head_of[m] == h else 0.0)
                if diff != 0.0:
                    mu[h, m] -= alpha * diff
                    dirty[m] = True
                    agree = False
    return agree
