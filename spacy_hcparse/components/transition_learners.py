"""How ``hc_transition_parser`` parses and trains with each kind of model: one learner per kind.

The component picks its learner once, from the model's ``attrs["kind"]`` (``LEARNERS``), and
calls only this interface:

- ``uses_tags``: whether the component should collect the training data's tags at initialization.
- ``initialize(sample)``: the model's dims beyond ``nO`` and its weights (``sample``: a few docs);
  forgets any training state.
- ``parse(docs, spans) -> TransitionParses``: per doc the given spans, or None for the model to
  segment the doc (its sentence classifier or scorer, when it has one); one tree per span parsed.
- ``update(docs, spans, golds, starts, drop, sgd) -> float``: one training step on the spans'
  gold trees (``golds``: ``SpanGold`` per span, in the same flat order; heads and labels may be
  partial) and the docs' gold sentence starts (``starts``: per doc, 1 starts a sentence, 0 does
  not, -1 unknown); returns the loss to report.
- ``finish_update(sgd)``, ``before_save()`` (bring the model's weights up to date) and
  ``after_load()`` (forget training state that no longer matches the weights).

Learners read the component's ``cfg`` (labels, tags and the search/training settings) at every
call, so settings changed on the component apply at once; they never write it.
"""
from typing import Dict, List, Optional, Sequence, Tuple, Type, Union

import numpy as np
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import Model, set_dropout_rate

from ..learning.losses import binary_xent
from ..learning.move_loss import correct_move_xent
from ..learning.perceptron import AveragedPerceptron, is_partial
from ..learning.perceptron_tagger import TaggerTrainer
from ..models.transition import (
    PerceptronFeatures,
    PerceptronInput,
    SlotBatch,
    SlotScores,
    SpanBatch,
    SpanRows,
    SpanTree,
    TransitionParses,
    doc_rows,
    first_rows,
    perceptron_features,
    perceptron_weights,
    set_perceptron_weights,
    slot_rows,
    span_rows,
)
from ..segment import Span, index_groups, span_whitespace
from ..transition.dynamic_oracle import zero_cost_path
from ..transition.features import N_SLOTS
from ..transition.moves import n_classes
from ..transition.oracle import oracle_slots, path_slots
from ..transition.search import greedy_batch
from ..transition.tagging import fill_tags
from .projective_gold import ROOT_LABEL

WORDS_PER_GROUP = 4000  # words whose hidden layer the neural learner precomputes together (~86 MB)

# (heads (n+1,), label ids (n,), tag ids per row (n+1,) with -1 on the root row and unknown tags);
# a head or label of -1 is unknown (partial gold)
SpanGold = Tuple[np.ndarray, np.ndarray, np.ndarray]
Spans = Sequence[Optional[Sequence[Span]]]


def _moves(cfg: Dict) -> Tuple[int, int]:
    """(number of labels, label id of ROOT)."""
    return len(cfg["labels"]), cfg["labels"].index(ROOT_LABEL)


