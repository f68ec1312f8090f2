"""decode_eisner: exact projective decoding, first order and with sibling factors."""
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders._checks import tree_problem
from spacy_hcparse.decoders.eisner import decode_eisner

from .brute import all_trees, is_projective, reference_score


@lru_cache(maxsize=None)
def projective_trees(n):
    return np.array([t for t in all_trees(n) if is_projective(t)], dtype=np.int64).reshape(-1, n + 1)


def brute_best_score(arc, sib=None):
    n = arc.shape[0] - 1
    trees = projective_trees(n)
    if sib is None:
        return (arc[trees[:, 1:], np.arange(1, n + 1)]).sum(axis=1).max()
    return max(reference_score(t, arc, sib) for t in trees)


def draw(rng, n, kind, cube=False):
    shape = (n + 1,) * (3 if cube else 2)
    if kind == "normal":
        return rng.normal(size=shape)
    return rng.integers(-2, 3, size=shape).astype(float)  # ties: compare scores, not heads


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["normal", "integer"])
def test_first_order_matches_brute_force(seed, kind):
    rng = np.random.default_rng(seed)
    for _ in range(100):
        n = int(rng.integers(1, 7))
        arc = draw(rng, n, kind)
        heads = decode_eisner(arc)
        assert tree_problem(heads) == "" and is_projective(heads)
        assert reference_score(heads, arc) == pytest.approx(brute_best_score(arc), abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["normal", "integer"])
def test_sibling_matches_brute_force(seed, kind):
    rng = np.random.default_rng(100 + seed)
    for _ in range(60):
        n = int(rng.integers(1, 7))
        arc, sib = draw(rng, n, kind), draw(rng, n, kind, cube=True)
        heads = decode_eisner(arc, sib)
        assert tree_problem(heads) == "" and is_projective(heads)
        assert reference_score(heads, arc, sib) == pytest.approx(brute_best_score(arc, sib), abs=1e-9)


def test_zero_sib_equals_first_order_score():
    rng = np.random.default_rng(5)
    arc = rng.normal(size=(12, 12))
    a = decode_eisner(arc)
    b = decode_eisner(arc, np.zeros((12, 12, 12)))
    assert reference_score(a, arc) == pytest.approx(reference_score(b, arc))


def test_projective_answer_differs_from_crossing_optimum():
    # The best tree (0->2, 2->4, 4->1, 2->3) is non-projective; Eisner must return a projective one.
    arc = np.full((5, 5), -10.0)
    arc[0, 2] = arc[2, 4] = arc[4, 1] = arc[2, 3] = 5.0
    heads = decode_eisner(arc)
    assert is_projective(heads)
    assert reference_score(heads, arc) == pytest.approx(brute_best_score(arc))


def test_root_takes_one_child_with_first_sibling_factor():
    # Arcs alone prefer 0 -> 1 (chain 1 -> 2 -> 3); the root's first-modifier factor sib[0, 0, 3]
    # makes 3 the root child instead.
    arc = np.full((4, 4), -1.0)
    arc[0, 1], arc[0, 3] = 2.0, 1.0
    arc[1, 2], arc[2, 3], arc[3, 2], arc[2, 1] = 1.0, 1.0, 1.0, 1.0
    assert list(decode_eisner(arc)) == [-1, 0, 1, 2]
    sib = np.zeros((4, 4, 4))
    sib[0, 0, 3] = 5.0
    assert list(decode_eisner(arc, sib)) == [-1, 2, 3, 0]


def test_sibling_factor_chains_outward():
    # Head 1 with right modifiers 2 and 3: sib[1, 1, 2] (closest) and sib[1, 2, 3] (next).
    arc = np.zeros((4, 4))
    arc[0, 1] = 10.0
    sib = np.zeros((4, 4, 4))
    sib[1, 2, 3] = 3.0  # rewards "3 is the next modifier of 1 after 2"
    sib[2, 2, 3] = 2.0  # rewards 2 -> 3 as 2's closest right modifier
    assert list(decode_eisner(arc, sib)) == [-1, 0, 1, 1]


@pytest.mark.parametrize("size, expected", [(1, [-1]), (2, [-1, 0])])
def test_tiny_sentences(size, expected):
    assert list(decode_eisner(np.zeros((size, size)))) == expected
    out = decode_eisner(np.zeros((size, size)), np.zeros((size,) * 3))
    assert out.dtype == np.int64 and list(out) == expected


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 60), seed=st.integers(0, 2**32 - 1), use_sib=st.booleans())
def test_always_a_valid_projective_tree(n, seed, use_sib):
    rng = np.random.default_rng(seed)
    arc = rng.normal(size=(n + 1, n + 1))
    sib = rng.normal(size=(n + 1,) * 3) if use_sib else None
    if seed % 4 == 0:
        arc = np.round(arc)
    heads = decode_eisner(arc, sib)
    assert heads.dtype == np.int64 and heads.shape == (n + 1,)
    assert tree_problem(heads) == ""
    assert is_projective(list(heads))


@pytest.mark.parametrize(
    "arc, sib, match",
    [
        (np.zeros((3, 4)), None, "square"),
        (np.zeros((3, 3, 3)), None, "square"),
        (np.zeros((0, 0)), None, "at least one row"),
        (np.array([[0.0, np.nan], [0.0, 0.0]]), None, "NaN or inf"),
        ([[0.0, 1.0], [0.0]], None, "numeric array"),
        (np.zeros((3, 3)), np.zeros((3, 3)), "sib must have shape"),
        (np.zeros((3, 3)), np.zeros((4, 4, 4)), "sib must have shape"),
        (np.zeros((3, 3)), np.full((3, 3, 3), np.inf), "sib contains NaN or inf"),
    ],
)
def test_bad_input(arc, sib, match):
    with pytest.raises(ValueError, match=match):
        decode_eisner(arc, sib)
