"""``spacy_hcparse.GraphParserModel.v1``/``.v2``/``.v4``/``.v5``/``.v6``: tok2vec, pruning and every scorer.

The model is a closed function: ``GraphInput`` (docs, their spans, arcs to keep, the factor types
wanted) -> ``GraphScores`` (arc scores, the candidate arcs first-order pruning keeps, sibling and
grandparent scores on the triples the candidates allow, label scores (on the arcs the loss reads
in training, on demand at prediction); for ``.v4`` and later also sentence-start and tag logits), and one
backprop that takes a ``GraphScores`` of gradients. Data flow inside: Docs -> tok2vec (whole
docs) -> [sentence starts -> spans of docs to segment] -> span blocks (row 0 the root) -> arc
scores -> pruning (``graph.pruning``) -> higher-order and label scores on the kept structures.
"""
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, with_array, with_padded
from thinc.types import Floats2d

from ..graph.scores import GraphInput, GraphScores, candidate_arcs, triples_of
from ..layers.biaffine_arc import biaffine_arc
from ..layers import biaffine_label as low_rank_labels, full_label as full_rank_labels
from ..layers.biaffine_label import biaffine_label
from ..layers.full_label import full_label
from ..layers.label_encoder import label_encoder
from ..layers.lstm import lstm
from ..layers.sentence_encoder import sentence_encoder, token_rows
from ..layers.sentence_starts import sentence_starts
from ..layers.trilinear import trilinear
from ..graph.pruning import candidate_heads, grandparent_triples, sibling_triples
from ..segment import index_groups, segment_docs

# Label arcs and factor triples scored in one call at prediction: bounds the scorers'
# intermediate arrays (hundreds of bytes per arc, tens per triple) whatever the batch or doc.
ARCS_PER_GROUP = 8000
TRIPLES_PER_GROUP = 100_000


def _architecture(linear_labels: bool, doc: str) -> Callable[..., Model]:
    """``.v1``/``.v2``: the same arguments (spaCy validates configs against this signature),
    differing only in the label scorer's linear terms."""

    def build(
        tok2vec: Model[List[Doc], List[Floats2d]],
        lstm_width: int = 0,
        lstm_depth: int = 1,
        max_length: int = 100,
        arc_width: int = 256,
        label_width: int = 96,
        label_rank: int = 128,
        sibling_rank: int = 64,
        grand_rank: int = 64,
        dropout: float = 0.25,
        top_k: int = 6,
        higher_order_max_length: int = 100,
        nO: Optional[int] = None,
    ) -> Model[GraphInput, GraphScores]:
        scorers = {
            "arc_scorer": biaffine_arc(arc_width, dropout),
            "sibling_scorer": trilinear("sibling_scorer", sibling_rank, dropout, null_middle=True),
            "grand_scorer": trilinear("grand_scorer", grand_rank, dropout),
            "label_scorer": biaffine_label(label_width, dropout, nO=nO, rank=label_rank, linear=linear_labels),
        }
        return _build(tok2vec, _context(lstm_width, lstm_depth, dropout), scorers, {}, max_length, top_k,
                      higher_order_max_length, nO)

    build.__doc__ = doc
    return build


build_graph_parser_model = registry.architectures("spacy_hcparse.GraphParserModel.v1")(_architecture(
    linear_labels=False, doc="""Graph parser scorers over a spaCy Tok2Vec, with an optional BiLSTM on top.

    lstm_width: output width of the BiLSTM (both directions together); 0 for none.
    max_length: longest span parsed as one tree (see ``segment.sentence_spans``).
    top_k: heads kept per word by first-order pruning (the root is always kept as well).
    higher_order_max_length: longer spans get no sibling or grandparent factors (their decoding
        is first-order, and memory stays O(n^2)).
    dropout: the scorers' dropout; note that spaCy's training overwrites it with its own
        ``dropout`` at every update (``GraphParserModel.v4`` keeps it).
    nO: number of labels, inferred by the component at initialization.
    """))
