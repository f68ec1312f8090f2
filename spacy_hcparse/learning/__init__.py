"""What both parsers learn with: the gold aligned to the predicted docs (``gold``) and the
cross-entropy losses (``losses``). Each parser's own loss and gold sit in its package
(``graph.graph_loss``, ``graph.graph_gold``; ``transition.perceptron``, ``transition.move_loss``)."""
