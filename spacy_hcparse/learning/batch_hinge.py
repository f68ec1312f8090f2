"""The structured hinge's cost-augmented trees of every span of a training batch in one call.

``structured_hinge`` decodes each span's Hamming-augmented pruned arcs (``hinge.hamming_augmented``)
with the loss's decoder. With the Eisner decoder (``graph.decoding.Eisner``, the fast config's)
``hinge_trees`` decodes all of them together (``decoders.batch.decode_eisner_batch``: the same
kernels, the same trees), and the loss then scores each span's tree as before.
"""
from typing import List, NamedTuple, Optional, Sequence

import numpy as np

from ..decoders.batch import decode_eisner_batch, pack, split_rows
from ..graph.decoding import Eisner
from ..graph.scores import GraphScores
from .hinge import hamming_augmented


class Decoded(NamedTuple):
    """What a decoder returns as far as ``structured_hinge`` reads it."""

    heads: np.ndarray


def hinge_spans(scores: GraphScores, golds: Sequence) -> List[int]:
    """The spans the hinge decodes: a whole gold tree (no unknown head) of at least one word."""
    return [i for i, gold in enumerate(golds)
            if gold is not None and len(scores.masks[i]) > 1 and (gold[0][1:] >= 0).all()]


def hinge_trees(scores: GraphScores, golds: Sequence, decoder, threads: int = 1) -> Optional[List[Optional[Decoded]]]:
    """Per span the tree ``decoder`` finds on its Hamming-augmented pruned arcs (with the span's
    sibling cube where it has higher-order factors, as ``GraphScores.cubes``), None where the
    hinge skips the span; None for a decoder other than Eisner (decoded span by span)."""
    if not isinstance(decoder, Eisner):
        return None
    todo = hinge_spans(scores, golds)
    out: List[Optional[Decoded]] = [None] * len(golds)
    if not todo:
        return out
    arcs, sizes = pack([hamming_augmented(scores.pruned_arc(i), golds[i][0]) for i in todo])
    triples = [scores.sib_triples(i) if scores.higher_order[i] else None for i in todo]
    counts = np.array([-1 if t is None else len(t) for t in triples], dtype=np.int64)
    kept = [k for k, t in enumerate(triples) if t is not None]
    sib_triples = np.concatenate([triples[k] for k in kept] + [np.zeros((0, 3), np.int32)])
    sib_values = np.concatenate([np.asarray(scores.sib[todo[k]], dtype=np.float64) for k in kept] + [np.zeros(0)])
    heads, _ = decode_eisner_batch(arcs, sizes, counts, sib_triples, sib_values, threads=threads)
    for i, tree in zip(todo, split_rows(heads, sizes)):
        out[i] = Decoded(tree)
    return out
