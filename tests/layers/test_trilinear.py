"""The trilinear scorer's prediction kernel: the same float32 scores, bit for bit, as one plain
sum per triple, whatever the number of triples (it works on four at a time)."""
import numpy as np
import pytest

from spacy_hcparse.layers.trilinear import _triple_scores


def plain_scores(A, B, C, w, null, idx, null_middle):
    out = np.empty(len(idx), dtype=np.float32)
    for t, (i, j, k) in enumerate(idx):
        middle = null if null_middle and i == j else B[j]
        total = 0.0  # float64, r in order, each product in float32 as the kernel takes it
        for r in range(len(w)):
            total += float(np.float32(np.float32(np.float32(w[r] * A[i, r]) * middle[r]) * C[k, r]))
        out[t] = total
    return out


@pytest.mark.parametrize("count", [0, 1, 3, 4, 5, 9])
@pytest.mark.parametrize("null_middle", [False, True])
def test_triple_scores_are_the_plain_sums(count, null_middle):
    rng = np.random.default_rng(count)
    A, B, C = (rng.normal(size=(6, 5)).astype(np.float32) for _ in range(3))
    w, null = rng.normal(size=5).astype(np.float32), rng.normal(size=5).astype(np.float32)
    idx = rng.integers(0, 6, size=(count, 3)).astype(np.int64)
    idx[::2, 1] = idx[::2, 0]  # closest-sibling triples (i, i, k)
    got = _triple_scores(A, B, C, w, null, idx, null_middle)
    assert got.dtype == np.float32
    assert got.tobytes() == plain_scores(A, B, C, w, null, idx, null_middle).tobytes()
