"""Biaffine arc scorer (Dozat & Manning 2017): (n+1, d) blocks -> (n+1, n+1) arc score blocks.

Two paths with one formula: per block on CPU, all blocks padded into one batched product on a GPU
(``BATCHED``), where a loop over blocks would launch a dozen small kernels per block.
"""
from typing import Callable, List, Optional, Tuple

import numpy
from thinc.api import Model
from thinc.types import Floats2d

from .distance import N_BUCKETS, distance_buckets
from .mlp import head_dep_model
from .rows import row_offsets, split_rows


def biaffine_arc(width: int = 256, dropout: float = 0.2, fixed_dropout: bool = False) -> Model[List[Floats2d], List[Floats2d]]:
    """``S[h, m] = (dep_m . (U head_h) + u . head_h + dep_m . E[b] + e[b]) / sqrt(width)``.

    ``head``/``dep`` are ReLU projections of the encoder rows and ``b = distance_buckets[h, m]``
    the signed distance bucket, so each word learns how far away its head tends to be.

    The 1/sqrt(width) keeps one optimizer step on the zero-initialised ``U`` from moving every
    score by O(width) at once (Adam moves each of the width^2 entries by about the learn rate).

    Index 0 of each block is the root; ``S[:, 0]`` and the diagonal are meaningless by convention.
    ``fixed_dropout``: see ``layers.mlp``.
    """
    return head_dep_model("biaffine_arc", forward, init, width, dropout, fixed_dropout,
                          params={"U": None, "u": None, "E": None, "e": None}, dims={"nI": None, "nH": width})


def init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    for layer in model.layers:
        layer.initialize(X=X)
    width = model.get_dim("nH")
    model.set_param("U", model.ops.alloc2f(width, width))
    model.set_param("u", model.ops.alloc1f(width))
    model.set_param("E", model.ops.alloc2f(N_BUCKETS, width))
    model.set_param("e", model.ops.alloc1f(N_BUCKETS))
    return model


# None: the batched path where the ops are not numpy's (a GPU), the per-block one on CPU (padding
# to the longest block wastes CPU flops; on a GPU the per-block loop launches a dozen small kernels
# per block). Tests set True or False to run one path anywhere.
BATCHED: Optional[bool] = None


