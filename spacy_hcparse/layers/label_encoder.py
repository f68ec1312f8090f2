"""A label scorer with an encoder of its own: the labels read ``[rows; context(rows)]``."""
from typing import Callable, List, Optional, Tuple

from thinc.api import Model
from thinc.types import Floats2d, Ints2d

from .sentence_encoder import beside_context

InT = Tuple[List[Floats2d], List[Ints2d]]


def label_encoder(context: Model[List[Floats2d], List[Floats2d]], scorer: Model[InT, List[Floats2d]]) -> Model[InT, List[Floats2d]]:
    """``scorer`` (a label scorer: blocks and arcs in, per block (C, nO) scores out) reading each
    block's rows with ``context``'s output beside them: a BiLSTM the labels train alone, over the
    shared encoder's rows, so that what the labels need (the words' own categories) does not have
    to share every dimension with what the arcs need.

    Input and output as the scorer's: (n+1, d) blocks (row 0 the root) and per block a (C, 2) int
    array of arcs ``(h, m)``; one (C, nO) block of label scores per block.
    """
    return Model("label_encoder", forward, init=init, layers=[context, scorer])


def init(model: Model, X: Optional[InT] = None, Y=None) -> Model:
    context, scorer = model.layers
    if X is not None:
        blocks, arcs = X
        context.initialize(X=blocks)
        scorer.initialize(X=(beside_context(model.ops, context, blocks, False)[0], arcs))
    return model


def forward(model: Model, X: InT, is_train: bool) -> Tuple[List[Floats2d], Callable]:
    context, scorer = model.layers
    blocks, arcs = X
    rows, bp_rows = beside_context(model.ops, context, blocks, is_train)
    scores, bp_scorer = scorer((rows, arcs), is_train)

    def backprop(d_scores: List[Floats2d]) -> List[Floats2d]:
        return bp_rows(bp_scorer(d_scores))

    return scores, backprop
