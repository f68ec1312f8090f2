"""``hc_parser``'s host work per batch: decoding, labels, margins and head probabilities of every
span in a few compiled calls (``decoders.batch``, ``decoders.batch_marginals``) instead of a
Python loop over spans.

Each function gives what the per-span path gives, to the bit: the Eisner decoder's
``DecodeResult`` per span (``graph.decoding.Eisner`` on ``graph.reparse.decoder_arcs``' arcs),
the labeler's label ids (``graph.labeling.Labeler.label_trees``) and the parses of
``graph.parses.span_parse`` (first-order margins, calibrated head probabilities and tree log
probabilities as ``calibration.calibrated_probabilities``, label probabilities as
``graph.parses.label_probs``). What they do not cover (another decoder, reparsing with a doc's own
tree) is left to the per-span path: ``eisner_batchable`` and ``labels_batchable`` say when.
``threads`` > 1 spreads the spans over numba's threads.

Layout of a batch (``decoders.batch``): spans end to end, square arc blocks, heads with
``heads[0] == -1`` per span, per-word rows.
"""
from typing import Dict, List, Optional, Sequence

import numpy as np

from ..calibration import apply_knots, calibrated_probabilities, span_siblings
from ..decoders import MAX_WORDS
from ..decoders.batch import cut, decode_eisner_batch, labels_batch, split_words
from ..decoders.batch_marginals import head_margins_batch, sibling_probabilities_batch, tree_probabilities_batch
from ..decoders.label_probs import chosen_label_probs
from ..graph.decoding import DecodeResult, Eisner
from ..graph.labeling import Labeler, LabelSet
from ..graph.parses import SpanParse
from ..graph.reparse import whitespace_leaves
from ..graph.scores import PRUNED, GraphScores


def eisner_batchable(decoder, existing: Sequence) -> bool:
    """Whether ``decode_eisner_spans`` gives the decoder's trees: the Eisner decoder, and no doc's
    own tree (reparsing's bonus and start go through the per-span path)."""
    return isinstance(decoder, Eisner) and all(e is None for e in existing)


def labels_batchable(labeler: Labeler, existing: Sequence) -> bool:
    """Whether ``label_trees`` gives the labeler's labels (no doc labels to keep)."""
    return not (labeler.keep_doc_labels and any(e is not None for e in existing))


def decode_eisner_spans(scores: GraphScores, spaces: Sequence[np.ndarray], threads: int = 1) -> List[DecodeResult]:
    """Eisner's tree of every span of ``scores`` with sibling factors where the span has them
    (``scores.cubes``), whitespace tokens ``spaces[i]`` kept leaves, in one compiled call."""
    sizes = np.array([len(m) for m in scores.masks], dtype=np.int64)
    if len(sizes) and sizes.max() > MAX_WORDS + 1:  # cannot happen with sentence_spans; guards direct calls
        raise ValueError(f"[hc_parser] span of {sizes.max() - 1} words exceeds {MAX_WORDS}")
    arcs = _pruned_arcs(scores, spaces)
    # As ``scores.cubes``: a span with higher-order factors gets a cube (zeros where none were scored)
    sib = scores.factors_of("sib")
    heads, tree_scores = decode_eisner_batch(arcs, sizes, sib.counts, sib.triples, sib.values, threads=threads)
    return [DecodeResult(tree, float(score), False, float("nan"), 0, False)
            for tree, score in zip(cut(heads, sizes), tree_scores)]


def _pruned_arcs(scores: GraphScores, spaces: Sequence[np.ndarray]) -> np.ndarray:
    """Every span's ``pruned_arc`` (float64, pruned arcs ``-inf``) end to end, whitespace tokens
    kept leaves (``whitespace_leaves``) in the spans that have them."""
    if not len(scores):
        return np.zeros(0)
    flat = np.concatenate([np.asarray(a).ravel() for a in scores.arcs]).astype(np.float64)
    flat[~np.concatenate([m.ravel() for m in scores.masks])] = PRUNED
    start = 0
    for i, space in enumerate(spaces):
        size = len(scores.masks[i])
        if space.any() and not space.all():
            block = flat[start: start + size * size].reshape(size, size)
            block[:] = whitespace_leaves(block, space)
        start += size * size
    return flat


def masked_label_scores(trees: Sequence[np.ndarray], rows: Sequence[np.ndarray], labels: LabelSet) -> np.ndarray:
    """Every tree's label scores stacked ((N, L) float64), under the labeler's rules: unseen labels
    ``-inf``, ``ROOT`` on the root's child only (its other labels ``-inf``)."""
    if not rows:
        return np.zeros((0, len(labels.names)))
    stacked = np.concatenate([np.asarray(r, dtype=np.float64) for r in rows]).reshape(-1, len(labels.names))
    stacked[:, labels.unseen] = -np.inf
    if labels.root >= 0:
        is_root = np.concatenate([t[1:] for t in trees]) == 0
        stacked[~is_root, labels.root] = -np.inf
        stacked[is_root, :] = -np.inf
        stacked[is_root, labels.root] = 0.0
    return stacked


