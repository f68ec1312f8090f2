"""Absent arcs (``-inf`` in ``arc``): the floor, the feasibility test, and every public decoder
against brute force over the trees that use allowed arcs only (n <= 6)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import (
    decode_dual, decode_eisner, decode_hill_climb, decode_mst, tree_problem, tree_score,
)
from spacy_hcparse.decoders.absent import has_single_root_tree, usable_mask, with_floor

from .brute import all_trees, is_projective, random_scores, reference_score


def _pruned(rng, n, keep, sib=True, grand=True):
    """Random scores with each arc absent with probability ``1 - keep``."""
    arc, s, g = random_scores(rng, n, sib, grand)
    arc[rng.random(arc.shape) >= keep] = -np.inf
    return arc, s, g


def _allowed_trees(n, arc, projective=False):
    mask = usable_mask(np.ascontiguousarray(arc, dtype=np.float64))
    return [h for h in all_trees(n) if all(mask[h[m], m] for m in range(1, n + 1))
            and (not projective or is_projective(h))]


def _best_allowed(n, arc, sib=None, grand=None, projective=False):
    trees = _allowed_trees(n, arc, projective)
    if not trees:
        return -np.inf
    return max(reference_score(h, arc, sib, grand) for h in trees)


def test_feasibility_matches_enumeration():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 6))
        arc, _, _ = _pruned(rng, n, rng.uniform(0.1, 0.9), False, False)
        mask = usable_mask(arc)
        assert has_single_root_tree(mask) == bool(_allowed_trees(n, arc))


def test_floor_puts_every_absent_tree_below_every_allowed_tree():
    rng = np.random.default_rng(1)
    for _ in range(60):
        n = int(rng.integers(2, 6))
        arc, sib, grand = _pruned(rng, n, 0.6)
        sib *= 5.0
        allowed = with_floor(arc, sib, grand)
        if not allowed.any_absent:
            continue
        good, bad = [], []
        for heads in all_trees(n):
            score = reference_score(heads, allowed.arc, sib, grand)
            uses = any(not allowed.mask[heads[m], m] for m in range(1, n + 1))
            (bad if uses else good).append(score)
        if good and bad:
            assert max(bad) < min(good)


def test_finite_inputs_are_left_alone():
    arc = np.random.default_rng(2).normal(size=(5, 5))
    allowed = with_floor(arc)
    assert allowed.arc is arc and not allowed.any_absent and allowed.feasible


@pytest.mark.parametrize("keep", [0.4, 0.7])
def test_exact_decoders_respect_absent_arcs(keep):
    rng = np.random.default_rng(3)
    for _ in range(60):
        n = int(rng.integers(1, 6))
        arc, sib, grand = _pruned(rng, n, keep)
        heads = decode_mst(arc)
        assert tree_problem(heads) == ""
        assert tree_score(heads, arc) == pytest.approx(_best_allowed(n, arc))
        heads = decode_eisner(arc, sib)
        assert tree_problem(heads) == ""
        best = _best_allowed(n, arc, sib, projective=True)
        if np.isfinite(best):
            assert tree_score(heads, arc, sib) == pytest.approx(best)


@pytest.mark.parametrize("keep", [0.4, 0.7])
def test_searching_decoders_respect_absent_arcs(keep):
    rng = np.random.default_rng(4)
    exact = total = 0
    for _ in range(60):
        n = int(rng.integers(1, 6))
        arc, sib, grand = _pruned(rng, n, keep)
        best = _best_allowed(n, arc, sib, grand)
        dual = decode_dual(arc, sib, grand, max_iter=100)
        assert tree_problem(dual.heads) == ""
        assert dual.score == tree_score(dual.heads, arc, sib, grand) or (
            dual.score == pytest.approx(tree_score(dual.heads, arc, sib, grand)))
        assert dual.upper_bound >= best - 1e-9 or best == -np.inf
        if dual.certified:
            assert dual.score == pytest.approx(best) or best == dual.score == -np.inf
        hill = decode_hill_climb(arc, sib, grand, seed=1)
        assert tree_problem(hill.heads) == ""
        assert hill.score == pytest.approx(tree_score(hill.heads, arc, sib, grand)) or (
            hill.score == -np.inf == tree_score(hill.heads, arc, sib, grand))
        assert hill.score <= best + 1e-9 or best == -np.inf
        total += 1
        exact += hill.score == pytest.approx(best) or hill.score == best
    assert exact >= 0.9 * total


def test_no_tree_over_allowed_arcs():
    arc = np.zeros((4, 4))
    arc[0, :] = -np.inf  # no word may attach to the root
    for heads, score in [
        (decode_mst(arc), None),
        (decode_eisner(arc), None),
        (decode_hill_climb(arc, np.zeros((4, 4, 4))).heads, decode_hill_climb(arc).score),
    ]:
        assert tree_problem(heads) == ""
        assert score is None or score == -np.inf
    result = decode_dual(arc, np.zeros((4, 4, 4)), np.zeros((4, 4, 4)))
    assert tree_problem(result.heads) == ""
    assert result.score == -np.inf and result.upper_bound == -np.inf and result.certified
    assert tree_score(result.heads, arc) == -np.inf


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 30), keep=st.floats(0.05, 1.0), seed=st.integers(0, 2**32 - 1))
def test_always_valid_trees_with_absent_arcs(n, keep, seed):
    rng = np.random.default_rng(seed)
    arc, sib, grand = _pruned(rng, n, keep)
    for heads, score in [
        (decode_mst(arc), None),
        (decode_eisner(arc, sib), None),
        *[(r.heads, r.score) for r in (decode_hill_climb(arc, sib, grand, max_restarts=3, min_restarts=1),
                                       decode_dual(arc, sib, grand, max_iter=20))],
    ]:
        assert tree_problem(heads) == ""
        if score is not None:
            true = tree_score(heads, arc, sib, grand)
            assert score == true or score == pytest.approx(true, rel=1e-9, abs=1e-9)
