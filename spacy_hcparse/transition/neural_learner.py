"""How the neural transition model (``NeuralTransitionModel.v2``) parses and trains: its
``TransitionLearner`` (``transition.transition_types``).

Training uses spaCy's optimizer: softmax over the valid moves (``transition.move_loss``) on the
static oracle's configurations, or, for spans with partial gold, on the configurations the model
reaches when it follows its best move among those that keep the known arcs reachable (the dynamic
oracle's, ``transition.guided``), all of which count as correct (so the known arcs are learned and
nothing about the unknown ones); plus, with a sentence-start scorer, the sentence-start
cross-entropy on the docs' gold starts. Greedy decoding.
"""
from typing import Dict, List, NamedTuple, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import Model, set_dropout_rate

from ..learning.losses import binary_xent
from ..names import Span
from ..segment import index_groups, span_whitespace
from .guided import guided_walk
from .move_loss import correct_move_xent
from .moves import LAYOUT, n_classes
from .neural_model import (SlotBatch, SlotScores, SpanBatch, first_rows, grow_neural_classes,
                                reorder_neural_classes, slot_rows)
from .oracle import oracle_slots
from .perceptron import is_partial
from .search import greedy_batch
from .templates import N_SLOTS
from .transition_types import (SpanGold, SpanTree, Spans, TransitionParses, label_moves, move_layout,
                               predicted_labels)

WORDS_PER_GROUP = 4000  # words whose hidden layer the learner precomputes together (~86 MB)


class OracleSteps(NamedTuple):
    """The configurations a batch trains on."""

    rows: np.ndarray  # (k, N_SLOTS) token table rows of each configuration's slot words
    correct: np.ndarray  # (k, n_classes) bool: the oracle's correct classes
    masks: np.ndarray  # (k, n_classes) bool: the valid classes


