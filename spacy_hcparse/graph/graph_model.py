"""``spacy_hcparse.GraphParserModel.v8``: tok2vec, context encoder, pruning and every scorer,
assembled from registered parts (``graph.graph_parts``), as spaCy's ``Tok2Vec.v2`` is from its
``embed`` and ``encode``; ``.v5`` is the same model from a flat list of sizes (the shipped configs
before ``.v8``: pipelines saved with it load and parse as they did).

The model is a closed function: ``GraphInput`` (docs, their spans, arcs to keep, the factor types
wanted) -> ``GraphScores`` (arc scores, the candidate arcs first-order pruning keeps, sibling and
grandparent scores on the triples the candidates allow, sentence-start and tag logits): in
training a ``TrainingScores`` (with label scores on the arcs the loss reads) and one backprop
that takes a ``TrainingScores`` of gradients; at prediction a ``PredictedScores``, whose decoded
trees' label scores come after decoding, from ``tree_label_scores`` (the encoder's rows travel
in ``PredictedScores.blocks``). Data flow inside:
Docs -> tok2vec (whole docs) -> [sentence starts -> spans of docs to segment] -> span blocks (row
0 the root) -> arc scores -> pruning (``graph.pruning``) -> higher-order and label scores on the
kept structures.
"""
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..decoders.batch import cut
from ..layers import biaffine_label as low_rank_labels, full_label as full_rank_labels
from ..layers.rows import device_arrays, host_arrays
from ..layers.sentence_encoder import sentence_encoder, token_rows
from ..segment import index_groups, segment_docs, span_whitespace
from .graph_parts import (TagHeads, biaffine_arc_scorer, bilstm_context, full_label_scorer, grandparent_scorer,
                          low_rank_label_scorer, sentence_start_scorer, sibling_scorer, tag_scorers)
from .pruning import prune_batch
from .scores import GraphInput, GraphScores, PredictedScores, TrainingScores, candidate_arcs

# Label arcs and factor triples scored in one call at prediction: bounds the scorers'
# intermediate arrays (hundreds of bytes per arc, tens per triple) whatever the batch or doc.
ARCS_PER_GROUP = 8000
TRIPLES_PER_GROUP = 100_000

@registry.architectures("spacy_hcparse.GraphParserModel.v8")
def build_graph_parser_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    arc_scorer: Model,
    sibling_scorer: Model,
    grand_scorer: Model,
    label_scorer: Model,
    context: Optional[Model[List[Floats2d], List[Floats2d]]] = None,
    start_scorer: Optional[Model] = None,
    tags: Optional[TagHeads] = None,
    max_length: int = 100,
    top_k: int = 6,
    higher_order_max_length: int = 100,
    nO: Optional[int] = None,
) -> Model[GraphInput, GraphScores]:
    """The graph parser's model from its parts (each a config block, see ``graph.graph_parts``).

    tok2vec: token vectors of whole docs (any spaCy tok2vec or listener).
    context: a context encoder over each span's tok2vec rows, read beside them
        (``spacy_hcparse.BiLSTMContext.v1``, or ``TorchBiLSTMContext.v1`` with the same parameters
        run by torch's LSTM); None: the scorers read the tok2vec rows alone.
    arc_scorer, sibling_scorer, grand_scorer, label_scorer: the factor scorers
        (``BiaffineArcScorer.v1``, ``SiblingScorer.v1``, ``GrandparentScorer.v1``,
        ``LowRankLabelScorer.v1`` / ``FullLabelScorer.v1`` / ``EncodedLabelScorer.v1``).
    start_scorer: sentence starts (``SentenceStartScorer.v1``), which segment docs without
        sentence boundaries; None: such docs are chunked.
    tags: the auxiliary tag objectives' heads (``TagScorers.v1``); None for none.
    max_length: longest span parsed as one tree (see ``segment.sentence_spans``).
    top_k: heads kept per word by first-order pruning (the root is always kept as well).
    higher_order_max_length: longer spans get no sibling or grandparent factors (their decoding
        is first-order, and memory stays O(n^2)).
    nO: number of labels, inferred by the component at initialization.
    """
    return _build(tok2vec, context, arc_scorer, sibling_scorer, grand_scorer, label_scorer, start_scorer, tags,
                  max_length, top_k, higher_order_max_length, nO)


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
    """``.v8`` from the sizes of its parts, kept for pipelines saved with it (same parameter layout):
    ``lstm_width`` (0: no context) and ``lstm_depth`` the ``BiLSTMContext``; ``arc_width``;
    ``label_rank`` > 0 a ``LowRankLabelScorer`` of ``label_width`` and that rank, 0 a
    ``FullLabelScorer`` of ``label_width``; ``sibling_rank``, ``grand_rank``; ``sentence_width``
    (0: none) the ``SentenceStartScorer``; ``tag_attrs`` the ``TagScorers`` (read from the
    context); ``dropout`` every part's. New configs use ``.v8``."""
    labels = low_rank_label_scorer(label_width, label_rank, dropout, nO) if label_rank > 0 \
        else full_label_scorer(label_width, dropout, nO)
    return _build(
        tok2vec, bilstm_context(lstm_width, lstm_depth, dropout) if lstm_width > 0 else None,
        biaffine_arc_scorer(arc_width, dropout), sibling_scorer(sibling_rank, dropout),
        grandparent_scorer(grand_rank, dropout), labels,
        sentence_start_scorer(sentence_width, dropout) if sentence_width > 0 else None,
        tag_scorers(list(tag_attrs), from_context=True), max_length, top_k, higher_order_max_length, nO)


