"""The batched sentence-start scorer gives the per-doc formulation's logits and gradients."""
from typing import Callable, List, Tuple

import numpy as np
import pytest
from thinc.api import fix_random_seed, with_padded

from spacy_hcparse.layers.lstm import lstm
from spacy_hcparse.layers.sentence_starts import sentence_starts


def per_doc_forward(model, X: List, is_train: bool) -> Tuple[List, Callable]:
    """The scorer as it was first written: pairs per doc, the MLP over a list, a loop in backprop."""
    xp = model.ops.xp
    X, bp_rows = model.layers[1](X, is_train) if len(model.layers) > 1 else (X, lambda dX: dX)
    before = model.get_param("before")
    width = before.shape[0]
    pairs = [xp.hstack((xp.vstack((before[None, :], x[:-1]))[: len(x)], x)) for x in X]
    logits, bp_mlp = model.layers[0](pairs, is_train)

    def backprop(d_logits):
        d_pairs = bp_mlp([model.ops.asarray2f(d.reshape(-1, 1)) for d in d_logits])
        d_before = model.ops.alloc1f(width)
        out = []
        for d in d_pairs:
            dx = xp.ascontiguousarray(d[:, width:])
            if len(d):
                dx[:-1] += d[1:, :width]
                d_before += d[0, :width]
            out.append(dx)
        model.inc_grad("before", d_before)
        return bp_rows(out)

    return [y.reshape(-1) for y in logits], backprop


def make(context: bool, rng):
    fix_random_seed(0)
    ctx = with_padded(lstm(4, bi=True, depth=1)) if context else None
    model = sentence_starts(width=5, dropout=0.3, context=ctx)
    model.initialize(X=[rng.normal(size=(3, 6)).astype("f")])
    for node in model.walk():
        for name in node.param_names:
            if node.has_param(name):
                value = node.get_param(name)
                node.set_param(name, rng.normal(size=value.shape).astype("f"))
    return model


def grads(model):
    return {(node.id, name): node.get_grad(name).copy() for node in model.walk()
            for name in node.param_names if node.has_grad(name)}


@pytest.mark.parametrize("context", [False, True])
@pytest.mark.parametrize("is_train", [False, True])
@pytest.mark.parametrize("lengths", [[5, 0, 1, 7, 1], [1], [0, 0], [4, 9, 2]])
def test_batched_matches_per_doc(context, is_train, lengths):
    if context and not any(lengths):
        pytest.skip("thinc's LSTM kernel takes no batch without a token (either formulation)")
    rng = np.random.default_rng(sum(lengths) + 10 * context)
    model = make(context, rng)
    docs = [rng.normal(size=(n, 6)).astype("f") for n in lengths]
    d_logits = [rng.normal(size=(n,)).astype("f") for n in lengths]
    runs = []
    for forward in (per_doc_forward, model._func):
        fix_random_seed(3)  # the same dropout masks, if the draws agree in number and shape
        for node in model.walk():
            for name in node.param_names:
                if node.has_grad(name):
                    node.set_grad(name, node.ops.alloc(node.get_grad(name).shape))
        logits, backprop = forward(model, docs, is_train)
        d_docs = backprop(d_logits) if is_train else None
        runs.append((logits, d_docs, grads(model)))
    (old, old_d, old_g), (new, new_d, new_g) = runs
    assert [y.shape for y in new] == [(n,) for n in lengths]
    for a, b in zip(old, new):
        np.testing.assert_array_equal(a, b)  # bit-identical forward
    if is_train:
        for a, b in zip(old_d, new_d):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        assert old_g.keys() == new_g.keys()
        for key in old_g:
            np.testing.assert_allclose(old_g[key], new_g[key], rtol=1e-5, atol=1e-6, err_msg=str(key))


def test_no_docs():
    model = make(False, np.random.default_rng(0))
    logits, backprop = model.begin_update([])
    assert logits == [] and backprop([]) == []
