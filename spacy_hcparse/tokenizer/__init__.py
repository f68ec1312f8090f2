"""A trained tokenizer that segments raw text as a UD treebank does: tokens, multiword tokens and
sentences (``UDTokenizer``, registered as ``spacy_hcparse.UDTokenizer.v1``)."""
from .lexicon import MultiwordLexicon
from .tokenizer import UDTokenizer, create_ud_tokenizer, segments_itself, ud_tokenizer_for, use_ud_tokenizer

__all__ = ["MultiwordLexicon", "UDTokenizer", "create_ud_tokenizer", "segments_itself", "ud_tokenizer_for",
           "use_ud_tokenizer"]
