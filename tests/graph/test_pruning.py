"""Pruning's candidates and triples agree with plain reference loops."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

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


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_spans=st.integers(0, 7), top_k=st.integers(1, 5),
       integer=st.booleans())
def test_prune_batch_is_the_per_span_pruning(seed, n_spans, top_k, integer):
    """Masks and triples of a batch in three compiled calls: the per-span functions' arrays (the
    same order, dtype int32), ties included (small integer scores); kept arcs, spans without
    factors of a type, and spans of 0 and 1 words."""
    rng = np.random.default_rng(seed)
    arcs, keep = [], []
    for _ in range(n_spans):
        size = int(rng.integers(1, 10))
        arc = rng.integers(-2, 3, size=(size, size)) if integer else rng.normal(size=(size, size))
        arcs.append(arc.astype("f"))
        heads = np.concatenate([[-1], rng.integers(-1, size, size=size - 1)])
        heads[1:][heads[1:] == np.arange(1, size)] = -1  # no word heads itself
        keep.append(heads if rng.random() < 0.5 else None)
    sib, grand = list(rng.random(n_spans) < 0.7), list(rng.random(n_spans) < 0.7)
    pruned = pruning.prune_batch(arcs, top_k, keep, sib, grand)
    for i, (arc, k) in enumerate(zip(arcs, keep)):
        mask = pruning.candidate_heads(np.asarray(arc, np.float64), top_k, keep=k)
        assert pruned.masks[i].tolist() == mask.tolist()
        for got, wanted, build in ((pruned.sib[i], sib[i], pruning.sibling_triples),
                                   (pruned.grand[i], grand[i], pruning.grandparent_triples)):
            expected = build(mask) if wanted else np.zeros((0, 3), np.int32)
            assert got.dtype == np.int32 and got.tolist() == expected.tolist()
