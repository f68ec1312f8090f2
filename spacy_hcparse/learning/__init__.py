"""Losses and updates (structured hinge, head-selection cross-entropy, label cross-entropy) and the
gold they learn from (``gold``: both parsers' aligned gold; ``graph_gold``: the graph parser's batch gold)."""
