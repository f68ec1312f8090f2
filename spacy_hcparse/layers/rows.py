"""Row blocks stacked into one array and cut back, on any device.

The scorers stack every block's rows (``xp.vstack``) to run one product per batch, and cut the
result back into blocks. The cuts are host offsets and plain slices, so they work on numpy and
cupy arrays alike (``np.split`` of a device array does not) and cost no device call.
"""
from typing import Sequence

import numpy as np

from ..decoders.batch import cut as split_rows  # noqa: F401  (the one definition; re-exported for the layers)


def row_offsets(sizes: Sequence[int]) -> np.ndarray:
    """(len(sizes),) int64 host array: the row where each block starts in the stacked array."""
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)
