"""Names and types both parsers share, defined once.

``Span``: a half-open token range ``(start, end)`` of a Doc, parsed as one tree.
``ROOT_LABEL``: the label of the root's dependent, and of nothing else.
``MULTIWORD_TOKENS``: the Doc extension (``doc._.hc_multiword_tokens``) listing the surface tokens
that are several words, ``(start, end, form)``: Doc token indices, end exclusive, surface text.
``SENT_START_HINTS``: the Doc extension (``doc._.hc_sent_start_hints``) in which the UD tokenizer
leaves its sentence-start scores for a parser that segments (float per token, in the units of a
start scorer's logits: added to them; None: no hints).
"""
from typing import Tuple

Span = Tuple[int, int]
ROOT_LABEL = "ROOT"
MULTIWORD_TOKENS = "hc_multiword_tokens"
SENT_START_HINTS = "hc_sent_start_hints"
