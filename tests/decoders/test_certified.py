"""decode_certified: certified answers are optimal (brute force, n <= 6), the gap is honest,
absent arcs and trivial inputs, time caps, determinism, bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import CertifiedResult, decode_certified, tree_problem, tree_score

from .brute import best_tree, random_scores


@pytest.mark.parametrize("kind", [(True, True), (True, False), (False, True)])
def test_certified_answers_are_optimal(kind):
    rng = np.random.default_rng(0)
    certified = 0
    sizes = [2, 3, 4, 5, 6] * 6
    for n in sizes:
        arc, sib, grand = random_scores(rng, n, *kind)
        result = decode_certified(arc, sib, grand, seed=n)
        assert isinstance(result, CertifiedResult)
        assert tree_problem(result.heads) == ""
        assert result.score == pytest.approx(tree_score(result.heads, arc, sib, grand))
        best, argbest = best_tree(n, arc, sib, grand)
        assert result.upper_bound >= best - 1e-9
        assert result.gap == pytest.approx(result.upper_bound - result.score, abs=1e-9)
        assert result.gap >= 0.0
        if result.certified:
            certified += 1
            assert result.score == pytest.approx(best, abs=1e-9)
            assert result.method in ("exact", "dominance", "search", "dual", "branch_and_bound")
        else:
            assert result.method == "" and result.gap > 0.0
    assert certified >= 0.95 * len(sizes)


def test_first_order_is_exact():
    arc = np.random.default_rng(1).normal(size=(6, 6))
    result = decode_certified(arc)
    assert result.certified and result.method == "exact" and result.gap == 0.0


def test_absent_arcs():
    rng = np.random.default_rng(2)
    for _ in range(20):
        arc, sib, grand = random_scores(rng, 5, True, True)
        arc[rng.random(arc.shape) < 0.4] = -np.inf
        result = decode_certified(arc, sib, grand)
        assert tree_problem(result.heads) == ""
        true = tree_score(result.heads, arc, sib, grand)
        assert result.score == true or result.score == pytest.approx(true)
    arc, sib, grand = random_scores(rng, 5, True, True)
    arc[0, 2:] = -np.inf  # only word 1 may attach to the root
    start = np.array([-1, 2, 0, 2, 2, 2])  # uses the absent arc 0 -> 2
    result = decode_certified(arc, sib, grand, init=start)
    assert result.certified and np.isfinite(result.score) and result.heads[1] == 0
    arc = np.zeros((4, 4))
    arc[0, :] = -np.inf
    result = decode_certified(arc, np.zeros((4, 4, 4)))
    assert result.score == -np.inf and result.certified and tree_problem(result.heads) == ""


def test_deterministic_and_time_capped():
    rng = np.random.default_rng(3)
    arc, sib, grand = random_scores(rng, 30, True, True)
    first = decode_certified(arc, sib, grand, seed=4, max_nodes=5)
    second = decode_certified(arc.copy(), sib.copy(), grand.copy(), seed=4, max_nodes=5)
    assert np.array_equal(first.heads, second.heads) and first[1:] == second[1:]
    capped = decode_certified(arc, sib, grand, time_limit=0.01, max_iter=100000)
    assert tree_problem(capped.heads) == ""
    assert capped.upper_bound >= capped.score


@pytest.mark.parametrize("kwargs, match", [
    ({"max_iter": 0}, "max_iter"),
    ({"max_nodes": -1}, "max_nodes"),
    ({"hill_climb_options": {"restarts": 3}}, "hill_climb_options"),
    ({"hill_climb_options": {"converge": 0}}, "converge"),
])
def test_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        decode_certified(np.zeros((3, 3)), np.zeros((3, 3, 3)), **kwargs)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 25), seed=st.integers(0, 2**32 - 1))
def test_always_a_valid_tree(n, seed):
    rng = np.random.default_rng(seed)
    arc, sib, grand = random_scores(rng, n, True, True)
    result = decode_certified(arc, sib, grand, max_iter=20, max_nodes=3, node_iter=5)
    assert tree_problem(result.heads) == ""
    assert result.upper_bound >= result.score - 1e-9 * max(1.0, abs(result.score))
