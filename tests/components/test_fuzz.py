"""Hypothesis over random token sequences for both parser components: any words (whitespace,
emoji, combining marks, mixed scripts, punctuation), with or without preset sentence starts or
heads, alone or in batches. Nothing raises, ``len(doc)`` never changes, every sentence gets
exactly one root (tests/components/odd_docs.py ``assert_parsed``)."""
import numpy as np
import pytest
import spacy
from hypothesis import HealthCheck, given, settings, strategies as st
from spacy.tokens import Doc

from spacy_hcparse.graph.decoding import make_hill_climb
from tests.components import test_graph_parser, test_transition_parser
from tests.components.odd_docs import assert_parsed

_PIPELINES = {}


def pipeline(component):
    """Tiny trained pipelines, built once per session (hypothesis reruns the test body)."""
    if component not in _PIPELINES:
        if component == "hc_parser":
            nlp = test_graph_parser.train_tiny(epochs=10)
            nlp.get_pipe(component).decoder = make_hill_climb(max_restarts=3, min_restarts=1, converge=1)
        else:
            nlp = test_transition_parser.train_tiny(epochs=5)
        _PIPELINES[component] = nlp
    return _PIPELINES[component]


# single characters and multi-codepoint graphemes (emoji with selectors/modifiers, combining marks)
PIECES = st.sampled_from(
    list("abcXYZ019.,;!?-'\"()") + [" ", "\t", "\n", "\u00a0", "\u200b", "🙂", "❤️", "👍🏽", "東", "京",
                                    "М", "о", "ب", "ع", "न", "म", "é", "e\u0301", "ß", "\u202e", "\u0301"]
)
WORD = st.lists(PIECES, min_size=1, max_size=6).map("".join)
TEXT = st.lists(PIECES, max_size=60).map("".join)


@st.composite
def random_docs(draw, vocab):
    words = draw(st.lists(WORD, min_size=0, max_size=40))
    n = len(words)
    spaces = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    mode = draw(st.sampled_from(["plain", "sent_starts", "heads"])) if n else "plain"
    if mode == "sent_starts":
        starts = [True] + draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1))
        return Doc(vocab, words=words, spaces=spaces, sent_starts=starts)
    if mode == "heads":  # a random projective-or-not forest, roots heading themselves
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        heads = [int(rng.integers(0, i + 1)) for i in range(n)]  # each word points left or to itself
        deps = ["ROOT" if h == i else "dep" for i, h in enumerate(heads)]
        return Doc(vocab, words=words, spaces=spaces, heads=heads, deps=deps)
    return Doc(vocab, words=words, spaces=spaces)


@pytest.mark.parametrize("component", ["hc_parser", "hc_transition_parser"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_token_sequences(component, data):
    nlp = pipeline(component)
    docs = data.draw(st.lists(random_docs(nlp.vocab), min_size=1, max_size=4))
    lengths = [len(d) for d in docs]
    for doc, n in zip(nlp.pipe(docs, batch_size=data.draw(st.integers(1, 4))), lengths):
        assert_parsed(doc, n)


@pytest.mark.parametrize("component", ["hc_parser", "hc_transition_parser"])
@settings(max_examples=25, deadline=None)
@given(text=TEXT)
def test_random_text_through_the_tokenizer(component, text):
    nlp = pipeline(component)
    doc = nlp(text)
    assert_parsed(doc, len(nlp.make_doc(text)))
    assert doc.text == text
