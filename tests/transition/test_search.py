"""Greedy and beam search on random weights: always trees; beam 1 equals greedy."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_hcparse.decoders import tree_problem
from spacy_hcparse.transition.features import get_templates, token_attrs
from spacy_hcparse.transition.search import beam_parse, greedy_parse

N_BUCKETS = 2**12


def run(lengths, n_labels, seed, width):
    rng = np.random.default_rng(seed)
    attrs = np.concatenate([token_attrs(rng.integers(0, 2**62, size=(n, 5)), False) for n in lengths])
    offsets = np.cumsum([0] + [n + 1 for n in lengths]).astype(np.int64)
    W = rng.normal(size=N_BUCKETS + 1 + 2 * n_labels).astype("f")
    heads = np.empty(len(attrs), dtype=np.int64)
    labels = np.empty(len(attrs), dtype=np.int64)
    args = (attrs, offsets, W, get_templates("zhang_nivre"), np.int64(N_BUCKETS - 1), n_labels, 0)
    if width == 0:
        greedy_parse(*args, heads, labels)
    else:
        beam_parse(*args, width, heads, labels)
    return [(heads[lo:hi], labels[lo + 1 : hi]) for lo, hi in zip(offsets[:-1], offsets[1:])]


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 25), min_size=1, max_size=4),
    n_labels=st.integers(2, 4),
    seed=st.integers(0, 2**31 - 1),
    width=st.sampled_from([0, 1, 3, 8]),
)
def test_random_weights_always_give_trees(lengths, n_labels, seed, width):
    for heads, labels in run(lengths, n_labels, seed, width):
        assert heads[0] == -1
        if len(heads) > 1:
            assert not tree_problem(heads), tree_problem(heads)
            assert ((heads[1:] == 0) == (labels == 0)).all()  # ROOT (label 0) exactly on the root's child


def test_beam_of_one_is_greedy():
    for seed in range(5):
        greedy = run([7, 12, 1], 3, seed, 0)
        beam = run([7, 12, 1], 3, seed, 1)
        for (h1, l1), (h2, l2) in zip(greedy, beam):
            assert h1.tolist() == h2.tolist() and l1.tolist() == l2.tolist()
