"""The graph parser's training objective: head cross-entropy + structured hinge + label loss,
plus the sentence-start and auxiliary tag losses of models that have those scorers.

``GraphLoss`` maps the model's scores of a batch (``GraphScores``, numpy) and the gold of each
span and doc (``GraphGold``) to the loss and its gradients, laid out as the scores. Registered
as ``spacy_hcparse.GraphLoss.v1``; its ``decoder`` is the one used for cost-augmented decoding.

Partial gold: a head or label of ``-1`` is unknown (a token that does not align with the
reference, an arc that crosses the span). Unknown heads and labels are left out of the
cross-entropies; the hinge needs a whole gold tree and is skipped for spans without one.
"""
from typing import Dict, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.util import registry

from ..graph.scores import GraphScores
from .batch_hinge import hinge_trees
from .hinge import structured_hinge
from .losses import binary_xent, head_xent, label_xent

# (gold heads (n+1,), gold label ids (n,)); -1 for an unknown head or label
SpanGold = Tuple[np.ndarray, np.ndarray]


class GraphGold(NamedTuple):
    """Gold of a batch: per span (docs in order) its ``SpanGold`` or None (nothing known); per
    doc the sentence starts (n_tokens,: 1 starts a sentence, 0 does not, -1 unknown) or None;
    per tag attribute, per doc the tag ids (n_tokens,: -1 unknown) or None."""

    spans: List[Optional[SpanGold]]
    starts: List[Optional[np.ndarray]]
    tags: Dict[str, List[Optional[np.ndarray]]]


class GraphLoss:
    """``xent_weight`` * head cross-entropy + ``hinge_weight`` * structured hinge (cost-augmented
    ``decoder``) + ``label_weight`` * label cross-entropy on the gold arcs + ``start_weight`` *
    sentence-start cross-entropy + ``tag_weight`` * tag cross-entropy, summed over the words of
    the batch (as spaCy's tagger and parser sum theirs, so components sharing a tok2vec pull on
    it with comparable force); with ``per_word`` the gradients are divided by the number of
    words instead."""

    def __init__(self, decoder, hinge_weight: float = 1.0, xent_weight: float = 1.0, label_weight: float = 1.0,
                 per_word: bool = False, start_weight: float = 1.0, tag_weight: float = 1.0):
        self.decoder = decoder
        self.hinge_weight = hinge_weight
        self.xent_weight = xent_weight
        self.label_weight = label_weight
        self.per_word = per_word
        self.start_weight = start_weight
        self.tag_weight = tag_weight

    @property
    def factors(self):
        """The higher-order factor types the loss reads: those its decoder reads."""
        return self.decoder.factors

    def __call__(self, scores: GraphScores, gold: GraphGold) -> Tuple[float, GraphScores]:
        """``scores``: numpy scores, label rows on the gold arcs of the spans that have one."""
        golds = gold.spans
        n_words = max(1, sum(int((g[0][1:] >= 0).sum()) for g in golds if g is not None)) if self.per_word else 1
        total = 0.0
        d_arcs, d_sib, d_grand, d_labels = [], [], [], []
        trees = hinge_trees(scores, golds, self.decoder) if self.hinge_weight else None  # all spans at once
        for i, span_gold in enumerate(golds):
            arc_loss, d_arc, ds, dg = self._tree_loss(scores, i, span_gold, None if trees is None else trees[i])
            label_loss, d_label = self._label_loss(scores.labels[i], scores.label_arcs[i], span_gold)
            total += arc_loss + label_loss
            d_arcs.append((d_arc / n_words).astype("f"))
            d_sib.append((ds / n_words).astype("f"))
            d_grand.append((dg / n_words).astype("f"))
            d_labels.append((d_label / n_words).astype("f"))
        start_loss, d_starts = self._doc_losses(scores.starts, gold.starts, self.start_weight, binary_xent, n_words)
        total += start_loss
        d_tags = {}
        for attr, logits in scores.tags.items():
            tag_loss, d_tags[attr] = self._doc_losses(logits, gold.tags.get(attr, [None] * len(logits)),
                                                      self.tag_weight, label_xent, n_words)
            total += tag_loss
        return total, scores.like(d_arcs, d_sib, d_grand, d_labels, d_starts, d_tags)

    def _tree_loss(self, scores: GraphScores, i: int, gold: Optional[SpanGold], tree=None):
        """The span's head cross-entropy and hinge; ``tree``: its cost-augmented tree where
        ``batch_hinge.hinge_trees`` decoded it already, else None (the decoder runs here)."""
        d_sib = np.zeros(len(scores.sib[i]))
        d_grand = np.zeros(len(scores.grand[i]))
        size = len(scores.masks[i])
        d_arc = np.zeros((size, size))
        total = 0.0
        if gold is None or size <= 1:
            return total, d_arc, d_sib, d_grand
        arc = scores.arc(i)
        heads = gold[0]
        if self.xent_weight:
            loss, d = head_xent(arc, heads)
            total += self.xent_weight * loss
            d_arc += self.xent_weight * d
        if self.hinge_weight and (heads[1:] >= 0).all():
            sib, grand = scores.cubes(i, self.factors)
            decoder = self.decoder if tree is None else (lambda *_: tree)
            loss, da, ds, dg = structured_hinge(arc, scores.pruned_arc(i), sib, grand, heads,
                                                scores.sib_triples(i), scores.grand_triples(i), decoder)
            total += self.hinge_weight * loss
            d_arc += self.hinge_weight * da
            d_sib += self.hinge_weight * ds
            d_grand += self.hinge_weight * dg
        return total, d_arc, d_sib, d_grand

    def _label_loss(self, label_scores: np.ndarray, label_arcs: np.ndarray, gold: Optional[SpanGold]):
        if gold is None or not len(label_arcs):
            return 0.0, np.zeros(label_scores.shape, dtype=np.float64)
        loss, d = label_xent(np.asarray(label_scores, dtype=np.float64), gold[1][label_arcs[:, 1] - 1])
        return self.label_weight * loss, self.label_weight * d

    @staticmethod
    def _doc_losses(logits: list, golds: list, weight: float, loss_fn, n_words: int):
        """A per-token loss over each doc's logits (no gold: no loss, zero gradient)."""
        total, grads = 0.0, []
        for values, gold in zip(logits, golds):
            values = np.asarray(values, dtype=np.float64)
            if gold is None or not weight or not len(values):
                grads.append(np.zeros(values.shape, dtype="f"))
                continue
            loss, d = loss_fn(values, gold)
            total += weight * loss
            grads.append((weight * d / n_words).astype("f"))
        return total, grads


@registry.misc("spacy_hcparse.GraphLoss.v1")
def make_graph_loss(
    decoder: object,
    hinge_weight: float = 1.0,
    xent_weight: float = 1.0,
    label_weight: float = 1.0,
    per_word: bool = False,
    start_weight: float = 1.0,
    tag_weight: float = 1.0,
) -> GraphLoss:
    """The graph parser's loss. ``decoder``: cost-augmented decoding for the hinge (a decoder
    object, ``graph.decoding``; ``hc_parser``'s default config names it). ``per_word``:
    divide the gradients by the batch's number of words (the recipe before losses were summed).
    ``start_weight``/``tag_weight``: the sentence-start and auxiliary tag losses (models with
    those scorers)."""
    return GraphLoss(decoder, hinge_weight=hinge_weight, xent_weight=xent_weight, label_weight=label_weight,
                     per_word=per_word, start_weight=start_weight, tag_weight=tag_weight)
