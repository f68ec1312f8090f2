"""The UDTokenizer: training on a tiny treebank, segmenting, multiword tokens, saving and loading."""
import json
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import spacy
import srsly
from spacy.tokens import Doc, DocBin
from thinc.api import Relu, Softmax, chain
from thinc.types import Ragged

from spacy_hcparse.cli import main
from spacy_hcparse.conllu import with_range_lines
from spacy_hcparse.evaluation.conll18 import evaluate, parse_treebank
from spacy_hcparse.evaluation.raw_text import raw_documents, tokenized
from spacy_hcparse.evaluation.system_output import doc_to_conllu
from spacy_hcparse.names import MULTIWORD_TOKENS, SENT_START_HINTS
from spacy_hcparse.tokenizer import UDTokenizer, ud_tokenizer_for, use_ud_tokenizer
from spacy_hcparse.tokenizer.features import (INSIDE, IS_TOKEN_END, SENT_END, SEPARATOR, TOKEN_END, join_texts, piece_features,
                                              piece_spans)
from spacy_hcparse.tokenizer import inference
from spacy_hcparse.tokenizer import tokenizer as tokenizer_module
from spacy_hcparse.tokenizer.inference import _layers, predict_probs
from spacy_hcparse.tokenizer.tokenizer import DEFAULTS, _decode, hinted_scores
from spacy_hcparse.tokenizer.train import (TrainSettings, evaluation_interval, choose_hint_weight, selection_score, tokenizer_scores,
                                         train_tokenizer)

from .tiny import conllu, write

FAST = TrainSettings(max_epochs=40, batch_pieces=200, eval_every=1000, patience=100, learn_rate=0.01)
CFG = {"width": 16, "dilations": [1, 2], "embed_rows": 200}


@pytest.fixture(scope="module")
def bank():
    return parse_treebank(conllu(4).splitlines(), "tiny")


@pytest.fixture(scope="module")
def trained(bank):
    tokenizer = UDTokenizer(spacy.blank("xx").vocab, **CFG)
    result = train_tokenizer(tokenizer, bank, bank, FAST)
    return tokenizer, result


def test_overfits_the_tiny_treebank(trained, bank):
    tokenizer, result = trained
    scores = tokenizer_scores(tokenizer, bank, paragraphs=True)
    assert scores["Words"] == 1.0 and scores["Tokens"] == 1.0
    assert scores["Sentences"] == 1.0
    assert result.best is not None and result.best.scores["Words"] == pytest.approx(1.0)


def test_multiword_tokens_are_words_with_their_surface_range(trained):
    tokenizer, _ = trained
    doc = tokenizer("Eu gosto do gato. Do alto vê-se tudo.")
    assert [t.text for t in doc] == ["Eu", "gosto", "de", "o", "gato", ".", "De", "o", "alto", "vê-se", "tudo", "."]
    assert doc._.get(MULTIWORD_TOKENS) == [(2, 4, "do"), (6, 8, "Do")]
    assert [t.whitespace_ for t in doc[2:4]] == ["", " "]
    assert [t.i for t in doc if t.is_sent_start] == [0, 6]
    assert doc[3].is_sent_start is False  # inside a multiword token


def test_conllu_output_has_range_lines_the_evaluation_accepts(trained, bank):
    tokenizer, _ = trained
    docs = raw_documents(bank, group=0, paragraphs=False)
    text = "".join(doc_to_conllu(d) for d in tokenizer.pipe(x.text for x in docs))
    assert "\n3-4\tdo\t" in text
    scores = evaluate(bank, parse_treebank(text.splitlines(), "system"))
    assert scores["Words"].f1 == 1.0


def test_whitespace_is_kept_as_spacy_keeps_it(trained):
    tokenizer, _ = trained
    text = "  Eu gosto  da casa!\n\nEle veio. \n"
    doc = tokenizer(text)
    assert doc.text == text.replace("da", "dea")  # the words of a multiword token: no space between
    assert [t.text for t in doc if t.is_space] == ["  ", " ", "\n\n", "\n"]
    starts = [t.text for t in doc if t.is_sent_start]
    assert "Ele" in starts  # after a blank line


