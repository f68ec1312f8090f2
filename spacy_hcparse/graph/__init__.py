"""The graph parser's own modules, between the pure decoders and the spaCy component.

``scores`` (what the model hands over: ``GraphInput`` -> ``GraphScores``), ``pruning`` (first-order
candidate heads and the factor triples they allow), ``decoding`` (decoders as configured objects:
``spacy_hcparse.Eisner.v1``, ``MST.v1``, ``HillClimb.v1``/``.v2``, ``Dual.v1``, ``Certified.v1``)
and ``valency`` (label classes a head takes at most once).

Layering: this package imports ``decoders``, ``segment`` and ``names`` below it, and spaCy's
registry; ``learning``, ``models`` and ``components`` build on it.
"""
