"""``hc_parser``: the graph-based higher-order dependency parser as a spaCy component.

Data flows one way: Doc -> encoder blocks (one per span, row 0 the root) -> arc scores ->
first-order pruning -> sibling and grandparent scores on the kept triples -> decoder -> heads ->
label scores on the chosen arcs -> Doc. ``predict`` returns arrays and leaves Docs alone;
``set_annotations`` writes them.
"""
from itertools import islice
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, set_dropout_rate

from .. import factors
from ..decoders import MAX_WORDS, tree_score
from ..decoders.dispatch import DECODERS, decode
from ..learning.losses import head_xent, label_xent
from ..segment import sentence_spans
from .annotate import write_trees
from .base import ParserPipe, aligned_gold, copy_gold_sentences, index_groups, span_tree
from .extensions import MARGINS_KEY, register_extensions

ROOT_LABEL = "ROOT"
WORDS_PER_GROUP = 1000  # words whose sibling/grandparent factors are scored in one call at prediction

DEFAULT_MODEL = """
[model]
@architectures = "spacy_hcparse.GraphParserModel.v2"
lstm_width = 0
lstm_depth = 1
max_length = 100
arc_width = 256
label_width = 96
label_rank = 128
sibling_rank = 64
grand_rank = 64
dropout = 0.25

[model.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 4
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true
"""


class SpanParse(NamedTuple):
    """The parse of one span: heads (n+1,), label ids (n,), and what the decoder knows."""

    heads: np.ndarray
    labels: np.ndarray
    score: float
    certified: bool
    upper_bound: float
    margins: np.ndarray
    time_capped: bool = False


@Language.factory(
    "hc_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"],
    default_config={
        "model": Config().from_str(DEFAULT_MODEL)["model"],
        "decoder": "hill_climb",
        "train_decoder": "hill_climb",
        "top_k": 6,
        "higher_order_max_length": 100,
        "hinge_weight": 1.0,
        "xent_weight": 1.0,
        "label_weight": 1.0,
        "time_limit": 0.5,
        "init_from_doc": False,
        "doc_arc_bonus": 0.0,
        "keep_doc_labels": False,
        "hill_climb_options": {"max_restarts": 50, "min_restarts": 5, "converge": 3, "uniform_share": 0.0},
        "train_hill_climb_options": {"max_restarts": 6, "min_restarts": 2, "converge": 2, "uniform_share": 0.0},
        "dual_options": {"max_iter": 200},
        "seed": 0,
        "scorer": {"@scorers": "spacy.parser_scorer.v1"},
    },
    default_score_weights={
        "dep_uas": 0.5,
        "dep_las": 0.5,
        "dep_las_per_type": None,
        "sents_p": None,
        "sents_r": None,
        "sents_f": 0.0,
    },
)
def make_graph_parser(
    nlp: Language,
    name: str,
    model: Model,
    decoder: str,
    train_decoder: str,
    top_k: int,
    higher_order_max_length: int,
    hinge_weight: float,
    xent_weight: float,
    label_weight: float,
    time_limit: float,
    init_from_doc: bool,
    doc_arc_bonus: float,
    keep_doc_labels: bool,
    hill_climb_options: Dict,
    train_hill_climb_options: Dict,
    dual_options: Dict,
    seed: int,
    scorer: Optional[Callable],
) -> "GraphParser":
    return GraphParser(
        nlp.vocab,
        model,
        name,
        decoder=decoder,
        train_decoder=train_decoder,
        top_k=top_k,
        higher_order_max_length=higher_order_max_length,
        hinge_weight=hinge_weight,
        xent_weight=xent_weight,
        label_weight=label_weight,
        time_limit=time_limit,
        init_from_doc=init_from_doc,
        doc_arc_bonus=doc_arc_bonus,
        keep_doc_labels=keep_doc_labels,
        hill_climb_options=hill_climb_options,
        train_hill_climb_options=train_hill_climb_options,
        dual_options=dual_options,
        seed=seed,
        scorer=scorer,
    )


