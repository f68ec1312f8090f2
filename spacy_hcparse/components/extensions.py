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
from typing import Any, Dict, Sequence, Tuple

from spacy.attrs import IDX, LENGTH
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


def write_values(doc: Doc, spans: Sequence[Tuple[int, int]],
                 values: Sequence[Tuple[Dict[str, Any], Dict[str, Sequence[Any]]]]) -> None:
    """For each span ``(start, end)`` of ``doc`` and its ``(span_items, token_items)``:
    ``doc[start:end]._.<name> = value`` for its span items and ``doc[start + i]._.<name> =
    values[i]`` for its token items, written straight into ``user_data`` under the keys spaCy's
    ``Underscore`` reads (character offsets: ``(start_char, end_char)`` of a span, ``(idx, None)``
    of a token)."""
    if not spans:
        return
    chars = doc.to_array([IDX, LENGTH]).tolist()
    user_data = doc.user_data
    for (start, end), (span_items, token_items) in zip(spans, values):
        span_key = (chars[start][0], chars[end - 1][0] + chars[end - 1][1])
        for name, value in span_items.items():
            user_data[("._.", name, *span_key)] = value
        for name, token_values in token_items.items():
            for (offset, _), value in zip(chars[start:end], token_values):
                user_data[("._.", name, offset, None)] = value
