"""What both parser components share: the pipe base class (``base``) and writing parses onto
Docs (``annotate``). The components themselves sit in their parsers' packages
(``graph.graph_parser``, ``transition.transition_parser``)."""
