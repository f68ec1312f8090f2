"""Averaged perceptron training of the parser's own tagger (``transition.perceptron_tagger``).

Tagging is ``transition.tagging``'s (greedy, left to right); in training each word is tagged with
the current weights and, where its reference tag is known and differs, the features move toward
the reference tag and away from the prediction. Averaging is that of ``transition.perceptron``
(``U`` and a clock counting tagged words).

``TaggerTrainer`` owns the unaveraged weights; ``average()`` gives the weights the model keeps.
With ``jackknife``, the tags it hands the parser for training come from two fold taggers
(``JackknifeTagger``) instead.
"""
from typing import Optional

import numpy as np

from ..compiling import njit
from .perceptron import AveragedPerceptron, averaged
from .tagging import tag_and_update, tag_spans
from .templates import W


@njit(cache=True)
def train_tagger(attrs, offsets, Wt, U, counter, templates, mask, n_tags, gold_tags, out_tags):
    """Tag every span with the current weights ``Wt`` and update ``Wt``/``U`` on each mistake
    where ``gold_tags >= 0`` (``tagging.tag_and_update``); returns the number of mistakes."""
    return tag_and_update(attrs, offsets, Wt, Wt, U, counter, templates, mask, n_tags, gold_tags, out_tags)


def span_folds(attrs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Fold (0 or 1) of each row's span from the parity of its words' summed form hashes, the same
    in every epoch whatever the batching; ``-1`` on root rows."""
    out = np.full(len(attrs), -1, dtype=np.int64)
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        if hi - lo > 1:
            out[lo + 1 : hi] = int(attrs[lo + 1 : hi, W].sum()) & 1
    return out


class JackknifeTagger:
    """Two taggers trained on one fold of the training sentences each, and each tagging the other
    fold: tags for the parser's training that are wrong about as often as on new text (a tagger
    trained on all sentences soon tags them almost perfectly, and the parser learns to trust tags
    too much). Training only; prediction uses the tagger trained on everything."""

    def __init__(self, size: int) -> None:
        self.W = [np.zeros(size, dtype=np.float64) for _ in range(2)]
        self.U = [np.zeros(size, dtype=np.float64) for _ in range(2)]
        self.counter = [np.ones(1, dtype=np.float64) for _ in range(2)]

    def tag(self, attrs, offsets, templates, mask, n_tags: int, gold_tags: np.ndarray) -> np.ndarray:
        """Tag ids per row (``-1`` on root rows), each from the fold tagger that did not train on it;
        both fold taggers are updated on their own fold's ``gold_tags``."""
        folds = span_folds(attrs, offsets)
        out = np.full(len(attrs), -1, dtype=np.int64)
        pred = np.empty(len(attrs), dtype=np.int64)
        for f in (0, 1):
            other = folds == 1 - f
            if other.any():  # the other fold, tagged with fold f's averaged weights
                avg = averaged(self.W[f], self.U[f], float(self.counter[f][0]))
                tag_spans(attrs, offsets, avg, templates, mask, n_tags, pred)
                out[other] = pred[other]
            gold = np.where(folds == f, gold_tags, -1)
            train_tagger(attrs, offsets, self.W[f], self.U[f], self.counter[f], templates, mask, n_tags, gold, pred)
        return out


class TaggerTrainer:
    """The tagger's training state: unaveraged weights (an ``AveragedPerceptron``, started from the
    model's weights) and, with ``jackknife``, the two fold taggers."""

    def __init__(self, weights: np.ndarray, jackknife: bool = False) -> None:
        self.weights = AveragedPerceptron.from_weights(weights)
        self.jackknife: Optional[JackknifeTagger] = JackknifeTagger(len(weights)) if jackknife else None

    def tag(self, attrs, offsets, templates, mask, n_tags: int, gold_tags: np.ndarray) -> np.ndarray:
        """Train on ``gold_tags`` (tag ids per row, ``-1`` unknown) and return the tag ids the
        parser trains with: the tagger's own predictions made before each update, or with
        ``jackknife`` the fold taggers'."""
        out = np.empty(len(attrs), dtype=np.int64)
        w = self.weights
        train_tagger(attrs, offsets, w.W, w.U, w.counter, templates, mask, n_tags, gold_tags, out)
        if self.jackknife is not None:
            out = self.jackknife.tag(attrs, offsets, templates, mask, n_tags, gold_tags)
        return out

    def average(self) -> np.ndarray:
        return self.weights.average()
