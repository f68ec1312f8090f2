"""spacy-hcparse: higher-order graph-based and transition-based dependency parsers for spaCy v3."""

__version__ = "0.1.0"
