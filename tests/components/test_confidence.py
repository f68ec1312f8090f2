"""hc_parser's confidence features: GraphParser.kbest (k best trees, the first the written parse for
the exact decoders; after nlp.pipe(n_process=2) and Doc round trips), the MBR.v1 decoder,
token._.hc_dep_prob, and the calibration fitted at evaluation in training (not by spacy evaluate)."""
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_hcparse.decoders import tree_problem
from tests.components.test_graph_parser import train_tiny
from tests.treebank import SENTENCES, make_examples

DECODERS = {"eisner": "spacy_hcparse.Eisner.v1", "mst": "spacy_hcparse.MST.v1", "mbr": "spacy_hcparse.MBR.v1",
            "mbr_nonprojective": "spacy_hcparse.MBR.v1"}


@pytest.fixture(scope="module")
def trained():
    return train_tiny(decoder="eisner", epochs=40)


@pytest.fixture(scope="module")
def saved(trained, tmp_path_factory):
    path = tmp_path_factory.mktemp("confidence") / "model"
    trained.to_disk(path)
    return path


def load(path, decoder):
    block = {"@misc": DECODERS[decoder]}
    if decoder == "mbr_nonprojective":
        block["projective"] = False
    return spacy.load(path, config={"components": {"hc_parser": {"decoder": block}}})


def written(sent):
    return [t.head.i for t in sent], [t.dep_ for t in sent]


def check_kbest(nlp, sent, k):
    trees = nlp.get_pipe("hc_parser").kbest(sent, k)
    assert 1 <= len(trees) <= k
    scores = [score for _, _, score in trees]
    assert all(a >= b - 1e-9 for a, b in zip(scores, scores[1:]))
    assert len({tuple(heads) for heads, _, _ in trees}) == len(trees)
    for heads, labels, _ in trees:
        assert len(heads) == len(labels) == len(sent)
        local = np.array([-1] + [0 if h == sent.start + i else h - sent.start + 1 for i, h in enumerate(heads)])
        assert tree_problem(local) == ""
        assert all(sent.start <= h < sent.end for h in heads)
        assert (np.array(labels) == "ROOT").sum() == 1
    return trees


@pytest.mark.parametrize("decoder", list(DECODERS))
def test_kbest_first_tree_is_the_written_parse(saved, decoder):
    nlp = load(saved, decoder)
    for words, _, _ in SENTENCES:
        doc = nlp(Doc(nlp.vocab, words=words))
        for sent in doc.sents:
            trees = check_kbest(nlp, sent, 5)
            assert (trees[0][0], trees[0][1]) == written(sent)
            if decoder in ("eisner", "mst"):
                assert trees[0][2] == pytest.approx(sent._.hc_score)
            assert len(trees) == 5 or len(sent) <= 3


def test_kbest_after_multiprocessing_and_round_trips(saved, tmp_path):
    nlp = spacy.load(saved)
    texts = [" ".join(words) for words, _, _ in SENTENCES]
    kbest = nlp.get_pipe("hc_parser").kbest
    one = [[kbest(s, 3) for s in doc.sents] for doc in nlp.pipe(texts)]
    docs = list(nlp.pipe(texts, n_process=2, batch_size=2))
    assert [[kbest(s, 3) for s in doc.sents] for doc in docs] == one
    DocBin(docs=docs, store_user_data=True).to_disk(tmp_path / "docs.spacy")
    again = list(DocBin().from_disk(tmp_path / "docs.spacy").get_docs(nlp.vocab))
    assert [[kbest(s, 3) for s in doc.sents] for doc in again] == one
    docs[0].to_disk(tmp_path / "doc")
    assert [kbest(s, 3) for s in Doc(nlp.vocab).from_disk(tmp_path / "doc").sents] == one[0]


def test_span_kbest_asks_the_component_that_parsed_the_doc(saved, tmp_path):
    """``sent._.hc_kbest(k)`` on a Doc parsed in this process is the component's ``kbest``; a Doc
    that lost the link (pickled, to_bytes) is refused with what to call instead, and the link
    leaves nothing on the Doc that spaCy warns about when serializing it."""
    nlp = spacy.load(saved)
    doc = nlp(" ".join(SENTENCES[0][0]))
    parser = nlp.get_pipe("hc_parser")
    assert [s._.hc_kbest(3) for s in doc.sents] == [parser.kbest(s, 3) for s in doc.sents]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing on the Doc that spaCy cannot serialize (W109)
        data, raw = pickle.dumps(doc), doc.to_bytes()
    for lost in (pickle.loads(data), Doc(nlp.vocab).from_bytes(raw)):
        with pytest.raises(ValueError, match="kbest\\(span, k\\)"):
            next(iter(lost.sents))._.hc_kbest(3)
        assert [parser.kbest(s, 3) for s in lost.sents] == [parser.kbest(s, 3) for s in doc.sents]


