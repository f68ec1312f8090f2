"""Per-sentence losses and their gradients with respect to factor scores.

Conventions as in ``spacy_hcparse.decoders``: index 0 is the root, ``arc[h, m]``, heads arrays
with ``heads[0] == -1``. Every function returns ``(loss, gradient)`` with the gradient of the loss
(to be minimised) with respect to the scores it was given. ``head_xent`` defines the head
cross-entropy that training computes for a whole batch (``learning.batch_loss``); ``label_xent``
and ``binary_xent`` take the rows of a whole batch at once.
"""
from typing import Tuple

import numpy as np


def head_xent(arc: np.ndarray, gold: np.ndarray) -> Tuple[float, np.ndarray]:
    """Head-selection cross-entropy: each word's softmax over heads (Dozat & Manning 2017).
    Words whose gold head is ``-1`` (unknown) add nothing."""
    size = arc.shape[0]
    logits = arc.astype(np.float64, copy=True)
    logits[:, 0] = 0.0
    np.fill_diagonal(logits, -np.inf)
    logits = logits[:, 1:]
    logits -= logits.max(axis=0, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=0, keepdims=True)
    known = np.flatnonzero(gold[1:] >= 0)
    heads = gold[1:][known]
    loss = -np.log(np.maximum(probs[heads, known], 1e-30)).sum()
    probs[heads, known] -= 1.0
    d_arc = np.zeros((size, size), dtype=np.float64)
    d_arc[:, 1:][:, known] = probs[:, known]
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


def binary_xent(logits: np.ndarray, gold: np.ndarray) -> Tuple[float, np.ndarray]:
    """Sigmoid cross-entropy of (n,) logits against 0/1 gold (n,); -1 = unknown."""
    known = gold >= 0
    probs = 0.5 * (1.0 + np.tanh(0.5 * logits))  # the sigmoid, without overflow
    target = np.where(known, gold, 0).astype(np.float64)
    picked = np.where(target > 0, probs, 1.0 - probs)
    loss = -np.log(np.maximum(picked[known], 1e-30)).sum()
    return float(loss), np.where(known, probs - target, 0.0)
