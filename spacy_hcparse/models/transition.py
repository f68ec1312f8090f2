"""Registered architectures of ``hc_transition_parser``, each a closed function of its input.

- ``spacy_hcparse.TransitionModel.v1``/``.v2`` (averaged perceptron). Input: ``PerceptronInput``,
  the docs and per doc the spans to parse (None: the model segments the doc), the tag column's
  value of each tag, the ROOT label id and the beam width. Forward: [``.v2``: the sentence
  classifier (a two-class ``layers.perceptron_tagger``) marks where sentences begin in the docs
  to segment] -> the spans' word attribute rows (``span_rows``) -> the tagger layer fills the tag
  column of rows from docs without tags -> greedy or beam search (``transition.search``) over
  the hashed templates, scored with the parser's weights (``layers.sparse_linear``) ->
  ``TransitionParses``. No backprop: ``learning.perceptron`` and ``learning.perceptron_tagger``
  train copies of the weights (``perceptron_weights``), and ``set_perceptron_weights`` writes
  their averages into the model.
- ``spacy_hcparse.NeuralTransitionModel.v1``/``.v2``: a spaCy Tok2Vec; the vectors of the
  stack/buffer positions (``transition.features.SLOTS``) are concatenated and scored by Maxout ->
  Linear; ``.v2`` also scores where sentences begin (``layers.sentence_starts`` over the token
  vectors). ``predict(SpanBatch(docs, spans))`` returns a ``StepScorer`` (the Maxout's input
  layer precomputed per token, as in spaCy's parser, and the spans to parse: the given ones, or
  the model's segmentation) that the search loop (``transition.search.greedy_batch``) asks for the
  move scores of configurations; ``begin_update(SlotBatch(docs, rows))`` returns ``SlotScores``
  (the move scores of the configurations whose slot words are ``rows``, and the sentence-start
  logits of each doc) and one backprop through the scorers and the Tok2Vec.

Segmentation (``segment.segment_docs``): a doc whose spans are None is cut where the model's
sentences begin and after every blank line; a model without a sentence scorer (``.v1``) cuts it
into chunks of ``max_length`` words, each a sentence.

Token table of the neural model: all docs' token vectors one after another, then a zero row for
empty slots and the root. Word ``m`` (1-based) of a span is row ``first + m``, with ``first`` from
``first_rows``; the zero row is the number of tokens (``slot_rows``).

Both models carry ``attrs["kind"]`` (``"perceptron"`` | ``"neural"``), which picks the component's
learner, and ``attrs["max_length"]``.
"""
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from numba import njit
from spacy.attrs import LOWER, PREFIX, SHAPE, SUFFIX, TAG
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Maxout, Model, chain
from thinc.types import Floats1d, Floats2d

from ..layers.perceptron_tagger import perceptron_tagger
from ..layers.sentence_starts import sentence_starts
from ..layers.sparse_linear import sparse_linear
from ..segment import Span, segment_docs, span_whitespace
from ..transition.features import N_ATTRS, N_SLOTS, TEMPLATE_SETS, get_templates, token_attrs
from ..transition.search import beam_parse, greedy_parse
from ..transition.tagging import fill_tags, tagger_templates

# (heads (n+1,) with heads[0] == -1, label ids (n,)) of one span
SpanTree = Tuple[np.ndarray, np.ndarray]
SENTENCE_START = 1  # the sentence classifier's class for "this token starts a sentence"


class TransitionParses(NamedTuple):
    """What parsing a batch gives: one tree per span (docs in order), per doc the spans parsed, and
    per doc where the model's sentences begin (token offsets; None where the spans were given)."""

    trees: List[SpanTree]
    spans: List[List[Span]]
    sentences: List[Optional[List[int]]]