def test_kbest_refuses_a_span_that_is_not_a_parsed_sentence(trained):
    doc = trained(Doc(trained.vocab, words=SENTENCES[0][0]))
    parser = trained.get_pipe("hc_parser")
    with pytest.raises(ValueError, match="not a sentence"):
        parser.kbest(doc[0:2], 2)
    with pytest.raises(ValueError, match="positive integer"):
        parser.kbest(next(iter(doc.sents)), 0)


def test_dep_probs_and_parse_probs(trained):
    for words, _, _ in SENTENCES:
        doc = trained(Doc(trained.vocab, words=words))
        for sent in doc.sents:
            probs = [t._.hc_dep_prob for t in sent]
            assert all(0.0 < p <= 1.0 for p in probs)
            root = [t for t in sent if t.head.i == t.i]
            assert [t._.hc_dep_prob for t in root] == [1.0]
            heads = [t._.hc_head_prob for t in sent]
            assert 0.0 < sent._.hc_parse_prob <= min(heads) + 1e-12


def test_mbr_decoder_parses_like_the_trained_model(saved):
    nlp = load(saved, "mbr")
    right = total = 0
    for words, heads, _ in SENTENCES:  # heads 1-based, 0 for the root
        doc = nlp(Doc(nlp.vocab, words=words))
        right += sum((t.head.i + 1 if t.head.i != t.i else 0) == h for t, h in zip(doc, heads))
        total += len(words)
    assert right / total > 0.9


def test_calibration_is_fitted_at_evaluation_in_training_only(tmp_path):
    nlp = train_tiny(decoder="eisner", epochs=5)
    pipe = nlp.get_pipe("hc_parser")
    assert pipe.prob_temperature is None and "calibration" not in pipe.cfg
    examples = make_examples(nlp)
    scores = nlp.evaluate(examples)  # after updates: an evaluation in training
    fitted = pipe.cfg["calibration"]
    assert fitted["temperature"] == scores["hc_prob_temperature"] and fitted["words"] > 0
    assert 0.0 <= scores["hc_head_ece"] <= 1.0
    assert pipe.calibration == fitted
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("hc_parser").calibration == fitted
    scores = loaded.evaluate(make_examples(loaded, SENTENCES[:2]))  # spacy evaluate: no refit
    assert "hc_prob_temperature" not in scores and loaded.get_pipe("hc_parser").cfg["calibration"] == fitted
    explicit = spacy.load(tmp_path / "model", config={"components": {"hc_parser": {"prob_temperature": 2.0}}})
    assert explicit.get_pipe("hc_parser").calibration == {"temperature": 2.0, "knots": None}


def test_sibling_calibration_writes_probabilities_that_bound_the_tree(tmp_path):
    nlp = train_tiny(decoder="eisner", epochs=5)
    nlp.evaluate(make_examples(nlp))  # fits the calibration, with siblings (Eisner reads them)
    pipe = nlp.get_pipe("hc_parser")
    assert pipe.calibration["siblings"] is True
    texts = [" ".join(words) for words, _, _ in SENTENCES]
    for doc in nlp.pipe(texts):
        for sent in doc.sents:
            assert sent._.hc_parse_prob <= min(t._.hc_head_prob for t in sent) + 1e-12


def test_spacy_train_leaves_a_calibrated_model_best(tmp_path):
    """``spacy train`` with the smoke config and nothing about calibration in it: model-best
    carries the calibration its last best evaluation fitted on dev, and writes probabilities
    with it."""
    from spacy.cli.train import train

    nlp = spacy.blank("en")
    DocBin(docs=[eg.reference for eg in make_examples(nlp)]).to_disk(tmp_path / "tiny.spacy")
    overrides = {"paths.train": str(tmp_path / "tiny.spacy"), "paths.dev": str(tmp_path / "tiny.spacy"),
                 "training.max_steps": 40, "training.eval_frequency": 20}
    train(Path(__file__).resolve().parents[2] / "configs" / "smoke_graph.cfg", tmp_path / "out", overrides=overrides)
    best = spacy.load(tmp_path / "out" / "model-best")
    pipe = best.get_pipe("hc_parser")
    assert pipe.prob_temperature is None and pipe.cfg["calibration"]["words"] > 0
    assert pipe.calibration == pipe.cfg["calibration"]
    doc = best(" ".join(SENTENCES[0][0]))
    assert all(0.0 <= t._.hc_head_prob <= 1.0 for t in doc)
