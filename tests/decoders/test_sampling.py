"""Tests for the random tree samplers: valid trees, uniformity, and the first-order distribution."""
import numpy as np
import pytest

from spacy_hcparse.decoders import tree_problem
from spacy_hcparse.decoders.sampling import head_tables, perturbed_tree, sample_tree, sample_uniform_tree

from .brute import all_trees


def _frequencies(draw, n, samples):
    trees = [tuple(t) for t in all_trees(n)]
    index = {t: i for i, t in enumerate(trees)}
    counts = np.zeros(len(trees))
    for seed in range(samples):
        counts[index[tuple(draw(seed))]] += 1
    return trees, counts / samples


@pytest.mark.parametrize("n", [2, 3, 7, 40])
def test_perturbed_tree_stays_valid_and_near_the_best(n):
    rng = np.random.default_rng(n)
    arc = rng.normal(scale=3.0, size=(n + 1, n + 1))
    head_cdf, _ = head_tables(arc, 2.0)
    heads = np.empty(n + 1, dtype=np.int64)
    moved = 0
    for seed in range(50):
        best = sample_uniform_tree(n, seed)
        perturbed_tree(heads, best, 4, head_cdf)
        assert tree_problem(heads) == ""
        assert heads[best == 0][0] == 0  # the root child keeps its place
        changed = int((heads != best).sum())
        assert changed <= 4
        moved += changed > 0
    assert moved == 0 if n == 2 else moved > (0 if n == 3 else 40)  # n = 2: no other head exists


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


def test_sampler_input_checks():
    with pytest.raises(ValueError, match="n must be"):
        sample_uniform_tree(-1)
    with pytest.raises(ValueError, match="temperature"):
        sample_tree(np.zeros((3, 3)), temperature=0.0)
