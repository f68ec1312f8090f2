"""label_probabilities / chosen_label_probs: a softmax over one arc's label scores."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import chosen_label_probs, label_probabilities


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
