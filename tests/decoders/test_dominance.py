"""Dominance pruning: the arcs it drops belong to no tree scoring at least the given lower bound
(brute force, n <= 6), the lower bound's own tree keeps its arcs, and a fixed tree is found."""
import numpy as np
import pytest

from spacy_hcparse.decoders.absent import usable_mask
from spacy_hcparse.decoders.dominance import fixed_tree, prune_dominated

from .brute import all_trees, random_scores, reference_score


def _peaked(rng, n):
    arc, sib, grand = random_scores(rng, n, True, True)
    gold = all_trees(n)[rng.integers(len(all_trees(n)))]
    arc[gold[1:], np.arange(1, n + 1)] += 4.0
    return arc, 0.2 * sib, 0.2 * grand, gold


@pytest.mark.parametrize("use_sib, use_grand", [(True, True), (True, False), (False, True)])
def test_dropped_arcs_are_in_no_good_tree(use_sib, use_grand):
    rng = np.random.default_rng(0)
    dropped_any = 0
    for _ in range(40):
        n = int(rng.integers(2, 6))
        arc, sib, grand, gold = _peaked(rng, n)
        sib = sib if use_sib else None
        grand = grand if use_grand else None
        mask = usable_mask(arc)
        lower = reference_score(gold, arc, sib, grand)
        cand = prune_dominated(arc, mask, sib if use_sib else np.zeros((1, 1, 1)),
                               grand if use_grand else np.zeros((1, 1, 1)), use_sib, use_grand,
                               lower)
        assert not (cand & ~mask).any()
        dropped_any += int((mask & ~cand).sum())
        for heads in all_trees(n):
            uses_dropped = any(not cand[heads[m], m] for m in range(1, n + 1))
            if uses_dropped:
                assert reference_score(heads, arc, sib, grand) < lower
        assert all(cand[gold[m], m] for m in range(1, n + 1))
    assert dropped_any > 0


def test_no_lower_bound_drops_nothing():
    rng = np.random.default_rng(1)
    arc, sib, grand = random_scores(rng, 5, True, True)
    mask = usable_mask(arc)
    assert np.array_equal(prune_dominated(arc, mask, sib, grand, True, True, -np.inf), mask)


def test_fixed_tree():
    cand = np.zeros((4, 4), dtype=bool)
    cand[0, 2] = cand[2, 1] = cand[2, 3] = True
    assert fixed_tree(cand).tolist() == [-1, 2, 0, 2]
    cand[1, 3] = True
    assert fixed_tree(cand).shape == (0,)
