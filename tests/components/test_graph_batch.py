"""graph.graph_batch: hc_parser's host work for a whole batch (decoding, labels, margins,
head and label probabilities) against brute force over every tree of the short spans, with and
without sibling factors, whitespace tokens, unseen labels, a calibration map, one or two threads."""
import numpy as np
import pytest
from spacy.tokens import Doc

from spacy_hcparse.graph.calibration import apply_knots
from spacy_hcparse.graph.decoding import Eisner
from spacy_hcparse.graph.graph_batch import span_arcs, span_parses
from spacy_hcparse.graph.graph_model import tree_label_scores
from spacy_hcparse.segment import span_whitespace
from tests.decoders.brute import all_trees, is_projective, reference_score, tree_distribution

from .test_graph_parser import train_tiny


@pytest.fixture(scope="module")
def eisner_parser():
    return train_tiny(decoder="eisner", epochs=30)


def docs_of(nlp):
    texts = ["I saw a girl with a telescope .", "She  likes green \n eggs and ham", "Short", "Dogs bark .",
             "The quick brown fox jumps over the lazy dog while the cat sleeps on the mat ."]
    docs = [nlp.make_doc(t) for t in texts]
    docs.append(Doc(nlp.vocab, words=["Two", "sentences", ".", "Here", "too"],
                    sent_starts=[True, False, False, True, False]))
    return docs


def host_work(pipe, scores, calibration, threads):
    arcs, sizes = span_arcs(scores, [None] * len(scores), 0.0)
    results = Eisner().decode_batch(scores, arcs, sizes, [None] * len(sizes), threads)
    trees = [r.heads for r in results]
    labels, masked = pipe.label_trees(trees, tree_label_scores(pipe.model, scores, trees), scores.spaces)
    return span_parses(scores, results, labels, calibration, masked, threads)


def dense(size, triples, values):
    cube = np.zeros((size, size, size))
    cube[tuple(np.asarray(triples).T)] = values
    return cube


CALIBRATIONS = [None, {"temperature": 1.0, "knots": None},
                {"temperature": 1.7, "knots": [[0.0, 0.5, 1.0], [0.1, 0.4, 0.9]]},
                {"temperature": 1.3, "knots": [[0.0, 0.5, 1.0], [0.1, 0.4, 0.9]], "siblings": True},
                {"temperature": 0.8, "knots": None, "siblings": True}]


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("factors", ["sib", "none"])
def test_parses_are_brute_force_trees_and_distributions(eisner_parser, calibration, factors):
    """Every span of up to 6 words: the best projective tree and its score, the labeler's labels,
    first-order margins, calibrated head probabilities and tree probability of the distribution
    the calibration names, and the written labels' softmax probabilities; the same on two threads."""
    pipe = eisner_parser.get_pipe("hc_parser")
    docs = docs_of(eisner_parser)
    given = [None] * (len(docs) - 1) + [[(0, 3), (3, 5)]]
    scores = pipe.score_spans(docs, given, None, pipe.decoder.factors if factors == "sib" else frozenset())
    spaces = scores.spaces
    assert [s.tolist() for s in spaces] == [s.tolist() for s in span_whitespace(docs, scores.spans)]
    assert any(s.any() for s in spaces)
    parses = host_work(pipe, scores, calibration, threads=1)
    checked = 0
    for i, parse in enumerate(parses):
        arc, n = scores.arc(i), len(parse.heads) - 1
        sib = dense(n + 1, scores.sib_triples(i), scores.sib[i]) if factors == "sib" and scores.higher_order[i] else None
        if n > 6 or spaces[i].any():
            continue
        checked += 1
        pruned = scores.pruned_arc(i)
        best = max(reference_score(t, pruned, sib) for t in all_trees(n) if is_projective(t))
        assert reference_score(parse.heads, pruned, sib) == pytest.approx(best, abs=1e-9)
        assert parse.result.score == pytest.approx(best, abs=1e-9)
        for m in range(1, n + 1):
            others = [arc[h, m] for h in range(n + 1) if h not in (m, parse.heads[m])]
            assert parse.margins[m - 1] == pytest.approx(arc[parse.heads[m], m] - max(others) if others else 0.0)
        rows = tree_label_scores(pipe.model, scores, [parse.heads], [i])[0]
        assert (parse.dep_probs > 0).all() and (parse.dep_probs <= 1).all()
        no_spaces = [np.zeros(len(parse.heads) - 1, bool)]
        assert parse.labels.tolist() == pipe.label_trees([parse.heads], [rows], no_spaces)[0][0].tolist()
        if calibration is None:
            assert parse.head_probs is None and parse.log_prob is None
            continue
        with_sib = sib if calibration.get("siblings") else None
        probs, log_prob = tree_distribution(parse.heads, arc, calibration["temperature"], with_sib)
        mapped = apply_knots(probs, calibration["knots"])
        assert parse.head_probs == pytest.approx(mapped, abs=1e-9)
        assert parse.log_prob == pytest.approx(min(log_prob, np.log(mapped.min())), abs=1e-9)
    assert checked >= 3
    again = host_work(pipe, scores, calibration, threads=2)
    for a, b in zip(parses, again):
        assert a.heads.tolist() == b.heads.tolist() and a.labels.tolist() == b.labels.tolist()
        assert a.result.score == b.result.score and a.log_prob == b.log_prob
        assert np.array_equal(a.margins, b.margins) and np.array_equal(a.dep_probs, b.dep_probs)
        assert (a.head_probs is None and b.head_probs is None) or np.array_equal(a.head_probs, b.head_probs)


def test_unseen_labels_are_never_given(eisner_parser):
    pipe = eisner_parser.get_pipe("hc_parser")
    docs = docs_of(eisner_parser)
    scores = pipe.score_spans(docs, [None] * len(docs), None, pipe.decoder.factors)
    spaces = scores.spaces
    arcs, sizes = span_arcs(scores, [None] * len(scores), 0.0)
    trees = [r.heads for r in Eisner().decode_batch(scores, arcs, sizes, [None] * len(sizes))]
    rows = tree_label_scores(pipe.model, scores, trees)
    label_set = pipe.label_set()
    common = int(np.bincount(np.concatenate(pipe.label_trees(trees, rows, spaces)[0])).argmax())
    hidden = label_set._replace(unseen=label_set.unseen | (np.arange(len(label_set.names)) == common))
    labels = pipe.labeler.label_trees(trees, hidden.masked(trees, rows), hidden, None, spaces)
    assert common not in np.concatenate(labels).tolist()
