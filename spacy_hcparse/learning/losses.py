"""Per-sentence losses and their gradients with respect to factor scores.

Conventions as in ``spacy_hcparse.decoders``: index 0 is the root, ``arc[h, m]``, heads arrays
with ``heads[0] == -1``. Every function returns ``(loss, gradient)`` with the gradient of the loss
(to be minimised) with respect to the scores it was given.
"""
from typing import Tuple

import numpy as np


def head_xent(arc: np.ndarray, gold: np.ndarray) -> Tuple[float, np.ndarray]:
    """Head-selection cross-entropy: each word's softmax over heads (Dozat & Manning 2017)."""
    size = arc.shape[0]
    logits = arc.astype(np.float64, copy=True)
    logits[:, 0] = 0.0
    np.fill_diagonal(logits, -np.inf)
    logits = logits[:, 1:]
    logits -= logits.max(axis=0, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=0, keepdims=True)
    words = np.arange(size - 1)
    loss = -np.log(np.maximum(probs[gold[1:], words], 1e-30)).sum()
    probs[gold[1:], words] -= 1.0
    d_arc = np.zeros((size, size), dtype=np.float64)
    d_arc[:, 1:] = probs
    return float(loss), d_arc


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
