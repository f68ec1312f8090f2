"""hc_parser after training: labels added to a trained parser, and training on partial gold."""
import numpy as np
import pytest
import spacy
import srsly
from spacy.tokens import Doc

from spacy_hcparse.segment import sentence_spans
from tests.components.test_graph_parser import TINY_MODEL, parse_of, train_tiny
from tests.treebank import SENTENCES, make_doc_with_sentences, make_examples

V4 = "spacy_hcparse.GraphParserModel.v4"
# sentences with a label the tiny treebank lacks
XCOMP = [
    (["She", "wants", "to", "sleep", "."], [2, 0, 4, 2, 2], ["nsubj", "ROOT", "mark", "xcomp", "punct"]),
    (["Dogs", "like", "to", "bark", "."], [2, 0, 4, 2, 2], ["nsubj", "ROOT", "mark", "xcomp", "punct"]),
    (["We", "tried", "to", "sing", "loudly", "."], [2, 0, 4, 2, 4, 2],
     ["nsubj", "ROOT", "mark", "xcomp", "advmod", "punct"]),
]


@pytest.fixture(scope="module", params=[None, V4], ids=["low_rank_labels", "full_rank_labels"])
def trained_bytes(request):
    """(architecture, a trained pipeline's bytes): each test loads its own copy."""
    return request.param, train_tiny(architecture=request.param).to_bytes()


def load(trained_bytes):
    architecture, data = trained_bytes
    model = TINY_MODEL
    if architecture:
        model = {**TINY_MODEL, "@architectures": architecture,
                 "tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None, "window_size": 1,
                             "maxout_pieces": 3, "subword_features": True, **TINY_MODEL["tok2vec"]}}
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser", config={"model": model})
    return nlp.from_bytes(data)


def label_scores(nlp):
    parser = nlp.get_pipe("hc_parser")
    doc = make_doc_with_sentences(nlp)
    return parser.score_spans([doc], [sentence_spans(doc, parser.max_length)]).labels


def parses(nlp, sentences=SENTENCES):
    return [parse_of(nlp(Doc(nlp.vocab, words=words))) for words, _, _ in sentences]


def test_added_label_keeps_old_scores_and_parses(trained_bytes):
    nlp = load(trained_bytes)
    parser = nlp.get_pipe("hc_parser")
    before_scores, before_parses = label_scores(nlp), parses(nlp)
    assert parser.add_label("xcomp") == 1 and parser.add_label("xcomp") == 0
    assert parser.labels[-1] == "xcomp" and parser.model.get_dim("nO") == len(parser.labels)
    after = label_scores(nlp)
    for old, new in zip(before_scores, after):
        assert new.shape == (old.shape[0], old.shape[1] + 1)
        assert np.array_equal(new[:, :-1], old)  # exactly: the old labels' weights are untouched
        assert not new[:, -1].any()  # the new label's weights start at zero
    assert parses(nlp) == before_parses
    assert parser.cfg["unseen_labels"] == ["xcomp"]


def test_added_label_is_learned(trained_bytes):
    nlp = load(trained_bytes)
    parser = nlp.get_pipe("hc_parser")
    parser.add_label("xcomp")
    examples = make_examples(nlp) + make_examples(nlp, XCOMP)
    optimizer = nlp.resume_training()
    for _ in range(30):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    assert parser.cfg["unseen_labels"] == []
    assert parses(nlp, XCOMP) == [(heads, deps) for _, heads, deps in XCOMP]
    assert parses(nlp) == [(heads, deps) for _, heads, deps in SENTENCES]


def test_resized_parser_round_trips(trained_bytes, tmp_path):
    nlp = load(trained_bytes)
    nlp.get_pipe("hc_parser").add_label("xcomp")
    expected_scores, expected_parses = label_scores(nlp), parses(nlp)
    copy = load((trained_bytes[0], nlp.to_bytes()))
    assert copy.get_pipe("hc_parser").labels == nlp.get_pipe("hc_parser").labels
    assert all(np.array_equal(a, b) for a, b in zip(label_scores(copy), expected_scores))
    nlp.to_disk(tmp_path / "model")
    cfg = srsly.read_json(tmp_path / "model" / "hc_parser" / "cfg")
    assert cfg["labels"][-1] == "xcomp" and cfg["unseen_labels"] == ["xcomp"]
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("hc_parser").model.get_dim("nO") == len(cfg["labels"])
    assert all(np.array_equal(a, b) for a, b in zip(label_scores(loaded), expected_scores))
    assert parses(loaded) == expected_parses


def test_load_add_label_update(trained_bytes, tmp_path):
    load(trained_bytes).to_disk(tmp_path / "model")
    nlp = spacy.load(tmp_path / "model")
    nlp.get_pipe("hc_parser").add_label("xcomp")
    optimizer = nlp.resume_training()
    losses = {}
    for _ in range(3):
        nlp.update(make_examples(nlp, XCOMP), sgd=optimizer, losses=losses)
    assert np.isfinite(losses["hc_parser"]) and losses["hc_parser"] > 0
    nlp.to_disk(tmp_path / "again")
    again = spacy.load(tmp_path / "again")
    assert again.get_pipe("hc_parser").labels == nlp.get_pipe("hc_parser").labels
    assert parses(again, XCOMP) == parses(nlp, XCOMP)


def test_label_added_before_initialize_is_an_ordinary_label():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("hc_parser", config={"model": TINY_MODEL})
    parser.add_label("xcomp")
    nlp.initialize(lambda: make_examples(nlp))
    assert "xcomp" in parser.labels and parser.cfg["unseen_labels"] == []
    assert parser.model.get_dim("nO") == len(parser.labels)
