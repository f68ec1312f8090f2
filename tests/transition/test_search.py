"""Greedy and beam search on random weights: always trees; beam 1 equals greedy."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_hcparse.decoders import tree_problem
from spacy_hcparse.transition.templates import get_templates, token_attrs
from spacy_hcparse.transition.search import beam_parse, greedy_parse

N_BUCKETS = 2**12


def run(lengths, n_labels, seed, width, space=None):
    rng = np.random.default_rng(seed)
    attrs = np.concatenate([token_attrs(rng.integers(0, 2**62, size=(n, 5)), False) for n in lengths])
    offsets = np.cumsum([0] + [n + 1 for n in lengths]).astype(np.int64)
    W = rng.normal(size=N_BUCKETS + 1 + 2 * n_labels).astype("f")
    heads = np.empty(len(attrs), dtype=np.int64)
    labels = np.empty(len(attrs), dtype=np.int64)
    space = np.zeros(len(attrs), dtype=bool) if space is None else space
    args = (attrs, space, offsets, W, get_templates("zhang_nivre"), np.int64(N_BUCKETS - 1), n_labels, 0)
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


def reference_beam(attrs, offsets, W, templates, mask, n_labels, root_label, width):
    """Beam search the plain way: every candidate listed, a stable sort, the first ``width`` kept."""
    from spacy_hcparse.transition.hashed_scoring import score
    from spacy_hcparse.transition.templates import N_VALUES, fill_context, hash_features
    from spacy_hcparse.transition.moves import apply, n_classes, valid_mask
    from spacy_hcparse.transition.state import initial_state

    n_cls = n_classes(n_labels)
    ctx = np.empty(N_VALUES, dtype=np.int64)
    feats = np.empty(templates.shape[0], dtype=np.int64)
    scores = np.empty(n_cls)
    valid = np.empty(n_cls, dtype=bool)
    out = []
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        n = hi - lo - 1
        beam = [(0.0, initial_state(n))]
        for _ in range(2 * n):
            cands = []
            for total, st in beam:
                fill_context(st, attrs[lo:hi], ctx)
                hash_features(ctx, templates, mask, feats)
                score(W, feats, n_cls, scores)
                valid_mask(st, n_labels, root_label, valid)
                cands.extend((total + scores[c], st, c) for c in range(n_cls) if valid[c])
            cands.sort(key=lambda x: -x[0])  # stable: ties keep (item, move) order
            beam = []
            for total, st, c in cands[:width]:
                st = st.copy()
                apply(st, c, n_labels)
                beam.append((total, st))
        out.append(beam[0][1])
    return out


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 12), min_size=1, max_size=3),
    n_labels=st.integers(2, 4),
    seed=st.integers(0, 2**31 - 1),
    width=st.sampled_from([2, 3, 8]),
)
def test_beam_keeps_the_best_candidates_like_a_full_sort(lengths, n_labels, seed, width):
    from spacy_hcparse.transition.state import heads_of, labels_of

    rng = np.random.default_rng(seed)
    attrs = np.concatenate([token_attrs(rng.integers(0, 2**62, size=(n, 5)), False) for n in lengths])
    offsets = np.cumsum([0] + [n + 1 for n in lengths]).astype(np.int64)
    W = rng.normal(size=N_BUCKETS + 1 + 2 * n_labels).astype("f")
    templates = get_templates("zhang_nivre")
    expected = reference_beam(attrs, offsets, W, templates, np.int64(N_BUCKETS - 1), n_labels, 0, width)
    for (heads, labels), st in zip(run(lengths, n_labels, seed, width), expected):
        assert heads[1:].tolist() == heads_of(st)[1:].tolist()
        assert labels.tolist() == labels_of(st).tolist()


@settings(max_examples=60, deadline=None)
@given(
    spaces=st.lists(st.lists(st.booleans(), min_size=0, max_size=15), min_size=1, max_size=4),
    seed=st.integers(0, 2**31 - 1),
    width=st.sampled_from([0, 1, 4]),
)
def test_marked_whitespace_is_a_leaf_in_greedy_and_beam_search(spaces, seed, width):
    from tests.transition.test_moves import expected_whitespace_heads

    space = np.concatenate([np.concatenate([[False], s]) for s in spaces]).astype(bool)
    for (heads, _), span_space in zip(run([len(s) for s in spaces], 3, seed, width, space), spaces):
        if len(heads) > 1:
            assert not tree_problem(heads), tree_problem(heads)
        for m, head in expected_whitespace_heads(span_space).items():
            assert heads[m] == head and m not in heads.tolist()
