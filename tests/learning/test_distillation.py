"""Distillation (``learning.distillation``): a student trained toward trained parsers' mean
distributions as well as the gold."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_hcparse.learning.distillation import Teachers, _label_columns, distillation_loss
from tests.components.test_graph_parser import NONPROJECTIVE, TINY_MODEL, parse_of, train_tiny
from tests.treebank import SENTENCES, make_examples

TEACHERS = {"@misc": "spacy_hcparse.Teachers.v1"}


@pytest.fixture(scope="module")
def teacher_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("teacher")
    train_tiny().to_disk(path)
    return str(path)


def student(paths, weight=1.0, seed=0):
    spacy.util.fix_random_seed(seed)
    nlp = spacy.blank("en")
    loss = {"@misc": "spacy_hcparse.GraphLoss.v1", "teachers": {**TEACHERS, "paths": paths},
            "teacher_weight": weight}
    nlp.add_pipe("hc_parser", config={"model": TINY_MODEL, "decoder": NONPROJECTIVE, "loss": loss})
    return nlp


def batch_scores(nlp, teacher_paths, held_out=None):
    """(the student's training scores of the tiny treebank, without dropout; the teachers'
    targets on them)."""
    pipe = nlp.get_pipe("hc_parser")
    examples = make_examples(nlp)
    spans, gold = pipe._gold(examples)
    docs = [eg.predicted for eg in examples]
    keep = [g[0] for g in gold.spans]
    targets = Teachers(teacher_paths, held_out=held_out).targets(docs, spans, keep, pipe.labels, pipe.cfg["tags"])
    from spacy_hcparse.graph_scores import GraphInput

    scores, _ = pipe.model.begin_update(GraphInput(docs, spans, keep, frozenset()))
    return scores.to_numpy(pipe.model.ops), targets


def no_dropout(nlp):
    for node in nlp.get_pipe("hc_parser").model.walk():
        if node.name == "fixed_dropout":
            node.attrs["rate"] = 0.0
        if "dropout_rate" in node.attrs:
            node.attrs["dropout_rate"] = 0.0
    return nlp


def test_a_teacher_distils_nothing_into_itself(teacher_path):
    nlp = no_dropout(spacy.load(teacher_path))
    scores, targets = batch_scores(nlp, [teacher_path])
    loss, grads = distillation_loss(scores, targets, 1.0)
    assert loss == pytest.approx(0.0, abs=1e-4)
    assert max(np.abs(g).max() for g in grads.arcs) < 1e-3


def test_targets_are_distributions_averaged_over_teachers(teacher_path):
    nlp = spacy.load(teacher_path)
    _, one = batch_scores(nlp, [teacher_path])
    _, two = batch_scores(nlp, [teacher_path, teacher_path])
    for a, b in zip(one.spans, two.spans):
        np.testing.assert_allclose(np.exp(a.heads).sum(axis=0), 1.0, atol=1e-6)
        np.testing.assert_allclose(np.exp(a.labels).sum(axis=1), 1.0, atol=1e-6)
        np.testing.assert_allclose(a.heads, b.heads, atol=1e-6)


def test_held_out_teachers_label_only_the_docs_they_did_not_see(teacher_path, tmp_path):
    nlp = spacy.load(teacher_path)
    first = make_examples(nlp)[0].reference
    DocBin(docs=[first]).to_disk(tmp_path / "seen.spacy")
    DocBin(docs=[]).to_disk(tmp_path / "none.spacy")
    seen, none = str(tmp_path / "seen.spacy"), str(tmp_path / "none.spacy")
    _, alone = batch_scores(nlp, [teacher_path])
    _, cross = batch_scores(nlp, [teacher_path, teacher_path], held_out=[none, seen])
    for a, b in zip(alone.spans, cross.spans):
        np.testing.assert_allclose(a.heads, b.heads, atol=1e-6)  # the first doc from one teacher
    _, both = batch_scores(nlp, [teacher_path, teacher_path], held_out=[seen, seen])
    assert both.spans[0] is None and all(span is not None for span in both.spans[1:])
    assert all(tags[0] is None and tags[1] is not None for tags in both.tags.values())
    with pytest.raises(ValueError, match="training files"):
        Teachers([teacher_path], held_out=[seen, none])


def test_distillation_gradient_matches_finite_differences(teacher_path):
    nlp = spacy.load(teacher_path)
    scores, targets = batch_scores(nlp, [teacher_path])
    rng = np.random.default_rng(0)
    scores.arcs[0] = scores.arcs[0] + rng.normal(size=scores.arcs[0].shape)  # a student unlike its teacher
    _, grads = distillation_loss(scores, targets, 2.0)
    h, m, eps = 2, 1, 1e-4
    values = []
    for sign in (1, -1):
        moved = [a.astype(np.float64).copy() for a in scores.arcs]
        moved[0][h, m] += sign * eps
        values.append(distillation_loss(scores.like(moved, scores.sib, scores.grand, scores.labels, scores.starts,
                                                     scores.tags), targets, 2.0)[0])
    assert grads.arcs[0][h, m] == pytest.approx((values[0] - values[1]) / (2 * eps), rel=1e-2, abs=1e-4)


def test_a_student_trains_with_teachers_and_loads_without_them(teacher_path, tmp_path):
    nlp = student([teacher_path], weight=1.0)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        losses = nlp.update(examples, sgd=optimizer, drop=0.0)
        assert np.isfinite(losses["hc_parser"])
    for words, heads, deps in SENTENCES:
        assert parse_of(nlp(Doc(nlp.vocab, words=words))) == (heads, deps)
    nlp.to_disk(tmp_path / "student")
    loaded = spacy.load(tmp_path / "student", config={"components": {"hc_parser": {"loss": {"teachers": {
        **TEACHERS, "paths": [str(tmp_path / "gone")]}}}}})  # teachers are loaded only to train
    words = SENTENCES[0][0]
    assert parse_of(loaded(Doc(loaded.vocab, words=words))) == parse_of(nlp(Doc(nlp.vocab, words=words)))


def test_teachers_need_a_path_and_match_labels_by_name():
    with pytest.raises(ValueError, match="at least one"):
        Teachers([])
    np.testing.assert_array_equal(_label_columns(["b", "a"], ["a", "b", "c"]), [1, 0, -1])
