"""Registered architectures both parsers' configs use: the token embeddings (``embed``) and the
transformer listener (``transformer_features``). Each parser's model sits in its package
(``graph.graph_model``, ``transition.transition_model``)."""
from .embed import build_concat_tok2vec, build_multi_hash_embed  # noqa: F401
from .transformer_features import transformer_layers_listener  # noqa: F401
