"""Biaffine arc scorer (Dozat & Manning 2017): (n+1, d) blocks -> (n+1, n+1) arc score blocks."""
from typing import Callable, List, Optional, Tuple

from thinc.api import Model
from thinc.types import Floats2d

from .distance import N_BUCKETS, distance_buckets
from .mlp import relu_projection
from .rows import split_rows


def biaffine_arc(width: int = 256, dropout: float = 0.2, fixed_dropout: bool = False) -> Model[List[Floats2d], List[Floats2d]]:
    """``S[h, m] = (dep_m . (U head_h) + u . head_h + dep_m . E[b] + e[b]) / sqrt(width)``.

    ``head``/``dep`` are ReLU projections of the encoder rows and ``b = distance_buckets[h, m]``
    the signed distance bucket, so each word learns how far away its head tends to be.

    The 1/sqrt(width) keeps one optimizer step on the zero-initialised ``U`` from moving every
    score by O(width) at once (Adam moves each of the width^2 entries by about the learn rate).

    Index 0 of each block is the root; ``S[:, 0]`` and the diagonal are meaningless by convention.
    ``fixed_dropout``: see ``layers.mlp``.
    """
    head = relu_projection(width, dropout, fixed_dropout)
    dep = relu_projection(width, dropout, fixed_dropout)
    return Model(
        "biaffine_arc",
        forward,
        init=init,
        layers=[head, dep],
        params={"U": None, "u": None, "E": None, "e": None},
        dims={"nI": None, "nH": width},
    )


def init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    for layer in model.layers:
        layer.initialize(X=X)
    width = model.get_dim("nH")
    model.set_param("U", model.ops.alloc2f(width, width))
    model.set_param("u", model.ops.alloc1f(width))
    model.set_param("E", model.ops.alloc2f(N_BUCKETS, width))
    model.set_param("e", model.ops.alloc1f(N_BUCKETS))
    return model


def forward(model: Model, X: List[Floats2d], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    if not X:
        return [], lambda d_scores: []
    heads, bp_head = model.layers[0](X, is_train)
    deps, bp_dep = model.layers[1](X, is_train)
    U = model.get_param("U")
    u = model.get_param("u")
    E = model.get_param("E")
    e = model.get_param("e")
    gemm = model.ops.gemm  # blis, single-threaded like the rest of spaCy's CPU models
    xp = model.ops.xp
    scale = model.get_dim("nH") ** -0.5
    # S = (H U D^T + (H u) 1^T + DE[m, bucket(h, m)]) * scale; the products that do not pair two
    # blocks' rows (H U, H u, D E^T) run once over all blocks' rows stacked.
    sizes = [len(H) for H in heads]
    H_all, D_all = xp.vstack(heads), xp.vstack(deps)
    HU = split_rows(gemm(H_all, U), sizes)
    Hu = split_rows(H_all @ u, sizes)
    DE = split_rows(gemm(D_all, E, trans2=True) + e, sizes)  # (n+1, buckets) per block
    cols = [xp.arange(len(D))[None, :] for D in deps]
    scores = [
        (gemm(HU_, D, trans2=True) + Hu_[:, None] + DE_[c, distance_buckets(len(D), xp)]) * scale
        for HU_, Hu_, D, DE_, c in zip(HU, Hu, deps, DE, cols)
    ]

    def backprop(d_scores: List[Floats2d]) -> List[Floats2d]:
        dU = model.ops.alloc2f(*U.shape)
        du = model.ops.alloc1f(u.shape[0])
        dE = model.ops.alloc2f(*E.shape)
        de = model.ops.alloc1f(e.shape[0])
        d_heads, d_deps = [], []
        for H, HU_, D, dS in zip(heads, HU, deps, d_scores):
            dS = xp.ascontiguousarray(dS, dtype="f") * scale
            row = dS.sum(axis=1)
            dSD = gemm(dS, D)
            dU += gemm(H, dSD, trans1=True)
            du += H.T @ row
            d_heads.append(gemm(dSD, U, trans2=True) + row[:, None] * u[None, :])
            size = len(D)
            flat = (distance_buckets(size, xp) + N_BUCKETS * xp.arange(size)[None, :]).ravel()
            dDE = xp.bincount(flat, weights=dS.ravel(), minlength=size * N_BUCKETS)
            dDE = dDE.reshape(size, N_BUCKETS).astype("f")
            dE += gemm(dDE, D, trans1=True)
            de += dDE.sum(axis=0)
            d_deps.append(gemm(dS, HU_, trans1=True) + gemm(dDE, E))
        model.inc_grad("U", dU)
        model.inc_grad("u", du)
        model.inc_grad("E", dE)
        model.inc_grad("e", de)
        dX_head = bp_head(d_heads)
        dX_dep = bp_dep(d_deps)
        return [a + b for a, b in zip(dX_head, dX_dep)]

    return scores, backprop
