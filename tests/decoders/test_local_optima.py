"""count_local_optima against a direct enumeration of trees and their single-head-change moves."""
import itertools
from functools import lru_cache

import numpy as np
import pytest

from spacy_hcparse.decoders._checks import tree_problem
from spacy_hcparse.decoders.local_optima import count_local_optima
from spacy_hcparse.decoders.mst import decode_mst

from .brute import all_trees


@lru_cache(maxsize=None)
def neighbours(n):
    """For each tree of all_trees(n), the indices of the trees one valid head change away.

    Validity is membership in all_trees (single root, no cycle), so this knows nothing of the
    counter's characterisation. Rows are padded with the tree's own index.
    """
    trees = all_trees(n)
    index = {tuple(t): i for i, t in enumerate(trees)}
    rows = []
    for i, t in enumerate(trees):
        row = []
        for m in range(1, n + 1):
            for h in range(n + 1):
                if h != m and h != t[m]:
                    new = list(t)
                    new[m] = h
                    j = index.get(tuple(new))
                    if j is not None:
                        row.append(j)
        rows.append(row)
    width = max(1, max(len(r) for r in rows))
    return np.array([r + [i] * (width - len(r)) for i, r in enumerate(rows)], dtype=np.int64)


def brute_count(arc):
    n = arc.shape[0] - 1
    if n == 0:
        return 1
    trees = all_trees(n)
    scores = arc[trees[:, 1:], np.arange(1, n + 1)].sum(axis=1)
    best_move = scores[neighbours(n)].max(axis=1)
    return int(np.sum(best_move <= scores + 1e-9))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_matches_brute_force_without_ties(seed):
    rng = np.random.default_rng(seed)
    for _ in range(100):
        n = int(rng.integers(1, 7))
        arc = rng.normal(size=(n + 1, n + 1))
        assert count_local_optima(arc) == brute_count(arc)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("values", [2, 3, 5])
def test_matches_brute_force_with_ties(seed, values):
    rng = np.random.default_rng(10 * seed + values)
    for _ in range(60):
        n = int(rng.integers(1, 7))
        arc = rng.integers(0, values, size=(n + 1, n + 1)).astype(float)
        assert count_local_optima(arc) == brute_count(arc)


def test_peaked_scores_match_brute_force():
    rng = np.random.default_rng(11)
    for _ in range(40):
        n = 6
        arc = rng.normal(size=(n + 1, n + 1))
        gold = all_trees(n)[rng.integers(len(all_trees(n)))]
        arc[gold[1:], np.arange(1, n + 1)] += 4.0
        assert count_local_optima(arc) == brute_count(arc)


def test_all_ties_every_tree_is_optimal():
    for n in range(1, 6):
        assert count_local_optima(np.zeros((n + 1, n + 1))) == n ** (n - 1)


@pytest.mark.parametrize("size, expected", [(1, 1), (2, 1), (3, 2)])
def test_tiny_sentences(size, expected):
    # n = 2: both trees are optimal (no valid move exists in either).
    assert count_local_optima(np.random.default_rng(0).normal(size=(size, size))) == expected


def test_root_row_is_irrelevant():
    rng = np.random.default_rng(3)
    arc = rng.normal(size=(9, 9))
    other = arc.copy()
    other[0, :] = rng.normal(scale=100.0, size=9)
    assert count_local_optima(arc) == count_local_optima(other)


def test_single_cycle_known_count():
    # Words prefer heads in the cycle 1 -> 2 -> 3 -> 1 (each word's best head is the previous
    # one): each of the 3 words can be the root child, the others follow the cycle.
    arc = np.zeros((4, 4))
    arc[1, 2] = arc[2, 3] = arc[3, 1] = 1.0
    arc[2, 1] = arc[3, 2] = arc[1, 3] = 0.5
    assert count_local_optima(arc) == brute_count(arc) == 3


def test_max_count_caps_the_enumeration():
    arc = np.zeros((8, 8))  # 7^6 = 117649 optima
    assert count_local_optima(arc, max_count=1000) == 1000
    rng = np.random.default_rng(2)
    arc = rng.normal(size=(31, 31))
    assert count_local_optima(arc, max_count=5000) == 5000
    with pytest.raises(ValueError, match="max_count"):
        count_local_optima(arc, max_count=0)