# ----- averaged perceptron ----------------------------------------------------------------------
class SpanRows(NamedTuple):
    """Word attribute rows (``transition.features.token_attrs``) of spans one after another."""

    attrs: np.ndarray  # (n_rows, N_ATTRS) int64, each span's root row first
    offsets: np.ndarray  # (n_spans + 1,) int64: span s is rows offsets[s]..offsets[s+1]-1
    untagged: np.ndarray  # (n_rows,) bool: words of docs without tags (the tag column holds a stand-in)


class PerceptronInput(NamedTuple):
    docs: Sequence[Doc]
    spans: Sequence[Optional[Sequence[Span]]]  # per doc the spans to parse; None: the model segments it
    tag_values: np.ndarray  # (n_tags,) int64: the tag column's value for each tag id (the tag's hash)
    root_label: int  # label id of ROOT
    beam_width: int = 1  # 1: greedy


class PerceptronFeatures(NamedTuple):
    """What training needs to hash features as the model does."""

    templates: np.ndarray  # the parser's, transition.features.get_templates
    mask: np.int64  # the parser's number of buckets minus one
    tag_templates: np.ndarray  # the tagger's, transition.tagging.tagger_templates
    tag_mask: np.int64
    jackknife_tags: bool  # train the parser on jackknifed tags (learning.perceptron_tagger)
    sentence_templates: Optional[np.ndarray]  # the sentence classifier's (None: the model has none)
    sentence_mask: np.int64


class PerceptronWeights(NamedTuple):
    """The perceptron model's flat hashed weights (``layers.sparse_linear``)."""

    parser: np.ndarray
    tagger: np.ndarray
    sentences: Optional[np.ndarray]  # the sentence classifier's; None without one


@registry.architectures("spacy_hcparse.TransitionModel.v1")
def build_transition_model(
    templates: str = "zhang_nivre",
    n_buckets: int = 2**22,
    tag_buckets: int = 2**20,
    max_length: int = 200,
    nO: Optional[int] = None,
    tagger_templates: str = "base",
    jackknife_tags: bool = False,
) -> Model[PerceptronInput, TransitionParses]:
    """Averaged perceptron over hashed templates, with an averaged perceptron tagger for the
    templates' tag values (used when the training data has tags and no tagger runs before the
    parser).

    templates: name of a template set in ``transition.features.TEMPLATE_SETS``.
    n_buckets: hash table size (power of two); weights take ``4 * n_buckets`` bytes.
    tag_buckets: the tagger's hash table size (power of two).
    max_length: longest span parsed as one tree (``segment.sentence_spans``).
    nO: number of move classes, set by the component (as is ``nT``, the number of tags).
    tagger_templates: the tagger's template set (``transition.tagging.TAGGER_TEMPLATE_SETS``);
        ``"base"``, the default, is the set of configs written before the option existed.
    jackknife_tags: in training, give the parser tags from two taggers that each tag the half of
        the sentences they did not train on (``learning.perceptron_tagger.JackknifeTagger``). Off
        by default: on EWT dev it cost 0.4-0.5 UAS (0.8 with unaveraged fold weights) against the
        tagger trained on everything.
    """
    return _perceptron_model(templates, n_buckets, tag_buckets, max_length, nO, tagger_templates, jackknife_tags, 0)


@registry.architectures("spacy_hcparse.TransitionModel.v2")
def build_transition_model_v2(
    templates: str = "zhang_nivre",
    n_buckets: int = 2**22,
    tag_buckets: int = 2**20,
    max_length: int = 200,
    nO: Optional[int] = None,
    tagger_templates: str = "base",
    jackknife_tags: bool = False,
    sentence_buckets: int = 2**20,
) -> Model[PerceptronInput, TransitionParses]:
    """``TransitionModel.v1`` with a sentence classifier of its own: a two-class averaged
    perceptron tagger (``layers.perceptron_tagger``, templates ``"sentence"`` of
    ``transition.tagging``: the word, its neighbours and their shapes) that marks the tokens that
    begin a sentence, trained on the reference's sentence starts. It segments docs without
    sentence boundaries; docs with boundaries keep theirs.

    sentence_buckets: the classifier's hash table size (a power of two); 0 for none (docs without
        boundaries are then cut into chunks of ``max_length`` words, as by ``.v1``).
    Other arguments as in ``.v1``.
    """
    return _perceptron_model(templates, n_buckets, tag_buckets, max_length, nO, tagger_templates, jackknife_tags,
                             sentence_buckets)


