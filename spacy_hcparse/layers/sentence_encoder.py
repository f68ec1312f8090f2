"""Doc-level token vectors -> one (n+1, d) block per parsed span, row 0 a learned root vector
(``sentence_encoder``), and blocks -> token rows again (``token_rows``)."""
from typing import Callable, List, NamedTuple, Optional, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Floats2d

from ..names import Span
from .rows import row_offsets, split_rows

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
    """All blocks in one gather from ``[root; every doc's rows]`` (host indices, one device call),
    cut into views; the context, where there is one, runs beside them (``beside_context``)."""
    ops, xp = model.ops, model.ops.xp
    tokvecs, spans = X
    root = model.get_param("root")
    where = BlockRows.of(spans, [len(vecs) for vecs in tokvecs])
    if not where.sizes:
        return [], lambda d_blocks: [ops.alloc2f(*vecs.shape) for vecs in tokvecs]
    rows = xp.vstack([root[None, :], *tokvecs])[ops.asarray_i(where.gather)]
    blocks = split_rows(rows, where.sizes)
    bp_context = None
    if model.layers:
        blocks, bp_context = beside_context(ops, model.layers[0], blocks, is_train)

    def backprop(d_blocks: List[Floats2d]) -> List[Floats2d]:
        if bp_context is not None:
            d_blocks = bp_context(d_blocks)
        d_rows = stacked(xp, d_blocks)
        model.inc_grad("root", d_rows[ops.asarray_i(where.roots)].sum(axis=0))
        d_tokens = ops.alloc2f(sum(where.doc_lengths), d_rows.shape[1])
        scatter_rows(ops, d_tokens, where.tokens, d_rows[ops.asarray_i(where.token_rows)], where.unique)
        return split_rows(d_tokens, where.doc_lengths)

    return blocks, backprop


def beside_context(ops, context: Model[List[Floats2d], List[Floats2d]], blocks: List[Floats2d],
                   is_train: bool) -> Tuple[List[Floats2d], Callable]:
    """Each (n, d) block with ``context``'s output for it beside it: ``[block; context(blocks)]``,
    a skip connection around ``context``, joined for all blocks at once (views of one array). The
    backprop takes the joined rows' gradients and returns the blocks' (the direct part plus what
    flows back through ``context``)."""
    xp = ops.xp
    width = blocks[0].shape[1] if blocks else 0
    sizes = [len(block) for block in blocks]
    contexts, bp_context = context(blocks, is_train)
    if not blocks:
        return [], lambda d_joined: []
    joined = split_rows(xp.hstack((stacked(xp, blocks), stacked(xp, contexts))), sizes)

    def backprop(d_joined: List[Floats2d]) -> List[Floats2d]:
        d_all = stacked(xp, d_joined)
        d_contexts = bp_context(split_rows(xp.ascontiguousarray(d_all[:, width:]), sizes))
        return split_rows(d_all[:, :width] + stacked(xp, d_contexts), sizes)

    return joined, backprop


def span_index(spans: List[List[Span]]) -> List[Tuple[int, int, int]]:
    """``(doc, start, end)`` of every span, in the order of the blocks."""
    return [(i, start, end) for i, doc_spans in enumerate(spans) for start, end in doc_spans]


