"""Numba kernels over hashed linear weights, shared by parsing (``transition.search``), tagging
(``transition.tagging``) and perceptron training (``transition.perceptron``).

Weights are one flat array: a feature with bucket ``b`` holds the weights of classes
``0..n_classes-1`` at ``W[b : b + n_classes]`` (so ``len(W) == n_buckets + n_classes``; see
``layers.sparse_linear``). Classes are ``transition.moves``'s, a label's two after those of the
labels before it: a label added to a trained model appends two entries to ``W``.
"""
import numpy as np

from ..compiling import njit
from .moves import LAYOUT, n_classes, valid_mask
from .templates import N_VALUES, fill_context, hash_features


@njit(cache=True)
def score(W: np.ndarray, feats: np.ndarray, n_cls: int, out: np.ndarray) -> None:
    """``out[c] = sum_k W[feats[k] + c]``.

    Four features at a time: their weight rows are far apart in a table much larger than the
    caches, so reading four rows side by side keeps four memory streams in flight at once."""
    out[:] = 0.0
    n_feats = feats.shape[0]
    k = 0
    while k + 4 <= n_feats:
        b0, b1, b2, b3 = feats[k], feats[k + 1], feats[k + 2], feats[k + 3]
        for c in range(n_cls):
            out[c] += (W[b0 + c] + W[b1 + c]) + (W[b2 + c] + W[b3 + c])
        k += 4
    while k < n_feats:
        b = feats[k]
        for c in range(n_cls):
            out[c] += W[b + c]
        k += 1


@njit(cache=True)
def best_allowed(scores, allowed) -> int:
    """The highest-scoring class among the ``allowed`` ones (the first on ties), ``-1`` if none."""
    best = -1
    for k in range(scores.shape[0]):
        if allowed[k] and (best < 0 or scores[k] > scores[best]):
            best = k
    return best


@njit(cache=True)
def best_candidates(
    beam, size, totals, span, W, templates, mask, n_labels, root_label, ctx, feats, scores, valid, top_s, top_k, top_c,
    layout=LAYOUT,
):
    """The ``len(top_s)`` best candidates over beam items ``0..size-1`` and their valid moves
    (classes in layout ``layout``, ``transition.moves``),
    scored by the item's total plus the move's score: ``top_s`` the scores (best first), ``top_k``
    the items, ``top_c`` the moves; ties keep the earlier (item, move). Returns how many were
    filled. A bounded insertion list, so no candidate array is sorted."""
    width = top_s.shape[0]
    n_cls = scores.shape[0]
    n_top = 0
    for k in range(size):
        fill_context(beam[k], span, ctx)
        hash_features(ctx, templates, mask, feats)
        score(W, feats, n_cls, scores)
        valid_mask(beam[k], n_labels, root_label, valid, layout)
        base = totals[k]
        for c in range(n_cls):
            if not valid[c]:
                continue
            s = base + scores[c]
            if n_top == width and s <= top_s[width - 1]:
                continue
            j = n_top if n_top < width else width - 1
            while j > 0 and top_s[j - 1] < s:
                top_s[j] = top_s[j - 1]
                top_k[j] = top_k[j - 1]
                top_c[j] = top_c[j - 1]
                j -= 1
            top_s[j] = s
            top_k[j] = k
            top_c[j] = c
            if n_top < width:
                n_top += 1
    return n_top


@njit(cache=True)
def move_buffers(templates, n_labels):
    """Work arrays for scoring configurations: context values, hashed features, and per move class
    a score and a validity flag."""
    n_cls = n_classes(n_labels)
    return (np.empty(N_VALUES, dtype=np.int64), np.empty(templates.shape[0], dtype=np.int64),
            np.empty(n_cls, dtype=np.float64), np.empty(n_cls, dtype=np.bool_))


@njit(cache=True)
def beam_buffers(width):
    """Work arrays of a beam of ``width``: the kept items' scores, beam rows and classes."""
    return np.empty(width, dtype=np.float64), np.empty(width, dtype=np.int64), np.empty(width, dtype=np.int64)
