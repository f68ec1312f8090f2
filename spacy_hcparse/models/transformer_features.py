"""``spacy_hcparse.TransformerLayersListener.v1``: a transformer's hidden layers, mixed, per token.

spacy-transformers' ``TransformerListener.v1`` reads the last layer; this reads a learned scalar
mix of the named ``layers`` (``layers.layer_mix``) and pools it per token the same way. The
``transformer`` component must return its hidden states:

    [components.transformer.model.transformer_config]
    output_hidden_states = true

Needs the ``transformers`` extra (imported when the architecture is built).
"""
from typing import List

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain
from thinc.types import Floats2d, Ragged

from ..layers.layer_mix import layer_mix


@registry.architectures("spacy_hcparse.TransformerLayersListener.v1")
def transformer_layers_listener(pooling: Model[Ragged, Floats2d], layers: List[int], grad_factor: float = 1.0,
                                upstream: str = "*") -> Model[List[Doc], List[Floats2d]]:
    """Token vectors from the upstream transformer's ``layers`` (indices into its hidden states:
    0 the embeddings, -1 the last layer), mixed with learned weights, pooled over each token's
    pieces by ``pooling``; ``grad_factor`` and ``upstream`` as in ``TransformerListener.v1``."""
    from spacy_transformers.layers import TransformerListener
    from spacy_transformers.layers.trfs2arrays import trfs2arrays

    listener = TransformerListener(upstream_name=upstream)
    model: Model = chain(listener, layer_mix(layers), trfs2arrays(pooling, grad_factor))
    model.set_ref("listener", listener)
    return model
