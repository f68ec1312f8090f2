"""Sentence boundaries from token vectors: a logit per token for "this token starts a sentence".

``S[i] = w . relu(W [x_{i-1}; x_i] + b) + c`` over a doc's token vectors ``x`` (the tok2vec's
output over the whole doc, so both sides of a boundary are seen), with a learned vector in place
of ``x_{-1}``. With a ``context`` layer (a BiLSTM over the whole doc), ``x`` is the tok2vec row
and the context's row side by side, so a boundary is judged on more than the few words a CNN
window sees. Input: one (n_tokens, d) array per doc; output: one (n_tokens,) array per doc.
"""
from typing import Callable, List, Optional, Tuple

import numpy as np
from thinc.api import Linear, Model, chain, concatenate, noop, with_array
from thinc.types import Floats1d, Floats2d

from .mlp import relu_projection
from .rows import row_offsets, split_rows


def sentence_starts(width: int = 64, dropout: float = 0.1,
                    context: Optional[Model[List[Floats2d], List[Floats2d]]] = None,
                    ) -> Model[List[Floats2d], List[Floats1d]]:
    """The scorer: a ReLU layer of ``width`` (fixed ``dropout``) over the token pair, then a logit;
    ``context`` (optional, list in, list out, its ``nO`` set) runs over each doc first."""
    mlp = chain(relu_projection(width, dropout, fixed=True), with_array(Linear(nO=1)))
    # Without a context the node keeps its one layer, so pipelines saved before it load.
    layers = [mlp] if context is None else [mlp, concatenate(noop(), context)]
    return Model("sentence_starts", forward, init=init, layers=layers, params={"before": None},
                 dims={"nI": None}, attrs={"context_width": 0 if context is None else context.get_dim("nO")})


def init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    if not model.has_dim("nI") or model.get_dim("nI") is None:
        model.set_dim("nI", X[0].shape[1])
    width = model.get_dim("nI") + model.attrs["context_width"]
    if len(model.layers) > 1:
        model.layers[1].initialize(X=[model.ops.alloc2f(3, model.get_dim("nI"))])
    model.set_param("before", model.ops.alloc1f(width))
    model.layers[0].initialize(X=[model.ops.alloc2f(2, 2 * width)])
    return model


def forward(model: Model, X: List[Floats2d], is_train: bool) -> Tuple[List[Floats1d], Callable]:
    """All docs' rows in one stacked array: one gather builds the pairs, one MLP call scores them."""
    if not X:
        return [], lambda d_logits: []
    xp = model.ops.xp
    X, bp_rows = model.layers[1](X, is_train) if len(model.layers) > 1 else (X, lambda dX: dX)
    before = model.get_param("before")
    width = before.shape[0]
    sizes = [len(x) for x in X]
    rows = xp.vstack(X) if len(X) > 1 else X[0]
    prev, starts = _previous_rows(sizes)
    # Row 0 of `ext` is `before`, row r + 1 the stacked row r: each row's predecessor is ext[prev].
    ext = xp.vstack((before[None, :], rows))
    pairs = xp.hstack((ext[model.ops.asarray_i(prev)], rows))
    logits, bp_mlp = model.layers[0](pairs, is_train)  # with_array passes one array straight through

    def backprop(d_logits: List[Floats1d]) -> List[Floats2d]:
        d_flat = xp.concatenate([d.reshape(-1) for d in d_logits]) if d_logits else model.ops.alloc1f(0)
        d_pairs = bp_mlp(model.ops.asarray2f(d_flat.reshape(-1, 1)))
        d_prev = d_pairs[:, :width]
        dx = xp.ascontiguousarray(d_pairs[:, width:])
        follows = model.ops.asarray_i(np.flatnonzero(~starts))  # unique rows: a plain += is exact
        dx[follows - 1] += d_prev[follows]
        model.inc_grad("before", d_prev[model.ops.asarray_i(np.flatnonzero(starts))].sum(axis=0))
        return bp_rows(split_rows(dx, sizes))

    return [y.reshape(-1) for y in split_rows(logits, sizes)], backprop


def _previous_rows(sizes: List[int]) -> Tuple[np.ndarray, np.ndarray]:
    """Host arrays over the stacked rows: ``prev[r]``, the row of ``ext`` (``before`` then the
    rows) that precedes row ``r`` (``r``, i.e. stacked row ``r - 1``, or 0 at a doc's first row),
    and ``starts[r]``, whether row ``r`` is a doc's first."""
    total = int(sum(sizes))
    starts = np.zeros(total, dtype=bool)
    firsts = row_offsets(sizes)[np.asarray(sizes, dtype=np.int64) > 0]
    starts[firsts] = True
    prev = np.where(starts, 0, np.arange(total))
    return prev, starts
