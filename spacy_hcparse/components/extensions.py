"""Custom attributes ``hc_parser`` writes on Docs, Spans (its sentences) and Tokens.

- ``doc._.hc_parse_score``: the sum of its sentences' tree scores;
- ``span._.hc_score``, ``span._.hc_certified`` (the tree is proven optimal),
  ``span._.hc_upper_bound`` (None when the decoder gives none) and ``span._.hc_gap``
  (``upper_bound - score``, 0 when certified): what the decoder knows about the sentence's tree;
  ``span._.hc_parse_prob``: the tree's probability under the first-order model;
- ``token._.hc_head_margin``: first-order score gap between the chosen head and the best other;
  ``token._.hc_head_prob``: the marginal probability of the chosen head, ``P(head -> token)``.

All are plain value extensions, so ``doc.to_json(underscore=[...])`` and ``DocBin`` carry them.
Token values are written straight into ``doc.user_data`` under the keys spaCy's ``Underscore``
reads (a ``token._`` assignment per token cost several microseconds, a tenth of a word's parse).
"""
from typing import Sequence

import numpy as np
from spacy.attrs import IDX
from spacy.tokens import Doc, Span, Token

DOC_ATTRS = ("hc_parse_score",)
SPAN_ATTRS = ("hc_score", "hc_certified", "hc_upper_bound", "hc_gap", "hc_parse_prob")
TOKEN_ATTRS = ("hc_head_margin", "hc_head_prob")


def register_extensions() -> None:
    """Register the extensions above (idempotent)."""
    for cls, names in ((Doc, DOC_ATTRS), (Span, SPAN_ATTRS), (Token, TOKEN_ATTRS)):
        for name in names:
            if not cls.has_extension(name):
                cls.set_extension(name, default=None)


def set_token_values(doc: Doc, name: str, start: int, values: Sequence[float]) -> None:
    """``doc[start + i]._.<name> = values[i]`` for every value, in one pass over ``user_data``."""
    offsets = doc[start: start + len(values)].to_array([IDX])[:, 0] if len(values) else np.zeros(0, dtype=np.int64)
    user_data = doc.user_data
    for offset, value in zip(offsets.tolist(), values):
        user_data[("._.", name, offset, None)] = value
