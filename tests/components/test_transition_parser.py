"""hc_transition_parser: learning the tiny treebank, odd docs, round trips, determinism,
processes, the neural option and the hand-off to hc_parser; raw text: sentence boundaries from
both learners, preset ones kept, training from the reference's sentences whatever the predicted
doc carries (an annotating senter, tokens that do not align); partially annotated references
(their known arcs learned), rehearsal toward a teacher, and the model's learner."""
import logging

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.decoders import tree_problem
from spacy_hcparse.transition.perceptron_model import perceptron_weights
from tests.treebank import (SENTENCES, make_doc_examples, make_doc_with_sentences, make_examples,
                            update_with_annotating_senter)

SMALL = {"n_buckets": 2**16}
NEURAL = {
    "@architectures": "spacy_hcparse.NeuralTransitionModel.v2",
    "sentence_width": 16,
    "hidden_width": 32,
    "maxout_pieces": 2,
    "max_length": 200,
    "dropout": 0.0,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "pretrained_vectors": None,
        "width": 32,
        "depth": 2,
        "embed_size": 500,
        "window_size": 1,
        "maxout_pieces": 3,
        "subword_features": True,
    },
}


def make_nlp(model=None, **config):
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_transition_parser", config={"model": model or SMALL, "label_freq_cutoff": 1, **config})
    return nlp


def train_tiny(epochs=15, seed=0, model=None, docs=True, **config):
    """Trained on raw-text docs of three treebank sentences each (``docs``), or one per sentence."""
    spacy.util.fix_random_seed(seed)
    nlp = make_nlp(model, **config)
    examples = make_doc_examples(nlp) if docs else make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(epochs):
        nlp.update(examples, sgd=optimizer)
    return nlp


@pytest.fixture(scope="module")
def trained():
    return train_tiny()


def parse_of(doc):
    return [t.head.i + 1 if t.head.i != t.i else 0 for t in doc], [t.dep_ for t in doc]


def span_heads(doc, start, end):
    return np.array([-1] + [0 if t.head.i == t.i else t.head.i - start + 1 for t in doc[start:end]])


def assert_valid(doc):
    """One root per sentence labelled ROOT, heads inside the sentence, no cycles."""
    for sent in doc.sents:
        heads = span_heads(doc, sent.start, sent.end)
        assert not tree_problem(heads), tree_problem(heads)
        assert all(sent.start <= t.head.i < sent.end for t in sent)
        assert [t.dep_ == "ROOT" for t in sent] == [t.head.i == t.i for t in sent]
        assert sum(t.dep_ == "ROOT" for t in sent) == 1


def test_learns_tiny_treebank_including_non_projective(trained):
    parser = trained.get_pipe("hc_transition_parser")
    assert any("||" in label for label in parser.labels)  # lifted labels were learned
    for words, heads, deps in SENTENCES:
        doc = trained(Doc(trained.vocab, words=words))
        assert parse_of(doc) == (heads, deps), words


def test_beam_search_gives_trees_close_to_greedy(trained):
    """Weights trained greedily: the beam may find other high-scoring trees, always valid ones."""
    parser = trained.get_pipe("hc_transition_parser")
    parser.cfg["beam_width"] = 4
    try:
        correct = total = 0
        for words, heads, deps in SENTENCES:
            doc = trained(Doc(trained.vocab, words=words))
            assert_valid(doc)
            correct += sum(g == h for g, h in zip(parse_of(doc)[0], heads))
            total += len(heads)
        assert correct / total >= 0.9
    finally:
        parser.cfg["beam_width"] = 1


def test_preset_sentences_are_kept(trained):
    doc = trained(make_doc_with_sentences(trained))
    starts = [i == 0 for s in SENTENCES for i in range(len(s[0]))]
    assert [t.is_sent_start for t in doc] == starts
    assert_valid(doc)
    got = [h for sent in doc.sents for h in span_heads(doc, sent.start, sent.end)[1:]]
    assert got == [h for _, heads, _ in SENTENCES for h in heads]


