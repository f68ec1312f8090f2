"""Doc-level token vectors -> one (n+1, d) block per parsed span, row 0 a learned root vector
(``sentence_encoder``), and blocks -> token rows again (``token_rows``)."""
from typing import Callable, List, Optional, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Floats2d

from ..names import Span

InT = Tuple[List[Floats2d], List[List[Span]]]


def sentence_encoder(
    context: Optional[Model[List[Floats2d], List[Floats2d]]] = None,
) -> Model[InT, List[Floats2d]]:
    """Cut each doc's token vectors (the tok2vec's output) into the given spans, prepend the root.

    Input: per doc its (n_tokens, d) vectors and its spans (``(start, end)`` token offsets, e.g.
    from ``segment.sentence_spans``); output: one block per span, docs in order, spans in order;
    the backprop returns the gradient of each doc's vectors.

    ``context`` (e.g. a BiLSTM) then runs over each span, root row included, and its output is
    concatenated to the tok2vec rows: blocks are ``[tok2vec; context]``, of width
    ``nI + context.nO``. The skip connection keeps the tok2vec features (which the scorers learn
    from quickly) beside the slower-to-train long-range context.
    """
    return Model(
        "sentence_encoder",
        forward,
        init=init,
        layers=[] if context is None else [context],
        params={"root": None},
        dims={"nI": None, "nO": None},
    )


def init(model: Model, X: Optional[InT] = None, Y=None) -> Model:
    """``nI`` (the token vectors' width) must be set, or read from ``X``."""
    if not model.has_dim("nI") or model.get_dim("nI") is None:
        model.set_dim("nI", X[0][0].shape[1])
    width = model.get_dim("nI")
    model.set_param("root", model.ops.alloc1f(width))
    if model.layers:
        model.layers[0].initialize(X=[model.ops.alloc2f(3, width)])
        width += model.layers[0].get_dim("nO")
    model.set_dim("nO", width, force=True)
    return model


def forward(model: Model, X: InT, is_train: bool) -> Tuple[List[Floats2d], Callable]:
    ops = model.ops
    tokvecs, spans = X
    root = model.get_param("root")
    index = span_index(spans)
    blocks = [ops.xp.vstack((root[None, :], tokvecs[i][start:end])) for i, start, end in index]
    bp_context = None
    if model.layers:
        blocks, bp_context = beside_context(ops, model.layers[0], blocks, is_train)

    def backprop(d_blocks: List[Floats2d]) -> List[Floats2d]:
        if bp_context is not None:
            d_blocks = bp_context(d_blocks)
        d_tokvecs = [ops.alloc2f(*vecs.shape) for vecs in tokvecs]
        d_root = ops.alloc1f(root.shape[0])
        for (i, start, end), d_block in zip(index, d_blocks):
            d_root += d_block[0]
            d_tokvecs[i][start:end] += d_block[1:]
        model.inc_grad("root", d_root)
        return d_tokvecs

    return blocks, backprop


def beside_context(ops, context: Model[List[Floats2d], List[Floats2d]], blocks: List[Floats2d],
                   is_train: bool) -> Tuple[List[Floats2d], Callable]:
    """Each (n, d) block with ``context``'s output for it beside it: ``[block; context(blocks)]``,
    a skip connection around ``context``. The backprop takes the joined rows' gradients and
    returns the blocks' (the direct part plus what flows back through ``context``)."""
    width = blocks[0].shape[1] if blocks else 0
    contexts, bp_context = context(blocks, is_train)
    joined = [ops.xp.hstack((block, rows)) for block, rows in zip(blocks, contexts)]

    def backprop(d_joined: List[Floats2d]) -> List[Floats2d]:
        d_contexts = bp_context([ops.xp.ascontiguousarray(d[:, width:]) for d in d_joined])
        return [d[:, :width] + d_context for d, d_context in zip(d_joined, d_contexts)]

    return joined, backprop


def span_index(spans: List[List[Span]]) -> List[Tuple[int, int, int]]:
    """``(doc, start, end)`` of every span, in the order of the blocks."""
    return [(i, start, end) for i, doc_spans in enumerate(spans) for start, end in doc_spans]


def token_rows(ops, tokvecs: List[Floats2d], blocks: List[Floats2d], spans: List[List[Span]],
               width: int) -> Tuple[List[Floats2d], Callable]:
    """Per doc an (n_tokens, ``width``) array of the encoder's rows: each token's row of the block
    of the span that covers it (``blocks`` in ``sentence_encoder``'s order, row 0 the root); a
    token no span covers keeps its tok2vec vector, zero-padded. The backprop returns the
    gradients of the blocks and of the tok2vec vectors (non-zero for uncovered tokens only)."""
    xp = ops.xp
    index = span_index(spans)
    covered = [np.zeros(len(vecs), dtype=bool) for vecs in tokvecs]
    for i, start, end in index:
        covered[i][start:end] = True
    rows = []
    for vecs, mask in zip(tokvecs, covered):
        doc_rows = ops.alloc2f(len(vecs), width)
        if not mask.all():
            doc_rows[:, : vecs.shape[1]] = vecs
        rows.append(doc_rows)
    for (i, start, end), block in zip(index, blocks):
        rows[i][start:end] = block[1:]

    def backprop(d_rows: List[Floats2d]) -> Tuple[List[Floats2d], List[Floats2d]]:
        d_blocks = [ops.alloc2f(*block.shape) for block in blocks]
        for d_block, (i, start, end) in zip(d_blocks, index):
            d_block[1:] = d_rows[i][start:end]
        d_tokvecs = []
        for d, vecs, mask in zip(d_rows, tokvecs, covered):
            d_vecs = ops.alloc2f(*vecs.shape)
            if not mask.all():
                uncovered = xp.asarray(~mask)
                d_vecs[uncovered] = d[uncovered, : vecs.shape[1]]
            d_tokvecs.append(d_vecs)
        return d_blocks, d_tokvecs

    return rows, backprop
