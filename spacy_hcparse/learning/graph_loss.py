"""The graph parser's training objective: head cross-entropy + structured hinge + label loss.

``GraphLoss`` maps the model's scores of a batch (``GraphScores``, numpy) and the gold tree of
each span to the loss and its gradients, laid out as the scores. Registered as
``spacy_hcparse.GraphLoss.v1``; its ``decoder`` is the one used for cost-augmented decoding.
"""
from typing import List, Optional, Tuple

import numpy as np
from spacy.util import registry

from ..decoding import HillClimb
from ..graph_scores import GraphScores
from .hinge import structured_hinge
from .losses import head_xent, label_xent

# (gold heads (n+1,), gold label ids (n,), -1 for a label the parser does not know)
SpanGold = Tuple[np.ndarray, np.ndarray]


class GraphLoss:
    """``xent_weight`` * head cross-entropy + ``hinge_weight`` * structured hinge (cost-augmented
    ``decoder``) + ``label_weight`` * label cross-entropy on the gold arcs; summed over the words
    of the batch, then divided by their number (gradients too)."""

    def __init__(self, decoder, hinge_weight: float = 1.0, xent_weight: float = 1.0, label_weight: float = 1.0):
        self.decoder = decoder
        self.hinge_weight = hinge_weight
        self.xent_weight = xent_weight
        self.label_weight = label_weight

    @property
    def factors(self):
        """The higher-order factor types the loss reads: those its decoder reads."""
        return self.decoder.factors

    def __call__(self, scores: GraphScores, golds: List[Optional[SpanGold]]) -> Tuple[float, GraphScores]:
        """``scores``: float64 numpy scores, label rows on the gold arcs of the spans that have a
        gold tree (``golds[i]`` None: span ``i`` is not learned from)."""
        n_words = max(1, sum(len(g[0]) - 1 for g in golds if g is not None))
        total = 0.0
        d_arcs, d_sib, d_grand, d_labels = [], [], [], []
        for i, gold in enumerate(golds):
            arc_loss, d_arc, ds, dg = self._tree_loss(scores, i, gold)
            label_loss, d_label = self._label_loss(scores.labels[i], gold)
            total += arc_loss + label_loss
            d_arcs.append((d_arc / n_words).astype("f"))
            d_sib.append((ds / n_words).astype("f"))
            d_grand.append((dg / n_words).astype("f"))
            d_labels.append((d_label / n_words).astype("f"))
        return total, scores.like(d_arcs, d_sib, d_grand, d_labels)

    def _tree_loss(self, scores: GraphScores, i: int, gold: Optional[SpanGold]):
        arc = scores.arc(i)
        d_arc = np.zeros_like(arc)
        d_sib = np.zeros(len(scores.sib[i]))
        d_grand = np.zeros(len(scores.grand[i]))
        total = 0.0
        if gold is None or len(arc) <= 1:
            return total, d_arc, d_sib, d_grand
        heads = gold[0]
        if self.xent_weight:
            loss, d = head_xent(arc, heads)
            total += self.xent_weight * loss
            d_arc += self.xent_weight * d
        if self.hinge_weight:
            sib, grand = scores.cubes(i, self.factors)
            loss, da, ds, dg = structured_hinge(arc, scores.pruned_arc(i), sib, grand, heads,
                                                scores.sib_triples(i), scores.grand_triples(i), self.decoder)
            total += self.hinge_weight * loss
            d_arc += self.hinge_weight * da
            d_sib += self.hinge_weight * ds
            d_grand += self.hinge_weight * dg
        return total, d_arc, d_sib, d_grand

    def _label_loss(self, label_scores: np.ndarray, gold: Optional[SpanGold]):
        if gold is None:
            return 0.0, np.zeros_like(label_scores)
        loss, d = label_xent(np.asarray(label_scores, dtype=np.float64), gold[1])
        return self.label_weight * loss, self.label_weight * d


@registry.misc("spacy_hcparse.GraphLoss.v1")
def make_graph_loss(
    decoder: Optional[object] = None,
    hinge_weight: float = 1.0,
    xent_weight: float = 1.0,
    label_weight: float = 1.0,
) -> GraphLoss:
    """The graph parser's loss. ``decoder``: cost-augmented decoding for the hinge (default:
    hill climbing with 2-6 restarts, stopping after 2 hits of the best tree)."""
    if decoder is None:
        decoder = HillClimb(max_restarts=6, min_restarts=2, converge=2, uniform_share=0.0)
    return GraphLoss(decoder, hinge_weight=hinge_weight, xent_weight=xent_weight, label_weight=label_weight)
