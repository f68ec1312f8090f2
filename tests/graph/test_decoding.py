"""The registered decoders' default settings keep the properties they were chosen for.

Conventions as in ``spacy_hcparse.decoders``: index 0 is the root; ``arc[h, m]``,
``sib[h, s, m]``, ``grand[g, h, m]``.
"""
import numpy as np
import pytest

from spacy_hcparse.decoders import decode_dual
from spacy_hcparse.graph.decoding import make_dual
from tests.decoders.brute import best_tree, random_scores


def test_dual_v1_finishes_with_branch_and_bound():
    # Random N(0, 1) scores over 5 words: 200 subgradient iterations alone (Dual.v1 without
    # branch and bound) leave this sentence uncertified; Dual.v1's defaults prove the optimum.
    rng = np.random.default_rng(1)
    n = 5
    arc, sib, grand = random_scores(rng, n, True, True)
    decoder = make_dual()
    alone = decode_dual(arc, sib, grand, max_iter=decoder.options["max_iter"])
    assert not alone.certified
    result = decoder(arc, sib, grand)
    best, _ = best_tree(n, arc, sib, grand)
    assert result.certified and result.score == pytest.approx(best, abs=1e-9)
    assert result.upper_bound == pytest.approx(best, abs=1e-9)
