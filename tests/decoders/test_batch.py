"""decoders.batch / batch_marginals: one compiled call per batch, identical to the per-span functions.

Random batches of spans (0-9 words; normal scores, or small integers for ties; pruned arcs
``-inf``; sibling factors on the triples the candidates allow, on some spans) go through the
batched functions with one thread and with two, and through the per-span functions span by span;
heads, labels, probabilities, log probabilities and margins must be equal, not close.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import decode_eisner, decode_mst, log_partition, tree_probabilities, tree_score
from spacy_hcparse.decoders._checks import tree_problem
from spacy_hcparse.decoders.batch import (_first_bad_heads, _heads_hold, cut, decode_eisner_batch, labels_batch, layout, pack,
                                          split_words)
from spacy_hcparse.decoders.batch_marginals import (head_margins_batch, sibling_probabilities_batch,
                                                    tree_probabilities_batch)
from spacy_hcparse.decoders.marginals import _inside_sib_linear


def candidates(arc, top_k):
    """Each word's ``top_k`` best heads and the root (as first-order pruning keeps them)."""
    size = len(arc)
    scores = arc.copy()
    np.fill_diagonal(scores, -np.inf)
    mask = np.zeros((size, size), dtype=bool)
    for m in range(1, size):
        mask[np.argsort(-scores[:, m], kind="stable")[: min(top_k, size - 1)], m] = True
        mask[0, m] = True
        mask[m, m] = False
    return mask


def sibling_triples(mask):
    """(T, 3) ``(h, s, m)``: ``m`` a candidate modifier of ``h``, ``s == h`` or a candidate
    modifier of ``h`` between them (the sibling factors pruning allows, in some order)."""
    size = len(mask)
    out = [(h, s, m) for h in range(size) for m in range(1, size) if mask[h, m] and m != h
           for s in [h] + [s for s in range(min(h, m) + 1, max(h, m)) if mask[h, s]]]
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def reference_labels(heads, scores, label_class):
    """The labels of the tree alone (a batch of one; brute force in test_labels.py), or the argmax
    without classes."""
    if label_class is not None and len(label_class) and label_class.max() >= 0:
        return labels_batch(heads, [len(heads)], scores, label_class)
    return scores.argmax(axis=1)


def reference_margins(arc, heads):
    """Per word, its head's score minus the best other head's (not itself); 0 without one."""
    out = []
    for m in range(1, len(heads)):
        others = [arc[h, m] for h in range(len(heads)) if h not in (m, heads[m]) and np.isfinite(arc[h, m])]
        out.append(arc[heads[m], m] - max(others) if others else 0.0)
    return np.array(out)


def random_batch(rng, n_spans, integer, prune, sib_share):
    """Arcs (list), sibling factors per span ((T, 3) triples, (T,) values) or None."""
    arcs, sibs = [], []
    for _ in range(n_spans):
        n = int(rng.integers(0, 10))
        arc = rng.integers(-2, 3, size=(n + 1, n + 1)).astype(float) if integer else rng.normal(size=(n + 1, n + 1))
        mask = candidates(arc, prune) if prune else np.ones_like(arc, dtype=bool)
        arc = np.where(mask, arc, -np.inf) if prune else arc
        arcs.append(arc)
        if n >= 2 and rng.random() < sib_share:
            triples = sibling_triples(mask)
            values = rng.integers(-2, 3, size=len(triples)).astype(float) if integer else rng.normal(size=len(triples))
            sibs.append((triples, values))
        else:
            sibs.append(None)
    return arcs, sibs


def packed_siblings(sibs):
    counts = np.array([-1 if s is None else len(s[0]) for s in sibs], dtype=np.int64)
    triples = np.concatenate([s[0] for s in sibs if s is not None] + [np.zeros((0, 3), np.int64)])
    values = np.concatenate([s[1] for s in sibs if s is not None] + [np.zeros(0)])
    return counts, triples, values


def dense(size, sib):
    if sib is None:
        return None
    cube = np.zeros((size, size, size))
    cube[sib[0][:, 0], sib[0][:, 1], sib[0][:, 2]] = sib[1]
    return cube


batches = st.tuples(st.integers(0, 2 ** 32 - 1), st.integers(0, 12), st.booleans(), st.sampled_from([0, 1, 3]),
                    st.sampled_from([0.0, 0.5, 1.0]))