def forward(model: Model, X: List[Floats2d], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    if not X:
        return [], lambda d_scores: []
    heads, bp_head = model.layers[0](X, is_train)
    deps, bp_dep = model.layers[1](X, is_train)
    batched = BATCHED if BATCHED is not None else model.ops.xp is not numpy
    scores, backprop = (_batched if batched else _per_block)(model, heads, deps)

    def finish(d_scores: List[Floats2d]) -> List[Floats2d]:
        d_heads, d_deps = backprop(d_scores)
        dX_head = bp_head(d_heads)
        dX_dep = bp_dep(d_deps)
        return [a + b for a, b in zip(dX_head, dX_dep)]

    return scores, finish


def _per_block(model: Model, heads: List[Floats2d], deps: List[Floats2d]) -> Tuple[List[Floats2d], Callable]:
    """One product per block (CPU). Returns the scores and a backprop to (d_heads, d_deps)."""
    U, u, E, e = (model.get_param(name) for name in ("U", "u", "E", "e"))
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

    def backprop(d_scores: List[Floats2d]) -> Tuple[List[Floats2d], List[Floats2d]]:
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
        _inc_grads(model, dU, du, dE, de)
        return d_heads, d_deps

    return scores, backprop


def _batched(model: Model, heads: List[Floats2d], deps: List[Floats2d]) -> Tuple[List[Floats2d], Callable]:
    """All blocks at once (a GPU): ``H U`` and ``D`` padded to (B, L, width), one batched product
    for every block's ``H U D^T``, and each block's (n, n) entries gathered into one flat array by
    one index (``layout``); the ``H u`` and distance terms are gathered from the stacked rows by
    the same entries. The same formula as ``_per_block``; sums run in another order."""
    U, u, E, e = (model.get_param(name) for name in ("U", "u", "E", "e"))
    gemm = model.ops.gemm
    xp = model.ops.xp
    scale = model.get_dim("nH") ** -0.5
    sizes = [len(H) for H in heads]
    n_rows, longest, width = sum(sizes), max(sizes), U.shape[0]
    H_all, D_all = xp.vstack(heads), xp.vstack(deps)
    layout = _layout(sizes)  # to the device in one copy, cut back into views
    pos, entries, head_rows, bucket_cells = split_rows(model.ops.asarray(numpy.concatenate(layout)),
                                                       [len(a) for a in layout])
    HU_all = gemm(H_all, U)
    HU_pad = _pad(model, HU_all, pos, len(sizes), longest)
    D_pad = _pad(model, D_all, pos, len(sizes), longest)
    DE_all = gemm(D_all, E, trans2=True) + e  # (rows, buckets)
    products = xp.matmul(HU_pad, D_pad.transpose(0, 2, 1)).reshape(-1)  # (B * L * L,)
    flat = (products[entries] + (H_all @ u)[head_rows] + DE_all.reshape(-1)[bucket_cells]) * scale
    scores = [block.reshape(n, n) for block, n in zip(split_rows(flat, [n * n for n in sizes]), sizes)]

    def backprop(d_scores: List[Floats2d]) -> Tuple[List[Floats2d], List[Floats2d]]:
        d_flat = xp.concatenate([d.reshape(-1) for d in d_scores]).astype("f", copy=False) * scale
        dS = model.ops.alloc1f(len(sizes) * longest * longest)
        dS[entries] = d_flat  # entries are unique: a plain assignment
        dS = dS.reshape(len(sizes), longest, longest)
        row = dS.sum(axis=2).reshape(-1)[pos]  # pos: stacked row -> row of the padded (B * L, .)
        dSD = xp.matmul(dS, D_pad).reshape(-1, width)[pos]
        dDE = xp.bincount(bucket_cells, weights=d_flat, minlength=n_rows * N_BUCKETS)
        dDE = dDE.reshape(n_rows, N_BUCKETS).astype("f")
        d_heads = gemm(dSD, U, trans2=True) + row[:, None] * u[None, :]
        d_deps = xp.matmul(dS.transpose(0, 2, 1), HU_pad).reshape(-1, width)[pos] + gemm(dDE, E)
        _inc_grads(model, gemm(H_all, dSD, trans1=True), H_all.T @ row, gemm(dDE, D_all, trans1=True),
                   dDE.sum(axis=0))
        return split_rows(d_heads, sizes), split_rows(d_deps, sizes)

    return scores, backprop


def _layout(sizes: List[int]) -> Tuple[numpy.ndarray, ...]:
    """Host int64 index arrays for blocks of ``sizes`` rows padded to (B, L) with L = max(sizes):
    ``pos`` (rows,): each stacked row's index ``b * L + i`` in the padded rows; then per score
    entry (h, m) of each block, block by block and row-major (sum(n * n),): ``entries``, its
    index ``(b * L + h) * L + m`` in the padded (B, L, L) scores; ``head_rows``, the stacked row
    of ``h``; ``bucket_cells``, the cell ``row(m) * N_BUCKETS + bucket(h, m)`` of the stacked
    (rows, N_BUCKETS) distance scores."""
    sizes_ = numpy.asarray(sizes, dtype=numpy.int64)
    longest = int(sizes_.max())
    starts = row_offsets(sizes)
    block_of_row = numpy.repeat(numpy.arange(len(sizes_)), sizes_)
    within = numpy.arange(int(sizes_.sum())) - starts[block_of_row]  # i: the row within its block
    pos = block_of_row * longest + within
    per_row = sizes_[block_of_row]  # each row's entries: one per column m of its block
    head_rows = numpy.repeat(numpy.arange(len(pos)), per_row)
    m = numpy.arange(int(per_row.sum())) - numpy.repeat(row_offsets(per_row), per_row)
    entries = pos[head_rows] * longest + m
    h = within[head_rows]
    m_rows = starts[block_of_row[head_rows]] + m
    bucket_cells = m_rows * N_BUCKETS + distance_buckets(longest)[h, m]
    return pos, entries, head_rows, bucket_cells


def _pad(model: Model, rows: Floats2d, pos, n_blocks: int, longest: int) -> Floats2d:
    """Stacked ``rows`` (rows, k) as (n_blocks, longest, k), zeros after each block's rows."""
    out = model.ops.alloc2f(n_blocks * longest, rows.shape[1])
    out[pos] = rows
    return out.reshape(n_blocks, longest, rows.shape[1])


def _inc_grads(model: Model, dU, du, dE, de) -> None:
    for name, grad in (("U", dU), ("u", du), ("E", dE), ("e", de)):
        model.inc_grad(name, grad)
