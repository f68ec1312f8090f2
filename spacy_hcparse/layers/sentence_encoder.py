"""Doc-level token vectors -> one (n+1, d) block per parsed span, row 0 a learned root vector."""
from typing import Callable, List, Optional, Tuple

from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats2d

Span = Tuple[int, int]
InT = Tuple[List[Doc], List[List[Span]]]


def sentence_encoder(
    tok2vec: Model[List[Doc], List[Floats2d]],
    context: Optional[Model[List[Floats2d], List[Floats2d]]] = None,
) -> Model[InT, List[Floats2d]]:
    """Run ``tok2vec`` over whole docs, cut the output into the given spans, prepend the root.

    Input: the docs and, per doc, its spans (``(start, end)`` token offsets, e.g. from
    ``segment.sentence_spans``); output: one block per span, docs in order, spans in order.

    ``context`` (e.g. a BiLSTM) then runs over each span, root row included, and its output is
    concatenated to the tok2vec rows: blocks are ``[tok2vec; context]``, of width
    ``nI + context.nO``. The skip connection keeps the tok2vec features (which the scorers learn
    from quickly) beside the slower-to-train long-range context.
    """
    layers = [tok2vec] if context is None else [tok2vec, context]
    return Model(
        "sentence_encoder",
        forward,
        init=init,
        layers=layers,
        params={"root": None},
        dims={"nI": None, "nO": None},
        refs={"tok2vec": tok2vec},
    )


def init(model: Model, X: Optional[InT] = None, Y=None) -> Model:
    tok2vec = model.layers[0]
    if X is not None:
        tok2vec.initialize(X=X[0])
    if not model.has_dim("nI"):
        model.set_dim("nI", tok2vec.get_dim("nO"))
    width = model.get_dim("nI")
    model.set_param("root", model.ops.alloc1f(width))
    if len(model.layers) > 1:
        blocks = None if X is None else [model.ops.alloc2f(3, width)]
        model.layers[1].initialize(X=blocks)
        width += model.layers[1].get_dim("nO")
    model.set_dim("nO", width, force=True)
    return model


def forward(model: Model, X: InT, is_train: bool) -> Tuple[List[Floats2d], Callable]:
    ops = model.ops
    docs, spans = X
    tokvecs, bp_tok2vec = model.layers[0](docs, is_train)
    root = model.get_param("root")
    index = [(i, start, end) for i, doc_spans in enumerate(spans) for start, end in doc_spans]
    blocks = [ops.xp.vstack((root[None, :], tokvecs[i][start:end])) for i, start, end in index]
    bp_context = None
    width = root.shape[0]
    if len(model.layers) > 1:
        contexts, bp_context = model.layers[1](blocks, is_train)
        blocks = [ops.xp.hstack((block, context)) for block, context in zip(blocks, contexts)]

    def backprop(d_blocks: List[Floats2d]) -> List[Doc]:
        if bp_context is not None:
            d_contexts = bp_context([ops.xp.ascontiguousarray(d[:, width:]) for d in d_blocks])
            d_blocks = [d[:, :width] + d_context for d, d_context in zip(d_blocks, d_contexts)]
        d_tokvecs = [ops.alloc2f(*vecs.shape) for vecs in tokvecs]
        d_root = ops.alloc1f(root.shape[0])
        for (i, start, end), d_block in zip(index, d_blocks):
            d_root += d_block[0]
            d_tokvecs[i][start:end] += d_block[1:]
        model.inc_grad("root", d_root)
        return bp_tok2vec(d_tokvecs)

    return blocks, backprop
