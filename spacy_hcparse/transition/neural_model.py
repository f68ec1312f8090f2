"""The neural transition model (``NeuralTransitionModel.v2``), a closed function of its input.

A spaCy Tok2Vec; the vectors of the stack/buffer positions (``transition.templates.SLOTS``) are
concatenated and scored by Maxout -> Linear; with ``sentence_width > 0`` it also scores where
sentences begin (``layers.sentence_starts`` over the token vectors).

- ``predict(SpanBatch(docs, spans))`` returns a ``StepScorer`` (the Maxout's input layer
  precomputed per token, as in spaCy's parser, and the spans to parse: the given ones, or the
  model's segmentation, ``segment.segment_docs``) that the search loop
  (``transition.search.greedy_batch``) asks for the move scores of configurations.
- ``begin_update(SlotBatch(docs, rows))`` returns ``SlotScores`` (the move scores of the
  configurations whose slot words are ``rows``, and the sentence-start logits of each doc) and one
  backprop through the scorers and the Tok2Vec.

Token table: all docs' token vectors one after another, then a zero row for empty slots and the
root. Word ``m`` (1-based) of a span is row ``first + m``, with ``first`` from ``first_rows``; the
zero row is the number of tokens (``slot_rows``).
"""
from typing import List, NamedTuple, Optional, Sequence

import numpy as np
from spacy.tokens import Doc
from thinc.api import Linear, Maxout, Model, chain
from thinc.layers.resizable import resize_linear_weighted
from thinc.types import Floats1d, Floats2d

from ..compiling import njit
from ..layers.sentence_starts import sentence_starts
from ..names import Span
from ..segment import segment_docs
from .templates import N_SLOTS


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


def neural_model(tok2vec: Model[List[Doc], List[Floats2d]], hidden_width: int, maxout_pieces: int,
                 max_length: int, dropout: float, sentence_width: int, nO: Optional[int]) -> Model:
    """The neural model (arguments as ``NeuralTransitionModel.v2``'s); the component sets
    ``nO`` (move classes) before initializing it."""
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
        attrs={"max_length": max_length, "n_slots": N_SLOTS},
    )


def grow_neural_classes(model: Model, n_new: int) -> None:
    """``n_new`` more move classes: the output layer becomes a copy (thinc's
    ``resize_linear_weighted``, a new layer, so the optimizer starts its state afresh) with the
    existing rows in place and zero rows (weights and bias) appended."""
    scorer, old = model.get_ref("scorer"), model.get_ref("output")
    n_out = old.get_dim("nO") + n_new
    output = resize_linear_weighted(old, n_out)
    scorer.layers[scorer.layers.index(old)] = output
    model.set_ref("output", output)
    scorer.set_dim("nO", n_out, force=True)
    model.set_dim("nO", n_out, force=True)


def reorder_neural_classes(model: Model, order: np.ndarray) -> None:
    """The output layer's rows (weights and bias) reordered in place, row ``c`` taking row
    ``order[c]``: each class keeps its own weights, so its scores are exactly as they were."""
    output = model.get_ref("output")
    for name in ("W", "b"):
        output.set_param(name, output.get_param(name)[order].copy())


def _init_neural(model: Model, X=None, Y=None) -> Model:
    """The Tok2Vec on the sample docs ``X``, then the scorers for its width."""
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
    if isinstance(X, SpanBatch):
        return _step_scorer(model, X), _no_backprop
    return _slot_scores(model, X, is_train)


def _no_backprop(dY):
    raise ValueError("a StepScorer has no gradient: train with begin_update(SlotBatch(docs, rows))")


def _step_scorer(model: Model, X: SpanBatch) -> "StepScorer":
    """The token vectors of the docs, their segmentation where spans are None, and the scorer."""
    tokvecs = model.get_ref("tok2vec").predict(list(X.docs))
    spans, sentences = segment_docs(X.docs, X.spans, _neural_starts(model, X, tokvecs), model.attrs["max_length"])
    firsts = first_rows(X.docs, spans)
    sizes = [end - start for doc_spans in spans for start, end in doc_spans]
    return StepScorer(vector_table(tokvecs), firsts, sizes, model.get_ref("scorer"), spans, sentences)


def _slot_scores(model: Model, X: SlotBatch, is_train: bool):
    """The configurations' move scores and the docs' start logits, with one backprop."""
    docs, rows = X
    tokvecs, bp_tokvecs = model.get_ref("tok2vec")(list(docs), is_train)
    table = vector_table(tokvecs)
    if len(rows):
        moves, bp_moves = model.get_ref("scorer")(table[rows].reshape(len(rows), -1), is_train)
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
    """Per doc to segment (spans None) the start scorer's logits (float64 per token; a start where
    positive); None for the others, and for every doc without a scorer."""
    todo = [i for i, spans in enumerate(X.spans) if spans is None and len(X.docs[i])]
    out: List[Optional[np.ndarray]] = [None] * len(X.docs)
    if not todo or not model.has_ref("start_scorer"):
        return out
    logits = model.get_ref("start_scorer").predict([tokvecs[i] for i in todo])
    for i, values in zip(todo, logits):
        out[i] = np.asarray(model.ops.to_numpy(values), dtype=np.float64).ravel()
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
    """Token table rows of slot words (``transition.templates.slot_words``: span words ``1..n``,
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
