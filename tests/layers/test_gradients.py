"""Backprop of the scorer layers agrees with finite differences on their inputs and params."""
import numpy as np
import pytest
from thinc.api import fix_random_seed, with_padded

from spacy_hcparse.layers.biaffine_arc import biaffine_arc
from spacy_hcparse.layers.biaffine_label import biaffine_label
from spacy_hcparse.layers.full_label import full_label
from spacy_hcparse.layers.label_encoder import label_encoder
from spacy_hcparse.layers.lstm import lstm
from spacy_hcparse.layers.trilinear import trilinear

RNG = np.random.default_rng(0)
BLOCKS = [RNG.normal(size=(5, 6)).astype("f"), RNG.normal(size=(3, 6)).astype("f")]
# label arcs (h, m): the trees' arcs, plus competing candidates for some words
ARCS = [np.array([[0, 1], [1, 2], [1, 3], [3, 4], [2, 4], [0, 2]]), np.array([[2, 1], [0, 2], [0, 1]])]
TRIPLES = [np.array([[1, 1, 2], [1, 2, 3], [0, 0, 4], [3, 1, 4]]), np.array([[2, 2, 1]])]


def arc_layer():
    fix_random_seed(0)  # finite differences must not straddle a ReLU kink by chance
    m = biaffine_arc(width=4, dropout=0.0)
    m.initialize(X=BLOCKS)
    m.set_param("U", RNG.normal(size=(4, 4)).astype("f"))
    m.set_param("u", RNG.normal(size=(4,)).astype("f"))
    m.set_param("E", RNG.normal(size=m.get_param("E").shape).astype("f"))
    return m, BLOCKS


def label_layer():
    fix_random_seed(0)  # finite differences must not straddle a ReLU kink by chance
    m = biaffine_label(width=4, dropout=0.0, nO=3, rank=5)
    m.initialize(X=(BLOCKS, ARCS))
    m.set_param("C", RNG.normal(size=(3, 5)).astype("f"))
    for name in ("G", "Wd", "Wh"):  # every term live, so each one's backprop is checked
        m.set_param(name, RNG.normal(size=m.get_param(name).shape).astype("f"))
    return m, (BLOCKS, ARCS)


def full_label_layer():
    fix_random_seed(0)
    m = full_label(width=4, dropout=0.0, nO=3)
    m.initialize(X=(BLOCKS, ARCS))
    for name in ("U", "F"):
        m.set_param(name, RNG.normal(size=m.get_param(name).shape).astype("f"))
    return m, (BLOCKS, ARCS)


def label_encoder_layer():
    """The low-rank label scorer behind a BiLSTM of its own: the gradient reaches the shared
    rows both directly and through the BiLSTM."""
    fix_random_seed(0)
    scorer = biaffine_label(width=4, dropout=0.0, nO=3, rank=5)
    m = label_encoder(with_padded(lstm(4, bi=True, depth=1)), scorer)
    m.initialize(X=(BLOCKS, ARCS))
    scorer.set_param("C", RNG.normal(size=(3, 5)).astype("f"))
    for name in ("G", "Wd", "Wh"):
        scorer.set_param(name, RNG.normal(size=scorer.get_param(name).shape).astype("f"))
    return m, (BLOCKS, ARCS)


def trilinear_layer(null_middle: bool):
    """The trilinear scorer with a null middle role (as sibling factors use it) or without (as
    grandparent factors do)."""
    fix_random_seed(0)  # finite differences must not straddle a ReLU kink by chance
    m = trilinear("triples", rank=4, dropout=0.0, null_middle=null_middle)
    m.initialize(X=(BLOCKS, TRIPLES))
    m.set_param("w", RNG.normal(size=(4,)).astype("f"))
    return m, (BLOCKS, TRIPLES)


def sib_layer():
    return trilinear_layer(True)


def grand_layer():
    return trilinear_layer(False)


def objective(model, X, weights):
    Y = model.predict(X)
    return sum(float((y.astype(np.float64) * w).sum()) for y, w in zip(Y, weights))


def label_layer_v1():
    fix_random_seed(0)
    m = biaffine_label(width=4, dropout=0.0, nO=3, rank=5, linear=False)
    m.initialize(X=(BLOCKS, ARCS))
    for name in ("C", "G"):
        m.set_param(name, RNG.normal(size=m.get_param(name).shape).astype("f"))
    return m, (BLOCKS, ARCS)


