"""Tree decoders: pure numpy + numba functions from factor score arrays to head arrays.

No spaCy or thinc import here. Conventions (every function's docstring repeats what it uses):
index 0 is the artificial root and words are ``1..n``; ``arc[h, m]`` (head ``h`` -> modifier ``m``);
``sib[h, s, m]`` (``m`` next modifier of ``h`` after ``s`` on the same side, ``s == h`` for the
closest); ``grand[g, h, m]``; ``heads[0] == -1`` with exactly one word attached to the root.
"""
from ._checks import MAX_WORDS, tree_problem
from .certified import CertifiedResult, decode_certified
from .dual import DualResult, decode_dual
from .eisner import decode_eisner
from .hill_climb import HillClimbResult, decode_hill_climb
from .kbest import kbest_eisner, kbest_mst
from .label_probs import chosen_label_probs, label_probabilities
from .local_optima import count_local_optima
from .marginals import arc_marginals, log_partition, tree_log_prob, tree_probabilities
from .mbr import decode_mbr, decode_mbr_gain, mbr_gain
from .mst import decode_mst
from .scoring import tree_score

__all__ = [
    "MAX_WORDS",
    "CertifiedResult",
    "DualResult",
    "HillClimbResult",
    "arc_marginals",
    "chosen_label_probs",
    "count_local_optima",
    "decode_certified",
    "decode_dual",
    "decode_eisner",
    "decode_hill_climb",
    "decode_mbr",
    "decode_mbr_gain",
    "decode_mst",
    "kbest_eisner",
    "kbest_mst",
    "label_probabilities",
    "log_partition",
    "mbr_gain",
    "tree_log_prob",
    "tree_probabilities",
    "tree_problem",
    "tree_score",
]