class PerceptronLearner:
    """Averaged perceptron (``TransitionModel.v1``/``.v2``), trained online by ``update``: greedy with the
    static oracle and the ultraconservative update, with error exploration (``train_explore``),
    or beam search with early update (``train_beam_width > 1``); ``sgd`` is not used. Spans with
    partial gold follow the dynamic oracle (``learning.perceptron``). The model's own tagger
    trains alongside when the component has tags, and its sentence classifier (``.v2``) on the
    docs' gold sentence starts.

    Training changes copies of the weights (``AveragedPerceptron``, ``TaggerTrainer``, started
    from the model's weights at the first update); ``sync`` writes their averages into the model,
    before parsing and saving. The unaveraged state is not serialized."""

    uses_tags = True

    def __init__(self, model: Model, cfg: Dict, vocab: Vocab) -> None:
        self.model = model
        self.cfg = cfg
        self.vocab = vocab
        self._reset()

    def _reset(self) -> None:
        self.parser = None  # AveragedPerceptron, from the first update on
        self.tagger = None  # TaggerTrainer, from the first update with tags to learn
        self.sentences = None  # TaggerTrainer of the sentence classifier, from the first update
        self.stale = False  # updates not yet averaged into the model

    def initialize(self, sample: List[Doc]) -> None:
        self.model.set_dim("nT", max(1, len(self.cfg["tags"])), force=True)
        self.model.initialize(X=sample or None)
        self._reset()

    def parse(self, docs: Sequence[Doc], spans: Spans) -> TransitionParses:
        self.sync()
        _, root = _moves(self.cfg)
        return self.model.predict(PerceptronInput(list(docs), spans, self._tag_values(), root,
                                                  int(self.cfg["beam_width"])))

    def update(self, docs, spans, golds: List[SpanGold], starts: List[np.ndarray], drop: float, sgd) -> float:
        self._train_sentences(docs, starts)
        if not golds:
            return 0.0
        if self.parser is None:
            self.parser = AveragedPerceptron.from_weights(perceptron_weights(self.model)[0])
        features = perceptron_features(self.model)
        rows = span_rows(docs, spans)
        attrs = self._training_tags(rows, features, np.concatenate([tags for _, _, tags in golds]))
        gold_heads = np.concatenate([heads for heads, _, _ in golds])
        gold_labels = np.concatenate([np.concatenate([[-1], labels]) for _, labels, _ in golds]).astype(np.int64)
        n_labels, root = _moves(self.cfg)
        exploring = self.parser.counter[0] >= 2 * self.cfg.get("explore_after", 0)  # 2 moves per word
        mistakes = self.parser.train(
            attrs, rows.offsets, gold_heads, gold_labels, features.templates, features.mask, n_labels, root,
            int(self.cfg["train_beam_width"]),
            explore=float(self.cfg.get("train_explore", 0.0)) if exploring else 0.0,
            explore_max_length=int(self.cfg.get("explore_max_length", 60)),
        )
        self.stale = True
        return float(mistakes)

    def _train_sentences(self, docs: Sequence[Doc], starts: List[np.ndarray]) -> None:
        """One pass of the sentence classifier (if the model has one) over the whole docs."""
        features = perceptron_features(self.model)
        if features.sentence_templates is None or not any(len(doc) for doc in docs):
            return
        if self.sentences is None:
            self.sentences = TaggerTrainer(perceptron_weights(self.model).sentences)
        rows = doc_rows(docs)
        gold = np.concatenate([np.concatenate([[-1], s]) for doc, s in zip(docs, starts) if len(doc)]).astype(np.int64)
        self.sentences.tag(rows.attrs, rows.offsets, features.sentence_templates, features.sentence_mask, 2, gold)
        self.stale = True

    def _training_tags(self, rows: SpanRows, features: PerceptronFeatures, gold_tags: np.ndarray) -> np.ndarray:
        """The attribute rows with the tagger's training tags in the tag column of untagged rows
        (the tagger trains on ``gold_tags`` meanwhile)."""
        tag_values = self._tag_values()
        if not len(tag_values) or not rows.untagged.any():
            return rows.attrs
        if self.tagger is None:
            self.tagger = TaggerTrainer(perceptron_weights(self.model)[1], features.jackknife_tags)
        tag_ids = self.tagger.tag(rows.attrs, rows.offsets, features.tag_templates, features.tag_mask,
                                  len(tag_values), gold_tags)
        return fill_tags(rows.attrs, rows.untagged, tag_ids, tag_values)

    def _tag_values(self) -> np.ndarray:
        """The tag column's value of each tag id: the tag's string hash, as ``doc.to_array(TAG)``."""
        return np.array([self.vocab.strings[t] for t in self.cfg["tags"]], dtype=np.uint64).view(np.int64)

    def sync(self) -> None:
        """Write the averaged weights into the model if updates happened since the last time."""
        if self.stale:
            parser = self.parser.average() if self.parser is not None else perceptron_weights(self.model).parser
            tagger = self.tagger.average() if self.tagger is not None else None
            sentences = self.sentences.average() if self.sentences is not None else None
            set_perceptron_weights(self.model, parser, tagger, sentences)
            self.stale = False

    def finish_update(self, sgd) -> None:
        """Nothing: ``update`` changed the weights already."""

    def before_save(self) -> None:
        self.sync()

    def after_load(self) -> None:
        self._reset()