build_graph_parser_model_v2 = registry.architectures("spacy_hcparse.GraphParserModel.v2")(_architecture(
    linear_labels=True, doc="""``GraphParserModel.v1`` whose label scorer also has linear terms per side
    (``biaffine_label(linear=True)``, Dozat & Manning's label classifier). Same arguments."""))


@registry.architectures("spacy_hcparse.GraphParserModel.v4")
def build_graph_parser_model_v4(
    tok2vec: Model[List[Doc], List[Floats2d]],
    lstm_width: int = 0,
    lstm_depth: int = 1,
    max_length: int = 100,
    arc_width: int = 256,
    label_width: int = 128,
    label_rank: int = 0,
    sibling_rank: int = 64,
    grand_rank: int = 64,
    dropout: float = 0.25,
    top_k: int = 6,
    higher_order_max_length: int = 100,
    sentence_width: int = 64,
    tag_attrs: Sequence[str] = ("POS",),
    nO: Optional[int] = None,
) -> Model[GraphInput, GraphScores]:
    """``GraphParserModel.v2`` with a sentence-start scorer, auxiliary tag scorers and a
    full-rank label scorer; ``dropout`` is the scorers' own (training's ``dropout`` reaches the
    tok2vec only).

    label_rank: 0 for the full-rank biaffine label scorer (``layers.full_label``, Dozat &
        Manning's), > 0 for the low-rank one of ``.v2`` with that rank.
    sentence_width: hidden width of the sentence-start scorer (``layers.sentence_starts``),
        which segments docs without sentence boundaries; 0 for none (docs are then chunked).
    tag_attrs: token attributes (``"POS"``, ``"TAG"``, ``"DEP"``: each word's own label;
        ``"RELPOS"``: each word's head as side, count and part of speech, see
        ``components.base.relative_pos_tags``) whose gold values the encoder also learns to
        predict in training (an auxiliary objective: a part-of-speech, label and attachment
        signal for the shared representation); at prediction they are
        scored only when the input asks (``GraphInput.tags``: a component that writes them; the
        component writes POS and TAG only). Empty for none.
    Other arguments as in ``.v1``.
    """
    if label_rank > 0:
        labels = biaffine_label(label_width, dropout, nO=nO, rank=label_rank, linear=True, fixed_dropout=True)
    else:
        labels = full_label(label_width, dropout, nO=nO)
    scorers = {
        "arc_scorer": biaffine_arc(arc_width, dropout, fixed_dropout=True),
        "sibling_scorer": trilinear("sibling_scorer", sibling_rank, dropout, null_middle=True, fixed_dropout=True),
        "grand_scorer": trilinear("grand_scorer", grand_rank, dropout, fixed_dropout=True),
        "label_scorer": labels,
    }
    heads = {f"tag_scorer_{attr}": with_array(Linear()) for attr in tag_attrs}
    if sentence_width > 0:
        heads["start_scorer"] = sentence_starts(sentence_width, dropout)
    return _build(tok2vec, _context(lstm_width, lstm_depth, dropout), scorers, heads, max_length, top_k,
                  higher_order_max_length, nO, tag_attrs=tuple(tag_attrs))


@registry.architectures("spacy_hcparse.GraphParserModel.v5")
def build_graph_parser_model_v5(
    tok2vec: Model[List[Doc], List[Floats2d]],
    lstm_width: int = 0,
    lstm_depth: int = 1,
    max_length: int = 100,
    arc_width: int = 256,
    label_width: int = 128,
    label_rank: int = 0,
    sibling_rank: int = 64,
    grand_rank: int = 64,
    dropout: float = 0.25,
    top_k: int = 6,
    higher_order_max_length: int = 100,
    sentence_width: int = 64,
    tag_attrs: Sequence[str] = ("POS",),
    nO: Optional[int] = None,
) -> Model[GraphInput, GraphScores]:
    """``GraphParserModel.v4`` whose tag scorers read the encoder's output (``[tok2vec;
    BiLSTM]``, the rows the arc and label scorers read) instead of the tok2vec's: the tags see the
    whole sentence, and the part-of-speech objective trains the BiLSTM too. Same arguments."""
    model = build_graph_parser_model_v4(
        tok2vec, lstm_width, lstm_depth, max_length, arc_width, label_width, label_rank, sibling_rank,
        grand_rank, dropout, top_k, higher_order_max_length, sentence_width, tag_attrs, nO)
    model.attrs["tags_from_context"] = True
    return model


