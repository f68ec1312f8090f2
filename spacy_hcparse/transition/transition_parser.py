"""``hc_transition_parser``: arc-standard shift-reduce parser (averaged perceptron or neural).

Data flows one way: Doc -> its sentences (``segment.sentence_spans``), or the model's segmentation
when it has none -> the model's learner (``model.attrs["learner"]``, ``transition.transition_types``):
the perceptron's tagging and search, or the neural step scorer and greedy search, valid moves only
(whitespace stays a leaf of the word before it) -> span trees (index 0 the root) -> ``write_trees``
(the chunks of a sentence longer than ``max_length`` joined into one tree) ->
``nonproj.deprojectivize``. ``predict`` returns the trees and leaves Docs alone;
``set_annotations`` writes them.

Training reads the reference's sentences (``learning.gold.reference_spans``), whatever the doc
carries, and their sentence starts. Gold that is partly known (heads the reference leaves
missing, tokens that do not align, arcs leaving a chunk of a long sentence, unknown labels) trains
on its known arcs: the dynamic oracle counts every move that keeps them reachable correct. Gold
that cannot be part of one tree is skipped, with a warning. Full gold trees are lifted with spaCy's
pseudo-projective transform (``transition.projective_gold``; decorated labels rarer than
``label_freq_cutoff`` fall back to their plain label), undone at prediction.

``rehearse`` (after ``nlp.resume_training()``) trains on the teacher's parses of the predicted
docs.
"""
from copy import deepcopy
from itertools import islice
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..compiling import watch_compiling
from ..components.annotate import JOIN_LABEL, codes, write_trees
from ..components.base import ParserPipe
from ..learning.gold import DECORATION, lifted_labels
from ..names import ROOT_LABEL, Span
from ..segment import continues, doc_sentence_starts, preset_spans, span_whitespace
from .moves import LAYOUT, LAYOUTS, layout_order, n_classes
from .projective_gold import example_gold
from .transition_types import SpanGold, SpanTree, TransitionLearner, move_layout, teacher_gold

FALLBACK_LABEL = "dep"  # words need a label other than ROOT to attach to each other

DEFAULT_MODEL = """
[model]
@architectures = "spacy_hcparse.TransitionModel.v2"
templates = "zhang_nivre"
n_buckets = 4194304
tag_buckets = 1048576
max_length = 200
sentence_buckets = 1048576
"""

# the factory's search and training settings (documented on ``TransitionParser``), defined once
SETTING_DEFAULTS: Dict[str, Any] = {"beam_width": 1, "train_beam_width": 1, "train_explore": 0.0, "explore_after": 0,
                                    "explore_max_length": 60, "label_freq_cutoff": 30}


class DocParses(NamedTuple):
    """A doc's spans, their trees, and which spans carry on the sentence of the span before them
    (what ``predict`` returns per doc)."""

    spans: List[Span]
    trees: List[SpanTree]
    continues: List[bool]


@Language.factory(
    "hc_transition_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"],
    default_config={
        "model": Config().from_str(DEFAULT_MODEL)["model"],
        **SETTING_DEFAULTS,
        "scorer": {"@scorers": "spacy_hcparse.parser_scorer.v1"},
    },
    default_score_weights={
        "dep_uas": 0.5,
        "dep_las": 0.5,
        "dep_las_per_type": None,
        "sents_p": None,
        "sents_r": None,
        "sents_f": 0.0,
        "ud_uas": None,
        "ud_las": None,
        "ud_las_per_type": None,
    },
)
def make_transition_parser(
    nlp: Language,
    name: str,
    model: Model,
    beam_width: int,
    train_beam_width: int,
    train_explore: float,
    explore_after: int,
    explore_max_length: int,
    label_freq_cutoff: int,
    scorer: Optional[Callable],
) -> "TransitionParser":
    """The component with the config's settings (see ``TransitionParser``)."""
    watch_compiling()
    return TransitionParser(nlp.vocab, model, name, beam_width=beam_width, train_beam_width=train_beam_width,
                            train_explore=train_explore, explore_after=explore_after,
                            explore_max_length=explore_max_length, label_freq_cutoff=label_freq_cutoff, scorer=scorer)


