"""``hc_parser``: the graph-based higher-order dependency parser as a spaCy component.

Data flows one way: Docs -> spans (``segment.sentence_spans``, once per batch) -> the model
(``GraphInput`` -> ``GraphScores``: arcs, candidates, factor and label scores) -> numpy at the
decoder boundary -> the configured decoder (``spacy_hcparse.graph.decoding``) per span -> heads and
labels -> Docs. ``predict`` returns arrays and leaves Docs alone; ``set_annotations`` writes them.
Training: the model's scores -> ``GraphLoss`` (``learning.graph_loss``) -> their gradients -> the
model's backprop.
"""
import logging
from copy import deepcopy
from itertools import islice
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, set_dropout_rate

from ..decoders import MAX_WORDS, constrained_labels, tree_probabilities
from ..graph.decoding import DecodeResult, HillClimb
from ..graph.scores import FACTORS, GraphInput, GraphScores, Span, flatten, regroup
from ..learning.graph_loss import GraphGold, GraphLoss, SpanGold
from ..learning.rehearsal import rehearsal_loss, teacher_heads
from ..models.graph_parser import resize_labels, tree_label_scores
from ..names import ROOT_LABEL
from ..segment import continues, sentence_spans, span_whitespace
from ..graph.valency import label_classes
from .annotate import JOIN_LABEL, SPACE_TAGS, CodeTable, write_tags, write_trees
from .base import (ParserPipe, logger, aligned_gold, aligned_tags, partial_problem, partial_span_tree, reference_spans,
                   span_tree)
from .extensions import register_extensions, write_values

DEFAULT_CONFIG = """
[model]
@architectures = "spacy_hcparse.GraphParserModel.v8"
max_length = 100
top_k = 6
higher_order_max_length = 100

[model.context]
@architectures = "spacy_hcparse.BiLSTMContext.v1"
width = 128
depth = 1
dropout = 0.1

[model.arc_scorer]
@architectures = "spacy_hcparse.BiaffineArcScorer.v1"
width = 192
dropout = 0.1

[model.sibling_scorer]
@architectures = "spacy_hcparse.SiblingScorer.v1"
rank = 48
dropout = 0.1

[model.grand_scorer]
@architectures = "spacy_hcparse.GrandparentScorer.v1"
rank = 48
dropout = 0.1

[model.label_scorer]
@architectures = "spacy_hcparse.LowRankLabelScorer.v1"
width = 96
rank = 128
dropout = 0.1

[model.start_scorer]
@architectures = "spacy_hcparse.SentenceStartScorer.v1"
width = 64
dropout = 0.1

[model.tags]
@architectures = "spacy_hcparse.TagScorers.v1"
attrs = ["POS"]
from_context = true

[model.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 2
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true

[decoder]
@misc = "spacy_hcparse.Eisner.v1"

[loss]
@misc = "spacy_hcparse.GraphLoss.v1"
hinge_weight = 1.0
xent_weight = 1.0
label_weight = 1.0
per_word = false
start_weight = 1.0
tag_weight = 1.0

[loss.decoder]
@misc = "spacy_hcparse.HillClimb.v1"
max_restarts = 6
min_restarts = 2
converge = 2
uniform_share = 0.0
time_limit = 0.5
seed = 0
"""


class SpanParse(NamedTuple):
    """The parse of one span: heads (n+1,), label ids (n,), what the decoder knows, the
    first-order margin of each word's head (see ``_margins``), the marginal probability of each
    word's head and the tree's log probability (None without ``head_probs``)."""

    heads: np.ndarray
    labels: np.ndarray
    result: DecodeResult
    margins: np.ndarray
    head_probs: Optional[np.ndarray] = None
    log_prob: Optional[float] = None


class DocParses(NamedTuple):
    """A doc's spans, their parses, which spans carry on the sentence of the span before them,
    and per tag attribute the tag ids of its tokens (what ``predict`` returns per doc)."""

    spans: List[Span]
    parses: List[SpanParse]
    continues: List[bool]
    tags: Dict[str, np.ndarray] = {}


