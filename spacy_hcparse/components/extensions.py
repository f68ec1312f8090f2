"""Custom attributes the parsers write on Docs, Spans and Tokens."""
from typing import Optional

from spacy.tokens import Doc, Span, Token

# doc.user_data key of the per-token head margins (a list of floats or None, one per token):
# one list per doc instead of a user_data entry per token, which dominated set_annotations.
MARGINS_KEY = "hc_head_margins"


def register_extensions() -> None:
    """Register ``doc._.hc_parse_score``, ``span._.hc_certified``, ``span._.hc_upper_bound``,
    ``token._.hc_head_margin`` (idempotent)."""
    for cls, name in (
        (Doc, "hc_parse_score"),
        (Span, "hc_certified"),
        (Span, "hc_upper_bound"),
    ):
        if not cls.has_extension(name):
            cls.set_extension(name, default=None)
    if not Token.has_extension("hc_head_margin"):
        Token.set_extension("hc_head_margin", getter=head_margin)


def head_margin(token: Token) -> Optional[float]:
    """Score gap between the token's chosen head and its best other head (None if unparsed)."""
    margins = token.doc.user_data.get(MARGINS_KEY)
    if margins is None or len(margins) != len(token.doc):
        return None
    return margins[token.i]
