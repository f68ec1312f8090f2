"""The multiword-token lexicon and the table of cut runs, learned from (form, words) pairs."""
import numpy as np
import pytest

from spacy_hcparse.tokenizer.data import LabelledText, split_table
from spacy_hcparse.tokenizer.features import INSIDE, TOKEN_END, SplitTable, piece_spans
from spacy_hcparse.tokenizer.lexicon import MultiwordLexicon

PAIRS = [("do", ("de", "o")), ("do", ("de", "o")), ("da", ("de", "a")), ("zum", ("zu", "dem")),
         ("don't", ("do", "n't")), ("fazê-lo", ("fazer", "o")), ("dizê-lo", ("dizer", "o")),
         ("disse-lhe", ("disse", "lhe")), ("viu-lhe", ("viu", "lhe"))]


@pytest.fixture(scope="module")
def lexicon():
    return MultiwordLexicon.from_pairs(PAIRS)


@pytest.mark.parametrize("form, words", [
    ("do", ("de", "o")),            # seen
    ("Do", ("De", "o")),            # seen lowercased: the case comes back
    ("DA", ("DE", "A")),
    ("Don't", ("Do", "n't")),       # the words spell the form: cut at the same offsets
    ("DON'T", ("DO", "N'T")),
    ("trazê-lo", ("trazer", "o")),  # a suffix rule seen twice
    ("deu-lhe", ("deu", "lhe")),
])
def test_expansions(lexicon, form, words):
    assert lexicon.expand(form) == words


def test_unknown_forms_stay_whole(lexicon):
    assert lexicon.expand("gatx") is None  # (ending in "o" it would take the rule of "do")
    assert lexicon.expand("zim") is None  # the rule of "zum" was seen once only
    assert lexicon.expand("") is None


def test_dict_round_trip(lexicon):
    copy = MultiwordLexicon.from_dict(lexicon.to_dict())
    assert copy.forms == lexicon.forms and copy.lower == lexicon.lower and copy.rules == lexicon.rules


@pytest.mark.parametrize("bad", [{}, {"forms": {"a": ["x"]}, "lower": {}, "rules": {}},
                                 {"forms": {}, "lower": {}, "rules": {"a": "b"}}, None])
def test_bad_dicts_are_rejected(bad):
    with pytest.raises(ValueError, match="lexicon"):
        MultiwordLexicon.from_dict(bad)


def test_pieces_are_runs_and_single_characters():
    text = "Dr. Smith's 3,500 e-mails!"
    starts, ends = piece_spans(text)
    assert [text[s:e] for s, e in zip(starts, ends)] == [
        "Dr", ".", "Smith", "'", "s", "3", ",", "500", "e", "-", "mails", "!"]


def test_split_table_cuts_runs_the_treebank_cuts_inside():
    def labelled(text, ends):
        labels = np.full(len(text), INSIDE, dtype=np.int32)
        labels[list(ends)] = TOKEN_END
        return LabelledText(text, labels)

    # "cannot" is cut twice (can|not), left whole once: cut; "gonna" cut once of three: not
    texts = [labelled("cannot go", [2, 5, 8]), labelled("Cannot", [2, 5]), labelled("cannot", [5]),
             labelled("gonna gonna gonna", [2, 4, 10, 16])]
    table = split_table(texts)
    assert table.cuts == {"cannot": (3,)}
    starts, ends = piece_spans("I CANNOT stay", table)
    assert [("I CANNOT stay")[s:e] for s, e in zip(starts, ends)] == ["I", "CAN", "NOT", "stay"]


def test_split_table_rejects_bad_offsets():
    with pytest.raises(ValueError, match="cut offsets"):
        SplitTable({"ab": (2,)})
