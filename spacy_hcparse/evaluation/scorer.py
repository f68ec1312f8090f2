"""The components' scorer: spaCy's parser scores plus the UD-style ones.

``spacy_hcparse.parser_scorer.v1`` returns what ``spacy.parser_scorer.v1`` returns
(``dep_uas``/``dep_las`` with punctuation dropped, ``dep_las_per_type``, ``sents_p/r/f``) and
``ud_uas``/``ud_las``/``ud_las_per_type``: every token counted, punctuation included, labels
compared without their subtypes (``nmod:poss`` as ``nmod``, ``ROOT`` as ``root``), so
``spacy evaluate`` and ``spacy train`` report both. Tokens are aligned by spaCy's ``Example``
(tokens without a one-to-one alignment are left out, as in spaCy's own scores); for raw text
scored by character alignment use the CoNLL 2018 evaluation.
"""
from typing import Any, Dict, Iterable

from spacy.pipeline.dep_parser import parser_score
from spacy.scorer import Scorer
from spacy.tokens import Token
from spacy.training import Example
from spacy.util import registry


def universal_label(token: Token, attr: str) -> str:
    """The universal part of the token's label (``nmod:poss`` -> ``nmod``, ``ROOT`` -> ``root``)."""
    label = getattr(token, f"{attr}_")
    return "root" if label == "ROOT" else label.split(":", 1)[0]


def score_parse(examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
    """spaCy's parser scores and the UD-style ``ud_uas``, ``ud_las``, ``ud_las_per_type``."""
    examples = list(examples)
    scores = parser_score(examples, **kwargs)
    ud = Scorer.score_deps(examples, "dep", getter=universal_label, ignore_labels=(), **kwargs)
    scores.update(ud_uas=ud["dep_uas"], ud_las=ud["dep_las"], ud_las_per_type=ud["dep_las_per_type"])
    return scores


@registry.scorers("spacy_hcparse.parser_scorer.v1")
def make_parser_scorer():
    return score_parse