class BlockRows(NamedTuple):
    """Host indices between the blocks' stacked rows (block ``b`` at ``offsets[b]``, its row 0 the
    root) and the docs' token rows stacked (doc ``i`` at ``sum(doc_lengths[:i])``):

    - ``gather``: per block row, its row in ``[root; token rows]`` (0: the root);
    - ``roots``: the block rows that are roots; ``token_rows``: the others, and ``tokens``: the
      token row each of them holds;
    - ``unique``: no token is in two spans (then a plain assignment scatters gradients)."""

    sizes: List[int]
    doc_lengths: List[int]
    gather: np.ndarray
    roots: np.ndarray
    token_rows: np.ndarray
    tokens: np.ndarray
    unique: bool

    @classmethod
    def of(cls, spans: List[List[Span]], doc_lengths: List[int]) -> "BlockRows":
        index = np.array(span_index(spans), dtype=np.int64).reshape(-1, 3)  # (doc, start, end) rows
        words = index[:, 2] - index[:, 1]
        sizes = (words + 1).tolist()
        offsets = row_offsets(sizes)
        gather = np.zeros(sum(sizes), dtype=np.int64)
        # token k of block b: row offsets[b] + 1 + k holds token row 1 + doc start + span start + k
        block = np.repeat(np.arange(len(index)), words)
        k = np.arange(len(block)) - np.repeat(np.cumsum(words) - words, words)
        first = 1 + row_offsets(doc_lengths)[index[:, 0]] + index[:, 1]
        gather[offsets[block] + 1 + k] = first[block] + k
        is_token = gather > 0
        tokens = gather[is_token] - 1
        unique = not len(tokens) or int(np.bincount(tokens).max()) <= 1
        return cls(sizes, list(doc_lengths), gather, offsets, np.flatnonzero(is_token), tokens, unique)


def stacked(xp, arrays: List[Floats2d]) -> Floats2d:
    """The arrays' rows in one array (the one array itself when there is one)."""
    return arrays[0] if len(arrays) == 1 else xp.vstack(arrays)


def scatter_rows(ops, target: Floats2d, rows: np.ndarray, values: Floats2d, unique: bool) -> None:
    """``target[rows] += values`` (host ``rows``): a plain assignment where ``rows`` are ``unique``
    and ``target`` is zero there, else ``ops.scatter_add``."""
    if unique:
        target[ops.asarray_i(rows)] = values
    else:
        ops.scatter_add(target, ops.asarray_i(rows), values)


def token_rows(ops, tokvecs: List[Floats2d], blocks: List[Floats2d], spans: List[List[Span]],
               width: int) -> Tuple[List[Floats2d], Callable]:
    """Per doc an (n_tokens, ``width``) array of the encoder's rows: each token's row of the block
    of the span that covers it (``blocks`` in ``sentence_encoder``'s order, row 0 the root); a
    token no span covers keeps its tok2vec vector, zero-padded. The backprop returns the
    gradients of the blocks and of the tok2vec vectors (non-zero for uncovered tokens only).
    Every doc's rows are views of one array, written by two scatters."""
    xp = ops.xp
    where = BlockRows.of(spans, [len(vecs) for vecs in tokvecs])
    total = sum(where.doc_lengths)
    d_in = tokvecs[0].shape[1] if tokvecs else 0
    uncovered = np.ones(total, dtype=bool)
    uncovered[where.tokens] = False
    uncovered_rows = np.flatnonzero(uncovered)
    rows = ops.alloc2f(total, width)
    if len(uncovered_rows):
        rows[ops.asarray_i(uncovered_rows), :d_in] = stacked(xp, tokvecs)[ops.asarray_i(uncovered_rows)]
    if where.sizes:
        rows[ops.asarray_i(where.tokens)] = stacked(xp, blocks)[ops.asarray_i(where.token_rows)]

    def backprop(d_rows: List[Floats2d]) -> Tuple[List[Floats2d], List[Floats2d]]:
        d_all = stacked(xp, d_rows) if d_rows else ops.alloc2f(0, width)
        d_blocks = ops.alloc2f(sum(where.sizes), width)
        if where.sizes:
            d_blocks[ops.asarray_i(where.token_rows)] = d_all[ops.asarray_i(where.tokens)]
        d_tokvecs = ops.alloc2f(total, d_in)
        if len(uncovered_rows):
            d_tokvecs[ops.asarray_i(uncovered_rows)] = d_all[ops.asarray_i(uncovered_rows), :d_in]
        return split_rows(d_blocks, where.sizes), split_rows(d_tokvecs, where.doc_lengths)

    return split_rows(rows, where.doc_lengths), backprop
