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
    lengths = ops.asarray1i(X.lengths)
    ends = ops.xp.cumsum(lengths)
    starts = ends - lengths
    # rows without a left neighbour (the first d of each sequence) or a right one (the last d)
    offsets = ops.xp.arange(d)
    no_left = (starts[:, None] + offsets[None, :])[offsets[None, :] < lengths[:, None]]
    no_right = (ends[:, None] - 1 - offsets[None, :])[offsets[None, :] < lengths[:, None]]
    Y = ops.alloc2f(n, 3 * width, zeros=False)
    Y[:, width:2 * width] = data
    if n > d:
        Y[d:, :width] = data[:n - d]
        Y[:n - d, 2 * width:] = data[d:]
    Y[:min(d, n), :width] = 0
    Y[max(n - d, 0):, 2 * width:] = 0
    Y[no_left, :width] = 0
    Y[no_right, 2 * width:] = 0

    def backprop(dY: Ragged) -> Ragged:
        g = dY.dataXd.copy()
        g[no_left, :width] = 0
        g[no_right, 2 * width:] = 0
        dX = g[:, width:2 * width].copy()
        if n > d:
            dX[:n - d] += g[d:, :width]
            dX[d:] += g[:n - d, 2 * width:]
        return Ragged(dX, X.lengths)

    return Ragged(Y, X.lengths), backprop
