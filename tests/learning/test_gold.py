"""Tags derived from the reference tree (``learning.gold``)."""
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.learning.gold import aligned_tags, relative_pos_tags


def _reference(nlp):
    words = "She reads the old books of the old man .".split()
    heads = [1, 1, 4, 4, 1, 8, 8, 8, 4, 1]
    deps = ["nsubj", "ROOT", "det", "amod", "obj", "case", "det", "amod", "nmod", "punct"]
    pos = ["PRON", "VERB", "DET", "ADJ", "NOUN", "ADP", "DET", "ADJ", "NOUN", "PUNCT"]
    return Doc(nlp.vocab, words=words, heads=heads, deps=deps, pos=pos)


def test_relative_pos_tags_count_words_of_the_heads_part_of_speech():
    tags = relative_pos_tags(_reference(spacy.blank("en")))
    assert tags == ["+1VERB", "ROOT", "+1NOUN", "+1NOUN", "-1VERB", "+1NOUN", "+1NOUN", "+1NOUN",
                    "-1NOUN", "-1VERB"]


def test_relative_pos_tags_cap_the_count():
    nlp = spacy.blank("en")
    words = ["a", "b", "c", "d", "e"]
    doc = Doc(nlp.vocab, words=words, heads=[4, 4, 4, 4, 4], deps=["dep"] * 4 + ["ROOT"],
              pos=["NOUN"] * 5)
    assert relative_pos_tags(doc, cap=3) == ["+3NOUN", "+3NOUN", "+2NOUN", "+1NOUN", "ROOT"]


def test_relative_pos_tags_without_a_parse_are_unknown():
    nlp = spacy.blank("en")
    assert relative_pos_tags(nlp.make_doc("no parse here")) == [None, None, None]


def test_relative_pos_tags_of_unlabelled_tokens_are_unknown():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["a", "b", "c"], heads=[1, 1, 1], deps=["dep", "ROOT", ""],
              pos=["NOUN", "VERB", "NOUN"])
    assert relative_pos_tags(doc) == ["+1VERB", "ROOT", None]


def test_aligned_relpos_follows_the_tokenization():
    nlp = spacy.blank("en")
    eg = Example(nlp.make_doc("She reads the oldbooks of the old man."), _reference(nlp))
    tags = aligned_tags(eg, "RELPOS")
    assert len(tags) == len(eg.predicted)
    assert tags[:3] == ["+1VERB", "ROOT", "+1NOUN"]
    assert tags[3] is None  # "oldbooks" covers two reference words
    assert tags[-1] == "-1VERB"