@Language.factory(
    "hc_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents", "token.pos", "token.tag"],
    default_config={**Config().from_str(DEFAULT_CONFIG), "init_from_doc": False, "doc_arc_bonus": 0.0,
                    "keep_doc_labels": False, "label_valency": True, "head_probs": True, "prob_temperature": 1.0,
                    "set_tags": True,
                    "scorer": {"@scorers": "spacy_hcparse.parser_scorer.v1"}},
    default_score_weights={"dep_uas": 0.5, "dep_las": 0.5, "dep_las_per_type": None, "sents_p": None,
                           "sents_r": None, "sents_f": 0.0, "ud_uas": None, "ud_las": None,
                           "ud_las_per_type": None},
)
def make_graph_parser(
    nlp: Language,
    name: str,
    model: Model,
    decoder: Callable,
    loss: GraphLoss,
    init_from_doc: bool,
    doc_arc_bonus: float,
    keep_doc_labels: bool,
    label_valency: bool,
    head_probs: bool,
    prob_temperature: float,
    set_tags: bool,
    scorer: Optional[Callable],
) -> "GraphParser":
    return GraphParser(nlp.vocab, model, name, decoder=decoder, loss=loss, init_from_doc=init_from_doc,
                       doc_arc_bonus=doc_arc_bonus, keep_doc_labels=keep_doc_labels, label_valency=label_valency,
                       head_probs=head_probs,
                       prob_temperature=prob_temperature, set_tags=set_tags, scorer=scorer)


