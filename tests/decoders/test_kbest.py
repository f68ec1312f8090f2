"""kbest_eisner / kbest_mst: the k best trees against enumeration of all trees (n <= 6), with
ties and absent arcs; hypothesis: always distinct valid trees, scores non-increasing and exact,
the first tree the exact decoder's."""
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import decode_eisner, decode_mst, kbest_eisner, kbest_mst
from spacy_hcparse.decoders._checks import tree_problem

from .brute import all_trees, is_projective, reference_score

KBEST = {"projective": (kbest_eisner, decode_eisner), "non-projective": (kbest_mst, decode_mst)}


@lru_cache(maxsize=None)
def _trees(n: int, projective: bool) -> np.ndarray:
    return np.array([t for t in all_trees(n) if not projective or is_projective(t)],
                    dtype=np.int64).reshape(-1, n + 1)


def _scores(trees: np.ndarray, arc: np.ndarray) -> np.ndarray:
    n = arc.shape[0] - 1
    if n == 0:
        return np.zeros(len(trees))
    return arc[trees[:, 1:], np.arange(1, n + 1)].sum(axis=1)


def _brute_top(arc: np.ndarray, k: int, projective: bool) -> np.ndarray:
    """The k best scores over all trees that avoid absent arcs."""
    scores = _scores(_trees(arc.shape[0] - 1, projective), np.where(np.isfinite(arc), arc, -np.inf))
    scores = np.sort(scores[np.isfinite(scores)])[::-1]
    return scores[:k]


def _check_list(trees, scores, arc, k, projective):
    """Distinct valid trees (projective where asked), at most k, exact non-increasing scores."""
    assert trees.dtype == np.int64 and trees.ndim == 2 and trees.shape[1] == arc.shape[0]
    assert 1 <= len(trees) <= k and len(scores) == len(trees)
    for tree in trees:
        assert tree_problem(tree) == ""
        assert not projective or is_projective(tree)
    assert len({tuple(t) for t in trees}) == len(trees)
    assert np.all(np.diff(scores) <= 1e-9)
    finite = np.isfinite(scores)
    assert np.allclose(scores[finite], _scores(trees, arc)[finite], atol=1e-9)


@pytest.mark.parametrize("kind", ["projective", "non-projective"])
@pytest.mark.parametrize("draw", ["normal", "integer"])
def test_k_best_against_enumeration(kind, draw):
    kbest, exact = KBEST[kind]
    projective = kind == "projective"
    rng = np.random.default_rng(3 + projective + 10 * (draw == "integer"))
    for _ in range(60):
        n = int(rng.integers(0, 7))
        k = int(rng.integers(1, 40))
        shape = (n + 1, n + 1)
        arc = rng.normal(size=shape) if draw == "normal" else rng.integers(-2, 3, size=shape).astype(float)
        trees, scores = kbest(arc, k)
        _check_list(trees, scores, arc, k, projective)
        # ties at the end of the list may be broken either way: compare scores
        assert np.allclose(scores, _brute_top(arc, k, projective), atol=1e-9)
        assert np.array_equal(trees[0], exact(arc))


@pytest.mark.parametrize("kind", ["projective", "non-projective"])
def test_all_trees_when_k_is_large(kind):
    kbest, _ = KBEST[kind]
    projective = kind == "projective"
    rng = np.random.default_rng(11)
    for n in range(0, 6):
        arc = rng.normal(size=(n + 1, n + 1))
        every = _trees(n, projective)
        trees, scores = kbest(arc, len(every) + 5)
        assert len(trees) == len(every)
        assert {tuple(t) for t in trees} == {tuple(t) for t in every}


@pytest.mark.parametrize("kind", ["projective", "non-projective"])
def test_absent_arcs(kind):
    kbest, exact = KBEST[kind]
    projective = kind == "projective"
    rng = np.random.default_rng(21 + projective)
    for _ in range(60):
        n = int(rng.integers(1, 6))
        arc = rng.normal(size=(n + 1, n + 1))
        arc[rng.random(arc.shape) < 0.35] = -np.inf
        k = int(rng.integers(1, 30))
        trees, scores = kbest(arc, k)
        top = _brute_top(arc, k, projective)
        if len(top) == 0:  # no tree avoids the absent arcs: the decoder's last resort, alone
            assert len(trees) == 1 and scores[0] == -np.inf and tree_problem(trees[0]) == ""
            continue
        _check_list(trees, scores, arc, k, projective)
        assert np.isfinite(scores).all()
        assert np.allclose(scores, top, atol=1e-9)
        assert np.array_equal(trees[0], exact(arc))


