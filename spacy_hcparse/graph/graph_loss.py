"""The graph parser's training objective: head cross-entropy + structured hinge + label loss,
plus the sentence-start and auxiliary tag losses of models that have those scorers.

``GraphLoss`` maps the model's scores of a batch (``TrainingScores``, numpy) and the gold of each
span and doc (``GraphGold``) to the loss and its gradients, laid out as the scores. Registered
as ``spacy_hcparse.GraphLoss.v1``; its ``decoder`` is the one used for cost-augmented decoding.

Partial gold: a head or label of ``-1`` is unknown (a token that does not align with the
reference, an arc that crosses the span). Unknown heads and labels are left out of the
cross-entropies; the hinge needs a whole gold tree and is skipped for spans without one.
"""
from typing import Dict, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.util import registry

from ..decoders.batch import cut
from ..learning.losses import binary_xent, label_xent
from .batch_hinge import hinge_trees
from .batch_loss import tree_losses
from .scores import TrainingScores

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
    ``decoder``) + ``tree_weight`` * the gold tree's negative log probability under the first-order
    non-projective (matrix-tree) distribution + ``label_weight`` * label cross-entropy on the gold
    arcs + ``start_weight`` * sentence-start cross-entropy + ``tag_weight`` * tag cross-entropy,
    summed over the words of the batch (as spaCy's tagger and parser sum theirs, so components
    sharing a tok2vec pull on it with comparable force); with ``per_word`` the gradients are divided
    by the number of words instead."""

    def __init__(self, decoder, hinge_weight: float = 1.0, xent_weight: float = 1.0, label_weight: float = 1.0,
                 per_word: bool = False, start_weight: float = 1.0, tag_weight: float = 1.0,
                 tree_weight: float = 0.0):
        self.decoder = decoder
        self.hinge_weight = hinge_weight
        self.xent_weight = xent_weight
        self.label_weight = label_weight
        self.per_word = per_word
        self.start_weight = start_weight
        self.tag_weight = tag_weight
        self.tree_weight = tree_weight

    @property
    def factors(self):
        """The higher-order factor types the loss reads: those its decoder reads."""
        return self.decoder.factors

    def __call__(self, scores: TrainingScores, gold: GraphGold) -> Tuple[float, TrainingScores]:
        """``scores``: numpy scores, label rows on the gold arcs of the spans that have one."""
        golds = gold.spans
        n_words = max(1, sum(int((g[0][1:] >= 0).sum()) for g in golds if g is not None)) if self.per_word else 1
        sib, grand = scores.factors_of("sib", read=self.factors), scores.factors_of("grand", read=self.factors)
        trees = hinge_trees(scores, golds, self.decoder) if self.hinge_weight else [None] * len(golds)
        total, d_arcs, d_sib, d_grand = tree_losses(scores, golds, trees, sib, grand, self.xent_weight,
                                                    self.hinge_weight, self.tree_weight)
        label_golds = [None if g is None else g[1][arcs[:, 1] - 1] for g, arcs in zip(golds, scores.label_arcs)]
        label_loss, d_labels = self._row_losses(scores.labels, label_golds, self.label_weight, label_xent, n_words)
        total += label_loss
        start_loss, d_starts = self._row_losses(scores.starts, gold.starts, self.start_weight, binary_xent, n_words)
        total += start_loss
        d_tags = {}
        for attr, logits in scores.tags.items():
            tag_loss, d_tags[attr] = self._row_losses(logits, gold.tags.get(attr, [None] * len(logits)),
                                                      self.tag_weight, label_xent, n_words)
            total += tag_loss
        scale = lambda grads: [(g / n_words).astype("f") for g in grads]  # noqa: E731
        return total, scores.like(scale(d_arcs), scale(d_sib), scale(d_grand), d_labels, d_starts, d_tags)

    @staticmethod
    def _row_losses(logits: list, golds: list, weight: float, loss_fn, n_words: int):
        """A per-row loss (``loss_fn``: ``label_xent`` or ``binary_xent``) over each item's logits
        (docs' tokens, spans' label arcs) with its gold ids (None: no loss, zero gradient), in one
        call over the rows of all of them."""
        used = [i for i, (values, gold) in enumerate(zip(logits, golds))
                if gold is not None and weight and len(values)]
        grads = [np.zeros(np.shape(values), dtype="f") for values in logits]
        if not used:
            return 0.0, grads
        values = np.concatenate([np.asarray(logits[i], dtype=np.float64) for i in used])
        loss, d = loss_fn(values, np.concatenate([golds[i] for i in used]))
        d = (weight * d / n_words).astype("f")
        for i, rows in zip(used, cut(d, [len(logits[i]) for i in used])):
            grads[i] = rows
        return weight * loss, grads


@registry.misc("spacy_hcparse.GraphLoss.v1")
def make_graph_loss(
    decoder: object,
    hinge_weight: float = 1.0,
    xent_weight: float = 1.0,
    label_weight: float = 1.0,
    per_word: bool = False,
    start_weight: float = 1.0,
    tag_weight: float = 1.0,
    tree_weight: float = 0.0,
) -> GraphLoss:
    """The graph parser's loss. ``decoder``: cost-augmented decoding for the hinge (a decoder
    object, ``graph.decoding``; ``hc_parser``'s default config names it). ``per_word``:
    divide the gradients by the batch's number of words (the recipe before losses were summed).
    ``start_weight``/``tag_weight``: the sentence-start and auxiliary tag losses (models with
    those scorers). ``tree_weight``: the matrix-tree (non-projective, first-order) tree
    cross-entropy of the arc scores (``graph.batch_loss``), off by default."""
    return GraphLoss(decoder, hinge_weight=hinge_weight, xent_weight=xent_weight, label_weight=label_weight,
                     per_word=per_word, start_weight=start_weight, tag_weight=tag_weight, tree_weight=tree_weight)