class NeuralLearner:
    """The neural model's learner (see the module docstring). Spans are parsed in groups of about
    ``WORDS_PER_GROUP`` words, which bounds the step scorer's precomputed table by the group, not
    the batch."""

    def __init__(self, model: Model, cfg: Dict, vocab: Vocab) -> None:
        """``model``: a ``NeuralTransitionModel.v2``; ``cfg``: the component's, read at every call."""
        self.model = model
        self.cfg = cfg

    def initial_tags(self, tags: Sequence[str]) -> List[str]:
        """None: the model reads no tags."""
        return []

    def initialize(self, sample: List[Doc]) -> None:
        """The Tok2Vec and the scorers, shaped on ``sample``."""
        self.model.initialize(X=sample or None)

    def parse(self, docs: Sequence[Doc], spans: Spans) -> TransitionParses:
        """Greedy search over the labels training has seen (``predicted_labels``: the scores of
        the first classes), spans in groups of about ``WORDS_PER_GROUP`` words."""
        self._check_layout()
        _, root = label_moves(self.cfg)
        n_labels = predicted_labels(self.cfg)
        n_cls = n_classes(n_labels)
        if n_cls > self.model.get_dim("nO"):
            raise ValueError(f"hc_transition_neural has {self.model.get_dim('nO')} move classes, fewer than the "
                             f"{n_cls} of {n_labels} labels: grow it with the component's add_label")
        steps = self.model.predict(SpanBatch(list(docs), spans))
        spaces = span_whitespace(docs, steps.spans)
        trees: List[SpanTree] = []
        for lo, hi in index_groups(steps.sizes, WORDS_PER_GROUP):
            group = steps.group(lo, hi)
            trees.extend(greedy_batch(lambda rows: group.scores(rows)[:, :n_cls], group.firsts, group.null,
                                      steps.sizes[lo:hi], n_labels, root, spaces[lo:hi]))
        return TransitionParses(trees, steps.spans, steps.sentences)

    def update(self, docs: Sequence[Doc], spans: Sequence[Sequence[Span]], golds: List[SpanGold],
               starts: List[np.ndarray], drop: float, sgd) -> float:
        """One gradient step: the summed move and sentence-start losses (returned)."""
        steps = self.oracle_steps(docs, spans, golds)
        if not len(steps.rows) and not (self.model.has_ref("start_scorer") and any(len(doc) for doc in docs)):
            return 0.0
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update(SlotBatch(list(docs), steps.rows))
        loss, d_scores = self.get_loss(scores, steps, starts)
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        return loss

    def oracle_steps(self, docs: Sequence[Doc], spans: Sequence[Sequence[Span]], golds: List[SpanGold]) -> OracleSteps:
        """The configurations the spans train on, their correct and valid classes: the static
        oracle's path of each whole gold tree (one correct class each), and for partial gold the
        walk that follows the model's best-scoring correct move (``_guided_steps``)."""
        self._check_layout()
        n_labels, root = label_moves(self.cfg)
        null = sum(len(doc) for doc in docs)
        partial = [is_partial(heads, labels) for heads, labels, _ in golds]
        empty = np.zeros((0, n_classes(n_labels)), dtype=bool)
        parts = [OracleSteps(np.zeros((0, N_SLOTS), dtype=np.int64), empty, empty)]
        for first, (heads, labels, _), part in zip(first_rows(docs, spans), golds, partial):
            if not part:
                slots, seq, valid = oracle_slots(heads, labels, n_labels, root)
                correct = np.zeros(valid.shape, dtype=bool)
                correct[np.arange(len(seq)), seq] = True
                parts.append(OracleSteps(slot_rows(slots, first, null), correct, valid))
        if any(partial):
            parts.append(self._guided_steps(docs, spans, golds, partial))
        return OracleSteps(*(np.concatenate(field) for field in zip(*parts)))

    def _guided_steps(self, docs: Sequence[Doc], spans: Sequence[Sequence[Span]], golds: List[SpanGold],
                      partial: List[bool]) -> OracleSteps:
        """The partial spans' walks (``transition.guided``) with the model's current scores (no
        dropout; only the docs that hold partial spans are read), without the configurations where
        every valid move is correct (nothing to learn there); rows of the batch's token table."""
        n_labels, root = label_moves(self.cfg)
        flags = iter(partial)
        todo = [[span for span in doc_spans if next(flags)] for doc_spans in spans]
        trees = [(heads, labels) for (heads, labels, _), part in zip(golds, partial) if part]
        bases = np.cumsum([0] + [len(doc) for doc in docs])
        held = [i for i, doc_spans in enumerate(todo) if doc_spans]
        steps = self.model.predict(SpanBatch([docs[i] for i in held], [todo[i] for i in held]))
        # token table rows of the held docs -> rows of the whole batch's table, the zero row last
        table_rows = np.concatenate([np.arange(bases[i], bases[i + 1]) for i in held] + [[bases[-1]]])
        parts = []
        for lo, hi in index_groups(steps.sizes, WORDS_PER_GROUP):
            group = steps.group(lo, hi)
            rows, correct, valid, _ = guided_walk(group.scores, group.firsts, group.null, trees[lo:hi], n_labels, root)
            rows = table_rows[np.where(rows == group.null, len(table_rows) - 1, rows + steps.firsts[lo] + 1)]
            keep = (correct != valid).any(axis=1)
            parts.append(OracleSteps(rows[keep], correct[keep], valid[keep]))
        return OracleSteps(*(np.concatenate(field) for field in zip(*parts)))

    def get_loss(self, scores: SlotScores, steps: OracleSteps, starts: List[np.ndarray]) -> Tuple[float, SlotScores]:
        """``(loss, d_scores)``: the summed move cross-entropy of the configurations and sentence-start
        cross-entropy of the docs (``starts``: per doc 1, 0 or -1 unknown), and its gradient as
        the model's backprop takes it (divided by ``loss_normaliser``)."""
        loss, d_moves = 0.0, np.zeros(steps.correct.shape)
        if len(steps.rows):
            loss, d_moves = correct_move_xent(scores.moves, steps.correct, steps.masks)
        d_starts = []
        if self.model.has_ref("start_scorer"):
            for logits, gold in zip(scores.starts, starts):
                start_loss, d = binary_xent(np.asarray(self.model.ops.to_numpy(logits), dtype=np.float64), gold)
                loss += start_loss
                d_starts.append(d)
        scale = 1.0 / self.loss_normaliser(len(steps.rows))
        return loss, SlotScores((d_moves * scale).astype("f"), [(d * scale).astype("f") for d in d_starts])

    @staticmethod
    def loss_normaliser(n_configurations: int) -> float:
        """What the summed loss's gradient is divided by before it reaches the model: 1, as spaCy's
        parser and tagger do (their losses are sums over moves and tokens), so a tok2vec shared
        with them gets a gradient of comparable norm from this component
        (``tests/components/test_shared_tok2vec.py``). This is the one place that scale is set;
        the mean per configuration (``n_configurations``) would make it far smaller. The
        reported loss is the sum either way."""
        return 1.0

    def finish_update(self, sgd) -> None:
        """The optimizer's step on the model's gradients."""
        self.model.finish_update(sgd)

    def before_save(self) -> None:
        """Nothing: the model's weights are the optimizer's."""

    def after_load(self) -> None:
        """Nothing: no training state outside the model (the optimizer's is spaCy's)."""

    def grow_labels(self) -> None:
        """Two zero-weight output rows at the end of the move scorer (``grow_neural_classes``)."""
        self._check_layout()
        n_labels = len(self.cfg["labels"])
        grow_neural_classes(self.model, n_classes(n_labels + 1) - n_classes(n_labels))

    def reorder_classes(self, order: np.ndarray) -> bool:
        """The output layer's rows reordered (``reorder_neural_classes``): always exact."""
        reorder_neural_classes(self.model, order)
        return True

    def _check_layout(self) -> None:
        """The search and the oracles here number classes in ``LAYOUT`` (the component reorders
        weights saved in an earlier layout when it loads them)."""
        if move_layout(self.cfg) != LAYOUT:
            raise ValueError(f"hc_transition_neural: weights in move-class layout {move_layout(self.cfg)}, not "
                             f"{LAYOUT}: load them with the component, which reorders them")