@registry.architectures("spacy_hcparse.GraphParserModel.v6")
def build_graph_parser_model_v6(
    tok2vec: Model[List[Doc], List[Floats2d]],
    lstm_width: int = 0,
    lstm_depth: int = 1,
    max_length: int = 100,
    arc_width: int = 256,
    label_width: int = 128,
    label_rank: int = 0,
    sibling_rank: int = 64,
    grand_rank: int = 64,
    dropout: float = 0.25,
    top_k: int = 6,
    higher_order_max_length: int = 100,
    sentence_width: int = 64,
    sentence_lstm_width: int = 64,
    tag_attrs: Sequence[str] = ("POS",),
    nO: Optional[int] = None,
) -> Model[GraphInput, GraphScores]:
    """``GraphParserModel.v5`` whose sentence-start scorer also reads a BiLSTM run over each whole
    doc (``layers.sentence_starts``' ``context``), not only the tok2vec's few-word window.

    sentence_lstm_width: output width of that BiLSTM (both directions together); 0 for none
        (then the model is ``.v5``'s). It runs only where docs are segmented (training, and
        prediction on docs without sentences). Other arguments as in ``.v5``.
    """
    model = build_graph_parser_model_v5(
        tok2vec, lstm_width, lstm_depth, max_length, arc_width, label_width, label_rank, sibling_rank,
        grand_rank, dropout, top_k, higher_order_max_length, sentence_width, tag_attrs, nO)
    if sentence_width > 0 and sentence_lstm_width > 0:
        context = _context(sentence_lstm_width, 1, dropout)
        model.replace_node(model.get_ref("start_scorer"), sentence_starts(sentence_width, dropout, context))
    return model


@registry.architectures("spacy_hcparse.GraphParserModel.v7")
def build_graph_parser_model_v7(
    tok2vec: Model[List[Doc], List[Floats2d]],
    lstm_width: int = 0,
    lstm_depth: int = 1,
    max_length: int = 100,
    arc_width: int = 256,
    label_width: int = 128,
    label_rank: int = 0,
    sibling_rank: int = 64,
    grand_rank: int = 64,
    dropout: float = 0.25,
    top_k: int = 6,
    higher_order_max_length: int = 100,
    sentence_width: int = 64,
    label_lstm_width: int = 192,
    tag_attrs: Sequence[str] = ("POS",),
    nO: Optional[int] = None,
) -> Model[GraphInput, GraphScores]:
    """``GraphParserModel.v5`` whose label scorer has an encoder of its own: a one-layer BiLSTM
    over the shared encoder's rows, its output beside them (``layers.label_encoder``).

    label_lstm_width: that BiLSTM's output width (both directions together); 0 for none (then
        the model is ``.v5``'s). Other arguments as in ``.v5``.
    """
    model = build_graph_parser_model_v5(
        tok2vec, lstm_width, lstm_depth, max_length, arc_width, label_width, label_rank, sibling_rank,
        grand_rank, dropout, top_k, higher_order_max_length, sentence_width, tag_attrs, nO)
    if label_lstm_width > 0:
        wrapper = label_encoder(_context(label_lstm_width, 1, dropout), model.get_ref("label_scorer"))
        model.layers.append(wrapper)
        model.set_ref("label_encoder", wrapper)
    return model


