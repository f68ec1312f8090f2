"""Arc-standard transition system and its search: configurations (``state``), moves (``moves``),
static and dynamic oracles, feature templates (``features``), hashed scoring (``scoring``), greedy
and beam search (``search``), training walks guided by the dynamic oracle for scorers outside numba
(``guided``) and the tagging kernel for the tag features (``tagging``).

Everything here is numpy + numba (no spaCy or thinc import) and imports nothing else of the
package, beside ``decoders`` at the bottom: ``learning``, ``models`` and ``components`` build on it,
so the hot loops of ``hc_transition_parser`` (feature hashing, scoring, parsing) run compiled.
"""
