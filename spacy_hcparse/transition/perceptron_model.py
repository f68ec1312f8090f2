"""The averaged perceptron transition model (``TransitionModel.v2``), a closed function.

Input: ``PerceptronInput``, the docs and per doc the spans to parse (None: the model segments it),
the tag column's value of each tag, the ROOT label id and the beam width. Forward: [the sentence
classifier (a two-class ``transition.perceptron_tagger``) marks where sentences begin in the docs to
segment] -> the spans' word attribute rows (``span_rows``) -> the tagger layer fills the tag
column of rows from docs without tags -> greedy or beam search (``transition.search``) over the
hashed templates, scored with the parser's weights (``layers.sparse_linear``) ->
``TransitionParses``. No backprop: ``transition.perceptron_learner`` trains copies of the weights
(``perceptron_weights``) and writes their averages into the model (``set_perceptron_weights``).
"""
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import LOWER, PREFIX, SHAPE, SUFFIX, TAG
from spacy.tokens import Doc
from thinc.api import Model

from ..layers.sparse_linear import sparse_linear
from ..names import Span
from ..segment import segment_docs, span_whitespace
from .moves import LAYOUT, n_classes
from .perceptron_tagger import perceptron_tagger
from .search import beam_parse, greedy_parse
from .tagging import fill_tags, tagger_templates
from .templates import N_ATTRS, TEMPLATE_SETS, get_templates, token_attrs
from .transition_types import TransitionParses

SENTENCE_START = 1  # the sentence classifier's class for "this token starts a sentence"


class SpanRows(NamedTuple):
    """Word attribute rows (``transition.templates.token_attrs``) of spans one after another."""

    attrs: np.ndarray  # (n_rows, N_ATTRS) int64, each span's root row first
    offsets: np.ndarray  # (n_spans + 1,) int64: span s is rows offsets[s]..offsets[s+1]-1
    untagged: np.ndarray  # (n_rows,) bool: words of docs without tags (the tag column holds a stand-in)


class PerceptronInput(NamedTuple):
    docs: Sequence[Doc]
    spans: Sequence[Optional[Sequence[Span]]]  # per doc the spans to parse; None: the model segments it
    tag_values: np.ndarray  # (n_tags,) int64: the tag column's value for each tag id (the tag's hash)
    root_label: int  # label id of ROOT
    beam_width: int = 1  # 1: greedy
    n_labels: Optional[int] = None  # the labels 0..n_labels-1 may be predicted; None: all the model's
    layout: int = LAYOUT  # the weights' move-class layout (``transition.moves``)


class PerceptronFeatures(NamedTuple):
    """What training needs to hash features as the model does."""

    templates: np.ndarray  # the parser's, transition.templates.get_templates
    mask: np.int64  # the parser's number of buckets minus one
    tag_templates: np.ndarray  # the tagger's, transition.tagging.tagger_templates
    tag_mask: np.int64
    jackknife_tags: bool  # train the parser on jackknifed tags (transition.tagger_trainer)
    sentence_templates: Optional[np.ndarray]  # the sentence classifier's (None: the model has none)
    sentence_mask: np.int64


class PerceptronWeights(NamedTuple):
    """The perceptron model's flat hashed weights (``layers.sparse_linear``)."""

    parser: np.ndarray
    tagger: np.ndarray
    sentences: Optional[np.ndarray]  # the sentence classifier's; None without one


def perceptron_model(templates: str, n_buckets: int, tag_buckets: int, max_length: int, nO: Optional[int],
                     tagger_templates: str, jackknife_tags: bool, sentence_buckets: int) -> Model:
    """The perceptron model (arguments as ``TransitionModel.v2``'s); the component sets ``nO``
    (move classes) and ``nT`` (tags) before initializing it."""
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
        attrs={"templates": templates, "jackknife_tags": jackknife_tags, "max_length": max_length},
    )


def _init_perceptron(model: Model, X=None, Y=None) -> Model:
    """Zero weights of the shapes the dims say (``nT`` unset: one tag class, unused)."""
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
    """Segment the docs without spans, tag the untagged rows, search: see the module docstring."""
    docs, given, tag_values, root_label, beam_width, n_labels, layout = X
    spans, sentences = segment_docs(docs, given, _perceptron_starts(model, docs, given), model.attrs["max_length"])
    rows = span_rows(docs, spans)
    attrs, offsets = rows.attrs, rows.offsets
    if len(tag_values) and rows.untagged.any():
        tag_ids = model.get_ref("tagger").predict((attrs, offsets))
        attrs = fill_tags(attrs, rows.untagged, tag_ids, tag_values)
    features = perceptron_features(model)
    heads = np.empty(len(attrs), dtype=np.int64)
    labels = np.empty(len(attrs), dtype=np.int64)
    if n_labels is None or layout != LAYOUT:  # only in LAYOUT are the first labels' classes the first
        n_labels = (model.get_dim("nO") - 1) // 2
    elif n_classes(n_labels) > model.get_dim("nO"):
        raise ValueError(f"hc_transition_perceptron has {model.get_dim('nO')} move classes, fewer than the "
                         f"{n_classes(n_labels)} of {n_labels} labels: grow it with the component's add_label")
    space = space_rows(docs, spans)
    args = (attrs, space, offsets, model.get_ref("linear").get_param("W"), features.templates, features.mask,
            n_labels, root_label)
    if beam_width > 1:
        beam_parse(*args, int(beam_width), heads, labels, int(layout))
    else:
        greedy_parse(*args, heads, labels, int(layout))
    trees = [(heads[lo:hi].copy(), labels[lo + 1 : hi].copy()) for lo, hi in zip(offsets[:-1], offsets[1:])]

    def backprop(dY):
        raise ValueError("hc_transition_perceptron has no gradient: its learner trains its weights")

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
    """The templates and hash masks of the model's parser, tagger and sentence classifier."""
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


def grow_perceptron_classes(model: Model, n_new: int) -> None:
    """``n_new`` more move classes, appended with zero weights: the parser's flat weights
    (``layers.sparse_linear``) keep every existing entry where it is and grow at the end."""
    old = model.get_ref("linear")
    n_out = old.get_dim("nO") + n_new
    linear = sparse_linear(old.get_dim("nB"), nO=n_out)
    linear.set_param("W", np.concatenate([old.get_param("W"), np.zeros(n_new, dtype="f")]))
    model.layers[model.layers.index(old)] = linear  # a new layer, as thinc's resize makes
    model.set_ref("linear", linear)
    model.set_dim("nO", n_out, force=True)


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
