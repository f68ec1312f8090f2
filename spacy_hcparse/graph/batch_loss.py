"""The graph loss's tree terms over every span of a training batch in one compiled call.

Per span: ``xent_weight`` * head cross-entropy (each word's softmax over its heads) + ``hinge_weight`` *
structured hinge ``max(0, s(y) + cost(y) - s(gold))`` at a given cost-augmented tree ``y`` (whose
decoder call ``batch_hinge.hinge_trees`` made beforehand) + ``tree_weight`` * the gold tree's negative log
probability under the first-order single-root distribution of the arc scores (the matrix-tree
theorem, ``decoders.marginals``: ``log Z - score(gold)``, gradient marginals minus gold arcs; spans
with a whole gold tree of at least one word, as the hinge), with their gradients with respect to the arc scores
and the sibling and grandparent values at the span's scored triples. The tests hold the values
against per-span definitions.

Layout as ``decoders.batch`` (``pack``: square arrays end to end; heads arrays end to end, ``-1``
an unknown head and ``heads[0] == -1``); factor triples per span ``counts[i]`` rows (``-1``: the
span has none of that type) end to end with their values (``GraphScores.factors_of``).
"""
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ..compiling import njit
from ..decoders.absent import usable_mask
from ..decoders.batch import cut, pack
from ..decoders.marginals import _matrix_tree
from .scores import Factors, GraphScores


def tree_losses(
    scores: GraphScores, golds: Sequence[Optional[Tuple[np.ndarray, np.ndarray]]],
    trees: Sequence[Optional[np.ndarray]], sib: Factors, grand: Factors,
    xent_weight: float, hinge_weight: float, tree_weight: float = 0.0,
) -> Tuple[float, List[np.ndarray], List[np.ndarray], List[np.ndarray]]:
    """``(loss, d_arcs, d_sib, d_grand)`` of the batch: the summed tree terms, and per span the
    float64 gradients laid out as ``scores.arcs[i]`` ((n+1, n+1)), ``scores.sib[i]`` and
    ``scores.grand[i]``. ``golds[i]``: the span's gold (heads first) or None; ``trees[i]``: its
    cost-augmented tree (heads (n+1,)) where the hinge applies, else None."""
    count = len(scores)
    arcs, sizes = pack([scores.arc(i) for i in range(count)])
    golds_flat = np.concatenate([np.full(s, -1, np.int64) if g is None else np.asarray(g[0], np.int64)
                                 for g, s in zip(golds, sizes)] + [np.zeros(0, np.int64)])
    hinge = np.array([t is not None for t in trees], dtype=np.bool_)
    preds = np.concatenate([np.full(s, -1, np.int64) if t is None else np.asarray(t, np.int64)
                            for t, s in zip(trees, sizes)] + [np.zeros(0, np.int64)])
    if len(golds_flat) != sizes.sum() or len(preds) != sizes.sum() or len(golds) != count or len(trees) != count:
        raise ValueError("tree_losses: one gold (or None) and one tree (or None) per span, each as long as its "
                         "span's arc scores (n+1)")
    d_arcs = np.zeros_like(arcs)
    d_sib, d_grand = np.zeros(len(sib.values)), np.zeros(len(grand.values))
    loss = _tree_losses(arcs, sizes, golds_flat, preds, hinge, sib.counts, sib.triples, sib.values,
                        grand.counts, grand.triples, grand.values, float(xent_weight), float(hinge_weight),
                        d_arcs, d_sib, d_grand)
    if tree_weight:
        loss += _tree_xents(arcs, sizes, golds_flat, float(tree_weight), d_arcs)
    squares = cut(d_arcs, sizes * sizes)
    d_sib_spans = _or_empty(sib.split(d_sib), scores.sib)
    d_grand_spans = _or_empty(grand.split(d_grand), scores.grand)
    return float(loss), [d.reshape(s, s) for d, s in zip(squares, sizes)], d_sib_spans, d_grand_spans


def _or_empty(grads: List[np.ndarray], values: Sequence) -> List[np.ndarray]:
    """Per span its gradient, zeros shaped as its values where the loss read none of them."""
    return [g if len(g) == len(v) else np.zeros(len(v)) for g, v in zip(grads, values)]


@njit(cache=True)
def _tree_losses(arcs, sizes, golds, preds, hinge, sib_counts, sib_triples, sib_values, grand_counts,
                 grand_triples, grand_values, xent_weight, hinge_weight, d_arcs, d_sib, d_grand):
    total = 0.0
    square = row = sib_at = grand_at = 0
    for i in range(sizes.shape[0]):
        size = sizes[i]
        arc = arcs[square: square + size * size].reshape((size, size))
        d_arc = d_arcs[square: square + size * size].reshape((size, size))
        gold = golds[row: row + size]
        if xent_weight != 0.0 and size > 1:
            total += xent_weight * _head_xent(arc, gold, xent_weight, d_arc)
        n_sib, n_grand = sib_counts[i], grand_counts[i]
        if hinge[i] and hinge_weight != 0.0:
            total += hinge_weight * _hinge(
                arc, gold, preds[row: row + size], hinge_weight, d_arc,
                n_sib >= 0, sib_triples[sib_at: sib_at + max(n_sib, 0)], sib_values[sib_at: sib_at + max(n_sib, 0)],
                d_sib[sib_at: sib_at + max(n_sib, 0)],
                n_grand >= 0, grand_triples[grand_at: grand_at + max(n_grand, 0)],
                grand_values[grand_at: grand_at + max(n_grand, 0)], d_grand[grand_at: grand_at + max(n_grand, 0)])
        square += size * size
        row += size
        sib_at += max(n_sib, 0)
        grand_at += max(n_grand, 0)
    return total


