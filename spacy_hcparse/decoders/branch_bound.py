"""Branch and bound over dual decomposition, for sentences the dual alone leaves uncertified.

Conventions: index 0 is the root, words are ``1..n``; a node is a subproblem of ``dual.py`` whose
candidate arcs ``cand`` (bool (n+1, n+1)) are a subset of its parent's. Its dual value bounds the
best tree over its candidates from above.

Branching. The word ``m`` whose head the subproblems disagree on most in the node's last
iteration (ties: the lowest index) is branched on its incumbent head ``h`` (the best tree known
overall, else the node's spanning tree's head): one child keeps only ``h -> m`` in column ``m``,
the other drops it. Each child's candidates are pruned again against the incumbent's score
(``dominance.py``: fixing or dropping an arc changes the bounds of its neighbours), which often
leaves no tree or a single one. Children start from their parent's multipliers and step state, aim their
Polyak steps at the incumbent's score, and stop as soon as their bound falls to it (pruned) or
their own trees certify themselves. Nodes are expanded best bound first, so the search proves the
incumbent optimal when the best open bound falls to its score. Caps: ``max_nodes`` subproblems,
``max_depth`` branchings on a path, a deadline; a capped search reports the best open bound,
so ``upper_bound - score`` is an honest gap.
"""
import heapq
from typing import NamedTuple, Optional, Protocol

import numpy as np

from ..compiling import clock
from .absent import has_single_root_tree
from .dominance import fixed_tree, prune_dominated
from .scoring import full_score

NODE_STALL = 10  # a subproblem whose bound stops falling for this many iterations is split at once
MAX_DEPTH = 30  # branchings on a path
NODE_ITER = 50  # subgradient iterations per subproblem


class Engine(Protocol):
    """What branch and bound reads and calls of a subproblem: ``dual.DualEngine`` (which runs
    branch and bound, so this module does not import it)."""

    arc: np.ndarray
    sib: np.ndarray
    grand: np.ndarray
    use_sib: bool
    use_grand: bool
    cand: np.ndarray
    tree: np.ndarray
    best_heads: np.ndarray
    bound: float
    score: float
    iterations: int
    done: bool

    def child(self, cand: np.ndarray) -> "Engine": ...

    def disagreement(self) -> np.ndarray: ...

    def set_floor(self, score: float) -> None: ...

    def set_incumbent(self, heads: np.ndarray, score: float) -> None: ...

    def run(self, max_iter: int, deadline: Optional[float] = None, repair: bool = True,
            stall: int = 0) -> bool: ...


class BranchResult(NamedTuple):
    """``heads``/``score``: the best tree found (the incumbent); ``upper_bound``: >= the optimal
    score; ``proven``: the bound met the score; ``nodes``: subproblems solved; ``iterations``:
    their subgradient iterations; ``time_capped``: the deadline stopped the search."""

    heads: np.ndarray
    score: float
    upper_bound: float
    proven: bool
    nodes: int
    iterations: int
    time_capped: bool


def branch_and_bound(
    root: Engine,
    heads: np.ndarray,
    score: float,
    *,
    max_nodes: int = 200,
    max_depth: int = MAX_DEPTH,
    node_iter: int = NODE_ITER,
    deadline: Optional[float] = None,
    stall: int = 0,
) -> BranchResult:
    """Prove ``heads`` (score ``score``, a tree over ``root``'s candidates) optimal for ``root``'s
    problem, or find a better tree, by branching on heads. ``root`` has already run (its bound
    and multipliers are the starting point). ``deadline``: a ``compiling.clock()`` value;
    ``stall``: a subproblem stops (and is branched on) after that many iterations in a row
    without a better bound (0: it runs ``node_iter`` iterations unless done). ``upper_bound``
    is the root's bound where that is lower than every open node's."""
    best_heads, best = heads.copy(), float(score)
    if root.score > best:
        best_heads, best = root.best_heads.copy(), root.score
    tie = 0
    queue = [(-root.bound, tie, 0, root)]
    stuck = []  # bounds of nodes at the depth cap
    nodes = iterations = 0
    capped = False
    while queue:
        bound = -queue[0][0]
        if bound <= best + _tol(best):
            queue = []
            break
        if nodes >= max_nodes or (deadline is not None and clock() >= deadline):
            capped = deadline is not None and clock() >= deadline
            break
        _, _, depth, node = heapq.heappop(queue)
        if depth >= max_depth:
            stuck.append(bound)
            continue
        m, h = _branching(node, best_heads)
        for cand in _split(node.cand, m, h):
            cand = prune_dominated(node.arc, cand, node.sib, node.grand, node.use_sib,
                                   node.use_grand, best)
            if not has_single_root_tree(cand):
                continue  # no tree in here scores as much as the incumbent
            fixed = fixed_tree(cand)
            if fixed.shape[0]:  # one tree left in here: score it, nothing to bound
                nodes += 1
                value = full_score(fixed, node.arc, node.sib, node.grand, node.use_sib,
                                   node.use_grand)
                if value > best:
                    best_heads, best = fixed, float(value)
                continue
            kid = node.child(cand)
            kid.set_floor(best)
            if _within(best_heads, cand):
                kid.set_incumbent(best_heads, best)
            kid.run(node_iter, deadline, stall=stall)
            nodes += 1
            iterations += kid.iterations
            if kid.score > best:
                best_heads, best = kid.best_heads.copy(), kid.score
            if not kid.done and kid.bound > best + _tol(best):
                tie += 1
                heapq.heappush(queue, (-kid.bound, tie, depth + 1, kid))
    open_bounds = [b for b in [-entry[0] for entry in queue] + stuck if b > best + _tol(best)]
    upper = max(best, min(root.bound, max(open_bounds, default=best)))
    return BranchResult(best_heads, best, upper, upper <= best + _tol(best), nodes, iterations,
                        capped)


def _branching(node: Engine, incumbent: np.ndarray):
    """(word, head) to branch on: the most disputed word and its incumbent head when that arc
    is a candidate here, else the head in the node's last spanning tree."""
    count = node.disagreement()
    count[0] = -1
    cand = node.cand
    choices = cand.sum(axis=0)
    count[choices <= 1] = -1  # a word with one candidate head cannot be split
    m = int(np.argmax(count))
    if count[m] < 0:
        m = int(np.argmax(choices > 1))
    h = int(incumbent[m])
    if not cand[h, m]:
        h = int(node.tree[m]) if node.tree[m] >= 0 and cand[node.tree[m], m] else int(
            np.argmax(cand[:, m]))
    return m, h


def _split(cand: np.ndarray, m: int, h: int):
    """The candidates with ``h -> m`` as ``m``'s only head, and without ``h -> m``."""
    keep = cand.copy()
    keep[:, m] = False
    keep[h, m] = True
    drop = cand.copy()
    drop[h, m] = False
    return keep, drop


def _within(heads: np.ndarray, cand: np.ndarray) -> bool:
    return bool(np.all(cand[heads[1:], np.arange(1, len(heads))]))


def _tol(value: float) -> float:
    return 1e-9 * (1.0 + abs(value))
