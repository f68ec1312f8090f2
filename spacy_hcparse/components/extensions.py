"""Custom attributes the parsers write on Docs, Spans and Tokens."""
from spacy.tokens import Doc, Span, Token


def register_extensions() -> None:
    """Register ``doc._.hc_parse_score``, ``span._.hc_certified``, ``span._.hc_upper_bound``,
    ``token._.hc_head_margin`` (idempotent)."""
    for cls, name in (
        (Doc, "hc_parse_score"),
        (Span, "hc_certified"),
        (Span, "hc_upper_bound"),
        (Token, "hc_head_margin"),
    ):
        if not cls.has_extension(name):
            cls.set_extension(name, default=None)
