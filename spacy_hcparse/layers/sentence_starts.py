"""Sentence boundaries from token vectors: a logit per token for "this token starts a sentence".

``S[i] = w . relu(W [x_{i-1}; x_i] + b) + c`` over a doc's token vectors ``x`` (the tok2vec's
output over the whole doc, so both sides of a boundary are seen), with a learned vector in place
of ``x_{-1}``. Input: one (n_tokens, d) array per doc; output: one (n_tokens,) array per doc.
"""
from typing import Callable, List, Optional, Tuple

from thinc.api import Linear, Model, chain, with_array
from thinc.types import Floats1d, Floats2d

from .mlp import relu_projection


def sentence_starts(width: int = 64, dropout: float = 0.1) -> Model[List[Floats2d], List[Floats1d]]:
    """The scorer: a ReLU layer of ``width`` (fixed ``dropout``) over the token pair, then a logit."""
    mlp = chain(relu_projection(width, dropout, fixed=True), with_array(Linear(nO=1)))
    return Model("sentence_starts", forward, init=init, layers=[mlp], params={"before": None}, dims={"nI": None})


def init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    if not model.has_dim("nI") or model.get_dim("nI") is None:
        model.set_dim("nI", X[0].shape[1])
    width = model.get_dim("nI")
    model.set_param("before", model.ops.alloc1f(width))
    model.layers[0].initialize(X=[model.ops.alloc2f(2, 2 * width)])
    return model


def forward(model: Model, X: List[Floats2d], is_train: bool) -> Tuple[List[Floats1d], Callable]:
    xp = model.ops.xp
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
        return out

    return [y.reshape(-1) for y in logits], backprop