@pytest.mark.parametrize(
    "words",
    [[], ["word"], [" ", "a", "\n", "b", "  "], ["."] * 5, ["x"] * 1000],
    ids=["empty", "one", "whitespace", "punct", "1000-words"],
)
def test_odd_docs(trained, words):
    doc = trained(Doc(trained.vocab, words=words))
    assert len(doc) == len(words)
    if words:
        assert_valid(doc)


def test_long_doc_without_boundaries_is_chunked(trained):
    words = (["She", "reads", "old", "books", "."] * 200)[:1000]
    doc = trained(Doc(trained.vocab, words=words))
    assert_valid(doc)
    assert max(len(s) for s in doc.sents) <= trained.get_pipe("hc_transition_parser").max_length


def test_bytes_and_disk_round_trips(trained, tmp_path):
    doc_words = [w for s in SENTENCES for w in s[0]]
    expected = parse_of(trained(make_doc_with_sentences(trained)))
    nlp2 = make_nlp()
    nlp2.from_bytes(trained.to_bytes())
    assert parse_of(nlp2(make_doc_with_sentences(nlp2))) == expected
    trained.to_disk(tmp_path / "model")
    nlp3 = spacy.load(tmp_path / "model")
    assert parse_of(nlp3(make_doc_with_sentences(nlp3))) == expected
    assert len(doc_words) == len(expected[0])


def test_load_rejects_mismatched_labels(trained, tmp_path):
    trained.to_disk(tmp_path / "model")
    cfg = tmp_path / "model" / "hc_transition_parser" / "cfg"
    import srsly

    data = srsly.read_json(cfg)
    data["labels"] = data["labels"][:-1]
    srsly.write_json(cfg, data)
    with pytest.raises(ValueError, match="do not belong together"):
        spacy.load(tmp_path / "model")


def learned_weights(nlp):
    """The averaged perceptron weights (saving writes them into the model first)."""
    pipe = nlp.get_pipe("hc_transition_parser")
    pipe.to_bytes()
    return perceptron_weights(pipe.model)[0]


def test_deterministic_for_a_fixed_seed():
    a, b = train_tiny(epochs=3), train_tiny(epochs=3)
    assert np.abs(learned_weights(a)).sum() > 0
    assert np.array_equal(learned_weights(a), learned_weights(b))


def test_two_processes_give_the_same_parses(trained):
    docs = [Doc(trained.vocab, words=words) for words, _, _ in SENTENCES] * 3
    one = [parse_of(d) for d in trained.pipe(docs)]
    docs = [Doc(trained.vocab, words=words) for words, _, _ in SENTENCES] * 3
    two = [parse_of(d) for d in trained.pipe(docs, n_process=2, batch_size=4)]
    assert one == two


def test_neural_option_learns_tiny_treebank():
    nlp = train_tiny(epochs=40, model=NEURAL)
    correct = total = 0
    for words, heads, deps in SENTENCES:
        doc = nlp(Doc(nlp.vocab, words=words))
        assert_valid(doc)
        got, _ = parse_of(doc)
        correct += sum(g == h for g, h in zip(got, heads))
        total += len(heads)
    assert correct / total >= 0.9
    nlp2 = spacy.blank("en")
    nlp2.add_pipe("hc_transition_parser", config={"model": NEURAL})
    nlp2.from_bytes(nlp.to_bytes())
    doc = make_doc_with_sentences(nlp)
    assert parse_of(nlp(doc)) == parse_of(nlp2(make_doc_with_sentences(nlp2)))


