"""Low-rank biaffine label scorer: label scores for given arcs (candidate, gold or decoded)."""
from typing import Callable, List, Optional, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Floats2d, Ints2d

from .distance import N_BUCKETS, distance_buckets
from .mlp import head_dep_model
from .rows import row_offsets, split_rows

InT = Tuple[List[Floats2d], List[Ints2d]]
PARAMS = ("A", "B", "C", "G", "F", "Wd", "Wh")


def biaffine_label(
    width: int = 96,
    dropout: float = 0.2,
    nO: Optional[int] = None,
    rank: int = 128,
    linear: bool = True,
    fixed_dropout: bool = False,
) -> Model[InT, List[Floats2d]]:
    """``S[(h, m), l] = sum_r ([dep_m; 1] A)_r (([head_h; 1] B)_r + G[b, r]) C[l, r]
    + (dep_m Wd + head_h Wh)[l] + F[b, l]``.

    ``b = distance_buckets[h, m]``, the signed distance bucket of the arc. A biaffine form
    ``[dep; 1]^T W_l [head; 1]`` with ``W_l`` factored through ``rank`` dimensions, so scoring
    costs O(width * rank) per word and O(rank * labels) per arc instead of O(width^2 * labels)
    per arc.
    The bias columns keep the linear terms of each side. ``G`` and ``F`` let the label depend
    on the direction and length of the arc (``nsubj`` left, ``obj`` right), which a CNN encoder
    without positions cannot tell from the two vectors alone. ``Wd``/``Wh`` are the linear terms
    of Dozat & Manning's label classifier: a direct path from each side to the labels that
    learns quickly, where the product term starts at zero (``C = 0``) and needs ``A``, ``B`` and
    ``C`` to align first. ``linear=False`` leaves them out.

    Input: (n+1, d) blocks (row 0 the root) and per block a (C, 2) int array of arcs ``(h, m)``.
    Output: one (C, nO) block of label scores per block, row ``c`` for arc ``c``.
    ``fixed_dropout``: see ``layers.mlp``.
    """
    return head_dep_model("biaffine_label", forward, init, width, dropout, fixed_dropout,
                          params={name: None for name in (PARAMS if linear else PARAMS[:5])},
                          dims={"nO": nO, "nH": width, "nR": rank})


def init(model: Model, X: Optional[InT] = None, Y=None) -> Model:
    blocks = None if X is None else X[0]
    for layer in model.layers:
        layer.initialize(X=blocks)
    width = model.get_dim("nH") + 1
    rank = model.get_dim("nR")
    scale = (2.0 / (width + rank)) ** 0.5
    rng = np.random.RandomState(0)  # drawn on the host: the same weights on every device
    model.set_param("A", model.ops.asarray2f((rng.normal(size=(width, rank)) * scale).astype("f")))
    model.set_param("B", model.ops.asarray2f((rng.normal(size=(width, rank)) * scale).astype("f")))
    model.set_param("C", model.ops.alloc2f(model.get_dim("nO"), rank))
    model.set_param("G", model.ops.alloc2f(N_BUCKETS, rank))
    model.set_param("F", model.ops.alloc2f(N_BUCKETS, model.get_dim("nO")))
    if "Wd" in model.param_names:
        model.set_param("Wd", model.ops.alloc2f(model.get_dim("nH"), model.get_dim("nO")))
        model.set_param("Wh", model.ops.alloc2f(model.get_dim("nH"), model.get_dim("nO")))
    return model


