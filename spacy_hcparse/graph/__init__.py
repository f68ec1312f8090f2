"""The graph parser ``hc_parser``: its structures, loss and gold, model and component, over the
pure decoders (``decoders``) and the thinc layers (``layers``).

- structures: ``scores`` (what the model hands over: ``GraphInput`` -> ``GraphScores``), ``pruning``
  (first-order candidate heads and the factor triples they allow), ``decoding`` (decoders as
  configured objects: ``spacy_hcparse.Eisner.v1``, ``MST.v1``, ``MBR.v1``, ``HillClimb.v1``/``.v2``,
  ``Dual.v1``, ``Certified.v1``), ``reparse`` (what a decoder is given beyond the scores: whitespace
  leaves, an earlier parser's tree), ``labeling`` (labels of decoded trees: ``Labeler``),
  ``valency`` (the label classes it reads), ``parses`` (what ``hc_parser.predict`` returns per span
  and doc, and the extension values written from it) and ``calibration`` (head probabilities);
- loss and gold: ``graph_loss`` (``spacy_hcparse.GraphLoss.v1``), ``batch_loss``, ``hinge``,
  ``batch_hinge``, ``graph_gold`` (the batch gold) and ``rehearsal``;
- model: ``graph_model`` (``GraphParserModel.v8``, ``.v5``), ``graph_parts`` (its registered
  parts) and ``torch_context``;
- component: ``graph_parser`` (``GraphParser``), ``graph_factory`` (the ``hc_parser`` factory and
  its default config), ``graph_batch`` (decoding and probabilities over a batch of spans) and
  ``extensions`` (the custom attributes it writes), ``ahead`` (its kernels compiled in a second
  process on a fresh install).

Layering (``tests/test_layering.py``): each group imports the ones listed before it and the
shared ground below (``decoders``, ``layers``, ``learning``, ``segment``, ``names``, ``components``).
"""
