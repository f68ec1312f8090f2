"""Evaluation: UD-style scores on the gold tokenization (``ud``), the measurement harness every
report uses (``harness``), and the scorer ``spacy evaluate`` and ``spacy train`` call
(``scorer``). Two evaluations, two names: spaCy's ``dep_uas``/``dep_las`` drop punctuation;
``ud_uas``/``ud_las`` count it and compare labels without their subtypes."""
from .harness import (
    compare_decoders, evaluate_gold, evaluate_raw, interleaved_raw_speeds, interleaved_speeds, parse_timed,
    search_statistics, span_results, speed_ratio,
)
from .ud import (
    doc_rows, gold_doc, input_doc, nonprojective_arcs, parse_system, read_system, score_conllu, score_sentences,
    sentence_conllu, ud_label,
)

__all__ = [
    "compare_decoders", "doc_rows", "evaluate_gold", "evaluate_raw", "gold_doc", "input_doc", "interleaved_raw_speeds",
    "interleaved_speeds", "nonprojective_arcs", "parse_system", "parse_timed", "read_system", "score_conllu",
    "score_sentences", "search_statistics", "sentence_conllu", "span_results", "speed_ratio", "ud_label",
]
