"""layers.lstm: thinc's LSTM outputs, on NumpyOps and on the array code other devices run, and
gradients that match finite differences."""
import numpy as np
import pytest
from thinc.api import LSTM, NumpyOps, Ops, with_padded

from spacy_hcparse.layers.lstm import lstm, lstm_backward, lstm_forward

LENGTHS = (6, 3, 6, 1, 4)  # unequal lengths: sequences end at different steps in both directions


def inputs(seed: int = 0, width: int = 5):
    rng = np.random.RandomState(seed)
    return [rng.normal(size=(n, width)).astype("f") for n in LENGTHS]


def built(layer, X, ops=None, params=None):
    model = with_padded(layer)
    model.initialize(X=X)
    if params is not None:
        model.layers[0].set_param("LSTM", params.copy())
    if ops is not None:
        for node in model.walk():
            node.ops = ops
    return model


@pytest.mark.parametrize("depth,bi", [(1, True), (2, True), (1, False)])
@pytest.mark.parametrize("ops", [None, Ops()], ids=["NumpyOps", "generic"])
def test_outputs_are_thincs(depth, bi, ops):
    X = inputs()
    width = 8 if bi else 4
    reference = built(LSTM(nO=width, bi=bi, depth=depth), X)
    ours = built(lstm(width, bi=bi, depth=depth), X, ops, reference.layers[0].get_param("LSTM"))
    for expected, got in zip(reference.predict(X), ours.predict(X)):
        assert np.allclose(expected, got, atol=1e-6)


@pytest.mark.parametrize("depth,bi", [(1, True), (2, True), (1, False)])
def test_both_paths_give_the_same_gradients(depth, bi):
    X = inputs(1)
    width = 8 if bi else 4
    host = built(lstm(width, bi=bi, depth=depth), X)
    generic = built(lstm(width, bi=bi, depth=depth), X, Ops(), host.layers[0].get_param("LSTM"))
    rng = np.random.RandomState(2)
    Y, backprop = host.begin_update(X)
    dY = [rng.normal(size=y.shape).astype("f") for y in Y]
    dX_host = backprop(dY)
    dX_generic = generic.begin_update(X)[1](dY)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(dX_host, dX_generic))
    assert np.allclose(host.layers[0].get_grad("LSTM"), generic.layers[0].get_grad("LSTM"), atol=1e-5)


def test_no_gradient_without_an_output_gradient():
    """thinc 8.3's NumpyOps returns the weights themselves as their gradient here."""
    X = inputs()
    model = built(lstm(8), X)
    Y, backprop = model.begin_update(X)
    backprop([np.zeros_like(y) for y in Y])
    assert not np.abs(model.layers[0].get_grad("LSTM")).any()


@pytest.mark.parametrize("depth,bi", [(1, True), (2, True), (1, False)])
def test_gradients_match_finite_differences(depth, bi):
    rng = np.random.RandomState(3)
    H, n_in = 3, 4
    sizes = np.array([4, 4, 3, 1, 1])  # packed steps: 4 sequences of lengths 5, 3, 3, 2
    X = rng.normal(size=(sizes.sum(), n_in))
    dirs = 1 + int(bi)
    n_params = sum(dirs * (4 * H * (k + H) + 8 * H) for k in [n_in] + [H * dirs] * (depth - 1))
    params = rng.normal(size=n_params) * 0.5
    HC0 = rng.normal(size=(2, depth, dirs, H)) * 0.5
    R = rng.normal(size=(sizes.sum(), H * dirs))

    def loss(p, x):
        return float((lstm_forward(np, p, HC0, x, sizes)[0] * R).sum())

    Y, states = lstm_forward(np, params, HC0, X, sizes)
    dX, d_params = lstm_backward(np, params, HC0, X, sizes, states, R)
    eps = 1e-6
    for k in rng.choice(n_params, 30, replace=False):
        step = np.zeros(n_params)
        step[k] = eps
        numeric = (loss(params + step, X) - loss(params - step, X)) / (2 * eps)
        assert abs(numeric - d_params[k]) < 1e-6 * max(1.0, abs(numeric))
    for row, col in [(0, 0), (3, 2), (len(X) - 1, 1)]:
        step = np.zeros_like(X)
        step[row, col] = eps
        numeric = (loss(params, X + step) - loss(params, X - step)) / (2 * eps)
        assert abs(numeric - dX[row, col]) < 1e-6 * max(1.0, abs(numeric))


def test_depth_must_be_positive():
    with pytest.raises(ValueError, match="depth"):
        lstm(8, depth=0)


def test_the_default_kernel_is_layers_lstm_on_the_cpu():
    """BiLSTMContext.v1's default kernel ("auto") gives layers.lstm's outputs bit for bit on
    numpy arrays, whether or not torch is installed; an unknown kernel is refused."""
    from spacy.util import registry

    import spacy_hcparse.graph.graph_parts  # noqa: F401  (registers it)

    make = registry.architectures.get("spacy_hcparse.BiLSTMContext.v1")
    X = inputs(3, width=6)
    auto, thinc_kernel = make(width=8, kernel="auto"), make(width=8, kernel="thinc")
    auto.initialize(X=X)
    thinc_kernel.initialize(X=X)
    auto.from_bytes(thinc_kernel.to_bytes())
    for a, b in zip(auto.predict(X), thinc_kernel.predict(X)):
        assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="kernel must be one of"):
        make(width=8, kernel="cudnn")


@pytest.mark.parametrize("on_gpu,cuda,expected", [(True, True, "torch"), (True, False, "array"),
                                                  (False, True, "array")])
def test_the_default_kernel_runs_torch_only_on_a_gpu_torch_sees(monkeypatch, on_gpu, cuda, expected):
    """fused_on_gpu hands the forward to torch's kernel only for device arrays (ops.xp is not
    numpy) with torch seeing CUDA; otherwise to layers.lstm's."""
    from types import SimpleNamespace

    from spacy_hcparse.layers import lstm as array_lstm
    from spacy_hcparse.layers import torch_lstm

    called = []
    monkeypatch.setattr(torch_lstm, "forward", lambda *args: called.append("torch"))
    monkeypatch.setattr(array_lstm, "forward", lambda *args: called.append("array"))
    monkeypatch.setattr(torch_lstm, "torch_sees_cuda", lambda: cuda)
    node = torch_lstm.fused_on_gpu(8)
    node.ops = SimpleNamespace(xp=object() if on_gpu else np)
    node._func(node, None, False)
    assert called == [expected]
