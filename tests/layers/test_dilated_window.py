"""dilated_window: each row sees its neighbours at the dilation within its own sequence only, and
backprop is the transpose of that map."""
import numpy as np
import pytest
from thinc.types import Ragged

from spacy_hcparse.layers.dilated_window import dilated_window


def brute(data, lengths, d):
    rows = []
    at = 0
    for n in lengths:
        seq = data[at:at + n]
        for i in range(n):
            left = seq[i - d] if i - d >= 0 else np.zeros_like(seq[i])
            right = seq[i + d] if i + d < n else np.zeros_like(seq[i])
            rows.append(np.concatenate([left, seq[i], right]))
        at += n
    return np.array(rows, dtype="f").reshape(-1, 3 * data.shape[1])


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("lengths", [[5], [1, 4, 2], [3, 0, 6], [1, 1, 1]])
def test_window_matches_brute_force_and_backprop_is_its_transpose(d, lengths):
    rng = np.random.default_rng(0)
    data = rng.normal(size=(sum(lengths), 2)).astype("f")
    layer = dilated_window(d)
    Y, backprop = layer(Ragged(data, np.array(lengths, dtype="i")), is_train=True)
    assert np.allclose(Y.dataXd, brute(data, lengths, d))
    dY = rng.normal(size=Y.dataXd.shape).astype("f")
    dX = backprop(Ragged(dY, Y.lengths)).dataXd
    # <dY, W x> == <W^T dY, x> for the linear map W
    assert np.isclose((dY * Y.dataXd).sum(), (dX * data).sum(), rtol=1e-4)


def test_dilation_must_be_positive():
    with pytest.raises(ValueError, match="dilation"):
        dilated_window(0)
