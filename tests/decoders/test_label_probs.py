"""label_probabilities / chosen_label_probs: a softmax over one arc's label scores."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import chosen_label_probs, label_probabilities
from spacy_hcparse.graph.labeling import LabelSet


def test_softmax_by_hand():
    scores = np.array([[0.0, np.log(3.0)], [2.0, -np.inf]])
    probs = label_probabilities(scores)
    assert np.allclose(probs, [[0.25, 0.75], [1.0, 0.0]])
    assert np.allclose(chosen_label_probs(scores, [1, 0]), [0.75, 1.0])
    assert np.allclose(label_probabilities(scores, temperature=2.0)[0], [1 / (1 + 3 ** 0.5), 3 ** 0.5 / (1 + 3 ** 0.5)])


def test_empty_and_bad_input():
    assert label_probabilities(np.zeros((0, 4))).shape == (0, 4)
    with pytest.raises(ValueError, match="no finite"):
        label_probabilities(np.array([[0.0], [-np.inf]]))
    with pytest.raises(ValueError, match="NaN"):
        label_probabilities(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match=r"\(n, L\)"):
        label_probabilities(np.zeros(3))
    with pytest.raises(ValueError, match="labels must be"):
        chosen_label_probs(np.zeros((2, 3)), [0, 3])
    with pytest.raises(ValueError, match="temperature"):
        label_probabilities(np.zeros((1, 2)), temperature=0.0)


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 20), labels=st.integers(1, 50), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_rows_are_distributions_ordered_like_scores(n, labels, seed, scale):
    scores = np.random.default_rng(seed).normal(scale=scale, size=(n, labels))
    probs = label_probabilities(scores)
    assert np.all(probs >= 0) and np.allclose(probs.sum(axis=1), 1.0)
    assert np.array_equal(probs.argmax(axis=1), scores.argmax(axis=1))


def test_written_label_probs_follow_the_labeler_rules():
    # labels: 0 ROOT, 1 nsubj, 2 obj (hidden: never predicted); hc_parser's label probabilities
    scores = np.array([[5.0, 1.0, 3.0], [2.0, 0.0, 9.0], [0.0, 0.0, 0.0]])
    heads = np.array([-1, 2, 0, 2])
    hidden = LabelSet.of(["ROOT", "nsubj", "obj"], None, ["obj"], "dep")
    probs = chosen_label_probs(hidden.masked([heads], [scores]), [1, 0, 1])
    assert probs == pytest.approx([1.0, 1.0, 1.0])  # word 1: ROOT and obj excluded, nsubj certain
    labels = LabelSet.of(["ROOT", "nsubj", "obj"], None, [], "dep")
    probs = chosen_label_probs(labels.masked([heads], [scores]), [1, 0, 2])
    assert probs[1] == 1.0 and probs[0] == pytest.approx(np.exp(1) / (np.exp(1) + np.exp(3)))
    assert probs[2] == pytest.approx(0.5)
