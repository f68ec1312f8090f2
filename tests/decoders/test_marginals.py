"""Arc marginals and the log partition function against enumeration of all trees (n <= 6),
non-projective (matrix-tree theorem) and projective (inside-outside), with absent arcs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import arc_marginals, log_partition, tree_log_prob, tree_probabilities

from .brute import all_trees, is_projective


def _enumerate(arc, projective):
    """(log Z, marginals, trees, their log-probabilities) by brute force."""
    n = arc.shape[0] - 1
    trees = [h for h in all_trees(n) if not projective or is_projective(h)]
    scores = np.array([sum(arc[h[m], m] for m in range(1, n + 1)) for h in trees])
    log_z = np.logaddexp.reduce(scores) if len(scores) else -np.inf
    if not np.isfinite(log_z):
        return log_z, None, trees, None
    marg = np.zeros((n + 1, n + 1))
    if np.isfinite(log_z):
        for heads, score in zip(trees, scores):
            marg[heads[1:], np.arange(1, n + 1)] += np.exp(score - log_z)
    return log_z, marg, trees, scores - log_z


@pytest.mark.parametrize("projective", [False, True])
@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0, 20.0])
def test_against_enumeration(projective, scale):
    rng = np.random.default_rng(int(scale * 10) + projective)
    for _ in range(25):
        n = int(rng.integers(1, 7))
        arc = rng.normal(scale=scale, size=(n + 1, n + 1))
        log_z, marg, trees, logp = _enumerate(arc, projective)
        assert log_partition(arc, projective) == pytest.approx(log_z, rel=1e-9, abs=1e-9)
        got = arc_marginals(arc, projective)
        assert got.shape == (n + 1, n + 1)
        # N(0, 20^2) scores often favour cycles by dozens of nats: the determinant then cancels
        # and the matrix-tree marginals keep about 8 digits (real parser scores keep ~15).
        assert np.allclose(got, marg, atol=1e-6 if scale > 5 and not projective else 1e-9)
        assert np.allclose(got[:, 1:].sum(axis=0), 1.0)
        assert np.all(got[:, 0] == 0.0) and np.all(np.diag(got) == 0.0)
        k = int(rng.integers(len(trees)))
        assert tree_log_prob(trees[k], arc, projective) == pytest.approx(logp[k], rel=1e-9, abs=1e-9)
        head_probs, log_prob = tree_probabilities(trees[k], arc, projective)
        assert np.allclose(head_probs, got[trees[k][1:], np.arange(1, n + 1)], atol=1e-12)
        assert log_prob == pytest.approx(logp[k], rel=1e-9, abs=1e-9)
        assert log_partition(arc, projective) == pytest.approx(log_z, rel=1e-9)


@pytest.mark.parametrize("projective", [False, True])
def test_absent_arcs(projective):
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(1, 6))
        arc = rng.normal(size=(n + 1, n + 1))
        arc[rng.random(arc.shape) < 0.3] = -np.inf
        log_z, marg, _, _ = _enumerate(arc, projective)
        assert log_partition(arc, projective) == pytest.approx(log_z, abs=1e-9) or (
            log_z == log_partition(arc, projective) == -np.inf)
        if np.isfinite(log_z):
            got = arc_marginals(arc, projective)
            assert np.allclose(got, marg, atol=1e-9)
            assert np.all(got[~np.isfinite(arc)] == 0.0)
        else:
            with pytest.raises(ValueError, match="no single-root tree"):
                arc_marginals(arc, projective)


def test_non_projective_tree_has_no_projective_probability():
    arc = np.zeros((5, 5))
    heads = np.array([-1, 3, 0, 2, 2])  # 1 <- 3 crosses 0 -> 2
    assert tree_log_prob(heads, arc, projective=True) == -np.inf
    assert np.isfinite(tree_log_prob(heads, arc))
    assert tree_probabilities(heads, arc, projective=True)[1] == -np.inf
    absent = arc.copy()
    absent[3, 1] = -np.inf
    assert tree_probabilities(heads, absent)[1] == -np.inf == tree_log_prob(heads, absent)


def test_tiny_inputs():
    assert log_partition(np.zeros((1, 1))) == 0.0
    assert arc_marginals(np.zeros((1, 1))).shape == (1, 1)
    assert arc_marginals([[0.0, 3.0], [0.0, 0.0]]).tolist() == [[0.0, 1.0], [0.0, 0.0]]
    probs, log_prob = tree_probabilities([-1, 0], [[0.0, 3.0], [0.0, 0.0]])
    assert probs.tolist() == [1.0] and log_prob == 0.0
    assert tree_probabilities([-1], np.zeros((1, 1)))[1] == 0.0


def test_unused_cells_and_bad_input():
    arc = np.random.default_rng(1).normal(size=(4, 4))
    dirty = arc.copy()
    dirty[:, 0] = np.nan
    np.fill_diagonal(dirty, np.inf)
    assert np.allclose(arc_marginals(dirty), arc_marginals(arc))
    with pytest.raises(ValueError, match="NaN or inf"):
        arc_marginals(np.array([[0.0, np.nan], [0.0, 0.0]]))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([0.5, 3.0, 10.0]),
       projective=st.booleans())
def test_columns_are_distributions(n, seed, scale, projective):
    rng = np.random.default_rng(seed)
    arc = rng.normal(scale=scale, size=(n + 1, n + 1))
    gold = np.arange(n + 1) - 1  # a chain 0 -> 1 -> 2 ..., peaked like trained scores
    arc[gold[1:], np.arange(1, n + 1)] += scale
    marg = arc_marginals(arc, projective)
    assert np.all(marg >= -1e-9) and np.all(marg <= 1.0 + 1e-9)
    assert np.allclose(marg[:, 1:].sum(axis=0), 1.0, atol=1e-6)
    assert marg[0, 1:].sum() == pytest.approx(1.0, abs=1e-6)  # exactly one root child
    assert np.isfinite(log_partition(arc, projective))


def _enumerate_sib(arc, sib):
    """(log Z, marginals) over projective trees with arc and sibling factors, by brute force."""
    from .brute import reference_score

    n = arc.shape[0] - 1
    trees = [h for h in all_trees(n) if is_projective(h)]
    scores = np.array([reference_score(h, np.where(np.isfinite(arc), arc, -np.inf), sib) for h in trees])
    log_z = np.logaddexp.reduce(scores)
    marg = np.zeros((n + 1, n + 1))
    if np.isfinite(log_z):
        for heads, score in zip(trees, scores):
            marg[heads[1:], np.arange(1, n + 1)] += np.exp(score - log_z)
    return log_z, marg


@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0])
def test_sibling_marginals_against_enumeration(scale):
    rng = np.random.default_rng(int(scale * 10) + 50)
    for _ in range(25):
        n = int(rng.integers(1, 7))
        arc = rng.normal(scale=scale, size=(n + 1, n + 1))
        sib = rng.normal(scale=scale, size=(n + 1,) * 3)
        if rng.random() < 0.3:
            arc[rng.random(arc.shape) < 0.2] = -np.inf
        log_z, marg = _enumerate_sib(arc, sib)
        if not np.isfinite(log_z):
            with pytest.raises(ValueError, match="no single-root tree"):
                arc_marginals(arc, True, sib)
            continue
        assert log_partition(arc, True, sib) == pytest.approx(log_z, rel=1e-9, abs=1e-9)
        got = arc_marginals(arc, True, sib)
        assert np.allclose(got, marg, atol=1e-9)
        assert np.allclose(got[:, 1:].sum(axis=0), 1.0)


@pytest.mark.parametrize("scale", [0.1, 3.0, 30.0, 300.0])
def test_linear_sibling_chart_is_the_log_chart_or_declines(scale):
    """The linear-space chart (``_inside_sib`` takes it first) gives the log-space chart's log Z
    and marginals, on spans longer than enumeration reaches, with sparse sibling cubes as
    hc_parser scores them; where its values leave their range it declines (``ok`` False) and
    ``_inside_sib`` is the log-space chart."""
    from spacy_hcparse.decoders.marginals import _inside_sib, _inside_sib_linear, _inside_sib_log

    rng = np.random.default_rng(int(scale * 10))
    declined = 0
    for _ in range(12):
        n = int(rng.integers(1, 40))
        arc = rng.normal(scale=scale, size=(n + 1, n + 1))
        arc[rng.random(arc.shape) < 0.3] = -np.inf
        arc[0, 1 + int(rng.integers(n))] = 0.0  # a root child, so a tree exists
        for m in range(1, n + 1):
            arc[m - 1 if m > 1 else 0, m] = max(arc[m - 1 if m > 1 else 0, m], 0.0)  # a chain as well
        clean = np.where(np.isfinite(arc), arc, -np.inf)
        np.fill_diagonal(clean, -np.inf)
        clean[:, 0] = -np.inf
        sib = np.zeros((n + 1,) * 3)
        picked = rng.integers(0, n + 1, size=(4 * n, 3))
        sib[picked[:, 0], picked[:, 1], picked[:, 2]] = rng.normal(scale=scale, size=4 * n)
        for outside in (True, False):
            log_z, marg, ok = _inside_sib_linear(clean, sib, outside)
            expected = _inside_sib_log(clean, sib, outside)
            if ok:
                assert log_z == pytest.approx(expected[0], rel=1e-11, abs=1e-9)
                assert np.allclose(marg, expected[1], atol=1e-10)
            else:
                declined += 1
            got = _inside_sib(clean, sib, outside)
            assert got[0] == pytest.approx(expected[0], rel=1e-11, abs=1e-9)
            assert np.allclose(got[1], expected[1], atol=1e-10)
    assert declined == 0 or scale >= 30.0


def test_linear_sibling_chart_declines_where_a_word_has_no_head():
    from spacy_hcparse.decoders.marginals import _inside_sib, _inside_sib_linear

    arc = np.zeros((4, 4))
    arc[:, 2] = -np.inf
    assert not _inside_sib_linear(arc, np.zeros((4, 4, 4)), True)[2]
    assert _inside_sib(arc, np.zeros((4, 4, 4)), True)[0] == -np.inf


def test_zero_siblings_give_first_order_marginals_and_need_projective():
    rng = np.random.default_rng(3)
    arc = rng.normal(size=(6, 6))
    assert np.allclose(arc_marginals(arc, True, np.zeros((6, 6, 6))), arc_marginals(arc, True), atol=1e-12)
    with pytest.raises(ValueError, match="projective=True"):
        arc_marginals(arc, False, np.zeros((6, 6, 6)))
    with pytest.raises(ValueError, match="sib must have shape"):
        arc_marginals(arc, True, np.zeros((5, 5, 5)))


def test_is_projective_matches_brute_force():
    from spacy_hcparse.decoders.marginals import _is_projective as fast  # the batch kernels' test

    for n in range(0, 6):
        for heads in all_trees(n):
            assert bool(fast(np.asarray(heads, dtype=np.int64))) == is_projective(heads)


def test_tree_probabilities_with_siblings():
    from .brute import reference_score

    rng = np.random.default_rng(12)
    for _ in range(20):
        n = int(rng.integers(1, 6))
        arc, sib = rng.normal(size=(n + 1, n + 1)), rng.normal(size=(n + 1,) * 3)
        trees = [h for h in all_trees(n) if is_projective(h)]
        heads = trees[int(rng.integers(len(trees)))]
        probs, log_prob = tree_probabilities(heads, arc, True, sib)
        log_z, marg = _enumerate_sib(arc, sib)
        assert log_prob == pytest.approx(reference_score(heads, arc, sib) - log_z, abs=1e-9)
        assert np.allclose(probs, marg[heads[1:], np.arange(1, n + 1)], atol=1e-9)