def test_empty_and_space_only_texts(trained):
    tokenizer, _ = trained
    assert len(tokenizer("")) == 0
    doc = tokenizer(" \n ")
    assert doc.text == " \n " and all(t.is_space for t in doc)


def test_without_sentence_starts_the_doc_has_none(trained):
    tokenizer, _ = trained
    plain = UDTokenizer(tokenizer.vocab, **CFG, set_sent_starts=False).from_bytes(tokenizer.to_bytes())
    doc = plain("Eu gosto do gato. Ele veio da casa!")
    assert not doc.has_annotation("SENT_START")


@pytest.mark.parametrize("pipes,sets", [((), True), (("sentencizer",), True), (("hc_parser",), False),
                                         (("hc_transition_parser",), False)])
def test_a_pipeline_that_segments_itself_gets_no_sentence_starts(trained, tmp_path, pipes, sets):
    """With hc_parser or hc_transition_parser in the pipeline, its sentences decide, and a saved
    pipeline keeps that choice."""
    tokenizer, _ = trained
    tokenizer.to_disk(tmp_path / "tokenizer")
    nlp = spacy.blank("xx")
    for name in pipes:
        nlp.add_pipe(name)
    use_ud_tokenizer(nlp, ud_tokenizer_for(nlp, tmp_path / "tokenizer"))
    doc = nlp.tokenizer("Eu gosto do gato. Ele veio da casa!")
    assert doc.has_annotation("SENT_START") is sets
    assert [t.text for t in doc] == [t.text for t in tokenizer("Eu gosto do gato. Ele veio da casa!")]
    nlp.to_disk(tmp_path / "nlp")
    assert spacy.load(tmp_path / "nlp").tokenizer.cfg["set_sent_starts"] is sets


def test_bytes_round_trip_tokenizes_identically(trained):
    tokenizer, _ = trained
    copy = UDTokenizer(spacy.blank("en").vocab).from_bytes(tokenizer.to_bytes())
    assert copy.cfg == tokenizer.cfg  # the trained one's, rule language included
    text = "Ele veio do rio. Não sei, Dr. Silva!"
    a, b = tokenizer(text), copy(text)
    assert [t.text for t in a] == [t.text for t in b]
    assert [t.is_sent_start for t in a] == [t.is_sent_start for t in b]
    assert a._.get(MULTIWORD_TOKENS) == b._.get(MULTIWORD_TOKENS)


def test_saved_pipeline_loads_and_tokenizes_identically(trained, tmp_path):
    tokenizer, _ = trained
    nlp = use_ud_tokenizer(spacy.blank("xx"), tokenizer)
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert isinstance(loaded.tokenizer, UDTokenizer)
    text = "Vamos ao rio? Do alto vê-se tudo."
    assert [t.text for t in loaded(text)] == [t.text for t in nlp(text)]


@pytest.mark.parametrize("data", [b"", b"not msgpack at all \xff", b"\x80", None])
def test_corrupt_data_is_rejected(trained, data):
    tokenizer, _ = trained
    if data is None:  # a valid header with broken weights
        good = tokenizer.to_bytes()
        import srsly

        msg = srsly.msgpack_loads(good)
        msg["model"] = b"garbage"
        data = srsly.msgpack_dumps(msg)
    target = UDTokenizer(spacy.blank("xx").vocab)
    with pytest.raises(ValueError, match="UDTokenizer"):
        target.from_bytes(data)
    assert not target.trained


def test_an_untrained_tokenizer_says_so():
    tokenizer = UDTokenizer(spacy.blank("en").vocab)
    with pytest.raises(ValueError, match="not trained"):
        tokenizer("Hello.")


