"""Time caps: hill climbing and dual decomposition stop at the cap however small it is, and still
return a valid tree (their best so far) with ``time_capped`` set."""
import time

import numpy as np
import pytest

from spacy_hcparse.decoders import decode_certified, decode_dual, decode_hill_climb, tree_problem

DECODE = {"hill_climb": decode_hill_climb, "dual": decode_dual, "certified": decode_certified}


def scores(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n + 1, n + 1)), rng.normal(size=(n + 1,) * 3), rng.normal(size=(n + 1,) * 3)


@pytest.mark.parametrize("limit", [1e-9, 1e-6, 1e-3])
@pytest.mark.parametrize("n", [3, 40])
def test_dual_returns_a_tree_even_when_the_cap_passes_before_the_first_iteration(limit, n):
    arc, sib, grand = scores(n)
    result = decode_dual(arc, sib, grand, max_iter=10**6, time_limit=limit)
    assert tree_problem(result.heads) == ""
    assert result.iterations >= 1
    assert result.time_capped or result.certified


@pytest.mark.parametrize("limit", [0.0, 1e-9, 1e-3])
def test_hill_climb_returns_a_tree_at_any_cap(limit):
    arc, sib, grand = scores(40)
    result = decode_hill_climb(arc, sib, grand, max_restarts=10**6, min_restarts=10**6, time_limit=limit)
    assert tree_problem(result.heads) == "" and result.restarts >= 1 and result.time_capped


@pytest.mark.parametrize("name", ["hill_climb", "dual", "certified"])
def test_cap_is_honoured(name):
    """A search that would run for minutes stops within the cap plus one kernel call."""
    arc, sib, grand = scores(80, seed=1)
    restarts = {"max_restarts": 10**6, "min_restarts": 10**6, "converge": 10**6}
    options = {"hill_climb": restarts, "dual": {"max_iter": 10**7},
               "certified": {"max_iter": 10**7, "hill_climb_options": {"max_restarts": 2, "min_restarts": 1},
                             "max_nodes": 10**6}}[name]
    DECODE[name](arc, sib, grand, time_limit=0.05, **options)  # compile
    start = time.perf_counter()
    result = DECODE[name](arc, sib, grand, time_limit=0.3, **options)
    elapsed = time.perf_counter() - start
    assert result.time_capped and tree_problem(result.heads) == ""
    assert elapsed < 0.3 + 0.5, elapsed


def test_certified_bound_and_flag_agree():
    arc, sib, grand = scores(8, seed=2)
    result = decode_certified(arc, sib, grand, seed=3)
    assert tree_problem(result.heads) == ""
    assert result.upper_bound >= result.score - 1e-9
    assert result.certified == (result.upper_bound - result.score <= 1e-9 * (1 + abs(result.score)))
