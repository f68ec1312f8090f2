"""Raw text from gold CoNLL-U: sentence texts, separators, grouping, and a round trip through
spaCy's tokenizer to the CoNLL 2018 evaluation."""

import pytest
import spacy

from spacy_hcparse.evaluation.conll18 import evaluate, parse_treebank
from spacy_hcparse.evaluation.raw_text import raw_documents, read_raw_documents, sentence_texts
from spacy_hcparse.evaluation.system_output import doc_to_conllu

from .test_conll18 import SAMPLE, treebank_file

W = "{}\t{}\t_\t_\t_\t_\t{}\tdep\t_\t{}"

GOLD = "\n".join([
    "# newdoc id = d1", "# newpar", "# sent_id = 1", "# text = I can't.",
    W.format(1, "I", 2, "_"), "2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_", W.format(2, "ca", 0, "_"),
    W.format(3, "n't", 2, "SpaceAfter=No"), W.format(4, ".", 2, "SpaceAfter=No"), "",
    "# sent_id = 2",  # no "# text": rebuilt from the tokens
    W.format(1, "(", 2, "SpaceAfter=No"), W.format(2, "Yes", 0, "SpaceAfter=No"), W.format(3, ")", 2, "_"), "",
    "# newpar", "# sent_id = 3", "# text = Wrong text",  # does not match the tokens: rebuilt
    W.format(1, "Ok", 0, "_"), "",
    "# newdoc id = d2", "# sent_id = 4", "# text = Bye",
    W.format(1, "Bye", 0, "_"), "",
])


@pytest.fixture()
def bank():
    return parse_treebank(GOLD.split("\n"), "gold")


def test_sentence_texts_prefer_the_text_comment(bank):
    texts, rebuilt = sentence_texts(bank)
    assert texts == ["I can't.", "(Yes)", "Ok", "Bye"] and rebuilt == 2


def test_documents_per_gold_document_with_separators(bank):
    docs = raw_documents(bank)
    # "." has SpaceAfter=No, so "(Yes)" follows directly; "# newpar" makes a blank line
    assert [d.text for d in docs] == ["I can't.(Yes)\n\nOk", "Bye"]
    assert [(d.start, d.stop, d.n_words) for d in docs] == [(0, 3, 8), (3, 4, 1)]


def test_flat_documents_have_no_line_breaks(bank):
    assert [d.text for d in raw_documents(bank, group=2, paragraphs=False)] == ["I can't.(Yes)", "Ok Bye"]


def test_documents_in_groups_of_n_sentences_cross_gold_documents(bank):
    assert [d.text for d in raw_documents(bank, group=3)] == ["I can't.(Yes)\n\nOk", "Bye"]
    assert [d.text for d in raw_documents(bank, group=2)] == ["I can't.(Yes)", "Ok\n\nBye"]
    assert [(d.start, d.stop) for d in raw_documents(bank, group=1)] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    with pytest.raises(ValueError):
        raw_documents(bank, group=-1)


def round_trip(bank, docs):
    """Tokenize and sentencize the raw documents, write system CoNLL-U, evaluate against gold."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    text = "".join(doc_to_conllu(doc, doc_id=f"d{i}") for i, doc in enumerate(nlp.pipe(d.text for d in docs)))
    return evaluate(bank, parse_treebank(text.split("\n"), "system"))


def test_round_trip_through_spacy_aligns_with_gold(bank):
    scores = round_trip(bank, raw_documents(bank))
    assert scores["Words"].gold == 9 and scores["Tokens"].gold == 8


def test_sample_file_round_trip():
    bank, docs = read_raw_documents(SAMPLE, group=10)
    scores = round_trip(bank, docs)
    assert scores["Words"].f1 > 0.9 and sum(d.n_words for d in docs) == len(bank.words)


@pytest.mark.slow
def test_ewt_test_round_trip_in_groups_of_ten():
    path = treebank_file("en_ewt-ud-test.conllu")
    if path is None:
        pytest.skip("no EWT test file")
    bank, docs = read_raw_documents(path, group=10)
    assert sentence_texts(bank)[1] == 0  # every "# text" matches its tokens
    scores = round_trip(bank, docs)  # raises if the text did not survive
    assert len(docs) == 208 and scores["Words"].f1 > 0.95