def label_trees(labeler: Labeler, trees: Sequence[np.ndarray], masked: np.ndarray, labels: LabelSet,
                spaces: Sequence[np.ndarray], threads: int = 1) -> List[np.ndarray]:
    """``Labeler.label_trees`` of every tree in one call (``masked``: ``masked_label_scores``;
    no doc labels kept): with ``valency`` the best labels under the label classes, else each
    word's best, whitespace tokens given ``LabelSet.join`` where the parser knows it."""
    sizes = np.array([len(t) for t in trees], dtype=np.int64)
    heads = np.concatenate(list(trees)) if len(trees) else np.zeros(0, np.int64)
    classes = labels.classes if labeler.valency else None
    out = labels_batch(heads, sizes, masked, classes, labels.root, threads=threads)
    if labels.join >= 0 and len(spaces):
        out[np.concatenate(list(spaces)).astype(bool)] = labels.join
    return split_words(out, sizes)


def _tree_probabilities(scores: GraphScores, heads: np.ndarray, sizes: np.ndarray, arcs: np.ndarray,
                        calibration: Dict, threads: int):
    """``(probs, log_probs, done)`` before the isotonic map: the batch kernels' head probabilities
    and tree log probabilities as ``calibrated_probabilities`` computes them, for the spans
    ``done`` marks (with siblings: the spans that have sibling scores and a projective tree;
    first order: every span)."""
    temperature = calibration["temperature"]
    if calibration.get("siblings") and "sib" in scores.factors:
        sib = scores.factors_of("sib")
        return sibling_probabilities_batch(heads, sizes, arcs, sib.counts, sib.triples, sib.values, temperature,
                                           calibration.get("tree_temperature"), threads=threads)
    if calibration.get("siblings"):  # fitted with siblings, none scored: span by span, as ever
        return np.zeros(int((sizes - 1).sum())), np.zeros(len(sizes)), np.zeros(len(sizes), dtype=bool)
    probs, logs = tree_probabilities_batch(heads, sizes, arcs / temperature, threads=threads)
    return probs, logs, np.ones(len(sizes), dtype=bool)


def span_parses(scores: GraphScores, results: Sequence[DecodeResult], labels: Sequence[np.ndarray],
                calibration: Optional[Dict], masked: np.ndarray, spaces: Sequence[np.ndarray],
                threads: int = 1) -> List[SpanParse]:
    """``graph.parses.span_parse`` of every span: first-order margins on the full arc scores,
    with ``calibration`` (None: none) the calibrated head probabilities and tree log
    probabilities (``calibration.calibrated_probabilities``), and the written labels'
    probabilities (``graph.parses.label_probs``: ``masked`` as ``masked_label_scores``)."""
    sizes = np.array([len(r.heads) for r in results], dtype=np.int64)
    if not len(sizes):
        return []
    heads = np.concatenate([r.heads for r in results])
    arcs = np.concatenate([np.asarray(a).ravel() for a in scores.arcs]).astype(np.float64)
    margins = split_words(head_margins_batch(heads, sizes, arcs, threads=threads), sizes)
    label_ids = np.concatenate(list(labels)) if len(labels) else np.zeros(0, np.int64)
    dep_probs = chosen_label_probs(masked, label_ids)
    dep_probs[np.concatenate(list(spaces)).astype(bool)] = 1.0
    dep_probs = split_words(dep_probs, sizes)
    head_probs, log_probs = [None] * len(sizes), [None] * len(sizes)
    if calibration is not None:
        probs, logs, done = _tree_probabilities(scores, heads, sizes, arcs, calibration, threads)
        probs = split_words(apply_knots(probs, calibration.get("knots")), sizes)
        for i in range(len(sizes)):
            if sizes[i] < 2:
                continue
            if done[i]:
                head_probs[i] = probs[i]
                log_probs[i] = min(float(logs[i]), float(np.log(max(probs[i].min(), 1e-300))))
            else:  # a span the batch does not cover (not projective, no sibling scores): as ever
                head_probs[i], log_probs[i] = calibrated_probabilities(
                    results[i].heads, scores.arc(i), calibration, span_siblings(scores, i, calibration))
    return [SpanParse(r.heads, labels[i], r, margins[i], head_probs[i], log_probs[i], dep_probs[i])
            for i, r in enumerate(results)]