class GraphParser(ParserPipe):
    """Graph-based parser with arc, sibling and grandparent factors and a configurable decoder.

    decoder: ``hill_climb`` (default), ``dual`` (certifies optimal trees), ``mst`` (first order),
        ``eisner`` (projective, arc + sibling). Same weights, any decoder.
    train_decoder: the decoder used for cost-augmented decoding in training.
    top_k: heads kept per word by first-order pruning (the root is always kept).
    higher_order_max_length: longer spans are decoded with first-order MST only, which keeps
        memory at O(n^2).
    time_limit: seconds per sentence for the searching decoders.
    init_from_doc: when the doc already has a parse (e.g. from ``hc_transition_parser`` earlier in
        the pipeline), hill climbing also considers that tree as its first start, keeping the
        better of it and the MST tree. The parse is then overwritten.
    doc_arc_bonus: when the doc already has a parse, its arcs' scores are raised by this much
        before decoding (reparsing, Sagae & Lavie 2006): where the two parsers disagree the
        decoder weighs the other parser's choice against this one's score margin. 0 = off.
    keep_doc_labels: where the decoded head is the doc's existing head, keep the doc's label
        (if this parser knows it): for an earlier parser whose labels are the better ones.
    hill_climb_options / dual_options: keyword arguments for ``decode_hill_climb`` (its first
        start is always the first-order MST tree) and ``decode_dual``; training's cost-augmented
        search uses ``train_hill_climb_options``.
    """

    SETTINGS = (
        "decoder", "train_decoder", "top_k", "higher_order_max_length", "hinge_weight", "xent_weight",
        "label_weight", "time_limit", "init_from_doc", "doc_arc_bonus", "keep_doc_labels", "hill_climb_options",
        "train_hill_climb_options", "dual_options", "seed",
    )

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "hc_parser",
        *,
        decoder: str = "hill_climb",
        train_decoder: str = "hill_climb",
        top_k: int = 6,
        higher_order_max_length: int = 100,
        hinge_weight: float = 1.0,
        xent_weight: float = 1.0,
        label_weight: float = 1.0,
        time_limit: float = 0.5,
        init_from_doc: bool = False,
        doc_arc_bonus: float = 0.0,
        keep_doc_labels: bool = False,
        hill_climb_options: Optional[Dict] = None,
        train_hill_climb_options: Optional[Dict] = None,
        dual_options: Optional[Dict] = None,
        seed: int = 0,
        scorer: Optional[Callable] = None,
    ) -> None:
        for value in (decoder, train_decoder):
            if value not in DECODERS:
                raise ValueError(f"[hc_parser] unknown decoder {value!r}; expected one of {DECODERS}")
        if top_k < 1:
            raise ValueError(f"[hc_parser] top_k must be at least 1, got {top_k}")
        register_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg: Dict = {
            "labels": [],
            "decoder": decoder,
            "train_decoder": train_decoder,
            "top_k": top_k,
            "higher_order_max_length": higher_order_max_length,
            "hinge_weight": hinge_weight,
            "xent_weight": xent_weight,
            "label_weight": label_weight,
            "time_limit": time_limit,
            "init_from_doc": init_from_doc,
            "doc_arc_bonus": doc_arc_bonus,
            "keep_doc_labels": keep_doc_labels,
            "hill_climb_options": dict(hill_climb_options or {}),
            "train_hill_climb_options": dict(train_hill_climb_options or {}),
            "dual_options": dict(dual_options or {}),
            "seed": seed,
        }

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
        sample = [eg.predicted for eg in islice(get_examples(), 10)]
        self.model.initialize(X=sample or None)

    # ----- prediction ---------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[List[SpanParse]]:
        """One list of ``SpanParse`` per doc, one per span of ``sentence_spans(doc, max_length)``."""
        docs = list(docs)
        spans = [sentence_spans(doc, self.max_length) for doc in docs]
        if not any(spans):
            return [[] for _ in docs]
        blocks, arcs = self.model.predict(docs)
        arcs = [np.asarray(a, dtype=np.float64) for a in arcs]
        masks = [factors.candidate_heads(arc, self.cfg["top_k"]) for arc in arcs]
        label_ids = {self.vocab.strings[label]: i for i, label in enumerate(self.cfg["labels"])}
        existing = [t for doc, doc_spans in zip(docs, spans) for t in self._doc_parses(doc, doc_spans, label_ids)]
        starts = [p[0] if p is not None and self.cfg.get("init_from_doc") else None for p in existing]
        bonus = self.cfg.get("doc_arc_bonus", 0.0)
        # Factor scores in batched calls over groups of about WORDS_PER_GROUP words; each span's
        # dense (n+1)^3 cubes exist only while that span is decoded. Peak memory is bounded by
        # the group, not the batch or the doc.
        parses = []
        # Factors the decoder ignores are not scored: Eisner uses arcs and siblings, MST arcs only.
        decoder = self.cfg["decoder"]
        uses = {"sib": decoder != "mst", "grand": decoder in ("hill_climb", "dual")}
        for lo, hi in index_groups([len(m) - 1 for m in masks], WORDS_PER_GROUP):
            factor_scores = self._factor_scores(blocks[lo:hi], masks[lo:hi], is_train=False, **uses)
            for i in range(lo, hi):
                sib, grand = self._cubes(len(masks[i]), *(part[i - lo] for part in factor_scores[:4]), **uses)
                pruned = factors.pruned_arc(arcs[i], masks[i])
                if bonus and existing[i] is not None:
                    pruned = _with_bonus(pruned, arcs[i], existing[i][0], bonus)
                parses.append(self._decode(decoder, pruned, sib, grand, start=starts[i]))
                del sib, grand
        heads = [r.heads for r in parses]
        label_scores = self.model.get_ref("label_scorer").predict((blocks, heads))
        flat = [
            SpanParse(r.heads, self._best_labels(r.heads, s, doc_parse), r.score, r.certified, r.upper_bound,
                      _margins(arc, r.heads), r.time_capped)
            for r, s, arc, doc_parse in zip(parses, label_scores, arcs, existing)
        ]
        out, pos = [], 0
        for doc_spans in spans:
            out.append(flat[pos : pos + len(doc_spans)])
            pos += len(doc_spans)
        return out

    def set_annotations(self, docs: Iterable[Doc], parses: List[List[SpanParse]]) -> None:
        labels = self.labels
        for doc, doc_parses in zip(docs, parses):
            spans = sentence_spans(doc, self.max_length)
            if not spans:
                continue
            names = [[labels[i] for i in p.labels] for p in doc_parses]
            write_trees(doc, spans, [p.heads for p in doc_parses], names)
            doc._.hc_parse_score = float(sum(p.score for p in doc_parses))
            doc.user_data["hc_time_capped"] = sum(bool(p.time_capped) for p in doc_parses)
            margins: List[Optional[float]] = [None] * len(doc)
            for (start, end), parse in zip(spans, doc_parses):
                span = doc[start:end]
                span._.hc_certified = bool(parse.certified)
                span._.hc_upper_bound = None if np.isnan(parse.upper_bound) else float(parse.upper_bound)
                margins[start:end] = np.asarray(parse.margins, dtype=float).tolist()
            doc.user_data[MARGINS_KEY] = margins

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
        golds = self._gold_spans(examples)
        if not any(g is not None for doc_golds in golds for g in doc_golds):
            return losses
        set_dropout_rate(self.model, drop)
        (blocks, arcs), bp_model = self.model.begin_update(docs)
        flat_golds = [g for doc_golds in golds for g in doc_golds]
        loss, d_blocks, d_arcs = self._loss_and_gradients(blocks, arcs, flat_golds)
        bp_model((d_blocks, d_arcs))
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores) -> Tuple[float, object]:
        """Not used: ``update`` computes the loss with the decoder in the loop."""
        raise NotImplementedError("hc_parser computes its loss inside update()")

    def _loss_and_gradients(self, blocks, arcs, golds):
        cfg = self.cfg
        n_words = max(1, sum(len(g[0]) - 1 for g in golds if g is not None))
        arcs64 = [np.asarray(a, dtype=np.float64) for a in arcs]
        masks = [
            factors.candidate_heads(arc, cfg["top_k"], keep=None if g is None else g[0])
            for arc, g in zip(arcs64, golds)
        ]
        sibs, grands, sib_triples, grand_triples, bp_sib, bp_grand = self._higher_order(
            blocks, masks, is_train=True
        )
        total = 0.0
        d_arcs, d_sib_vals, d_grand_vals = [], [], []
        for i, (arc, mask, gold) in enumerate(zip(arcs64, masks, golds)):
            d_arc = np.zeros_like(arc)
            d_sib = np.zeros(len(sib_triples[i]))
            d_grand = np.zeros(len(grand_triples[i]))
            if gold is not None and len(arc) > 1:
                gold_heads = gold[0]
                if cfg["xent_weight"]:
                    loss, d = head_xent(arc, gold_heads)
                    total += cfg["xent_weight"] * loss
                    d_arc += cfg["xent_weight"] * d
                if cfg["hinge_weight"]:
                    loss, da, ds, dg = self._hinge(arc, mask, sibs[i], grands[i], gold_heads, sib_triples[i], grand_triples[i])
                    total += cfg["hinge_weight"] * loss
                    d_arc += cfg["hinge_weight"] * da
                    d_sib += cfg["hinge_weight"] * ds
                    d_grand += cfg["hinge_weight"] * dg
            d_arcs.append((d_arc / n_words).astype("f"))
            d_sib_vals.append((d_sib / n_words).astype("f"))
            d_grand_vals.append((d_grand / n_words).astype("f"))
        label_heads = [g[0] if g is not None else _chain_tree(len(a)) for g, a in zip(golds, arcs64)]
        label_scores, bp_labels = self.model.get_ref("label_scorer").begin_update((blocks, label_heads))
        d_labels = []
        for scores, gold in zip(label_scores, golds):
            if gold is None:
                d_labels.append(np.zeros_like(scores))
                continue
            loss, d = label_xent(np.asarray(scores, dtype=np.float64), gold[1])
            total += cfg["label_weight"] * loss
            d_labels.append((cfg["label_weight"] * d / n_words).astype("f"))
        d_blocks = bp_labels(d_labels)
        if bp_sib is not None:
            d_blocks = _add_lists(d_blocks, bp_sib(d_sib_vals))
            d_blocks = _add_lists(d_blocks, bp_grand(d_grand_vals))
        return total, d_blocks, d_arcs

    def _hinge(self, arc, mask, sib, grand, gold, sib_triples, grand_triples):
        """Structured hinge with Hamming cost: max(0, s(y) + cost(y) - s(gold)) at the decoded y."""
        augmented = factors.hamming_augmented(factors.pruned_arc(arc, mask), gold)
        result = self._decode(self.cfg["train_decoder"], augmented, sib, grand, training=True)
        pred = result.heads
        if np.array_equal(pred, gold):
            return 0.0, np.zeros_like(arc), np.zeros(len(sib_triples)), np.zeros(len(grand_triples))
        size = len(gold)
        use_sib, use_grand = sib is not None, grand is not None
        gold_score = float(arc[gold[1:], np.arange(1, size)].sum())
        pred_score = float(arc[pred[1:], np.arange(1, size)].sum()) + float(np.sum(pred[1:] != gold[1:]))
        d_sib = np.zeros(len(sib_triples))
        d_grand = np.zeros(len(grand_triples))
        if use_sib:
            ps, gs = factors.tree_sibling_factors(pred), factors.tree_sibling_factors(gold)
            pred_score += float(sib[tuple(ps.T)].sum()) if len(ps) else 0.0
            gold_score += float(sib[tuple(gs.T)].sum()) if len(gs) else 0.0
            d_sib = factors.factor_gradient(sib_triples, ps, gs, size)
        if use_grand:
            pg, gg = factors.tree_grand_factors(pred), factors.tree_grand_factors(gold)
            pred_score += float(grand[tuple(pg.T)].sum()) if len(pg) else 0.0
            gold_score += float(grand[tuple(gg.T)].sum()) if len(gg) else 0.0
            d_grand = factors.factor_gradient(grand_triples, pg, gg, size)
        loss = pred_score - gold_score
        if loss <= 0:
            return 0.0, np.zeros_like(arc), np.zeros(len(sib_triples)), np.zeros(len(grand_triples))
        return loss, factors.arc_gradient(pred, gold), d_sib, d_grand

    def _higher_order(self, blocks, masks, is_train: bool):
        """Dense sibling/grandparent cubes for spans short enough (None elsewhere)."""
        sib_triples, sib_vals, grand_triples, grand_vals, bp_sib, bp_grand = self._factor_scores(blocks, masks, is_train)
        cubes = [self._cubes(len(m), *parts) for m, *parts in zip(masks, sib_triples, sib_vals, grand_triples, grand_vals)]
        sibs = [sib for sib, _ in cubes]
        grands = [grand for _, grand in cubes]
        return sibs, grands, sib_triples, grand_triples, bp_sib, bp_grand

    def _factor_scores(self, blocks, masks, is_train: bool, sib: bool = True, grand: bool = True):
        """Sibling and grandparent triples of the pruned candidates and their scores, per span
        (no triples for spans longer than ``higher_order_max_length``, nor for a factor type
        switched off with ``sib``/``grand``), and the backprops."""
        use = [self._uses_higher_order(len(m)) for m in masks]
        none = np.zeros((0, 3), dtype=np.int64)
        sib_triples = [factors.sibling_triples(m) if u and sib else none for m, u in zip(masks, use)]
        grand_triples = [factors.grandparent_triples(m) if u and grand else none for m, u in zip(masks, use)]
        sib_model = self.model.get_ref("sibling_scorer")
        grand_model = self.model.get_ref("grand_scorer")
        if is_train:
            sib_vals, bp_sib = sib_model.begin_update((blocks, sib_triples))
            grand_vals, bp_grand = grand_model.begin_update((blocks, grand_triples))
        else:
            sib_vals = sib_model.predict((blocks, sib_triples))
            grand_vals = grand_model.predict((blocks, grand_triples))
            bp_sib = bp_grand = None
        return sib_triples, sib_vals, grand_triples, grand_vals, bp_sib, bp_grand

    def _uses_higher_order(self, size: int) -> bool:
        """Whether a span of ``size - 1`` words gets sibling/grandparent factors."""
        return 1 < size - 1 <= self.cfg["higher_order_max_length"]

    def _cubes(self, size: int, sib_triples, sib_vals, grand_triples, grand_vals, sib: bool = True, grand: bool = True):
        """One span's dense sibling and grandparent cubes (None for a first-order span or a
        factor type switched off)."""
        if not self._uses_higher_order(size):
            return None, None
        return (factors.dense_cube(size, sib_triples, sib_vals) if sib else None,
                factors.dense_cube(size, grand_triples, grand_vals) if grand else None)

    def _doc_parses(self, doc: Doc, spans, label_ids: Dict[int, int]) -> List[Optional[Tuple[np.ndarray, np.ndarray]]]:
        """The doc's existing parse per span, as span-local heads (n+1,) and label ids (n,) in
        this parser's label set (``label_ids``: label hash -> id; ``-1`` for labels it does not
        know), where the settings use it (``init_from_doc``, ``doc_arc_bonus``,
        ``keep_doc_labels``) and the doc has one tree there; None elsewhere."""
        wanted = self.cfg.get("init_from_doc") or self.cfg.get("doc_arc_bonus") or self.cfg.get("keep_doc_labels")
        if not wanted or not doc.has_annotation("DEP"):
            return [None] * len(spans)
        heads = np.arange(len(doc)) + doc.to_array(HEAD).astype(np.int64)  # offsets, stored as uint64
        labels = np.array([label_ids.get(h, -1) for h in doc.to_array(DEP).tolist()], dtype=np.int64)
        trees = [span_tree(heads, start, end) for start, end in spans]
        return [None if tree is None else (tree, labels[start:end]) for tree, (start, end) in zip(trees, spans)]

    def _decode(self, name: str, arc, sib, grand, training: bool = False, start=None):
        if len(arc) > MAX_WORDS + 1:  # cannot happen with sentence_spans; guards direct calls
            raise ValueError(f"[hc_parser] span of {len(arc) - 1} words exceeds {MAX_WORDS}")
        if sib is None and grand is None and name in ("hill_climb", "dual"):
            name = "mst"  # first order only: the exact decoder is also the fastest
        if name == "mst":
            sib = grand = None
        if name == "eisner":
            grand = None
        init = None
        options = {}
        if name == "hill_climb":
            # The first-order optimum is a strong, cheap first start tree.
            init = decode("mst", arc).heads
            if start is not None and tree_score(start, arc, sib, grand) > tree_score(init, arc, sib, grand):
                init = start
            options = dict(self.cfg["train_hill_climb_options" if training else "hill_climb_options"])
        elif name == "dual":
            options = dict(self.cfg["dual_options"])
        return decode(
            name, arc, sib, grand, seed=self.cfg["seed"], time_limit=self.cfg["time_limit"], init=init, **options
        )

    def _best_labels(self, heads: np.ndarray, scores: np.ndarray, doc_parse=None) -> np.ndarray:
        """Best label per word: ``ROOT`` for the root's child, any other label elsewhere; with
        ``keep_doc_labels``, the doc's own label where ``doc_parse`` (span-local heads and
        label ids) has the same head and a label this parser knows."""
        scores = np.array(scores, dtype=np.float64)
        root = self.cfg["labels"].index(ROOT_LABEL) if ROOT_LABEL in self.cfg["labels"] else -1
        if root >= 0:
            is_root = heads[1:] == 0
            scores[~is_root, root] = -np.inf
            scores[is_root, :] = -np.inf
            scores[is_root, root] = 0.0
        best = scores.argmax(axis=1)
        if doc_parse is not None and self.cfg.get("keep_doc_labels"):
            doc_heads, doc_labels = doc_parse
            keep = (doc_heads[1:] == heads[1:]) & (doc_labels >= 0) & ((doc_labels == root) == (heads[1:] == 0))
            best[keep] = doc_labels[keep]
        return best

    def _gold_spans(self, examples: List[Example]) -> List[List[Optional[Tuple[np.ndarray, np.ndarray]]]]:
        """Per doc, per span: (gold heads (n+1,), gold label ids (n,)) or None if unusable."""
        label_ids = {label: i for i, label in enumerate(self.labels)}
        out = []
        for eg in examples:
            doc = eg.predicted
            copy_gold_sentences(eg)
            heads, deps, _ = aligned_gold(eg, projectivize=False)
            absolute = np.array([-1 if h is None else h for h in heads], dtype=np.int64)
            doc_golds = []
            for start, end in sentence_spans(doc, self.max_length):
                gold = _span_gold(absolute, deps, start, end, label_ids)
                if gold is None:
                    self._report_unusable_gold(doc, start, end, heads)
                doc_golds.append(gold)
            out.append(doc_golds)
        return out

    # ----- serialization checks -----------------------------------------------------------
    def _after_load(self, where: str) -> None:
        scorer = self.model.get_ref("label_scorer")
        if scorer.has_dim("nO") and scorer.get_dim("nO") != len(self.labels):
            raise ValueError(
                f"[hc_parser] model in {where} has {scorer.get_dim('nO')} label outputs but its "
                f"cfg lists {len(self.labels)} labels: the files do not belong together"
            )


def _span_gold(heads: np.ndarray, deps, start, end, label_ids):
    """Span-local gold tree (n+1,) and label ids from absolute ``heads`` (``-1`` unknown), or
    None if the gold is not one tree here."""
    local = span_tree(heads, start, end)
    if local is None:
        return None
    return local, np.array([label_ids.get(d, -1) for d in deps[start:end]], dtype=np.int64)


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


def _with_bonus(pruned: np.ndarray, arc: np.ndarray, doc_heads: np.ndarray, bonus: float) -> np.ndarray:
    """``pruned`` with each of the doc's arcs (``doc_heads``: (n+1,), ``-1`` at the root row) at
    its unpruned score plus ``bonus``, so pruning cannot hide the other parser's choice."""
    out = pruned.copy()
    words = np.arange(1, len(doc_heads))
    out[doc_heads[1:], words] = arc[doc_heads[1:], words] + bonus
    return out


def _chain_tree(size: int) -> np.ndarray:
    heads = np.arange(-1, size - 1, dtype=np.int64)
    return heads


def _add_lists(a, b):
    return [x + y for x, y in zip(a, b)]
