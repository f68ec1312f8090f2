"""The neural transition parser's move losses: one correct class (the static oracle's) or a set
(the dynamic oracle's), their gradients by finite differences."""
from typing import Tuple

import numpy as np
import pytest

from spacy_hcparse.transition.move_loss import correct_move_xent


def valid_move_xent(scores, gold: np.ndarray, masks: np.ndarray) -> Tuple[float, np.ndarray]:
    """``(loss, d_scores)``: the summed ``-log p(gold)`` under a softmax restricted to the valid
    moves, and its gradient ``p - onehot(gold)`` (float64, zero on invalid moves)."""
    logits = np.where(masks, np.asarray(scores, dtype=np.float64), -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    rows = np.arange(len(gold))
    loss = float(-np.log(np.maximum(probs[rows, gold], 1e-12)).sum())
    probs[rows, gold] -= 1.0
    return loss, probs


def random_case(seed, rows=6, classes=7):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(rows, classes)) * 3
    masks = rng.random((rows, classes)) < 0.7
    masks[:, 0] = True
    correct = masks & (rng.random((rows, classes)) < 0.4)
    correct[:, 0] |= ~correct.any(axis=1)
    return scores, correct, masks


@pytest.mark.parametrize("seed", range(5))
def test_one_correct_class_is_valid_move_xent(seed):
    scores, _, masks = random_case(seed)
    gold = np.array([np.flatnonzero(m)[-1] for m in masks])
    correct = np.zeros_like(masks)
    correct[np.arange(len(gold)), gold] = True
    loss, d = correct_move_xent(scores, correct, masks)
    expected_loss, expected_d = valid_move_xent(scores, gold, masks)
    assert loss == pytest.approx(expected_loss)
    assert np.array_equal(d, expected_d)


@pytest.mark.parametrize("seed", range(5))
def test_gradient_of_the_set_loss(seed):
    scores, correct, masks = random_case(10 + seed)
    loss, d = correct_move_xent(scores, correct, masks)
    probs = np.where(masks, np.exp(scores - scores.max(axis=1, keepdims=True)), 0.0)
    probs /= probs.sum(axis=1, keepdims=True)
    assert loss == pytest.approx(-np.log((probs * correct).sum(axis=1)).sum())
    assert (d[~masks] == 0).all()
    eps = 1e-6
    for r, c in [(0, 0), (2, 3), (5, 6)]:
        up, down = scores.copy(), scores.copy()
        up[r, c] += eps
        down[r, c] -= eps
        numeric = (correct_move_xent(up, correct, masks)[0] - correct_move_xent(down, correct, masks)[0]) / (2 * eps)
        assert d[r, c] == pytest.approx(numeric, abs=1e-5)


def test_all_valid_moves_correct_is_no_loss():
    scores, _, masks = random_case(3)
    loss, d = correct_move_xent(scores, masks, masks)
    assert loss == pytest.approx(0.0, abs=1e-9) and np.abs(d).max() < 1e-12
