"""Segmentation: a model's sentence starts never fall on whitespace, a blank line always starts a
sentence, leading whitespace stays in the first sentence, long sentences are chunked."""
import numpy as np
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_hcparse.names import MULTIWORD_TOKENS, SENT_START_HINTS
from spacy_hcparse.segment import (continues, doc_sentence_starts, has_sent_starts, leaf_whitespace, preset_sentences,
                                   segment_docs, sentence_begins, sentence_start_hints, span_whitespace)

VOCAB = spacy.blank("en").vocab


def doc_of(words):
    return Doc(VOCAB, words=words, spaces=[False] * len(words))


def test_whitespace_never_begins_a_sentence():
    doc = doc_of(["Hi", ".", "\n\n", "Bye", ".", " ", "\n"])
    begins = np.array([True, False, True, False, False, True, False])
    spans, sentences = segment_docs([doc], [None], [begins], 200)
    assert sentences[0] == [0, 3]  # the start on "\n\n" moves to "Bye"; the one at the end has no word after it
    assert spans[0] == [(0, 3), (3, 7)]


def test_no_sentence_begins_inside_a_multiword_token():
    """The UD tokenizer's ``do`` = ``de o``: a start the model puts on ``o`` is dropped, so the
    range line stays inside one sentence."""
    if not Doc.has_extension(MULTIWORD_TOKENS):
        Doc.set_extension(MULTIWORD_TOKENS, default=None)
    doc = doc_of(["Eu", "gosto", "de", "o", "gato", "."])
    doc._.set(MULTIWORD_TOKENS, [(2, 4, "do")])
    begins = np.array([True, False, False, True, True, False])
    assert sentence_begins(doc, begins).tolist() == [True, False, False, False, True, False]


@pytest.mark.parametrize("breaks", [["\n\n"], ["\n", "\n"], ["\n \n"], ["\n\n\n", " "]])
def test_a_blank_line_starts_a_sentence_whatever_the_model_says(breaks):
    doc = doc_of(["I", "saw", "it"] + breaks + ["then", "left"])
    spans, sentences = segment_docs([doc], [None], [np.zeros(len(doc), dtype=bool)], 200)
    after = 3 + len(breaks)
    assert sentences[0] == [0, after]
    assert spans[0] == [(0, after), (after, len(doc))]  # the blank line ends the sentence before it


def test_a_single_line_break_is_left_to_the_model():
    doc = doc_of(["I", "saw", "it", "\n", "then", "left"])
    assert sentence_begins(doc, np.zeros(len(doc), dtype=bool)).tolist() == [True] + [False] * 5
    assert np.flatnonzero(sentence_begins(doc, np.eye(len(doc), dtype=bool)[4])).tolist() == [0, 4]


def test_leading_and_trailing_blank_lines_make_no_empty_sentence():
    doc = doc_of(["\n\n", "Hello", ".", "\n\n"])
    spans, sentences = segment_docs([doc], [None], [np.array([True, False, False, True])], 200)
    assert sentences[0] == [0] and spans[0] == [(0, 4)]


def test_given_spans_are_kept_and_docs_without_a_scorer_are_chunked():
    doc = doc_of(["a", "b", "\n\n", "c", "d", "e"])
    spans, sentences = segment_docs([doc, doc], [[(0, 6)], None], [None, None], 4)
    assert spans == [[(0, 6)], [(0, 4), (4, 6)]]  # no blank-line rule without a model's starts
    assert sentences == [None, [0, 4]]


def test_long_sentences_are_chunked_and_carry_on():
    doc = doc_of([f"w{i}" for i in range(10)])
    spans, sentences = segment_docs([doc], [None], [np.zeros(10, dtype=bool)], 4)
    assert spans[0] == [(0, 4), (4, 8), (8, 10)]
    assert continues(spans[0], sentences[0]) == [False, True, True]


def test_flags_must_match_the_doc():
    with pytest.raises(ValueError, match="3 sentence-start flags for a doc of 2 tokens"):
        sentence_begins(doc_of(["a", "b"]), np.zeros(3, dtype=bool))


def test_whitespace_kept_leaves_per_span():
    """Every span's whitespace is marked, except in a span of whitespace only."""
    doc = doc_of(["Hi", "\n\n", "there", " ", "\n"])
    spans = [(0, 3), (3, 5)]
    assert [s.tolist() for s in span_whitespace([doc, doc_of([])], [spans, []])] == [
        [False, True, False], [False, False]]
    assert leaf_whitespace(np.array([True, False])).tolist() == [True, False]