def test_internal_tagger_learns_reference_tags():
    """With tags in the reference, the perceptron trains its own tagger for the tag features."""
    tags = {"I": "PRP", "She": "PRP", "We": "PRP", "Dogs": "NNS", "Birds": "NNS", "like": "VBP", "reads": "VBZ"}
    spacy.util.fix_random_seed(0)
    nlp = make_nlp()
    examples = make_examples(nlp)
    for eg in examples:
        for token in eg.reference:
            token.tag_ = tags.get(token.text, "NN" if token.text.isalpha() else ".")
    optimizer = nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("hc_transition_parser")
    assert "PRP" in parser.cfg["tags"]
    for _ in range(15):
        nlp.update(examples, sgd=optimizer)
    for words, heads, deps in SENTENCES:
        assert parse_of(nlp(Doc(nlp.vocab, words=words))) == (heads, deps)
    assert perceptron_weights(parser.model)[1].any()


def test_update_before_initialize_gives_clear_error():
    nlp = make_nlp()
    with pytest.raises(ValueError):
        nlp.update(make_examples(nlp))


def test_beam_training_learns_tiny_treebank():
    nlp = train_tiny(epochs=15, beam_width=4, train_beam_width=4)
    for words, heads, deps in SENTENCES:
        assert parse_of(nlp(Doc(nlp.vocab, words=words))) == (heads, deps), words


def test_training_with_error_exploration_learns_tiny_treebank():
    nlp = train_tiny(epochs=20, train_explore=0.9, explore_after=20)
    for words, heads, deps in SENTENCES:
        assert parse_of(nlp(Doc(nlp.vocab, words=words))) == (heads, deps), words


def test_error_exploration_is_deterministic_for_a_fixed_seed():
    a, b = (train_tiny(epochs=4, train_explore=1.0) for _ in range(2))
    assert np.array_equal(learned_weights(a), learned_weights(b))
    assert not np.array_equal(learned_weights(a), learned_weights(train_tiny(epochs=4)))  # it explored


def test_train_explore_is_a_probability():
    with pytest.raises(ValueError, match="train_explore"):
        make_nlp(train_explore=1.5)


# ----- raw text: sentence boundaries, training from the reference's sentences ---------------------
THREE_SENTENCES = "I saw it. Then I left the house. She reads old books."
NEURAL_UNSEGMENTED = {**NEURAL, "sentence_width": 0}  # no sentence-start scorer


@pytest.fixture(scope="module")
def trained_neural():
    return train_tiny(epochs=100, model=NEURAL)


@pytest.mark.parametrize("learner", ["perceptron", "neural"])
def test_raw_text_gets_its_sentences(trained, trained_neural, learner):
    nlp = trained if learner == "perceptron" else trained_neural
    doc = nlp(THREE_SENTENCES)
    assert [s.text for s in doc.sents] == ["I saw it.", "Then I left the house.", "She reads old books."]
    assert_valid(doc)


@pytest.mark.parametrize("learner", ["perceptron", "neural"])
def test_preset_sentences_are_kept_by_both_learners(trained, trained_neural, learner):
    nlp = trained if learner == "perceptron" else trained_neural
    words = ["I", "saw", "it", ".", "Then", "I", "left", "the", "house", "."]
    starts = [True, False, False, True, False, False, False, True, False, False]  # not where they belong
    doc = nlp(Doc(nlp.vocab, words=words, sent_starts=starts))
    assert [t.is_sent_start for t in doc] == starts
    assert_valid(doc)


@pytest.mark.parametrize("learner", ["perceptron", "neural"])
def test_long_predicted_sentence_stays_one_tree(trained, trained_neural, learner):
    """A predicted sentence longer than max_length is parsed in chunks joined under one root."""
    nlp = trained if learner == "perceptron" else trained_neural
    nlp.get_pipe("hc_transition_parser").model.attrs["max_length"] = 10
    try:
        doc = nlp(Doc(nlp.vocab, words=["x"] * 35))
    finally:
        nlp.get_pipe("hc_transition_parser").model.attrs["max_length"] = 200
    assert_valid(doc)
    assert len(list(doc.sents)) == 1
    root = doc[:].root
    assert sum(t.dep_ == "dep" for t in root.children) >= 3