def _perceptron_model(templates, n_buckets, tag_buckets, max_length, nO, tagger_templates, jackknife_tags,
                      sentence_buckets) -> Model:
    if templates not in TEMPLATE_SETS:
        raise ValueError(f"unknown template set {templates!r}; expected one of {sorted(TEMPLATE_SETS)}")
    linear = sparse_linear(n_buckets, nO=nO)
    tagger = perceptron_tagger(tag_buckets, tagger_templates)
    refs = {"linear": linear, "tagger": tagger}
    if sentence_buckets > 0:
        refs["sentence_tagger"] = perceptron_tagger(sentence_buckets, "sentence", nO=2)
    return Model(
        "hc_transition_perceptron",
        _perceptron_forward,
        init=_init_perceptron,
        layers=list(refs.values()),
        refs=refs,
        dims={"nO": nO, "nT": None},
        attrs={"kind": "perceptron", "templates": templates, "jackknife_tags": jackknife_tags,
               "max_length": max_length},
    )


def _init_perceptron(model: Model, X=None, Y=None) -> Model:
    linear = model.get_ref("linear")
    if model.has_dim("nO"):
        linear.set_dim("nO", model.get_dim("nO"), force=True)
    linear.initialize()
    tagger = model.get_ref("tagger")
    if model.has_dim("nT"):
        tagger.set_dim("nO", model.get_dim("nT"), force=True)
    elif not tagger.has_dim("nO"):
        tagger.set_dim("nO", 1)  # no tags: the component sets nT before initializing
    tagger.initialize()
    if model.has_ref("sentence_tagger"):
        model.get_ref("sentence_tagger").initialize()
    return model


def _perceptron_forward(model: Model, X: PerceptronInput, is_train: bool) -> Tuple[TransitionParses, Callable]:
    docs, given, tag_values, root_label, beam_width = X
    spans, sentences = segment_docs(docs, given, _perceptron_starts(model, docs, given), model.attrs["max_length"])
    rows = span_rows(docs, spans)
    attrs, offsets = rows.attrs, rows.offsets
    if len(tag_values) and rows.untagged.any():
        tag_ids = model.get_ref("tagger").predict((attrs, offsets))
        attrs = fill_tags(attrs, rows.untagged, tag_ids, tag_values)
    features = perceptron_features(model)
    heads = np.empty(len(attrs), dtype=np.int64)
    labels = np.empty(len(attrs), dtype=np.int64)
    n_labels = (model.get_dim("nO") - 1) // 2
    space = space_rows(docs, spans)
    args = (attrs, space, offsets, model.get_ref("linear").get_param("W"), features.templates, features.mask,
            n_labels, root_label)
    if beam_width > 1:
        beam_parse(*args, int(beam_width), heads, labels)
    else:
        greedy_parse(*args, heads, labels)
    trees = [(heads[lo:hi].copy(), labels[lo + 1 : hi].copy()) for lo, hi in zip(offsets[:-1], offsets[1:])]

    def backprop(dY):
        raise ValueError("hc_transition_perceptron has no gradient: learning.perceptron trains its weights")

    return TransitionParses(trees, spans, sentences), backprop


