"""``hc_parser``'s host work per batch: the arcs its decoder reads (whitespace kept as leaves, an
earlier parser's arcs raised by a bonus when reparsing) and each span's margins, head
probabilities and label probabilities, for every span of a batch in a few compiled calls
(``decoders.batch``, ``decoders.batch_marginals``). One sentence is a batch of one.

Layout of a batch (``decoders.batch``): spans end to end, square arc blocks, heads with
``heads[0] == -1`` per span, per-word rows. ``threads`` > 1 spreads the spans over numba's threads.
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..decoders import MAX_WORDS
from ..decoders.batch import layout, split_words
from ..decoders.batch_marginals import head_margins_batch
from ..decoders.label_probs import chosen_label_probs
from .calibration import apply_knots, head_probabilities
from .decoding import DecodeResult
from .parses import SpanParse
from .scores import PRUNED, PredictedScores


def span_arcs(scores: PredictedScores, existing: Sequence, bonus: float) -> Tuple[np.ndarray, np.ndarray]:
    """``(arcs, sizes)``: the arc scores every span's decoder reads, end to end (float64): the
    pruned scores (pruned arcs ``-inf``), whitespace tokens ``scores.spaces[i]`` kept leaves
    (``whitespace_leaves``) and, where ``existing[i]`` is the doc's own tree and
    ``bonus`` is not 0, that tree's arcs raised by ``bonus`` (reparsing)."""
    sizes = np.array([len(m) for m in scores.masks], dtype=np.int64)
    if len(sizes) and sizes.max() > MAX_WORDS + 1:  # cannot happen with sentence_spans; guards direct calls
        raise ValueError(f"[hc_parser] span of {sizes.max() - 1} words exceeds {MAX_WORDS}")
    if not len(sizes):
        return np.zeros(0), sizes
    flat = np.concatenate([np.asarray(a).ravel() for a in scores.arcs]).astype(np.float64)
    flat[~np.concatenate([m.ravel() for m in scores.masks])] = PRUNED
    for i, (start, size) in enumerate(zip(layout(sizes).squares.tolist(), sizes.tolist())):
        space, tree = scores.spaces[i], existing[i]
        if (space.any() and not space.all()) or (tree is not None and bonus):
            block = flat[start: start + size * size].reshape(size, size)
            arc = whitespace_leaves(block, space)
            block[:] = with_bonus(arc, tree[0], bonus) if tree is not None and bonus else arc
    return flat, sizes


def whitespace_leaves(arc: np.ndarray, space: np.ndarray) -> np.ndarray:
    """Arc scores ``arc`` constrained so that every marked word (``space``, (n,) bool: the span's
    ``segment.leaf_whitespace``) is a leaf whose head is the nearest unmarked word before it
    (after it, at the span's start), as spaCy's parser attaches whitespace; the arc keeps its
    score (0 where pruned). Unchanged when nothing or everything is marked. The forced arcs cover
    only whitespace, so the constraint keeps trees projective."""
    if not space.any() or space.all():
        return arc
    arc = arc.copy()
    words = np.flatnonzero(~space) + 1
    blanks = np.flatnonzero(space) + 1
    for m in blanks.tolist():
        before = words[words < m]
        head = int(before[-1]) if len(before) else int(words[0])
        score = arc[head, m]
        arc[:, m] = -np.inf
        arc[head, m] = score if np.isfinite(score) else 0.0
    arc[blanks, :] = -np.inf
    return arc


def with_bonus(pruned: np.ndarray, doc_heads: np.ndarray, bonus: float) -> np.ndarray:
    """``pruned`` with ``bonus`` added to each of the doc's arcs (``doc_heads``: (n+1,), ``-1`` at
    the root row; they are candidates, so their scores are the model's)."""
    out = pruned.copy()
    words = np.arange(1, len(doc_heads))
    out[doc_heads[1:], words] += bonus
    return out


def span_parses(scores: PredictedScores, results: Sequence[DecodeResult], labels: Sequence[np.ndarray],
                calibration: Optional[Dict], masked: np.ndarray, threads: int = 1) -> List[SpanParse]:
    """Every span's ``SpanParse``: first-order margins on the full arc scores, with
    ``calibration`` (None: none) the calibrated head probabilities (``head_probabilities``
    through the isotonic map) and the tree's log probability (capped at the log of its lowest
    head probability: a tree is never more probable than one of its arcs), and the written
    labels' probabilities given their heads (the softmax of ``masked``, ``LabelSet.masked``'s
    scores; 1 for whitespace tokens, whose label is set)."""
    sizes = np.array([len(r.heads) for r in results], dtype=np.int64)
    if not len(sizes):
        return []
    heads = np.concatenate([r.heads for r in results])
    arcs = np.concatenate([np.asarray(a).ravel() for a in scores.arcs]).astype(np.float64)
    margins = split_words(head_margins_batch(heads, sizes, arcs, threads=threads), sizes)
    label_ids = np.concatenate(list(labels)) if len(labels) else np.zeros(0, np.int64)
    dep_probs = chosen_label_probs(masked, label_ids)
    dep_probs[np.concatenate(list(scores.spaces)).astype(bool)] = 1.0
    dep_probs = split_words(dep_probs, sizes)
    head_probs, log_probs = [None] * len(sizes), [None] * len(sizes)
    if calibration is not None:
        sib = scores.factors_of("sib") if calibration.get("siblings") and "sib" in scores.factors else None
        probs, logs = head_probabilities(heads, sizes, arcs, sib, calibration["temperature"],
                                         calibration.get("tree_temperature"), threads)
        probs = split_words(apply_knots(probs, calibration.get("knots")), sizes)
        for i in np.flatnonzero(sizes >= 2).tolist():
            head_probs[i] = probs[i]
            log_probs[i] = min(float(logs[i]), float(np.log(max(probs[i].min(), 1e-300))))
    return [SpanParse(r.heads, labels[i], r, margins[i], head_probs[i], log_probs[i], dep_probs[i])
            for i, r in enumerate(results)]
