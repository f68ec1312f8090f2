"""Structured hinge loss with cost-augmented decoding (max-margin training of the graph parser).

Conventions as in ``spacy_hcparse.decoders``: index 0 is the root, ``arc[h, m]``, ``sib[h, s, m]``
(``s == h`` for the closest modifier), ``grand[g, h, m]``; heads arrays with ``heads[0] == -1``.
Gradients are taken with respect to the scores the model produced: the dense arc matrix and the
values at the scored sibling and grandparent triples.

These per-span functions define the hinge; training computes it for a whole batch in one call
(``graph.batch_loss``, tested against them).
"""
from typing import Callable, Optional, Tuple

import numpy as np

from ..decoders.scoring import sibling_factors

Decoder = Callable[..., object]  # called as decoder(arc, sib, grand) -> an object with .heads


def structured_hinge(
    arc: np.ndarray,
    pruned: np.ndarray,
    sib: Optional[np.ndarray],
    grand: Optional[np.ndarray],
    gold: np.ndarray,
    sib_triples: np.ndarray,
    grand_triples: np.ndarray,
    decoder: Decoder,
) -> Tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """``max(0, s(y) + cost(y) - s(gold))`` at the tree ``y`` the decoder finds on the
    Hamming-augmented ``pruned`` arcs, and its gradients: (loss, d arc (n+1, n+1), d values at
    ``sib_triples``, d values at ``grand_triples``). Trees are scored with ``arc`` (unpruned)
    and the factor cubes given (None: that factor type is not part of the model here)."""
    zeros = (0.0, np.zeros_like(arc), np.zeros(len(sib_triples)), np.zeros(len(grand_triples)))
    pred = decoder(hamming_augmented(pruned, gold), sib, grand).heads
    if np.array_equal(pred, gold):
        return zeros
    size = len(gold)
    words = np.arange(1, size)
    gold_score = float(arc[gold[1:], words].sum())
    pred_score = float(arc[pred[1:], words].sum()) + float(np.sum(pred[1:] != gold[1:]))
    d_sib, d_grand = zeros[2], zeros[3]
    if sib is not None:
        ps, gs = sibling_factors(pred), sibling_factors(gold)
        pred_score += float(sib[tuple(ps.T)].sum()) if len(ps) else 0.0
        gold_score += float(sib[tuple(gs.T)].sum()) if len(gs) else 0.0
        d_sib = factor_gradient(sib_triples, ps, gs, size)
    if grand is not None:
        pg, gg = tree_grand_factors(pred), tree_grand_factors(gold)
        pred_score += float(grand[tuple(pg.T)].sum()) if len(pg) else 0.0
        gold_score += float(grand[tuple(gg.T)].sum()) if len(gg) else 0.0
        d_grand = factor_gradient(grand_triples, pg, gg, size)
    loss = pred_score - gold_score
    if loss <= 0:
        return zeros
    return loss, arc_gradient(pred, gold), d_sib, d_grand


def tree_grand_factors(heads: np.ndarray) -> np.ndarray:
    """(F, 3) array of the (g, h, m) grandparent factors the tree ``heads`` uses."""
    out = [(heads[heads[m]], heads[m], m) for m in range(1, len(heads)) if heads[m] > 0]
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def factor_gradient(
    triples: np.ndarray, predicted: np.ndarray, gold: np.ndarray, size: int
) -> np.ndarray:
    """d(score(predicted) - score(gold)) / d(values at ``triples``): +1/-1 per triple used.

    ``predicted`` and ``gold`` list each factor of their tree once (as trees do).
    """
    if not len(triples):
        return np.zeros(0, dtype=np.float64)
    keys = _keys(triples, size)
    grad = np.isin(keys, _keys(predicted, size)).astype(np.float64)
    grad -= np.isin(keys, _keys(gold, size))
    return grad


def _keys(triples: np.ndarray, size: int) -> np.ndarray:
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    return (triples[:, 0] * size + triples[:, 1]) * size + triples[:, 2]


def arc_gradient(predicted: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """d(score(predicted) - score(gold)) / d arc, an (n+1, n+1) array of +1/-1."""
    size = len(gold)
    d_arc = np.zeros((size, size), dtype=np.float64)
    words = np.arange(1, size)
    np.add.at(d_arc, (predicted[1:], words), 1.0)
    np.add.at(d_arc, (gold[1:], words), -1.0)
    return d_arc


def hamming_augmented(arc: np.ndarray, gold: np.ndarray, cost: float = 1.0) -> np.ndarray:
    """``arc`` plus ``cost`` on every arc that is not gold (cost-augmented decoding)."""
    out = arc + cost
    out[gold[1:], np.arange(1, len(gold))] -= cost
    return out