def _perceptron_starts(model: Model, docs: Sequence[Doc], given) -> List[Optional[np.ndarray]]:
    """Per doc to segment (spans None) the sentence classifier's starts (bool per token); None
    for the others, and for every doc without a classifier."""
    todo = [i for i, spans in enumerate(given) if spans is None and len(docs[i])]
    out: List[Optional[np.ndarray]] = [None] * len(docs)
    if not todo or not model.has_ref("sentence_tagger"):
        return out
    rows = doc_rows([docs[i] for i in todo])
    classes = model.get_ref("sentence_tagger").predict((rows.attrs, rows.offsets))
    for i, lo, hi in zip(todo, rows.offsets[:-1], rows.offsets[1:]):
        out[i] = classes[lo + 1 : hi] == SENTENCE_START
    return out


def perceptron_features(model: Model) -> PerceptronFeatures:
    tagger = model.get_ref("tagger")
    sentences = model.get_ref("sentence_tagger") if model.has_ref("sentence_tagger") else None
    return PerceptronFeatures(
        get_templates(model.attrs["templates"]), np.int64(model.get_ref("linear").get_dim("nB") - 1),
        tagger_templates(tagger.attrs["templates"]), np.int64(tagger.get_dim("nB") - 1),
        bool(model.attrs.get("jackknife_tags", False)),
        None if sentences is None else tagger_templates(sentences.attrs["templates"]),
        np.int64(0 if sentences is None else sentences.get_dim("nB") - 1),
    )


def perceptron_weights(model: Model) -> PerceptronWeights:
    """The parser's, the tagger's and the sentence classifier's weights."""
    sentences = model.get_ref("sentence_tagger").get_param("W") if model.has_ref("sentence_tagger") else None
    return PerceptronWeights(model.get_ref("linear").get_param("W"), model.get_ref("tagger").get_param("W"), sentences)


def set_perceptron_weights(model: Model, parser: np.ndarray, tagger: Optional[np.ndarray] = None,
                           sentences: Optional[np.ndarray] = None) -> None:
    """Write trained (averaged) weights into the model: the one way training changes it.
    ``tagger`` or ``sentences`` None keeps those weights."""
    model.get_ref("linear").set_param("W", parser)
    if tagger is not None:
        model.get_ref("tagger").set_param("W", tagger)
    if sentences is not None:
        model.get_ref("sentence_tagger").set_param("W", sentences)


def span_rows(docs: Sequence[Doc], spans: Sequence[Sequence[Span]]) -> SpanRows:
    """The word attribute rows of the given spans of each doc, one span after another. Rows of
    docs without tags have the shape/suffix stand-in in their tag column and are ``untagged``."""
    blocks, untagged, sizes = [], [], [0]
    for doc, doc_spans in zip(docs, spans):
        if not doc_spans:
            continue
        arr = doc.to_array([LOWER, SUFFIX, PREFIX, SHAPE, TAG]).view(np.int64).reshape(len(doc), 5)
        use_tag = doc.has_annotation("TAG")
        for start, end in doc_spans:
            blocks.append(token_attrs(np.ascontiguousarray(arr[start:end]), use_tag))
            untagged.append(np.full(end - start + 1, not use_tag))
            untagged[-1][0] = False
            sizes.append(end - start + 1)
    if not blocks:
        return SpanRows(np.zeros((0, N_ATTRS), dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=bool))
    return SpanRows(np.concatenate(blocks), np.cumsum(sizes).astype(np.int64), np.concatenate(untagged))


def space_rows(docs: Sequence[Doc], spans: Sequence[Sequence[Span]]) -> np.ndarray:
    """Per row of ``span_rows(docs, spans)``, whether it is whitespace that the search keeps a
    leaf (``segment.span_whitespace``; never a root row)."""
    rows = [np.concatenate([[False], space]) for space in span_whitespace(docs, spans)]
    return np.concatenate(rows) if rows else np.zeros(0, dtype=bool)


def doc_rows(docs: Sequence[Doc]) -> SpanRows:
    """The word attribute rows of whole docs, each as one span (what the sentence classifier
    reads); empty docs give no span."""
    return span_rows(docs, [[(0, len(doc))] if len(doc) else [] for doc in docs])


