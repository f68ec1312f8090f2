"""Certified decoding: hill climbing's tree, then a proof that it is optimal (or a better tree).

Conventions: index 0 is the root, words are ``1..n``; ``arc[h, m]`` (``-inf``: absent arc, see
``absent.py``), ``sib[h, s, m]``, ``grand[g, h, m]`` as in every decoder of this package;
``heads[0] == -1`` with exactly one word on the root.

Steps: (1) randomized hill climbing (``hill_climb.py``) from the first-order optimum (or the
caller's ``init``); (2) dominance pruning with its score (``dominance.py``): the arcs that no tree
scoring as much can use are dropped; when every word keeps one head, the tree is optimal; (3) an
exhaustive search over the surviving arcs (``enumeration.py``), capped at ``search_nodes`` nodes;
(4) dual decomposition (``dual.py``) over the surviving arcs, started from the best tree: it
counts as the primal solution, its score is the target of the Polyak steps and the multipliers
start shifted towards its arcs; (5) if still open, branch and bound (``branch_bound.py``) from
the dual's multipliers (``dual.dual_search`` runs steps 4 and 5). Every answer is either proven
optimal (``certified``, ``gap == 0`` up to rounding) or carries an honest ``upper_bound`` and
``gap = upper_bound - score >= 0``.
"""
from typing import NamedTuple, Optional

import numpy as np

from ..compiling import clock
from ._checks import check_counts, check_heads, check_inputs, zero_unused
from .absent import with_floor
from .branch_bound import MAX_DEPTH, NODE_ITER
from .dominance import fixed_tree, prune_dominated
from .dual import _cube, dual_search, exact_without_search
from .enumeration import search_candidates
from .hill_climb import _check_settings, hill_climb_checked
from .mst import mst_kernel
from .scoring import full_score

HILL_CLIMB_DEFAULTS = {"max_restarts": None, "min_restarts": 5, "converge": 10,  # decode_hill_climb's
                       "uniform_share": 0.5, "temperature": 2.0, "pair_moves": True,
                       "projective_start": True}


class CertifiedResult(NamedTuple):
    """Output of ``decode_certified``.

    ``heads``: int64 (n+1,) tree; ``score``: its score (``-inf`` if it must use an absent arc);
    ``upper_bound``: >= the optimal score; ``certified``: ``heads`` is proven optimal; ``gap``:
    ``upper_bound - score`` (0 when certified); ``method``: what proved it (``"exact"``: no
    higher-order factors or n <= 1; ``"dominance"``: every other arc provably belongs to no
    optimal tree, see ``dominance.py``; ``"search"``: exhaustive search over the arcs that survive
    (``enumeration.py``); ``"dual"``; ``"branch_and_bound"``; ``""`` when unproven);
    ``hill_climb_exact``: hill climbing's own tree scored as high as the answer; ``restarts``:
    hill climbing's restarts; ``iterations``: subgradient iterations (dual + branch and bound);
    ``nodes``: branch and bound subproblems; ``time_capped``: the time limit stopped a step.
    """

    heads: np.ndarray
    score: float
    upper_bound: float
    certified: bool
    gap: float
    method: str
    hill_climb_exact: bool
    restarts: int
    iterations: int
    nodes: int
    time_capped: bool


