"""Prediction with the tokenizer's model (``model.build_char_model``) in fewer passes over memory.

``predict_probs(model, X)`` returns what ``model.predict(X)`` returns, up to the order of float
summation: the embedding, the windows and the softmax run as thinc layers; each Maxout ->
LayerNorm (the projection, and every residual block with its input added) is one matrix product
(``ops.gemm``, as thinc's Maxout) and one numba kernel for the bias, the maxout, the layer norm
and the residual sum, instead of a dozen numpy passes over the rows. A model of another
structure goes through ``model.predict`` unchanged.
"""
from typing import List, Optional, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Ragged

from ..compiling import njit

LAYER_NORM_EPS = 1e-08  # thinc's LayerNorm: var + 1e-08

Block = Tuple[Model, Model, Model]  # (dilated_window, maxout, layernorm)


def predict_probs(model: Model, X: Ragged) -> np.ndarray:
    """``model.predict(X)`` for a ``build_char_model`` model: (n_pieces, n_labels) probabilities."""
    layers = _layers(model)
    if layers is None:
        return model.ops.to_numpy(model.predict(X))
    embed, (maxout, norm), blocks = layers
    vectors = embed.predict(X.dataXd)
    data = _maxout_norm(maxout, norm, vectors, np.zeros((len(vectors), maxout.get_dim("nO")), dtype=np.float32))
    for window, maxout, norm in blocks:
        wide = window.predict(Ragged(data, X.lengths)).dataXd
        data = _maxout_norm(maxout, norm, wide, data)
    return model.ops.to_numpy(model.layers[-1].predict(data))


def _maxout_norm(maxout: Model, norm: Model, X: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """``residual + LayerNorm(Maxout(X))`` with the weights of the ``maxout`` and ``norm`` nodes."""
    nO, nP, nI = maxout.get_dim("nO"), maxout.get_dim("nP"), maxout.get_dim("nI")
    Y = maxout.ops.gemm(X, maxout.ops.reshape2f(maxout.get_param("W"), nO * nP, nI), trans2=True)
    return _maxout_norm_residual(np.ascontiguousarray(Y, dtype=np.float32),
                                 np.asarray(maxout.get_param("b"), dtype=np.float32).reshape(nO, nP),
                                 np.asarray(norm.get_param("G"), dtype=np.float32),
                                 np.asarray(norm.get_param("b"), dtype=np.float32),
                                 np.ascontiguousarray(residual, dtype=np.float32))


def _layers(model: Model) -> Optional[Tuple[Model, Tuple[Model, Model], List[Block]]]:
    """(embedding, (maxout, layernorm) of the projection, residual blocks) of a
    ``build_char_model`` model; None for another model."""
    names = [layer.name for layer in model.layers]
    if len(names) < 3 or names[-2:] != ["ragged_data", "softmax"] or not all(n.startswith("residual(") for n in names[1:-2]):
        return None
    first = model.layers[0].layers[0] if model.layers[0].layers else None
    if first is None or len(first.layers) != 2:
        return None
    project = {node.name: node for node in first.layers[1].walk()}
    if set(project) != {"maxout>>layernorm", "maxout", "layernorm"}:
        return None
    blocks = []
    for block in model.layers[1:-2]:
        nodes = {node.name: node for node in block.walk()}
        windows = [node for node in block.walk() if node.name == f"dilated_window({node.attrs.get('dilation')})"]
        if len(windows) != 1 or "maxout" not in nodes or "layernorm" not in nodes:
            return None
        blocks.append((windows[0], nodes["maxout"], nodes["layernorm"]))
    return first.layers[0], (project["maxout"], project["layernorm"]), blocks


@njit(cache=True)
def _maxout_norm_residual(Y: np.ndarray, b: np.ndarray, G: np.ndarray, beta: np.ndarray,
                          X: np.ndarray) -> np.ndarray:
    """Per row: ``z[o] = max_p (Y[o * nP + p] + b[o, p])``, then ``X + LayerNorm(z)`` (thinc's:
    ``(z - mean) / sqrt(var + eps) * G + beta``). Y: (n, nO * nP); X: (n, nO)."""
    n = Y.shape[0]
    nO, nP = b.shape
    out = np.empty((n, nO), dtype=np.float32)
    z = np.empty(nO, dtype=np.float32)
    for i in range(n):
        total = np.float32(0.0)
        for o in range(nO):
            best = Y[i, o * nP] + b[o, 0]
            for p in range(1, nP):
                v = Y[i, o * nP + p] + b[o, p]
                if v > best:
                    best = v
            z[o] = best
            total += best
        mu = total / nO
        sq = np.float32(0.0)
        for o in range(nO):
            d = z[o] - mu
            sq += d * d
        scale = np.float32(1.0) / np.sqrt(sq / nO + np.float32(LAYER_NORM_EPS))
        for o in range(nO):
            out[i, o] = X[i, o] + ((z[o] - mu) * scale * G[o] + beta[o])
    return out
