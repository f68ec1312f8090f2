"""Sentence boundaries from token vectors: a logit per token for "this token starts a sentence".

``S[i] = w . relu(W [x_{i-1}; x_i] + b) + c`` over a doc's token vectors ``x`` (the tok2vec's
output over the whole doc, so both sides of a boundary are seen), with a learned vector in place
of ``x_{-1}``. With a ``context`` layer (a BiLSTM over the whole doc), ``x`` is the tok2vec row
and the context's row side by side, so a boundary is judged on more than the few words a CNN
window sees. Input: one (n_tokens, d) array per doc; output: one (n_tokens,) array per doc.
"""
from typing import Callable, List, Optional, Tuple

from thinc.api import Linear, Model, chain, concatenate, noop, with_array
from thinc.types import Floats1d, Floats2d

from .mlp import relu_projection


def sentence_starts(width: int = 64, dropout: float = 0.1,
                    context: Optional[Model[List[Floats2d], List[Floats2d]]] = None,
                    ) -> Model[List[Floats2d], List[Floats1d]]:
    """The scorer: a ReLU layer of ``width`` (fixed ``dropout``) over the token pair, then a logit;
    ``context`` (optional, list in, list out, its ``nO`` set) runs over each doc first."""
    mlp = chain(relu_projection(width, dropout, fixed=True), with_array(Linear(nO=1)))
    # Without a context the node keeps its one layer, so pipelines saved before it load.
    layers = [mlp] if context is None else [mlp, concatenate(noop(), context)]
    return Model("sentence_starts", forward, init=init, layers=layers, params={"before": None},
                 dims={"nI": None}, attrs={"context_width": 0 if context is None else context.get_dim("nO")})


def init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    if not model.has_dim("nI") or model.get_dim("nI") is None:
        model.set_dim("nI", X[0].shape[1])
    width = model.get_dim("nI") + model.attrs["context_width"]
    if len(model.layers) > 1:
        model.layers[1].initialize(X=[model.ops.alloc2f(3, model.get_dim("nI"))])
    model.set_param("before", model.ops.alloc1f(width))
    model.layers[0].initialize(X=[model.ops.alloc2f(2, 2 * width)])
    return model


def forward(model: Model, X: List[Floats2d], is_train: bool) -> Tuple[List[Floats1d], Callable]:
    xp = model.ops.xp
    X, bp_rows = model.layers[1](X, is_train) if len(model.layers) > 1 else (X, lambda dX: dX)
    before = model.get_param("before")
    width = before.shape[0]
    # [:len(x)] keeps an empty doc's pairs empty (0, 2 * width) rather than one row of `before`
    pairs = [xp.hstack((xp.vstack((before[None, :], x[:-1]))[: len(x)], x)) for x in X]
    logits, bp_mlp = model.layers[0](pairs, is_train)

    def backprop(d_logits: List[Floats1d]) -> List[Floats2d]:
        d_pairs = bp_mlp([model.ops.asarray2f(d.reshape(-1, 1)) for d in d_logits])
        d_before = model.ops.alloc1f(width)
        out = []
        for d in d_pairs:
            dx = xp.ascontiguousarray(d[:, width:])
            if len(d):
                dx[:-1] += d[1:, :width]
                d_before += d[0, :width]
            out.append(dx)
        model.inc_grad("before", d_before)
        return bp_rows(out)

    return [y.reshape(-1) for y in logits], backprop