# ----- neural -----------------------------------------------------------------------------------
class SpanBatch(NamedTuple):
    docs: Sequence[Doc]
    spans: Sequence[Optional[Sequence[Span]]]  # per doc the (start, end) spans to parse; None: segment it


class SlotBatch(NamedTuple):
    docs: Sequence[Doc]
    rows: np.ndarray  # (n_configurations, N_SLOTS) token table rows of each configuration's slots


class SlotScores(NamedTuple):
    """The training forward's output (and, as gradients, its backprop's input)."""

    moves: Floats2d  # (n_configurations, n_classes)
    starts: List[Floats1d]  # per doc (n_tokens,) sentence-start logits; empty arrays without a scorer


@registry.architectures("spacy_hcparse.NeuralTransitionModel.v1")
def build_neural_transition_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    maxout_pieces: int = 3,
    max_length: int = 200,
    dropout: float = 0.1,
    nO: Optional[int] = None,
) -> Model:
    """Tok2Vec vectors of the configuration's positions -> Maxout hidden layer -> move scores."""
    return _neural_model(tok2vec, hidden_width, maxout_pieces, max_length, dropout, 0, nO)


@registry.architectures("spacy_hcparse.NeuralTransitionModel.v2")
def build_neural_transition_model_v2(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    maxout_pieces: int = 3,
    max_length: int = 200,
    dropout: float = 0.1,
    sentence_width: int = 64,
    nO: Optional[int] = None,
) -> Model:
    """``NeuralTransitionModel.v1`` with a sentence-start scorer on the Tok2Vec's vectors
    (``layers.sentence_starts``: a ReLU layer of ``sentence_width`` over each token and the one
    before it, dropout ``dropout``, then a logit), trained on the reference's sentence starts. It
    segments docs without sentence boundaries; docs with boundaries keep theirs.

    sentence_width: 0 for no scorer (docs without boundaries are then cut into chunks of
        ``max_length`` words, as by ``.v1``). Other arguments as in ``.v1``.
    """
    return _neural_model(tok2vec, hidden_width, maxout_pieces, max_length, dropout, sentence_width, nO)


def _neural_model(tok2vec, hidden_width, maxout_pieces, max_length, dropout, sentence_width, nO) -> Model:
    scorer = chain(Maxout(nO=hidden_width, nP=maxout_pieces, dropout=dropout, normalize=True), Linear(nO=nO))
    refs = {"tok2vec": tok2vec, "scorer": scorer, "output": scorer.layers[-1]}
    layers = [tok2vec, scorer]
    if sentence_width > 0:
        refs["start_scorer"] = sentence_starts(sentence_width, dropout)
        layers.append(refs["start_scorer"])
    return Model(
        "hc_transition_neural",
        _neural_forward,
        init=_init_neural,
        layers=layers,
        refs=refs,
        dims={"nO": nO},
        attrs={"kind": "neural", "max_length": max_length, "n_slots": N_SLOTS},
    )


def _init_neural(model: Model, X=None, Y=None) -> Model:
    tok2vec = model.get_ref("tok2vec")
    tok2vec.initialize(X=X)
    width = tok2vec.get_dim("nO")
    if model.get_dim("nO") is not None:
        model.get_ref("output").set_dim("nO", model.get_dim("nO"), force=True)
    sample = model.ops.alloc2f(2, width * N_SLOTS)
    model.get_ref("scorer").initialize(X=sample)
    if model.has_ref("start_scorer"):
        model.get_ref("start_scorer").initialize(X=[model.ops.alloc2f(3, width)])
    return model


