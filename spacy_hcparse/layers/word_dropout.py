"""Word dropout: in training, each row (one token's vector) is zeroed with a fixed probability.

Where thinc's ``Dropout`` zeroes single units, this drops a token's whole embedding from one
table (Kiperwasser & Goldberg's word dropout), so the encoder learns to parse a word from its
other features (prefix, suffix, shape, context), as it must for words training never saw. The
rate is the layer's own attribute (``set_dropout_rate`` does not touch it); kept rows are not
rescaled, so prediction (no dropout) sees the same expected input.
"""
from typing import Callable, Tuple

from thinc.api import Model
from thinc.types import Floats2d


def word_dropout(rate: float) -> Model[Floats2d, Floats2d]:
    """Zero each row of a (n_tokens, width) array with probability ``rate`` in training."""
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"word dropout rate must be in [0, 1), got {rate}")
    return Model("word_dropout", forward, attrs={"rate": rate})


def forward(model: Model, X: Floats2d, is_train: bool) -> Tuple[Floats2d, Callable]:
    rate = model.attrs["rate"]
    if not is_train or rate == 0 or not len(X):
        return X, lambda dY: dY
    keep = (model.ops.xp.random.uniform(0.0, 1.0, (X.shape[0], 1)) >= rate).astype(X.dtype)
    return X * keep, lambda dY: dY * keep
