"""Arc-standard transition system: configurations, moves, static oracle, feature templates.

Everything here is numpy + numba (no spaCy or thinc import), so the hot loops of the
``hc_transition_parser`` component (feature hashing, scoring, parsing) run compiled.
"""
