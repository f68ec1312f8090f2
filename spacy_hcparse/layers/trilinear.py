"""Low-rank trilinear scorer for higher-order factors over index triples.

Used twice: for sibling factors ``(h, s, m)`` and grandparent factors ``(g, h, m)``. Each role has
its own ReLU projection to ``rank`` dimensions and a triple scores
``sum_r w[r] * A[i, r] * B[j, r] * C[k, r]`` (a rank-``rank`` CP tensor, as in low-rank tensor
parsers). ``w`` starts at zero, like a biaffine core: the factors begin silent and the encoder
only feels them once they have learned something.
With ``null_middle`` the middle role of a triple ``(i, i, k)`` (``s == h``: the closest sibling)
uses a learned vector instead of the projection of word ``i``.
"""
from typing import Callable, List, Optional, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Floats1d, Floats2d, Ints2d

from ..compiling import njit
from .mlp import relu_projection
from .rows import row_offsets, split_rows

InT = Tuple[List[Floats2d], List[Ints2d]]


def trilinear(name: str, rank: int = 64, dropout: float = 0.2, null_middle: bool = False,
              fixed_dropout: bool = False) -> Model[InT, List[Floats1d]]:
    """Scores for (T, 3) index triples into each (n+1, d) block, one (T,) array per block.
    ``fixed_dropout``: see ``layers.mlp``."""
    roles = [relu_projection(rank, dropout, fixed_dropout) for _ in range(3)]
    return Model(
        name,
        forward,
        init=init,
        layers=roles,
        params={"null": None, "w": None},
        dims={"nH": rank},
        attrs={"null_middle": null_middle},
    )


def init(model: Model, X: Optional[InT] = None, Y=None) -> Model:
    blocks = None if X is None else X[0]
    for layer in model.layers:
        layer.initialize(X=blocks)
    # Small non-zero start so the product has a gradient in every factor.
    rank = model.get_dim("nH")
    model.set_param("null", model.ops.xp.full((rank,), 0.1, dtype="f"))
    model.set_param("w", model.ops.alloc1f(rank))
    return model


def forward(model: Model, X: InT, is_train: bool) -> Tuple[List[Floats1d], Callable]:
    blocks, triples = X
    ops = model.ops
    xp = ops.xp
    if not blocks:
        return [], lambda d_scores: []
    # All blocks' rows stacked and all triples shifted to index them: one projection per role
    # and one gather-multiply for the whole batch instead of one per sentence.
    sizes = [len(b) for b in blocks]
    counts = [len(idx) for idx in triples]
    idx = np.concatenate([np.asarray(t, dtype=np.int64).reshape(-1, 3) + o
                          for t, o in zip(triples, row_offsets(sizes))])
    # with_array's inner layer on the stacked rows is what with_array does with the list.
    stacked = xp.vstack(blocks)
    projected, backprops = zip(*(role.layers[0](stacked, is_train) for role in model.layers))
    null = model.get_param("null")
    w = model.get_param("w")
    null_middle = bool(model.attrs["null_middle"])
    if xp is np:
        rows = [np.ascontiguousarray(p, dtype=np.float32) for p in projected]
        flat = _triple_scores(*rows, w, null, idx, null_middle)
        if not is_train:
            return split_rows(flat, counts), lambda d_scores: []

        def backprop_host(d_scores: List[Floats1d]) -> List[Floats2d]:
            dS = np.concatenate([np.asarray(d, dtype=np.float32).reshape(-1) for d in d_scores])
            d_rows, d_w, d_null = _triple_gradients(*rows, w, null, idx, null_middle, dS)
            model.inc_grad("w", d_w)
            model.inc_grad("null", d_null)
            return split_rows(sum(bp(d) for bp, d in zip(backprops, d_rows)), sizes)

        return split_rows(flat, counts), backprop_host
    idx = xp.asarray(idx)  # the triples index the device's rows
    A, B, C = (projected[r][idx[:, r]] for r in range(3))
    is_null = None
    if null_middle:
        is_null = idx[:, 0] == idx[:, 1]
        B[is_null] = null  # B is a fresh gathered copy
    scores = split_rows((A * B * C) @ w, counts)

    def backprop(d_scores: List[Floats1d]) -> List[Floats2d]:
        dS = xp.ascontiguousarray(xp.concatenate([d.reshape(-1) for d in d_scores])[:, None], dtype="f")
        model.inc_grad("w", (dS * A * B * C).sum(axis=0))
        dSw = dS * w[None, :]
        dA, dB, dC = dSw * B * C, dSw * A * C, dSw * A * B
        if is_null is not None:
            model.inc_grad("null", dB[is_null].sum(axis=0))
            dB[is_null] = 0.0
        else:
            model.inc_grad("null", ops.alloc1f(null.shape[0]))
        d_stacked = 0.0
        for role, d_role in enumerate((dA, dB, dC)):
            d_proj = ops.alloc2f(*projected[role].shape)
            ops.scatter_add(d_proj, xp.ascontiguousarray(idx[:, role], dtype="i"), d_role)
            d_stacked = d_stacked + backprops[role](d_proj)
        return split_rows(d_stacked, sizes)

    return scores, backprop