def _context(lstm_width: int, lstm_depth: int, dropout: float) -> Optional[Model]:
    if lstm_width <= 0:
        return None
    return with_padded(lstm(lstm_width, bi=True, depth=lstm_depth, dropout=dropout))


def _build(tok2vec, context, scorers, heads, max_length, top_k, higher_order_max_length, nO,
           tag_attrs: Tuple[str, ...] = ()) -> Model:
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    encoder = sentence_encoder(context)
    return Model(
        "hc_graph_parser",
        forward,
        init=init,
        layers=[tok2vec, encoder, *scorers.values(), *heads.values()],
        refs={"tok2vec": tok2vec, "encoder": encoder, **scorers, **heads},
        dims={"nO": nO, **{f"nT_{attr}": None for attr in tag_attrs}},
        attrs={"max_length": max_length, "top_k": top_k, "higher_order_max_length": higher_order_max_length,
               "tag_attrs": tag_attrs, "tags_from_context": False},
    )


def init(model: Model, X: Optional[GraphInput] = None, Y=None) -> Model:
    tok2vec = model.get_ref("tok2vec")
    tok2vec.initialize(X=None if X is None else X.docs)
    width = tok2vec.get_dim("nO")
    encoder = model.get_ref("encoder")
    encoder.set_dim("nI", width)
    encoder.initialize()
    if model.has_dim("nO"):
        model.get_ref("label_scorer").set_dim("nO", model.get_dim("nO"))
    sample = [model.ops.alloc2f(4, encoder.get_dim("nO"))]
    arcs = [np.array([[0, 1], [1, 2], [1, 3]])]
    triples = [np.array([[1, 1, 2], [0, 1, 2]])]
    model.get_ref("arc_scorer").initialize(X=sample)
    model.get_ref("sibling_scorer").initialize(X=(sample, triples))
    model.get_ref("grand_scorer").initialize(X=(sample, triples))
    _label_model(model).initialize(X=(sample, arcs))
    tokens = [model.ops.alloc2f(3, width)]
    tag_rows = sample if model.attrs["tags_from_context"] else tokens
    for attr in model.attrs["tag_attrs"]:
        scorer = model.get_ref(f"tag_scorer_{attr}")
        scorer.layers[0].set_dim("nO", model.get_dim(f"nT_{attr}") or 1)
        scorer.initialize(X=tag_rows)
    if model.has_ref("start_scorer"):
        model.get_ref("start_scorer").initialize(X=tokens)
    return model


# The label scorers by node name, and how each grows its label outputs.
LABEL_RESIZERS = {"biaffine_label": low_rank_labels.resized, "full_label": full_rank_labels.resized}


def resize_labels(model: Model, n_labels: int) -> Model:
    """Give the model ``n_labels`` label outputs (labels are only added, at the end): every
    existing label keeps its weights, so its scores on any input are unchanged, and the added
    labels' weights start at zero (see the label scorers' ``resized``). Before initialization
    only the dimension is set. Returns the model, changed in place (its label scorer is a new
    node, sharing the old one's projections)."""
    current = model.get_dim("nO") if model.has_dim("nO") else None
    if current == n_labels:
        return model
    if current is not None and n_labels < current:
        raise ValueError(f"cannot shrink the label outputs from {current} to {n_labels}")
    scorer = model.get_ref("label_scorer")
    if any(scorer.has_param(name) for name in scorer.param_names):
        if scorer.name not in LABEL_RESIZERS:
            raise ValueError(f"no way to resize the label scorer {scorer.name!r}")
        model.replace_node(scorer, LABEL_RESIZERS[scorer.name](scorer, n_labels))
    else:
        scorer.set_dim("nO", n_labels, force=True)
    model.set_dim("nO", n_labels, force=True)
    return model


