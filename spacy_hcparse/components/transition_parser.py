"""``hc_transition_parser``: arc-standard shift-reduce parser (averaged perceptron or neural).

Data flows one way: Doc -> spans (``segment.sentence_spans``) -> word attribute rows (perceptron)
or token vectors (neural) -> moves chosen greedily or by beam search, valid moves only -> span
trees (index 0 the root) -> ``write_trees`` -> ``nonproj.deprojectivize``. ``predict`` returns
arrays and leaves Docs alone; ``set_annotations`` writes them.

Non-projective gold trees are lifted with spaCy's own pseudo-projective transform
(``Example.get_aligned_parse(projectivize=True)``, labels decorated ``head||dep``); decorated
labels rarer than ``label_freq_cutoff`` in the training data fall back to their plain label.
At prediction, ``nonproj.deprojectivize`` undoes the lifting.

``initial_heads(pipe, doc, max_length)`` hands this parser's trees to ``hc_parser`` as starts for
hill climbing.
"""
from collections import Counter
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import LOWER, PREFIX, SHAPE, SUFFIX, TAG
from spacy.language import Language
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, set_dropout_rate

from ..learning.perceptron import AveragedPerceptron
from ..learning.tagger import JackknifeTagger, tag_spans, tagger_templates
from ..models.transition import PrecomputedScorer
from ..segment import Span, sentence_spans
from ..transition.features import N_SLOTS, T, get_templates, token_attrs
from ..transition.moves import n_classes
from ..transition.oracle import oracle_slots
from ..transition.search import apply_best, beam_parse, greedy_parse, initial_states, step_inputs
from ..transition.state import heads_of, labels_of
from .annotate import write_trees
from .base import ParserPipe, aligned_gold, copy_gold_sentences, index_groups, span_tree

ROOT_LABEL = "ROOT"
FALLBACK_LABEL = "dep"  # words need a label other than ROOT to attach to each other
DECORATION = nonproj.DELIMITER  # "||"
WORDS_PER_GROUP = 4000  # words whose hidden layer is precomputed together by the neural option (~86 MB)

DEFAULT_MODEL = """
[model]
@architectures = "spacy_hcparse.TransitionModel.v1"
templates = "zhang_nivre"
n_buckets = 4194304
tag_buckets = 1048576
max_length = 200
"""

# (heads (n+1,), label ids (n,)) of one span
SpanTree = Tuple[np.ndarray, np.ndarray]


