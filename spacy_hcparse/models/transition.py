"""Registered architectures of ``hc_transition_parser``, each a closed function of its input.

- ``spacy_hcparse.TransitionModel.v1`` (averaged perceptron). Input: ``PerceptronInput``, the word
  attribute rows of a batch of spans (``span_rows``), the tag column's value of each tag, the ROOT
  label id and the beam width. Forward: the tagger layer (``layers.perceptron_tagger``) fills the
  tag column of rows from docs without tags, then greedy or beam search (``transition.search``)
  over the hashed templates, scored with the parser's weights (``layers.sparse_linear``) -> one
  ``(heads, label ids)`` per span. No backprop: ``learning.perceptron`` and
  ``learning.perceptron_tagger`` train copies of the weights (``perceptron_weights``), and
  ``set_perceptron_weights`` writes their averages into the model.
- ``spacy_hcparse.NeuralTransitionModel.v1``: a spaCy Tok2Vec; the vectors of the stack/buffer
  positions (``transition.features.SLOTS``) are concatenated and scored by Maxout -> Linear.
  ``predict(SpanBatch(docs, spans))`` returns a ``StepScorer`` (the Maxout's input layer
  precomputed per token, as in spaCy's parser) that the search loop
  (``transition.search.greedy_batch``) asks for the move scores of configurations;
  ``begin_update(SlotBatch(docs, rows))`` returns the move scores of the configurations whose slot
  words are ``rows`` and one backprop through the scorer and the Tok2Vec.

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
from thinc.types import Floats2d

from ..layers.perceptron_tagger import perceptron_tagger
from ..layers.sparse_linear import sparse_linear
from ..segment import Span
from ..transition.features import N_ATTRS, N_SLOTS, TEMPLATE_SETS, get_templates, token_attrs
from ..transition.search import beam_parse, greedy_parse
from ..transition.tagging import fill_tags, tagger_templates

# (heads (n+1,) with heads[0] == -1, label ids (n,)) of one span
SpanTree = Tuple[np.ndarray, np.ndarray]


# ----- averaged perceptron ----------------------------------------------------------------------
class SpanRows(NamedTuple):
    """Word attribute rows (``transition.features.token_attrs``) of spans one after another."""

    attrs: np.ndarray  # (n_rows, N_ATTRS) int64, each span's root row first
    offsets: np.ndarray  # (n_spans + 1,) int64: span s is rows offsets[s]..offsets[s+1]-1
    untagged: np.ndarray  # (n_rows,) bool: words of docs without tags (the tag column holds a stand-in)


class PerceptronInput(NamedTuple):
    rows: SpanRows
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


@registry.architectures("spacy_hcparse.TransitionModel.v1")
def build_transition_model(
    templates: str = "zhang_nivre",
    n_buckets: int = 2**22,
    tag_buckets: int = 2**20,
    max_length: int = 200,
    nO: Optional[int] = None,
    tagger_templates: str = "base",
    jackknife_tags: bool = False,
) -> Model[PerceptronInput, List[SpanTree]]:
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
    if templates not in TEMPLATE_SETS:
        raise ValueError(f"unknown template set {templates!r}; expected one of {sorted(TEMPLATE_SETS)}")
    linear = sparse_linear(n_buckets, nO=nO)
    tagger = perceptron_tagger(tag_buckets, tagger_templates)
    return Model(
        "hc_transition_perceptron",
        _perceptron_forward,
        init=_init_perceptron,
        layers=[linear, tagger],
        refs={"linear": linear, "tagger": tagger},
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
    return model


def _perceptron_forward(model: Model, X: PerceptronInput, is_train: bool) -> Tuple[List[SpanTree], Callable]:
    rows, tag_values, root_label, beam_width = X
    attrs, offsets = rows.attrs, rows.offsets
    if len(tag_values) and rows.untagged.any():
        tag_ids = model.get_ref("tagger").predict((attrs, offsets))
        attrs = fill_tags(attrs, rows.untagged, tag_ids, tag_values)
    features = perceptron_features(model)
    heads = np.empty(len(attrs), dtype=np.int64)
    labels = np.empty(len(attrs), dtype=np.int64)
    n_labels = (model.get_dim("nO") - 1) // 2
    args = (attrs, offsets, model.get_ref("linear").get_param("W"), features.templates, features.mask,
            n_labels, root_label)
    if beam_width > 1:
        beam_parse(*args, int(beam_width), heads, labels)
    else:
        greedy_parse(*args, heads, labels)
    trees = [(heads[lo:hi].copy(), labels[lo + 1 : hi].copy()) for lo, hi in zip(offsets[:-1], offsets[1:])]

    def backprop(dY):
        raise ValueError("hc_transition_perceptron has no gradient: learning.perceptron trains its weights")

    return trees, backprop


def perceptron_features(model: Model) -> PerceptronFeatures:
    tagger = model.get_ref("tagger")
    return PerceptronFeatures(
        get_templates(model.attrs["templates"]), np.int64(model.get_ref("linear").get_dim("nB") - 1),
        tagger_templates(tagger.attrs["templates"]), np.int64(tagger.get_dim("nB") - 1),
        bool(model.attrs.get("jackknife_tags", False)),
    )


def perceptron_weights(model: Model) -> Tuple[np.ndarray, np.ndarray]:
    """The parser's and the tagger's weights (flat hashed arrays, ``layers.sparse_linear``)."""
    return model.get_ref("linear").get_param("W"), model.get_ref("tagger").get_param("W")


def set_perceptron_weights(model: Model, parser: np.ndarray, tagger: Optional[np.ndarray] = None) -> None:
    """Write trained (averaged) weights into the model: the one way training changes it.
    ``tagger`` None keeps the tagger's weights."""
    model.get_ref("linear").set_param("W", parser)
    if tagger is not None:
        model.get_ref("tagger").set_param("W", tagger)


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