def test_config_builds_the_tokenizer():
    config = {"nlp": {"tokenizer": {"@tokenizers": "spacy_hcparse.UDTokenizer.v1", "width": 8, "dilations": [1]}}}
    nlp = spacy.blank("en", config=config)
    assert isinstance(nlp.tokenizer, UDTokenizer) and nlp.tokenizer.cfg["width"] == 8


def test_initialize_loads_a_trained_file(trained, tmp_path):
    tokenizer, _ = trained
    tokenizer.to_disk(tmp_path / "tok")
    fresh = UDTokenizer(spacy.blank("xx").vocab)
    fresh.initialize(path=tmp_path / "tok")
    assert fresh.trained and fresh.cfg == tokenizer.cfg


def test_nlp_initialize_loads_the_file_the_config_names(trained, tmp_path):
    tokenizer, _ = trained
    tokenizer.to_disk(tmp_path / "tok")
    config = {"nlp": {"tokenizer": {"@tokenizers": "spacy_hcparse.UDTokenizer.v1"}},
              "initialize": {"tokenizer": {"path": str(tmp_path / "tok")}}}
    nlp = spacy.blank("pt", config=config)
    nlp.initialize()
    assert [t.text for t in nlp("Vamos ao rio?")] == ["Vamos", "a", "o", "rio", "?"]


def test_range_lines_take_the_space_after_of_the_last_word():
    rows = [f"{i}\tw{i}\t_\t_\t_\t_\t0\troot\t_\t{misc}" for i, misc in
            [(1, "_"), (2, "_"), (3, "SpaceAfter=No"), (4, "_")]]
    out = with_range_lines(rows, [10, 11, 12, 13], [(11, 13, "ab")])
    assert out[1] == "2-3\tab\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No"
    assert out[3].endswith("\t_") and len(out) == 5
    assert with_range_lines(rows, [10, 11, 12, 13], [(11, 15, "x")]) == rows  # not all written


def test_cli_trains_and_writes_the_tokenizer(tmp_path, capsys):
    train = write(tmp_path / "train.conllu", repeat=2)
    out = tmp_path / "out"
    code = main(["train-tokenizer", str(train), str(train), str(out), "--lang", "xx", "--width", "8",
                 "--dilations", "1", "--embed-rows", "50", "--max-epochs", "2", "--eval-every", "1"])
    assert code == 0
    table = capsys.readouterr().out
    assert "WORDS" in table and "SENTS_FLAT" in table
    report = json.loads((out / "scores.json").read_text())
    assert report["best"] is not None and report["cfg"]["width"] == 8
    assert UDTokenizer(spacy.blank("xx").vocab).from_disk(out / "tokenizer").trained


def test_cli_parse_writes_multiword_tokens_as_range_lines(trained, tmp_path):
    tokenizer, _ = trained
    use_ud_tokenizer(spacy.blank("xx"), tokenizer).to_disk(tmp_path / "nlp")
    (tmp_path / "in.txt").write_text("Eu gosto do gato. Ele veio da casa!\n", encoding="utf8")
    assert main(["parse", str(tmp_path / "nlp"), str(tmp_path / "in.txt"), "--output", str(tmp_path / "out.conllu"),
                 "--quiet"]) == 0
    out = (tmp_path / "out.conllu").read_text(encoding="utf8")
    assert "\n3-4\tdo\t" in out and "\n3-4\tda\t" in out
    system = parse_treebank(out.splitlines(), "out", require_trees=False)
    assert system.chars == "Eugostodogato.Eleveiodacasa!"
    assert [w.form for w in system.words[2:4]] == ["de", "o"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
       | st.text(alphabet="ab.-' \n\u00a0\tÉ😀1,", max_size=60))
