"""A dilated window over the rows of each sequence of a ``Ragged``: row ``i`` becomes
``[X[i - d], X[i], X[i + d]]`` (``3 * nI`` columns), zeros where ``i - d`` or ``i + d`` falls
outside its own sequence, so sequences batched together never see each other.

Stacked with dilations 1, 2, 4, ... (each followed by a projection back to ``nI``), the receptive
field doubles with each layer at the cost of one window, as in a dilated CNN; thinc's
``expand_window`` (dilation 1) widens it by one row a layer.
"""
from typing import Callable, Tuple

from thinc.api import Model
from thinc.types import Floats2d, Ragged


def dilated_window(dilation: int) -> Model[Ragged, Ragged]:
    """The window ``[X[i - dilation], X[i], X[i + dilation]]`` of every row (see module docstring)."""
    if dilation < 1:
        raise ValueError(f"dilation must be >= 1, got {dilation}")
    return Model(f"dilated_window({dilation})", _forward, attrs={"dilation": dilation})


def _forward(model: Model, X: Ragged, is_train: bool) -> Tuple[Ragged, Callable]:
    d = model.attrs["dilation"]
    ops = model.ops
    data: Floats2d = X.dataXd
    n, width = data.shape
    # position of each row inside its sequence, and the length of that sequence
    lengths = ops.asarray1i(X.lengths)
    starts = ops.xp.repeat(ops.xp.cumsum(lengths) - lengths, lengths)
    pos = ops.xp.arange(n) - starts
    seq_len = ops.xp.repeat(lengths, lengths)
    # has_left[j]: row j + d has a left neighbour; has_right[j]: row j has a right one
    has_left = (pos >= d)[d:] if n > d else ops.xp.zeros((0,), dtype=bool)
    has_right = (pos + d < seq_len)[:n - d] if n > d else ops.xp.zeros((0,), dtype=bool)
    Y = ops.alloc2f(n, 3 * width)
    Y[:, width:2 * width] = data
    if n > d:
        Y[d:, :width] = data[:n - d] * has_left[:, None]
        Y[:n - d, 2 * width:] = data[d:] * has_right[:, None]

    def backprop(dY: Ragged) -> Ragged:
        g = dY.dataXd
        dX = g[:, width:2 * width].copy()
        if n > d:
            dX[:n - d] += g[d:, :width] * has_left[:, None]
            dX[d:] += g[:n - d, 2 * width:] * has_right[:, None]
        return Ragged(dX, X.lengths)

    return Ragged(Y, X.lengths), backprop