@pytest.mark.parametrize("learner,beam", [("perceptron", 1), ("perceptron", 4), ("neural", 1)])
def test_whitespace_is_a_leaf_of_the_word_before_it(trained, trained_neural, learner, beam):
    """Whatever the model scores, a whitespace token heads nothing and hangs from the nearest
    word before it (after it at a sentence's start), labelled ``dep`` (as in ``hc_parser``)."""
    nlp = trained if learner == "perceptron" else trained_neural
    pipe = nlp.get_pipe("hc_transition_parser")
    pipe.cfg["beam_width"] = beam
    try:
        words = ["\n", "I", "like", "\n\n", " ", "green", "eggs", ".", "\t"]
        doc = nlp(Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1)))
        raw = nlp("  I saw it.\n\nThen I left  the house and   she reads old books .\n")
    finally:
        pipe.cfg["beam_width"] = 1
    assert_valid(doc)
    assert [doc[i].head.i for i in (0, 3, 4, 8)] == [1, 2, 2, 7]
    assert all(doc[i].dep_ == "dep" for i in (0, 3, 4, 8))
    for parsed in (doc, raw):
        assert all(t.head.i == t.i or not t.head.is_space for t in parsed)
        assert not any(t.is_space and t.head.i == t.i for t in parsed if len(t.sent) > 1)


@pytest.mark.parametrize("model", [SMALL, NEURAL])
def test_annotating_senter_skips_no_gold_sentence(model, caplog):
    """An annotating senter gives the predicted docs other sentences than the reference's; the
    parser still learns every reference sentence, and warns about none."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("senter")
    nlp.add_pipe("hc_transition_parser", config={"model": model, "label_freq_cutoff": 1})
    examples = make_doc_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    caplog.set_level(logging.INFO, logger="spacy_hcparse")
    differ = update_with_annotating_senter(nlp, examples, optimizer)
    assert differ  # the senter's boundaries were not the reference's
    parser = nlp.get_pipe("hc_transition_parser")
    assert parser.reported_gold == 0, [r.getMessage() for r in caplog.records]
    _, spans, golds, _ = parser._gold(examples)
    assert [len(s) for s in spans] == [3] * len(SENTENCES)
    assert all((heads[1:] >= 0).all() for heads, _, _ in golds)


def merged_examples(nlp):
    """Raw-text examples whose predicted tokens do not all align with the reference: the first
    sentence's last word and its punctuation are one token ("eggs." for "eggs" "."), and the
    doc's first word is split in two."""
    out = []
    for eg in make_doc_examples(nlp):
        words = [t.text for t in eg.reference]
        first_len = next(len(s[0]) for s in SENTENCES if words[: len(s[0])] == s[0])
        pred_words = [words[0][:1], words[0][1:]] if len(words[0]) > 1 else [words[0]]
        pred_words += words[1 : first_len - 2] + [words[first_len - 2] + words[first_len - 1]] + words[first_len:]
        spaces = [False] if len(words[0]) > 1 else []
        spaces += [True] * (len(pred_words) - len(spaces))
        out.append(Example(Doc(nlp.vocab, words=pred_words, spaces=spaces), eg.reference))
    return out


@pytest.mark.parametrize("model", [SMALL, NEURAL])
def test_unaligned_tokens_keep_their_sentence(model, caplog):
    spacy.util.fix_random_seed(0)
    nlp = make_nlp(model)
    examples = merged_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("hc_transition_parser")
    _, spans, golds, _ = parser._gold(examples)
    assert [len(s) for s in spans] == [3] * len(SENTENCES)  # no sentence dropped
    assert sum((heads[1:] < 0).any() for heads, _, _ in golds) >= len(SENTENCES)  # partial ones among them
    caplog.set_level(logging.INFO, logger="spacy_hcparse")
    for _ in range(15 if model is SMALL else 60):
        nlp.update(examples, sgd=optimizer)
    assert parser.reported_gold == 0, [r.getMessage() for r in caplog.records]
    correct = total = 0
    for words, heads, _ in SENTENCES:
        got, _ = parse_of(nlp(Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1))))
        correct += sum(g == h for g, h in zip(got, heads))
        total += len(heads)
    assert correct / total >= 0.9