def test_any_text_keeps_its_characters(trained, text):
    """Every character of the text is in the Doc: whitespace as spaCy keeps it, and the surface
    tokens (multiword tokens by their ranges) spell the rest."""
    tokenizer, _ = trained
    doc = tokenizer(text)
    ranges = {start: (end, form) for start, end, form in doc._.get(MULTIWORD_TOKENS)}
    out, i = [], 0
    while i < len(doc):
        if i in ranges:
            end, form = ranges[i]
            out.append(form + doc[end - 1].whitespace_)
            i = end
        else:
            out.append(doc[i].text_with_ws)
            i += 1
    assert "".join(out) == text


def _analysis(doc):
    return ([t.text_with_ws for t in doc], [t.is_sent_start for t in doc], doc._.get(MULTIWORD_TOKENS))


BATCH_TEXTS = ["Eu gosto do gato. Ele veio da casa!", "", "Do alto vê-se tudo.", "  \n", "rio", "Vamos ao rio?\n\nNão sei,",
               "\n\nDr. Silva.  ", "O preço é 10%.", "gato"]


@pytest.mark.parametrize("batch_size", [1, 2, 3, 64])
def test_pipe_gives_each_text_its_own_doc(trained, batch_size):
    """A batch reads its texts as one string (features.join_texts): each Doc must still be its
    text's, as tokenized alone, whatever its neighbours (letters at the edges, blank lines, empty)."""
    tokenizer, _ = trained
    docs = list(tokenizer.pipe(BATCH_TEXTS, batch_size=batch_size))
    assert len(docs) == len(BATCH_TEXTS) and docs[2].text == "Deo alto vê-se tudo." and docs[3].text == "  \n"
    assert [_analysis(d) for d in docs] == [_analysis(tokenizer(t)) for t in BATCH_TEXTS]
    assert _analysis(docs[0])[2] == [(2, 4, "do"), (8, 10, "da")]


def test_words_are_spacys_strings_new_or_known_or_symbols(trained):
    """The Docs are built from string ids where the vocabulary holds them: new words, words seen
    before, spaCy's symbols (whose id is not their hash: ``ID``, ``number``), whitespace."""
    tokenizer, _ = trained
    texts = ["ID number ORTH zzqx-7 \n\n ", "ID number zzqx-7 \u00e9t\u00e9 \U0001F600"]
    for _ in range(2):
        for doc, text in zip(tokenizer.pipe(texts), texts):
            assert doc.text == text
            assert all(t.orth_ == t.text and tokenizer.vocab.strings[t.orth] == t.text for t in doc)


def test_batch_features_are_each_texts_own(trained):
    tokenizer, _ = trained
    joined, offsets, _, _ = join_texts(BATCH_TEXTS)
    starts, ends = piece_spans(joined, tokenizer.splits)
    text_of = np.searchsorted(offsets, starts, side="right") - 1
    bounds = (offsets[text_of], offsets[text_of + 1] - len(SEPARATOR))
    batch = piece_features(joined, starts, ends, tokenizer.batch_rule_ends(BATCH_TEXTS, offsets[:-1]), bounds)
    for i, text in enumerate(BATCH_TEXTS):
        own = piece_features(text, *piece_spans(text, tokenizer.splits), tokenizer.rule_ends(text))
        assert np.array_equal(batch[text_of == i], own)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(alphabet="ab.-' \n\u00a0\tÉ1,dDo", max_size=20), max_size=6), batch_size=st.integers(1, 4))
def test_any_batch_tokenizes_as_its_texts_alone(trained, texts, batch_size):
    tokenizer, _ = trained
    docs = list(tokenizer.pipe(texts, batch_size=batch_size))
    assert [_analysis(d) for d in docs] == [_analysis(tokenizer(t)) for t in texts]


