"""How the averaged perceptron transition model (``TransitionModel.v2``) parses and trains: its
``TransitionLearner`` (``transition.transition_types``).

Training is online (``transition.perceptron``): greedy with the static oracle and the
ultraconservative update, with error exploration (``train_explore``), or beam search with early
update (``train_beam_width > 1``); spans with partial gold follow the dynamic oracle, which counts
every move that keeps the known arcs reachable correct (``transition.dynamic_oracle``), so they
train on their known arcs and learn nothing about the unknown ones. The model's own tagger trains
alongside when the component has tags, and its sentence classifier on the docs' sentence starts.
"""
from typing import Dict, List, Sequence

import numpy as np
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import Model

from ..names import Span
from .moves import LAYOUT, n_classes
from .perceptron import AveragedPerceptron
from .perceptron_model import (PerceptronFeatures, PerceptronInput, SpanRows, doc_rows, grow_perceptron_classes,
                                    perceptron_features, perceptron_weights, set_perceptron_weights, span_rows)
from .tagger_trainer import TaggerTrainer
from .tagging import fill_tags
from .transition_types import SpanGold, Spans, TransitionParses, label_moves, move_layout, predicted_labels


class PerceptronLearner:
    """Averaged perceptron (``TransitionModel.v2``), trained online by ``update``: greedy with the
    static oracle and the ultraconservative update, with error exploration (``train_explore``),
    or beam search with early update (``train_beam_width > 1``); ``sgd`` is not used. Spans with
    partial gold follow the dynamic oracle (``transition.perceptron``). The model's own tagger
    trains alongside when the component has tags, and its sentence classifier (if it has one) on the
    docs' gold sentence starts.

    Training changes copies of the weights (``AveragedPerceptron``, ``TaggerTrainer``, started
    from the model's weights at the first update); ``sync`` writes their averages into the model,
    before parsing and saving. The unaveraged state is not serialized."""

    def __init__(self, model: Model, cfg: Dict, vocab: Vocab) -> None:
        """``model``: a ``TransitionModel.v2``; ``cfg``: the component's, read at every call."""
        self.model = model
        self.cfg = cfg
        self.vocab = vocab
        self._reset()

    def _reset(self) -> None:
        """Forget the training state."""
        self.parser = None  # AveragedPerceptron, from the first update on
        self.tagger = None  # TaggerTrainer, from the first update with tags to learn
        self.sentences = None  # TaggerTrainer of the sentence classifier, from the first update
        self.stale = False  # updates not yet averaged into the model

    def initial_tags(self, tags: Sequence[str]) -> List[str]:
        """All of them: the model tags the words itself for its tag features."""
        return sorted(set(tags))

    def initialize(self, sample: List[Doc]) -> None:
        """The tagger's width from ``cfg["tags"]``, zero weights, no training state."""
        self.model.set_dim("nT", max(1, len(self.cfg["tags"])), force=True)
        self.model.initialize(X=sample or None)
        self._reset()

    def parse(self, docs: Sequence[Doc], spans: Spans) -> TransitionParses:
        """Greedy or beam search (``cfg["beam_width"]``) with the averaged weights, over the
        labels training has seen (``predicted_labels``)."""
        self.sync()
        _, root = label_moves(self.cfg)
        return self.model.predict(PerceptronInput(list(docs), spans, self._tag_values(), root,
                                                  int(self.cfg["beam_width"]), predicted_labels(self.cfg),
                                                  move_layout(self.cfg)))

    def update(self, docs: Sequence[Doc], spans: Sequence[Sequence[Span]], golds: List[SpanGold],
               starts: List[np.ndarray], drop: float, sgd) -> float:
        """One online pass over the spans (and the docs, for the sentence classifier); returns the
        number of updates (mistakes)."""
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
        n_labels, root = label_moves(self.cfg)
        exploring = self.parser.counter[0] >= 2 * self.cfg.get("explore_after", 0)  # 2 moves per word
        mistakes = self.parser.train(
            attrs, rows.offsets, gold_heads, gold_labels, features.templates, features.mask, n_labels, root,
            int(self.cfg["train_beam_width"]),
            explore=float(self.cfg.get("train_explore", 0.0)) if exploring else 0.0,
            explore_max_length=int(self.cfg.get("explore_max_length", 60)),
            layout=move_layout(self.cfg),
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
        """The averaged weights into the model."""
        self.sync()

    def after_load(self) -> None:
        """The loaded weights are the ones to train from: no training state."""
        self._reset()

    def reorder_classes(self, order: np.ndarray) -> bool:
        """False: a feature's class weights ``W[b : b + n_classes]`` overlap the next buckets', so
        no reordering of ``W`` keeps every score (the kernels take the weights' layout instead)."""
        return False

    def grow_labels(self) -> None:
        """Two zero-weight classes at the end of the model's weights and of the training state
        (the current weights ``W`` and averaging sums ``U`` grow alike, so the averages of the
        existing entries go on as they were). Weights in the earlier class layout cannot grow: the
        new classes would fall between existing ones (``reorder_classes``)."""
        if move_layout(self.cfg) != LAYOUT:
            raise ValueError(
                f"this perceptron model was saved by an earlier spacy-hcparse, in move-class layout "
                f"{move_layout(self.cfg)}, which has no room for a new label, and its hashed weights cannot be "
                f"reordered without changing its parses. It still parses and trains as before with its own "
                f"labels. To add a label, train a fresh model on data that has it ('python -m spacy train', or "
                f"nlp.initialize then updates)"
            )
        self.sync()
        new = n_classes(len(self.cfg["labels"]) + 1) - n_classes(len(self.cfg["labels"]))
        grow_perceptron_classes(self.model, new)
        if self.parser is not None:
            self.parser.grow(new)