class TransitionParser(ParserPipe):
    """Arc-standard parser; the model's learner (``model.attrs["learner"]``, built once with the
    model and this component's ``cfg``) parses and trains.

    beam_width: beam search width at prediction for the perceptron (1 = greedy).
    train_beam_width: perceptron training with beam search and early update when > 1 (global
        training, which is what makes a wide beam at prediction pay off); 1 = greedy training with
        the ultraconservative update.
    train_explore: greedy perceptron training with error exploration: the probability of following
        a wrong prediction (0 = always follow the static oracle). Once a wrong move is followed,
        the dynamic oracle (``transition.dynamic_oracle``) names the correct moves.
    explore_after: training words seen (counted from the start of training) before exploring.
    explore_max_length: sentences longer than this are trained without exploration.
    label_freq_cutoff: decorated (lifted) labels seen fewer times in initialization are replaced
        by their plain label.

    ``add_label`` works after initialization too, as spaCy's parser's does: the model grows two
    move classes with zero weights (``transition.moves`` appends a label's classes, so no existing
    class moves), and the label is not predicted until a training update has seen it in gold
    (``cfg["unseen_labels"]``), so parses stay as they were until then.

    ``cfg["move_layout"]`` is the weights' move-class layout (``transition.moves.LAYOUT`` for
    weights made now; models saved without it have layout 1, in which no class can be appended).
    Loading reorders layout-1 weights into ``LAYOUT`` where that is exact (the neural model's
    output rows); the perceptron's hashed weights keep layout 1, parse and train as before, and
    refuse a new label with ``add_label``.
    """

    SETTINGS = ("beam_width", "train_beam_width", "train_explore", "explore_after", "explore_max_length")

    def __init__(self, vocab: Vocab, model: Model, name: str = "hc_transition_parser", *,
                 scorer: Optional[Callable] = None, **settings: Any) -> None:
        """``settings``: those above, ``SETTING_DEFAULTS``'s where left out (the factory's defaults)."""
        unknown = sorted(set(settings) - set(SETTING_DEFAULTS))
        if unknown:
            raise TypeError(f"[hc_transition_parser] unknown settings {unknown}; expected {sorted(SETTING_DEFAULTS)}")
        settings = {**SETTING_DEFAULTS, **settings}
        for key in ("beam_width", "train_beam_width"):
            if settings[key] < 1:
                raise ValueError(f"[hc_transition_parser] {key} must be at least 1, got {settings[key]}")
        if not 0.0 <= settings["train_explore"] <= 1.0:
            raise ValueError(f"[hc_transition_parser] train_explore must be in [0, 1], got {settings['train_explore']}")
        if not callable(model.attrs.get("learner")):
            raise ValueError(f"[hc_transition_parser] model {model.name!r} is not a transition model (no "
                             f"attrs['learner']): use spacy_hcparse.TransitionModel.v2 or NeuralTransitionModel.v2")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg: Dict = {"labels": [], "tags": [], "move_layout": LAYOUT, **settings}
        # cfg is shared with the learner, which reads it at every call (loading updates it in place)
        self.learner: TransitionLearner = model.attrs["learner"](model, self.cfg, vocab)
        self._rehearsal_model = None

    # ----- set-up -------------------------------------------------------------------------
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[List[str]] = None,
    ) -> None:
        """Labels (``labels``, or the examples' lifted ones), the move classes, the tags the learner
        keeps, and the model's weights, shaped on a few examples."""
        validate_get_examples(get_examples, "TransitionParser.initialize")
        if labels is None:
            labels = lifted_labels(get_examples(), self.cfg["label_freq_cutoff"])
        labels = [label for label in labels if label != ROOT_LABEL] or [FALLBACK_LABEL]
        for label in [ROOT_LABEL, *labels]:
            self.add_label(label)
        self.model.set_dim("nO", n_classes(len(self.labels)))
        self.cfg["unseen_labels"] = []  # every label gets fresh weights below
        self.cfg["move_layout"] = LAYOUT
        self.cfg["tags"] = self.learner.initial_tags([t.tag_ for eg in get_examples() for t in eg.reference if t.tag_])
        for tag in self.cfg["tags"]:
            self.vocab.strings.add(tag)
        self.learner.initialize([eg.predicted for eg in islice(get_examples(), 10)])

    # ----- prediction ---------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[DocParses]:
        """Per doc its spans (its sentences, or the model's when it has none; chunked to
        ``max_length``), their trees, and which spans carry on a sentence."""
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            return [DocParses([], [], []) for _ in docs]
        parses = self.learner.parse(docs, self._given_spans(docs))
        out, pos = [], 0
        for doc, spans, sentences in zip(docs, parses.spans, parses.sentences):
            begins = sentences if sentences is not None else doc_sentence_starts(doc)
            out.append(DocParses(spans, parses.trees[pos : pos + len(spans)], continues(spans, begins)))
            pos += len(spans)
        return out

    def _given_spans(self, docs: Sequence[Doc]) -> List[Optional[List[Span]]]:
        """Per doc its sentences (chunked to ``max_length``), or None for the model to segment it."""
        return [preset_spans(doc, self.max_length) for doc in docs]

    def set_annotations(self, docs: Iterable[Doc], parses: List[DocParses]) -> None:
        """Write ``predict``'s trees and sentences into the docs."""
        for doc, (spans, trees, joined) in zip(docs, parses):
            if spans:
                self.write_parses(doc, spans, trees, joined)

    def write_parses(self, doc: Doc, spans: Sequence[Span], parses: Sequence[SpanTree],
                     joined: Optional[Sequence[bool]] = None) -> None:
        """Write the trees of ``spans`` into ``doc``, lifted arcs restored; ``joined``: which spans
        carry on the sentence of the span before them (default: as the doc's sentences say).
        Whitespace the search kept a leaf is labelled ``JOIN_LABEL`` (``dep``), as in ``hc_parser``."""
        labels = self.labels
        names = [[labels[i] for i in labels_ids] for _, labels_ids in parses]
        for span_names, space in zip(names, span_whitespace([doc], [spans])):
            for m in np.flatnonzero(space).tolist():
                span_names[m] = JOIN_LABEL
        write_trees(doc, spans, [heads for heads, _ in parses], [codes(doc.vocab, "DEP", n) for n in names], joined)
        if any(DECORATION in name for span_names in names for name in span_names):
            nonproj.deprojectivize(doc)

    # ----- training -----------------------------------------------------------------------
    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """One training step on the examples' gold (``_gold``); the loss goes under the
        component's name in ``losses``."""
        examples, losses = self._training_step(examples, losses, "update")
        if ROOT_LABEL not in self.labels:
            raise ValueError(f"[{self.name}] update() before initialize(): the component has no labels yet")
        docs, spans, golds, starts = self._gold(examples)
        if any(len(doc) for doc in docs):
            losses[self.name] += self.learner.update(docs, spans, golds, starts, drop, sgd)
        return losses

    def rehearse(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
                 losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """An update toward the teacher's predictions on the examples' predicted docs (no gold
        read), so that fine-tuning forgets less: the teacher's trees are trained on as gold, and
        where it segmented a doc, its sentence starts. The teacher is the copy of the model
        ``nlp.resume_training()`` keeps; without one, the model as it is now (logged: take it
        before the first update). The loss goes under the component's name in ``losses``."""
        examples, losses = self._training_step(examples, losses, "rehearse")
        if ROOT_LABEL not in self.labels:
            raise ValueError(f"[{self.name}] rehearse() before initialize(): the component has no labels yet")
        docs = [eg.predicted for eg in examples]
        if not any(len(doc) for doc in docs):
            return losses
        self._teacher()
        parses = self._teacher_learner.parse(docs, self._given_spans(docs))
        golds, starts = teacher_gold(docs, parses)
        losses[self.name] += self.learner.update(docs, parses.spans, golds, starts, drop, sgd)
        return losses

    def _teacher_changed(self, model: Optional[Model]) -> None:
        """Keep the teacher's learner (``rehearse`` parses with it)."""
        self._teacher_learner = None if model is None else model.attrs["learner"](model, self.cfg, self.vocab)

    def _model_copy(self) -> Model:
        """A copy of the model with the learner's averaged weights in it."""
        self.learner.before_save()
        return deepcopy(self.model)

    def get_loss(self, examples: Iterable[Example], scores) -> Tuple[float, object]:
        """Not used: the learner walks the oracle's configurations inside ``update`` (the neural
        learner's ``get_loss`` gives ``(loss, d_scores)`` of those configurations)."""
        raise NotImplementedError("hc_transition_parser computes its loss inside update()")

    def finish_update(self, sgd) -> None:
        """The learner's optimizer step, where it has one."""
        self.learner.finish_update(sgd)

    def _grow_labels(self, label: str) -> None:
        """Two more move classes for ``label`` (the learner's ``grow_labels``, and the teacher's
        of ``rehearse``, as spaCy resizes its rehearsal model); it stays unseen, never predicted,
        until a gold parse in training has it. Nothing changes where the learner cannot grow."""
        try:
            self.learner.grow_labels()
        except ValueError as err:
            raise ValueError(f"[{self.name}] cannot add label {label!r}: {err}") from err
        if self._teacher_learner is not None:
            self._teacher_learner.grow_labels()
        self.cfg.setdefault("unseen_labels", []).append(label)

    def _mark_seen(self, golds: List[SpanGold]) -> None:
        """Take the labels used in ``golds`` off ``cfg["unseen_labels"]``."""
        unseen = self.cfg.get("unseen_labels")
        if unseen and golds:
            used = set(np.concatenate([labels for _, labels, _ in golds]).tolist())
            labels = self.labels
            seen = {labels[i] for i in used if i >= 0}
            self.cfg["unseen_labels"] = [label for label in unseen if label not in seen]

    def _gold(self, examples: List[Example]) -> Tuple[List[Doc], List[List[Span]], List[SpanGold], List[np.ndarray]]:
        """The predicted docs, per doc its usable spans, their gold (one ``SpanGold`` per span in
        order) and per doc its sentence starts (``projective_gold.example_gold``); spans whose gold
        cannot be one tree are reported."""
        label_ids = {label: i for i, label in enumerate(self.labels)}
        tag_ids = {tag: i for i, tag in enumerate(self.cfg["tags"])}
        docs, spans, golds, starts = [], [], [], []
        for eg in examples:
            gold = example_gold(eg, self.max_length, label_ids, tag_ids)
            for (start, end), chunk in gold.skipped:
                self._report_unusable_gold(eg.predicted, start, end, gold.heads, whole_sentence=not chunk)
            docs.append(eg.predicted)
            spans.append(gold.spans)
            golds.extend(gold.trees)
            starts.append(gold.starts)
        self._mark_seen(golds)
        return docs, spans, golds, starts

    # ----- serialization ------------------------------------------------------------------
    def _before_save(self) -> None:
        """The learner's weights into the model (e.g. the perceptron's averages), then ``cfg``."""
        self.learner.before_save()
        super()._before_save()

    def _check_format(self, cfg: Dict, where: str) -> None:
        """The shared format check, then the move-class layout of the weights about to be loaded,
        which becomes ``cfg["move_layout"]`` (1 where the saved cfg has none: loading only adds
        the saved keys to ``cfg``)."""
        super()._check_format(cfg, where)
        layout = move_layout(cfg)
        if layout not in LAYOUTS:
            raise ValueError(
                f"[{self.name}] {where} numbers its move classes in layout {layout}; this spacy-hcparse "
                f"reads layouts {list(LAYOUTS)}: install the version that saved it, or retrain the model"
            )
        self.cfg["move_layout"] = layout

    def _after_load(self, where: str) -> None:
        """Forget training state; refuse weights whose move classes do not fit the labels;
        reorder weights of an earlier move-class layout into ``LAYOUT`` where the learner can do
        it exactly (``reorder_classes``), so that they can grow."""
        self.learner.after_load()
        expected = n_classes(len(self.labels))
        if self.model.has_dim("nO") and self.model.get_dim("nO") not in (None, expected):
            raise ValueError(
                f"[hc_transition_parser] model in {where} has {self.model.get_dim('nO')} move classes but "
                f"its cfg lists {len(self.labels)} labels ({expected} classes): the files do not belong together"
            )
        layout = move_layout(self.cfg)
        if self.labels and layout != LAYOUT and self.learner.reorder_classes(layout_order(len(self.labels), layout)):
            self.cfg["move_layout"] = LAYOUT
