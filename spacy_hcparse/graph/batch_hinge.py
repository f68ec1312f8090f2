"""The structured hinge's cost-augmented trees of every span of a training batch.

The hinge ``max(0, s(y) + cost(y) - s(gold))`` decodes each span's Hamming-augmented pruned arcs
(``hamming_augmented``) with the loss's decoder, all spans in one ``decode_spans`` call: one
compiled call for the decoders training uses (``graph.decoding``'s ``Eisner``, ``MST`` and
``HillClimb``, whose per-sentence time limit does not apply: the restart caps bound the work),
span by span for the others (dual decomposition, certified, MBR). ``batch_loss.tree_losses``
then scores every span's tree in one call.
"""
from typing import List, Optional, Sequence

import numpy as np

from ..decoders.batch import pack
from .scores import GraphScores


def hinge_spans(scores: GraphScores, golds: Sequence) -> List[int]:
    """The spans the hinge decodes: a whole gold tree (no unknown head) of at least one word."""
    return [i for i, gold in enumerate(golds)
            if gold is not None and len(scores.masks[i]) > 1 and (gold[0][1:] >= 0).all()]


def hinge_trees(scores: GraphScores, golds: Sequence, decoder, threads: int = 1) -> List[Optional[np.ndarray]]:
    """Per span the heads (n+1,) of the tree ``decoder`` (a ``graph.decoding`` object) finds on its
    Hamming-augmented pruned arcs with the factor cubes the loss reads (``GraphScores.cubes`` with
    the decoder's factors), None where the hinge skips the span."""
    todo = hinge_spans(scores, golds)
    out: List[Optional[np.ndarray]] = [None] * len(golds)
    if todo:
        arcs, sizes = pack([hamming_augmented(scores.pruned_arc(i), golds[i][0]) for i in todo])
        for i, result in zip(todo, decoder.decode_spans(scores, todo, arcs, sizes, threads)):
            out[i] = result.heads
    return out


def hamming_augmented(arc: np.ndarray, gold: np.ndarray, cost: float = 1.0) -> np.ndarray:
    """``arc`` plus ``cost`` on every arc that is not gold (cost-augmented decoding)."""
    out = arc + cost
    out[gold[1:], np.arange(1, len(gold))] -= cost
    return out