def forward(model: Model, X: InT, is_train: bool) -> Tuple[List[Floats2d], Callable]:
    """All blocks' arcs are scored together (one set of gemms per batch, not per sentence)."""
    blocks, arcs = X
    ops = model.ops
    xp = ops.xp
    head_vecs, bp_head = model.layers[0](blocks, is_train)
    dep_vecs, bp_dep = model.layers[1](blocks, is_train)
    A, B, C, G, F = (model.get_param(name) for name in PARAMS[:5])
    linear = "Wd" in model.param_names
    Wd, Wh = (model.get_param(name) for name in PARAMS[5:]) if linear else (None, None)
    gemm = ops.gemm
    width = A.shape[0] - 1
    arcs = [np.asarray(a, dtype=np.int64).reshape(-1, 2) for a in arcs]
    counts = [len(a) for a in arcs]
    # Each block's rows are projected once (P for dependents, Q for heads), then gathered per arc:
    # a word is a candidate head or dependent of several arcs.
    sizes = [len(b) for b in blocks]
    offsets = row_offsets(sizes)
    heads = xp.asarray(np.concatenate([a[:, 0] + o for a, o in zip(arcs, offsets)] or [np.zeros(0, np.int64)]))
    mods = xp.asarray(np.concatenate([a[:, 1] + o for a, o in zip(arcs, offsets)] or [np.zeros(0, np.int64)]))
    H_all, D_all = _rows(ops, list(head_vecs), width), _rows(ops, list(dep_vecs), width)
    Hs_all, Ds_all = _with_bias(ops, H_all), _with_bias(ops, D_all)
    P_all, Q_all = gemm(Ds_all, A), gemm(Hs_all, B)
    buckets = xp.asarray(np.concatenate(
        [distance_buckets(len(b))[a[:, 0], a[:, 1]] for b, a in zip(blocks, arcs)] or [np.zeros(0, dtype="i")]
    ))
    P, Q = P_all[mods], Q_all[heads] + G[buckets]
    Z = P * Q
    S = gemm(Z, C, trans2=True) + F[buckets]
    if linear:
        S += gemm(D_all, Wd)[mods] + gemm(H_all, Wh)[heads]

    def backprop(d_scores: List[Floats2d]) -> List[Floats2d]:
        grads = {name: ops.alloc2f(*model.get_param(name).shape) for name in model.param_names}
        dS = xp.ascontiguousarray(xp.concatenate(d_scores) if d_scores else S[:0], dtype="f")
        dZ = gemm(dS, C)
        grads["C"] += gemm(dS, Z, trans1=True)
        dP, dQ = dZ * Q, dZ * P
        buckets_i, mods_i, heads_i = (xp.asarray(a, dtype="i") for a in (buckets, mods, heads))
        ops.scatter_add(grads["G"], buckets_i, dQ)
        ops.scatter_add(grads["F"], buckets_i, dS)
        dP_all, dQ_all = ops.alloc2f(*P_all.shape), ops.alloc2f(*Q_all.shape)
        ops.scatter_add(dP_all, mods_i, dP)
        ops.scatter_add(dQ_all, heads_i, dQ)
        grads["A"] += gemm(Ds_all, dP_all, trans1=True)
        grads["B"] += gemm(Hs_all, dQ_all, trans1=True)
        dH_all = gemm(dQ_all, B, trans2=True)[:, :-1]
        dD_all = gemm(dP_all, A, trans2=True)[:, :-1]
        if linear:
            dS_dep, dS_head = ops.alloc2f(len(D_all), dS.shape[1]), ops.alloc2f(len(H_all), dS.shape[1])
            ops.scatter_add(dS_dep, mods_i, dS)
            ops.scatter_add(dS_head, heads_i, dS)
            grads["Wd"] += gemm(D_all, dS_dep, trans1=True)
            grads["Wh"] += gemm(H_all, dS_head, trans1=True)
            dH_all += gemm(dS_head, Wh, trans2=True)
            dD_all += gemm(dS_dep, Wd, trans2=True)
        for name, grad in grads.items():
            model.inc_grad(name, grad)
        dX_head = bp_head(split_rows(xp.ascontiguousarray(dH_all), sizes))
        dX_dep = bp_dep(split_rows(xp.ascontiguousarray(dD_all), sizes))
        return [a + b for a, b in zip(dX_head, dX_dep)]

    return split_rows(S, counts), backprop


def resized(model: Model, nO: int) -> Model:
    """The scorer with ``nO`` labels (no fewer than it has): a new node sharing its projections,
    each existing label's weights (its row of ``C``, its column of ``F``, ``Wd``, ``Wh``) copied,
    so its scores do not change, and the added labels' weights zero, as ``init`` starts ``C``,
    ``F``, ``Wd`` and ``Wh`` (label ``l``'s score reads only label ``l``'s weights). A new node
    rather than the old one changed: an optimizer keeps its state per node and parameter, with
    the old shapes."""
    old = model.get_dim("nO")
    if nO < old:
        raise ValueError(f"biaffine_label: cannot shrink from {old} to {nO} labels")
    axes = {"C": 0, "F": 1, "Wd": 1, "Wh": 1}  # the label axis of each label-dependent weight
    params = {name: _padded(model, name, axes[name], nO) if name in axes else model.get_param(name)
              for name in model.param_names}
    return Model(model.name, forward, init=init, layers=model.layers, params=params,
                 dims={**{name: model.get_dim(name) for name in model.dim_names}, "nO": nO},
                 attrs=dict(model.attrs), ops=model.ops)


def _padded(model: Model, name: str, axis: int, size: int):
    """Parameter ``name`` with zeros appended along ``axis`` up to ``size``."""
    value = model.get_param(name)
    shape = list(value.shape)
    shape[axis] = size
    out = model.ops.alloc2f(*shape)
    out[tuple(slice(0, n) for n in value.shape)] = value
    return out


def _rows(ops, parts: List[Floats2d], width: int) -> Floats2d:
    """The row blocks stacked into one (sum of rows, width) array (empty when there are none)."""
    return ops.xp.vstack(parts) if parts else ops.alloc2f(0, width)


def _with_bias(ops, X: Floats2d) -> Floats2d:
    out = ops.alloc2f(X.shape[0], X.shape[1] + 1)
    out[:, :-1] = X
    out[:, -1] = 1.0
    return out