def test_global_optimum_is_a_local_optimum():
    rng = np.random.default_rng(4)
    for _ in range(20):
        n = 6
        arc = rng.normal(size=(n + 1, n + 1))
        heads = decode_mst(arc)
        assert tree_problem(heads) == ""
        trees = all_trees(n)
        i = int(np.flatnonzero((trees == heads).all(axis=1))[0])
        scores = arc[trees[:, 1:], np.arange(1, n + 1)].sum(axis=1)
        assert scores[neighbours(n)[i]].max() <= scores[i] + 1e-9
        assert count_local_optima(arc) >= 1


def test_moderate_lengths_finish():
    rng = np.random.default_rng(9)
    for n in (15, 40, 60):
        assert count_local_optima(rng.normal(size=(n + 1, n + 1)), max_count=20000) >= 1


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.zeros((3, 4)), "square"),
        (np.zeros((3, 3, 3)), "square"),
        (np.zeros((0, 0)), "at least one row"),
        (np.array([[0.0, np.nan], [0.0, 0.0]]), "NaN or inf"),
        ([[0.0, 1.0], [0.0]], "numeric array"),
    ],
)
def test_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        count_local_optima(bad)


# ----------------------------------------------------------------------------- Zhang et al.'s
# definition (any number of root children, moves to the root allowed) and absent arcs
@lru_cache(maxsize=None)
def _all_multi_root(n):
    """All acyclic head arrays over n words with any number of root children."""
    out = []
    for choice in itertools.product(range(n + 1), repeat=n):
        heads = (-1,) + choice
        if any(heads[m] == m for m in range(1, n + 1)):
            continue
        ok = True
        for m in range(1, n + 1):
            seen, v = set(), m
            while v != 0 and ok:
                if v in seen:
                    ok = False
                seen.add(v)
                v = heads[v]
        if ok:
            out.append(heads)
    return np.array(out, dtype=np.int64)


def general_brute_count(arc, single_root):
    """Local optima by enumeration: allowed trees of the family, single head changes to allowed
    heads that stay in the family, strict improvement."""
    n = arc.shape[0] - 1
    allowed = np.isfinite(arc)
    trees = all_trees(n) if single_root else _all_multi_root(n)
    trees = [t for t in trees if all(allowed[t[m], m] for m in range(1, n + 1))]
    family = {tuple(t) for t in trees}
    count = 0
    for t in trees:
        score = sum(arc[t[m], m] for m in range(1, n + 1))
        better = False
        for m in range(1, n + 1):
            for h in range(n + 1):
                if h == m or h == t[m] or not allowed[h, m]:
                    continue
                new = list(t)
                new[m] = h
                if tuple(new) in family and score + arc[h, m] - arc[t[m], m] > score + 1e-9:
                    better = True
        count += not better
    return count


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("absent", [0.0, 0.3])
def test_definitions_and_absent_arcs_match_brute_force(single_root, absent):
    rng = np.random.default_rng(int(single_root) + int(10 * absent))
    for _ in range(80):
        n = int(rng.integers(1, 6))
        arc = rng.normal(size=(n + 1, n + 1))
        if rng.random() < 0.5:  # peaked, like trained scores
            gold = all_trees(n)[rng.integers(len(all_trees(n)))]
            arc[gold[1:], np.arange(1, n + 1)] += 3.0
        arc[rng.random(arc.shape) < absent] = -np.inf
        expected = general_brute_count(arc, single_root)
        assert count_local_optima(arc, single_root=single_root) == expected


@pytest.mark.parametrize("values", [2, 3])
def test_zhang_definition_with_ties(values):
    rng = np.random.default_rng(values)
    for _ in range(60):
        n = int(rng.integers(1, 6))
        arc = rng.integers(0, values, size=(n + 1, n + 1)).astype(float)
        if rng.random() < 0.3:
            arc[rng.random(arc.shape) < 0.3] = -np.inf
        assert count_local_optima(arc, single_root=False) == general_brute_count(arc, False)


def test_root_as_a_head_settles_words():
    # Every word prefers the root: one tree (all on the root) is the only local optimum.
    arc = np.zeros((5, 5))
    arc[0, :] = 5.0
    assert count_local_optima(arc, single_root=False) == 1
