"""Writing trees and tags onto Docs from codes (``components.annotate``)."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from spacy_hcparse.components.annotate import JOIN_LABEL, CodeTable, codes, write_parse, write_trees


@pytest.fixture
def nlp():
    return spacy.blank("en")


def write_tags(doc, tags):
    write_parse(doc, [], [], [], None, tags)


def test_write_tags_fills_missing_tags_and_tags_whitespace_as_spacy(nlp):
    doc = Doc(nlp.vocab, words=["Dogs", "bark", ".", "\n\n"], spaces=[True, False, False, False],
              pos=["PROPN", "", "", ""], tags=["", "VBP", "", ""])
    write_tags(doc, {"POS": codes(nlp.vocab, "POS", ["NOUN", "VERB", "PUNCT", "X"]),
                     "TAG": codes(nlp.vocab, "TAG", ["NNS", "VB", ".", "XX"])})
    assert [t.pos_ for t in doc] == ["PROPN", "VERB", "PUNCT", "SPACE"]  # a tagger's tags are kept
    assert [t.tag_ for t in doc] == ["NNS", "VBP", ".", "_SP"]


def test_write_tags_refuses_other_attributes_and_wrong_lengths(nlp):
    doc = Doc(nlp.vocab, words=["a", "b"])
    with pytest.raises(ValueError, match="only POS and TAG"):
        write_tags(doc, {"DEP": codes(nlp.vocab, "DEP", ["x", "y"])})
    with pytest.raises(ValueError, match="1 TAG tags for a doc of 2 tokens"):
        write_tags(doc, {"TAG": codes(nlp.vocab, "TAG", ["x"])})
    write_tags(Doc(nlp.vocab, words=[]), {"TAG": codes(nlp.vocab, "TAG", [])})  # empty doc: nothing to do


def test_code_table_follows_its_names(nlp):
    table = CodeTable("DEP")
    first = table(nlp.vocab, ["nsubj", "obj"])
    assert table(nlp.vocab, ["nsubj", "obj"]) is first  # encoded once
    assert [nlp.vocab.strings[int(c)] for c in table(nlp.vocab, ["nsubj", "obj", "iobj"])] == ["nsubj", "obj", "iobj"]


def test_write_trees_joins_the_chunks_of_one_sentence(nlp):
    doc = Doc(nlp.vocab, words=["a", "b", "c", "d"])
    labels = codes(nlp.vocab, "DEP", ["ROOT", "dep"])
    heads = np.array([-1, 0, 1])  # each chunk: word 1 the root, word 2 its child
    write_trees(doc, [(0, 2), (2, 4)], [heads, heads], [labels, labels], continues=[False, True])
    assert [t.head.i for t in doc] == [0, 0, 0, 2]
    assert [t.dep_ for t in doc] == ["ROOT", "dep", JOIN_LABEL, "dep"]
    assert len(list(doc.sents)) == 1


def test_write_parse_writes_trees_and_tags_at_once(nlp):
    """Trees with a joined chunk and a token outside every span, and tags (a tagger's kept,
    whitespace's own), in one call."""
    doc = Doc(nlp.vocab, words=["Dogs", "bark", "loudly", "\n\n", "ok"], spaces=[True, True, False, False, False],
              pos=["PROPN", "", "", "", ""])
    labels = [codes(nlp.vocab, "DEP", ["nsubj", "ROOT"]), codes(nlp.vocab, "DEP", ["advmod", "dep"])]
    write_parse(doc, [(0, 2), (2, 4)], [np.array([-1, 2, 0]), np.array([-1, 0, 1])], labels, [False, True],
                {"POS": codes(nlp.vocab, "POS", ["NOUN", "VERB", "ADV", "X", "INTJ"])})
    assert [t.head.i for t in doc] == [1, 1, 1, 2, 4]  # chunk 2 joined to the root; "ok" its own
    assert [t.dep_ for t in doc] == ["nsubj", "ROOT", JOIN_LABEL, "dep", ""]
    assert [t.pos_ for t in doc] == ["PROPN", "VERB", "ADV", "SPACE", "INTJ"]
    assert [t.is_sent_start for t in doc][:4] == [True, False, False, False]  # one sentence
    write_parse(Doc(nlp.vocab, words=[]), [], [], [], [], {})  # empty doc: nothing to do
