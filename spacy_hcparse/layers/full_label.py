"""Full-rank biaffine label scorer (Dozat & Manning 2017): label scores for given arcs.

``S[(h, m), l] = [dep_m; 1]^T U_l [head_h; 1] + F[b, l]``

``dep``/``head`` are separate ReLU projections (MLPs) of the encoder rows, ``U_l`` a full
(width+1) x (width+1) matrix per label: its bilinear block pairs the two sides, its last row
and column are the linear terms of each side and its corner the label's bias. ``F[b, l]`` adds
the signed distance bucket ``b = distance_buckets[h, m]`` of the arc (direction and length,
which a CNN encoder without positions cannot tell from the two vectors alone).

Cost: O(width^2 * labels) per dependent (``[dep; 1] U``, shared by all its candidate heads) and
O(width * labels) per arc. ``U`` and ``F`` start at zero: every label starts equally likely.

Input: (n+1, d) blocks (row 0 the root) and per block a (C, 2) int array of arcs ``(h, m)``.
Output: one (C, nO) block of label scores per block, row ``c`` for arc ``c``.
"""
from typing import Callable, List, Optional, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Floats2d, Ints2d

from .distance import N_BUCKETS, distance_buckets
from .mlp import head_dep_model
from .rows import row_offsets, split_rows

InT = Tuple[List[Floats2d], List[Ints2d]]


def full_label(width: int = 128, dropout: float = 0.25, nO: Optional[int] = None,
               fixed_dropout: bool = True) -> Model[InT, List[Floats2d]]:
    """The scorer; ``fixed_dropout``: see ``layers.mlp``."""
    return head_dep_model("full_label", forward, init, width, dropout, fixed_dropout,
                          params={"U": None, "F": None}, dims={"nO": nO, "nH": width})


def init(model: Model, X: Optional[InT] = None, Y=None) -> Model:
    blocks = None if X is None else X[0]
    for layer in model.layers:
        layer.initialize(X=blocks)
    side = model.get_dim("nH") + 1
    model.set_param("U", model.ops.alloc2f(side, model.get_dim("nO") * side))
    model.set_param("F", model.ops.alloc2f(N_BUCKETS, model.get_dim("nO")))
    return model


def forward(model: Model, X: InT, is_train: bool) -> Tuple[List[Floats2d], Callable]:
    """All blocks' arcs together: one gemm for every dependent's ``[dep; 1] U``, then one
    batched product per dependent with its candidate heads."""
    blocks, arcs = X
    ops = model.ops
    xp = ops.xp
    heads_vecs, bp_head = model.layers[0](blocks, is_train)
    dep_vecs, bp_dep = model.layers[1](blocks, is_train)
    U, F = model.get_param("U"), model.get_param("F")
    n_labels, side = model.get_dim("nO"), model.get_dim("nH") + 1
    arcs = [np.asarray(a, dtype=np.int64).reshape(-1, 2) for a in arcs]
    sizes = [len(b) for b in blocks]
    layout = _layout(arcs, row_offsets(sizes), sizes).on(xp)
    H, D = _with_bias(ops, xp.vstack(heads_vecs)), _with_bias(ops, xp.vstack(dep_vecs))
    mods = layout.mods
    P = ops.gemm(D[mods], U).reshape(len(mods), n_labels, side)  # per dependent with arcs
    Hc = H[layout.slots_heads]  # (dependents, K, side), padding slots read row 0
    S3 = xp.matmul(P, Hc.transpose(0, 2, 1))  # (dependents, labels, K)
    S = S3[layout.arc_dep, :, layout.arc_slot] + F[layout.buckets]

    def backprop(d_scores: List[Floats2d]) -> List[Floats2d]:
        dS = xp.ascontiguousarray(xp.concatenate(d_scores) if d_scores else S[:0], dtype="f")
        dF = ops.alloc2f(*F.shape)
        ops.scatter_add(dF, xp.asarray(layout.buckets, dtype="i"), dS)
        dS3 = xp.zeros(S3.shape, dtype="f")
        dS3[layout.arc_dep, :, layout.arc_slot] = dS
        dP = xp.matmul(dS3, Hc)  # (dependents, labels, side)
        dHc = xp.matmul(dS3.transpose(0, 2, 1), P)  # (dependents, K, side)
        dP2 = dP.reshape(len(mods), n_labels * side)
        model.inc_grad("U", ops.gemm(D[mods], dP2, trans1=True))
        model.inc_grad("F", dF)
        dD = ops.alloc2f(*D.shape)
        ops.scatter_add(dD, xp.asarray(mods, dtype="i"), ops.gemm(dP2, U, trans2=True))
        dH = ops.alloc2f(*H.shape)
        slots = layout.slots_heads.reshape(-1)
        ops.scatter_add(dH, xp.asarray(slots, dtype="i"), xp.ascontiguousarray(dHc.reshape(-1, side) * layout.slot_mask))
        d_heads = split_rows(xp.ascontiguousarray(dH[:, :-1]), sizes)
        d_deps = split_rows(xp.ascontiguousarray(dD[:, :-1]), sizes)
        return [a + b for a, b in zip(bp_head(d_heads), bp_dep(d_deps))]

    return split_rows(S, [len(a) for a in arcs]), backprop