def _build(tok2vec, context, arc_scorer, sibling_scorer, grand_scorer, label_scorer, start_scorer, tags,
           max_length, top_k, higher_order_max_length, nO) -> Model:
    """The model; its layers in the order pipelines saved with ``.v5`` hold their weights in."""
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    tags = tags if tags is not None else TagHeads((), False, {})
    encoder = sentence_encoder(context)
    scorers = {"arc_scorer": arc_scorer, "sibling_scorer": sibling_scorer, "grand_scorer": grand_scorer,
               "label_scorer": label_scorer}
    heads = {f"tag_scorer_{attr}": tags.layers[attr] for attr in tags.attrs}
    if start_scorer is not None:
        heads["start_scorer"] = start_scorer
    refs = {"tok2vec": tok2vec, "encoder": encoder, **scorers, **heads}
    if label_scorer.name == "label_encoder":  # the scorer with its own context: nO is the inner one's
        refs.update(label_encoder=label_scorer, label_scorer=label_scorer.layers[1])
    return Model(
        "hc_graph_parser",
        forward,
        init=init,
        layers=[tok2vec, encoder, *scorers.values(), *heads.values()],
        refs=refs,
        dims={"nO": nO, **{f"nT_{attr}": None for attr in tags.attrs}},
        attrs={"max_length": max_length, "top_k": top_k, "higher_order_max_length": higher_order_max_length,
               "tag_attrs": tags.attrs, "tags_from_context": tags.from_context},
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
    """Every score of the input's spans; the backprop takes their gradients as a ``TrainingScores``.

    Label scores in training (``TrainingScores``) cover the kept trees' known arcs, word by word,
    with ``X.keep`` given (the gold trees: the loss reads no others), else the candidate arcs; at
    prediction none are computed in advance: ``PredictedScores.blocks`` holds the encoder's rows,
    from which ``tree_label_scores`` scores the decoded trees' arcs.
    """
    ops = model.ops
    tokvecs, bp_tok2vec = _run(model.get_ref("tok2vec"), X.docs, is_train)
    # At prediction the start scorer runs only where a doc has no sentences given (or when asked):
    # its logits would be discarded (the loss reads them in training, given sentences or not).
    segment = is_train or X.starts or any(given is None for given in X.spans)
    starts, bp_starts = _run(model.get_ref("start_scorer"), tokvecs, is_train) \
        if model.has_ref("start_scorer") and segment else ([ops.alloc1f(0)] * len(X.docs), None)
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
    keep = list(X.keep or [])
    keep += [None] * (len(arcs) - len(keep))  # spans past its end (the model's own segmentation) keep none
    host = host_arrays(ops, arcs)  # one copy to the host for all
    longest = model.attrs["higher_order_max_length"]
    higher = [1 < len(a) - 1 <= longest for a in host]
    pruned = prune_batch(host, model.attrs["top_k"], keep, [h and "sib" in X.factors for h in higher],
                         [h and "grand" in X.factors for h in higher])
    masks, sib_triples = pruned.masks, pruned.sib
    sib, bp_sib = _score_triples(model.get_ref("sibling_scorer"), blocks, sib_triples, is_train)
    grand, bp_grand = _score_triples(model.get_ref("grand_scorer"), blocks, pruned.grand, is_train)
    kept_triples = {"sib": sib_triples, "grand": pruned.grand}
    del pruned
    shared = (arcs, masks, sib, grand, higher, frozenset(X.factors), spans, sentences, starts, tags, kept_triples)
    if is_train:
        label_arcs = [_tree_arcs(k, len(m)) for k, m in zip(keep, masks)] if X.keep is not None \
            else [candidate_arcs(m) for m in masks]
        labels, bp_labels = _score_labels(_label_model(model), blocks, label_arcs, is_train)
        scores: GraphScores = TrainingScores(*shared, label_arcs=label_arcs, labels=labels)
    else:
        scores, bp_labels = PredictedScores(*shared, blocks=blocks, spaces=span_whitespace(X.docs, spans)), None

    def backprop(d: TrainingScores) -> List[Doc]:
        as_ops = lambda values: device_arrays(ops, values)  # noqa: E731  (one copy per list)
        add = lambda xs, ys: [a + b for a, b in zip(xs, ys)]  # noqa: E731
        d_tag_rows = None
        for attr, bp in bp_tags.items():
            d_attr = bp(as_ops(d.tags[attr]))
            d_tag_rows = d_attr if d_tag_rows is None else add(d_tag_rows, d_attr)
        d_blocks = add(bp_labels(as_ops(d.labels)), bp_arcs(as_ops(d.arcs)))
        for bp, d_values in ((bp_sib, d.sib), (bp_grand, d.grand)):
            if bp is not None:  # None: the batch had no triples of that type
                d_blocks = add(d_blocks, bp(as_ops(d_values)))
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
    is positive or after a blank line, chunked where it is highest; without a start scorer,
    chunks of the whole doc, each a sentence)."""
    logits = host_arrays(model.ops, starts) if any(len(doc_logits) for doc_logits in starts) else starts
    begins = [np.asarray(doc_logits, dtype=np.float64) if len(doc_logits) else None for doc_logits in logits]
    return segment_docs(X.docs, X.spans, begins, model.attrs["max_length"])


def _label_model(model: Model) -> Model:
    """What scores labels: the label scorer, or the label encoder around it
    (``EncodedLabelScorer.v1``)."""
    return model.get_ref("label_encoder") if model.has_ref("label_encoder") else model.get_ref("label_scorer")


def _run(layer: Model, X, is_train: bool):
    """``layer(X, is_train)``; at prediction without a backprop, so that nothing the backprop
    would need (every intermediate activation) stays alive while the rest is scored."""
    return layer(X, is_train) if is_train else (layer.predict(X), None)


def _score_triples(scorer: Model, blocks, triples, is_train: bool):
    """Scores of each block's triples; at prediction in groups of about ``TRIPLES_PER_GROUP``.
    Without any triple in the batch (a factor the decoder or the loss does not read) the scorer
    does not run (its projections of every row would be thrown away): empty scores and no
    backprop."""
    if not any(len(t) for t in triples):
        return [scorer.ops.alloc1f(0)] * len(blocks), None
    return _in_groups(scorer, blocks, triples, is_train, TRIPLES_PER_GROUP)


def _score_labels(scorer: Model, blocks, label_arcs, is_train: bool):
    """Label scores of each block's arcs; at prediction in groups of about ``ARCS_PER_GROUP``."""
    return _in_groups(scorer, blocks, label_arcs, is_train, ARCS_PER_GROUP)


def tree_label_scores(model: Model, scores: PredictedScores, trees: Sequence[np.ndarray],
                      spans: Optional[Sequence[int]] = None) -> List[np.ndarray]:
    """Per tree the (n, L) float64 label scores of its arcs (row ``m - 1`` for word ``m``), scored
    together from the encoder rows a prediction kept (``PredictedScores.blocks``; ``trees[k]``:
    heads (n+1,), root at 0, of span ``spans[k]``, by default spans 0, 1, ...), brought to numpy in
    one transfer."""
    spans = list(range(len(trees))) if spans is None else list(spans)
    arcs = [np.stack([heads[1:], np.arange(1, len(heads))], axis=1).astype(np.int32) for heads in trees]
    rows, _ = _score_labels(_label_model(model), [scores.blocks[i] for i in spans], arcs, False)
    if not rows:
        return []
    flat = np.asarray(model.ops.to_numpy(model.ops.xp.concatenate(rows)), dtype=np.float64)
    return cut(flat, [len(a) for a in arcs])


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
