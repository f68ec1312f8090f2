"""components.graph_batch: hc_parser's batched host work gives the per-span path's parses, bit for bit
(trees, tree scores, labels, margins, head and label probabilities), with and without the
sibling factors, whitespace tokens, unseen labels, a calibration map, one or two threads."""
import numpy as np
import pytest
from spacy.tokens import Doc

from spacy_hcparse.components.graph_batch import (decode_eisner_spans, eisner_batchable, label_trees,
                                                  labels_batchable, masked_label_scores, span_parses)
from spacy_hcparse.graph.decoding import Eisner, MST
from spacy_hcparse.graph.parses import label_probs, span_parse
from spacy_hcparse.segment import span_whitespace

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


def per_span(pipe, scores, spaces, calibration):
    """What hc_parser's predict computed span by span."""
    from functools import partial

    from spacy_hcparse.calibration import calibrated_probabilities, span_siblings

    existing = [None] * len(scores)
    results = [pipe._decode_span(scores, i, None, spaces[i]) for i in range(len(scores))]
    trees, label_set = [r.heads for r in results], pipe.label_set()
    rows = pipe.label_scores(scores, trees)
    labels = pipe.labeler.label_trees(trees, rows, label_set, existing, spaces)
    head_probs = [None if calibration is None else partial(calibrated_probabilities, calibration=calibration,
                                                           sib=span_siblings(scores, i, calibration))
                  for i in range(len(scores))]
    return [span_parse(scores.arc(i), r, labels[i], head_probs[i], label_probs(r.heads, rows[i], labels[i], label_set,
                                                                             spaces[i]))
            for i, r in enumerate(results)]


def batched(pipe, scores, spaces, calibration, threads):
    results = decode_eisner_spans(scores, spaces, threads)
    trees, label_set = [r.heads for r in results], pipe.label_set()
    masked = masked_label_scores(trees, pipe.label_scores(scores, trees), label_set)
    labels = label_trees(pipe.labeler, trees, masked, label_set, spaces, threads)
    return span_parses(scores, results, labels, calibration, masked, spaces, threads)


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(np.asarray(a), np.asarray(b))


CALIBRATIONS = [None, {"temperature": 1.0, "knots": None},
                {"temperature": 1.7, "knots": [[0.0, 0.5, 1.0], [0.1, 0.4, 0.9]]},
                {"temperature": 1.3, "knots": [[0.0, 0.5, 1.0], [0.1, 0.4, 0.9]], "siblings": True},
                {"temperature": 0.8, "knots": None, "siblings": True, "tree_temperature": 2.5}]


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("factors", ["sib", "none"])
def test_batched_parses_are_the_per_span_parses(eisner_parser, calibration, threads, factors):
    pipe = eisner_parser.get_pipe("hc_parser")
    docs = docs_of(eisner_parser)
    given = [None] * (len(docs) - 1) + [[(0, 3), (3, 5)]]
    scores = pipe.score_spans(docs, given, None, pipe.decoder.factors if factors == "sib" else frozenset())
    spaces = span_whitespace(docs, scores.spans)
    assert any(s.any() for s in spaces)
    expected = per_span(pipe, scores, spaces, calibration)
    got = batched(pipe, scores, spaces, calibration, threads)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.heads.tolist() == b.heads.tolist()
        assert a.result.score == b.result.score and a.result.certified == b.result.certified
        assert a.labels.tolist() == b.labels.tolist()
        assert same(a.margins, b.margins) and same(a.head_probs, b.head_probs) and same(a.dep_probs, b.dep_probs)
        assert a.log_prob == b.log_prob


def test_unseen_labels_are_never_given(eisner_parser):
    pipe = eisner_parser.get_pipe("hc_parser")
    docs = docs_of(eisner_parser)
    scores = pipe.score_spans(docs, [None] * len(docs), None, pipe.decoder.factors)
    spaces = span_whitespace(docs, scores.spans)
    results = decode_eisner_spans(scores, spaces)
    trees = [r.heads for r in results]
    rows = pipe.label_scores(scores, trees)
    label_set = pipe.label_set()
    common = int(np.concatenate(pipe.labeler.label_trees(trees, rows, label_set, [None] * len(trees), spaces)).max())
    hidden = label_set._replace(unseen=label_set.unseen | (np.arange(len(label_set.names)) == common))
    labels = label_trees(pipe.labeler, trees, masked_label_scores(trees, rows, hidden), hidden, spaces)
    expected = pipe.labeler.label_trees(trees, rows, hidden, [None] * len(trees), spaces)
    assert all(a.tolist() == b.tolist() for a, b in zip(labels, expected))
    assert common not in np.concatenate(labels).tolist()


def test_when_the_batch_applies():
    from spacy_hcparse.graph.labeling import Labeler

    doc_tree = (np.array([-1, 0]), np.array([0]))
    assert eisner_batchable(Eisner(), [None, None]) and not eisner_batchable(MST(), [None])
    assert not eisner_batchable(Eisner(), [None, doc_tree])
    assert labels_batchable(Labeler(valency=True, keep_doc_labels=False), [doc_tree])
    assert not labels_batchable(Labeler(valency=True, keep_doc_labels=True), [doc_tree])


def test_predict_uses_the_batch_and_parses_as_before(eisner_parser):
    """The pipeline's own parses equal the per-span path's (calibration as the component's)."""
    pipe = eisner_parser.get_pipe("hc_parser")
    docs = docs_of(eisner_parser)
    parsed = pipe.predict(docs)
    given = [None] * (len(docs) - 1) + [[(0, 3), (3, 5)]]
    scores = pipe.score_spans(docs, given, None, pipe.decoder.factors, tags=pipe._written_tags())
    spaces = span_whitespace(docs, scores.spans)
    expected = per_span(pipe, scores, spaces, pipe.calibration if pipe.head_probs else None)
    got = [p for doc in parsed for p in doc.parses]
    assert [p.heads.tolist() for p in got] == [p.heads.tolist() for p in expected]
    assert [p.labels.tolist() for p in got] == [p.labels.tolist() for p in expected]
    assert all(same(a.head_probs, b.head_probs) and same(a.margins, b.margins) for a, b in zip(got, expected))


def test_batched_false_runs_the_per_span_path_with_the_same_parses(eisner_parser):
    pipe = eisner_parser.get_pipe("hc_parser")
    docs = docs_of(eisner_parser)
    batched = pipe.predict(docs)
    pipe.batched = False
    try:
        per_span_parses = pipe.predict(docs)
    finally:
        pipe.batched = True
    for a, b in zip([p for d in batched for p in d.parses], [p for d in per_span_parses for p in d.parses]):
        assert a.heads.tolist() == b.heads.tolist() and a.labels.tolist() == b.labels.tolist()
        assert same(a.head_probs, b.head_probs) and same(a.dep_probs, b.dep_probs) and a.log_prob == b.log_prob