def _neural_forward(model: Model, X, is_train: bool):
    """``SpanBatch`` -> ``StepScorer`` (no gradient); ``SlotBatch`` -> ``SlotScores`` and backprop."""
    tok2vec, scorer = model.get_ref("tok2vec"), model.get_ref("scorer")
    if isinstance(X, SpanBatch):
        tokvecs = tok2vec.predict(list(X.docs))
        spans, sentences = segment_docs(X.docs, X.spans, _neural_starts(model, X, tokvecs), model.attrs["max_length"])
        firsts = first_rows(X.docs, spans)
        sizes = [end - start for doc_spans in spans for start, end in doc_spans]

        def no_backprop(dY):
            raise ValueError("a StepScorer has no gradient: train with begin_update(SlotBatch(docs, rows))")

        return StepScorer(vector_table(tokvecs), firsts, sizes, scorer, spans, sentences), no_backprop
    docs, rows = X
    tokvecs, bp_tokvecs = tok2vec(list(docs), is_train)
    table = vector_table(tokvecs)
    if len(rows):
        moves, bp_moves = scorer(table[rows].reshape(len(rows), -1), is_train)
    else:
        moves, bp_moves = model.ops.alloc2f(0, model.get_ref("output").get_dim("nO")), None
    if model.has_ref("start_scorer"):
        starts, bp_starts = model.get_ref("start_scorer")(tokvecs, is_train)
    else:
        starts, bp_starts = [model.ops.alloc1f(0) for _ in docs], None

    def backprop(d: SlotScores) -> List:
        d_table = model.ops.alloc2f(*table.shape)
        if bp_moves is not None:
            d_rows = np.asarray(bp_moves(d.moves)).reshape(len(rows) * N_SLOTS, -1)
            model.ops.scatter_add(
                d_table, np.ascontiguousarray(rows.ravel(), dtype="i"), np.ascontiguousarray(d_rows, dtype="f")
            )
        offsets = np.cumsum([0] + [len(doc) for doc in docs])
        d_tokvecs = [d_table[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
        if bp_starts is not None and d.starts:
            d_tokvecs = [a + b for a, b in zip(d_tokvecs, bp_starts([model.ops.asarray1f(x) for x in d.starts]))]
        bp_tokvecs(d_tokvecs)
        return []

    return SlotScores(moves, starts), backprop


def _neural_starts(model: Model, X: SpanBatch, tokvecs) -> List[Optional[np.ndarray]]:
    """Per doc to segment (spans None) where the start scorer's logit is positive; None for the
    others, and for every doc without a scorer."""
    todo = [i for i, spans in enumerate(X.spans) if spans is None and len(X.docs[i])]
    out: List[Optional[np.ndarray]] = [None] * len(X.docs)
    if not todo or not model.has_ref("start_scorer"):
        return out
    logits = model.get_ref("start_scorer").predict([tokvecs[i] for i in todo])
    for i, values in zip(todo, logits):
        out[i] = np.asarray(model.ops.to_numpy(values)) > 0.0
    return out


def vector_table(tokvecs) -> np.ndarray:
    """All docs' token vectors in one table with a zero row last (empty slots and the root)."""
    arrays = [np.asarray(v, dtype="f") for v in tokvecs]
    width = arrays[0].shape[1] if arrays else 0
    return np.concatenate(arrays + [np.zeros((1, width), dtype="f")])


def first_rows(docs: Sequence[Doc], spans: Sequence[Sequence[Span]]) -> List[int]:
    """Token table row of the token before each span's first word (so word m is row first + m)."""
    out, base = [], 0
    for doc, doc_spans in zip(docs, spans):
        out.extend(base + start - 1 for start, _ in doc_spans)
        base += len(doc)
    return out


def slot_rows(slots: np.ndarray, first: int, null: int) -> np.ndarray:
    """Token table rows of slot words (``transition.features.slot_words``: span words ``1..n``,
    ``0`` the root, ``-1`` empty) of a span whose word m is row ``first + m``; ``null`` the zero row."""
    return np.where(slots > 0, slots + first, null)


class StepScorer:
    """The neural scorer with its Maxout's input layer precomputed per token (spaCy's parser's trick).

    The Maxout's pre-activation is affine in the concatenated slot vectors, so it is the sum over
    slots of ``table[row] @ W_slot.T``. ``group`` computes that once per token and slot for the
    tokens of some spans; a configuration then costs ``N_SLOTS`` row additions instead of a
    ``N_SLOTS * width`` by ``nO * nP`` product, which halves the work at two moves per word. The
    precomputed block takes ``N_SLOTS * nO * nP`` floats per token, so callers precompute groups
    of spans of bounded size, not the whole batch."""

    def __init__(self, table: np.ndarray, firsts: List[int], sizes: List[int], scorer: Model,
                 spans: List[List[Span]], sentences: List[Optional[List[int]]]) -> None:
        self.table = table  # the token table (zero row last)
        self.firsts = firsts
        self.sizes = sizes  # words per span
        self.spans = spans  # per doc the spans it scores (given, or the model's segmentation)
        self.sentences = sentences  # per doc where the model's sentences begin; None where given
        leaves = [layer for layer in scorer.walk(order="dfs_pre") if not layer.layers]
        at = [layer.name for layer in leaves].index("maxout")
        self.maxout = leaves[at]
        self.after = leaves[at + 1 :]  # LayerNorm, Dropout, the output Linear, in order

    def group(self, lo: int, hi: int) -> "GroupScorer":
        """The scorer of spans ``lo..hi-1``, their tokens' hidden contributions precomputed."""
        start, end = self.firsts[lo] + 1, self.firsts[hi - 1] + self.sizes[hi - 1] + 1
        sub = np.concatenate([self.table[start:end], self.table[-1:]])  # the zero row last, as in table
        W = self.maxout.get_param("W")
        n_out, n_pieces, n_in = W.shape
        width = n_in // N_SLOTS
        flat = np.ascontiguousarray(W.reshape(n_out * n_pieces, N_SLOTS, width).transpose(2, 1, 0))
        hidden = (sub @ flat.reshape(width, N_SLOTS * n_out * n_pieces)).reshape(len(sub), N_SLOTS, n_out * n_pieces)
        firsts = [f - start for f in self.firsts[lo:hi]]
        return GroupScorer(hidden, firsts, len(sub) - 1, self.maxout.get_param("b"), self.after)


class GroupScorer:
    """Move scores of configurations of some spans: ``scores(rows)`` with ``(k, N_SLOTS)`` rows
    (word m of the group's span i at ``firsts[i] + m``, empty slots and the root at ``null``)."""

    def __init__(self, hidden: np.ndarray, firsts: List[int], null: int, bias: np.ndarray, after: List[Model]):
        self.hidden = hidden  # (n_rows, N_SLOTS, nO * nP): each row's contribution per slot; zeros at null
        self.firsts = firsts
        self.null = null
        self.bias = bias
        self.after = after

    def scores(self, rows: np.ndarray) -> np.ndarray:
        """``(len(rows), n_classes)``: the scorer applied to the concatenated slot vectors, up to
        float rounding."""
        Z = _gathered_maxout(self.hidden, rows, self.bias)
        for layer in self.after:
            Z = layer.predict(Z)
        return np.asarray(Z)


@njit(cache=True)
def _gathered_maxout(hidden: np.ndarray, rows: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``max_p (sum_k hidden[rows[:, k], k] + bias)[:, o, p]``: the Maxout's output for each
    configuration, without materializing the gathered ``(n, N_SLOTS, nO * nP)`` block."""
    n_out, n_pieces = bias.shape
    out = np.empty((rows.shape[0], n_out), dtype=np.float32)
    acc = np.empty(n_out * n_pieces, dtype=np.float32)
    for r in range(rows.shape[0]):
        acc[:] = bias.ravel()
        for k in range(rows.shape[1]):
            acc += hidden[rows[r, k], k]
        for o in range(n_out):
            best = acc[o * n_pieces]
            for p in range(1, n_pieces):
                best = max(best, acc[o * n_pieces + p])
            out[r, o] = best
    return out