def test_hand_made_ranking():
    # root -> 1 (10) or root -> 2 (9); 1 -> 2 (5) or 2 -> 1 (1): trees (10 + 5) > (9 + 1)
    arc = np.array([[0, 10, 9], [0, 0, 5], [0, 1, 0]], dtype=float)
    for kbest, _ in KBEST.values():
        trees, scores = kbest(arc, 3)
        assert trees.tolist() == [[-1, 0, 1], [-1, 2, 0]]
        assert scores.tolist() == [15.0, 10.0]


def test_non_projective_second_best_crosses():
    # the best tree is projective, the second best only without the projectivity constraint
    arc = np.full((5, 5), -5.0)
    for h, m, s in ((0, 2, 5), (2, 1, 5), (2, 4, 5), (4, 3, 5), (1, 3, 4.9)):
        arc[h, m] = s
    best = [-1, 2, 0, 4, 2]
    crossing = [-1, 2, 0, 1, 2]  # 1 -> 3 crosses 2 -> 4
    trees, _ = kbest_mst(arc, 2)
    assert trees.tolist() == [best, crossing]
    trees, _ = kbest_eisner(arc, 2)
    assert trees[0].tolist() == best and trees[1].tolist() != crossing


@pytest.mark.parametrize("bad, match", [(0, "positive integer"), (-1, "positive integer"), (2.5, "positive integer"),
                                        (True, "positive integer")])
def test_bad_k(bad, match):
    for kbest, _ in KBEST.values():
        with pytest.raises(ValueError, match=match):
            kbest(np.zeros((3, 3)), bad)


def test_bad_arc_and_chart_limit():
    for kbest, _ in KBEST.values():
        with pytest.raises(ValueError, match="square"):
            kbest(np.zeros((3, 4)), 2)
        with pytest.raises(ValueError, match="NaN"):
            kbest(np.full((3, 3), np.nan), 2)
    with pytest.raises(ValueError, match="chart limit"):
        kbest_eisner(np.zeros((300, 300)), 100)


@settings(max_examples=80, deadline=None)
@given(n=st.integers(0, 25), k=st.integers(1, 30), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1e-3, 1.0, 1e4]), integer=st.booleans())
def test_always_distinct_valid_trees(n, k, seed, scale, integer):
    rng = np.random.default_rng(seed)
    arc = rng.normal(scale=scale, size=(n + 1, n + 1))
    if integer:
        arc = np.round(arc)
    for kind, (kbest, exact) in KBEST.items():
        trees, scores = kbest(arc, k)
        _check_list(trees, scores, arc, k, kind == "projective")
        assert np.array_equal(trees[0], exact(arc))
        if n >= 6:  # more than 30 projective trees
            assert len(trees) == k


@pytest.mark.parametrize("draw", ["normal", "integer"])
def test_sibling_k_best_against_enumeration(draw):
    rng = np.random.default_rng(31 + (draw == "integer"))
    for _ in range(40):
        n = int(rng.integers(0, 7))
        k = int(rng.integers(1, 40))
        shape = (n + 1,) * 2
        if draw == "normal":
            arc, sib = rng.normal(size=shape), rng.normal(size=shape + (n + 1,))
        else:
            arc = rng.integers(-2, 3, size=shape).astype(float)
            sib = rng.integers(-2, 3, size=shape + (n + 1,)).astype(float)
        trees, scores = kbest_eisner(arc, k, sib)
        every = _trees(n, True)
        brute = np.sort([reference_score(t, arc, sib) for t in every])[::-1][:k]
        assert len(trees) == len(brute) and len({tuple(t) for t in trees}) == len(trees)
        for tree, score in zip(trees, scores):
            assert tree_problem(tree) == "" and is_projective(tree)
            assert score == pytest.approx(reference_score(tree, arc, sib), abs=1e-9)
        assert np.allclose(scores, brute, atol=1e-9)
        assert np.array_equal(trees[0], decode_eisner(arc, sib))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 20), k=st.integers(1, 20), seed=st.integers(0, 2**32 - 1))
def test_sibling_always_distinct_valid_trees(n, k, seed):
    rng = np.random.default_rng(seed)
    arc, sib = rng.normal(size=(n + 1, n + 1)), rng.normal(size=(n + 1,) * 3)
    trees, scores = kbest_eisner(arc, k, sib)
    assert len({tuple(t) for t in trees}) == len(trees)
    assert all(tree_problem(t) == "" and is_projective(t) for t in trees)
    assert np.all(np.diff(scores) <= 1e-9)
    assert np.array_equal(trees[0], decode_eisner(arc, sib))
