"""layers.char_cnn: token vectors from their characters."""
import numpy as np
import pytest
import spacy
from thinc.api import fix_random_seed
from thinc.types import Ragged

from spacy_hcparse.layers.char_cnn import _word_codes, char_cnn

NLP = spacy.blank("en")


def model(width=6, max_chars=20):
    fix_random_seed(0)
    m = char_cnn(width, char_width=4, rows=50, max_chars=max_chars)
    m.initialize()
    return m


def test_one_row_per_token_with_the_docs_lengths():
    docs = [NLP("Unbelievable words here"), NLP(""), NLP("ok")]
    Y = model().predict(docs)
    assert isinstance(Y, Ragged)
    assert Y.dataXd.shape == (4, 6) and list(Y.lengths) == [3, 0, 1]


def test_no_tokens():
    Y = model().predict([NLP("")])
    assert Y.dataXd.shape == (0, 6) and list(Y.lengths) == [0]


def test_same_word_same_vector_and_long_words_keep_both_ends():
    Y = model().predict([NLP("cat dog cat")]).dataXd
    assert np.allclose(Y[0], Y[2]) and not np.allclose(Y[0], Y[1])
    assert list(_word_codes("abcdefgh", 4)) == [2, ord("a"), ord("b"), ord("g"), ord("h"), 3]


def test_backprop_matches_finite_differences():
    docs = [NLP("Unbelievable words here"), NLP("ok")]
    m = model(width=8)
    table = m.layers[0]
    weights = np.random.default_rng(0).normal(size=(4, 8)).astype("f")
    Y, backprop = m.begin_update(docs)
    backprop(Ragged(weights, Y.lengths))
    grad, value = table.get_grad("E").copy(), table.get_param("E").copy()

    def objective(row, col, shift):
        moved = value.copy()
        moved[row, col] += shift
        table.set_param("E", moved)
        return float((m.predict(docs).dataXd.astype(np.float64) * weights).sum())

    eps = 1e-3  # one coordinate at a time: a random direction over the table crosses max kinks
    for row, col in np.argwhere(np.abs(grad) > 1e-2)[:8]:
        numeric = (objective(row, col, eps) - objective(row, col, -eps)) / (2 * eps)
        assert numeric == pytest.approx(float(grad[row, col]), rel=2e-2, abs=1e-2)
    table.set_param("E", value)


def test_bad_arguments():
    with pytest.raises(ValueError, match="window"):
        char_cnn(6, 4, 50, window=0)
