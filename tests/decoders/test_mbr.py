"""decode_mbr: the tree maximizing the summed arc marginals, against marginals and trees
enumerated by brute force (n <= 6), projective and not, with temperatures and absent arcs."""
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from spacy_hcparse.decoders import arc_marginals, decode_eisner, decode_mbr, decode_mbr_gain, decode_mst, mbr_gain
from spacy_hcparse.decoders._checks import tree_problem

from .brute import all_trees, is_projective


@lru_cache(maxsize=None)
def _trees(n: int, projective: bool) -> np.ndarray:
    return np.array([t for t in all_trees(n) if not projective or is_projective(t)],
                    dtype=np.int64).reshape(-1, n + 1)


def _brute(arc: np.ndarray, projective: bool, temperature: float):
    """(marginals by enumeration, the best summed marginal over trees avoiding absent arcs)."""
    n = arc.shape[0] - 1
    trees = _trees(n, projective)
    words = np.arange(1, n + 1)
    scores = arc[trees[:, 1:], words].sum(axis=1) / temperature
    weights = np.exp(scores - np.logaddexp.reduce(scores))
    marg = np.zeros_like(arc)
    for tree, w in zip(trees, weights):
        marg[tree[1:], words] += w
    gains = marg[trees[:, 1:], words].sum(axis=1)
    gains[~np.isfinite(scores)] = -np.inf
    return marg, gains.max()


@pytest.mark.parametrize("projective", [False, True])
@pytest.mark.parametrize("temperature", [0.3, 1.0, 4.0])
def test_mbr_maximizes_brute_force_marginals(projective, temperature):
    rng = np.random.default_rng(int(temperature * 10) + projective)
    for _ in range(40):
        n = int(rng.integers(1, 7))
        arc = rng.normal(scale=2.0, size=(n + 1, n + 1))
        marg, best_gain = _brute(arc, projective, temperature)
        heads, gain = decode_mbr_gain(arc, projective, temperature)
        assert tree_problem(heads) == "" and (not projective or is_projective(heads))
        words = np.arange(1, n + 1)
        assert marg[heads[1:], words].sum() == pytest.approx(best_gain, abs=1e-9)
        assert gain == pytest.approx(best_gain, abs=1e-9)
        assert np.array_equal(decode_mbr(arc, projective, temperature), heads)


@pytest.mark.parametrize("projective", [False, True])
def test_mbr_with_absent_arcs(projective):
    rng = np.random.default_rng(5 + projective)
    for _ in range(40):
        n = int(rng.integers(1, 6))
        arc = rng.normal(size=(n + 1, n + 1))
        arc[rng.random(arc.shape) < 0.3] = -np.inf
        words = np.arange(1, n + 1)
        trees = _trees(n, projective)
        feasible = np.isfinite(arc[trees[:, 1:], words].sum(axis=1)).any()
        heads, gain = decode_mbr_gain(arc, projective)
        assert tree_problem(heads) == ""
        if not feasible:
            assert np.isnan(gain)
            assert np.array_equal(heads, (decode_eisner if projective else decode_mst)(arc))
            continue
        marg, best_gain = _brute(np.where(np.isfinite(arc), arc, -np.inf), projective, 1.0)
        assert np.isfinite(arc[heads[1:], words]).all()
        assert gain == pytest.approx(best_gain, abs=1e-9)


def test_mbr_differs_from_the_best_tree():
    # some random scores make the MBR tree differ from the highest-scoring one; it then has
    # strictly more expected correct heads
    rng = np.random.default_rng(0)
    found = False
    for _ in range(500):
        arc = rng.normal(scale=2.0, size=(6, 6))
        if not np.array_equal(decode_mbr(arc), decode_mst(arc)):
            found = True
            marg = arc_marginals(arc)
            words = np.arange(1, 6)
            assert marg[decode_mbr(arc)[1:], words].sum() > marg[decode_mst(arc)[1:], words].sum()
            break
    assert found


def test_bad_temperature():
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="temperature"):
            decode_mbr(np.zeros((3, 3)), temperature=bad)
    with pytest.raises(ValueError, match="square"):
        decode_mbr(np.zeros((2, 3)))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([1e-3, 1.0, 30.0]),
       projective=st.booleans())
@example(n=6, seed=529, scale=30.0, projective=False)  # matrix-tree rounding once put a marginal over 1
def test_always_a_valid_tree(n, seed, scale, projective):
    arc = np.random.default_rng(seed).normal(scale=scale, size=(n + 1, n + 1))
    heads, gain = decode_mbr_gain(arc, projective)
    assert tree_problem(heads) == "" and (not projective or is_projective(heads))
    assert -1e-9 <= gain <= n + 1e-9


def test_gain_is_the_marginals_where_usable():
    rng = np.random.default_rng(9)
    arc = rng.normal(size=(5, 5))
    arc[2, 3] = -np.inf
    gain = mbr_gain(arc, True, 2.0)
    marg = arc_marginals(arc / 2.0, True)
    usable = np.isfinite(arc) & ~np.eye(5, dtype=bool)
    usable[:, 0] = False
    assert np.allclose(gain[usable], marg[usable]) and np.all(gain[~usable] == -np.inf)
    assert mbr_gain(np.zeros((1, 1))) is None


@pytest.mark.parametrize("temperature", [0.5, 1.0, 3.0])
def test_sibling_mbr_maximizes_brute_force_marginals(temperature):
    from .brute import reference_score

    rng = np.random.default_rng(int(temperature * 10) + 70)
    for _ in range(25):
        n = int(rng.integers(1, 7))
        arc, sib = rng.normal(scale=2.0, size=(n + 1, n + 1)), rng.normal(size=(n + 1,) * 3)
        trees = _trees(n, True)
        words = np.arange(1, n + 1)
        scores = np.array([reference_score(t, arc, sib) for t in trees]) / temperature
        weights = np.exp(scores - np.logaddexp.reduce(scores))
        marg = np.zeros_like(arc)
        for tree, w in zip(trees, weights):
            marg[tree[1:], words] += w
        best = marg[trees[:, 1:], words].sum(axis=1).max()
        heads, gain = decode_mbr_gain(arc, True, temperature, sib)
        assert is_projective(heads) and gain == pytest.approx(best, abs=1e-9)
        assert marg[heads[1:], words].sum() == pytest.approx(best, abs=1e-9)
