"""The graph parser's own modules, between the pure decoders and the spaCy component.

``scores`` (what the model hands over: ``GraphInput`` -> ``GraphScores``), ``pruning`` (first-order
candidate heads and the factor triples they allow), ``decoding`` (decoders as configured objects:
``spacy_hcparse.Eisner.v1``, ``MST.v1``, ``MBR.v1``, ``HillClimb.v1``/``.v2``, ``Dual.v1``,
``Certified.v1``),
``reparse`` (what a decoder is given beyond the scores: whitespace leaves, an earlier parser's
tree), ``labeling`` (labels of decoded trees: ``Labeler``), ``valency`` (the label classes it
reads) and ``parses`` (what ``hc_parser.predict`` returns per span and doc, and the extension
values written from it).

Layering: this package imports ``decoders``, ``segment`` and ``names`` below it, and spaCy;
``learning``, ``models`` and ``components`` build on it.
"""