def decode_certified(
    arc,
    sib: Optional[np.ndarray] = None,
    grand: Optional[np.ndarray] = None,
    *,
    seed: int = 0,
    time_limit: Optional[float] = None,
    init=None,
    hill_climb_options: Optional[dict] = None,
    max_iter: int = 200,
    max_nodes: int = 200,
    max_depth: int = MAX_DEPTH,
    node_iter: int = NODE_ITER,
    search_nodes: int = 300,
) -> CertifiedResult:
    """Hill climbing's best tree under arc + sib + grand, proven optimal or with an honest gap.

    ``arc[h, m]`` (n+1, n+1), ``-inf`` for absent arcs; ``sib``/``grand`` (n+1,)*3 or ``None``.
    ``seed``: hill climbing's random seed; ``init``: its first start tree (default: the
    first-order optimum); ``hill_climb_options``: keyword arguments of ``decode_hill_climb``
    (``max_restarts``, ``min_restarts``, ``converge``, ``uniform_share``, ``temperature``;
    defaults as there). ``max_iter``: dual decomposition's iterations; ``max_nodes``,
    ``max_depth``, ``node_iter``: branch and bound's caps (subproblems, branchings on a path,
    iterations per subproblem); ``search_nodes``: the exhaustive search's cap. ``time_limit`` (seconds) covers all steps; each step runs at
    least once. Raises ``ValueError`` on malformed input.
    """
    started = clock()
    arc, sib, grand = check_inputs(arc, sib, grand)
    size = arc.shape[0]
    if init is not None:
        init = check_heads(init, size)
    options = dict(HILL_CLIMB_DEFAULTS)
    for key, value in (hill_climb_options or {}).items():
        if key not in options:
            raise ValueError(f"unknown hill_climb_options key {key!r}; expected {sorted(options)}")
        options[key] = value
    _check_settings(options["max_restarts"], options["min_restarts"], options["converge"],
                    time_limit, options["uniform_share"], options["temperature"])
    check_counts(max_iter=(max_iter, 1), max_nodes=(max_nodes, 0), max_depth=(max_depth, 0),
                 node_iter=(node_iter, 1), search_nodes=(search_nodes, 0))
    allowed = with_floor(zero_unused(arc), sib, grand)
    if size <= 2 or (sib is None and grand is None) or not allowed.feasible:
        exact = exact_without_search(allowed, sib, grand)
        return CertifiedResult(exact.heads, exact.score, exact.upper_bound, True, 0.0, "exact",
                               True, 0, 0, 0, False)
    deadline = None if time_limit is None else started + time_limit
    if init is None:
        init = mst_kernel(allowed.arc)
    hill = hill_climb_checked(allowed, sib, grand, seed=seed, init=init, time_limit=time_limit,
                              **options)
    capped = hill.time_capped
    if not np.isfinite(hill.score):  # a caller's start tree over absent arcs, never improved
        start = mst_kernel(allowed.arc)  # over allowed arcs: the floor keeps absent ones out
        hill = hill._replace(heads=start, score=float(full_score(
            start, allowed.arc, _cube(sib), _cube(grand), sib is not None, grand is not None)))
    s3, g3 = _cube(sib), _cube(grand)
    cand = prune_dominated(allowed.arc, allowed.mask, s3, g3, sib is not None, grand is not None,
                           hill.score)
    if fixed_tree(cand).shape[0]:
        return _result(hill.heads, hill.score, hill.score, "dominance", hill, 0, 0, capped)
    finished, heads, score, _ = search_candidates(allowed.arc, cand, s3, g3, sib is not None,
                                                  grand is not None, hill.heads, hill.score,
                                                  search_nodes)
    if finished:
        return _result(heads, score, score, "search", hill, 0, 0, capped)
    dual = dual_search(allowed, sib, grand, max_iter=max_iter, deadline=deadline, repair=False,
                       init=heads, init_score=score, cand=cand, max_nodes=max_nodes,
                       max_depth=max_depth, node_iter=node_iter)
    method = dual.method or "dual"  # ``_result`` clears it unless the gap is closed
    return _result(dual.heads, dual.score, dual.upper_bound, method, hill, dual.iterations,
                   dual.nodes, capped or dual.time_capped)


def _result(heads, score, upper, method, hill, iterations, nodes, capped) -> CertifiedResult:
    upper = max(upper, score)
    gap = upper - score
    certified = gap <= 1e-9 * (1.0 + abs(score))
    if certified:
        gap = 0.0
    else:
        method = ""
    return CertifiedResult(heads.copy(), float(score), float(upper), bool(certified), float(gap),
                           method, bool(hill.score >= score - 1e-9 * (1.0 + abs(score))),
                           hill.restarts, iterations, nodes, bool(capped))
