"""``hc_parser``: the graph-based higher-order dependency parser as a spaCy component.

Prediction reads as spans -> scores -> decode -> labels -> Doc: ``predict`` takes each doc's
spans (``segment.sentence_spans``, or the model's own segmentation), the model's scores of all
of them in one call (``GraphInput`` -> ``GraphScores``, numpy at the decoder boundary), decodes
every span (``decode_spans``: the configured decoder, ``graph.decoding``), labels every tree
(``label_spans``: one model call for the trees' label scores, then the ``graph.labeling.Labeler``)
and returns the parses (``graph.parses``) without touching the Docs; ``set_annotations`` writes
them. Training: the batch's gold (``graph.graph_gold``) -> the model's scores -> ``get_loss``
(``GraphLoss``) -> their gradients -> the model's backprop.
"""
from itertools import islice
from typing import Callable, ContextManager, Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.pipeline._parser_internals import nonproj
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model, set_dropout_rate

from ..blas import model_blas, use_blas
from ..components.annotate import JOIN_LABEL, SPACE_TAGS, CodeTable, write_parse
from ..components.base import ParserPipe
from ..names import Span
from ..segment import preset_spans, sentence_spans
from .calibration import (HeldOut, calibration_factors, fit_calibration, held_out, joined_factors, written_head_ece,
                          written_heads)
from .decoding import DecodeResult
from .extensions import kbest_parses, register_extensions, remember_parser, write_values
from .graph_batch import span_arcs, span_parses
from .graph_gold import GoldBatch, batch_gold, gold_labels, tag_sets
from .graph_loss import GraphGold, GraphLoss
from .graph_model import resize_labels, tree_label_scores
from .labeling import Labeler, LabelSet
from .parses import DocParses, SpanParse, extension_values, group_parses, joined_values
from .rehearsal import rehearsal_loss, teacher_heads
from .reparse import given_spans
from .scores import FACTORS, GraphInput, PredictedScores, TrainingScores
from .valency import label_classes