@pytest.mark.parametrize("model", [{**SMALL, "sentence_buckets": 0}, NEURAL_UNSEGMENTED])
def test_models_without_sentence_scorer_chunk_docs_without_boundaries(model):
    nlp = train_tiny(epochs=3, model=model)
    doc = nlp(THREE_SENTENCES)
    assert len(list(doc.sents)) == 1  # no sentence scorer: one chunk, one sentence
    assert_valid(doc)
    doc = nlp(make_doc_with_sentences(nlp))
    assert [t.is_sent_start for t in doc] == [i == 0 for s in SENTENCES for i in range(len(s[0]))]


# ----- partial annotation, rehearsal, the model's learner -------------------------------------------
def partial_examples(nlp, offset=0):
    """One example per treebank sentence whose reference leaves every third head and label missing
    (``Doc(heads=[..., None, ...], deps=[..., None, ...])``), starting at word ``offset``."""
    out = []
    for words, heads, deps in SENTENCES:
        known = [(i + offset) % 3 != 0 for i in range(len(words))]
        ref_heads = [(h - 1 if h else i) if k else None for i, (h, k) in enumerate(zip(heads, known))]
        ref_deps = [d if k else None for d, k in zip(deps, known)]
        reference = Doc(nlp.vocab, words=words, heads=ref_heads, deps=ref_deps)
        out.append(Example(Doc(nlp.vocab, words=words), reference))
    return out


@pytest.mark.parametrize("model", [SMALL, NEURAL])
def test_partially_annotated_sentences_train_on_their_known_arcs(model, caplog):
    """Every sentence's reference misses a third of its heads: each is still one span whose known
    arcs are its gold (the missing ones unknown, -1), each update learns from it, nothing is
    reported, and the model learns the known arcs."""
    spacy.util.fix_random_seed(0)
    nlp = make_nlp(model)
    examples = partial_examples(nlp) + partial_examples(nlp, offset=1)
    optimizer = nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("hc_transition_parser")
    _, spans, golds, _ = parser._gold(examples[: len(SENTENCES)])
    assert spans == [[(0, len(words))] for words, _, _ in SENTENCES]
    for (heads, _, _), (words, gold_heads, _) in zip(golds, SENTENCES):
        known = [i % 3 != 0 for i in range(len(words))]
        assert heads[1:].tolist() == [h if k else -1 for h, k in zip(gold_heads, known)]
    caplog.set_level(logging.INFO, logger="spacy_hcparse")
    first = nlp.update(examples[:1], sgd=optimizer)["hc_transition_parser"]
    assert first > 0  # the one partial sentence gave an update
    for _ in range(15 if model is SMALL else 60):
        nlp.update(examples, sgd=optimizer)
    assert parser.reported_gold == 0, [r.getMessage() for r in caplog.records]
    correct = total = 0
    for words, heads, _ in SENTENCES:
        got, _ = parse_of(nlp(Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1))))
        correct += sum(g == h for g, h in zip(got, heads))
        total += len(heads)
    assert correct / total >= 0.85


def wrong_examples(nlp):
    """The treebank's sentences with another tree: every word on the last one."""
    out = []
    for words, _, _ in SENTENCES:
        n = len(words)
        reference = Doc(nlp.vocab, words=words, heads=[n - 1] * n, deps=["nsubj"] * (n - 1) + ["ROOT"])
        out.append(Example(Doc(nlp.vocab, words=words), reference))
    return out


def raw_examples(nlp):
    return [Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words)) for words, _, _ in SENTENCES]


def heads_of_treebank(nlp):
    return [parse_of(nlp(Doc(nlp.vocab, words=words)))[0] for words, _, _ in SENTENCES]