def test_long_sentences_are_cut_where_a_start_is_likeliest():
    """No start above 0, but the logits peak at words 7 and 13: the chunks end before them, not
    at every ``max_length`` words; whitespace never begins a chunk, however high its logit, nor
    does a word in the first half of the window (no chunk but the last under half as long)."""
    doc = doc_of([f"w{i}" for i in range(10)] + ["\n"] + [f"w{i}" for i in range(11, 20)])
    logits = np.full(len(doc), -5.0)
    logits[[7, 13]] = -1.0
    logits[10] = -0.5  # the newline
    logits[16] = -0.5  # more than 8 words after the chunk that starts at 7
    logits[[3, 9]] = -1e-3  # too early in their windows
    spans, sentences = segment_docs([doc], [None], [logits], 8)
    assert spans[0] == [(0, 7), (7, 13), (13, 20)]
    assert sentences[0] == [0]  # still one sentence by the model's own starts


def test_flat_logits_cut_at_max_length_and_positive_ones_start_sentences():
    doc = doc_of([f"w{i}" for i in range(10)])
    logits = np.full(10, -2.0)
    spans, _ = segment_docs([doc], [None], [logits], 4)
    assert spans[0] == [(0, 4), (4, 8), (8, 10)]  # the latest of equal logits: as without them
    logits[5] = 3.0
    spans, sentences = segment_docs([doc], [None], [logits], 4)
    assert sentences[0] == [0, 5]
    assert spans[0] == [(0, 4), (4, 5), (5, 9), (9, 10)]


def hinted(words, hints):
    if not Doc.has_extension(SENT_START_HINTS):
        Doc.set_extension(SENT_START_HINTS, default=None)
    doc = doc_of(words)
    doc._.set(SENT_START_HINTS, hints)
    return doc


def test_the_tokenizers_hints_add_to_the_models_logits():
    """The UD tokenizer's guess, refined by the parser's: a start where their sum is positive.
    Undo the sum and the parser's logits alone decide (one sentence), or the hints alone (three)."""
    words = ["I", "came", ".", "You", "left", ".", "Bye"]
    logits = np.array([0.0, -3.0, -3.0, 1.0, -3.0, -3.0, -1.0])
    doc = hinted(words, [0.0, -1.0, -1.0, -2.0, -1.0, -1.0, 2.0])
    assert segment_docs([doc], [None], [logits], 200)[1][0] == [0, 6]
    # the chunks of a long sentence end where the sum is highest
    doc = hinted(words, [0.0, 0.0, 0.0, 2.5, 0.0, 0.0, 0.0])
    spans, sentences = segment_docs([doc], [None], [np.full(7, -4.0)], 4)
    assert sentences[0] == [0] and spans[0][0] == (0, 3)  # without the hints: (0, 4), the latest of equal ones


def test_hints_decide_without_the_models_logits():
    doc = hinted(["I", "came", ".", "You", "left"], [0.0, -1.0, -1.0, 2.0, -1.0])
    assert segment_docs([doc], [None], [None], 200)[1][0] == [0, 3]
    assert segment_docs([doc], [None], [np.zeros(5, dtype=bool)], 200)[1][0] == [0]  # bool starts are kept


def test_given_spans_ignore_the_hints():
    doc = hinted(["I", "came", ".", "You", "left"], [0.0, -1.0, -1.0, 2.0, -1.0])
    spans, sentences = segment_docs([doc], [[(0, 5)]], [None], 200)
    assert spans[0] == [(0, 5)] and sentences[0] is None


@pytest.mark.parametrize("hints", [None, [1.0, 2.0], "abc", [[1.0]] * 3, {"a": 1}])
def test_hints_that_do_not_fit_the_doc_are_ignored(hints):
    doc = hinted(["a", "b", "c"], hints)
    assert sentence_start_hints(doc) is None
    assert segment_docs([doc], [None], [np.array([0.0, -1.0, 1.0])], 200)[1][0] == [0, 2]


def test_non_finite_hints_count_as_none():
    doc = hinted(["a", "b", "c"], [0.0, float("nan"), float("inf")])
    assert sentence_start_hints(doc).tolist() == [0.0, 0.0, 0.0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([None, True, False]), max_size=12), st.booleans())
def test_has_sent_starts_is_spacys_has_annotation(starts, hook):
    """The doc's preset boundaries as spaCy's ``has_annotation("SENT_START")`` reads them: a start
    or non-start set after the first token, any doc of at most one token, a ``sents`` hook; and
    the preset sentences are ``doc.sents``."""
    doc = Doc(spacy.blank("en").vocab, words=["w"] * len(starts), sent_starts=starts or None)
    if hook:
        doc.user_hooks["sents"] = lambda d: iter([d[:]] if len(d) else [])
    assert has_sent_starts(doc) == doc.has_annotation("SENT_START")
    expected = [(s.start, s.end) for s in doc.sents] if doc.has_annotation("SENT_START") else None
    assert preset_sentences(doc) == expected
    assert doc_sentence_starts(doc) == ([start for start, _ in expected] if expected is not None else [0])
