"""Pruning and factor bookkeeping agree with plain reference loops."""
import numpy as np
import pytest

from spacy_hcparse import factors
from tests.decoders.brute import all_trees, reference_score


def ref_sibling_triples(mask):
    out = set()
    size = len(mask)
    for h in range(size):
        for m in range(1, size):
            if not mask[h, m] or m == h:
                continue
            out.add((h, h, m))
            for s in range(1, size):
                if mask[h, s] and min(h, m) < s < max(h, m):
                    out.add((h, s, m))
    return out


def ref_grand_triples(mask):
    size = len(mask)
    return {(g, h, m) for m in range(1, size) for h in range(1, size) for g in range(size)
            if mask[h, m] and mask[g, h] and g != m}


@pytest.mark.parametrize("seed", range(5))
def test_triples_match_reference(seed):
    rng = np.random.default_rng(seed)
    arc = rng.normal(size=(9, 9))
    mask = factors.candidate_heads(arc, top_k=3)
    assert mask[0, 1:].all() and not mask[:, 0].any() and not mask.diagonal().any()
    assert set(map(tuple, factors.sibling_triples(mask))) == ref_sibling_triples(mask)
    assert set(map(tuple, factors.grandparent_triples(mask))) == ref_grand_triples(mask)


def test_tree_factors_score_like_reference():
    rng = np.random.default_rng(0)
    arc, sib, grand = rng.normal(size=(6, 6)), rng.normal(size=(6, 6, 6)), rng.normal(size=(6, 6, 6))
    for heads in all_trees(5)[::37]:
        s = factors.tree_sibling_factors(heads)
        g = factors.tree_grand_factors(heads)
        total = arc[heads[1:], np.arange(1, 6)].sum() + sib[tuple(s.T)].sum() + grand[tuple(g.T)].sum()
        assert total == pytest.approx(reference_score(heads, arc, sib, grand))


def test_factor_gradient_counts():
    mask = np.ones((5, 5), dtype=bool)
    mask[:, 0] = False
    np.fill_diagonal(mask, False)
    triples = factors.sibling_triples(mask)
    pred = np.array([-1, 0, 1, 1, 1])
    gold = np.array([-1, 0, 1, 2, 1])
    grad = factors.factor_gradient(triples, factors.tree_sibling_factors(pred), factors.tree_sibling_factors(gold), 5)
    got = {tuple(t): g for t, g in zip(triples, grad) if g}
    assert got == {(1, 2, 3): 1.0, (1, 3, 4): 1.0, (1, 2, 4): -1.0, (2, 2, 3): -1.0}
