"""Registered architectures assembling the layers."""
from .embed import build_concat_tok2vec, build_multi_hash_embed  # noqa: F401
from .graph_parser import build_graph_parser_model  # noqa: F401
from .transformer_features import transformer_layers_listener  # noqa: F401
