"""Writing trees and tags onto Docs from codes (``components.annotate``)."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from spacy_hcparse.components.annotate import JOIN_LABEL, CodeTable, codes, write_parse, write_tags, write_trees


@pytest.fixture
def nlp():
    return spacy.blank("en")


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


def test_write_parse_is_write_trees_then_write_tags(nlp):
    """One ``from_array`` call writes what the two writers write: trees with a joined chunk and
    a token outside every span, tags kept where a tagger set them, whitespace's own tags."""
    words, spaces = ["Dogs", "bark", "loudly", "\n\n", "ok"], [True, True, False, False, False]
    labels = codes(nlp.vocab, "DEP", ["ROOT", "advmod", "dep"])
    spans, heads = [(0, 2), (2, 4)], [np.array([-1, 2, 0]), np.array([-1, 0, 1])]
    tags = {"POS": codes(nlp.vocab, "POS", ["NOUN", "VERB", "ADV", "X", "INTJ"])}
    docs = [Doc(nlp.vocab, words=words, spaces=spaces, pos=["PROPN", "", "", "", ""]) for _ in range(2)]
    write_trees(docs[0], spans, heads, [labels[:2], labels[1:]], continues=[False, True])
    write_tags(docs[0], tags)
    write_parse(docs[1], spans, heads, [labels[:2], labels[1:]], [False, True], tags)
    expected = [(t.head.i, t.dep_, t.pos_, t.is_sent_start) for t in docs[0]]
    assert [(t.head.i, t.dep_, t.pos_, t.is_sent_start) for t in docs[1]] == expected
    assert [p for _, _, p, _ in expected] == ["PROPN", "VERB", "ADV", "SPACE", "INTJ"]
    assert [h for h, _, _, _ in expected] == [1, 1, 1, 2, 4]  # chunk 2 joined to the root; "ok" its own
    write_parse(Doc(nlp.vocab, words=[]), [], [], [], [], {})  # empty doc: nothing to do
