"""System CoNLL-U from Docs: columns, whitespace tokens dropped, heads repaired and counted."""
from collections import Counter

import pytest
import spacy
from spacy.tokens import Doc

from spacy_hcparse.evaluation.conll18 import evaluate_conllu, parse_treebank
from spacy_hcparse.evaluation.system_output import doc_to_conllu, write_conllu


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def rows(text: str):
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


def comments(text: str):
    return [line for line in text.splitlines() if line.startswith("#")]


def parsed(nlp, words, spaces, heads, deps, **kwargs):
    """A Doc with 0-based ``heads`` (a token heading itself is a root)."""
    return Doc(nlp.vocab, words=words, spaces=spaces, heads=heads, deps=deps, **kwargs)


def test_columns_comments_and_space_after(nlp):
    doc = parsed(nlp, ["I", "saw", "it", ".", "Yes", "!"], [True, True, False, True, False, False],
                 [1, 1, 1, 1, 4, 4], ["nsubj", "ROOT", "obj", "punct", "ROOT", "punct"],
                 pos=["PRON", "VERB", "PRON", "PUNCT", "INTJ", "PUNCT"], lemmas=["I", "see", "it", ".", "yes", "!"],
                 morphs=["Case=Nom", "Tense=Past", "", "", "", ""], tags=["PRP", "VBD", "PRP", ".", "UH", "."],
                 sent_starts=[True, False, False, False, True, False])
    text = doc_to_conllu(doc, doc_id="d1")
    assert comments(text) == ["# newdoc id = d1", "# sent_id = d1-1", "# text = I saw it.", "# sent_id = d1-2",
                              "# text = Yes!"]
    assert rows(text)[:4] == [
        ["1", "I", "I", "PRON", "PRP", "Case=Nom", "2", "nsubj", "_", "_"],
        ["2", "saw", "see", "VERB", "VBD", "Tense=Past", "0", "root", "_", "_"],
        ["3", "it", "it", "PRON", "PRP", "_", "2", "obj", "_", "SpaceAfter=No"],
        ["4", ".", ".", "PUNCT", ".", "_", "2", "punct", "_", "_"],
    ]
    assert rows(text)[4:] == [
        ["1", "Yes", "yes", "INTJ", "UH", "_", "0", "root", "_", "SpaceAfter=No"],
        ["2", "!", "!", "PUNCT", ".", "_", "1", "punct", "_", "_"],  # the end of the text
    ]


def test_whitespace_tokens_are_dropped_and_their_dependents_move_up(nlp):
    words = ["Go", " ", "home", "\n", "now"]
    spaces = [True, False, True, False, False]
    # home <- "\n" <- " " <- Go (root); now -> "\n"
    heads = [0, 0, 3, 1, 3]
    doc = parsed(nlp, words, spaces, heads, ["ROOT", "dep", "obj", "dep", "advmod"])
    stats = Counter()
    text = doc_to_conllu(doc, stats=stats)
    assert [(r[1], r[6], r[7], r[9]) for r in rows(text)] == [
        ("Go", "0", "root", "_"), ("home", "1", "obj", "_"), ("now", "1", "advmod", "_")]
    assert stats["whitespace_tokens"] == 2 and not any(stats[k] for k in ("roots_attached", "cycles_broken"))
    assert "# text = Go  home  now" in text  # "Go  home \nnow": the newline becomes a space


def test_a_whitespace_root_leaves_one_root(nlp):
    doc = parsed(nlp, ["a", "\n", "b"], [False, False, False], [1, 1, 1], ["dep", "ROOT", "dep"])
    stats = Counter()
    heads = [r[6] for r in rows(doc_to_conllu(doc, stats=stats))]
    assert heads == ["0", "1"] and stats["roots_attached"] == 1


def test_heads_outside_the_sentence_are_counted_and_attached_to_the_root(nlp):
    # spaCy starts a sentence at each root's left edge: "A" and "b C d", where d's head is A
    doc = parsed(nlp, ["A", "b", "C", "d"], [True] * 4, [0, 2, 2, 0], ["ROOT", "dep", "ROOT", "dep"])
    assert [s.text for s in doc.sents] == ["A", "b C d"]
    stats = Counter()
    text = doc_to_conllu(doc, stats=stats)
    assert [r[6] for r in rows(text)] == ["0", "2", "0", "2"]  # d attached to the sentence's root C
    assert stats["heads_outside_sentence"] == 1 and stats["roots_attached"] == 1


def test_unparsed_docs_are_flat_trees_and_sentences_default_to_the_doc(nlp):
    doc = nlp("This is text. More here")
    stats = Counter()
    text = doc_to_conllu(doc, stats=stats)
    assert [(r[6], r[7]) for r in rows(text)] == [("0", "_")] + [("1", "_")] * 5
    assert stats["unparsed_sentences"] == 1 and stats["roots_attached"] == 0
    bank = parse_treebank(text.split("\n"), "x")  # one tree per sentence
    assert len(bank.sentences) == 1


def test_sentencizer_output_evaluates_against_gold(nlp, tmp_path):
    pipe = spacy.blank("en")
    pipe.add_pipe("sentencizer")
    docs = list(pipe.pipe(["Hello there.  It's fine!", "No  way"]))
    path = tmp_path / "sys.conllu"
    stats = write_conllu(docs, path)
    assert stats["sentences"] == 3 and stats["whitespace_tokens"] == 2
    text = path.read_text(encoding="utf8")
    gold = ("1\tHello\t_\t_\t_\t_\t0\troot\t_\t_\n2\tthere\t_\t_\t_\t_\t1\tadvmod\t_\tSpaceAfter=No\n"
            "3\t.\t_\t_\t_\t_\t1\tpunct\t_\t_\n\n"
            "1-2\tIt's\t_\t_\t_\t_\t_\t_\t_\t_\n1\tIt\t_\t_\t_\t_\t3\tnsubj\t_\t_\n2\t's\t_\t_\t_\t_\t3\tcop\t_\t_\n"
            "3\tfine\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No\n4\t!\t_\t_\t_\t_\t3\tpunct\t_\t_\n\n"
            "1\tNo\t_\t_\t_\t_\t2\tdet\t_\t_\n2\tway\t_\t_\t_\t_\t0\troot\t_\t_\n\n")
    scores = evaluate_conllu(gold, text)
    assert scores["Sentences"].f1 == 1.0 and scores["Words"].f1 == 1.0 and scores["Tokens"].correct == 7  # all but "It's"
    assert comments(text)[0] == "# newdoc id = doc1"


def test_tabs_and_newlines_never_reach_a_column(nlp):
    doc = Doc(nlp.vocab, words=["a\tb", "c"], spaces=[True, False])
    text = doc_to_conllu(doc)
    assert all(len(r) == 10 for r in rows(text)) and rows(text)[0][1] == "a b"
