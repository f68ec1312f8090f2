"""Pruning's candidates and triples agree with plain reference loops."""
import numpy as np
import pytest

from spacy_hcparse.graph import pruning


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
    mask = pruning.candidate_heads(arc, top_k=3)
    assert mask[0, 1:].all() and not mask[:, 0].any() and not mask.diagonal().any()
    assert set(map(tuple, pruning.sibling_triples(mask))) == ref_sibling_triples(mask)
    assert set(map(tuple, pruning.grandparent_triples(mask))) == ref_grand_triples(mask)
