"""The structured hinge's factor bookkeeping agrees with plain reference loops."""
import numpy as np
import pytest

from spacy_hcparse.graph import hinge
from spacy_hcparse.graph import pruning
from tests.decoders.brute import all_trees, reference_score


def test_tree_factors_score_like_reference():
    rng = np.random.default_rng(0)
    arc, sib, grand = rng.normal(size=(6, 6)), rng.normal(size=(6, 6, 6)), rng.normal(size=(6, 6, 6))
    for heads in all_trees(5)[::37]:
        s = hinge.sibling_factors(heads)
        g = hinge.tree_grand_factors(heads)
        total = arc[heads[1:], np.arange(1, 6)].sum() + sib[tuple(s.T)].sum() + grand[tuple(g.T)].sum()
        assert total == pytest.approx(reference_score(heads, arc, sib, grand))


def test_factor_gradient_counts():
    mask = np.ones((5, 5), dtype=bool)
    mask[:, 0] = False
    np.fill_diagonal(mask, False)
    triples = pruning.sibling_triples(mask)
    pred = np.array([-1, 0, 1, 1, 1])
    gold = np.array([-1, 0, 1, 2, 1])
    grad = hinge.factor_gradient(triples, hinge.sibling_factors(pred), hinge.sibling_factors(gold), 5)
    got = {tuple(t): g for t, g in zip(triples, grad) if g}
    assert got == {(1, 2, 3): 1.0, (1, 3, 4): 1.0, (1, 2, 4): -1.0, (2, 2, 3): -1.0}