@njit(cache=True)
def _triple_scores(A, B, C, w, null, idx, null_middle):
    """``sum_r w[r] A[i, r] B[j, r] C[k, r]`` per triple (i, j, k) of ``idx``, without gathering
    (T, rank) copies of the rows: prediction's memory traffic is the rows, not the triples.
    Each triple's sum runs over ``r`` in order in float64 (the scores do not depend on the
    blocking); four triples at a time, so that four sums advance together."""
    count = idx.shape[0]
    rank = w.shape[0]
    out = np.empty(count, dtype=np.float32)
    middles = np.empty((B.shape[0] + 1, rank), dtype=B.dtype)  # B's rows, then the null middle
    middles[: B.shape[0]] = B
    middles[B.shape[0]] = null
    for t in range(0, count - count % 4, 4):
        a0, b0, c0 = _triple_rows(A, middles, C, idx, t, null_middle)
        a1, b1, c1 = _triple_rows(A, middles, C, idx, t + 1, null_middle)
        a2, b2, c2 = _triple_rows(A, middles, C, idx, t + 2, null_middle)
        a3, b3, c3 = _triple_rows(A, middles, C, idx, t + 3, null_middle)
        s0 = s1 = s2 = s3 = 0.0
        for r in range(rank):
            s0 += w[r] * a0[r] * b0[r] * c0[r]
            s1 += w[r] * a1[r] * b1[r] * c1[r]
            s2 += w[r] * a2[r] * b2[r] * c2[r]
            s3 += w[r] * a3[r] * b3[r] * c3[r]
        out[t], out[t + 1], out[t + 2], out[t + 3] = s0, s1, s2, s3
    for t in range(count - count % 4, count):
        a, b, c = _triple_rows(A, middles, C, idx, t, null_middle)
        total = 0.0
        for r in range(rank):
            total += w[r] * a[r] * b[r] * c[r]
        out[t] = total
    return out


@njit(cache=True, inline="always")
def _triple_rows(A, middles, C, idx, t, null_middle):
    """Triple ``t``'s rows of the three roles (the middle one from ``middles``: B's rows, then
    the null vector)."""
    i, j, k = idx[t, 0], idx[t, 1], idx[t, 2]
    if null_middle and i == j:
        j = middles.shape[0] - 1
    return A[i], middles[j], C[k]


@njit(cache=True)
def _triple_gradients(A, B, C, w, null, idx, null_middle, dS):
    """The gradients of ``_triple_scores`` given the scores' ``dS`` (T,): of the three roles' rows
    (each shaped as its rows), of ``w`` and of ``null``, accumulated triple by triple without
    gathering (T, rank) copies (the device path's products, in its order)."""
    dA, dB, dC = np.zeros_like(A), np.zeros_like(B), np.zeros_like(C)
    rank = w.shape[0]
    d_w = np.zeros(rank, dtype=np.float32)
    d_null = np.zeros(rank, dtype=np.float32)
    for t in range(idx.shape[0]):
        i, j, k = idx[t, 0], idx[t, 1], idx[t, 2]
        is_null = null_middle and i == j
        middle = null if is_null else B[j]
        g = dS[t]
        for r in range(rank):
            a, b, c = A[i, r], middle[r], C[k, r]
            d_w[r] += g * a * b * c
            gw = g * w[r]
            dA[i, r] += gw * b * c
            if is_null:
                d_null[r] += gw * a * c
            else:
                dB[j, r] += gw * a * c
            dC[k, r] += gw * a * b
    return (dA, dB, dC), d_w, d_null
