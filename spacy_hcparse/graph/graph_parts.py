"""The registered parts ``GraphParserModel.v8`` is assembled from, one config block each.

Every part is a thinc layer (or, for the tag heads, a ``TagHeads`` of layers) whose input and
output follow ``graph.scores``' conventions: blocks are (n+1, d) rows of one span, row 0 the root.

- ``spacy_hcparse.BiLSTMContext.v1``: a BiLSTM over rows (list in, list out), the context encoder
  beside the tok2vec, the sentence-start scorer's doc context, or a label scorer's own encoder
  (its ``kernel`` picks the code that runs it; ``TorchBiLSTMContext.v1``, in
  ``graph.torch_context``, is the same with ``kernel = "torch"``);
- ``spacy_hcparse.BiaffineArcScorer.v1``: blocks -> (n+1, n+1) arc scores;
- ``spacy_hcparse.SiblingScorer.v1`` / ``GrandparentScorer.v1``: (blocks, triples) -> scores;
- ``spacy_hcparse.LowRankLabelScorer.v1`` / ``FullLabelScorer.v1``: (blocks, arcs) -> (C, nO);
  ``EncodedLabelScorer.v1`` wraps one of them with a context encoder of its own;
- ``spacy_hcparse.SentenceStartScorer.v1``: token vectors per doc -> a start logit per token;
- ``spacy_hcparse.TagScorers.v1``: the auxiliary tag objectives' heads.

Dropout is each part's own and stays as configured (training's ``dropout`` reaches the tok2vec
only): the layers use fixed dropout.
"""
from typing import Dict, List, NamedTuple, Optional

from spacy.util import registry
from thinc.api import Linear, Model, with_array, with_padded
from thinc.types import Floats2d

from ..layers.biaffine_arc import biaffine_arc
from ..layers.biaffine_label import biaffine_label
from ..layers.full_label import full_label
from ..layers.label_encoder import label_encoder
from ..layers.lstm import lstm
from ..layers.sentence_starts import sentence_starts
from ..layers.torch_lstm import fused_on_gpu, torch_lstm
from ..layers.trilinear import trilinear


class TagHeads(NamedTuple):
    """The heads of the auxiliary tag objectives: per attribute (``"POS"``, ``"TAG"``, ``"DEP"``,
    ``"RELPOS"``) a linear layer over token rows (its ``nO``, the attribute's tag count, set by
    the component); ``from_context``: the rows are the encoder's (``[tok2vec; context]``, what the
    arc and label scorers read), else the tok2vec's."""

    attrs: tuple
    from_context: bool
    layers: Dict[str, Model]


LSTM_KERNELS = {"auto": fused_on_gpu, "thinc": lstm, "torch": torch_lstm}


@registry.architectures("spacy_hcparse.BiLSTMContext.v1")
def bilstm_context(width: int = 128, depth: int = 1, dropout: float = 0.1,
                   kernel: str = "auto") -> Model[List[Floats2d], List[Floats2d]]:
    """A BiLSTM over each array of rows; ``width``: its output width, both directions together.
    ``kernel``: ``"auto"`` runs torch's fused LSTM (cuDNN) on a GPU where torch sees CUDA and
    ``layers.lstm`` elsewhere; ``"thinc"`` always ``layers.lstm`` (thinc's kernels, numpy/cupy
    arrays); ``"torch"`` always ``layers.torch_lstm``. The parameters are the same whichever runs,
    so a trained pipeline can load with another kernel."""
    if width <= 0:
        raise ValueError(f"BiLSTMContext width must be positive, got {width} (leave the context out for none)")
    if kernel not in LSTM_KERNELS:
        raise ValueError(f"BiLSTMContext kernel must be one of {sorted(LSTM_KERNELS)}, got {kernel!r}")
    return with_padded(LSTM_KERNELS[kernel](width, bi=True, depth=depth, dropout=dropout))


@registry.architectures("spacy_hcparse.BiaffineArcScorer.v1")
def biaffine_arc_scorer(width: int = 256, dropout: float = 0.25) -> Model:
    """Biaffine arc scores (``layers.biaffine_arc``) over ReLU projections of ``width``."""
    return biaffine_arc(width, dropout, fixed_dropout=True)


@registry.architectures("spacy_hcparse.SiblingScorer.v1")
def sibling_scorer(rank: int = 64, dropout: float = 0.25) -> Model:
    """Trilinear sibling scores ``(h, s, m)`` of ``rank`` (``s == h``: the closest modifier)."""
    return trilinear("sibling_scorer", rank, dropout, null_middle=True, fixed_dropout=True)


@registry.architectures("spacy_hcparse.GrandparentScorer.v1")
def grandparent_scorer(rank: int = 64, dropout: float = 0.25) -> Model:
    """Trilinear grandparent scores ``(g, h, m)`` of ``rank``."""
    return trilinear("grand_scorer", rank, dropout, fixed_dropout=True)


@registry.architectures("spacy_hcparse.LowRankLabelScorer.v1")
def low_rank_label_scorer(width: int = 96, rank: int = 128, dropout: float = 0.25, nO: Optional[int] = None) -> Model:
    """Low-rank biaffine label scores with linear terms per side (``layers.biaffine_label``)."""
    return biaffine_label(width, dropout, nO=nO, rank=rank, linear=True, fixed_dropout=True)


@registry.architectures("spacy_hcparse.FullLabelScorer.v1")
def full_label_scorer(width: int = 128, dropout: float = 0.25, nO: Optional[int] = None) -> Model:
    """Full-rank biaffine label scores (``layers.full_label``, Dozat & Manning's)."""
    return full_label(width, dropout, nO=nO)


@registry.architectures("spacy_hcparse.EncodedLabelScorer.v1")
def encoded_label_scorer(context: Model[List[Floats2d], List[Floats2d]], scorer: Model) -> Model:
    """``scorer`` reading ``[rows; context(rows)]``: a context encoder the labels train alone
    (``layers.label_encoder``), e.g. a ``BiLSTMContext.v1`` of width 192."""
    return label_encoder(context, scorer)


@registry.architectures("spacy_hcparse.SentenceStartScorer.v1")
def sentence_start_scorer(width: int = 64, dropout: float = 0.25,
                          context: Optional[Model[List[Floats2d], List[Floats2d]]] = None) -> Model:
    """Sentence-start logits from a ReLU layer of ``width`` over adjacent token vectors
    (``layers.sentence_starts``); ``context``: a BiLSTM over the whole doc read beside them,
    None for none."""
    return sentence_starts(width, dropout, context)


@registry.architectures("spacy_hcparse.TagScorers.v1")
def tag_scorers(attrs: List[str] = ("POS",), from_context: bool = True) -> TagHeads:
    """Linear heads predicting each token's ``attrs`` in training (an auxiliary objective for the
    encoder; at prediction scored only when the component writes them: POS, TAG). ``attrs``:
    ``"POS"``, ``"TAG"``, ``"DEP"`` (each word's own label), ``"RELPOS"`` (each word's head as side,
    count and part of speech, see ``learning.gold.relative_pos_tags``)."""
    attrs = tuple(attrs)
    return TagHeads(attrs, from_context, {attr: with_array(Linear()) for attr in attrs})
