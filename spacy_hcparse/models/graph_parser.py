"""``spacy_hcparse.GraphParserModel.v1``/``.v2``/``.v3``: encoder + arc, sibling, grandparent and label scorers.

The model's own forward maps Docs to per-span encoder blocks and first-order arc scores; the
component calls the higher-order and label scorers (``model.get_ref(...)``) on those blocks once
it knows the pruned candidates and the heads, and sums their input gradients before calling the
encoder's backprop.
"""
from typing import Callable, List, Optional, Tuple

import numpy as np
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import LSTM, Model, with_padded
from thinc.types import Floats2d

from ..layers.biaffine_arc import biaffine_arc
from ..layers.biaffine_label import biaffine_label
from ..layers.sentence_encoder import sentence_encoder
from ..layers.trilinear import trilinear

SCORERS = ("arc_scorer", "sibling_scorer", "grand_scorer", "label_scorer")


def _architecture(linear_labels: bool, child_labels: bool, doc: str) -> Callable[..., Model]:
    """One registered version of the architecture: the same arguments for every version (spaCy
    validates configs against this signature), differing only in the label scorer's terms."""

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
        nO: Optional[int] = None,
    ) -> Model[List[Doc], Tuple[List[Floats2d], List[Floats2d]]]:
        return _build(tok2vec, lstm_width, lstm_depth, max_length, arc_width, label_width, label_rank,
                      sibling_rank, grand_rank, dropout, nO, linear_labels, child_labels)

    build.__doc__ = doc
    return build


build_graph_parser_model = registry.architectures("spacy_hcparse.GraphParserModel.v1")(_architecture(
    linear_labels=False, child_labels=False, doc="""Graph parser scorers over a spaCy Tok2Vec, with an optional BiLSTM on top.

    lstm_width: output width of the BiLSTM (both directions together); 0 for none.
    max_length: longest span parsed as one tree (see ``segment.sentence_spans``).
    nO: number of labels, inferred by the component at initialization.
    """))
build_graph_parser_model_v2 = registry.architectures("spacy_hcparse.GraphParserModel.v2")(_architecture(
    linear_labels=True, child_labels=False, doc="""``GraphParserModel.v1`` whose label scorer also has linear terms per side
    (``biaffine_label(linear=True)``, Dozat & Manning's label classifier). Same arguments."""))
build_graph_parser_model_v3 = registry.architectures("spacy_hcparse.GraphParserModel.v3")(_architecture(
    linear_labels=True, child_labels=True, doc="""``GraphParserModel.v2`` whose label scorer also sees each word's outermost left and right
    dependents (``biaffine_label(children=True)``). Same arguments."""))


def _build(tok2vec, lstm_width, lstm_depth, max_length, arc_width, label_width, label_rank,
           sibling_rank, grand_rank, dropout, nO, linear_labels: bool, child_labels: bool) -> Model:
    context = None
    if lstm_width > 0:
        context = with_padded(LSTM(nO=lstm_width, bi=True, depth=lstm_depth, dropout=dropout))
    encoder = sentence_encoder(tok2vec, context, max_length=max_length)
    scorers = {
        "arc_scorer": biaffine_arc(arc_width, dropout),
        "sibling_scorer": trilinear("sibling_scorer", sibling_rank, dropout, null_middle=True),
        "grand_scorer": trilinear("grand_scorer", grand_rank, dropout),
        "label_scorer": biaffine_label(label_width, dropout, nO=nO, rank=label_rank, linear=linear_labels,
                                       children=child_labels),
    }
    return Model(
        "hc_graph_parser",
        forward,
        init=init,
        layers=[encoder, *scorers.values()],
        refs={"encoder": encoder, "tok2vec": tok2vec, **scorers},
        dims={"nO": nO},
        attrs={"max_length": max_length},
    )


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> Model:
    encoder = model.get_ref("encoder")
    encoder.initialize(X=X)
    if model.has_dim("nO"):
        model.get_ref("label_scorer").set_dim("nO", model.get_dim("nO"))
    sample = [model.ops.alloc2f(4, _encoder_width(encoder))]
    heads = [np.array([-1, 0, 1, 1])]
    triples = [np.array([[1, 1, 2], [0, 1, 2]])]
    model.get_ref("arc_scorer").initialize(X=sample)
    model.get_ref("sibling_scorer").initialize(X=(sample, triples))
    model.get_ref("grand_scorer").initialize(X=(sample, triples))
    model.get_ref("label_scorer").initialize(X=(sample, heads))
    return model


def _encoder_width(encoder: Model) -> int:
    return encoder.get_dim("nO")


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[Tuple[List[Floats2d], List[Floats2d]], Callable]:
    """Docs -> (encoder blocks, arc score blocks); backprop takes (d_blocks, d_arcs)."""
    blocks, bp_encoder = model.get_ref("encoder")(docs, is_train)
    arcs, bp_arcs = model.get_ref("arc_scorer")(blocks, is_train)

    def backprop(d_out):
        d_blocks, d_arcs = d_out
        d_from_arcs = bp_arcs(d_arcs)
        return bp_encoder([a + b for a, b in zip(d_blocks, d_from_arcs)])

    return (blocks, arcs), backprop
