"""What the graph parser's model hands over: every score of a batch of spans, in one object.

A span is one tree's words: ``(start, end)`` token offsets into its doc, from
``segment.sentence_spans``. Per span, with ``n`` words and index 0 the artificial root:

- ``arcs[i]``: (n+1, n+1) first-order scores ``arc[h, m]`` (column 0 and the diagonal unused);
- ``masks[i]``: (n+1, n+1) bool, the candidate arcs first-order pruning kept (the root always);
- ``sib[i]`` (T,): sibling scores on the triples the candidates allow, ``sib_triples(i)`` (T, 3)
  ``(h, s, m)`` (``s == h`` for the closest modifier); ``grand[i]`` and ``grand_triples(i)``
  ``(g, h, m)`` likewise: the triples pruning made (``triples``, ``pruning.prune_batch``; none
  for a span or a factor type not scored);
- ``higher_order[i]``: whether the span was given higher-order factors at all (short enough), and
  ``factors``: the factor types scored;
- label scores, in one of two shapes, each a named type. ``TrainingScores`` (what the model
  returns in training, and the shape of its gradients): ``label_arcs[i]`` (C, 2) ``(h, m)`` and
  ``labels[i]`` (C, L) their label scores, row ``c`` for arc ``label_arcs[i][c]``, on the arcs
  the loss reads (the kept trees' known arcs, or else the candidate arcs). ``PredictedScores``
  (at prediction): ``blocks[i]`` the encoder's (n+1, d) rows of the span (on the model's device),
  from which the model scores the arcs of the decoded trees
  (``graph.graph_model.tree_label_scores``): labels are wanted on one head per word, the one
  the decoder chose, not on all ``top_k`` candidates of every word; and ``spaces[i]`` (n,) bool,
  the span's whitespace words that the decoder keeps leaves (``segment.span_whitespace``).

Per doc (``j``), for models with those heads:

- ``spans[j]``: the spans scored (the input's, or the model's own segmentation), and
  ``sentences[j]``: where the model's sentences begin (token offsets), None when the input gave
  the spans;
- ``starts[j]`` (n_tokens,): logits of "this token starts a sentence";
- ``tags[attr][j]`` (n_tokens, T): logits of the token's ``attr`` (``POS``, ``TAG``, ``DEP``): in
  training an objective for the encoder, at prediction when the input asks (``GraphInput.tags``).

The model returns one ``TrainingScores`` or ``PredictedScores`` (its arrays on the model's
device) and its backprop takes one ``TrainingScores`` of gradients with the same index arrays
(``like``). ``to_numpy`` is the device boundary: decoders and losses read float64 numpy arrays.
"""
from dataclasses import dataclass, field, replace
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..decoders.batch import cut
from ..layers.rows import host_arrays
from ..names import Span

FACTORS: FrozenSet[str] = frozenset({"sib", "grand"})
# Score of the arcs pruning dropped: absent, in the decoders' convention.
PRUNED = -np.inf


class GraphInput(NamedTuple):
    """The graph model's input: docs, their spans (computed once per batch), arcs to keep.

    ``spans``: per doc its spans, or None for a doc the model is to segment itself (its
    sentence-start scorer, or chunks of ``max_length`` for a model without one).
    ``keep``: one entry per span (in doc order, then span order), a heads array (n+1,) whose
    known arcs (``-1``: unknown) stay candidates whatever their score (gold trees in training,
    an earlier parser's tree when reparsing), or None; only with given spans. ``factors``: the
    higher-order factor types to score (``"sib"``, ``"grand"``), those the decoder or the loss
    reads. ``starts``: score sentence starts at prediction also for docs whose spans are given
    (a rehearsal teacher's soft targets); in training they are always scored, and at prediction
    otherwise only for docs the model segments. ``tags``: the tag objectives (``"POS"``, ...) to
    score at prediction too (those a parser writes); in training all are scored.
    """

    docs: list
    spans: List[Optional[List[Span]]]
    keep: Optional[List[Optional[np.ndarray]]] = None
    factors: FrozenSet[str] = FACTORS
    starts: bool = False
    tags: Tuple[str, ...] = ()


class Factors(NamedTuple):
    """One factor type's triples and values of several spans, end to end in span order (the batch
    kernels' layout, ``decoders.batch``): ``counts`` (B,) int64, ``-1`` for a span without such
    factors (decoded and scored first-order); ``triples`` (T, 3) int64; ``values`` (T,) float64."""

    counts: np.ndarray
    triples: np.ndarray
    values: np.ndarray

    def split(self, flat: np.ndarray) -> list:
        """Per span its rows of an array laid out like ``values`` (views; empty where none)."""
        return cut(flat, np.maximum(self.counts, 0))