# ----- neural -----------------------------------------------------------------------------------
class SpanBatch(NamedTuple):
    docs: Sequence[Doc]
    spans: Sequence[Sequence[Span]]  # per doc, the (start, end) spans to parse


class SlotBatch(NamedTuple):
    docs: Sequence[Doc]
    rows: np.ndarray  # (n_configurations, N_SLOTS) token table rows of each configuration's slots


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
    scorer = chain(Maxout(nO=hidden_width, nP=maxout_pieces, dropout=dropout, normalize=True), Linear(nO=nO))
    return Model(
        "hc_transition_neural",
        _neural_forward,
        init=_init_neural,
        layers=[tok2vec, scorer],
        refs={"tok2vec": tok2vec, "scorer": scorer, "output": scorer.layers[-1]},
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
    return model


def _neural_forward(model: Model, X, is_train: bool):
    """``SpanBatch`` -> ``StepScorer`` (no gradient); ``SlotBatch`` -> move scores and backprop."""
    tok2vec, scorer = model.get_ref("tok2vec"), model.get_ref("scorer")
    if isinstance(X, SpanBatch):
        table = vector_table(tok2vec.predict(list(X.docs)))
        firsts = first_rows(X.docs, X.spans)
        sizes = [end - start for doc_spans in X.spans for start, end in doc_spans]

        def no_backprop(dY):
            raise ValueError("a StepScorer has no gradient: train with begin_update(SlotBatch(docs, rows))")

        return StepScorer(table, firsts, sizes, scorer), no_backprop
    docs, rows = X
    tokvecs, bp_tokvecs = tok2vec(list(docs), is_train)
    table = vector_table(tokvecs)
    scores, bp_scores = scorer(table[rows].reshape(len(rows), -1), is_train)

    def backprop(d_scores: Floats2d) -> List:
        d_rows = np.asarray(bp_scores(d_scores)).reshape(len(rows) * N_SLOTS, -1)
        d_table = model.ops.alloc2f(*table.shape)
        model.ops.scatter_add(
            d_table, np.ascontiguousarray(rows.ravel(), dtype="i"), np.ascontiguousarray(d_rows, dtype="f")
        )
        starts = np.cumsum([0] + [len(doc) for doc in docs])
        bp_tokvecs([d_table[a:b] for a, b in zip(starts[:-1], starts[1:])])
        return []

    return scores, backprop


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

    def __init__(self, table: np.ndarray, firsts: List[int], sizes: List[int], scorer: Model) -> None:
        self.table = table  # the token table (zero row last)
        self.firsts = firsts
        self.sizes = sizes  # words per span
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
