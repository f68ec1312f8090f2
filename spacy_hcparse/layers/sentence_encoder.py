"""Doc-level token vectors -> one (n+1, d) block per parsed span, row 0 a learned root vector."""
from typing import Callable, List, Optional, Tuple

from thinc.api import Model
from thinc.types import Floats2d

Span = Tuple[int, int]
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
    index = [(i, start, end) for i, doc_spans in enumerate(spans) for start, end in doc_spans]
    blocks = [ops.xp.vstack((root[None, :], tokvecs[i][start:end])) for i, start, end in index]
    bp_context = None
    width = root.shape[0]
    if model.layers:
        contexts, bp_context = model.layers[0](blocks, is_train)
        blocks = [ops.xp.hstack((block, context)) for block, context in zip(blocks, contexts)]

    def backprop(d_blocks: List[Floats2d]) -> List[Floats2d]:
        if bp_context is not None:
            d_contexts = bp_context([ops.xp.ascontiguousarray(d[:, width:]) for d in d_blocks])
            d_blocks = [d[:, :width] + d_context for d, d_context in zip(d_blocks, d_contexts)]
        d_tokvecs = [ops.alloc2f(*vecs.shape) for vecs in tokvecs]
        d_root = ops.alloc1f(root.shape[0])
        for (i, start, end), d_block in zip(index, d_blocks):
            d_root += d_block[0]
            d_tokvecs[i][start:end] += d_block[1:]
        model.inc_grad("root", d_root)
        return d_tokvecs

    return blocks, backprop
