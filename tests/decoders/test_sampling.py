"""Tests for the random tree samplers: valid trees, uniformity, and the first-order distribution."""
import numpy as np
import pytest

from spacy_hcparse.compiling import njit
from spacy_hcparse.decoders import tree_problem
from spacy_hcparse.decoders.absent import with_floor
from spacy_hcparse.decoders.sampling import head_tables, uniform_tree, weighted_tree

from .brute import all_trees


@njit(cache=True)
def _uniform_with_seed(n, seed):
    np.random.seed(seed)
    heads = np.empty(n + 1, dtype=np.int64)
    uniform_tree(heads, np.zeros(n + 1, dtype=np.bool_), np.zeros(n + 1, dtype=np.int64))
    return heads


@njit(cache=True)
def _weighted_with_seed(head_cdf, root_cdf, seed):
    np.random.seed(seed)
    n = head_cdf.shape[0] - 1
    heads = np.empty(n + 1, dtype=np.int64)
    weighted_tree(heads, np.zeros(n + 1, dtype=np.bool_), np.zeros(n + 1, dtype=np.int64), head_cdf, root_cdf)
    return heads


def sample_uniform_tree(n: int, seed: int = 0) -> np.ndarray:
    """A uniformly random single-root tree over ``n`` words (``uniform_tree`` seeded with ``seed``)."""
    return _uniform_with_seed(int(n), int(seed) % 2**32)


def sample_tree(arc, temperature: float = 1.0, seed: int = 0) -> np.ndarray:
    """A random single-root tree drawn from first-order scores ``arc[h, m]`` (``weighted_tree``
    seeded with ``seed``; absent arcs floored as the searches floor them)."""
    head_cdf, root_cdf = head_tables(with_floor(np.asarray(arc, dtype=np.float64)).arc, float(temperature))
    return _weighted_with_seed(head_cdf, root_cdf, int(seed) % 2**32)


def _frequencies(draw, n, samples):
    trees = [tuple(t) for t in all_trees(n)]
    index = {t: i for i, t in enumerate(trees)}
    counts = np.zeros(len(trees))
    for seed in range(samples):
        counts[index[tuple(draw(seed))]] += 1
    return trees, counts / samples


@pytest.mark.parametrize("n", [0, 1, 2, 7, 40])
def test_uniform_sampler_gives_valid_trees(n):
    for seed in range(20):
        heads = sample_uniform_tree(n, seed)
        assert heads.dtype == np.int64 and heads.shape == (n + 1,)
        assert tree_problem(heads) == ""


def test_uniform_sampler_is_uniform():
    trees, freq = _frequencies(lambda s: sample_uniform_tree(4, s), 4, 16000)
    expected = 1.0 / len(trees)  # 4 * 4^2 = 64 single-root trees
    assert len(trees) == 64
    assert np.all(freq > 0)
    assert np.max(np.abs(freq - expected)) < 0.5 * expected


def test_weighted_sampler_follows_first_order_scores():
    rng = np.random.default_rng(0)
    n = 3
    arc = rng.normal(size=(n + 1, n + 1))
    trees, freq = _frequencies(lambda s: sample_tree(arc, 1.0, s), n, 12000)
    # Root child r ~ softmax(arc[0, :]); given r, tree ~ prod exp(arc[h, m]) over the other words.
    root_p = np.exp(arc[0, 1:]) / np.exp(arc[0, 1:]).sum()
    weight = np.array(
        [np.exp(sum(arc[t[m], m] for m in range(1, n + 1) if t[m] != 0)) for t in trees]
    )
    roots = np.array([t.index(0) for t in trees])
    expected = np.array(
        [root_p[r - 1] * w / weight[roots == r].sum() for r, w in zip(roots, weight)]
    )
    assert np.max(np.abs(freq - expected)) < 0.02


def test_weighted_sampler_is_valid_with_peaked_and_cyclic_scores():
    n = 30
    arc = np.zeros((n + 1, n + 1))
    for m in range(1, n + 1):  # every word strongly prefers its neighbour: cycles everywhere
        arc[m % n + 1, m] = 50.0
    for seed in range(10):
        assert tree_problem(sample_tree(arc, 1.0, seed)) == ""
