"""``spacy_hcparse.TorchBiLSTMContext.v1``: ``BiLSTMContext.v1`` run by torch's fused LSTM.

The same arguments, parameters and outputs as ``graph.graph_parts.bilstm_context`` (a BiLSTM over
each array of rows, ``[forward; backward]``), with ``layers.torch_lstm`` as the kernel: cuDNN's
LSTM on a GPU, one call per batch instead of a few array calls per time step. A pipeline trained
with either loads with the other, e.g. on a GPU:

    spacy.load(path, config={"components.hc_parser.model.context.@architectures":
                             "spacy_hcparse.TorchBiLSTMContext.v1"})

It is ``BiLSTMContext.v1`` with ``kernel = "torch"`` (kept for the configs that name it);
``BiLSTMContext.v1``'s default kernel already runs torch's on a GPU where torch sees CUDA. Its
speed on each device: docs/speed.md.
"""
from typing import List

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .graph_parts import bilstm_context


@registry.architectures("spacy_hcparse.TorchBiLSTMContext.v1")
def torch_bilstm_context(width: int = 128, depth: int = 1,
                         dropout: float = 0.1) -> Model[List[Floats2d], List[Floats2d]]:
    """A BiLSTM over each array of rows (torch's kernel); ``width``: its output width, both
    directions together."""
    return bilstm_context(width, depth, dropout, kernel="torch")
