"""layers.layer_mix: a learned scalar mix of a transformer's hidden states (spacy-transformers'
TransformerData stood in by small named tuples with the same fields)."""
from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np
import pytest

from spacy_hcparse.layers.layer_mix import layer_mix


class Output(OrderedDict):
    """ModelOutput's behaviour the layer uses: a dict with attribute access."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)


class Data(NamedTuple):
    wordpieces: Any
    model_output: Output
    align: Any


def data(seed: int, layers: int = 4, shape=(2, 5, 3)) -> Data:
    states = [np.random.default_rng(seed + i).normal(size=shape).astype("f") for i in range(layers)]
    return Data("pieces", Output(last_hidden_state=states[-1], hidden_states=states), "align")


def test_equal_weights_average_the_chosen_layers_and_empty_docs_pass():
    mix = layer_mix([1, -1])
    mix.initialize()
    empty = Data("p", Output(), "a")
    zeros = Data("p", Output(last_hidden_state=np.zeros((1, 2, 3), dtype="f")), "a")
    out = mix.predict([data(0), empty, zeros])
    states = data(0).model_output["hidden_states"]
    assert np.allclose(out[0].model_output.last_hidden_state, (states[1] + states[3]) / 2)
    assert out[1] is empty and out[2] is zeros
    assert out[0].wordpieces == "pieces" and out[0].align == "align"


def test_a_transformer_without_hidden_states_is_an_error():
    mix = layer_mix([-1])
    mix.initialize()
    with pytest.raises(ValueError, match="output_hidden_states"):
        mix.predict([Data("p", Output(last_hidden_state=np.ones((1, 2, 3), dtype="f")), "a")])


def test_gradients_of_the_weights_and_gamma_match_finite_differences():
    mix = layer_mix([0, 2, 3])
    mix.initialize()
    mix.set_param("w", np.asarray([0.3, -0.2, 0.5], dtype="f"))
    mix.set_param("gamma", np.asarray([1.3], dtype="f"))
    inputs = [data(1), data(7)]
    target = [np.random.default_rng(3).normal(size=(2, 5, 3)).astype("f") for _ in inputs]

    def loss() -> float:
        return float(sum((o.model_output.last_hidden_state * t).sum() for o, t in zip(mix.predict(inputs), target)))

    outputs, backprop = mix(inputs, is_train=True)
    d_outputs = [Data(o.wordpieces, Output(last_hidden_state=t), o.align) for o, t in zip(outputs, target)]
    d_inputs = backprop(d_outputs)
    for name in ("w", "gamma"):
        grad = mix.get_grad(name).copy()
        param = mix.get_param(name).copy()
        for i in range(len(param)):
            eps = 1e-2
            for sign in (1, -1):
                shifted = param.copy()
                shifted[i] += sign * eps
                mix.set_param(name, shifted)
                if sign == 1:
                    up = loss()
                else:
                    down = loss()
            mix.set_param(name, param)
            assert grad[i] == pytest.approx((up - down) / (2 * eps), rel=1e-2, abs=1e-2), (name, i)
    # the last layer's share goes back to the transformer
    weights = np.exp(mix.get_param("w")) / np.exp(mix.get_param("w")).sum()
    assert np.allclose(d_inputs[0].model_output.last_hidden_state, target[0] * 1.3 * weights[-1], atol=1e-5)


def test_layers_the_transformer_does_not_have_are_named_in_the_error():
    mix = layer_mix([0, 6])
    mix.initialize()
    with pytest.raises(ValueError, match="returns 4"):
        mix.predict([data(0)])


def test_a_batch_synchronizes_with_the_host_the_same_number_of_times_whatever_its_docs(monkeypatch):
    """On a device each ``float(array)`` or copy to the host is a synchronization: the mix of four
    times the docs, forward and backward, makes as many as one doc's, and gives the host's values."""
    from tests.strict_ops import DeviceArray, StrictOps, teach_thinc, to_ops

    teach_thinc(monkeypatch)
    host = layer_mix([0, 2, 3])
    host.initialize()
    host.set_param("w", np.asarray([0.3, -0.2, 0.5], dtype="f"))
    device = to_ops(layer_mix([0, 2, 3]), StrictOps())
    device.initialize()
    for name in ("w", "gamma"):
        device.set_param(name, device.ops.asarray(host.get_param(name)))
    syncs = []
    real_to_numpy, real_float = StrictOps.to_numpy, DeviceArray.__float__
    monkeypatch.setattr(StrictOps, "to_numpy", lambda self, x, **kw: syncs.append(1) or real_to_numpy(self, x, **kw))
    monkeypatch.setattr(DeviceArray, "__float__", lambda self: syncs.append(1) or real_float(self))

    def on_device(d: Data) -> Data:
        states = [device.ops.asarray(s) for s in d.model_output["hidden_states"]]
        return Data(d.wordpieces, Output(last_hidden_state=states[-1], hidden_states=states), d.align)

    def run(model, docs, to=lambda d: d):
        for name in ("w", "gamma"):
            if model.has_grad(name):
                model.set_grad(name, model.ops.alloc1f(len(model.get_param(name))))
        outputs, backprop = model([to(d) for d in docs], is_train=True)
        backprop([Data(o.wordpieces, Output(last_hidden_state=o.model_output.last_hidden_state * 2), o.align)
                  for o in outputs])
        return outputs

    def count(k: int) -> int:
        syncs.clear()
        run(device, [data(seed) for seed in range(k)], on_device)
        return len(syncs)

    assert count(4) == count(1)
    docs = [data(seed) for seed in range(3)]
    expected, got = run(host, docs), run(device, docs, on_device)
    for a, b in zip(expected, got):
        assert np.array_equal(a.model_output.last_hidden_state, real_to_numpy(device.ops, b.model_output.last_hidden_state))
    for name in ("w", "gamma"):
        assert np.array_equal(host.get_grad(name), real_to_numpy(device.ops, device.get_grad(name))), name
