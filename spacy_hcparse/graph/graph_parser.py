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
from contextlib import contextmanager
from itertools import islice
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.pipeline._parser_internals import nonproj
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model, set_dropout_rate

from ..blas import blas_threads, use_blas
from ..components.annotate import JOIN_LABEL, SPACE_TAGS, CodeTable, write_parse
from ..components.base import ParserPipe
from ..components.projective_gold import lifted_labels
from ..learning.gold import aligned_tags
from ..names import ROOT_LABEL, Span
from ..segment import continues, sentence_spans, span_whitespace
from .calibration import HeldOut, fit_calibration, held_out, span_heads, written_head_ece
from .decoding import MBR, DecodeResult, Eisner
from .extensions import register_extensions, register_parser, write_values
from .graph_batch import decode_eisner_spans, span_arcs, span_blocks, span_parses
from .graph_gold import GoldBatch, batch_gold
from .graph_loss import GraphGold, GraphLoss
from .graph_model import resize_labels, tree_label_scores
from .labeling import Labeler, LabelSet
from .parses import DocParses, SpanParse, doc_sentence_starts, extension_values, joined_values
from .rehearsal import rehearsal_loss, teacher_heads
from .reparse import doc_parses
from .scores import FACTORS, GraphInput, GraphScores, flatten, regroup
from .valency import label_classes


