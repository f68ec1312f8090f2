"""Signed, bucketed distances between head and modifier positions (index 0 the root).

A CNN encoder sees a few words either side, so without these the arc scorer could not tell an
adjacent head from one twenty words away.
"""
from functools import lru_cache

import numpy as np

# |h - m| bucket edges: 1..5 exactly, then wider bins; beyond the last edge shares one bucket.
_EDGES = np.array([1, 2, 3, 4, 5, 6, 8, 11, 16, 21, 31], dtype=np.int64)
N_BUCKETS = 2 * len(_EDGES) + 1  # left and right of the modifier, plus "head is the root"
ROOT_BUCKET = N_BUCKETS - 1


@lru_cache(maxsize=512)
def distance_buckets(size: int, xp=np):
    """(size, size) int array ``B[h, m]``: the bucket of head ``h`` for modifier ``m``.

    Buckets ``0..len(_EDGES)-1`` are heads to the left of ``m``, the next ``len(_EDGES)`` heads to
    the right, and ``ROOT_BUCKET`` the root (``h == 0``). The result is cached, an array of ``xp``
    (a model's ``ops.xp``: numpy, read-only, or a copy on the current GPU for cupy), so that it
    can index that device's arrays.
    """
    if xp is not np:
        return xp.asarray(distance_buckets(size))
    pos = np.arange(size)
    diff = pos[:, None] - pos[None, :]  # h - m
    mag = np.searchsorted(_EDGES, np.abs(diff), side="right") - 1
    mag = np.clip(mag, 0, len(_EDGES) - 1)
    buckets = np.where(diff < 0, mag, mag + len(_EDGES))
    buckets[0, :] = ROOT_BUCKET
    buckets.setflags(write=False)
    return buckets
