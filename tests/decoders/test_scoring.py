"""tree_score against brute.reference_score, and the input checks of _checks."""
import numpy as np
import pytest

from spacy_hcparse.decoders._checks import check_arc, check_cube, check_heads, check_inputs, tree_problem
from spacy_hcparse.decoders.scoring import full_score, sib_part, tree_score

from .brute import all_trees, random_scores, reference_score, sibling_factors


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tree_score_matches_reference(seed):
    rng = np.random.default_rng(seed)
    for n in range(1, 6):
        arc, sib, grand = random_scores(rng, n, sib=True, grand=True)
        trees = all_trees(n)
        for heads in trees[rng.choice(len(trees), size=min(len(trees), 40), replace=False)]:
            for s, g in ((None, None), (sib, None), (None, grand), (sib, grand)):
                want = reference_score(heads, arc, s, g)
                assert tree_score(heads, arc, s, g) == pytest.approx(want, abs=1e-9)
            assert full_score(heads, arc, sib, grand, True, True) == pytest.approx(
                reference_score(heads, arc, sib, grand), abs=1e-9
            )


def test_sibling_factors_are_the_walk_sib_part_sums():
    rng = np.random.default_rng(3)
    for n in range(1, 6):
        _, sib, _ = random_scores(rng, n, sib=True, grand=False)
        for heads in all_trees(n):
            factors = sibling_factors(heads)
            assert len(factors) == n and len({(h, m) for h, _, m in factors.tolist()}) == n
            assert sib[tuple(factors.T)].sum() == pytest.approx(sib_part(np.asarray(heads, dtype=np.int64), sib))
    assert sibling_factors([-1, 2, 0, 2, 3]).tolist() == [[0, 0, 2], [2, 2, 3], [2, 2, 1], [3, 3, 4]]


def test_tree_score_hand_example():
    # 0 -> 2, 2 -> 1, 2 -> 3, 3 -> 4
    heads = [-1, 2, 0, 2, 3]
    arc = np.arange(25, dtype=float).reshape(5, 5)
    sib = np.zeros((5, 5, 5))
    sib[2, 2, 1] = 1.0  # closest left modifier of 2
    sib[2, 2, 3] = 10.0  # closest right modifier of 2
    sib[0, 0, 2] = 100.0  # the root's only modifier
    sib[3, 3, 4] = 1000.0
    grand = np.zeros((5, 5, 5))
    grand[0, 2, 1] = 0.5
    grand[2, 3, 4] = 0.25
    arcs = arc[2, 1] + arc[0, 2] + arc[2, 3] + arc[3, 4]
    assert tree_score(heads, arc) == arcs
    assert tree_score(heads, arc, sib) == arcs + 1111.0
    assert tree_score(heads, arc, grand=grand) == arcs + 0.75


def test_tiny_trees():
    assert tree_score([-1], np.zeros((1, 1))) == 0.0
    assert tree_score([-1, 0], [[0.0, 2.5], [0.0, 0.0]]) == 2.5


@pytest.mark.parametrize(
    "heads, problem",
    [
        ([-1, 0, 1], ""),
        ([0, 0, 1], "heads[0] must be -1"),
        ([-1, 0, 3], "out of range"),
        ([-1, 0, 2], "own head"),
        ([-1, 0, 0], "exactly one word attached to the root"),
        ([-1, 2, 1], "exactly one word attached to the root"),
        ([-1, 0, 3, 2], "cycle"),
        ([], "empty"),
    ],
)
def test_tree_problem(heads, problem):
    found = tree_problem(np.array(heads, dtype=np.int64))
    assert (found == "") if problem == "" else (problem in found)


@pytest.mark.parametrize(
    "arc, match",
    [
        (np.zeros((2, 3)), "square"),
        (np.zeros(4), "square"),
        (np.zeros((2, 2, 2)), "square"),
        (np.zeros((0, 0)), "at least one row"),
        (np.array([[0.0, np.nan], [0.0, 0.0]]), "NaN or inf"),
        (np.array([[0.0, np.inf], [0.0, 0.0]]), "NaN or inf"),
        ([[1.0, 2.0], [3.0]], "numeric array"),
        (np.array([[1j, 0], [0, 0]]), "real-valued"),
        (np.array([["x"]]), "numeric array"),
    ],
)
def test_check_arc_rejects(arc, match):
    with pytest.raises(ValueError, match=match):
        check_arc(arc)


def test_check_arc_accepts_lists_ints_and_ignores_unused_cells():
    out = check_arc([[0, 1], [0, 0]])
    assert out.dtype == np.float64 and out.flags.c_contiguous
    arc = np.ones((3, 3))
    arc[:, 0] = np.nan
    np.fill_diagonal(arc, np.inf)
    check_arc(arc)  # column 0 and the diagonal are never used


def test_check_arc_size_limit():
    from spacy_hcparse.decoders._checks import MAX_WORDS

    with pytest.raises(ValueError, match="MAX_WORDS"):
        check_arc(np.zeros((MAX_WORDS + 2, MAX_WORDS + 2), dtype=np.float32))


def test_check_cube_and_inputs():
    assert check_cube(None, "sib", 3) is None
    with pytest.raises(ValueError, match="sib must have shape"):
        check_cube(np.zeros((3, 3)), "sib", 3)
    with pytest.raises(ValueError, match="grand contains NaN"):
        check_cube(np.full((2, 2, 2), np.nan), "grand", 2)
    with pytest.raises(ValueError, match="grand must have shape"):
        check_inputs(np.zeros((3, 3)), None, np.zeros((2, 2, 2)))


@pytest.mark.parametrize(
    "heads, match",
    [
        ([-1, 0], "shape"),
        ([[-1, 0, 1]], "shape"),
        (["a", "b", "c"], "integer array"),
        ([-1, 0, 0], "not a valid tree"),
    ],
)
def test_check_heads_rejects(heads, match):
    with pytest.raises(ValueError, match=match):
        check_heads(heads, 3)


def test_tree_score_rejects_bad_heads_and_scores():
    with pytest.raises(ValueError, match="not a valid tree"):
        tree_score([-1, 2, 1], np.zeros((3, 3)))
    with pytest.raises(ValueError, match="square"):
        tree_score([-1, 0], np.zeros((2, 3)))
