"""The tokenizer's pieces (``features.piece_spans``), rule hint (``rules.RuleEnds``) and string ids
(``orths.span_orths``) against their definitions: the ``_PIECE`` regular expression, spaCy's rule
tokenizer on each chunk of a text between whitespace, and spaCy's ``hash_string``."""
import numpy as np
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.attrs import IDX, LENGTH
from spacy.strings import hash_string

from spacy_hcparse.tokenizer.features import _PIECE, code_points, is_space, join_texts, piece_spans
from spacy_hcparse.tokenizer.orths import span_orths
from spacy_hcparse.tokenizer.rules import RuleEnds

EVERY_CHARACTER = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
SAMPLE = "Mr. O'Neil's cat (3.5kg) didn't go-to e.g. http://x.org :) ½² x١٢ a_b\n\nNew\xa0para\u2028é\u0301!"


def regex_spans(text: str):
    spans = np.array([m.span() for m in _PIECE.finditer(text)], dtype=np.int64).reshape(-1, 2)
    return spans[:, 0], spans[:, 1]


@pytest.mark.parametrize("text", [EVERY_CHARACTER, " ".join(EVERY_CHARACTER), SAMPLE, "", "  \n ", "a", "._"])
def test_pieces_are_the_regular_expressions(text):
    starts, ends = piece_spans(text)
    ref_starts, ref_ends = regex_spans(text)
    assert starts.tolist() == ref_starts.tolist() and ends.tolist() == ref_ends.tolist()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_any_texts_pieces_are_the_regular_expressions(text):
    starts, ends = piece_spans(text)
    ref_starts, ref_ends = regex_spans(text)
    assert starts.tolist() == ref_starts.tolist() and ends.tolist() == ref_ends.tolist()


RULES = {}


def rule_tokenizer(lang: str):
    if lang not in RULES:
        RULES[lang] = spacy.blank(lang).tokenizer
    return RULES[lang]


def chunk_ends(lang: str, text: str) -> set:
    """The token ends of spaCy's rule tokenizer run on each whitespace-free chunk of ``text``."""
    out, at = set(), 0
    for chunk in text.split():
        at = text.index(chunk, at)
        doc = rule_tokenizer(lang)(chunk)
        out.update((at + doc.to_array([IDX, LENGTH]).astype(np.int64).reshape(-1, 2).sum(axis=1)).tolist())
        at += len(chunk)
    return out


def at_pieces(text: str, rule_ends) -> list:
    """What the model reads of the rule ends: whether each piece ends a rule token."""
    return np.isin(piece_spans(text)[1], np.asarray(sorted(rule_ends), dtype=np.int64)).tolist()


@pytest.mark.parametrize("lang", ["en", "de", "pt", "da", "tr"])
def test_cached_chunks_give_each_chunks_token_ends(lang):
    rules = RuleEnds(lang)
    assert not rules.whole_texts
    texts = [SAMPLE, "zum Beispiel: do Brasil, z.B. 3.198 kr.", "", "   ", SAMPLE.upper(), SAMPLE]
    offsets = np.array([0, 1000, 2000, 3000, 4000, 5000])
    for _ in range(2):  # the second pass reads the cache
        ends = rules(texts, offsets)
        for text, offset in zip(texts, offsets.tolist()):
            own = ends[(ends > offset) & (ends <= offset + len(text))] - offset
            assert at_pieces(text, own) == at_pieces(text, chunk_ends(lang, text))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="ab.,'-:()\n é1", max_size=30), min_size=1, max_size=4))
def test_any_texts_rule_ends_are_its_chunks(texts):
    rules = RuleEnds("en", rule_tokenizer("en"))
    offsets = np.cumsum([0] + [len(t) + 2 for t in texts[:-1]])
    ends = rules(texts, offsets)
    for text, offset in zip(texts, offsets.tolist()):
        own = ends[(ends > offset) & (ends <= offset + len(text))] - offset
        assert at_pieces(text, own) == at_pieces(text, chunk_ends("en", text))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="ab.,'-:()\n é1\u2028", max_size=30), max_size=5))
def test_a_joined_batchs_rule_ends_are_its_texts(texts):
    joined, offsets, _, space = join_texts(texts)
    for rules in (RuleEnds("en", rule_tokenizer("en")), whole_text_rules()):
        assert rules.joined(joined, offsets, space).tolist() == rules(texts, offsets[:-1]).tolist()
        assert space.tolist() == is_space(joined).tolist()


def whole_text_rules() -> RuleEnds:
    tokenizer = spacy.blank("en").tokenizer
    tokenizer.add_special_case("a b.", [{"ORTH": "a b."}])
    return RuleEnds("en", tokenizer)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40), st.data())
def test_span_orths_are_spacys_string_hashes(text, data):
    """The Docs are built from these ids: one that is not spaCy's hash of its span would make
    the tokenizer fall back to strings (slow) or, where it is another string's, write that one."""
    starts = np.array(data.draw(st.lists(st.integers(0, len(text) - 1), min_size=1, max_size=8)), dtype=np.int64)
    ends = np.array([data.draw(st.integers(a + 1, len(text))) for a in starts.tolist()], dtype=np.int64)
    orths = span_orths(text, code_points(text), starts, ends)
    assert orths.tolist() == [hash_string(text[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]


def test_a_text_without_utf8_has_no_span_orths():
    text = "a\ud800b"
    assert span_orths(text, code_points(text), np.array([0]), np.array([1])) is None


def test_a_special_case_across_whitespace_tokenizes_whole_texts():
    tokenizer = spacy.blank("en").tokenizer
    tokenizer.add_special_case("a b.", [{"ORTH": "a b."}])
    rules = RuleEnds("en", tokenizer)
    assert rules.whole_texts
    text = "x a b. y"
    ends = rules([text], np.array([0]))
    assert set(ends.tolist()) == set(tokenizer(text).to_array([IDX, LENGTH]).sum(axis=1).tolist())


def test_the_chunks_of_a_whole_text_are_tokenized_alone():
    """spaCy's phrase matcher reads ``' '`` as the special case ``''`` on the whole text; each chunk
    alone has ``''`` as a token, as in a text where a line break parts the chunks."""
    rules = RuleEnds("en", rule_tokenizer("en"))
    assert at_pieces("' ''1", rules(["' ''1"], np.array([0]))) == at_pieces("'\n''1", chunk_ends("en", "'\n''1"))