@Language.factory(
    "hc_transition_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"],
    default_config={
        "model": Config().from_str(DEFAULT_MODEL)["model"],
        "beam_width": 1,
        "train_beam_width": 1,
        "train_explore": 0.0,
        "explore_after": 0,
        "explore_max_length": 60,
        "label_freq_cutoff": 30,
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
    return TransitionParser(
        nlp.vocab,
        model,
        name,
        beam_width=beam_width,
        train_beam_width=train_beam_width,
        train_explore=train_explore,
        explore_after=explore_after,
        explore_max_length=explore_max_length,
        label_freq_cutoff=label_freq_cutoff,
        scorer=scorer,
    )


class TransitionParser(ParserPipe):
    """Arc-standard parser; the model's ``attrs["kind"]`` picks the learner.

    - ``perceptron`` (``TransitionModel.v1``): trained online by ``update`` with the static
      oracle and the ultraconservative update; ``sgd`` is not used. The saved weights are the
      average over all updates; the unaveraged training state is not serialized.
    - ``neural`` (``NeuralTransitionModel.v1``): trained with spaCy's optimizer on the oracle's
      configurations (softmax over valid moves); greedy decoding.

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
    """

    SETTINGS = ("beam_width", "train_beam_width", "train_explore", "explore_after", "explore_max_length")

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "hc_transition_parser",
        *,
        beam_width: int = 1,
        train_beam_width: int = 1,
        train_explore: float = 0.0,
        explore_after: int = 0,
        explore_max_length: int = 60,
        label_freq_cutoff: int = 30,
        scorer: Optional[Callable] = None,
    ) -> None:
        for key, value in (("beam_width", beam_width), ("train_beam_width", train_beam_width)):
            if value < 1:
                raise ValueError(f"[hc_transition_parser] {key} must be at least 1, got {value}")
        if not 0.0 <= train_explore <= 1.0:
            raise ValueError(f"[hc_transition_parser] train_explore must be in [0, 1], got {train_explore}")
        kind = model.attrs.get("kind")
        if kind not in ("perceptron", "neural"):
            raise ValueError(f"[hc_transition_parser] model {model.name!r} is not a transition model (kind={kind!r})")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg: Dict = {
            "labels": [],
            "tags": [],
            "beam_width": beam_width,
            "train_beam_width": train_beam_width,
            "train_explore": train_explore,
            "explore_after": explore_after,
            "explore_max_length": explore_max_length,
            "label_freq_cutoff": label_freq_cutoff,
        }
        self._learner: Optional[AveragedPerceptron] = None
        self._tag_learner: Optional[AveragedPerceptron] = None
        self._jackknife: Optional[JackknifeTagger] = None  # fold taggers, with jackknife_tags only
        self._stale = False  # the learner holds updates not yet averaged into the model

    @property
    def kind(self) -> str:
        return self.model.attrs["kind"]

    @property
    def _root_label(self) -> int:
        return self.cfg["labels"].index(ROOT_LABEL)

    # ----- set-up -------------------------------------------------------------------------
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[List[str]] = None,
    ) -> None:
        validate_get_examples(get_examples, "TransitionParser.initialize")
        if labels is None:
            labels = self._collect_labels(get_examples())
        labels = [label for label in labels if label != ROOT_LABEL] or [FALLBACK_LABEL]
        for label in [ROOT_LABEL, *labels]:
            self.add_label(label)
        self.model.set_dim("nO", n_classes(len(self.labels)))
        if self.kind == "perceptron":
            self.cfg["tags"] = sorted({t.tag_ for eg in get_examples() for t in eg.reference if t.tag_})
            for tag in self.cfg["tags"]:
                self.vocab.strings.add(tag)
            self.model.get_ref("tagger").set_dim("nO", max(1, len(self.cfg["tags"])), force=True)
        sample = [eg.predicted for eg in islice(get_examples(), 10)]
        self.model.initialize(X=sample or None)
        self._learner = self._tag_learner = self._jackknife = None
        self._stale = False

    def _collect_labels(self, examples: Iterable[Example]) -> List[str]:
        counts: Counter = Counter()
        for eg in examples:
            _, deps = eg.get_aligned_parse(projectivize=True)
            counts.update(d for d in deps if d)
        cutoff = self.cfg["label_freq_cutoff"]
        plain = {d.split(DECORATION)[0] for d in counts}
        decorated = {d for d, c in counts.items() if DECORATION in d and c >= cutoff}
        return sorted((plain | decorated) - {ROOT_LABEL, "root", ""})

    # ----- prediction ---------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[List[SpanTree]]:
        """One list of span trees per doc, one per span of ``sentence_spans(doc, max_length)``."""
        docs = list(docs)
        return self.parse_spans(docs, [sentence_spans(doc, self.max_length) for doc in docs])

    def parse_spans(self, docs: Sequence[Doc], spans: Sequence[Sequence[Span]]) -> List[List[SpanTree]]:
        """Parse the given spans of each doc (projective trees, labels possibly decorated)."""
        if not any(spans):
            return [[] for _ in docs]
        if self.kind == "neural":
            flat = self._parse_neural(docs, spans)
        else:
            flat = self._parse_perceptron(docs, spans)
        out, pos = [], 0
        for doc_spans in spans:
            out.append(flat[pos : pos + len(doc_spans)])
            pos += len(doc_spans)
        return out

    def set_annotations(self, docs: Iterable[Doc], parses: List[List[SpanTree]]) -> None:
        for doc, doc_parses in zip(docs, parses):
            spans = sentence_spans(doc, self.max_length)
            if spans:
                self._write(doc, spans, doc_parses)

    def _write(self, doc: Doc, spans: Sequence[Span], parses: Sequence[SpanTree]) -> None:
        labels = self.labels
        names = [[labels[i] for i in labels_ids] for _, labels_ids in parses]
        write_trees(doc, spans, [heads for heads, _ in parses], names)
        if any(DECORATION in name for span_names in names for name in span_names):
            nonproj.deprojectivize(doc)

    def _parse_perceptron(self, docs, spans) -> List[SpanTree]:
        self._sync()
        attrs, offsets, untagged = _span_rows(docs, spans)
        self._tag(attrs, offsets, untagged)
        heads = np.empty(len(attrs), dtype=np.int64)
        labels = np.empty(len(attrs), dtype=np.int64)
        linear = self.model.get_ref("linear")
        args = (
            attrs, offsets, linear.get_param("W"), get_templates(self.model.attrs["templates"]),
            np.int64(linear.get_dim("nB") - 1), len(self.labels), self._root_label,
        )
        if self.cfg["beam_width"] > 1:
            beam_parse(*args, int(self.cfg["beam_width"]), heads, labels)
        else:
            greedy_parse(*args, heads, labels)
        return [(heads[lo:hi].copy(), labels[lo + 1 : hi].copy()) for lo, hi in zip(offsets[:-1], offsets[1:])]

    def _parse_neural(self, docs, spans) -> List[SpanTree]:
        """Greedy parses of all spans; the hidden layer is precomputed per token for groups of
        about ``WORDS_PER_GROUP`` words (``models.transition.PrecomputedScorer``), which bounds
        the precomputed table's memory by the group, not the batch."""
        table = _vector_table(self.model.predict(list(docs)))
        firsts = _first_rows(docs, spans)
        sizes = [end - start for doc_spans in spans for start, end in doc_spans]
        out: List[SpanTree] = []
        scorer = PrecomputedScorer(self.model)
        for lo, hi in index_groups(sizes, WORDS_PER_GROUP):
            # the group's words are the table rows first + 1 .. first + size of its spans, in order
            start, end = firsts[lo] + 1, firsts[hi - 1] + sizes[hi - 1] + 1
            sub = np.concatenate([table[start:end], table[-1:]])  # the zero row last, as in table
            group_firsts = [f - start for f in firsts[lo:hi]]
            out.extend(self._parse_neural_group(scorer, scorer.hidden(sub), group_firsts, sizes[lo:hi]))
        return out

    def _parse_neural_group(
        self, scorer: PrecomputedScorer, hidden: np.ndarray, firsts: List[int], sizes: List[int]
    ) -> List[SpanTree]:
        """Greedy parses of one group's spans, all configurations advanced together."""
        n_labels, root = len(self.labels), self._root_label
        states = initial_states(np.array(sizes, dtype=np.int64))
        firsts = np.array(firsts, dtype=np.int64)
        active = np.array([i for i, n in enumerate(sizes) if n > 0], dtype=np.int64)
        rows = np.empty((len(active), N_SLOTS), dtype=np.int64)
        masks = np.empty((len(active), n_classes(n_labels)), dtype=np.bool_)
        k = len(active)
        while k:
            step_inputs(states, active[:k], firsts, len(hidden) - 1, n_labels, root, rows, masks)
            scores = scorer.scores(hidden, rows[:k])
            k = apply_best(states, active[:k], scores, masks, n_labels)
        return [(heads_of(st), labels_of(st)) for st in states]

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
        validate_examples(examples, "TransitionParser.update")
        docs, spans, golds = self._gold_spans(examples)
        if not any(spans):
            return losses
        if self.kind == "neural":
            losses[self.name] += self._update_neural(docs, spans, golds, drop, sgd)
        else:
            losses[self.name] += self._update_perceptron(docs, spans, golds)
        return losses

    def get_loss(self, examples: Iterable[Example], scores) -> Tuple[float, object]:
        """Not used: ``update`` walks the oracle's configurations itself."""
        raise NotImplementedError("hc_transition_parser computes its loss inside update()")

    def _update_perceptron(self, docs, spans, golds) -> float:
        if self._learner is None:
            self._learner = AveragedPerceptron.from_weights(self.model.get_ref("linear").get_param("W"))
        attrs, offsets, untagged = _span_rows(docs, spans)
        flat = [g for doc_golds in golds for g in doc_golds]
        self._tag(attrs, offsets, untagged, np.concatenate([tags for _, _, tags in flat]))
        gold_heads = np.concatenate([h for h, _, _ in flat])
        gold_labels = np.concatenate([np.concatenate([[-1], lab]) for _, lab, _ in flat]).astype(np.int64)
        linear = self.model.get_ref("linear")
        exploring = self._learner.counter[0] >= 2 * self.cfg.get("explore_after", 0)  # 2 moves per word
        mistakes = self._learner.train(
            attrs, offsets, gold_heads, gold_labels, get_templates(self.model.attrs["templates"]),
            linear.get_dim("nB"), len(self.labels), self._root_label, int(self.cfg["train_beam_width"]),
            explore=float(self.cfg.get("train_explore", 0.0)) if exploring else 0.0,
            explore_max_length=int(self.cfg.get("explore_max_length", 60)),
        )
        self._stale = True
        return float(mistakes)

    def _tag(self, attrs, offsets, untagged, gold_tags: Optional[np.ndarray] = None) -> None:
        """Fill the tag column of rows from docs without tags with this component's tagger
        (trained on ``gold_tags`` when given: tag ids per row, ``-1`` unknown)."""
        tags = self.cfg["tags"]
        if not tags or not untagged.any():
            return
        tagger = self.model.get_ref("tagger")
        train = gold_tags is not None
        if train and self._tag_learner is None:
            self._tag_learner = AveragedPerceptron.from_weights(tagger.get_param("W"))
        learner = self._tag_learner if train else None
        W = learner.W if train else tagger.get_param("W")
        U = learner.U if train else np.zeros(1)
        counter = learner.counter if train else np.ones(1)
        gold = gold_tags if train else np.full(len(attrs), -1, dtype=np.int64)
        out = np.empty(len(attrs), dtype=np.int64)
        templates = tagger_templates(self.model.attrs.get("tagger_templates", "base"))
        tag_spans(
            attrs, offsets, W, templates, np.int64(tagger.get_dim("nB") - 1), len(tags),
            out, gold, U, counter, train,
        )
        if train and self.model.attrs.get("jackknife_tags"):
            if self._jackknife is None:
                self._jackknife = JackknifeTagger(len(W))
            out = self._jackknife.tag(attrs, offsets, templates, np.int64(tagger.get_dim("nB") - 1), len(tags), gold)
        hashes = np.array([self.vocab.strings[t] for t in tags], dtype=np.uint64).view(np.int64)
        rows = untagged & (out >= 0)
        attrs[rows, T] = hashes[out[rows]]

    def _update_neural(self, docs, spans, golds, drop: float, sgd) -> float:
        n_labels, root = len(self.labels), self._root_label
        set_dropout_rate(self.model, drop)
        tokvecs, bp_tokvecs = self.model.begin_update(list(docs))
        table = _vector_table(tokvecs)
        null = len(table) - 1
        starts = np.cumsum([0] + [len(d) for d in docs])
        firsts = _first_rows(docs, spans)
        rows, gold_cls, masks = [], [], []
        for first, (heads, labels, _) in zip(firsts, [g for doc_golds in golds for g in doc_golds]):
            slots, seq, valid = oracle_slots(heads, labels, n_labels, root)
            if len(seq) == 0:
                continue
            rows.append(_slot_rows(slots, first, null))
            gold_cls.append(seq)
            masks.append(valid)
        if not rows:
            return 0.0
        rows = np.concatenate(rows)
        gold_cls = np.concatenate(gold_cls)
        masks = np.concatenate(masks)
        scorer = self.model.get_ref("scorer")
        scores, bp_scores = scorer.begin_update(table[rows].reshape(len(rows), -1))
        scores = np.where(masks, np.asarray(scores, dtype=np.float64), -np.inf)
        scores -= scores.max(axis=1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=1, keepdims=True)
        picked = probs[np.arange(len(rows)), gold_cls]
        loss = float(-np.log(np.maximum(picked, 1e-12)).sum())
        d_scores = probs
        d_scores[np.arange(len(rows)), gold_cls] -= 1.0
        d_rows = np.asarray(bp_scores((d_scores / len(rows)).astype("f"))).reshape(len(rows) * N_SLOTS, -1)
        d_table = self.model.ops.alloc2f(*table.shape)
        self.model.ops.scatter_add(d_table, np.ascontiguousarray(rows.ravel(), dtype="i"), np.ascontiguousarray(d_rows, dtype="f"))
        bp_tokvecs([d_table[a:b] for a, b in zip(starts[:-1], starts[1:])])
        if sgd is not None:
            self.finish_update(sgd)
        return loss

    def _gold_spans(self, examples: List[Example]):
        """Per example: the predicted doc, its spans with a usable projective gold tree, and
        those trees (heads, label ids, tag ids per row with -1 on the root row)."""
        label_ids = {label: i for i, label in enumerate(self.labels)}
        tag_ids = {tag: i for i, tag in enumerate(self.cfg["tags"])}
        root = self._root_label
        docs, spans, golds = [], [], []
        for eg in examples:
            doc = eg.predicted
            copy_gold_sentences(eg)
            heads, deps, tags = aligned_gold(eg, projectivize=True, tags=bool(tag_ids))
            tags = tags if tag_ids else [None] * len(doc)
            tags = np.array([tag_ids.get(t, -1) if t else -1 for t in tags], dtype=np.int64)
            absolute = np.array([-1 if h is None else h for h in heads], dtype=np.int64)
            doc_spans, doc_golds = [], []
            for start, end in sentence_spans(doc, self.max_length):
                gold = _span_gold(absolute, deps, start, end, label_ids, root)
                if gold is None:
                    self._report_unusable_gold(doc, start, end, heads)
                    continue
                doc_spans.append((start, end))
                doc_golds.append((*gold, np.concatenate([[-1], tags[start:end]])))
            docs.append(doc)
            spans.append(doc_spans)
            golds.append(doc_golds)
        return docs, spans, golds

    # ----- averaging and serialization ----------------------------------------------------
    def _sync(self) -> None:
        """Write the averaged perceptron weights into the model if updates happened since."""
        if self._stale and self._learner is not None:
            self.model.get_ref("linear").set_param("W", self._learner.average())
            if self._tag_learner is not None:
                self.model.get_ref("tagger").set_param("W", self._tag_learner.average())
            self._stale = False

    def finish_update(self, sgd) -> None:
        if self.kind == "neural":
            super().finish_update(sgd)

    def _before_save(self) -> None:
        self._sync()  # the learner's averaged weights into the model
        super()._before_save()

    def _after_load(self, where: str) -> None:
        self._learner = self._tag_learner = self._jackknife = None
        self._stale = False
        expected = n_classes(len(self.labels))
        if self.model.has_dim("nO") and self.model.get_dim("nO") not in (None, expected):
            raise ValueError(
                f"[hc_transition_parser] model in {where} has {self.model.get_dim('nO')} move classes but "
                f"its cfg lists {len(self.labels)} labels ({expected} classes): the files do not belong together"
            )


