"""A learned scalar mix of a transformer's hidden layers (ELMo's, as UDify uses it).

Input and output: spacy-transformers ``TransformerData`` per doc. The output's
``model_output.last_hidden_state`` is ``gamma * sum_l softmax(w)_l * hidden_states[l]`` over the
chosen ``layers`` (indices into ``hidden_states``: 0 the embeddings, -1 the last layer), so the
pooling that follows (``trfs2arrays``) reads the mix where it read the last layer. The transformer
must return its hidden states (``transformer_config = {"output_hidden_states": true}``). Syntax
sits in the middle layers of a BERT more than in its last (Tenney et al. 2019), and a sentence-
embedding model's last layer is trained for pooled similarity.

Gradients: ``w`` and ``gamma`` learn; the gradient passed back to the transformer is the last
layer's share only (spacy-transformers backpropagates into ``last_hidden_state`` alone), which is
exact for a frozen transformer (whose gradient is dropped) and partial when fine-tuning.
"""
from typing import Callable, List, Optional, Sequence, Tuple

from thinc.api import Model


def layer_mix(layers: Sequence[int]) -> Model:
    """The mix over ``layers`` (indices into ``hidden_states``); weights start equal, ``gamma`` at 1."""
    if not layers:
        raise ValueError("layer_mix needs at least one layer")
    return Model("layer_mix", _forward, init=_init, attrs={"layers": list(layers)}, params={"w": None, "gamma": None})


def _init(model: Model, X=None, Y=None) -> None:
    model.set_param("w", model.ops.alloc1f(len(model.attrs["layers"])))
    model.set_param("gamma", model.ops.asarray1f([1.0]))


def _forward(model: Model, datas: List, is_train: bool) -> Tuple[List, Callable]:
    """The mix of each doc's chosen states. On a device the weights and ``gamma`` cross to the host
    once per batch (each doc's mix is scaled by host floats), and the backward pass keeps its sums
    on the device: no synchronization per doc."""
    ops = model.ops
    w = model.get_param("w")
    weights = ops.softmax(w)
    host = ops.to_numpy(ops.xp.concatenate([weights, model.get_param("gamma")]))
    host_weights, gamma = [float(x) for x in host[:-1]], float(host[-1])
    outputs, used = [], []
    for data in datas:
        states = _chosen(model, data)
        if states is None:  # an empty doc, or zeros for a doc the transformer did not run on
            outputs.append(data)
            used.append(None)
            continue
        mixed = sum(weight * state for weight, state in zip(host_weights, states)) * gamma
        output = type(data.model_output)(last_hidden_state=mixed)
        outputs.append(type(data)(wordpieces=data.wordpieces, model_output=output, align=data.align))
        used.append(states)

    def backprop(d_outputs: List) -> List:
        xp = ops.xp
        d_weights = ops.alloc1f(len(w))
        d_gamma = xp.zeros((1,), dtype="float64")
        d_datas = []
        for data, d_data, states in zip(datas, d_outputs, used):
            if states is None:
                d_datas.append(d_data)
                continue
            grad = d_data.model_output.last_hidden_state
            dots = xp.stack([(grad * state).sum() for state in states]).astype("float32")
            d_weights += gamma * dots
            d_gamma += (weights * dots).sum().astype("float64")
            d_last = grad * (gamma * host_weights[-1] if _ends_with_last(model, data) else 0.0)
            d_datas.append(type(d_data)(wordpieces=d_data.wordpieces, align=d_data.align,
                                        model_output=type(d_data.model_output)(last_hidden_state=d_last)))
        # through the softmax: d w_i = p_i * (g_i - sum_j p_j g_j)
        model.inc_grad("w", weights * (d_weights - (weights * d_weights).sum()))
        model.inc_grad("gamma", d_gamma.astype("float32"))
        return d_datas

    return outputs, backprop


def _chosen(model: Model, data) -> Optional[List]:
    """The chosen hidden states of ``data``; None where there is nothing to mix: an empty doc, or
    the zeros a listener gives for a doc the transformer has not annotated."""
    output = data.model_output
    if "last_hidden_state" not in output or output.last_hidden_state.size == 0:
        return None
    states = output.get("hidden_states")
    if states is None:
        if not output.last_hidden_state.any():
            return None
        raise ValueError("layer_mix: the transformer returns no hidden states; set "
                         "[components.transformer.model.transformer_config] output_hidden_states = true")
    layers = model.attrs["layers"]
    if any(not -len(states) <= i < len(states) for i in layers):
        raise ValueError(f"layer_mix: layers {layers} name hidden states the transformer does not have "
                         f"(it returns {len(states)}: the embeddings and {len(states) - 1} layers)")
    return [states[i] for i in layers]


def _ends_with_last(model: Model, data) -> bool:
    count = len(data.model_output["hidden_states"])
    return model.attrs["layers"][-1] % count == count - 1
