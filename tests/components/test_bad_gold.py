"""Training data that is not one tree per sentence (cycles, several roots) is reported once per
sentence, naming it, and skipped; the good sentences are still learned (both components)."""
import logging

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.learning.gold import gold_problem
from tests.components import test_graph_parser, test_transition_parser
from tests.treebank import SENTENCES, make_examples

BAD = [
    # a cycle between "gamma" and "delta" (the sentence has a root, "beta")
    (["alpha", "beta", "gamma", "delta"], [1, 1, 3, 2], ["dep", "ROOT", "dep", "dep"]),
    # two roots whose subtrees interleave: heads cross spaCy's sentence boundary
    (["one", "two", "three", "four", "five"], [0, 2, 2, 0, 3], ["ROOT", "dep", "ROOT", "dep", "dep"]),
    # a cycle and no root at all in its first sentence
    (["red", "green", "blue", "cyan", "pink"], [1, 0, 3, 3, 2], ["dep", "dep", "dep", "ROOT", "dep"]),
]


def bad_examples(nlp):
    out = []
    for words, heads, deps in BAD:
        out.append(Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, heads=heads, deps=deps)))
    return out


def make(component):
    nlp = spacy.blank("en")
    if component == "hc_parser":
        nlp.add_pipe(component, config={"model": test_graph_parser.TINY_MODEL})
    else:
        nlp.add_pipe(component, config={"model": {"n_buckets": 2**16}, "label_freq_cutoff": 1})
    return nlp


@pytest.mark.parametrize("component", ["hc_parser", "hc_transition_parser"])
def test_bad_sentences_are_reported_once_and_skipped(component, caplog):
    spacy.util.fix_random_seed(0)
    nlp = make(component)
    good = make_examples(nlp)
    examples = good[:4] + bad_examples(nlp) + good[4:]
    optimizer = nlp.initialize(lambda: good)
    caplog.set_level(logging.INFO, logger="spacy_hcparse")
    for _ in range(25 if component == "hc_parser" else 10):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 3, warnings  # one per bad sentence, not one per epoch
    assert any("cycle" in w and "'alpha beta gamma delta'" in w for w in warnings), warnings
    # (hc_transition_parser sees spaCy's projectivized gold, where the crossing arc is lifted)
    assert any(("outside its sentence" in w or "got 2" in w) and "two three four five" in w for w in warnings), warnings
    assert any("got 0" in w and "'red green'" in w for w in warnings), warnings
    assert all(f"[{component}] training sentence skipped" in w for w in warnings)
    assert nlp.get_pipe(component).reported_gold >= 3  # INFO ones (unknown labels) count too
    # the good sentences were learned all the same
    correct = total = 0
    for words, heads, _ in SENTENCES:
        doc = nlp(Doc(nlp.vocab, words=words))
        correct += sum((t.head.i + 1 if t.head.i != t.i else 0) == h for t, h in zip(doc, heads))
        total += len(heads)
    assert correct / total > 0.85


def test_gold_problem_levels():
    assert gold_problem([0, 1, 1], 0, 3)[1] == logging.WARNING  # two roots
    assert gold_problem([0, 0, 1], 0, 3)[1] == logging.INFO  # one tree: labels were the problem
    assert "cycle" in gold_problem([1, 0, 2], 0, 3)[0]
    assert gold_problem([0, 5, 1], 0, 3, whole_sentence=False)[1] == logging.INFO  # a chunk
    assert gold_problem([0, 5, 1], 0, 3, whole_sentence=True)[1] == logging.WARNING
    assert gold_problem([0, None, 1], 0, 3)[1] == logging.INFO
