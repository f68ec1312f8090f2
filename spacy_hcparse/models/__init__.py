"""Registered architectures assembling the layers."""
from .graph_parser import build_graph_parser_model  # noqa: F401