def initial_heads(pipe: TransitionParser, doc: Doc, max_length: int) -> List[np.ndarray]:
    """This parser's trees for ``sentence_spans(doc, max_length)``, as span-local (n+1,) heads
    arrays (``heads[0] == -1``, one word on the root), de-projectivized, for ``hc_parser``'s
    hill climbing. ``doc`` is left untouched."""
    spans = sentence_spans(doc, max_length)
    if not spans:
        return []
    parses = pipe.parse_spans([doc], [spans])[0]
    copy = Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
    pipe._write(copy, spans, parses)
    out = []
    for start, end in spans:
        heads = np.full(end - start + 1, -1, dtype=np.int64)
        for m, token in enumerate(copy[start:end], start=1):
            heads[m] = 0 if token.head.i == token.i else token.head.i - start + 1
        out.append(heads)
    return out


def _doc_attr_rows(doc: Doc) -> np.ndarray:
    arr = doc.to_array([LOWER, SUFFIX, PREFIX, SHAPE, TAG]).view(np.int64)
    return arr.reshape(len(doc), 5)


def _span_rows(docs: Sequence[Doc], spans: Sequence[Sequence[Span]]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Word attribute rows of all spans one after another (root row first), their offsets, and
    which rows are words of docs without tags (their tag column holds the shape/suffix stand-in
    until the component's tagger fills it)."""
    blocks, untagged, sizes = [], [], [0]
    for doc, doc_spans in zip(docs, spans):
        if not doc_spans:
            continue
        arr = _doc_attr_rows(doc)
        use_tag = doc.has_annotation("TAG")
        for start, end in doc_spans:
            blocks.append(token_attrs(np.ascontiguousarray(arr[start:end]), use_tag))
            untagged.append(np.full(end - start + 1, not use_tag))
            untagged[-1][0] = False
            sizes.append(end - start + 1)
    if not blocks:
        return np.zeros((0, 5), dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=bool)
    return np.concatenate(blocks), np.cumsum(sizes).astype(np.int64), np.concatenate(untagged)


def _vector_table(tokvecs) -> np.ndarray:
    """All docs' token vectors in one table with a zero row last (empty slots and the root)."""
    arrays = [np.asarray(v, dtype="f") for v in tokvecs]
    width = arrays[0].shape[1] if arrays else 0
    return np.concatenate(arrays + [np.zeros((1, width), dtype="f")])


def _first_rows(docs, spans) -> List[int]:
    """Table row of the token before each span's first word (so word m is row first + m)."""
    out, base = [], 0
    for doc, doc_spans in zip(docs, spans):
        out.extend(base + start - 1 for start, _ in doc_spans)
        base += len(doc)
    return out


def _slot_rows(slots: np.ndarray, first: int, null: int) -> np.ndarray:
    return np.where(slots > 0, slots + first, null)


def _span_gold(heads: np.ndarray, deps, start, end, label_ids, root) -> Optional[SpanTree]:
    """Span-local projectivized gold (heads (n+1,), label ids (n,)) from absolute ``heads``
    (``-1`` unknown), or None if the gold is not one tree inside the span (the oracle needs one)
    or uses an unknown label. Decorated labels not kept at initialization fall back to their
    plain label; the root's dependent gets ``ROOT``."""
    local = span_tree(heads, start, end)
    if local is None:
        return None
    labels = np.empty(end - start, dtype=np.int64)
    for m in range(end - start):
        if local[m + 1] == 0:
            labels[m] = root
            continue
        dep = deps[start + m] or ""
        label = label_ids.get(dep, label_ids.get(dep.split(DECORATION)[0], -1))
        if label < 0 or label == root:
            return None
        labels[m] = label
    return local, labels
