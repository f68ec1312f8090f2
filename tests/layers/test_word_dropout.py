"""word_dropout: whole rows zeroed in training, nothing at prediction."""
import numpy as np
import pytest
from thinc.api import fix_random_seed

from spacy_hcparse.layers.word_dropout import word_dropout


def test_rows_dropped_whole_in_training_only():
    fix_random_seed(0)
    layer = word_dropout(0.5)
    X = np.ones((400, 6), dtype="f")
    assert layer.predict(X) is X
    Y, backprop = layer(X, is_train=True)
    dropped = (Y == 0).all(axis=1)
    assert ((Y == 0).any(axis=1) == dropped).all()  # a row goes whole or not at all
    assert 0.4 < dropped.mean() < 0.6
    assert (Y[~dropped] == 1).all()  # kept rows are not rescaled
    dX = backprop(np.full_like(X, 2.0))
    assert (dX[dropped] == 0).all() and (dX[~dropped] == 2).all()


def test_same_seed_same_rows():
    X = np.ones((50, 3), dtype="f")
    fix_random_seed(3)
    first = word_dropout(0.3)(X, is_train=True)[0]
    fix_random_seed(3)
    assert (word_dropout(0.3)(X, is_train=True)[0] == first).all()


def test_empty_and_zero_rate():
    X = np.ones((0, 4), dtype="f")
    assert word_dropout(0.5)(X, is_train=True)[0].shape == (0, 4)
    Y = np.ones((5, 4), dtype="f")
    assert (word_dropout(0.0)(Y, is_train=True)[0] == Y).all()


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5])
def test_bad_rate(rate):
    with pytest.raises(ValueError, match="word dropout rate"):
        word_dropout(rate)
