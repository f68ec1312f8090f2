"""Pruning's candidates and triples agree with plain reference loops; the candidates always hold
a projective tree with one root child."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.graph import pruning
from tests.decoders.brute import all_trees, is_projective


def mask_triples(mask, sibling):
    """One mask's sibling (``sibling``) or grandparent triples: ``prune_batch``'s kernel on a batch of one."""
    mask = np.ascontiguousarray(mask, dtype=bool)
    return pruning._triples_batch(mask.ravel(), np.array([len(mask)]), np.array([True]), sibling)[0]


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


def candidate_heads(arc, top_k, keep=None):
    """One span's mask: a batch of one."""
    return pruning.prune_batch([np.asarray(arc)], top_k, [keep], [False], [False]).masks[0]


@pytest.mark.parametrize("seed", range(5))
def test_triples_match_reference(seed):
    rng = np.random.default_rng(seed)
    arc = rng.normal(size=(9, 9))
    mask = candidate_heads(arc, top_k=3)
    assert mask[0, 1:].all() and not mask[:, 0].any() and not mask.diagonal().any()
    assert set(map(tuple, mask_triples(mask, True))) == ref_sibling_triples(mask)
    assert set(map(tuple, mask_triples(mask, False))) == ref_grand_triples(mask)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_spans=st.integers(0, 7), top_k=st.integers(1, 5),
       integer=st.booleans())
def test_prune_batch_is_the_per_span_pruning(seed, n_spans, top_k, integer):
    """Masks and triples of a batch in three compiled calls: each span's as a batch of one (the
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
        mask = candidate_heads(np.asarray(arc, np.float64), top_k, keep=k)
        assert pruned.masks[i].tolist() == mask.tolist()
        for got, wanted, sibling in ((pruned.sib[i], sib[i], True), (pruned.grand[i], grand[i], False)):
            expected = mask_triples(mask, sibling) if wanted else np.zeros((0, 3), np.int32)
            assert got.dtype == np.int32 and got.tolist() == expected.tolist()


def kept_trees(mask):
    """The projective trees with one root child whose arcs are all in ``mask`` (brute force)."""
    return [heads for heads in all_trees(len(mask) - 1)
            if is_projective(heads) and all(mask[heads[m], m] for m in range(1, len(mask)))]


def top_k_only(arc, top_k):
    """The top-k heads and the root, nothing more: pruning before it kept a tree."""
    size = len(arc)
    mask = np.zeros((size, size), bool)
    for m in range(1, size):
        column = np.where(np.arange(size) == m, -np.inf, arc[:, m])
        mask[np.argsort(-column, kind="mergesort")[:min(top_k, size - 1)], m] = True
        mask[0, m], mask[m, m] = True, False
    return mask


def test_blocks_pointing_into_themselves_keep_a_tree():
    """Two halves whose words prefer heads inside their own half (top_k = 1 leaves two trees
    joined only at the root, which takes one child): the mask gains the arcs of one tree."""
    n = 6
    arc = np.full((n + 1, n + 1), -5.0)
    for block in ((1, 2, 3), (4, 5, 6)):
        for h in block:
            for m in block:
                arc[h, m] = 1.0 if h == block[1] else 0.0
    assert not kept_trees(top_k_only(arc, 1))
    mask = candidate_heads(arc, top_k=1)
    trees = kept_trees(mask)
    assert trees
    assert (mask & ~top_k_only(arc, 1)).sum() == 1  # one arc joins the halves: the fewest added
    pruned = pruning.prune_batch([arc.astype("f")], 1, [None], [True], [True])
    assert pruned.masks[0].tolist() == mask.tolist()


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), top_k=st.integers(1, 3), local=st.booleans())
def test_mask_always_holds_a_projective_tree(seed, n, top_k, local):
    """Whatever ``top_k``: some projective tree with one root child uses kept arcs only; a mask
    that held one already is the top-k mask unchanged (the same search space as before)."""
    rng = np.random.default_rng(seed)
    arc = rng.normal(size=(n + 1, n + 1))
    if local:  # words prefer heads near them: the scores that leave no tree
        idx = np.arange(n + 1)
        arc -= 3.0 * np.abs(idx[:, None] - idx[None, :]) * (rng.random((n + 1, n + 1)) < 0.7)
    before = top_k_only(arc, top_k)
    mask = candidate_heads(arc, top_k)
    assert kept_trees(mask)
    if kept_trees(before):
        assert mask.tolist() == before.tolist()
    else:
        assert (mask | before).tolist() == mask.tolist()


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 8), top_k=st.integers(1, 10), odd=st.booleans())
def test_top_heads_are_a_stable_sort_s(seed, n, top_k, odd):
    """The top-k heads (selected without a sort) are the first k of a stable descending argsort
    of each column, the word itself at ``-inf``: ties to the lower head, with ``-inf`` and NaN
    scores (NaN last) and float32 or float64 scores."""
    rng = np.random.default_rng(seed)
    arc = rng.integers(-2, 3, size=(n + 1, n + 1)).astype(float)
    if odd:
        arc[rng.random(arc.shape) < 0.3] = -np.inf
        arc[rng.random(arc.shape) < 0.2] = np.nan
    for scores in (arc, arc.astype(np.float32)):
        mask, size = np.zeros((n + 1) ** 2, dtype=bool), np.array([n + 1])
        pruning._top_heads_batch(scores.ravel(), size, top_k, np.full(n + 1, -1), mask, np.zeros(1, dtype=bool))
        assert mask.reshape(n + 1, n + 1).tolist() == top_k_only(arc, top_k).tolist()


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 6), density=st.floats(0.1, 0.9))
def test_holds_projective_tree_is_brute_force(seed, n, density):
    """The boolean chart finds a projective tree with one root child exactly when one exists."""
    rng = np.random.default_rng(seed)
    mask = rng.random((n + 1, n + 1)) < density
    mask[:, 0] = False
    assert pruning.holds_projective_tree(mask) == bool(kept_trees(mask))