@pytest.mark.parametrize("tile_rows", [inference.TILE_ROWS, 1, 5])
def test_fused_prediction_is_the_models(trained, monkeypatch, tile_rows):
    """inference.predict_probs (folded embedding, numba blocks in tiles of rows, tiles crossing
    the texts' bounds) against thinc's model.predict on the same rows; folded tables kept in
    ``folds`` give the same."""
    tokenizer, _ = trained
    monkeypatch.setattr(inference, "TILE_ROWS", tile_rows)
    texts = ["Eu gosto do gato. Ele veio da casa!", "Do alto vê-se tudo.\n\nO preço é 10%.", "a"]
    feats = [piece_features(t, *piece_spans(t, tokenizer.splits), tokenizer.rule_ends(t)) for t in texts]
    X = Ragged(np.concatenate(feats), np.array([len(f) for f in feats], dtype="i"))
    assert _layers(tokenizer.model) is not None  # the fused path, not the fallback
    np.testing.assert_allclose(predict_probs(tokenizer.model, X), tokenizer.model.predict(X), rtol=1e-4, atol=1e-6)
    folds = {}
    first = predict_probs(tokenizer.model, X, folds)
    assert "tables" in folds and np.array_equal(predict_probs(tokenizer.model, X, folds), first)


def test_pieces_of_the_same_features_are_projected_once(trained):
    """Rows of the same features share one projection (``inference.unique_rows``); rows whose keys
    coincide but whose features differ are all projected: the prediction is the same either way."""
    tokenizer, _ = trained
    text = "o gato e o gato e o gato."
    feats = piece_features(text, *piece_spans(text, tokenizer.splits), tokenizer.rule_ends(text))
    unique, inverse = inference.unique_rows(feats)
    assert len(unique) < len(feats) and np.array_equal(unique[inverse], feats)
    X = Ragged(feats, np.array([len(feats)], dtype="i"))
    np.testing.assert_allclose(predict_probs(tokenizer.model, X), tokenizer.model.predict(X), rtol=1e-4, atol=1e-6)
    clash = np.array([[1, 0], [0, int(inference._KEY_MUL)], [1, 0]], dtype=np.uint64)  # one key, two rows
    assert inference.unique_rows(clash)[1] is None


def test_folded_weights_are_kept_only_while_the_weights_stay(trained):
    """The tokenizer folds its embedding once and keeps it across calls, but a change of the
    weights (in place, as training makes it) is folded again: predictions follow the weights."""
    tokenizer, _ = trained
    copy = UDTokenizer(tokenizer.vocab, **CFG).from_bytes(tokenizer.to_bytes())
    text = "Eu gosto do gato. Ele veio da casa!"
    feats = piece_features(text, *piece_spans(text, copy.splits), copy.rule_ends(text))
    X = Ragged(feats, np.array([len(feats)], dtype="i"))
    copy(text)
    kept = copy._folds
    copy(text)
    assert copy._folds is kept and "tables" in kept
    table = _layers(copy.model)[0][0][0].get_param("E")
    table += 0.5  # in place
    assert not np.allclose(copy.piece_probs([feats])[0], predict_probs(tokenizer.model, X), atol=1e-3)
    probs = copy.piece_probs([feats], inference.kept_folds(copy.model, copy._folds))[0]
    np.testing.assert_allclose(probs, copy.model.predict(X), rtol=1e-4, atol=1e-6)
    copy(text)
    assert copy._folds is not kept