class GraphParser(ParserPipe):
    """Graph-based parser with arc, sibling and grandparent factors and a configurable decoder.

    decoder: a decoder object (``spacy_hcparse.graph.decoding``: ``HillClimb.v1``, ``Dual.v1``,
        ``MST.v1``, ``Eisner.v1``); it names the factors it reads, and only those are scored.
    loss: the training objective (``spacy_hcparse.GraphLoss.v1``) with its cost-augmented decoder.
    init_from_doc: when the doc already has a parse (e.g. from ``hc_transition_parser`` earlier in
        the pipeline), hill climbing also considers that tree as its first start. The parse is
        then overwritten.
    doc_arc_bonus: when the doc already has a parse, its arcs stay candidates and their scores
        are raised by this much before decoding (reparsing, Sagae & Lavie 2006): where the two
        parsers disagree the decoder weighs the other parser's choice against this one's score
        margin. 0 = off.
    keep_doc_labels: where the decoded head is the doc's existing head, keep the doc's label
        (if this parser knows it): for an earlier parser whose labels are the better ones.
    label_valency: label each tree with at most one child per head from each of the label
        classes that ``initialize`` learns from the training trees (``cfg["label_classes"]``,
        ``valency.label_classes``: labels no training head has twice, such as ``nsubj`` and
        ``obj``, and one class of the subject labels), the best labels under that constraint
        (``decoders.constrained_labels``); False: each word's best label on its own.
    head_probs: write ``token._.hc_head_prob`` and ``span._.hc_parse_prob``, the chosen heads'
        marginal probabilities and the tree's probability under the first-order model
        (matrix-tree theorem over the arc scores divided by ``prob_temperature``, which
        calibration fits on held-out data: ``spacy_hcparse.calibration``).
    set_tags: write the tags of the model's POS and TAG objectives (``tag_attrs`` of
        ``GraphParserModel.v4``: ``token.pos_``, ``token.tag_``; a ``DEP`` objective only trains
        the encoder) on the tokens that have none, so that a tagger earlier in the pipeline keeps
        its tags. Whitespace tokens get ``SPACE`` and ``_SP``, as spaCy's taggers give them.

    The saved ``cfg`` holds the labels (and the tags of the tag objectives) only: the
    settings are the pipeline config's, so they can be changed at load time without retraining.

    ``add_label`` works on a trained parser too (spaCy's parser does the same): the model's
    label outputs grow (``models.graph_parser.resize_labels``), the existing labels keep their
    weights and the new one starts at zero. Until training has seen it in a gold parse, a label
    added that way is never predicted (``cfg["unseen_labels"]``, as spaCy's parser masks its
    unseen classes): its zero score would otherwise beat the trained labels wherever all of
    theirs are negative, changing the parses of a model that has not learned anything new.

    ``rehearse`` (after ``nlp.resume_training()``) keeps a fine-tuned parser close to the model
    it started from on unlabelled text. Training reads partial gold: heads and labels missing in
    the reference (``Doc(heads=[..., None, ...], deps=[..., None, ...])``) are left out of the
    loss, and the rest of the sentence is learned.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "hc_parser",
        *,
        decoder: Optional[Callable] = None,
        loss: Optional[GraphLoss] = None,
        init_from_doc: bool = False,
        doc_arc_bonus: float = 0.0,
        keep_doc_labels: bool = False,
        label_valency: bool = True,
        head_probs: bool = True,
        prob_temperature: float = 1.0,
        set_tags: bool = True,
        scorer: Optional[Callable] = None,
    ) -> None:
        if not prob_temperature > 0:
            raise ValueError(f"[hc_parser] prob_temperature must be positive, got {prob_temperature}")
        register_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.decoder = decoder if decoder is not None else HillClimb()
        self.loss = loss if loss is not None else GraphLoss(HillClimb(max_restarts=6, min_restarts=2, converge=2))
        self.init_from_doc = init_from_doc
        self.doc_arc_bonus = doc_arc_bonus
        self.keep_doc_labels = keep_doc_labels
        self.label_valency = label_valency
        self.head_probs = head_probs
        self.prob_temperature = prob_temperature
        self.set_tags = set_tags
        self.cfg: Dict = {"labels": []}
        self._rehearsal_model = None
        self._codes = {attr: CodeTable(attr) for attr in ("DEP", *SPACE_TAGS)}

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
            labels = sorted(
                {tok.dep_ for eg in get_examples() for tok in eg.reference if tok.dep_} | {ROOT_LABEL}
            )
        for label in labels:
            self.add_label(label)
        self.model.set_dim("nO", len(self.labels))
        self.cfg["unseen_labels"] = []  # every label gets fresh weights below
        self.cfg["label_classes"] = label_classes(
            ([tok.head.i for tok in eg.reference], [tok.dep_ for tok in eg.reference]) for eg in get_examples())
        self.cfg["tags"] = {attr: sorted({tag for eg in get_examples() for tag in aligned_tags(eg, attr) if tag})
                            for attr in self.model.attrs.get("tag_attrs", ())}
        for attr, tags in self.cfg["tags"].items():
            self.model.set_dim(f"nT_{attr}", max(1, len(tags)))
        docs = [eg.predicted for eg in islice(get_examples(), 10)]
        sample = GraphInput(docs, [sentence_spans(doc, self.max_length) for doc in docs]) if docs else None
        self.model.initialize(X=sample)

    # ----- prediction ---------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[DocParses]:
        """Per doc, its spans (its sentences, or the model's when it has none; chunked to
        ``max_length``), their parses, which spans carry on a sentence, and (``set_tags``) the
        tag ids of its tokens."""
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            return [DocParses([], [], []) for _ in docs]
        reparse = bool(self.init_from_doc or self.doc_arc_bonus or self.keep_doc_labels)
        given = [sentence_spans(doc, self.max_length) if reparse or doc.has_annotation("SENT_START") else None
                 for doc in docs]
        existing = flatten([self._doc_parses(doc, spans) for doc, spans in zip(docs, given)]) if reparse else None
        keep = [None if p is None or not self.doc_arc_bonus else p[0] for p in existing] if reparse else None
        scores = self.score_spans(docs, given, keep, self.decoder.factors, tags=self._written_tags())
        existing = existing or [None] * len(scores)
        spaces = span_whitespace(docs, scores.spans)
        results = [self._decode_span(scores, i, existing[i], spaces[i]) for i in range(len(scores))]
        label_scores = tree_label_scores(self.model, scores, [result.heads for result in results])
        parses = [self._span_parse(scores, i, result, rows, existing[i], spaces[i])
                  for i, (result, rows) in enumerate(zip(results, label_scores))]
        out = []
        for d, (doc, spans, sentences, doc_parses) in enumerate(
                zip(docs, scores.spans, scores.sentences, regroup(parses, scores.spans))):
            begins = sentences if sentences is not None else _sentence_starts(doc)
            tags = {attr: np.asarray(logits[d]).argmax(axis=1) for attr, logits in scores.tags.items()}
            out.append(DocParses(spans, doc_parses, continues(spans, begins), tags))
        return out

    def score_spans(self, docs: List[Doc], spans: List[Optional[List[Span]]], keep=None, factors=FACTORS,
                    tags: Tuple[str, ...] = ()) -> GraphScores:
        """The model's scores of the given spans of ``docs`` (None: the model segments that doc)
        as numpy arrays (what ``predict`` decodes; ``keep``, ``factors`` and ``tags`` as in
        ``GraphInput``)."""
        return self.model.predict(GraphInput(docs, spans, keep, factors, tags=tags)).to_numpy(self.model.ops)

    def label_scores(self, scores: GraphScores, trees: List[np.ndarray]) -> List[np.ndarray]:
        """Per tree ((n+1,) heads of span 0, 1, ... of ``scores``) its (n, L) label scores."""
        return tree_label_scores(self.model, scores, trees)

    def score(self, examples: Iterable[Example], **kwargs) -> Dict:
        """The scorer's scores, and ``pos_acc``/``tag_acc`` of the tags this parser writes."""
        scores = super().score(examples, **kwargs)
        for attr in self._written_tags():
            scores.update(Scorer.score_token_attr(examples, attr.lower(), **kwargs))
        return scores

    def _written_tags(self) -> Tuple[str, ...]:
        """The tag objectives that ``predict`` scores and ``set_annotations`` writes (with
        ``set_tags``): POS and TAG, where trained; others (``DEP``, each word's own label) only
        train the encoder."""
        if not self.set_tags:
            return ()
        return tuple(attr for attr, tags in self.cfg.get("tags", {}).items() if tags and attr in SPACE_TAGS)

    def _decode_span(self, scores: GraphScores, i: int, existing, space: np.ndarray) -> DecodeResult:
        """The decoder's tree of span ``i`` (its labels come after, for all spans at once), with
        the whitespace tokens ``space`` (bool per word, ``segment.leaf_whitespace``) leaves."""
        arc = whitespace_leaves(scores.pruned_arc(i), space)
        if len(arc) > MAX_WORDS + 1:  # cannot happen with sentence_spans; guards direct calls
            raise ValueError(f"[hc_parser] span of {len(arc) - 1} words exceeds {MAX_WORDS}")
        if existing is not None and self.doc_arc_bonus:
            arc = _with_bonus(arc, existing[0], self.doc_arc_bonus)
        sib, grand = scores.cubes(i, self.decoder.factors)
        start = existing[0] if existing is not None and self.init_from_doc else None
        return self.decoder(arc, sib, grand, start=start)

    def _span_parse(self, scores: GraphScores, i: int, result: DecodeResult, label_scores: np.ndarray,
                    existing, space: np.ndarray) -> SpanParse:
        """Span ``i``'s parse: the decoded tree, its labels (from ``label_scores``, (n, L), the
        tree's arcs; whitespace tokens attached as ``dep`` where the parser knows it), margins and
        head probabilities."""
        labels = self.best_labels(result.heads, label_scores, existing)
        if space.any() and JOIN_LABEL in self.labels:
            labels[space] = self.labels.index(JOIN_LABEL)
        full = scores.arc(i)
        parse = SpanParse(result.heads, labels, result, _margins(full, result.heads))
        if not self.head_probs or len(full) < 2:
            return parse
        scaled = full / self.prob_temperature
        probs, log_prob = tree_probabilities(result.heads, scaled)
        return parse._replace(head_probs=probs, log_prob=log_prob)

    def set_annotations(self, docs: Iterable[Doc], parses: List[DocParses]) -> None:
        for doc, (spans, doc_parses, joined, tags) in zip(docs, parses):
            write_tags(doc, {attr: self._codes[attr](doc.vocab, self.cfg["tags"][attr])[ids] for attr, ids in tags.items()})
            if not spans:
                continue
            label_codes = self._codes["DEP"](doc.vocab, self.cfg["labels"])
            write_trees(doc, spans, [p.heads for p in doc_parses], [label_codes[p.labels] for p in doc_parses], joined)
            doc._.hc_parse_score = float(sum(p.result.score for p in doc_parses))
            doc.user_data["hc_time_capped"] = sum(bool(p.result.time_capped) for p in doc_parses)
            write_values(doc, spans, [_extension_values(parse) for parse in doc_parses])

    # ----- training -----------------------------------------------------------------------
    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "GraphParser.update")
        docs = [eg.predicted for eg in examples]
        spans, gold = self._gold(examples)
        if not any(g is not None for g in gold.spans):
            return losses
        set_dropout_rate(self.model, drop)
        keep = [None if g is None else g[0] for g in gold.spans]
        scores, backprop = self.model.begin_update(GraphInput(docs, spans, keep, self.loss.factors))
        loss, d_scores = self.loss(scores.to_numpy(self.model.ops), gold)
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def rehearse(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """An update toward the teacher's predictions on the examples' predicted docs (no gold
        read), so that fine-tuning forgets less: heads, labels and sentence starts, soft targets
        (``learning.rehearsal``). The teacher is the copy of the model ``nlp.resume_training()``
        keeps; without one, the model as it is now (logged: take it before the first update).
        The loss goes under the component's name in ``losses``."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "GraphParser.rehearse")
        docs = [eg.predicted for eg in examples]
        if not any(len(doc) for doc in docs):
            return losses
        if self._rehearsal_model is None:
            logger.warning("[%s] rehearse: no teacher yet, the model as it is now becomes it (call "
                           "nlp.resume_training() before updating, so that the teacher is the trained model)",
                           self.name)
            self._rehearsal_model = deepcopy(self.model)
        spans = [sentence_spans(doc, self.max_length) if doc.has_annotation("SENT_START") else None for doc in docs]
        teacher = self._rehearsal_model.predict(GraphInput(docs, spans, factors=frozenset(), starts=True))
        teacher = teacher.to_numpy(self._rehearsal_model.ops)
        heads = teacher_heads(teacher)
        targets = tree_label_scores(self._rehearsal_model, teacher, heads)
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update(GraphInput(docs, teacher.spans, heads, frozenset()))
        loss, d_scores = rehearsal_loss(scores.to_numpy(self.model.ops), teacher, heads, targets, self._teacher_labels)
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    @property
    def _rehearsal_model(self) -> Optional[Model]:
        """The teacher of ``rehearse``: a frozen copy of the model (spaCy's
        ``Language.resume_training`` sets it on every component that has this attribute)."""
        return self.__dict__.get("_teacher")

    @_rehearsal_model.setter
    def _rehearsal_model(self, model: Optional[Model]) -> None:
        self._teacher = model
        unseen = set(self.cfg.get("unseen_labels", ()))  # the teacher never learned those
        known = [i for i, label in enumerate(self.labels) if label not in unseen]
        self._teacher_labels = np.array(known, dtype=np.int64)

    def get_loss(self, examples: Iterable[Example], scores) -> Tuple[float, object]:
        """Not used: ``update`` computes the loss with the decoder in the loop."""
        raise NotImplementedError("hc_parser computes its loss inside update()")

    def _gold(self, examples: List[Example]) -> Tuple[List[List[Span]], GraphGold]:
        """Per doc its spans (the reference's sentences, chunked); the gold of the batch: per span
        (heads (n+1,), label ids (n,), ``-1`` unknown) or None when the gold there is not part of
        one tree; per doc the sentence starts and the tags of the model's tag objectives."""
        label_ids = {label: i for i, label in enumerate(self.labels)}
        tag_ids = {attr: {tag: i for i, tag in enumerate(tags)} for attr, tags in self.cfg.get("tags", {}).items()}
        spans, span_golds, starts, tags = [], [], [], {attr: [] for attr in tag_ids}
        for eg in examples:
            heads, deps, _ = aligned_gold(eg, projectivize=False)
            self._mark_seen(deps)
            absolute = known_heads(heads, deps)
            doc_spans, doc_starts = reference_spans(eg, self.max_length, absolute)
            for (start, end), chunk in zip(doc_spans, _chunks(doc_spans, doc_starts)):
                gold = _span_gold(absolute, deps, start, end, label_ids, chunk)
                if gold is None:
                    partial = (absolute[start:end] < 0).any()
                    self._report_unusable_gold(eg.predicted, start, end, heads, whole_sentence=not chunk,
                                               problem=_partial_gold_problem(absolute, start, end) if partial else None)
                span_golds.append(gold)
            spans.append(doc_spans)
            starts.append(doc_starts)
            for attr, ids in tag_ids.items():
                tags[attr].append(np.array([ids.get(t, -1) for t in aligned_tags(eg, attr)], dtype=np.int64))
        return spans, GraphGold(span_golds, starts, tags)

    # ----- helpers --------------------------------------------------------------------------
    def _doc_parses(self, doc: Doc, spans: List[Span]) -> List[Optional[SpanGold]]:
        """The doc's existing parse per span, as span-local heads (n+1,) and label ids (n,) in
        this parser's label set (``-1`` for labels it does not know), where the reparsing
        settings use it and the doc has one tree there; None elsewhere."""
        if not (self.init_from_doc or self.doc_arc_bonus or self.keep_doc_labels) or not doc.has_annotation("DEP"):
            return [None] * len(spans)
        label_ids = {self.vocab.strings[label]: i for i, label in enumerate(self.labels)}
        heads = np.arange(len(doc)) + doc.to_array(HEAD).astype(np.int64)  # offsets, stored as uint64
        labels = np.array([label_ids.get(h, -1) for h in doc.to_array(DEP).tolist()], dtype=np.int64)
        trees = [span_tree(heads, start, end) for start, end in spans]
        return [None if tree is None else (tree, labels[start:end]) for tree, (start, end) in zip(trees, spans)]

    def best_labels(self, heads: np.ndarray, scores: np.ndarray, doc_parse=None) -> np.ndarray:
        """Best labels of the tree ``heads`` ((n+1,), root at 0) from ``scores`` ((n, L), row
        ``m - 1`` for word ``m``): ``ROOT`` for the root's child, any other label elsewhere, with
        ``label_valency`` at most one child per head from each label class; with
        ``keep_doc_labels``, the doc's own label where ``doc_parse`` (span-local heads and
        label ids) has the same head and a label this parser knows."""
        scores = np.array(scores, dtype=np.float64)
        labels = self.labels
        for label in self.cfg.get("unseen_labels", ()):
            scores[:, labels.index(label)] = -np.inf
        root = labels.index(ROOT_LABEL) if ROOT_LABEL in labels else -1
        if root >= 0:
            is_root = heads[1:] == 0
            scores[~is_root, root] = -np.inf
            scores[is_root, :] = -np.inf
            scores[is_root, root] = 0.0
        classes = self.cfg.get("label_classes") if self.label_valency else None
        best = constrained_labels(heads, scores, self._label_class(classes)) if classes else scores.argmax(axis=1)
        if doc_parse is not None and self.keep_doc_labels:
            doc_heads, doc_labels = doc_parse
            keep = (doc_heads[1:] == heads[1:]) & (doc_labels >= 0) & ((doc_labels == root) == (heads[1:] == 0))
            best[keep] = doc_labels[keep]
        return best

    def _label_class(self, classes: List[List[str]]) -> np.ndarray:
        """The class of each label (L,), ``-1`` where unconstrained."""
        class_of = {label: k for k, members in enumerate(classes) for label in members}
        return np.array([class_of.get(label, -1) for label in self.labels], dtype=np.int64)

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
        if self.model.has_dim("nO") and self.model.get_dim("nO") not in (None, len(self.labels)):
            raise ValueError(
                f"[hc_parser] model in {where} has {self.model.get_dim('nO')} label outputs but its "
                f"cfg lists {len(self.labels)} labels: the files do not belong together"
            )


def _chunks(spans: List[Span], starts: np.ndarray) -> List[bool]:
    """Per span, whether it is a chunk of a longer sentence rather than a whole one (``starts``:
    the gold sentence starts, 1 where one begins)."""
    begins = starts == 1
    return [not (begins[start] or start == 0) or (end < len(begins) and not begins[end]) for start, end in spans]


def known_heads(heads: List[Optional[int]], deps: List[Optional[str]]) -> np.ndarray:
    """Absolute gold heads (n,) from ``aligned_gold``'s, ``-1`` where unknown: a token that does
    not align (None), or one whose head the reference leaves missing (spaCy stores a missing
    head as the token heading itself with no label, ``Token.has_head()`` False)."""
    return np.array([-1 if h is None or (h == i and not d) else h for i, (h, d) in enumerate(zip(heads, deps))],
                    dtype=np.int64)


def _partial_gold_problem(heads: np.ndarray, start: int, end: int) -> Tuple[str, int]:
    """Why the known arcs of ``heads[start:end]`` (absolute, ``-1`` unknown) are not part of one
    tree, and the logging level (a defect of the gold: a warning)."""
    local = np.full(end - start + 1, -1, dtype=np.int64)
    span = heads[start:end]
    inside = (span >= start) & (span < end)
    local[1:][inside] = span[inside] - start + 1
    local[1:][span == np.arange(start, end)] = 0
    outside = np.flatnonzero(~inside & (span >= 0))
    if len(outside):
        return f"the gold head of token {start + outside[0]} is outside its sentence", logging.WARNING
    return f"gold heads are not one tree: {partial_problem(local)}", logging.WARNING


def _span_gold(heads: np.ndarray, deps, start, end, label_ids, chunk: bool) -> Optional[SpanGold]:
    """Span-local gold (heads (n+1,), label ids (n,)) from absolute ``heads`` (``-1`` unknown;
    heads outside a chunk become unknown), or None if the known arcs cannot be one tree."""
    local = partial_span_tree(heads, start, end, chunk)
    if local is None:
        return None
    labels = np.array([label_ids.get(d, -1) for d in deps[start:end]], dtype=np.int64)
    labels[local[1:] < 0] = -1
    return local, labels


def _extension_values(parse: SpanParse) -> Tuple[Dict, Dict]:
    """A span's ``hc_`` extension values and its tokens' (see ``extensions.py``)."""
    result = parse.result
    bound = None if np.isnan(result.upper_bound) else float(result.upper_bound)
    score = float(result.score)
    span = {"hc_score": score, "hc_certified": bool(result.certified), "hc_upper_bound": bound,
            "hc_gap": 0.0 if result.certified else (None if bound is None else max(0.0, bound - score))}
    tokens = {"hc_head_margin": np.asarray(parse.margins, dtype=float).tolist()}
    if parse.head_probs is not None:
        span["hc_parse_prob"] = float(np.exp(parse.log_prob))
        tokens["hc_head_prob"] = parse.head_probs.tolist()
    return span, tokens


def whitespace_leaves(arc: np.ndarray, space: np.ndarray) -> np.ndarray:
    """Arc scores ``arc`` ((n+1, n+1), ``[h, m]``, row 0 the root) constrained so that every
    marked word (``space``, (n,) bool: the span's ``segment.leaf_whitespace``) is a leaf whose head
    is the nearest unmarked word before it (after it, at the span's start), as spaCy's parser
    attaches whitespace; the arc keeps its score (0 where pruned). Unchanged when nothing or
    everything is marked. The forced arcs cover only whitespace, so the constraint keeps trees projective."""
    if not space.any() or space.all():
        return arc
    arc = arc.copy()
    words = np.flatnonzero(~space) + 1
    blanks = np.flatnonzero(space) + 1
    for m in blanks.tolist():
        before = words[words < m]
        head = int(before[-1]) if len(before) else int(words[0])
        score = arc[head, m]
        arc[:, m] = -np.inf
        arc[head, m] = score if np.isfinite(score) else 0.0
    arc[blanks, :] = -np.inf
    return arc


def _sentence_starts(doc: Doc) -> List[int]:
    """Token offsets where the doc's preset sentences begin (the whole doc without any)."""
    if len(doc) == 0:
        return []
    return [sent.start for sent in doc.sents] if doc.has_annotation("SENT_START") else [0]


def _margins(arc: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """First-order score gap between each word's chosen head and its best other head."""
    n = len(heads) - 1
    if n == 0:
        return np.zeros(0)
    scores = arc[:, 1:].copy()
    np.fill_diagonal(scores[1:], -np.inf)
    words = np.arange(n)
    chosen = scores[heads[1:], words].copy()
    scores[heads[1:], words] = -np.inf
    best_other = scores.max(axis=0)
    return np.where(np.isfinite(best_other), chosen - best_other, 0.0)


def _with_bonus(pruned: np.ndarray, doc_heads: np.ndarray, bonus: float) -> np.ndarray:
    """``pruned`` with ``bonus`` added to each of the doc's arcs (``doc_heads``: (n+1,), ``-1`` at
    the root row; they are candidates, so their scores are the model's)."""
    out = pruned.copy()
    words = np.arange(1, len(doc_heads))
    out[doc_heads[1:], words] += bonus
    return out