@settings(max_examples=60, deadline=None)
@given(batches)
def test_eisner_batch_is_decode_eisner(batch):
    seed, n_spans, integer, prune, sib_share = batch
    rng = np.random.default_rng(seed)
    arcs, sibs = random_batch(rng, n_spans, integer, prune, sib_share)
    flat, sizes = pack(arcs)
    for threads in (1, 2):
        heads, scores = decode_eisner_batch(flat, sizes, *packed_siblings(sibs), threads=threads)
        assert len(scores) == n_spans
        for arc, sib, tree, score in zip(arcs, sibs, cut(heads, sizes), scores):
            cube = dense(len(arc), sib)
            expected = decode_eisner(arc, cube)
            assert tree.tolist() == expected.tolist()
            assert tree_problem(tree) == ""
            assert score == tree_score(expected, arc, cube)  # -inf where the tree needs an absent arc


@settings(max_examples=60, deadline=None)
@given(batches, st.integers(1, 6), st.integers(-1, 2))
def test_labels_batch_is_each_tree_alone(batch, n_labels, n_classes):
    seed, n_spans, integer, prune, _ = batch
    rng = np.random.default_rng(seed)
    arcs, _ = random_batch(rng, n_spans, integer, prune, 0.0)
    flat, sizes = pack(arcs)
    heads, _ = decode_eisner_batch(flat, sizes)
    n_words = int((sizes - 1).sum())
    scores = rng.integers(-2, 3, size=(n_words, n_labels)).astype(float) if integer \
        else rng.normal(size=(n_words, n_labels))
    scores[rng.random(scores.shape) < 0.1] = -np.inf
    label_class = None if n_classes < 0 else rng.integers(-1, n_classes, size=n_labels)
    for threads in (1, 2):
        labels = labels_batch(heads, sizes, scores, label_class, threads=threads)
        for tree, rows, got in zip(cut(heads, sizes), split_words(scores, sizes), split_words(labels, sizes)):
            assert got.tolist() == reference_labels(tree, rows, label_class).tolist()


@settings(max_examples=60, deadline=None)
@given(batches)
def test_probabilities_and_margins_batch_are_per_span(batch):
    seed, n_spans, integer, _, _ = batch
    rng = np.random.default_rng(seed)
    arcs, _ = random_batch(rng, n_spans, integer, 0, 0.0)  # full scores, as hc_parser reads them
    flat, sizes = pack(arcs)
    heads, _ = decode_eisner_batch(flat, sizes)
    for threads in (1, 2):
        probs, log_probs = tree_probabilities_batch(heads, sizes, flat, threads=threads)
        margins = head_margins_batch(heads, sizes, flat, threads=threads)
        rows = zip(arcs, cut(heads, sizes), split_words(probs, sizes), log_probs, split_words(margins, sizes))
        for arc, tree, got_probs, got_log_prob, got_margins in rows:
            expected_probs, expected_log_prob = tree_probabilities(tree, arc)
            assert got_probs.tolist() == expected_probs.tolist()
            assert got_log_prob == expected_log_prob
            assert got_margins.tolist() == reference_margins(arc, tree).tolist()


@settings(max_examples=60, deadline=None)
@given(batches, st.sampled_from([0.7, 1.0, 2.3]), st.sampled_from([None, 0.5, 3.0]))
def test_sibling_probabilities_batch_is_per_span(batch, temperature, tree_temperature):
    """With sibling factors: ``tree_probabilities(tree, arc / T, True, cube / T)`` and
    the tree's log probability at its own temperature per span, equal; spans without factors or
    with a crossing tree left to the caller."""
    seed, n_spans, integer, prune, sib_share = batch
    rng = np.random.default_rng(seed)
    arcs, sibs = random_batch(rng, n_spans, integer, 0, sib_share)  # full scores, as hc_parser reads them
    flat, sizes = pack(arcs)
    heads, _ = decode_eisner_batch(flat, sizes, *packed_siblings(sibs))
    for threads in (1, 2):
        probs, log_probs, done = sibling_probabilities_batch(
            heads, sizes, flat, *packed_siblings(sibs), temperature, tree_temperature, threads=threads)
        rows = zip(arcs, sibs, cut(heads, sizes), split_words(probs, sizes), log_probs, done)
        for arc, sib, tree, got_probs, got_log_prob, got_done in rows:
            assert got_done == (sib is not None and len(arc) >= 2)
            if not got_done:
                continue
            cube = dense(len(arc), sib)
            expected_probs, expected_log_prob = tree_probabilities(tree, arc / temperature, True, cube / temperature)
            if tree_temperature is not None:
                scaled, scaled_cube = arc / tree_temperature, cube / tree_temperature
                usable = np.where(np.isfinite(scaled), scaled, -1e300)
                expected_log_prob = float(tree_score(tree, usable, scaled_cube)
                                          - log_partition(scaled, True, scaled_cube))
            assert got_probs.tolist() == expected_probs.tolist()
            assert got_log_prob == expected_log_prob


