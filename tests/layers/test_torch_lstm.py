"""layers.torch_lstm: layers.lstm's contract and parameters with torch's fused LSTM (CPU torch here):
the same outputs and gradients as layers.lstm for the same weights, finite-difference gradients,
shapes, weight dropout, and a serialization round trip (also into layers.lstm)."""
import numpy as np
import pytest
from thinc.api import with_padded

from spacy_hcparse.layers.lstm import lstm

torch = pytest.importorskip("torch")
from spacy_hcparse.layers.torch_lstm import torch_lstm  # noqa: E402

LENGTHS = (6, 3, 6, 1, 4)  # unequal lengths: padding must not enter the backward direction


def inputs(seed: int = 0, width: int = 5, lengths=LENGTHS):
    rng = np.random.RandomState(seed)
    return [rng.normal(size=(n, width)).astype("f") for n in lengths]


def built(layer, X, params=None):
    model = with_padded(layer)
    model.initialize(X=X)
    if params is not None:
        model.layers[0].set_param("LSTM", params.copy())
    return model


def with_weights_like(reference, layer, X):
    return built(layer, X, reference.layers[0].get_param("LSTM"))


@pytest.mark.parametrize("depth,bi", [(1, True), (2, True), (1, False)])
def test_shapes_and_outputs_are_layers_lstm(depth, bi):
    X = inputs()
    width = 8 if bi else 4
    reference = built(lstm(width, bi=bi, depth=depth), X)
    ours = with_weights_like(reference, torch_lstm(width, bi=bi, depth=depth), X)
    got = ours.predict(X)
    assert [y.shape for y in got] == [(n, width) for n in LENGTHS]
    assert all(y.dtype == np.float32 for y in got)
    for expected, y in zip(reference.predict(X), got):
        assert np.allclose(expected, y, atol=1e-5)


@pytest.mark.parametrize("depth,bi", [(1, True), (2, True), (1, False)])
def test_gradients_are_layers_lstm(depth, bi):
    X = inputs(1)
    width = 8 if bi else 4
    reference = built(lstm(width, bi=bi, depth=depth), X)
    ours = with_weights_like(reference, torch_lstm(width, bi=bi, depth=depth), X)
    rng = np.random.RandomState(2)
    Y, backprop = reference.begin_update(X)
    dY = [rng.normal(size=y.shape).astype("f") for y in Y]
    dX_reference = backprop(dY)
    Y_ours, backprop_ours = ours.begin_update(X)
    dX_ours = backprop_ours(dY)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(Y, Y_ours))
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(dX_reference, dX_ours))
    assert np.allclose(reference.layers[0].get_grad("LSTM"), ours.layers[0].get_grad("LSTM"), atol=1e-5)


def test_gradients_match_finite_differences():
    X = [x.astype("f") for x in inputs(3, width=3, lengths=(4, 2, 3))]
    model = built(torch_lstm(4, bi=True, depth=2), X)
    layer = model.layers[0]
    rng = np.random.RandomState(4)
    dY = [rng.normal(size=(len(x), 4)) for x in X]
    loss = lambda: sum(float((y.astype(np.float64) * d).sum()) for y, d in zip(model.predict(X), dY))  # noqa: E731
    _, backprop = model.begin_update(X)
    dX = backprop([d.astype("f") for d in dY])
    params = layer.get_param("LSTM").copy()
    grad = layer.get_grad("LSTM").copy()
    eps = 1e-2
    for index in rng.choice(len(params), size=12, replace=False):
        for sign, store in ((1, "plus"), (-1, "minus")):
            shifted = params.copy()
            shifted[index] += sign * eps
            layer.set_param("LSTM", shifted)
            if store == "plus":
                plus = loss()
            else:
                minus = loss()
        layer.set_param("LSTM", params.copy())
        assert (plus - minus) / (2 * eps) == pytest.approx(float(grad[index]), abs=2e-3, rel=2e-2)
    for seq, row, col in [(0, 1, 2), (1, 0, 0), (2, 2, 1)]:
        values = []
        for sign in (1, -1):
            shifted = [x.copy() for x in X]
            shifted[seq][row, col] += sign * eps
            values.append(sum(float((y.astype(np.float64) * d).sum()) for y, d in zip(model.predict(shifted), dY)))
        assert (values[0] - values[1]) / (2 * eps) == pytest.approx(float(dX[seq][row, col]), abs=2e-3, rel=2e-2)


def test_weight_dropout_masks_the_gradient():
    X = inputs()
    model = built(torch_lstm(8, dropout=0.5), X)
    _, backprop = model.begin_update(X)
    backprop([np.ones((n, 8), dtype="f") for n in LENGTHS])
    assert (model.layers[0].get_grad("LSTM") == 0).mean() > 0.3  # dropped weights get no gradient
    assert all(np.allclose(a, b) for a, b in zip(model.predict(X), model.predict(X)))  # no dropout at prediction


def test_serialization_round_trip_and_weights_shared_with_layers_lstm():
    X = inputs()
    model = built(torch_lstm(8, depth=2), X)
    data = model.to_bytes()
    again = with_padded(torch_lstm(8, depth=2)).from_bytes(data)
    assert all(np.array_equal(a, b) for a, b in zip(model.predict(X), again.predict(X)))
    as_thinc = with_padded(lstm(8, depth=2)).from_bytes(data)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(model.predict(X), as_thinc.predict(X)))


def test_an_empty_batch_and_no_backprop_at_prediction():
    X = inputs()
    model = built(torch_lstm(8), X)
    assert model.predict([np.zeros((0, 5), dtype="f")])[0].shape == (0, 8)
    _, backprop = model.layers[0](model.ops.list2padded(X), is_train=False)
    with pytest.raises(ValueError, match="no backward pass"):
        backprop(None)


def test_the_registered_context_is_bilstm_context_with_torchs_kernel():
    from spacy.util import registry

    import spacy_hcparse.graph.torch_context  # noqa: F401  (registers it)

    X = inputs(5, width=6)
    thinc_kernel = registry.architectures.get("spacy_hcparse.BiLSTMContext.v1")(width=8, depth=1, dropout=0.0)
    torch_kernel = registry.architectures.get("spacy_hcparse.TorchBiLSTMContext.v1")(width=8, depth=1, dropout=0.0)
    thinc_kernel.initialize(X=X)
    torch_kernel.initialize(X=X)
    torch_kernel.from_bytes(thinc_kernel.to_bytes())
    for a, b in zip(thinc_kernel.predict(X), torch_kernel.predict(X)):
        assert np.allclose(a, b, atol=1e-5)
    with pytest.raises(ValueError, match="width must be positive"):
        registry.architectures.get("spacy_hcparse.TorchBiLSTMContext.v1")(width=0)
