"""The transition models as closed functions: the neural model's step scorer gives the scorer's own
scores, its training forward the same scores and one backprop into the token vectors (from the
move scores and, for ``.v2``, the sentence-start logits); the perceptron model parses the spans
of docs with the weights written into it, and segments docs without spans with its sentence
classifier (``.v2``)."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from thinc.api import Model

from spacy_hcparse.transition.neural_learner import NeuralLearner
from spacy_hcparse.transition.perceptron_learner import PerceptronLearner
from spacy_hcparse.transition.transition_model import build_neural_transition_model_v2, build_transition_model_v2
from spacy_hcparse.transition.neural_model import SlotBatch, SlotScores, SpanBatch, first_rows, slot_rows
from spacy_hcparse.transition.perceptron_model import (PerceptronInput, doc_rows, perceptron_weights,
                                                        set_perceptron_weights, span_rows)
from spacy_hcparse.transition.transition_types import TransitionParses, teacher_gold
from spacy_hcparse.segment import segment_docs
from spacy_hcparse.transition.templates import N_SLOTS, get_templates
from spacy_hcparse.transition.search import greedy_parse

WIDTH = 8


def identity_tok2vec(seen):
    """'Docs' are arrays of token vectors; their gradients are recorded in ``seen``."""

    def forward(model, X, is_train):
        return X, lambda d: seen.append(d) or d

    return Model("tok2vec", forward, dims={"nO": WIDTH})


def neural_model(seen=None, version=1):
    tok2vec = identity_tok2vec([] if seen is None else seen)
    if version == 1:  # no sentence-start scorer
        model = build_neural_transition_model_v2(tok2vec, hidden_width=6, maxout_pieces=3, dropout=0.0,
                                                 sentence_width=0, nO=5)
    else:
        model = build_neural_transition_model_v2(tok2vec, hidden_width=6, maxout_pieces=3, dropout=0.0,
                                                 sentence_width=4, nO=5, max_length=5)
        model.get_ref("start_scorer").initialize(X=[np.zeros((3, WIDTH), dtype="f")])
    model.get_ref("scorer").initialize(X=np.zeros((2, WIDTH * N_SLOTS), dtype="f"))
    rng = np.random.default_rng(0)
    maxout = next(layer for layer in model.walk() if layer.name == "maxout")
    for name in ("W", "b"):  # non-zero biases too
        maxout.set_param(name, rng.normal(size=maxout.get_param(name).shape).astype("f"))
    return model


def test_step_scorer_matches_the_scorer():
    model = neural_model()
    rng = np.random.default_rng(1)
    docs = [rng.normal(size=(n, WIDTH)).astype("f") for n in (7, 12, 10)]
    spans = [[(0, 3), (3, 7)], [(0, 12)], [(2, 10)]]
    table = np.concatenate(docs + [np.zeros((1, WIDTH), dtype="f")])
    steps = model.predict(SpanBatch(docs, spans))
    firsts = first_rows(docs, spans)
    for lo, hi in [(0, 4), (1, 3), (3, 4)]:
        group = steps.group(lo, hi)
        slots = rng.integers(-1, 5, size=(11, N_SLOTS))  # words 1..4 of the group's first span, -1 empty
        rows = slot_rows(slots, group.firsts[0], group.null)
        got = group.scores(rows)
        expected = model.get_ref("scorer").predict(table[slot_rows(slots, firsts[lo], len(table) - 1)].reshape(11, -1))
        assert got.shape == (11, 5)
        np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("version", [1, 2])
def test_training_forward_scores_and_backprop(version):
    seen = []
    model = neural_model(seen, version)
    rng = np.random.default_rng(2)
    docs = [rng.normal(size=(n, WIDTH)).astype("f") for n in (4, 6)]
    rows = rng.integers(0, 11, size=(9, N_SLOTS))  # row 10 is the zero row
    scores, backprop = model.begin_update(SlotBatch(docs, rows))
    predicted = model.predict(SlotBatch(docs, rows))
    np.testing.assert_allclose(scores.moves, predicted.moves, rtol=1e-6)
    assert [len(s) for s in scores.starts] == ([0, 0] if version == 1 else [4, 6])
    d_moves = rng.normal(size=scores.moves.shape).astype("f")
    d_starts = [rng.normal(size=len(s)).astype("f") for s in scores.starts]
    assert backprop(SlotScores(d_moves, d_starts)) == []
    (d_docs,) = seen
    assert [d.shape for d in d_docs] == [(4, WIDTH), (6, WIDTH)]

    def objective(vectors):
        out = model.predict(SlotBatch(vectors, rows))
        return (out.moves * d_moves).sum() + sum((s * d).sum() for s, d in zip(out.starts, d_starts))

    # the gradient of the objective with respect to token vectors, by finite differences (the
    # token after doc 1's token 2 reads it as its left neighbour in the start scorer)
    for doc, token, dim in [(1, 2, 3), (0, 0, 1), (1, 5, 0)]:
        eps = 1e-2
        bumped = [d.copy() for d in docs]
        bumped[doc][token] += eps * np.eye(WIDTH, dtype="f")[dim]
        lower = [d.copy() for d in docs]
        lower[doc][token] -= eps * np.eye(WIDTH, dtype="f")[dim]
        numeric = (objective(bumped) - objective(lower)) / (2 * eps)
        assert d_docs[doc][token, dim] == pytest.approx(numeric, rel=0.05, abs=1e-3)


def test_neural_model_segments_docs_without_spans():
    rng = np.random.default_rng(5)
    docs = random_docs([12, 7], 8)
    vectors = {id(doc): rng.normal(size=(len(doc), WIDTH)).astype("f") for doc in docs}

    def forward(model, X, is_train):
        return [vectors[id(doc)] for doc in X], lambda d: d

    model = build_neural_transition_model_v2(Model("tok2vec", forward, dims={"nO": WIDTH}), hidden_width=6,
                                             maxout_pieces=3, dropout=0.0, sentence_width=4, nO=5, max_length=5)
    model.get_ref("start_scorer").initialize(X=[np.zeros((3, WIDTH), dtype="f")])
    model.get_ref("scorer").initialize(X=np.zeros((2, WIDTH * N_SLOTS), dtype="f"))
    logits = model.get_ref("start_scorer").predict([vectors[id(docs[0])]])
    steps = model.predict(SpanBatch(docs, [None, [(0, 3), (3, 7)]]))
    expected_spans, expected_sentences = segment_docs(docs[:1], [None], [np.asarray(logits[0]) > 0], 5)
    assert steps.spans[0] == expected_spans[0] and steps.sentences[0] == expected_sentences[0]
    assert steps.sentences[1] is None and steps.spans[1] == [(0, 3), (3, 7)]
    assert steps.spans[0][0][0] == 0 and steps.spans[0][-1][1] == 12
    assert all(end - start <= 5 for start, end in steps.spans[0])  # max_length chunks
    assert steps.sizes == [end - start for doc_spans in steps.spans for start, end in doc_spans]


def random_docs(lengths, seed):
    rng = np.random.default_rng(seed)
    vocab = spacy.blank("en").vocab
    words = ["a", "B", "cat", "Dogs", ".", "x1", "?", "Z"]
    return [Doc(vocab, words=[str(w) for w in rng.choice(words, size=n)]) for n in lengths]


def test_perceptron_model_parses_with_the_weights_written_into_it():
    n_buckets, n_labels = 2**10, 3
    model = build_transition_model_v2(n_buckets=n_buckets, tag_buckets=2**8, sentence_buckets=0, nO=1 + 2 * n_labels)
    model.initialize()
    W = np.random.default_rng(3).normal(size=n_buckets + 1 + 2 * n_labels).astype("f")
    set_perceptron_weights(model, W)
    assert perceptron_weights(model)[0] is W or np.array_equal(perceptron_weights(model)[0], W)
    docs = random_docs([5, 0, 9], 4)
    spans = [[(0, 5)], [], [(0, 4), (4, 9)]]
    X = PerceptronInput(docs, spans, np.zeros(0, dtype=np.int64), 0)
    parses = model.predict(X)
    rows = span_rows(docs, spans)
    heads = np.empty(len(rows.attrs), dtype=np.int64)
    labels = np.empty(len(rows.attrs), dtype=np.int64)
    no_space = np.zeros(len(rows.attrs), dtype=bool)
    greedy_parse(rows.attrs, no_space, rows.offsets, W, get_templates("zhang_nivre"), np.int64(n_buckets - 1),
                 n_labels, 0, heads, labels)
    assert parses.spans == spans and parses.sentences == [None, None, None]
    assert [len(h) for h, _ in parses.trees] == [6, 5, 6]
    for (tree_heads, tree_labels), lo, hi in zip(parses.trees, rows.offsets[:-1], rows.offsets[1:]):
        assert tree_heads.tolist() == heads[lo:hi].tolist() and tree_labels.tolist() == labels[lo + 1 : hi].tolist()
    _, backprop = model.begin_update(X)
    with pytest.raises(ValueError, match="no gradient"):
        backprop(None)


def test_perceptron_v2_segments_with_its_sentence_classifier():
    n_labels = 3
    model = build_transition_model_v2(n_buckets=2**10, tag_buckets=2**8, sentence_buckets=2**8, max_length=4,
                                      nO=1 + 2 * n_labels)
    model.initialize()
    sentences = np.random.default_rng(6).normal(size=2**8 + 2).astype("f")
    set_perceptron_weights(model, perceptron_weights(model).parser, sentences=sentences)
    docs = random_docs([11, 0, 6], 7)
    parses = model.predict(PerceptronInput(docs, [None, None, [(0, 6)]], np.zeros(0, dtype=np.int64), 0))
    rows = doc_rows(docs[:1])
    classes = model.get_ref("sentence_tagger").predict((rows.attrs, rows.offsets))[1:] == 1
    expected, _ = segment_docs(docs[:1], [None], [classes], 4)
    assert parses.spans[0] == expected[0] and all(end - start <= 4 for start, end in parses.spans[0])
    assert parses.sentences[0] == sorted({0, *np.flatnonzero(classes).tolist()})
    assert parses.spans[1:] == [[], [(0, 6)]] and parses.sentences[1:] == [[], None]
    # without a classifier, a doc without spans is cut into chunks of max_length words
    v1 = build_transition_model_v2(n_buckets=2**10, tag_buckets=2**8, sentence_buckets=0, max_length=4,
                                   nO=1 + 2 * n_labels)
    v1.initialize()
    parses = v1.predict(PerceptronInput(docs[:1], [None], np.zeros(0, dtype=np.int64), 0))
    assert [end - start for start, end in parses.spans[0]] == [4, 4, 3]
    assert parses.sentences[0] == [0, 4, 8]


def test_each_architecture_hands_over_its_learner_and_saves_without_it():
    """The learner is the model's, as a class in ``attrs["learner"]``: thinc leaves it out of the
    saved bytes, and a model loaded from them keeps the one its architecture set."""
    perceptron = build_transition_model_v2(n_buckets=2**8, tag_buckets=2**6, sentence_buckets=2**6, nO=7)
    neural = neural_model()
    assert perceptron.attrs["learner"] is PerceptronLearner and neural.attrs["learner"] is NeuralLearner
    assert "kind" not in perceptron.attrs and "kind" not in neural.attrs
    perceptron.initialize()
    data = perceptron.to_bytes()
    loaded = build_transition_model_v2(n_buckets=2**8, tag_buckets=2**6, sentence_buckets=2**6, nO=7).from_bytes(data)
    assert loaded.attrs["learner"] is PerceptronLearner
    assert np.array_equal(perceptron_weights(loaded).parser, perceptron_weights(perceptron).parser)


def test_teacher_gold_trains_on_the_teachers_trees_and_segmentation():
    docs = random_docs([5, 3, 0], 9)
    trees = [(np.array([-1, 2, 0, 2]), np.array([1, 0, 1])), (np.array([-1, 0, 1]), np.array([0, 1])),
             (np.array([-1, 0, 1, 1]), np.array([0, 1, 1]))]
    parses = TransitionParses(trees, [[(0, 3), (3, 5)], [(0, 3)], []], [[0, 3], None, []])
    golds, starts = teacher_gold(docs, parses)
    assert [(g[0].tolist(), g[1].tolist()) for g in golds] == [(h.tolist(), lab.tolist()) for h, lab in trees]
    assert all((g[2] == -1).all() and len(g[2]) == len(g[0]) for g in golds)  # tags unknown
    assert [s.tolist() for s in starts] == [[-1, 0, 0, 1, 0], [-1, -1, -1], []]  # given sentences: unknown
