"""What ``hc_transition_parser`` and its models exchange: trees, parses, gold, and the learner
interface every transition model hands the component.

Conventions: a span is ``(start, end)`` token offsets of a Doc, parsed as one tree; its words are
``1..n`` and index 0 is the root. Heads are ``(n+1,)`` int64 with ``heads[0] == -1``; label ids
``(n,)`` index the component's labels (``cfg["labels"]``). In gold, ``-1`` marks a head, label or
tag that is unknown (partial annotation, tokens that do not align).

The learner is how a model parses and trains. Each registered transition architecture puts its
learner's class in ``model.attrs["learner"]`` (a class is no msgpack value, so thinc leaves it out
of the saved model, and a loaded model keeps the one its architecture set); the component builds
it once with ``model.attrs["learner"](model, cfg, vocab)`` and calls only ``TransitionLearner``'s
methods. A new kind of model is a new learner class, not a branch in the component.
"""
from typing import Dict, List, NamedTuple, Optional, Protocol, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import Model

from ..names import ROOT_LABEL, Span

# (heads (n+1,) with heads[0] == -1, label ids (n,)) of one span
SpanTree = Tuple[np.ndarray, np.ndarray]
# (heads (n+1,), label ids (n,), tag ids per row (n+1,) with -1 on the root row); -1 is unknown
SpanGold = Tuple[np.ndarray, np.ndarray, np.ndarray]
# per doc the spans to parse, or None for the model to segment the doc
Spans = Sequence[Optional[Sequence[Span]]]


class TransitionParses(NamedTuple):
    """What parsing a batch gives: one tree per span (docs in order), per doc the spans parsed, and
    per doc where the model's sentences begin (token offsets; None where the spans were given)."""

    trees: List[SpanTree]
    spans: List[List[Span]]
    sentences: List[Optional[List[int]]]


class TransitionLearner(Protocol):
    """How a transition model parses and trains (``model.attrs["learner"]`` builds one).

    Learners read the component's ``cfg`` (labels, tags and the search/training settings) at every
    call, so settings changed on the component apply at once; they never write it.
    """

    def __init__(self, model: Model, cfg: Dict, vocab: Vocab) -> None: ...

    def initial_tags(self, tags: Sequence[str]) -> List[str]:
        """The tags the component keeps in ``cfg["tags"]``, from the training data's ``tags``."""

    def initialize(self, sample: List[Doc]) -> None:
        """The model's dims beyond ``nO`` and its weights (``sample``: a few docs); forgets any
        training state."""

    def parse(self, docs: Sequence[Doc], spans: Spans) -> TransitionParses:
        """Per doc the given spans, or the model's segmentation where None; one tree per span."""

    def update(self, docs: Sequence[Doc], spans: Sequence[Sequence[Span]], golds: List[SpanGold],
               starts: List[np.ndarray], drop: float, sgd) -> float:
        """One training step on the spans' gold (``golds``: one per span, flat, heads and labels
        possibly partial) and the docs' sentence starts (per doc, 1 starts a sentence, 0 does
        not, -1 unknown); returns the loss to report."""

    def finish_update(self, sgd) -> None:
        """Apply the accumulated gradients, where there are any."""

    def before_save(self) -> None:
        """Bring the model's weights up to date (e.g. the perceptron's averages)."""

    def after_load(self) -> None:
        """Forget training state that no longer matches the weights."""

    def grow_labels(self) -> None:
        """Append the two move classes of one more label (``transition.moves``: no existing class
        moves) to the model and to any training state, with weights that leave the scores of the
        existing classes as they are; ``cfg["labels"]`` does not list the label yet. Raises a
        ``ValueError`` saying what to do where the weights' class layout cannot grow."""

    def reorder_classes(self, order: np.ndarray) -> bool:
        """Reorder the model's move classes exactly, class ``c`` taking the scores of class
        ``order[c]`` (``transition.moves.layout_order``: weights saved in an earlier class layout);
        False, with nothing changed, where the weights cannot be reordered exactly."""


def label_moves(cfg: Dict) -> Tuple[int, int]:
    """(number of labels, label id of ``ROOT``) of the component's ``cfg``."""
    return len(cfg["labels"]), cfg["labels"].index(ROOT_LABEL)


def move_layout(cfg: Dict) -> int:
    """The class layout (``transition.moves``) of the component's weights: ``cfg["move_layout"]``,
    ``1`` for models saved before it was recorded."""
    return int(cfg.get("move_layout", 1))


def predicted_labels(cfg: Dict) -> int:
    """How many labels, from the first, the search may predict: up to the last one that is not in
    ``cfg["unseen_labels"]`` (labels added after initialization that training has not seen yet;
    their classes are the last ones, so leaving them out leaves the model's scores of the others
    as they were)."""
    unseen = set(cfg.get("unseen_labels", ()))
    labels = cfg["labels"]
    k = len(labels)
    while k and labels[k - 1] in unseen:
        k -= 1
    return k


def teacher_gold(docs: Sequence[Doc], parses: TransitionParses) -> Tuple[List[SpanGold], List[np.ndarray]]:
    """What ``rehearse`` trains on: the teacher's trees as gold (tags unknown) and per doc its
    sentence starts where the teacher segmented the doc (1 or 0; -1, unknown, on the first token
    and on docs whose sentences were given)."""
    golds = [(heads, labels, np.full(len(heads), -1, dtype=np.int64)) for heads, labels in parses.trees]
    starts = []
    for doc, begins in zip(docs, parses.sentences):
        doc_starts = np.full(len(doc), -1, dtype=np.int64)
        if begins is not None and len(doc):
            doc_starts[1:] = 0
            doc_starts[[b for b in begins if b > 0]] = 1
        starts.append(doc_starts)
    return golds, starts