def resized(model: Model, nO: int) -> Model:
    """The scorer with ``nO`` labels (no fewer than it has): a new node sharing its projections,
    each existing label's ``U_l`` (columns ``l*side .. (l+1)*side`` of ``U``) and ``F`` column
    copied, so its scores do not change, and the added labels' zero, as ``init`` starts them.
    A new node rather than the old one changed: an optimizer keeps its state per node and
    parameter, with the old shapes."""
    old = model.get_dim("nO")
    if nO < old:
        raise ValueError(f"full_label: cannot shrink from {old} to {nO} labels")
    ops = model.ops
    U, F = model.get_param("U"), model.get_param("F")
    new_U = ops.alloc2f(U.shape[0], nO * U.shape[0])
    new_U[:, : U.shape[1]] = U
    new_F = ops.alloc2f(F.shape[0], nO)
    new_F[:, : F.shape[1]] = F
    return Model(model.name, forward, init=init, layers=model.layers, params={"U": new_U, "F": new_F},
                 dims={**{name: model.get_dim(name) for name in model.dim_names}, "nO": nO},
                 attrs=dict(model.attrs), ops=model.ops)


class _Layout:
    """Where each arc sits in the batched product: its dependent's row among the dependents
    with arcs (``arc_dep``), its slot among that dependent's heads (``arc_slot``); per
    dependent its stacked row (``mods``) and its K head rows (``slots_heads``, padding reads
    row 0 and ``slot_mask`` zeroes its gradient); each arc's distance bucket. Built on the host;
    ``on(xp)`` moves it to a model's device."""

    def __init__(self, mods, arc_dep, arc_slot, slots_heads, slot_mask, buckets):
        self.mods, self.arc_dep, self.arc_slot = mods, arc_dep, arc_slot
        self.slots_heads, self.slot_mask, self.buckets = slots_heads, slot_mask, buckets

    def on(self, xp) -> "_Layout":
        """The same layout as ``xp`` arrays (itself for numpy)."""
        if xp is np:
            return self
        return _Layout(*(xp.asarray(a) for a in (self.mods, self.arc_dep, self.arc_slot, self.slots_heads,
                                                  self.slot_mask, self.buckets)))


def _layout(arcs: List[np.ndarray], offsets: np.ndarray, sizes: List[int]) -> _Layout:
    heads = np.concatenate([a[:, 0] + o for a, o in zip(arcs, offsets)] or [np.zeros(0, np.int64)])
    mods_all = np.concatenate([a[:, 1] + o for a, o in zip(arcs, offsets)] or [np.zeros(0, np.int64)])
    buckets = np.concatenate([distance_buckets(size)[a[:, 0], a[:, 1]] for a, size in zip(arcs, sizes)]
                             or [np.zeros(0, dtype="i")])
    mods, arc_dep = np.unique(mods_all, return_inverse=True)
    order = np.argsort(arc_dep, kind="stable")
    counts = np.bincount(arc_dep, minlength=len(mods))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    arc_slot = np.empty(len(arc_dep), dtype=np.int64)
    arc_slot[order] = np.arange(len(arc_dep)) - np.repeat(starts, counts)
    K = int(counts.max(initial=1))
    slots_heads = np.zeros((len(mods), K), dtype=np.int64)
    slots_heads[arc_dep, arc_slot] = heads
    slot_mask = np.zeros((len(mods), K), dtype="f")
    slot_mask[arc_dep, arc_slot] = 1.0
    return _Layout(mods, arc_dep, arc_slot, slots_heads, slot_mask.reshape(-1, 1), buckets)


def _with_bias(ops, X: Floats2d) -> Floats2d:
    out = ops.alloc2f(X.shape[0], X.shape[1] + 1)
    out[:, :-1] = X
    out[:, -1] = 1.0
    return out