class GraphParser(ParserPipe):
    """Graph-based parser with arc, sibling and grandparent factors and a configurable decoder.

    decoder: a decoder object (``graph.decoding``: ``Eisner.v1``, ``MST.v1``, ``MBR.v1``,
        ``HillClimb.v1``/``.v2``, ``Dual.v1``, ``Certified.v1``); it names the factors it reads, and
        only those are scored.
    loss: the training objective (``spacy_hcparse.GraphLoss.v1``) with its cost-augmented decoder.
    labeler: labels the decoded trees (``graph.labeling.Labeler``; the factory's ``label_valency``
        and ``keep_doc_labels``): ``label_valency`` gives each tree at most one child per head
        from each label class ``initialize`` learns (``cfg["label_classes"]``,
        ``graph.valency``); ``keep_doc_labels`` keeps an earlier parser's label where the decoded
        head is that parser's.
    init_from_doc: when the doc already has a parse (e.g. from ``hc_transition_parser`` earlier in
        the pipeline), hill climbing also considers that tree as its first start. The parse is
        then overwritten.
    doc_arc_bonus: when the doc already has a parse, its arcs stay candidates and their scores
        are raised by this much before decoding (reparsing, Sagae & Lavie 2006). 0 = off.
    head_probs: write ``token._.hc_head_prob`` and ``span._.hc_parse_prob``, the chosen heads'
        marginal probabilities and the tree's probability under the model the decoder maximizes
        (with siblings for Eisner and projective MBR, else the matrix-tree theorem), calibrated:
        at each evaluation in training (``score`` after an ``update``) the calibration is fitted
        on the evaluation's (dev) examples and kept in ``cfg["calibration"]``
        (``spacy_hcparse.graph.calibration``: a temperature, then an isotonic map), so a trained
        pipeline writes calibrated probabilities with no further step;
        ``spacy evaluate`` does not refit. ``prob_temperature`` (null: the fitted calibration):
        a temperature that replaces it, without the map. Also ``token._.hc_dep_prob``.
    cpu_blas: on a CPU, the model's matrix products use numpy's BLAS (``"numpy"``: OpenBLAS in
        numpy's wheels) or thinc's blis (``"blis"``), which is several times slower on some CPUs
        (``spacy_hcparse.blas``); parses agree up to the order of summation.
    threads: the threads the host work (decoding, labels, probabilities; numba, over the spans of
        a batch) and numpy's BLAS may use; 1 runs serially, as spaCy's CPU models do.
    set_tags: write the tags of the model's POS and TAG objectives (``TagScorers.v1``) on the
        tokens that have none, so that a tagger earlier in the pipeline keeps its tags; a ``DEP``
        objective only trains the encoder. Whitespace tokens get ``SPACE`` and ``_SP``.

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
        register_parser(self)

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
        if labels is None and self.projectivize:
            labels = sorted(set(lifted_labels(get_examples(), self.label_freq_cutoff)) | {ROOT_LABEL})
        elif labels is None:
            labels = sorted({tok.dep_ for eg in get_examples() for tok in eg.reference if tok.dep_} | {ROOT_LABEL})
        for label in labels:
            self.add_label(label)
        self.model.set_dim("nO", len(self.labels))
        self.cfg["unseen_labels"] = []  # every label gets fresh weights below
        self.cfg["label_classes"] = label_classes(
            ([tok.head.i for tok in eg.reference], [tok.dep_ for tok in eg.reference]) for eg in get_examples())
        self.cfg["tags"] = self._tag_sets(get_examples)
        for attr, tags in self.cfg["tags"].items():
            self.model.set_dim(f"nT_{attr}", max(1, len(tags)))
        docs = [eg.predicted for eg in islice(get_examples(), 10)]
        sample = GraphInput(docs, [sentence_spans(doc, self.max_length) for doc in docs]) if docs else None
        self.model.initialize(X=sample)

    def _tag_sets(self, get_examples: Callable[[], Iterable[Example]]) -> Dict[str, List[str]]:
        """Per tag objective of the model the tags the references hold. None for ``TAG`` (XPOS)
        where it equals ``POS`` on every token that has one: spaCy's CoNLL-U converter fills a
        treebank's missing XPOS with its UPOS, and a model should then write ``_`` there, not a
        second guess at UPOS."""
        attrs = self.model.attrs.get("tag_attrs", ())
        tags = {attr: sorted({tag for eg in get_examples() for tag in aligned_tags(eg, attr) if tag}) for attr in attrs}
        if tags.get("TAG") and all(tag == pos for eg in get_examples()
                                   for tag, pos in zip(aligned_tags(eg, "TAG"), aligned_tags(eg, "POS")) if tag):
            tags["TAG"] = []
        return tags

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
            spaces = span_whitespace(docs, scores.spans)
            results = self.decode_spans(scores, existing, spaces)
            parses = self.label_spans(scores, results, existing, spaces)
            return self._doc_parses(docs, scores, parses)

    @contextmanager
    def model_threads(self) -> Iterator[None]:
        """Inside: the model's CPU nodes multiply with ``cpu_blas`` (nodes added since, such as a
        resized label scorer, included) and numpy's BLAS takes at most ``threads`` threads."""
        use_blas(self.model, self.cpu_blas)
        with blas_threads(self.threads):
            yield

    def _given_spans(self, docs: List[Doc]):
        """Per doc its spans where given (its sentences; all docs when reparsing), else None (the
        model segments it); when reparsing, per span the doc's own tree (``graph.reparse``) and
        the arcs to keep candidates (with ``doc_arc_bonus``)."""
        reparse = bool(self.init_from_doc or self.doc_arc_bonus or self.labeler.keep_doc_labels)
        given = [sentence_spans(doc, self.max_length) if reparse or doc.has_annotation("SENT_START") else None
                 for doc in docs]
        if not reparse:
            return given, None, None
        label_ids = {self.vocab.strings[label]: i for i, label in enumerate(self.labels)}
        existing = flatten([doc_parses(doc, spans, label_ids) for doc, spans in zip(docs, given)])
        keep = [None if p is None or not self.doc_arc_bonus else p[0] for p in existing]
        return given, existing, keep

    def score_spans(self, docs: List[Doc], spans: List[Optional[List[Span]]], keep=None, factors=FACTORS,
                    tags: Tuple[str, ...] = ()) -> GraphScores:
        """The model's scores of the given spans of ``docs`` (None: the model segments that doc)
        as numpy arrays (what ``predict`` decodes; ``keep``, ``factors`` and ``tags`` as in
        ``GraphInput``)."""
        with self.model_threads():
            return self.model.predict(GraphInput(docs, spans, keep, factors, tags=tags)).to_numpy(self.model.ops)

    def decode_spans(self, scores: GraphScores, existing: List, spaces: List[np.ndarray]) -> List[DecodeResult]:
        """The decoder's tree of every span of ``scores`` (whitespace tokens ``spaces[i]`` kept
        leaves; ``existing[i]``: the doc's own tree when reparsing, else None: its arcs raised by
        ``doc_arc_bonus``, its tree a search's first start with ``init_from_doc``): Eisner's in one
        compiled call for the whole batch (``graph_batch``); a search decoder takes one span at a
        time."""
        arcs, sizes = span_arcs(scores, spaces, existing, self.doc_arc_bonus)
        if isinstance(self.decoder, Eisner):
            return decode_eisner_spans(scores, arcs, sizes, self.threads)
        factors = self.decoder.factors
        return [self.decoder(arc, *scores.cubes(i, factors),
                             start=existing[i][0] if existing[i] is not None and self.init_from_doc else None)
                for i, arc in enumerate(span_blocks(arcs, sizes))]

    def label_spans(self, scores: GraphScores, results: List[DecodeResult], existing: List,
                    spaces: List[np.ndarray]) -> List[SpanParse]:
        """Every span's parse: its tree's label scores (one model call for all trees), the
        labeler's labels, margins and head probabilities, each in one call for the batch."""
        trees = [r.heads for r in results]
        labels, masked = self.label_trees(trees, self.label_scores(scores, trees), spaces, existing)
        calibration = self.calibration if self.head_probs else None
        return span_parses(scores, results, labels, calibration, masked, spaces, self.threads)

    def label_trees(self, trees: List[np.ndarray], rows: List[np.ndarray], spaces: List[np.ndarray],
                    existing: Optional[List] = None) -> Tuple[List[np.ndarray], np.ndarray]:
        """The labeler's label ids of every tree (``rows[k]``: tree ``k``'s (n, L) label scores;
        ``spaces[k]``: its whitespace tokens; ``existing[k]``: the doc's own tree, or None), and
        their scores under the labeler's rules (``LabelSet.masked``)."""
        label_set = self.label_set()
        masked = label_set.masked(trees, rows)
        return self.labeler.label_trees(trees, masked, label_set, existing, spaces, self.threads), masked

    def label_scores(self, scores: GraphScores, trees: List[np.ndarray]) -> List[np.ndarray]:
        """Per tree ((n+1,) heads of span 0, 1, ... of ``scores``) its (n, L) label scores."""
        return tree_label_scores(self.model, scores, trees)

    def label_set(self) -> LabelSet:
        """The labels as the labeler reads them (classes, unseen labels, whitespace's label)."""
        return LabelSet.of(self.labels, self.cfg.get("label_classes"), self.cfg.get("unseen_labels", ()), JOIN_LABEL)

    def best_labels(self, heads: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """The labeler's label ids (n,) of one tree ``heads`` from its (n, L) ``scores`` (a batch
        of one, no whitespace tokens, no doc labels)."""
        return self.label_trees([heads], [scores], [np.zeros(len(heads) - 1, dtype=bool)])[0][0]

    def _doc_parses(self, docs: List[Doc], scores: GraphScores, parses) -> List[DocParses]:
        """``parses`` (one per span of ``scores``) grouped per doc, with where its sentences begin:
        at every span of a doc the model segmented (a sentence it found longer than
        ``max_length``, such as a long text without punctuation, becomes several), else at the
        doc's own sentences (a longer one stays one sentence of several spans)."""
        out = []
        for d, (doc, spans, sentences, doc_parses_) in enumerate(
                zip(docs, scores.spans, scores.sentences, regroup(parses, scores.spans))):
            begins = [start for start, _ in spans] if sentences is not None else doc_sentence_starts(doc)
            tags = {attr: np.asarray(logits[d]).argmax(axis=1) for attr, logits in scores.tags.items()}
            out.append(DocParses(spans, doc_parses_, continues(spans, begins), tags))
        return out

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
        span of each predicted doc (``segment.sentence_spans``, as the parser split it) the
        first-order arc scores the model gives it now, the written heads and per word whether its
        head is the aligned gold one (``calibration.span_heads``), and the sibling factors where
        the decoder maximizes a projective model with siblings (``Eisner.v1``, projective
        ``MBR.v1``); ``batch_size`` docs per model call."""
        decoder = self.decoder
        siblings = "sib" in decoder.factors and (isinstance(decoder, Eisner) or
                                                 (isinstance(decoder, MBR) and decoder.projective))
        factors = frozenset({"sib"}) if siblings else frozenset()
        examples = [eg for eg in examples if len(eg.predicted)]
        arcs, chosen, correct, sib = [], [], [], []
        for lo in range(0, len(examples), batch_size):
            batch = examples[lo: lo + batch_size]
            spans = [sentence_spans(eg.predicted, self.max_length) for eg in batch]
            scores = self.score_spans([eg.predicted for eg in batch], spans, factors=factors)
            arcs.extend(scores.arc(i) for i in range(len(scores)))
            if siblings:
                sib.append(scores.factors_of("sib"))
            for eg, doc_spans in zip(batch, spans):
                gold, _ = eg.get_aligned_parse(projectivize=False)
                written = [tok.head.i for tok in eg.predicted]
                for start, end in doc_spans:
                    heads, right = span_heads(written, gold, start, end)
                    chosen.append(heads)
                    correct.append(right)
        factors_of = None
        if sib:
            factors_of = tuple(np.concatenate([getattr(f, name) for f in sib]) for name in ("counts", "triples", "values"))
        return held_out(arcs, chosen, correct, factors_of)

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
        spans = [sentence_spans(doc, self.max_length) if doc.has_annotation("SENT_START") else None for doc in docs]
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

    def get_loss(self, examples: Iterable[Example], scores: GraphScores,
                 gold: Optional[GraphGold] = None) -> Tuple[float, GraphScores]:
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
