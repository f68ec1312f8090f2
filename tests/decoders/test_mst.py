"""decode_mst / mst_kernel: exact single-root maximum spanning arborescence."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders._checks import tree_problem
from spacy_hcparse.decoders.mst import decode_mst, mst_kernel

from .brute import all_trees, reference_score


def brute_best_score(arc):
    """Best single-root tree score by enumeration (vectorised over brute.all_trees)."""
    n = arc.shape[0] - 1
    trees = all_trees(n)
    return (arc[trees[:, 1:], np.arange(1, n + 1)]).sum(axis=1).max()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("kind", ["normal", "integer"])
def test_matches_brute_force(seed, kind):
    rng = np.random.default_rng(seed)
    for _ in range(100):
        n = int(rng.integers(1, 7))
        if kind == "normal":
            arc = rng.normal(size=(n + 1, n + 1))
        else:  # many ties: compare scores, not heads
            arc = rng.integers(-2, 3, size=(n + 1, n + 1)).astype(float)
        heads = decode_mst(arc)
        assert tree_problem(heads) == ""
        assert reference_score(heads, arc) == pytest.approx(brute_best_score(arc), abs=1e-9)


def test_strong_root_column_still_single_root():
    # Every word prefers the root: the unconstrained arborescence would be a star.
    arc = np.zeros((5, 5))
    arc[0, 1:] = 10.0
    arc[1, 2:] = 1.0  # word 1 is the best non-root head of the others
    heads = decode_mst(arc)
    assert list(heads) == [-1, 0, 1, 1, 1]


def test_cycle_is_broken_optimally():
    # 1 <-> 2 prefer each other (a greedy cycle); entering at 1 from the root costs least.
    arc = np.full((4, 4), -5.0)
    arc[2, 1], arc[1, 2] = 4.0, 4.0
    arc[0, 1], arc[0, 2] = 1.0, -1.0
    arc[2, 3] = 2.0
    assert list(decode_mst(arc)) == [-1, 0, 1, 2]


def test_swapped_root_arc_can_return_through_a_cycle():
    # The Zmigrod et al. subtlety: a root arc swapped away re-enters when its swap closes a cycle.
    arc = np.array([[-2, 2, 2, -2], [0, -1, -1, 0], [1, -2, 2, -1], [2, -1, -1, 0]], dtype=float)
    heads = decode_mst(arc)
    assert reference_score(heads, arc) == pytest.approx(1.0)


def test_non_projective_answer():
    arc = np.full((5, 5), -10.0)
    arc[0, 2] = 5.0
    arc[2, 4] = 5.0
    arc[4, 1] = 5.0
    arc[2, 3] = 5.0  # 4 -> 1 crosses 2 -> 3
    assert list(decode_mst(arc)) == [-1, 4, 0, 2, 2]


@pytest.mark.parametrize("size, expected", [(1, [-1]), (2, [-1, 0])])
def test_tiny_sentences(size, expected):
    out = decode_mst(np.zeros((size, size)))
    assert out.dtype == np.int64
    assert list(out) == expected


def test_kernel_matches_wrapper_and_keeps_input():
    rng = np.random.default_rng(7)
    arc = rng.normal(size=(30, 30))
    before = arc.copy()
    assert np.array_equal(mst_kernel(arc), decode_mst(arc))
    assert np.array_equal(arc, before)


def test_accepts_lists_and_ints_and_ignores_unused_cells():
    arc = [[0, 3, 1], [0, 0, 2], [0, 1, 0]]
    assert list(decode_mst(arc)) == [-1, 0, 1]
    arr = np.array(arc, dtype=float)
    arr[:, 0] = np.nan  # column 0 and the diagonal are never used
    np.fill_diagonal(arr, np.inf)
    assert list(decode_mst(arr)) == [-1, 0, 1]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 60), seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([1e-3, 1.0, 1e6]))
def test_always_a_valid_tree(n, seed, scale):
    rng = np.random.default_rng(seed)
    arc = rng.normal(scale=scale, size=(n + 1, n + 1))
    if seed % 3 == 0:
        arc[0, 1:] += 3 * scale  # root-loving scores: the constraint matters
    if seed % 5 == 0:
        arc = np.round(arc)  # ties
    heads = decode_mst(arc)
    assert heads.dtype == np.int64 and heads.shape == (n + 1,)
    assert tree_problem(heads) == ""


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.zeros((3, 4)), "square"),
        (np.zeros(3), "square"),
        (np.zeros((3, 3, 3)), "square"),
        (np.zeros((0, 0)), "at least one row"),
        (np.array([[0.0, np.nan], [0.0, 0.0]]), "NaN or inf"),
        (np.array([[0.0, np.inf, 1.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]), "NaN or inf"),
        ([[0.0, 1.0], [0.0]], "numeric array"),
        (np.array([["a", "b"], ["c", "d"]]), "numeric array"),
    ],
)
def test_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        decode_mst(bad)