def forward(model: Model, X: GraphInput, is_train: bool) -> Tuple[GraphScores, Callable]:
    """Every score of the input's spans; the backprop takes their gradients as a ``GraphScores``.

    Label scores in training cover the kept trees' known arcs, word by word, with ``X.keep`` given
    (the gold trees: the loss reads no others), else the candidate arcs; at prediction none are
    computed in advance: ``GraphScores.label_fn`` scores the arcs asked for.
    """
    ops = model.ops
    tokvecs, bp_tok2vec = _run(model.get_ref("tok2vec"), X.docs, is_train)
    # At prediction the start scorer runs only where a doc has no sentences given (or when asked):
    # its logits would be discarded (the loss reads them in training, given sentences or not).
    segment = is_train or X.starts or any(given is None for given in X.spans)
    starts, bp_starts = _run(model.get_ref("start_scorer"), tokvecs, is_train) \
        if model.has_ref("start_scorer") and segment else ([ops.alloc1f(0) for _ in X.docs], None)
    spans, sentences = _spans(model, X, starts)
    encoder = model.get_ref("encoder")
    blocks, bp_encoder = _run(encoder, (tokvecs, spans), is_train)
    tag_attrs = tuple(a for a in model.attrs["tag_attrs"] if is_train or a in X.tags)
    tag_rows, bp_tag_rows = tokvecs, None
    if tag_attrs and model.attrs["tags_from_context"]:
        tag_rows, bp_tag_rows = token_rows(ops, tokvecs, blocks, spans, encoder.get_dim("nO"))
    tags, bp_tags = {}, {}
    for attr in tag_attrs:
        tags[attr], bp_tags[attr] = _run(model.get_ref(f"tag_scorer_{attr}"), tag_rows, is_train)
    arcs, bp_arcs = _run(model.get_ref("arc_scorer"), blocks, is_train)
    keep = X.keep if X.keep is not None else [None] * len(arcs)
    top_k = model.attrs["top_k"]
    masks = [candidate_heads(np.asarray(ops.to_numpy(a), dtype=np.float64), top_k, keep=k)
             for a, k in zip(arcs, keep)]
    longest = model.attrs["higher_order_max_length"]
    higher = [1 < len(mask) - 1 <= longest for mask in masks]
    sib_triples = [triples_of(m, h and "sib" in X.factors, sibling_triples) for m, h in zip(masks, higher)]
    sib, bp_sib = _score_triples(model.get_ref("sibling_scorer"), blocks, sib_triples, is_train)
    del sib_triples  # GraphScores derives them again when needed
    grand_triples = [triples_of(m, h and "grand" in X.factors, grandparent_triples) for m, h in zip(masks, higher)]
    grand, bp_grand = _score_triples(model.get_ref("grand_scorer"), blocks, grand_triples, is_train)
    del grand_triples
    label_scorer = _label_model(model)
    if is_train:
        label_arcs = [_tree_arcs(k, len(m)) for k, m in zip(keep, masks)] if X.keep is not None \
            else [candidate_arcs(m) for m in masks]
        labels, bp_labels = _score_labels(label_scorer, blocks, label_arcs, is_train)
        label_fn = None
    else:
        label_arcs, labels, bp_labels = [_tree_arcs(None, 0) for _ in masks], [], None
        label_fn = _label_fn(label_scorer, blocks)
    scores = GraphScores(arcs, masks, sib, grand, label_arcs, labels, higher, frozenset(X.factors), spans,
                         sentences, starts, tags, label_fn)

    def backprop(d: GraphScores) -> List[Doc]:
        as_ops = lambda values: [ops.asarray(v, dtype="f") for v in values]  # noqa: E731
        add = lambda xs, ys: [a + b for a, b in zip(xs, ys)]  # noqa: E731
        d_tag_rows = None
        for attr, bp in bp_tags.items():
            d_attr = bp(as_ops(d.tags[attr]))
            d_tag_rows = d_attr if d_tag_rows is None else add(d_tag_rows, d_attr)
        d_blocks = bp_labels(as_ops(d.labels))
        d_blocks = add(d_blocks, bp_sib(as_ops(d.sib)))
        d_blocks = add(d_blocks, bp_grand(as_ops(d.grand)))
        d_blocks = add(d_blocks, bp_arcs(as_ops(d.arcs)))
        d_direct = d_tag_rows
        if bp_tag_rows is not None and d_tag_rows is not None:
            d_from_tags, d_direct = bp_tag_rows(d_tag_rows)
            d_blocks = add(d_blocks, d_from_tags)
        d_tokvecs = bp_encoder(d_blocks)
        if d_direct is not None:
            d_tokvecs = add(d_tokvecs, d_direct)
        if bp_starts is not None and d.starts:
            d_tokvecs = add(d_tokvecs, bp_starts(as_ops(d.starts)))
        return bp_tok2vec(d_tokvecs)

    return scores, backprop


