"""hc_transition_parser.add_label after initialization, for both learners: the model grows two move
classes, parses stay exactly as they were until training sees the label, training then learns it,
and the grown model round-trips; adding a label that is there changes nothing. Models saved
before the move-class layout that lets a model grow (layout 1, no ``cfg["move_layout"]``) load
and parse exactly as before: the neural one reordered (and then it grows), the perceptron one in
its own layout (and then a new label is refused, saying what to do)."""
import numpy as np
import pytest
import spacy
import srsly
from spacy.tokens import Doc

from spacy_hcparse.transition.moves import n_classes
from tests.components.test_transition_parser import NEURAL, SMALL, make_nlp, parse_of
from tests.treebank import SENTENCES, make_doc_examples, make_doc_with_sentences, make_examples

# a sentence whose second verb attaches with a label the parser was not initialized with
NEW = (["She", "wants", "to", "sleep", "."], [2, 0, 4, 2, 2], ["nsubj", "ROOT", "mark", "xcomp", "punct"])
MODELS = {"perceptron": SMALL, "neural": NEURAL}
STEPS = {"perceptron": 5, "neural": 30}


def trained_a_little(learner):
    """A pipeline initialized on the tiny treebank (without ``xcomp``) and trained a few steps,
    and its training examples."""
    spacy.util.fix_random_seed(0)
    nlp = make_nlp(MODELS[learner])
    examples = make_doc_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(STEPS[learner]):
        nlp.update(examples, sgd=optimizer)
    return nlp, optimizer


def parses(nlp):
    """Parses of the treebank's words as raw text (the model segments it) and with sentences;
    for the perceptron, also with beam search."""
    raw = Doc(nlp.vocab, words=[w for s in SENTENCES + [NEW] for w in s[0]])
    out = [parse_of(nlp(raw)), parse_of(nlp(make_doc_with_sentences(nlp, SENTENCES + [NEW])))]
    parser = nlp.get_pipe("hc_transition_parser")
    if parser.model.has_ref("linear"):
        parser.cfg["beam_width"] = 4
        try:
            out.append(parse_of(nlp(make_doc_with_sentences(nlp, SENTENCES + [NEW]))))
        finally:
            parser.cfg["beam_width"] = 1
    return out


@pytest.fixture(scope="module", params=list(MODELS))
def grown(request):
    """(learner, pipeline trained a little, its parses before ``add_label("xcomp")``), label added."""
    nlp, optimizer = trained_a_little(request.param)
    before = parses(nlp)
    parser = nlp.get_pipe("hc_transition_parser")
    n_out = parser.model.get_dim("nO")
    assert "xcomp" not in parser.labels
    assert parser.add_label("xcomp") == 1
    assert parser.model.get_dim("nO") == n_out + 2 == n_classes(len(parser.labels))
    return request.param, nlp, optimizer, before


def test_parses_are_unchanged_until_training_sees_the_label(grown):
    learner, nlp, _, before = grown
    parser = nlp.get_pipe("hc_transition_parser")
    assert parser.cfg["unseen_labels"] == ["xcomp"]
    assert parses(nlp) == before


def test_adding_a_label_that_is_there_changes_nothing(grown):
    _, nlp, _, before = grown
    parser = nlp.get_pipe("hc_transition_parser")
    data = parser.to_bytes()
    labels = parser.labels
    assert parser.add_label("nsubj") == 0 and parser.add_label("xcomp") == 0
    assert parser.labels == labels and parser.to_bytes() == data
    assert parses(nlp) == before


@pytest.mark.parametrize("learner", list(MODELS))
def test_grown_model_round_trips_and_learns_the_label(learner, tmp_path):
    nlp, optimizer = trained_a_little(learner)
    parser = nlp.get_pipe("hc_transition_parser")
    parser.add_label("xcomp")
    expected = parses(nlp)
    copy = make_nlp(MODELS[learner])
    copy.from_bytes(nlp.to_bytes())
    assert copy.get_pipe("hc_transition_parser").cfg["unseen_labels"] == ["xcomp"]
    assert parses(copy) == expected

    examples = make_examples(nlp, SENTENCES + [NEW])
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    assert parser.cfg["unseen_labels"] == []
    heads, deps = parse_of(nlp(Doc(nlp.vocab, words=NEW[0])))
    assert (heads, deps) == (NEW[1], NEW[2])
    for words, gold_heads, gold_deps in SENTENCES:
        assert parse_of(nlp(Doc(nlp.vocab, words=words))) == (gold_heads, gold_deps), words

    expected = parses(nlp)
    copy = make_nlp(MODELS[learner])
    copy.from_bytes(nlp.to_bytes())
    assert parses(copy) == expected
    nlp.to_disk(tmp_path / "model")
    assert parses(spacy.load(tmp_path / "model")) == expected


