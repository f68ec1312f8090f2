"""What both parser components share: the pipe base class (``base``), writing parses onto Docs
(``annotate``) and pseudo-projective gold (``projective_gold``). The components themselves sit
in their parsers' packages (``graph.graph_parser``, ``transition.transition_parser``)."""
