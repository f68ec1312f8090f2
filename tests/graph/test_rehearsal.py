"""Rehearsal's soft-target losses: zero where the student agrees, gradients that match finite
differences of the cross-entropy, absent (-inf) entries left out."""
import numpy as np
import pytest

from spacy_hcparse.graph.rehearsal import _head_logits, soft_binary_xent, soft_xent

RNG = np.random.default_rng(0)


def cross_entropy(logits, target, axis):
    log_p = logits - np.log(np.exp(logits - logits.max(axis, keepdims=True)).sum(axis, keepdims=True)) \
        - logits.max(axis, keepdims=True)
    q = np.exp(target - target.max(axis, keepdims=True))
    q /= q.sum(axis, keepdims=True)
    return float(-(q * np.where(q > 0, log_p, 0.0)).sum())


@pytest.mark.parametrize("axis", [0, 1])
def test_soft_xent_gradient(axis):
    logits, target = RNG.normal(size=(5, 4)), RNG.normal(size=(5, 4))
    _, grad = soft_xent(logits, target, axis)
    direction = RNG.normal(size=logits.shape)
    eps = 1e-6
    numeric = (cross_entropy(logits + eps * direction, target, axis)
               - cross_entropy(logits - eps * direction, target, axis)) / (2 * eps)
    assert numeric == pytest.approx(float((grad * direction).sum()), rel=1e-5)


def test_soft_xent_is_a_divergence():
    logits = RNG.normal(size=(4, 3))
    loss, grad = soft_xent(logits, logits.copy(), axis=0)
    assert loss == pytest.approx(0.0, abs=1e-12) and np.abs(grad).max() < 1e-12
    assert soft_xent(logits, RNG.normal(size=(4, 3)), axis=0)[0] > 0


def test_head_logits_leave_out_self_loops():
    arc = RNG.normal(size=(4, 4))
    logits = _head_logits(arc)
    assert logits.shape == (4, 3) and np.isneginf(logits[[1, 2, 3], [0, 1, 2]]).all()
    loss, grad = soft_xent(logits, _head_logits(RNG.normal(size=(4, 4))), axis=0)
    assert np.isfinite(loss) and (grad[[1, 2, 3], [0, 1, 2]] == 0).all()
    assert np.allclose(grad.sum(axis=0), 0.0)


def test_soft_binary_xent():
    logits, target = RNG.normal(size=6) * 3, RNG.normal(size=6) * 3
    loss, grad = soft_binary_xent(logits, target)
    q = 1 / (1 + np.exp(-target))

    def xent(x):
        p = 1 / (1 + np.exp(-x))
        return float(-(q * np.log(p) + (1 - q) * np.log(1 - p)).sum())

    eps = 1e-6
    numeric = [(xent(logits + eps * e) - xent(logits - eps * e)) / (2 * eps) for e in np.eye(6)]
    assert np.allclose(numeric, grad, rtol=1e-5)
    assert loss > 0 and soft_binary_xent(target, target)[0] == pytest.approx(0.0, abs=1e-12)