def saved_as_before_move_layout(nlp, path):
    """``nlp`` saved to ``path`` as spacy-hcparse saved models before ``cfg["move_layout"]``
    existed (the key left out: its weights must be in layout 1), and loaded back."""
    nlp.to_disk(path)
    cfg_path = path / "hc_transition_parser" / "cfg"
    cfg = srsly.read_json(cfg_path)
    del cfg["move_layout"]
    srsly.write_json(cfg_path, cfg)
    return spacy.load(path)


def old_layout_rows(rows, n_labels):
    """The output rows of a layout-2 neural model (``LAYOUT``: left-arc ``l`` at ``1 + 2l``,
    right-arc at ``2 + 2l``) in layout 1, written out from layout 1's definition: left-arc ``l``
    at ``1 + l``, right-arc at ``1 + n_labels + l``."""
    old = np.empty_like(rows)
    old[0] = rows[0]
    for label in range(n_labels):
        old[1 + label] = rows[1 + 2 * label]
        old[1 + n_labels + label] = rows[2 + 2 * label]
    return old


def test_old_perceptron_model_parses_and_trains_as_before_and_refuses_a_new_label(tmp_path):
    """A perceptron model trained and saved before layout 2 (trained here in layout 1 from its zero
    weights, as the earlier code did) loads with its layout, parses exactly as before (greedy,
    beam, raw text) and trains on; a new label is refused with what to do instead."""
    spacy.util.fix_random_seed(0)
    nlp = make_nlp(SMALL)
    examples = make_doc_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("hc_transition_parser")
    parser.cfg["move_layout"] = 1
    for _ in range(STEPS["perceptron"]):
        nlp.update(examples, sgd=optimizer)
    before = parses(nlp)
    parser.cfg["move_layout"] = 2
    assert parses(nlp) != before  # the layout matters: the same weights read in layout 2 parse otherwise
    parser.cfg["move_layout"] = 1

    loaded = saved_as_before_move_layout(nlp, tmp_path / "old")
    parser = loaded.get_pipe("hc_transition_parser")
    assert parser.cfg["move_layout"] == 1
    assert parses(loaded) == before
    data = parser.to_bytes()
    with pytest.raises(ValueError, match=r"cannot add label 'xcomp': this perceptron model was saved by an earlier "
                                         r"spacy-hcparse.*train a fresh model"):
        parser.add_label("xcomp")
    assert parser.add_label("nsubj") == 0
    assert "xcomp" not in parser.labels and parser.to_bytes() == data and parses(loaded) == before

    optimizer = loaded.resume_training()
    for _ in range(30):  # training goes on in layout 1 (scores, oracle and moves alike): it learns
        loaded.update(make_examples(loaded), sgd=optimizer)
    for words, gold_heads, gold_deps in SENTENCES:
        assert parse_of(loaded(Doc(loaded.vocab, words=words))) == (gold_heads, gold_deps), words
    again = make_nlp(SMALL).from_bytes(loaded.to_bytes())
    assert again.get_pipe("hc_transition_parser").cfg["move_layout"] == 1 and parses(again) == parses(loaded)


def test_old_neural_model_is_reordered_at_load_and_can_grow(tmp_path):
    """A neural model saved before layout 2 (its output rows in layout 1) loads reordered into
    layout 2, parses exactly as before, and takes a new label."""
    nlp, optimizer = trained_a_little("neural")
    before = parses(nlp)
    parser = nlp.get_pipe("hc_transition_parser")
    output = parser.model.get_ref("output")
    for name in ("W", "b"):
        output.set_param(name, old_layout_rows(output.get_param(name), len(parser.labels)))
    assert parses(nlp) != before  # the rows are in another order now

    loaded = saved_as_before_move_layout(nlp, tmp_path / "old")
    parser = loaded.get_pipe("hc_transition_parser")
    assert parser.cfg["move_layout"] == 2
    assert parses(loaded) == before
    assert parser.add_label("xcomp") == 1 and parses(loaded) == before
    loaded.to_disk(tmp_path / "grown")
    assert parses(spacy.load(tmp_path / "grown")) == before


