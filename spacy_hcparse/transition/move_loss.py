"""The neural transition parser's loss: cross-entropy of a softmax over each configuration's valid
moves, summed over configurations.

Scores are ``(n_configurations, n_classes)`` move scores (``transition.moves`` numbers the
classes); ``masks`` marks the valid classes of each configuration, and ``correct`` the set
of correct classes (``correct_move_xent``: the dynamic oracle's, where several moves keep the best
reachable tree; the static oracle's one class is a set of one). The gradient is that of the
summed loss; how much of it reaches the model is the caller's choice.
"""
from typing import Tuple

import numpy as np


def correct_move_xent(scores, correct: np.ndarray, masks: np.ndarray) -> Tuple[float, np.ndarray]:
    """``(loss, d_scores)``: the summed ``-log p(correct)`` (the probability of the set of correct
    classes) under a softmax restricted to the valid moves, and its gradient ``p - q``, with ``q``
    the softmax restricted to the correct moves (float64, zero on invalid moves). With one
    correct class per row this is ``valid_move_xent``'s gradient exactly."""
    logits = np.where(masks, np.asarray(scores, dtype=np.float64), -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    total = probs.sum(axis=1, keepdims=True)
    probs /= total
    good = np.where(correct, logits, -np.inf)
    top = good.max(axis=1, keepdims=True)
    q = np.exp(good - top)
    q_total = q.sum(axis=1, keepdims=True)
    q /= q_total
    loss = float((np.log(total) - np.log(q_total) - top).sum())
    return loss, probs - q