def _spans(model: Model, X: GraphInput, starts) -> Tuple[List[List[Tuple[int, int]]], List[Optional[List[int]]]]:
    """Each doc's spans and where its sentences begin: the input's spans (None: the doc's own), or
    the model's segmentation (``segment.segment_docs``: sentences where the start scorer's logit
    is positive or after a blank line, chunked; without a start scorer, chunks of the whole doc,
    each a sentence)."""
    begins = [np.asarray(model.ops.to_numpy(logits)) > 0.0 if len(logits) else None for logits in starts]
    return segment_docs(X.docs, X.spans, begins, model.attrs["max_length"])


def _label_model(model: Model) -> Model:
    """What scores labels: the label scorer, or the label encoder around it (``.v7``)."""
    return model.get_ref("label_encoder") if model.has_ref("label_encoder") else model.get_ref("label_scorer")


def _run(layer: Model, X, is_train: bool):
    """``layer(X, is_train)``; at prediction without a backprop, so that nothing the backprop
    would need (every intermediate activation) stays alive while the rest is scored."""
    return layer(X, is_train) if is_train else (layer.predict(X), None)


def _score_triples(scorer: Model, blocks, triples, is_train: bool):
    """Scores of each block's triples; at prediction in groups of about ``TRIPLES_PER_GROUP``,
    and none at all without triples (a factor the decoder does not use: its projections of every
    row would be thrown away)."""
    if not is_train and not any(len(t) for t in triples):
        return [scorer.ops.alloc1f(0) for _ in blocks], None
    return _in_groups(scorer, blocks, triples, is_train, TRIPLES_PER_GROUP)


def _score_labels(scorer: Model, blocks, label_arcs, is_train: bool):
    """Label scores of each block's arcs; at prediction in groups of about ``ARCS_PER_GROUP``."""
    return _in_groups(scorer, blocks, label_arcs, is_train, ARCS_PER_GROUP)


def _label_fn(scorer: Model, blocks) -> Callable:
    """At prediction: label scores on demand, ``(span indices, per span (C, 2) arcs) -> per span
    (C, L)`` scores, for the arcs a decoder chose (see ``GraphScores.label_fn``)."""

    def score(span_ids, arcs):
        return _score_labels(scorer, [blocks[i] for i in span_ids], list(arcs), False)[0]

    return score


def _in_groups(scorer: Model, blocks, items, is_train: bool, budget: int):
    """``scorer((blocks, items))``: in training in one call (with its backprop); at prediction in
    groups of blocks holding about ``budget`` items, so memory stays bounded."""
    if is_train:
        return scorer((blocks, items), is_train)
    out = []
    for lo, hi in index_groups([len(x) for x in items], budget):
        out.extend(scorer.predict((blocks[lo:hi], items[lo:hi])))
    return out, None


def _tree_arcs(heads: Optional[np.ndarray], size: int) -> np.ndarray:
    """(n', 2) arcs ``(heads[m], m)`` of a tree's known heads (``-1``: unknown), word by word;
    none without a tree."""
    if heads is None:
        return np.zeros((0, 2), dtype=np.int32)
    words = np.arange(1, size)
    known = heads[1:] >= 0
    return np.stack([heads[1:][known], words[known]], axis=1).astype(np.int32)
