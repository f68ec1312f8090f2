"""Low-rank biaffine label scorer: label scores for each word given its (gold or predicted) head."""
from typing import Callable, List, Optional, Tuple

import numpy as np
from thinc.api import Model, Relu, with_array
from thinc.types import Floats2d, Ints1d

from .distance import N_BUCKETS, distance_buckets

InT = Tuple[List[Floats2d], List[Ints1d]]
PARAMS = ("A", "B", "C", "G", "F", "Wd", "Wh")
CHILD_PARAMS = ("Wl", "Wr")


def biaffine_label(
    width: int = 96,
    dropout: float = 0.2,
    nO: Optional[int] = None,
    rank: int = 128,
    linear: bool = True,
    children: bool = False,
) -> Model[InT, List[Floats2d]]:
    """``S[m, l] = sum_r ([dep_m; 1] A)_r (([head_h; 1] B)_r + G[b, r]) C[l, r]
    + (dep_m Wd + head_h Wh)[l] + F[b, l]``.

    ``h = heads[m]`` and ``b = distance_buckets[h, m]``, the signed distance bucket of the arc.
    A biaffine form ``[dep; 1]^T W_l [head; 1]`` with ``W_l`` factored through ``rank``
    dimensions, so scoring costs O(width * rank + rank * labels) per word instead of
    O(width^2 * labels). The bias columns keep the linear terms of each side. ``G`` and ``F``
    let the label depend on the direction and length of the arc (``nsubj`` left, ``obj``
    right), which a CNN encoder without positions cannot tell from the two vectors alone.
    ``Wd``/``Wh`` are the linear terms of Dozat & Manning's label classifier: a direct path from
    each side to the labels that learns quickly, where the product term starts at zero
    (``C = 0``) and needs ``A``, ``B`` and ``C`` to align first. ``linear=False`` leaves them
    out (``GraphParserModel.v1``).

    ``children=True`` adds ``([L_m; 1] Wl + [R_m; 1] Wr)[l]``, where ``L_m``/``R_m`` are the
    dependent-side vectors of ``m``'s outermost left and right dependents in the same tree (a
    zero row, bias included, when there is none): the word's own function words (``and`` of a
    ``conj``, ``to`` of an ``xcomp``, ``because`` of an ``advcl``) that a window encoder may not
    see. In training they come from the gold tree, at prediction from the decoded one. They are
    read as fixed inputs: no gradient flows back into the children's rows (with it, a 6,000-step
    EWT run ended 0.4 dev UAS lower than without the term).

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
        params={name: None for name in (PARAMS if linear else PARAMS[:5]) + (CHILD_PARAMS if children else ())},
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
    if "Wd" in model.param_names:
        model.set_param("Wd", model.ops.alloc2f(model.get_dim("nH"), model.get_dim("nO")))
        model.set_param("Wh", model.ops.alloc2f(model.get_dim("nH"), model.get_dim("nO")))
    for name in CHILD_PARAMS:
        if name in model.param_names:
            model.set_param(name, model.ops.alloc2f(model.get_dim("nH") + 1, model.get_dim("nO")))
    return model


def forward(model: Model, X: InT, is_train: bool) -> Tuple[List[Floats2d], Callable]:
    """All spans' words are scored together (one set of gemms per batch, not per sentence)."""
    blocks, heads = X
    ops = model.ops
    xp = ops.xp
    head_vecs, bp_head = model.layers[0](blocks, is_train)
    dep_vecs, bp_dep = model.layers[1](blocks, is_train)
    A, B, C, G, F = (model.get_param(name) for name in PARAMS[:5])
    linear = "Wd" in model.param_names
    Wd, Wh = (model.get_param(name) for name in PARAMS[5:]) if linear else (None, None)
    gemm = ops.gemm
    heads = [xp.asarray(hd) for hd in heads]
    lengths = [len(hd) - 1 for hd in heads]
    Hh = _rows(ops, [H[hd[1:]] for H, hd in zip(head_vecs, heads)], A.shape[0] - 1)  # each word's head row
    Dd = _rows(ops, [D[1:] for D in dep_vecs], A.shape[0] - 1)
    buckets = xp.concatenate(
        [distance_buckets(len(hd))[hd[1:], xp.arange(1, len(hd))] for hd in heads] or [xp.zeros(0, dtype="i")]
    )
    Hs, Ds = _with_bias(ops, Hh), _with_bias(ops, Dd)
    P, Q = gemm(Ds, A), gemm(Hs, B) + G[buckets]
    Z = P * Q
    S = gemm(Z, C, trans2=True) + F[buckets]
    if linear:
        S += gemm(Dd, Wd) + gemm(Hh, Wh)
    children = "Wl" in model.param_names
    if children:
        Wl, Wr = model.get_param("Wl"), model.get_param("Wr")
        D_all = _with_bias(ops, _rows(ops, list(dep_vecs) + [ops.alloc2f(1, A.shape[0] - 1)], A.shape[0] - 1))
        D_all[-1] = 0.0  # the row gathered for "no such dependent"
        left_idx, right_idx = _outer_dependent_rows(heads, len(D_all) - 1)
        Lc, Rc = D_all[left_idx], D_all[right_idx]
        S += gemm(Lc, Wl) + gemm(Rc, Wr)
    splits = np.cumsum(lengths)[:-1]

    def backprop(d_scores: List[Floats2d]) -> List[Floats2d]:
        grads = {name: ops.alloc2f(*model.get_param(name).shape) for name in model.param_names}
        dS = xp.ascontiguousarray(xp.concatenate(d_scores) if d_scores else S[:0], dtype="f")
        dZ = gemm(dS, C)
        grads["C"] += gemm(dS, Z, trans1=True)
        dP, dQ = dZ * Q, dZ * P
        grads["A"] += gemm(Ds, dP, trans1=True)
        grads["B"] += gemm(Hs, dQ, trans1=True)
        xp.add.at(grads["G"], buckets, dQ)
        xp.add.at(grads["F"], buckets, dS)
        dHh = gemm(dQ, B, trans2=True)[:, :-1]
        dDd = gemm(dP, A, trans2=True)[:, :-1]
        if linear:
            grads["Wd"] += gemm(Dd, dS, trans1=True)
            grads["Wh"] += gemm(Hh, dS, trans1=True)
            dHh += gemm(dS, Wh, trans2=True)
            dDd += gemm(dS, Wd, trans2=True)
        if children:
            grads["Wl"] += gemm(Lc, dS, trans1=True)
            grads["Wr"] += gemm(Rc, dS, trans1=True)
        d_heads, d_deps = [], []
        for hd, H, dH_rows, dD_rows in zip(heads, head_vecs, np.split(dHh, splits), np.split(dDd, splits)):
            dH = ops.alloc2f(*H.shape)
            ops.scatter_add(dH, xp.ascontiguousarray(hd[1:], dtype="i"), xp.ascontiguousarray(dH_rows))
            dD = ops.alloc2f(*H.shape)
            dD[1:] = dD_rows
            d_heads.append(dH)
            d_deps.append(dD)
        for name, grad in grads.items():
            model.inc_grad(name, grad)
        dX_head = bp_head(d_heads)
        dX_dep = bp_dep(d_deps)
        return [a + b for a, b in zip(dX_head, dX_dep)]

    return np.split(S, splits) if lengths else [], backprop