def test_sibling_probabilities_where_the_linear_chart_leaves_its_range():
    """Scores hundreds apart overflow the linear-space chart: those spans are done again with
    the log-space one (a second compiled call), equal to the per-span function, beside spans
    the linear chart finishes."""
    rng = np.random.default_rng(3)
    arcs, sibs = random_batch(rng, 6, False, 0, 1.0)
    arcs[1], arcs[4] = arcs[1] * 800.0, arcs[4] * 800.0
    wide = [i for i, (arc, sib) in enumerate(zip(arcs, sibs)) if sib is not None
            and not _inside_sib_linear(arc, dense(len(arc), sib), True)[2]]
    assert wide and len(wide) < len(arcs)
    flat, sizes = pack(arcs)
    heads, _ = decode_eisner_batch(flat, sizes, *packed_siblings(sibs))
    for threads in (1, 2):
        probs, log_probs, done = sibling_probabilities_batch(heads, sizes, flat, *packed_siblings(sibs), 1.0, 2.0,
                                                             threads=threads)
        rows = zip(arcs, sibs, cut(heads, sizes), split_words(probs, sizes), log_probs, done)
        for arc, sib, tree, got_probs, got_log_prob, got_done in rows:
            assert got_done == (sib is not None and len(arc) >= 2)
            if got_done:
                cube = dense(len(arc), sib)
                expected_probs, _ = tree_probabilities(tree, arc, True, cube)
                usable = np.where(np.isfinite(arc / 2.0), arc / 2.0, -1e300)
                expected = float(tree_score(tree, usable, cube / 2.0) - log_partition(arc / 2.0, True, cube / 2.0))
                assert got_probs.tolist() == expected_probs.tolist() and got_log_prob == expected


def test_sibling_probabilities_leave_crossing_trees_and_reject_bad_temperatures():
    flat, sizes = pack([np.zeros((5, 5))])
    crossing = np.array([-1, 0, 4, 1, 1])  # 2 <- 4 crosses 1 -> 3
    sib = (np.array([[1, 1, 3]]), np.array([0.5]))
    probs, log_probs, done = sibling_probabilities_batch(crossing, sizes, flat, *packed_siblings([sib]), 1.0)
    assert not done[0] and probs.tolist() == [0.0] * 4
    with pytest.raises(ValueError, match="temperatures"):
        sibling_probabilities_batch(crossing, sizes, flat, *packed_siblings([sib]), 0.0)


def test_probabilities_of_trees_using_absent_arcs_and_non_projective_trees():
    arc = np.zeros((4, 4))
    arc[2, 3] = -np.inf
    heads = np.array([-1, 0, 3, 1, -1, 0])  # span 0 avoids the absent arc 2 -> 3; span 1: one word
    flat, sizes = pack([arc, np.zeros((2, 2))])
    probs, log_probs = tree_probabilities_batch(heads, sizes, flat)
    expected = tree_probabilities(heads[:4], arc)
    assert probs[:3].tolist() == expected[0].tolist() and log_probs[0] == expected[1]
    uses_absent = np.array([-1, 0, 1, 2, -1, 0])
    assert tree_probabilities_batch(uses_absent, sizes, flat)[1][0] == -np.inf
    crossing = np.array([-1, 0, 4, 1, 1])  # 2 <- 4 crosses 1 -> 3
    flat5, sizes5 = pack([np.zeros((5, 5))])
    assert np.isfinite(tree_probabilities_batch(crossing, sizes5, flat5)[1][0])