@dataclass
class GraphScores:
    """Scores of every span of a batch, the part training and prediction share; the model returns
    one of its two kinds, ``TrainingScores`` or ``PredictedScores`` (see the module docstring)."""

    arcs: list
    masks: List[np.ndarray]
    sib: list
    grand: list
    higher_order: List[bool] = field(default_factory=list)
    factors: FrozenSet[str] = FACTORS
    spans: List[List[Span]] = field(default_factory=list)
    sentences: List[Optional[List[int]]] = field(default_factory=list)
    starts: list = field(default_factory=list)
    tags: Dict[str, list] = field(default_factory=dict)
    # "sib" and "grand": per span the triples of ``sib[i]`` and ``grand[i]``
    triples: Dict[str, list] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.arcs)

    def to_numpy(self, ops) -> "GraphScores":
        """The same scores as numpy arrays in the model's precision (index arrays are numpy
        already). The accessors below (``arc``, ``pruned_arc``, ``cubes``) give one span's
        scores in float64, so a batch never holds float64 copies of everything."""
        convert = lambda values: host_arrays(ops, values)  # noqa: E731
        return replace(self, arcs=convert(self.arcs), sib=convert(self.sib), grand=convert(self.grand),
                       starts=convert(self.starts), tags={attr: convert(values) for attr, values in self.tags.items()})

    def arc(self, i: int) -> np.ndarray:
        """Span ``i``'s (n+1, n+1) arc scores, float64."""
        return np.asarray(self.arcs[i], dtype=np.float64)

    def pruned_arc(self, i: int) -> np.ndarray:
        """Span ``i``'s arc scores (float64) with the arcs pruning dropped absent (``-inf``)."""
        return np.where(self.masks[i], self.arc(i), PRUNED)

    def sib_triples(self, i: int) -> np.ndarray:
        """(T, 3) ``(h, s, m)`` triples of span ``i``'s sibling scores."""
        return self.triples["sib"][i]

    def grand_triples(self, i: int) -> np.ndarray:
        """(T, 3) ``(g, h, m)`` triples of span ``i``'s grandparent scores."""
        return self.triples["grand"][i]

    def factors_of(self, kind: str, spans: Optional[Sequence[int]] = None,
                   read: Optional[FrozenSet[str]] = None) -> Factors:
        """The ``kind`` (``"sib"`` or ``"grand"``) triples and values of ``spans`` (default: all),
        end to end; a span counts -1 without higher-order factors or, with ``read`` given, where
        ``kind`` is not in it (``cubes``' None)."""
        spans = range(len(self)) if spans is None else spans
        triples_of, values = (self.sib_triples, self.sib) if kind == "sib" else (self.grand_triples, self.grand)
        triples = {i: triples_of(i) for i in spans if self.higher_order[i] and (read is None or kind in read)}
        return Factors(np.array([len(triples[i]) if i in triples else -1 for i in spans], dtype=np.int64),
                       np.concatenate([*triples.values(), np.zeros((0, 3), np.int32)]).astype(np.int64),
                       np.concatenate([np.asarray(values[i], dtype=np.float64) for i in triples] + [np.zeros(0)]))

    def cubes(self, i: int, factors: FrozenSet[str]) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
        """Dense (n+1)^3 sibling and grandparent cubes of span ``i`` (0 where no factor was
        scored), None for a factor type not in ``factors`` or a span without higher-order
        factors."""
        if not self.higher_order[i]:
            return None, None
        size = len(self.masks[i])
        sib = dense_cube(size, self.sib_triples(i), self.sib[i]) if "sib" in factors else None
        grand = dense_cube(size, self.grand_triples(i), self.grand[i]) if "grand" in factors else None
        return sib, grand


@dataclass
class TrainingScores(GraphScores):
    """``GraphScores`` with the label scores of the arcs the loss reads (``label_arcs``,
    ``labels``): what the model returns in training, and the shape of its gradients."""

    label_arcs: List[np.ndarray] = field(default_factory=list)
    labels: list = field(default_factory=list)

    def to_numpy(self, ops) -> "TrainingScores":
        """``GraphScores.to_numpy``, the label scores too."""
        return replace(super().to_numpy(ops), labels=host_arrays(ops, self.labels))

    def like(self, arcs: list, sib: list, grand: list, labels: list, starts: list,
             tags: Dict[str, list]) -> "TrainingScores":
        """Gradients (or other values) laid out as these scores: same spans, triples, arcs."""
        return replace(self, arcs=arcs, sib=sib, grand=grand, labels=labels, starts=starts, tags=tags)


@dataclass
class PredictedScores(GraphScores):
    """``GraphScores`` with the encoder's rows of every span (``blocks``, on the model's device),
    from which the model scores the decoded trees' labels, and each span's whitespace words
    kept leaves (``spaces``, bool (n,)): what the model returns at prediction."""

    blocks: list = field(default_factory=list)
    spaces: List[np.ndarray] = field(default_factory=list)


def dense_cube(size: int, triples: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A (size, size, size) float64 array holding ``values`` at ``triples``, 0 elsewhere."""
    cube = np.zeros((size, size, size), dtype=np.float64)
    if len(triples):
        cube[triples[:, 0], triples[:, 1], triples[:, 2]] = values
    return cube


def candidate_arcs(mask: np.ndarray) -> np.ndarray:
    """(C, 2) ``(h, m)`` rows of the candidate arcs in ``mask``, modifier by modifier, heads in
    increasing order."""
    mods, heads = np.nonzero(mask.T)
    return np.stack([heads, mods], axis=1).astype(np.int32)
