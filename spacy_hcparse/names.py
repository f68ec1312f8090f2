"""Names and types both parsers share, defined once.

``Span``: a half-open token range ``(start, end)`` of a Doc, parsed as one tree.
``ROOT_LABEL``: the label of the root's dependent, and of nothing else.
"""
from typing import Tuple

Span = Tuple[int, int]
ROOT_LABEL = "ROOT"