def agreement(got, expected):
    same = sum(g == e for doc_got, doc_expected in zip(got, expected) for g, e in zip(doc_got, doc_expected))
    return same / sum(len(e) for e in expected)


@pytest.mark.parametrize("model", [SMALL, NEURAL])
def test_rehearse_moves_the_model_toward_the_teacher(model):
    """Rehearsing on raw text (no gold read) trains on the teacher's parses: a model trained on
    the treebank, given a teacher trained on other trees (every word on the last), comes to
    parse as the teacher does. ``resume_training`` takes the teacher from the model itself. (The
    perceptron's student is trained briefly: its averaged weights move only as far as the
    configurations it has seen since allow.)"""
    epochs = 15 if model is SMALL else 60
    nlp = train_tiny(epochs=2 if model is SMALL else epochs, model=model)
    spacy.util.fix_random_seed(1)
    other = make_nlp(model)
    optimizer = other.initialize(lambda: make_doc_examples(other))
    for _ in range(epochs):
        other.update(wrong_examples(other), sgd=optimizer)
    pipe, teacher = nlp.get_pipe("hc_transition_parser"), other.get_pipe("hc_transition_parser")
    assert pipe.labels == teacher.labels
    expected = heads_of_treebank(other)
    optimizer = nlp.resume_training()
    assert pipe._rehearsal_model is not None and pipe._rehearsal_model is not pipe.model
    pipe._rehearsal_model = teacher.model
    before = agreement(heads_of_treebank(nlp), expected)
    losses = {}
    for _ in range(epochs):
        nlp.rehearse(raw_examples(nlp), sgd=optimizer, losses=losses)
    assert losses["hc_transition_parser"] > 0
    after = agreement(heads_of_treebank(nlp), expected)
    assert after > before + 0.3 and after >= 0.8, (before, after)


def test_rehearse_without_teacher_takes_the_model_as_it_is(caplog):
    """No ``resume_training``: the model becomes its own teacher (with a warning), and a
    perceptron that agrees with its teacher makes no update and keeps its parses."""
    nlp = train_tiny(epochs=5)
    pipe = nlp.get_pipe("hc_transition_parser")
    before = heads_of_treebank(nlp)
    caplog.set_level(logging.WARNING, logger="spacy_hcparse")
    losses = nlp.rehearse(raw_examples(nlp))
    assert losses == {"hc_transition_parser": 0.0}
    assert any("no teacher yet" in r.getMessage() for r in caplog.records)
    assert pipe._rehearsal_model is not None
    assert heads_of_treebank(nlp) == before


def test_a_model_without_learner_is_refused():
    from spacy_hcparse.transition.transition_parser import TransitionParser
    from thinc.api import Model

    with pytest.raises(ValueError, match="not a transition model"):
        TransitionParser(spacy.blank("en").vocab, Model("plain", lambda model, X, is_train: (X, None)))


def test_partial_reference_keeps_its_known_arcs_as_they_are(trained):
    """Missing heads are unknown, not roots: spaCy's projectivization would read "on" and "." as
    roots and lift "mat" over them; the known arcs stay as annotated, labels plain."""
    words = ["The", "cat", "sat", "on", "the", "mat", "."]
    reference = Doc(trained.vocab, words=words, heads=[1, None, 2, None, 5, 2, None],
                    deps=["det", None, "ROOT", None, "det", "obl", None])
    parser = trained.get_pipe("hc_transition_parser")
    _, spans, golds, _ = parser._gold([Example(Doc(trained.vocab, words=words), reference)])
    assert spans == [[(0, 7)]]
    heads, labels, _ = golds[0]
    assert heads.tolist() == [-1, 2, -1, 0, -1, 6, 3, -1]
    assert [parser.labels[i] if i >= 0 else None for i in labels] == ["det", None, "ROOT", None, "det", "obl", None]
