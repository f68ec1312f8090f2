"""The transition models as closed functions: the neural model's step scorer gives the scorer's own
scores, its training forward the same scores and one backprop into the token vectors; the
perceptron model parses attribute rows with the weights written into it."""
import numpy as np
import pytest
from thinc.api import Model

from spacy_hcparse.models.transition import (
    PerceptronInput,
    SlotBatch,
    SpanBatch,
    SpanRows,
    build_neural_transition_model,
    build_transition_model,
    first_rows,
    perceptron_weights,
    set_perceptron_weights,
    slot_rows,
)
from spacy_hcparse.transition.features import N_SLOTS, token_attrs
from spacy_hcparse.transition.search import greedy_parse
from spacy_hcparse.transition.features import get_templates

WIDTH = 8


def identity_tok2vec(seen):
    """'Docs' are arrays of token vectors; their gradients are recorded in ``seen``."""

    def forward(model, X, is_train):
        return X, lambda d: seen.append(d) or d

    return Model("tok2vec", forward, dims={"nO": WIDTH})


def neural_model(seen=None):
    model = build_neural_transition_model(identity_tok2vec([] if seen is None else seen), hidden_width=6,
                                          maxout_pieces=3, dropout=0.0, nO=5)
    model.get_ref("scorer").initialize(X=np.zeros((2, WIDTH * N_SLOTS), dtype="f"))
    rng = np.random.default_rng(0)
    maxout = next(layer for layer in model.walk() if layer.name == "maxout")
    for name in ("W", "b"):  # non-zero biases too
        maxout.set_param(name, rng.normal(size=maxout.get_param(name).shape).astype("f"))
    return model


def test_step_scorer_matches_the_scorer():
    model = neural_model()
    rng = np.random.default_rng(1)
    docs = [rng.normal(size=(n, WIDTH)).astype("f") for n in (7, 12, 10)]
    spans = [[(0, 3), (3, 7)], [(0, 12)], [(2, 10)]]
    table = np.concatenate(docs + [np.zeros((1, WIDTH), dtype="f")])
    steps = model.predict(SpanBatch(docs, spans))
    firsts = first_rows(docs, spans)
    for lo, hi in [(0, 4), (1, 3), (3, 4)]:
        group = steps.group(lo, hi)
        slots = rng.integers(-1, 5, size=(11, N_SLOTS))  # words 1..4 of the group's first span, -1 empty
        rows = slot_rows(slots, group.firsts[0], group.null)
        got = group.scores(rows)
        expected = model.get_ref("scorer").predict(table[slot_rows(slots, firsts[lo], len(table) - 1)].reshape(11, -1))
        assert got.shape == (11, 5)
        np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-4, atol=1e-4)


def test_training_forward_scores_and_backprop():
    seen = []
    model = neural_model(seen)
    rng = np.random.default_rng(2)
    docs = [rng.normal(size=(n, WIDTH)).astype("f") for n in (4, 6)]
    rows = rng.integers(0, 11, size=(9, N_SLOTS))  # row 10 is the zero row
    scores, backprop = model.begin_update(SlotBatch(docs, rows))
    np.testing.assert_allclose(scores, model.predict(SlotBatch(docs, rows)), rtol=1e-6)
    d_scores = rng.normal(size=scores.shape).astype("f")
    assert backprop(d_scores) == []
    (d_docs,) = seen
    assert [d.shape for d in d_docs] == [(4, WIDTH), (6, WIDTH)]
    # the gradient of sum(scores * d_scores) with respect to one token vector, by finite differences
    doc, token, eps = 1, 2, 1e-2
    bumped = [d.copy() for d in docs]
    bumped[doc][token] += eps * np.eye(WIDTH, dtype="f")[3]
    lower = [d.copy() for d in docs]
    lower[doc][token] -= eps * np.eye(WIDTH, dtype="f")[3]
    numeric = ((model.predict(SlotBatch(bumped, rows)) - model.predict(SlotBatch(lower, rows))) * d_scores).sum() / (2 * eps)
    assert d_docs[doc][token, 3] == pytest.approx(numeric, rel=0.05, abs=1e-3)


def perceptron_input(lengths, seed, n_buckets, beam_width=1):
    rng = np.random.default_rng(seed)
    attrs = np.concatenate([token_attrs(rng.integers(0, 2**62, size=(n, 5)), False) for n in lengths])
    offsets = np.cumsum([0] + [n + 1 for n in lengths]).astype(np.int64)
    rows = SpanRows(attrs, offsets, np.zeros(len(attrs), dtype=bool))
    return PerceptronInput(rows, np.zeros(0, dtype=np.int64), 0, beam_width)


def test_perceptron_model_parses_with_the_weights_written_into_it():
    n_buckets, n_labels = 2**10, 3
    model = build_transition_model(n_buckets=n_buckets, tag_buckets=2**8, nO=1 + 2 * n_labels)
    model.initialize()
    W = np.random.default_rng(3).normal(size=n_buckets + 1 + 2 * n_labels).astype("f")
    set_perceptron_weights(model, W)
    assert perceptron_weights(model)[0] is W or np.array_equal(perceptron_weights(model)[0], W)
    X = perceptron_input([5, 0, 9], 4, n_buckets)
    trees = model.predict(X)
    heads = np.empty(len(X.rows.attrs), dtype=np.int64)
    labels = np.empty(len(X.rows.attrs), dtype=np.int64)
    greedy_parse(X.rows.attrs, X.rows.offsets, W, get_templates("zhang_nivre"), np.int64(n_buckets - 1), n_labels, 0,
                 heads, labels)
    assert [len(h) for h, _ in trees] == [6, 1, 10]
    for (tree_heads, tree_labels), lo, hi in zip(trees, X.rows.offsets[:-1], X.rows.offsets[1:]):
        assert tree_heads.tolist() == heads[lo:hi].tolist() and tree_labels.tolist() == labels[lo + 1 : hi].tolist()
    _, backprop = model.begin_update(X)
    with pytest.raises(ValueError, match="no gradient"):
        backprop(None)
