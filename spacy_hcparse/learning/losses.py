"""Row losses and their gradients with respect to factor scores.

Conventions as in ``spacy_hcparse.decoders``: index 0 is the root, ``arc[h, m]``, heads arrays
with ``heads[0] == -1``. Every function returns ``(loss, gradient)`` with the gradient of the loss
(to be minimised) with respect to the scores it was given. ``label_xent`` and ``binary_xent`` take
the rows of a whole batch at once; the head cross-entropy is ``graph.batch_loss``'s.
"""
from typing import Tuple

import numpy as np


def label_xent(scores: np.ndarray, gold: np.ndarray) -> Tuple[float, np.ndarray]:
    """Softmax cross-entropy of (n, L) label scores against gold label ids (n,); -1 = unknown."""
    known = gold >= 0
    shifted = scores - scores.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    probs /= probs.sum(axis=1, keepdims=True)
    rows = np.flatnonzero(known)
    loss = -np.log(np.maximum(probs[rows, gold[rows]], 1e-30)).sum()
    probs[rows, gold[rows]] -= 1.0
    probs[~known] = 0.0
    return float(loss), probs


def binary_xent(logits: np.ndarray, gold: np.ndarray) -> Tuple[float, np.ndarray]:
    """Sigmoid cross-entropy of (n,) logits against 0/1 gold (n,); -1 = unknown."""
    known = gold >= 0
    probs = 0.5 * (1.0 + np.tanh(0.5 * logits))  # the sigmoid, without overflow
    target = np.where(known, gold, 0).astype(np.float64)
    picked = np.where(target > 0, probs, 1.0 - probs)
    loss = -np.log(np.maximum(picked[known], 1e-30)).sum()
    return float(loss), np.where(known, probs - target, 0.0)