class GraphParser(ParserPipe):
    """Graph-based parser with arc, sibling and grandparent factors and a configurable decoder;
    its settings are documented with its factory (``graph.graph_factory.make_graph_parser``),
    where their defaults are defined.

    ``cfg`` holds what was learned (labels, label classes, tags, calibration); the settings are
    the config's, changeable at load time. ``add_label`` works on a trained parser too (the new
    label is never predicted until training has seen it: ``cfg["unseen_labels"]``). Training
    reads partial gold: what the reference leaves missing is left out of the loss.
    """

    def __init__(self, vocab: Vocab, model: Model, name: str = "hc_parser", *, decoder: Callable, loss: GraphLoss,
                 labeler: Labeler, init_from_doc: bool, doc_arc_bonus: float, head_probs: bool,
                 prob_temperature: Optional[float], set_tags: bool, scorer: Optional[Callable], cpu_blas: str,
                 threads: int, projectivize: bool, label_freq_cutoff: int) -> None:
        if prob_temperature is not None and not prob_temperature > 0:
            raise ValueError(f"[hc_parser] prob_temperature must be positive, got {prob_temperature}")
        if not (isinstance(threads, int) and threads >= 1):
            raise ValueError(f"[hc_parser] threads must be a whole number >= 1, got {threads!r}")
        use_blas(model, cpu_blas)
        self.cpu_blas = cpu_blas
        self.threads = threads
        register_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.decoder = decoder
        self.loss = loss
        self.labeler = labeler
        self.init_from_doc = init_from_doc
        self.doc_arc_bonus = doc_arc_bonus
        self.head_probs = head_probs
        self.prob_temperature = prob_temperature
        self.set_tags = set_tags
        self.projectivize = projectivize
        self.label_freq_cutoff = label_freq_cutoff
        self.cfg: Dict = {"labels": []}
        self._rehearsal_model = None
        self._codes = {attr: CodeTable(attr) for attr in ("DEP", *SPACE_TAGS)}
        self._calibrate_at_score = False  # set by update: the next score (an evaluation in training) refits

    # ----- set-up -------------------------------------------------------------------------
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[List[str]] = None,
        weights_from: Optional[str] = None,
    ) -> None:
        """Labels from ``labels`` or the examples, then the model's shapes from a sample; or,
        with ``weights_from`` (a trained pipeline's directory), that pipeline's ``hc_parser``
        weights and labels, keeping this component's settings (``spacy assemble`` with
        ``[initialize.components.hc_parser]``, as in ``configs/ewt_accurate.cfg``)."""
        if weights_from is not None:
            self.load_trained(weights_from)
            return
        validate_get_examples(get_examples, "GraphParser.initialize")
        if labels is None:
            labels = gold_labels(get_examples, self.projectivize, self.label_freq_cutoff)
        for label in labels:
            self.add_label(label)
        self.model.set_dim("nO", len(self.labels))
        self.cfg["unseen_labels"] = []  # every label gets fresh weights below
        self.cfg["label_classes"] = label_classes(
            ([tok.head.i for tok in eg.reference], [tok.dep_ for tok in eg.reference]) for eg in get_examples())
        self.cfg["tags"] = tag_sets(get_examples, self.model.attrs.get("tag_attrs", ()))
        for attr, tags in self.cfg["tags"].items():
            self.model.set_dim(f"nT_{attr}", max(1, len(tags)))
        docs = [eg.predicted for eg in islice(get_examples(), 10)]
        sample = GraphInput(docs, [sentence_spans(doc, self.max_length) for doc in docs]) if docs else None
        self.model.initialize(X=sample)

    # ----- prediction: spans -> scores -> decode -> labels -> Doc -------------------------
    def predict(self, docs: Iterable[Doc]) -> List[DocParses]:
        """Per doc, its spans (its sentences, or the model's when it has none; chunked to
        ``max_length``), their parses, which spans carry on a sentence, and (``set_tags``) the
        tag ids of its tokens."""
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            return [DocParses([], [], []) for _ in docs]
        with self.model_threads():
            given, existing, keep = self._given_spans(docs)
            scores = self.score_spans(docs, given, keep, self.decoder.factors, tags=self._written_tags())
            existing = existing or [None] * len(scores)
            results = self.decode_spans(scores, existing)
            parses = self.label_spans(scores, results, existing)
            return group_parses(docs, scores, parses)

    def model_threads(self) -> ContextManager[None]:
        """``blas.model_blas`` with the component's ``cpu_blas`` and ``threads``."""
        return model_blas(self.model, self.cpu_blas, self.threads)

    def _given_spans(self, docs: List[Doc]):
        """``reparse.given_spans`` of ``docs``: reparsing with any of ``init_from_doc``,
        ``doc_arc_bonus`` and ``keep_doc_labels``."""
        reparse = bool(self.init_from_doc or self.doc_arc_bonus or self.labeler.keep_doc_labels)
        label_ids = {self.vocab.strings[label]: i for i, label in enumerate(self.labels)} if reparse else None
        return given_spans(docs, self.max_length, label_ids, keep_arcs=bool(self.doc_arc_bonus))

    def score_spans(self, docs: List[Doc], spans: List[Optional[List[Span]]], keep=None, factors=FACTORS,
                    tags: Tuple[str, ...] = ()) -> PredictedScores:
        """The model's scores of the given spans of ``docs`` (None: the model segments that doc)
        as numpy arrays (what ``predict`` decodes; ``keep``, ``factors`` and ``tags`` as in
        ``GraphInput``)."""
        with self.model_threads():
            return self.model.predict(GraphInput(docs, spans, keep, factors, tags=tags)).to_numpy(self.model.ops)

    def decode_spans(self, scores: PredictedScores, existing: List) -> List[DecodeResult]:
        """The decoder's tree of every span of ``scores`` (whitespace tokens ``scores.spaces[i]``
        kept leaves; ``existing[i]``: the doc's own tree when reparsing, else None: its arcs raised by
        ``doc_arc_bonus``, its tree a search's first start with ``init_from_doc``), by the
        decoder's ``decode_batch`` (``graph.decoding``)."""
        arcs, sizes = span_arcs(scores, existing, self.doc_arc_bonus)
        starts = [given[0] if given is not None and self.init_from_doc else None for given in existing]
        return self.decoder.decode_batch(scores, arcs, sizes, starts, self.threads)

    def label_spans(self, scores: PredictedScores, results: List[DecodeResult], existing: List) -> List[SpanParse]:
        """Every span's parse: its tree's label scores (one model call for all trees), the
        labeler's labels, margins and head probabilities, each in one call for the batch."""
        trees = [r.heads for r in results]
        labels, masked = self.label_trees(trees, tree_label_scores(self.model, scores, trees), scores.spaces,
                                          existing)
        calibration = self.calibration if self.head_probs else None
        return span_parses(scores, results, labels, calibration, masked, self.threads)

    def label_trees(self, trees: List[np.ndarray], rows: List[np.ndarray], spaces: List[np.ndarray],
                    existing: Optional[List] = None) -> Tuple[List[np.ndarray], np.ndarray]:
        """The labeler's label ids of every tree (``rows[k]``: tree ``k``'s (n, L) label scores;
        ``spaces[k]``: its whitespace tokens; ``existing[k]``: the doc's own tree, or None), and
        their scores under the labeler's rules (``LabelSet.masked``)."""
        label_set = self.label_set()
        masked = label_set.masked(trees, rows)
        return self.labeler.label_trees(trees, masked, label_set, existing, spaces, self.threads), masked

    def label_set(self) -> LabelSet:
        """The labels as the labeler reads them (classes, unseen labels, whitespace's label)."""
        return LabelSet.of(self.labels, self.cfg.get("label_classes"), self.cfg.get("unseen_labels", ()), JOIN_LABEL)

    def kbest(self, span: Span, k: int) -> List[Tuple[List[int], List[str], float]]:
        """The k best trees of ``span``, a sentence this parser parsed as one tree, each ``(heads,
        labels, score)`` (``graph.extensions.kbest_parses``)."""
        return kbest_parses(self, span, k)

    def score(self, examples: Iterable[Example], **kwargs) -> Dict:
        """The scorer's scores, ``pos_acc``/``tag_acc`` of the tags this parser writes and
        ``hc_head_ece``, the calibration error of the written head probabilities. After an
        ``update`` (an evaluation in training), the calibration is refitted on ``examples``
        (``hc_prob_temperature``: its temperature); other calls (``spacy evaluate``) only score."""
        examples = list(examples)
        scores = super().score(examples, **kwargs)
        for attr in self._written_tags():
            scores.update(Scorer.score_token_attr(examples, attr.lower(), **kwargs))
        scores["hc_head_ece"] = written_head_ece(examples)
        if self._calibrate_at_score and self.head_probs:
            self._calibrate_at_score = False
            fitted = fit_calibration(self.calibration_data(examples))
            if fitted["words"]:
                self.cfg["calibration"] = fitted
                scores["hc_prob_temperature"] = fitted["temperature"]
        return scores

    def calibration_data(self, examples: Iterable[Example], batch_size: int = 256) -> HeldOut:
        """The held-out spans ``fit_calibration`` reads, from parsed ``examples``: per sentence
        span of each predicted doc (as the parser split it) the arc scores the model gives it now
        and the factors of ``calibration_factors``, the written heads and per word whether its
        head is the aligned gold one (``written_heads``); ``batch_size`` docs per model call."""
        factors = calibration_factors(self.decoder)
        examples = [eg for eg in examples if len(eg.predicted)]
        spans = [sentence_spans(eg.predicted, self.max_length) for eg in examples]
        arcs, sib = [], []
        for lo in range(0, len(examples), batch_size):
            docs = [eg.predicted for eg in examples[lo: lo + batch_size]]
            scores = self.score_spans(docs, spans[lo: lo + batch_size], factors=factors)
            arcs.extend(scores.arc(i) for i in range(len(scores)))
            sib.extend([scores.factors_of("sib")] if factors else [])
        return held_out(arcs, *written_heads(examples, spans), joined_factors(sib))

    @property
    def calibration(self) -> Dict:
        """The head-probability calibration in use: ``prob_temperature`` alone where the config
        sets one; else the one fitted in training (``cfg["calibration"]``); else temperature 1."""
        if self.prob_temperature is not None:
            return {"temperature": self.prob_temperature, "knots": None}
        return self.cfg.get("calibration") or {"temperature": 1.0, "knots": None}

    def _written_tags(self) -> Tuple[str, ...]:
        """The tag objectives that ``predict`` scores and ``set_annotations`` writes (with
        ``set_tags``): POS and TAG, where trained; others (``DEP``, each word's own label) only
        train the encoder."""
        if not self.set_tags:
            return ()
        return tuple(attr for attr, tags in self.cfg.get("tags", {}).items() if tags and attr in SPACE_TAGS)

    def set_annotations(self, docs: Iterable[Doc], parses: List[DocParses]) -> None:
        for doc, (spans, doc_parses, joined, tags) in zip(docs, parses):
            label_codes = self._codes["DEP"](doc.vocab, self.cfg["labels"])
            write_parse(doc, spans, [p.heads for p in doc_parses], [label_codes[p.labels] for p in doc_parses], joined,
                        {attr: self._codes[attr](doc.vocab, self.cfg["tags"][attr])[ids] for attr, ids in tags.items()})
            if self.projectivize:
                nonproj.deprojectivize(doc)
            if not spans:
                continue
            remember_parser(doc, self)
            doc._.hc_parse_score = float(sum(p.result.score for p in doc_parses))
            doc.user_data["hc_time_capped"] = sum(bool(p.result.time_capped) for p in doc_parses)
            values = [extension_values(parse) for parse in doc_parses]
            sentences, sentence_items = joined_values(spans, joined, values)
            write_values(doc, spans + sentences, values + sentence_items)

    # ----- training -----------------------------------------------------------------------
    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        examples, losses = self._training_step(examples, losses, "update")
        batch = self.batch_gold(examples)
        if not any(g is not None for g in batch.gold.spans):
            return losses
        set_dropout_rate(self.model, drop)
        self._calibrate_at_score = True
        keep = [None if g is None else g[0] for g in batch.gold.spans]
        docs = [eg.predicted for eg in examples]
        with self.model_threads():
            scores, backprop = self.model.begin_update(GraphInput(docs, batch.spans, keep, self.loss.factors))
            loss, d_scores = self.get_loss(examples, scores, gold=batch.gold)
            backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def rehearse(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
                 losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """An update toward the teacher's predictions on the examples' predicted docs (no gold
        read), so that fine-tuning forgets less: heads, labels and sentence starts, soft targets
        (``graph.rehearsal``). The teacher is the copy of the model ``nlp.resume_training()``
        keeps; without one, the model as it is now (logged: take it before the first update).
        The loss goes under the component's name in ``losses``."""
        examples, losses = self._training_step(examples, losses, "rehearse")
        docs = [eg.predicted for eg in examples]
        if not any(len(doc) for doc in docs):
            return losses
        teacher_model = self._teacher()
        spans = [preset_spans(doc, self.max_length) for doc in docs]
        with self.model_threads():
            teacher = teacher_model.predict(GraphInput(docs, spans, factors=frozenset(), starts=True))
            teacher = teacher.to_numpy(teacher_model.ops)
            heads = teacher_heads(teacher)
            targets = tree_label_scores(teacher_model, teacher, heads)
            set_dropout_rate(self.model, drop)
            scores, backprop = self.model.begin_update(GraphInput(docs, teacher.spans, heads, frozenset()))
            loss, d_scores = rehearsal_loss(scores.to_numpy(self.model.ops), teacher, heads, targets,
                                            self._teacher_labels)
            backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def _teacher_changed(self, model: Optional[Model]) -> None:
        """The labels the teacher knows (those not unseen when it was taken)."""
        unseen = set(self.cfg.get("unseen_labels", ()))
        self._teacher_labels = np.array([i for i, label in enumerate(self.labels) if label not in unseen],
                                        dtype=np.int64)

    def get_loss(self, examples: Iterable[Example], scores: TrainingScores,
                 gold: Optional[GraphGold] = None) -> Tuple[float, TrainingScores]:
        """The loss of the model's ``scores`` of ``examples`` (its training output, on the model's
        device) and their gradients, laid out as the scores (what the model's backprop takes).
        ``gold``: the examples' ``batch_gold(examples).gold`` where the caller has it (the scores'
        spans must be the gold's)."""
        if gold is None:
            gold = self.batch_gold(list(examples)).gold
        return self.loss(scores.to_numpy(self.model.ops), gold)

    def batch_gold(self, examples: List[Example]) -> GoldBatch:
        """The examples' gold (``graph.graph_gold``): labels seen in it stop being unseen, and
        each span that cannot be learned is reported once."""
        batch = batch_gold(examples, self.labels, self.cfg.get("tags", {}), self.max_length, self.projectivize)
        self._mark_seen(batch.labels)
        for skipped in batch.unusable:
            self._report_unusable_gold(skipped.doc, skipped.start, skipped.end, skipped.heads,
                                       whole_sentence=skipped.whole_sentence, problem=skipped.problem)
        return batch

    def _grow_labels(self, label: str) -> None:
        """The model's label outputs grow by one for ``label``, which stays unseen (never
        predicted) until a gold parse in training has it."""
        resize_labels(self.model, len(self.labels) + 1)
        self.cfg.setdefault("unseen_labels", []).append(label)

    def _mark_seen(self, labels: Iterable[str]) -> None:
        unseen = self.cfg.get("unseen_labels")
        if unseen:
            seen = set(labels)
            self.cfg["unseen_labels"] = [label for label in unseen if label not in seen]

    def _after_load(self, where: str) -> None:
        n_out = self.model.get_dim("nO") if self.model.has_dim("nO") else None
        if n_out not in (None, len(self.labels)):
            raise ValueError(f"[hc_parser] model in {where} has {n_out} label outputs but its cfg lists "
                             f"{len(self.labels)} labels: the files do not belong together")
