"""Hashed sparse linear layer: bucket ids -> class scores, holding the perceptron's weights.

``W`` is flat: the weights of a feature with bucket ``b`` for classes ``0..nO-1`` are
``W[b : b + nO]`` (``len(W) == nB + nO``; ``nB`` a power of two). Input: an ``(n_states,
n_features)`` int64 array of buckets; output: ``(n_states, nO)`` scores, the sums
``transition.hashed_scoring.score`` computes inside the search kernels. The perceptron transition model
(``transition.transition_model``) hands ``W`` to those kernels instead of calling this forward, which serves
callers that score outside them. Living in a thinc layer, the weights serialize with the model.
"""
from typing import Callable, Optional, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Floats2d, Ints2d

from ..compiling import njit


def sparse_linear(n_buckets: int = 2**22, nO: Optional[int] = None) -> Model[Ints2d, Floats2d]:
    if n_buckets < 1 or n_buckets & (n_buckets - 1):
        raise ValueError(f"n_buckets must be a power of two, got {n_buckets}")
    return Model("hc_sparse_linear", forward, init=init, params={"W": None}, dims={"nB": n_buckets, "nO": nO})


def init(model: Model, X=None, Y=None) -> Model:
    if model.get_dim("nO") is None:
        raise ValueError("hc_sparse_linear needs nO (the number of classes) before initialization")
    model.set_param("W", np.zeros(model.get_dim("nB") + model.get_dim("nO"), dtype="f"))
    return model


def forward(model: Model, X: Ints2d, is_train: bool) -> Tuple[Floats2d, Callable]:
    W = model.get_param("W")
    nO = model.get_dim("nO")
    X = np.asarray(X, dtype=np.int64)
    Y = _scores(W, X, nO)

    def backprop(dY: Floats2d) -> Ints2d:
        dW = np.zeros_like(W)
        _scatter(dW, X, np.asarray(dY, dtype="f"))
        model.inc_grad("W", dW)
        return model.ops.alloc2i(*X.shape)  # integer inputs have no gradient

    return Y, backprop


@njit(cache=True)
def _scores(W, X, nO):
    out = np.zeros((X.shape[0], nO), dtype=np.float32)
    for i in range(X.shape[0]):
        for k in range(X.shape[1]):
            b = X[i, k]
            for c in range(nO):
                out[i, c] += W[b + c]
    return out


@njit(cache=True)
def _scatter(dW, X, dY):
    for i in range(X.shape[0]):
        for k in range(X.shape[1]):
            b = X[i, k]
            for c in range(dY.shape[1]):
                dW[b + c] += dY[i, c]