def _outer_dependent_rows(heads: List[Ints1d], none_row: int) -> Tuple[np.ndarray, np.ndarray]:
    """Rows (in the sentences' stacked blocks, root rows included) of each word's outermost left
    and right dependent, ``none_row`` where it has none; one entry per word, sentences in order."""
    lefts, rights = [], []
    offset = 0
    for hd in heads:
        hd = np.asarray(hd, dtype=np.int64)
        n = len(hd) - 1
        pos = np.arange(1, n + 1)
        head = hd[1:]
        is_left = pos < head
        left = np.full(n + 1, n + 1)
        np.minimum.at(left, head[is_left], pos[is_left])
        right = np.full(n + 1, -1)
        np.maximum.at(right, head[~is_left], pos[~is_left])
        lefts.append(np.where(left[1:] <= n, left[1:] + offset, none_row))
        rights.append(np.where(right[1:] >= 1, right[1:] + offset, none_row))
        offset += n + 1
    empty = np.zeros(0, dtype=np.int64)
    return np.concatenate(lefts or [empty]), np.concatenate(rights or [empty])


def _rows(ops, parts: List[Floats2d], width: int) -> Floats2d:
    """The row blocks stacked into one (sum of rows, width) array (empty when there are none)."""
    return ops.xp.vstack(parts) if parts else ops.alloc2f(0, width)


def _with_bias(ops, X: Floats2d) -> Floats2d:
    out = ops.alloc2f(X.shape[0], X.shape[1] + 1)
    out[:, :-1] = X
    out[:, -1] = 1.0
    return out