class NeuralLearner:
    """Neural scorer (``NeuralTransitionModel.v1``/``.v2``), trained with spaCy's optimizer: softmax
    over the valid moves (``learning.move_loss``) on the static oracle's configurations, or, for
    spans with partial gold, on the dynamic oracle's ``zero_cost_path`` with every move that keeps
    the known arcs reachable counted correct; plus, for ``.v2``, the sentence-start cross-entropy
    on the docs' gold starts. Greedy decoding; spans are parsed in groups of about
    ``WORDS_PER_GROUP`` words, which bounds the step scorer's precomputed table by the group, not
    the batch."""

    uses_tags = False

    def __init__(self, model: Model, cfg: Dict, vocab: Vocab) -> None:
        self.model = model
        self.cfg = cfg

    def initialize(self, sample: List[Doc]) -> None:
        self.model.initialize(X=sample or None)

    def parse(self, docs: Sequence[Doc], spans: Spans) -> TransitionParses:
        n_labels, root = _moves(self.cfg)
        steps = self.model.predict(SpanBatch(list(docs), spans))
        spaces = span_whitespace(docs, steps.spans)
        trees: List[SpanTree] = []
        for lo, hi in index_groups(steps.sizes, WORDS_PER_GROUP):
            group = steps.group(lo, hi)
            trees.extend(greedy_batch(group.scores, group.firsts, group.null, steps.sizes[lo:hi], n_labels, root,
                                      spaces[lo:hi]))
        return TransitionParses(trees, steps.spans, steps.sentences)

    def update(self, docs, spans, golds: List[SpanGold], starts: List[np.ndarray], drop: float, sgd) -> float:
        n_labels, root = _moves(self.cfg)
        null = sum(len(doc) for doc in docs)
        rows, correct, masks = [], [], []
        for first, (heads, labels, _) in zip(first_rows(docs, spans), golds):
            span_slots, span_correct, valid = self._span_steps(heads, labels, n_labels, root)
            rows.append(slot_rows(span_slots, first, null))
            correct.append(span_correct)
            masks.append(valid)
        rows = np.concatenate(rows) if rows else np.zeros((0, N_SLOTS), dtype=np.int64)
        learns_starts = self.model.has_ref("start_scorer")
        if not len(rows) and not (learns_starts and any(len(doc) for doc in docs)):
            return 0.0
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update(SlotBatch(list(docs), rows))
        loss, d_moves = 0.0, np.zeros((0, n_classes(n_labels)))
        if len(rows):
            loss, d_moves = correct_move_xent(scores.moves, np.concatenate(correct), np.concatenate(masks))
        d_starts = []
        if learns_starts:
            for logits, gold in zip(scores.starts, starts):
                start_loss, d = binary_xent(np.asarray(self.model.ops.to_numpy(logits), dtype=np.float64), gold)
                loss += start_loss
                d_starts.append(d)
        scale = 1.0 / self.loss_normaliser(len(rows))
        backprop(SlotScores((d_moves * scale).astype("f"), [(d * scale).astype("f") for d in d_starts]))
        if sgd is not None:
            self.finish_update(sgd)
        return loss

    @staticmethod
    def _span_steps(heads, labels, n_labels: int, root: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The configurations a span trains on: their slot words ``(k, N_SLOTS)``, correct classes
        and valid classes ``(k, n_classes)``. Static oracle for a whole gold tree (one correct
        class each); for partial gold the dynamic oracle's path, without the configurations
        where every valid move is correct (nothing to learn there)."""
        if not is_partial(heads, labels):
            slots, seq, valid = oracle_slots(heads, labels, n_labels, root)
            correct = np.zeros(valid.shape, dtype=bool)
            correct[np.arange(len(seq)), seq] = True
            return slots, correct, valid
        seq, correct = zero_cost_path(heads, labels, n_labels, root)
        slots, valid = path_slots(seq, len(heads) - 1, n_labels, root)
        keep = correct.any(axis=1) & (correct != valid).any(axis=1)
        return slots[keep], correct[keep], valid[keep]

    @staticmethod
    def loss_normaliser(n_configurations: int) -> float:
        """What the summed loss's gradient is divided by before it reaches the model: 1, as spaCy's
        parser and tagger do (their losses are sums over moves and tokens), so a tok2vec shared
        with them gets a gradient of comparable norm from this component
        (``tests/components/test_shared_tok2vec.py``). This is the one place that scale is set;
        the mean per configuration (``n_configurations``) made it 50-100x smaller. The reported
        loss is the sum either way."""
        return 1.0

    def finish_update(self, sgd) -> None:
        self.model.finish_update(sgd)

    def before_save(self) -> None:
        """Nothing: the model's weights are the optimizer's."""

    def after_load(self) -> None:
        """Nothing: no training state outside the model (the optimizer's is spaCy's)."""


TransitionLearner = Union[PerceptronLearner, NeuralLearner]
LEARNERS: Dict[str, Type] = {"perceptron": PerceptronLearner, "neural": NeuralLearner}
