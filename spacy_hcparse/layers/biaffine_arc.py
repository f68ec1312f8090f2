"""Biaffine arc scorer (Dozat & Manning 2017): (n+1, d) blocks -> (n+1, n+1) arc score blocks."""
from typing import Callable, List, Optional, Tuple

from thinc.api import Model, Relu, with_array
from thinc.types import Floats2d


def biaffine_arc(width: int = 256, dropout: float = 0.2) -> Model[List[Floats2d], List[Floats2d]]:
    """``S[h, m] = dep_m . (U head_h) + u . head_h`` with ReLU projections ``head``/``dep``.

    Index 0 of each block is the root; ``S[:, 0]`` and the diagonal are meaningless by convention.
    """
    head = with_array(Relu(nO=width, dropout=dropout, normalize=False))
    dep = with_array(Relu(nO=width, dropout=dropout, normalize=False))
    return Model(
        "biaffine_arc",
        forward,
        init=init,
        layers=[head, dep],
        params={"U": None, "u": None},
        dims={"nI": None, "nH": width},
    )


def init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    for layer in model.layers:
        layer.initialize(X=X)
    width = model.get_dim("nH")
    model.set_param("U", model.ops.alloc2f(width, width))
    model.set_param("u", model.ops.alloc1f(width))
    return model


def forward(model: Model, X: List[Floats2d], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    heads, bp_head = model.layers[0](X, is_train)
    deps, bp_dep = model.layers[1](X, is_train)
    U = model.get_param("U")
    u = model.get_param("u")
    gemm = model.ops.gemm  # blis, single-threaded like the rest of spaCy's CPU models
    # S = H U D^T + (H u) 1^T
    HU = [gemm(H, U) for H in heads]
    scores = [gemm(HU_, D, trans2=True) + (H @ u)[:, None] for HU_, H, D in zip(HU, heads, deps)]

    def backprop(d_scores: List[Floats2d]) -> List[Floats2d]:
        dU = model.ops.alloc2f(*U.shape)
        du = model.ops.alloc1f(u.shape[0])
        d_heads, d_deps = [], []
        for H, HU_, D, dS in zip(heads, HU, deps, d_scores):
            dS = model.ops.xp.ascontiguousarray(dS, dtype="f")
            row = dS.sum(axis=1)
            dSD = gemm(dS, D)
            dU += gemm(H, dSD, trans1=True)
            du += H.T @ row
            d_heads.append(gemm(dSD, U, trans2=True) + row[:, None] * u[None, :])
            d_deps.append(gemm(dS, HU_, trans1=True))
        model.inc_grad("U", dU)
        model.inc_grad("u", du)
        dX_head = bp_head(d_heads)
        dX_dep = bp_dep(d_deps)
        return [a + b for a, b in zip(dX_head, dX_dep)]

    return scores, backprop