def test_texts_longer_than_a_stretch_are_read_with_their_context(trained, monkeypatch):
    """A batch whose texts fit the model's stretch (``PIECE_ROWS`` pieces) goes to the model whole;
    one with a longer text is read in stretches with context on each side: the same probabilities."""
    tokenizer, _ = trained
    whole = [tokenizer._predict_joined(BATCH_TEXTS)[1], tokenizer._predict_joined(BATCH_TEXTS, with_odds=True)[2]]
    monkeypatch.setattr(tokenizer_module, "PIECE_ROWS", 4)
    stretched = [tokenizer._predict_joined(BATCH_TEXTS)[1], tokenizer._predict_joined(BATCH_TEXTS, with_odds=True)[2]]
    assert np.array_equal(whole[0], stretched[0])
    np.testing.assert_allclose(whole[1], stretched[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n_labels", [2, 5, 7, 8, 9])
def test_the_softmax_on_transposed_scores_is_thincs_bit_for_bit(n_labels):
    """``inference._softmax_rows`` repeats thinc's Softmax in the same float operations (numpy's
    sum of a short row in order); a numpy that summed differently would change the probabilities."""
    layer = Softmax(n_labels, 16)
    layer.initialize()
    rng = np.random.default_rng(0)
    layer.set_param("W", rng.standard_normal((n_labels, 16)).astype("f"))
    layer.set_param("b", rng.standard_normal(n_labels).astype("f"))
    X = (rng.standard_normal((3000, 16)) * 4).astype("f")
    assert np.array_equal(inference._softmax_rows(layer, X).view("u4"), layer.predict(X).view("u4"))


def test_another_model_structure_falls_back_to_thinc():
    model = chain(Relu(4, 3), Softmax(2, 4))
    model.initialize()
    X = np.ones((2, 3), dtype="f")
    assert _layers(model) is None
    assert np.array_equal(predict_probs(model, X), model.predict(X))


def test_tokenized_batches_texts_and_passes_docs(trained):
    tokenizer, _ = trained
    nlp = use_ud_tokenizer(spacy.blank("xx"), tokenizer)
    given = Doc(nlp.vocab, words=["já", "feito"])
    items = ["Eu gosto do gato.", given, "Vamos ao rio?", "", "Do alto."]
    docs = list(nlp.pipe(tokenized(nlp, items, batch_size=2)))
    assert docs[1] is given
    assert [_analysis(d) for i, d in enumerate(docs) if i != 1] == [_analysis(nlp(t)) for t in items if isinstance(t, str)]


def test_hint_weight_turns_decoding_to_the_rule_tokenizer():
    # three pieces of "ab.c": the model ends no token after "ab" and one after "."; the rules
    # disagree on both (hint 2: a token ends, 1: none ends), and say nothing of "c" (hint 0)
    text = "ab.c"
    starts, ends = np.array([0, 2, 3]), np.array([2, 3, 4])
    probs = np.array([[0.9, 0.04, 0.02, 0.02, 0.02], [0.1, 0.7, 0.1, 0.05, 0.05], [0.1, 0.1, 0.6, 0.1, 0.1]])
    hints = np.array([2, 1, 0])
    alone = _decode(text, starts, ends, probs, hints, 0.0)
    assert alone[[1, 2, 3]].tolist() == [INSIDE, TOKEN_END, SENT_END]
    ruled = _decode(text, starts, ends, probs, hints, 8.0)
    assert ruled[[1, 2, 3]].tolist() == [TOKEN_END, INSIDE, SENT_END]  # among ends, the model's choice
    scores = hinted_scores(probs, hints, 8.0)
    assert np.allclose(scores[2], np.log(probs[2]))  # unknown hint: the model alone


def test_training_chooses_the_hint_weight_on_dev(trained, bank):
    tokenizer, _ = trained
    weak = UDTokenizer(spacy.blank("xx").vocab, **CFG).from_bytes(tokenizer.to_bytes())
    weak.model = weak._build_model()  # untrained weights: the rule tokenizer is the better judge
    scores = choose_hint_weight(weak, bank, [0.0, 100.0])
    assert weak.cfg["hint_weight"] == 100.0
    assert scores[100.0]["Words"] > scores[0.0]["Words"]
    copy = UDTokenizer(spacy.blank("xx").vocab).from_bytes(weak.to_bytes())
    assert copy.cfg["hint_weight"] == 100.0  # saved with the tokenizer


def test_a_tie_on_dev_keeps_the_weight_closest_to_the_rules(trained, bank):
    """At these weights the rules decide every token end of the tiny treebank: a tie, which the
    largest weight wins (on small held-out sets the smallest left the model overriding the rules
    on test)."""
    tokenizer, _ = trained
    copy = UDTokenizer(spacy.blank("xx").vocab, **CFG).from_bytes(tokenizer.to_bytes())
    scores = choose_hint_weight(copy, bank, [16.0, 50.0, 100.0])
    assert len({s["score"] for s in scores.values()}) == 1
    assert copy.cfg["hint_weight"] == 100.0


def test_data_written_before_the_hint_weight_loads_without_it(trained):
    tokenizer, _ = trained
    msg = srsly.msgpack_loads(tokenizer.to_bytes())
    del msg["cfg"]["hint_weight"]
    copy = UDTokenizer(spacy.blank("xx").vocab).from_bytes(srsly.msgpack_dumps(msg))
    assert copy.cfg["hint_weight"] == 0.0
    text = "Ele veio do rio. Não sei, Dr. Silva!"
    assert [t.text for t in copy(text)] == [t.text for t in tokenizer(text)]
    with pytest.raises(ValueError, match="hint_weight"):
        UDTokenizer(spacy.blank("xx").vocab, hint_weight=-1.0)


def test_unknown_selection_is_rejected(bank):
    with pytest.raises(ValueError, match="select"):
        train_tokenizer(UDTokenizer(spacy.blank("xx").vocab, **CFG), bank, bank, TrainSettings(select="loss"))


def test_selection_is_by_words_with_sentences_parting_ties():
    better_words = ({"Words": 0.991, "Sentences": 0.80}, {"Sentences": 0.70})
    better_sentences = ({"Words": 0.989, "Sentences": 0.90}, {"Sentences": 0.80})
    same_words = ({"Words": 0.991, "Sentences": 0.85}, {"Sentences": 0.75})
    assert selection_score(*better_words) > selection_score(*better_sentences)
    assert selection_score(*same_words) > selection_score(*better_words)
    mean = selection_score(*better_sentences, select="words_sentences")
    assert mean == pytest.approx((0.989 + 0.85) / 2)


def test_default_evaluations_follow_the_runs_size():
    """``eval_every = 0``: about a dozen evaluations over the run, 25-100 steps apart, so a small
    treebank (a few steps a pass) is still evaluated several times and a large one every 100 steps."""
    assert TrainSettings().eval_every == 0
    assert evaluation_interval(5, 30) == 25  # nine tenths of a small dev file: 150 steps, 6 evaluations
    assert evaluation_interval(19, 30) == 47
    assert evaluation_interval(108, 30) == 100  # EWT's train file


def hinting(tokenizer, weight=2.0):
    return UDTokenizer(tokenizer.vocab, **CFG, set_sent_starts=False, sent_start_weight=weight).from_bytes(tokenizer.to_bytes())


def test_sentence_start_hints_are_the_weighted_log_odds_of_the_token_before(trained):
    """Each word's hint: the weight times the model's log-odds that the token before it ends a
    sentence; 0 at the first word, on whitespace and inside a multiword token."""
    tokenizer, _ = trained
    text = "Eu gosto do gato.  Ele veio da casa!\n\nDo alto."
    doc = hinting(tokenizer)(text)
    hints = doc._.get(SENT_START_HINTS)
    assert not doc.has_annotation("SENT_START") and len(hints) == len(doc)
    _, labels, odds = hinting(tokenizer)._predict_joined([text], with_odds=True)
    token_ends = np.flatnonzero(IS_TOKEN_END[labels])  # the last character of each surface token
    inner = {i for start, end, _ in doc._.get(MULTIWORD_TOKENS) for i in range(start + 1, end)}
    firsts = [t.i for t in doc if not t.is_space and t.i not in inner]  # the first word of each surface token
    assert len(firsts) == len(token_ends)
    assert [hints[i] for i in firsts] == pytest.approx([0.0] + [2.0 * float(odds[e]) for e in token_ends[:-1]], abs=1e-5)
    assert all(hints[i] == 0.0 for i in range(len(doc)) if i not in firsts)
    ele = [t.i for t in doc if t.text == "Ele"][0]
    assert hints[ele] > 0 > hints[ele + 1]  # after a sentence end, and inside a sentence


def test_no_hints_with_sentence_starts_set_or_weight_zero(trained):
    tokenizer, _ = trained
    assert tokenizer("Eu gosto do gato. Ele veio.")._.get(SENT_START_HINTS) is None
    assert hinting(tokenizer, 0.0)("Eu gosto do gato. Ele veio.")._.get(SENT_START_HINTS) is None
    with pytest.raises(ValueError):
        UDTokenizer(tokenizer.vocab, sent_start_weight=-1.0)


def test_a_segmenting_pipeline_gets_hints_and_keeps_its_weight(trained, tmp_path):
    """The shipped choice: hc_parser's segmentation reads the tokenizer's hints (undo it and the
    parser would segment alone)."""
    tokenizer, _ = trained
    tokenizer.to_disk(tmp_path / "tokenizer")
    nlp = spacy.blank("xx")
    nlp.add_pipe("hc_parser")
    use_ud_tokenizer(nlp, ud_tokenizer_for(nlp, tmp_path / "tokenizer"))
    assert nlp.tokenizer.cfg["sent_start_weight"] == DEFAULTS.sent_start_weight > 0
    doc = nlp.tokenizer("Eu gosto do gato. Ele veio da casa!")
    assert len(doc._.get(SENT_START_HINTS)) == len(doc)
    nlp.to_disk(tmp_path / "nlp")
    assert spacy.load(tmp_path / "nlp").tokenizer.cfg["sent_start_weight"] == DEFAULTS.sent_start_weight


def test_hints_survive_serialization(trained):
    tokenizer, _ = trained
    docs = list(hinting(tokenizer).pipe(["Eu gosto do gato. Ele veio.", "Do alto!  Sim."]))
    copies = list(DocBin(docs=docs, store_user_data=True).get_docs(tokenizer.vocab))
    copies += [Doc(tokenizer.vocab).from_bytes(d.to_bytes()) for d in docs] + [pickle.loads(pickle.dumps(d)) for d in docs]
    for doc, copy in zip(docs * 3, copies):
        assert list(copy._.get(SENT_START_HINTS)) == doc._.get(SENT_START_HINTS)  # DocBin gives a tuple


def test_hints_survive_two_processes(trained):
    tokenizer, _ = trained
    nlp = spacy.blank("xx")
    use_ud_tokenizer(nlp, hinting(tokenizer))
    texts = ["Eu gosto do gato. Ele veio.", "Do alto!  Sim.", "Não sei. Talvez."] * 2
    two = list(nlp.pipe(texts, n_process=2, batch_size=2))
    assert [d._.get(SENT_START_HINTS) for d in two] == [nlp(t)._.get(SENT_START_HINTS) for t in texts]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
                      | st.text(alphabet="ab.-' \n\u00a0\tÉ😀1,dDo", max_size=30), max_size=5),
       batch_size=st.integers(1, 3))
def test_any_texts_hints_fit_its_doc(trained, texts, batch_size):
    """With hints on, every Doc has one finite hint per token, 0 on whitespace, and the same
    words as without hints."""
    tokenizer, _ = trained
    plain = UDTokenizer(tokenizer.vocab, **CFG, set_sent_starts=False, sent_start_weight=0.0).from_bytes(tokenizer.to_bytes())
    for doc, text in zip(hinting(tokenizer).pipe(texts, batch_size=batch_size), texts):
        hints = doc._.get(SENT_START_HINTS)
        assert len(hints) == len(doc) and all(np.isfinite(hints))
        assert all(h == 0.0 for h, t in zip(hints, doc) if t.is_space)
        assert [t.text_with_ws for t in doc] == [t.text_with_ws for t in plain(text)]
