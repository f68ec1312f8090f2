"""Low-rank biaffine label scorer: label scores for each word given its (gold or predicted) head."""
from typing import Callable, List, Optional, Tuple

from thinc.api import Model, Relu, with_array
from thinc.types import Floats2d, Ints1d

from .distance import N_BUCKETS, distance_buckets

InT = Tuple[List[Floats2d], List[Ints1d]]


def biaffine_label(
    width: int = 96, dropout: float = 0.2, nO: Optional[int] = None, rank: int = 128
) -> Model[InT, List[Floats2d]]:
    """``S[m, l] = sum_r ([dep_m; 1] A)_r (([head_h; 1] B)_r + G[b, r]) C[l, r] + F[b, l]``.

    ``h = heads[m]`` and ``b = distance_buckets[h, m]``, the signed distance bucket of the arc.
    A biaffine form ``[dep; 1]^T W_l [head; 1]`` with ``W_l`` factored through ``rank``
    dimensions, so scoring costs O(width * rank + rank * labels) per word instead of
    O(width^2 * labels). The bias columns keep the linear terms of each side. ``G`` and ``F``
    let the label depend on the direction and length of the arc (``nsubj`` left, ``obj``
    right), which a CNN encoder without positions cannot tell from the two vectors alone.

    Input: (n+1, d) blocks (row 0 the root) and (n+1,) heads arrays (``heads[0] == -1``).
    Output: one (n, nO) block of label scores per sentence (row ``m - 1`` for word ``m``).
    """
    head = with_array(Relu(nO=width, dropout=dropout, normalize=False))
    dep = with_array(Relu(nO=width, dropout=dropout, normalize=False))
    return Model(
        "biaffine_label",
        forward,
        init=init,
        layers=[head, dep],
        params={"A": None, "B": None, "C": None, "G": None, "F": None},
        dims={"nO": nO, "nH": width, "nR": rank},
    )


def init(model: Model, X: Optional[InT] = None, Y=None) -> Model:
    blocks = None if X is None else X[0]
    for layer in model.layers:
        layer.initialize(X=blocks)
    width = model.get_dim("nH") + 1
    rank = model.get_dim("nR")
    scale = (2.0 / (width + rank)) ** 0.5
    xp = model.ops.xp
    rng = xp.random.RandomState(0)
    model.set_param("A", (rng.normal(size=(width, rank)) * scale).astype("f"))
    model.set_param("B", (rng.normal(size=(width, rank)) * scale).astype("f"))
    model.set_param("C", model.ops.alloc2f(model.get_dim("nO"), rank))
    model.set_param("G", model.ops.alloc2f(N_BUCKETS, rank))
    model.set_param("F", model.ops.alloc2f(N_BUCKETS, model.get_dim("nO")))
    return model


def forward(model: Model, X: InT, is_train: bool) -> Tuple[List[Floats2d], Callable]:
    blocks, heads = X
    ops = model.ops
    head_vecs, bp_head = model.layers[0](blocks, is_train)
    dep_vecs, bp_dep = model.layers[1](blocks, is_train)
    A, B, C, G, F = (model.get_param(name) for name in "ABCGF")
    gemm = ops.gemm
    cached, scores = [], []
    for H, D, hd in zip(head_vecs, dep_vecs, heads):
        hd = ops.xp.asarray(hd)
        buckets = distance_buckets(len(hd))[hd[1:], ops.xp.arange(1, len(hd))]
        Hs = _with_bias(ops, H[hd[1:]])
        Ds = _with_bias(ops, D[1:])
        P, Q = gemm(Ds, A), gemm(Hs, B) + G[buckets]
        Z = P * Q
        cached.append((Hs, Ds, P, Q, Z, buckets))
        scores.append(gemm(Z, C, trans2=True) + F[buckets])

    def backprop(d_scores: List[Floats2d]) -> List[Floats2d]:
        dA, dB, dC = ops.alloc2f(*A.shape), ops.alloc2f(*B.shape), ops.alloc2f(*C.shape)
        dG, dF = ops.alloc2f(*G.shape), ops.alloc2f(*F.shape)
        d_heads, d_deps = [], []
        for (Hs, Ds, P, Q, Z, buckets), dS, hd, H in zip(cached, d_scores, heads, head_vecs):
            dS = ops.xp.ascontiguousarray(dS, dtype="f")
            dZ = gemm(dS, C)
            dC += gemm(dS, Z, trans1=True)
            dP, dQ = dZ * Q, dZ * P
            dA += gemm(Ds, dP, trans1=True)
            dB += gemm(Hs, dQ, trans1=True)
            ops.xp.add.at(dG, buckets, dQ)
            ops.xp.add.at(dF, buckets, dS)
            dH = ops.alloc2f(*H.shape)
            dHs = ops.xp.ascontiguousarray(gemm(dQ, B, trans2=True)[:, :-1])
            ops.scatter_add(dH, ops.xp.ascontiguousarray(hd[1:], dtype="i"), dHs)
            dD = ops.alloc2f(*H.shape)
            dD[1:] = gemm(dP, A, trans2=True)[:, :-1]
            d_heads.append(dH)
            d_deps.append(dD)
        for name, grad in zip("ABCGF", (dA, dB, dC, dG, dF)):
            model.inc_grad(name, grad)
        dX_head = bp_head(d_heads)
        dX_dep = bp_dep(d_deps)
        return [a + b for a, b in zip(dX_head, dX_dep)]

    return scores, backprop


def _with_bias(ops, X: Floats2d) -> Floats2d:
    out = ops.alloc2f(X.shape[0], X.shape[1] + 1)
    out[:, :-1] = X
    out[:, -1] = 1.0
    return out