@njit(cache=True)
def _tree_xents(arcs, sizes, golds, weight, d_arcs):
    """``weight`` * the summed matrix-tree negative log probabilities of the whole gold trees of
    the spans (unpruned arcs), their gradients added to ``d_arcs``."""
    total = 0.0
    square = row = 0
    for i in range(sizes.shape[0]):
        size = sizes[i]
        gold = golds[row: row + size]
        whole = size > 1
        for m in range(1, size):
            if gold[m] < 0:
                whole = False
        if whole:
            arc = arcs[square: square + size * size].reshape((size, size))
            d_arc = d_arcs[square: square + size * size].reshape((size, size))
            log_z, marg = _matrix_tree(arc, usable_mask(arc))
            if np.isfinite(log_z):
                loss = log_z
                for m in range(1, size):
                    loss -= arc[gold[m], m]
                    for h in range(size):
                        d_arc[h, m] += weight * marg[h, m]
                    d_arc[gold[m], m] -= weight
                total += weight * loss
        square += size * size
        row += size
    return total


@njit(cache=True)
def _head_xent(arc, gold, weight, d_arc):
    """The head cross-entropy of one span (per word with a gold head, ``-log softmax(arc[:, m])``
    at its gold head, summed), its gradient times ``weight`` added to ``d_arc``."""
    size = arc.shape[0]
    loss = 0.0
    for m in range(1, size):
        g = gold[m]
        if g < 0:
            continue
        top = -np.inf
        for h in range(size):
            if h != m and arc[h, m] > top:
                top = arc[h, m]
        z = 0.0
        for h in range(size):
            if h != m:
                z += np.exp(arc[h, m] - top)
        for h in range(size):
            if h != m:
                d_arc[h, m] += weight * np.exp(arc[h, m] - top) / z
        p_gold = np.exp(arc[g, m] - top) / z if g != m else 0.0
        loss -= np.log(max(p_gold, 1e-30))
        d_arc[g, m] -= weight
    return loss


@njit(cache=True)
def _hinge(arc, gold, pred, weight, d_arc, use_sib, sib_triples, sib_values, d_sib,
           use_grand, grand_triples, grand_values, d_grand):
    """The structured hinge of one span at the cost-augmented tree ``pred`` (Hamming cost 1 per
    wrong head); its gradients times ``weight`` added where the loss is positive."""
    size = arc.shape[0]
    same = True
    for m in range(1, size):
        if pred[m] != gold[m]:
            same = False
    if same:
        return 0.0
    loss = 0.0
    for m in range(1, size):
        loss += arc[pred[m], m] - arc[gold[m], m] + (1.0 if pred[m] != gold[m] else 0.0)
    if use_sib:
        loss += _factor_terms(sib_triples, sib_values, pred, gold, _previous_siblings(pred), _previous_siblings(gold),
                              True, d_sib)
    if use_grand:
        loss += _factor_terms(grand_triples, grand_values, pred, gold, pred, gold, False, d_grand)
    if loss <= 0.0:
        d_sib[:] = 0.0
        d_grand[:] = 0.0
        return 0.0
    for m in range(1, size):
        d_arc[pred[m], m] += weight
        d_arc[gold[m], m] -= weight
    for t in range(d_sib.shape[0]):
        d_sib[t] *= weight
    for t in range(d_grand.shape[0]):
        d_grand[t] *= weight
    return loss


@njit(cache=True)
def _factor_terms(triples, values, pred, gold, pred_prev, gold_prev, sibling, d_values):
    """Sum of ``values`` over the triples the tree ``pred`` uses minus those ``gold`` uses;
    ``d_values[t]`` set to +1 / -1 / 0 accordingly. A tree with heads ``heads`` uses a sibling
    triple ``(h, s, m)`` when ``heads[m] == h`` and ``prev[m] == s`` (``prev``: its
    ``_previous_siblings``; ``pred_prev``/``gold_prev`` unread for grandparents), a grandparent
    triple ``(g, h, m)`` when ``heads[m] == h > 0`` and ``heads[h] == g``."""
    total = 0.0
    for t in range(triples.shape[0]):
        a, b, m = triples[t, 0], triples[t, 1], triples[t, 2]
        if sibling:
            in_pred = pred[m] == a and pred_prev[m] == b
            in_gold = gold[m] == a and gold_prev[m] == b
        else:
            in_pred = b > 0 and pred[m] == b and pred[b] == a
            in_gold = b > 0 and gold[m] == b and gold[b] == a
        d_values[t] = (1.0 if in_pred else 0.0) - (1.0 if in_gold else 0.0)
        total += d_values[t] * values[t]
    return total


@njit(cache=True)
def _previous_siblings(heads):
    """Per word ``m`` the ``s`` of its sibling factor ``(heads[m], s, m)`` (the walk of
    ``decoders.scoring._sibling_factors``: the next closer modifier of its head on its side, or the
    head itself); -1 at the root."""
    size = heads.shape[0]
    prev = np.full(size, -1, dtype=np.int64)
    for h in range(size):
        last = h
        for m in range(h + 1, size):
            if heads[m] == h:
                prev[m] = last
                last = m
        last = h
        for m in range(h - 1, 0, -1):
            if heads[m] == h:
                prev[m] = last
                last = m
    return prev
