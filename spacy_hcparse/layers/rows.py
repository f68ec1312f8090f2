"""Row blocks stacked into one array and cut back, on any device.

The scorers stack every block's rows (``xp.vstack``) to run one product per batch, and cut the
result back into blocks. The cuts are host offsets and plain slices, so they work on numpy and
cupy arrays alike (``np.split`` of a device array does not) and cost no device call.
"""
from typing import List, Sequence

import numpy as np


def row_offsets(sizes: Sequence[int]) -> np.ndarray:
    """(len(sizes),) int64 host array: the row where each block starts in the stacked array."""
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)


def split_rows(X, sizes: Sequence[int]) -> list:
    """``X`` (sum(sizes), ...) cut into consecutive blocks of ``sizes`` rows: views of ``X``."""
    out: List = []
    start = 0
    for size in sizes:
        out.append(X[start: start + size])
        start += size
    return out
