"""The structured hinge's cost-augmented trees of every span of a training batch.

The hinge ``max(0, s(y) + cost(y) - s(gold))`` decodes each span's Hamming-augmented pruned arcs
(``hamming_augmented``) with the loss's decoder. ``hinge_trees`` decodes all of them in one
call for the decoders training uses, with the same kernels and the same trees as the per-span
decoder: ``graph.decoding.Eisner`` (``decoders.batch.decode_eisner_batch``; arcs and siblings),
``MST`` (``decoders.batch_search.decode_mst_batch``) and ``HillClimb``
(``decoders.batch_search.decode_hill_climb_batch``: arcs, siblings and grandparents, from the MST
tree, its restart options; its per-sentence time limit does not apply, the restart caps bound the
work). Other decoders (dual decomposition, certified, MBR) run span by span.
``batch_loss.tree_losses`` then scores every span's tree in one call.
"""
from typing import List, Optional, Sequence

import numpy as np

from ..decoders.batch import cut, decode_eisner_batch, pack
from ..decoders.batch_search import decode_hill_climb_batch, decode_mst_batch
from .decoding import MST, Eisner, HillClimb
from .scores import GraphScores


def hinge_spans(scores: GraphScores, golds: Sequence) -> List[int]:
    """The spans the hinge decodes: a whole gold tree (no unknown head) of at least one word."""
    return [i for i, gold in enumerate(golds)
            if gold is not None and len(scores.masks[i]) > 1 and (gold[0][1:] >= 0).all()]


def hinge_trees(scores: GraphScores, golds: Sequence, decoder, threads: int = 1) -> List[Optional[np.ndarray]]:
    """Per span the heads (n+1,) of the tree ``decoder`` finds on its Hamming-augmented pruned
    arcs with the factor cubes the loss reads (``GraphScores.cubes`` with the decoder's factors),
    None where the hinge skips the span."""
    todo = hinge_spans(scores, golds)
    out: List[Optional[np.ndarray]] = [None] * len(golds)
    augmented = [hamming_augmented(scores.pruned_arc(i), golds[i][0]) for i in todo]
    if not isinstance(decoder, (Eisner, MST, HillClimb)):
        for i, arc in zip(todo, augmented):
            out[i] = decoder(arc, *scores.cubes(i, decoder.factors)).heads
        return out
    if not todo:
        return out
    arcs, sizes = pack(augmented)
    if isinstance(decoder, MST):
        heads = decode_mst_batch(arcs, sizes, threads=threads)
    else:
        sib = scores.factors_of("sib", todo, decoder.factors)
        if isinstance(decoder, Eisner):
            heads, _ = decode_eisner_batch(arcs, sizes, sib.counts, sib.triples, sib.values, threads=threads)
        else:
            grand = scores.factors_of("grand", todo, decoder.factors)
            heads = decode_hill_climb_batch(arcs, sizes, sib.counts, sib.triples, sib.values, grand.counts,
                                            grand.triples, grand.values, threads=threads,
                                            **decoder.batch_options())
    for i, tree in zip(todo, cut(heads, sizes)):
        out[i] = tree
    return out


def hamming_augmented(arc: np.ndarray, gold: np.ndarray, cost: float = 1.0) -> np.ndarray:
    """``arc`` plus ``cost`` on every arc that is not gold (cost-augmented decoding)."""
    out = arc + cost
    out[gold[1:], np.arange(1, len(gold))] -= cost
    return out