@pytest.mark.parametrize("make", [arc_layer, label_layer, label_layer_v1, full_label_layer, label_encoder_layer,
                                  sib_layer, grand_layer])
def test_input_gradient(make):
    model, X = make()
    Y, backprop = model.begin_update(X)
    weights = [RNG.normal(size=y.shape) for y in Y]
    d_blocks = backprop([w.astype("f") for w in weights])
    blocks = X if isinstance(X, list) else X[0]
    direction = [RNG.normal(size=b.shape).astype("f") for b in blocks]
    eps = 1e-3

    def shifted(sign):
        moved = [b + sign * eps * d for b, d in zip(blocks, direction)]
        return moved if isinstance(X, list) else (moved, X[1])

    numeric = (objective(model, shifted(1), weights) - objective(model, shifted(-1), weights)) / (2 * eps)
    analytic = sum(float((g * d).sum()) for g, d in zip(d_blocks, direction))
    assert numeric == pytest.approx(analytic, rel=2e-2, abs=1e-3)


@pytest.mark.parametrize("make", [arc_layer, label_layer, label_layer_v1, full_label_layer, label_encoder_layer,
                                  sib_layer, grand_layer])
def test_param_gradient(make):
    model, X = make()
    Y, backprop = model.begin_update(X)
    weights = [RNG.normal(size=y.shape) for y in Y]
    backprop([w.astype("f") for w in weights])
    for node in model.walk():
        for name in node.param_names:
            if not node.has_grad(name):  # the BiLSTM's initial states: never trained
                continue
            grad = node.get_grad(name).copy()
            value = node.get_param(name).copy()
            direction = RNG.normal(size=value.shape).astype("f")
            eps = 1e-3
            node.set_param(name, value + eps * direction)
            up = objective(model, X, weights)
            node.set_param(name, value - eps * direction)
            down = objective(model, X, weights)
            node.set_param(name, value)
            numeric = (up - down) / (2 * eps)
            analytic = float((grad * direction).sum())
            assert numeric == pytest.approx(analytic, rel=2e-2, abs=1e-3), (node.name, name)


@pytest.mark.parametrize("null_middle", [False, True])
def test_trilinear_predict_matches_training_forward(null_middle):
    """Prediction's compiled per-triple kernel gives the training path's scores (no dropout)."""
    fix_random_seed(1)
    model = trilinear("t", rank=8, dropout=0.0, null_middle=null_middle)
    rng = np.random.default_rng(1)
    blocks = [rng.random((5, 4), dtype=np.float32), rng.random((7, 4), dtype=np.float32), rng.random((2, 4), dtype=np.float32)]
    triples = [np.array([[0, 0, 1], [1, 2, 3], [2, 2, 4]]), np.array([[3, 3, 1], [0, 5, 6]]), np.zeros((0, 3), dtype=np.int64)]
    model.initialize(X=(blocks, triples))
    model.set_param("w", rng.random(8, dtype=np.float32))
    predicted = model.predict((blocks, triples))
    trained, _ = model.begin_update((blocks, triples))
    assert [len(p) for p in predicted] == [3, 2, 0]
    for p, t in zip(predicted, trained):
        np.testing.assert_allclose(p, t, rtol=1e-5, atol=1e-7)


def test_full_label_scores_every_arc_as_its_formula():
    """Each arc's scores are [dep_m; 1]^T U_l [head_h; 1] + F[bucket], whatever arcs share a word."""
    from spacy_hcparse.layers.distance import distance_buckets

    model, (blocks, arcs) = full_label_layer()
    scores = model.predict((blocks, arcs))
    U = model.get_param("U").reshape(5, 3, 5)  # (side, labels, side)
    for block, block_arcs, block_scores in zip(blocks, arcs, scores):
        heads = np.hstack([model.layers[0].predict([block])[0], np.ones((len(block), 1), dtype="f")])
        deps = np.hstack([model.layers[1].predict([block])[0], np.ones((len(block), 1), dtype="f")])
        for (h, m), row in zip(block_arcs, block_scores):
            expected = np.einsum("i,ilj,j->l", deps[m], U, heads[h]) + model.get_param("F")[distance_buckets(len(block))[h, m]]
            np.testing.assert_allclose(row, expected, rtol=1e-4, atol=1e-5)
