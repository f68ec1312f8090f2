"""The hashed sparse linear layer scores as the search kernels do and backprops into its buckets."""
import numpy as np

from spacy_hcparse.layers.sparse_linear import sparse_linear
from spacy_hcparse.transition.hashed_scoring import score


def test_forward_is_the_kernels_score_and_backprop_scatters():
    n_buckets, nO = 2**6, 3
    model = sparse_linear(n_buckets, nO=nO)
    model.initialize()
    rng = np.random.default_rng(0)
    model.set_param("W", rng.normal(size=n_buckets + nO).astype("f"))
    X = rng.integers(0, n_buckets, size=(5, 7))
    Y, backprop = model.begin_update(X)
    expected = np.empty(nO)
    for i in range(len(X)):
        score(model.get_param("W"), X[i], nO, expected)
        np.testing.assert_allclose(Y[i], expected, rtol=1e-5)
    dY = rng.normal(size=Y.shape).astype("f")
    backprop(dY)
    dW = model.get_grad("W")
    manual = np.zeros(n_buckets + nO)
    for i in range(len(X)):
        for b in X[i]:
            manual[b : b + nO] += dY[i]
    np.testing.assert_allclose(dW, manual, rtol=1e-5, atol=1e-6)