def test_weights_of_an_unknown_class_layout_are_refused(tmp_path):
    nlp, _ = trained_a_little("perceptron")
    nlp.to_disk(tmp_path / "model")
    cfg_path = tmp_path / "model" / "hc_transition_parser" / "cfg"
    cfg = srsly.read_json(cfg_path)
    assert cfg["move_layout"] == 2
    cfg["move_layout"] = 3
    srsly.write_json(cfg_path, cfg)
    with pytest.raises(ValueError, match=r"numbers its move classes in layout 3.*reads layouts \[1, 2\]"):
        spacy.load(tmp_path / "model")


def test_perceptron_training_state_grows_with_the_model():
    """Training goes on after add_label without restarting the averages."""
    nlp, optimizer = trained_a_little("perceptron")
    parser = nlp.get_pipe("hc_transition_parser")
    state = parser.learner.parser
    W, U = state.W.copy(), state.U.copy()
    parser.add_label("xcomp")
    assert parser.learner.parser is state
    assert np.array_equal(state.W[: len(W)], W) and np.array_equal(state.U[: len(U)], U)
    assert len(state.W) == len(parser.model.get_ref("linear").get_param("W"))
    assert not state.W[len(W):].any()


@pytest.mark.parametrize("learner", list(MODELS))
def test_unseen_label_is_never_predicted_whatever_its_scores(learner):
    """Scores that would make the new label win everywhere (the perceptron: random weights, which
    its new classes share with the others; the neural: a large bias on its new outputs) change
    no parse while training has not seen the label."""
    nlp, _ = trained_a_little(learner)
    parser = nlp.get_pipe("hc_transition_parser")
    parser.add_label("xcomp")
    if learner == "perceptron":
        linear = parser.model.get_ref("linear")
        W = np.random.default_rng(0).normal(size=linear.get_param("W").shape).astype("f")
        linear.set_param("W", W)
    else:
        output = parser.model.get_ref("output")
        b = output.get_param("b").copy()
        b[-2:] = 100.0
        output.set_param("b", b)
    assert all("xcomp" not in deps for _, deps in parses(nlp))
    parser.cfg["unseen_labels"] = []  # seen: now its scores count
    assert any("xcomp" in deps for _, deps in parses(nlp))


def test_existing_classes_keep_their_meaning_once_the_label_is_seen():
    """Once seen, the new label's classes are scored with the others; with those scores pushed
    down, the neural model parses as before: every existing class kept its output row."""
    nlp, _ = trained_a_little("neural")
    before = parses(nlp)
    parser = nlp.get_pipe("hc_transition_parser")
    parser.add_label("xcomp")
    parser.cfg["unseen_labels"] = []
    output = parser.model.get_ref("output")
    b = output.get_param("b").copy()
    b[-2:] = -100.0
    output.set_param("b", b)
    assert parses(nlp) == before


@pytest.mark.parametrize("learner", list(MODELS))
def test_rehearsal_teacher_grows_with_the_model(learner):
    """As spaCy's parser resizes its rehearsal model: after add_label, rehearsing (the label seen
    by the student, so searched by the teacher too) parses with the grown teacher."""
    nlp, _ = trained_a_little(learner)
    optimizer = nlp.resume_training()
    parser = nlp.get_pipe("hc_transition_parser")
    teacher = parser._rehearsal_model
    parser.add_label("xcomp")
    assert teacher.get_dim("nO") == parser.model.get_dim("nO")
    nlp.update(make_examples(nlp, SENTENCES + [NEW]), sgd=optimizer)
    assert parser.cfg["unseen_labels"] == []
    losses = nlp.rehearse(make_doc_examples(nlp), sgd=optimizer)
    assert "hc_transition_parser" in losses and parser._rehearsal_model is teacher
