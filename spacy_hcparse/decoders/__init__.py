"""Tree decoders: pure numpy + numba functions from factor score arrays to head arrays.

No spaCy or thinc import here. Conventions (every function's docstring repeats what it uses):
index 0 is the artificial root and words are ``1..n``; ``arc[h, m]`` (head ``h`` -> modifier ``m``);
``sib[h, s, m]`` (``m`` next modifier of ``h`` after ``s`` on the same side, ``s == h`` for the
closest); ``grand[g, h, m]``; ``heads[0] == -1`` with exactly one word attached to the root.
"""
from .scoring import tree_score
from ._checks import tree_problem, MAX_WORDS

__all__ = ["tree_score", "tree_problem", "MAX_WORDS"]