def test_empty_batch_and_empty_spans():
    flat, sizes = pack([])
    heads, scores = decode_eisner_batch(flat, sizes)
    assert heads.shape == (0,) and scores.shape == (0,)
    flat, sizes = pack([np.zeros((1, 1)), np.zeros((1, 1))])
    heads, scores = decode_eisner_batch(flat, sizes)
    assert heads.tolist() == [-1, -1] and scores.tolist() == [0.0, 0.0]
    assert labels_batch(heads, sizes, np.zeros((0, 3))).shape == (0,)
    probs, log_probs = tree_probabilities_batch(heads, sizes, flat)
    assert probs.shape == (0,) and log_probs.tolist() == [0.0, 0.0]


def test_no_tree_avoids_the_absent_arcs():
    arc = np.zeros((3, 3))
    arc[0, :] = -np.inf
    flat, sizes = pack([np.zeros((2, 2)), arc])
    heads = np.array([-1, 0, -1, 0, 1])
    with pytest.raises(ValueError, match="span 1: no single-root tree"):
        tree_probabilities_batch(heads, sizes, flat)


@pytest.mark.parametrize("call, match", [
    (lambda: decode_eisner_batch(np.zeros(5), [2]), "sum\\(size \\*\\* 2\\) = 4"),
    (lambda: decode_eisner_batch(np.zeros(4), [0, 2]), "at least 1"),
    (lambda: decode_eisner_batch(np.array([0, np.nan, 0, 0.0]), [2]), "span 0 contain NaN"),
    (lambda: decode_eisner_batch(np.zeros(4), [2], [1], np.zeros((0, 3)), np.zeros(0)), "T = 1"),
    (lambda: decode_eisner_batch(np.zeros(8), [2, 2], [1, -1], [[0, 0, 5]], [1.0]), "outside its span"),
    (lambda: labels_batch([-1, 0], [2], np.zeros((2, 3))), "shape \\(1, L\\)"),
    (lambda: labels_batch([-1, 5], [2], np.zeros((1, 3))), "span 0 is not a heads array"),
    (lambda: labels_batch([-1, 0], [2], np.full((1, 3), np.nan)), "NaN"),
    (lambda: tree_probabilities_batch([-1, 0, 0], [3], np.zeros(9)), "span 0 is not a single-root tree"),
    (lambda: head_margins_batch([-1, 0], [2], np.zeros(3)), "sum\\(size \\*\\* 2\\)"),
])
def test_bad_input_is_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_probabilities_where_the_matrix_tree_determinant_underflows():
    """Scores thousands apart (a small temperature of the calibration's grid) lose the matrix-tree
    determinant to rounding: every word still gets a finite head probability, and the tree a
    finite log probability (each word's own head distribution)."""
    arc = np.random.default_rng(0).normal(size=(30, 30)) * 1e4
    heads = np.asarray(decode_mst(arc), dtype=np.int64)
    probs, log_probs = tree_probabilities_batch(heads, np.array([30]), arc.ravel())
    assert np.isfinite(probs).all() and ((probs >= 0) & (probs <= 1)).all()
    assert np.isfinite(log_probs).all() and log_probs[0] <= 0


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 6), st.booleans())
def test_heads_check_agrees_with_the_compiled_one(seed, n_spans, trees):
    """The numpy check of a batch's heads (cycles by pointer jumping) accepts exactly what the
    compiled per-span check accepts: random heads arrays, valid trees, cycles, self-loops,
    several or no root children, bad root entries, heads out of range."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 8, size=n_spans).astype(np.int64)
    blocks = []
    for size in sizes:
        block = rng.integers(-1, size + 1, size=size) if rng.random() < 0.5 else \
            np.concatenate([[-1], rng.integers(0, size, size=size - 1)])
        if rng.random() < 0.5 and size > 1:  # a random tree: each word under an earlier one, shuffled
            order = np.concatenate([[0], rng.permutation(np.arange(1, size))])
            block = np.full(size, -1)
            for k in range(1, size):
                block[order[k]] = order[rng.integers(1, k)] if k > 1 else 0
        blocks.append(block)
    heads = np.concatenate(blocks + [np.zeros(0, np.int64)]).astype(np.int64)
    rows = layout(sizes).rows
    assert _heads_hold(heads, sizes, rows, trees) == (_first_bad_heads(heads, sizes, rows, trees)[0] < 0)
