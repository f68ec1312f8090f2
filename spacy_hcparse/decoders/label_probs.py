"""Label probabilities: ``P(label | head, modifier)``, a softmax over one arc's label scores.

Conventions: ``scores`` is (n, L), row ``m - 1`` holding the label scores of word ``m``'s arc
from its chosen head (the rows a labeler reads for a tree); ``-inf`` marks a label the labeler may
not give there (probability 0). ``labels`` (n,) are the label ids written for the words.
"""
import numpy as np


def label_probabilities(scores, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of ``scores / temperature`` (float64 (n, L)). Raises ``ValueError`` on
    a non-2-D input, NaN or ``+inf``, or a row without a finite score."""
    if not temperature > 0 or not np.isfinite(temperature):
        raise ValueError(f"temperature must be a positive finite number, got {temperature}")
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"scores must be an (n, L) array, got shape {arr.shape}")
    if np.isnan(arr).any() or (arr == np.inf).any():
        raise ValueError("scores contain NaN or +inf")
    if arr.shape[0] == 0:
        return arr.copy()
    top = arr.max(axis=1, keepdims=True) if arr.shape[1] else np.zeros((arr.shape[0], 1))
    if not np.isfinite(top).all():
        raise ValueError(f"row {int(np.flatnonzero(~np.isfinite(top))[0])} of scores has no finite label score")
    exp = np.exp((arr - top) / temperature)
    return exp / exp.sum(axis=1, keepdims=True)


def chosen_label_probs(scores, labels, temperature: float = 1.0) -> np.ndarray:
    """``P(labels[m - 1] | head of m)`` per word (float64 (n,)): the written labels' entries of
    ``label_probabilities``. Raises ``ValueError`` when ``labels`` does not fit ``scores``."""
    probs = label_probabilities(scores, temperature)
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (probs.shape[0],) or (len(labels) and (labels.min() < 0 or labels.max() >= probs.shape[1])):
        raise ValueError(f"labels must be {probs.shape[0]} ids in 0..{probs.shape[1] - 1}")
    return probs[np.arange(len(labels)), labels]
