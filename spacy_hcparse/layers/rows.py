"""Row blocks stacked into one array and cut back, on any device.

The scorers stack every block's rows (``xp.vstack``) to run one product per batch, and cut the
result back into blocks. The cuts are host offsets and plain slices, so they work on numpy and
cupy arrays alike (``np.split`` of a device array does not) and cost no device call.

Lists of arrays cross between host and device the same way: laid end to end, copied once, cut
back (``host_arrays``, ``device_arrays``).
"""
from typing import Sequence, Tuple

import numpy as np

from ..decoders.batch import cut as split_rows  # noqa: F401  (the one definition; re-exported for the layers)


def row_offsets(sizes: Sequence[int]) -> np.ndarray:
    """(len(sizes),) int64 host array: the row where each block starts in the stacked array."""
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)


def host_arrays(ops, values: Sequence) -> list:
    """``[ops.to_numpy(v) for v in values]`` in one device-to-host copy where they are on a device:
    laid end to end there, copied once, cut back (the same values, shapes and dtype; on a GPU
    each copy is a synchronization, and a batch has hundreds of spans). Numpy arrays, and lists
    of mixed dtypes, go one by one as before."""
    values = list(values)
    if len(values) < 2 or any(isinstance(v, np.ndarray) for v in values) or len({v.dtype for v in values}) > 1:
        return [ops.to_numpy(v) for v in values]
    return split_flat(ops.to_numpy(ops.xp.concatenate([v.ravel() for v in values])), [v.shape for v in values])


def device_arrays(ops, values: Sequence, dtype: str = "f") -> list:
    """``[ops.asarray(v, dtype=dtype) for v in values]`` in one host-to-device copy where ``ops``
    is a device's and the values are host arrays: laid end to end on the host, copied once, cut
    back into views (the same values and shapes). On numpy's ops, or where a value is already on
    the device, one by one as before."""
    values = list(values)
    if ops.xp is np or len(values) < 2 or not all(isinstance(v, np.ndarray) for v in values):
        return [ops.asarray(v, dtype=dtype) for v in values]
    flat = np.concatenate([v.ravel() for v in values]).astype(dtype, copy=False)
    return split_flat(ops.asarray(flat, dtype=dtype), [v.shape for v in values])


def split_flat(flat: np.ndarray, shapes: Sequence[Tuple[int, ...]]) -> list:
    """``flat`` cut into consecutive arrays of ``shapes`` (views)."""
    out, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        out.append(flat[start: start + size].reshape(shape))
        start += size
    return out
