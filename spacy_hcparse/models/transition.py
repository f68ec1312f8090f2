"""Registered architectures of ``hc_transition_parser``.

- ``spacy_hcparse.TransitionModel.v1``: hashed feature templates -> sparse linear layer
  (averaged perceptron weights). Its forward maps configurations' bucket arrays to scores; the
  component's numba kernels read the weights directly.
- ``spacy_hcparse.NeuralTransitionModel.v1``: a spaCy Tok2Vec; the vectors of the stack/buffer
  positions (``transition.features.SLOTS``, zeros for empty slots and the root) are concatenated
  and scored by Maxout -> Linear. Its forward maps Docs to token vectors; the component calls
  ``get_ref("scorer")`` on the gathered rows.

Both carry ``attrs["kind"]`` (``"perceptron"`` | ``"neural"``) and ``attrs["max_length"]``.
"""
from typing import List, Optional

import numpy as np
from numba import njit
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Maxout, Model, chain
from thinc.types import Floats2d

from ..layers.sparse_linear import sparse_linear
from ..learning.tagger import tagger_templates as tagger_template_array
from ..transition.features import N_SLOTS, TEMPLATE_SETS


@registry.architectures("spacy_hcparse.TransitionModel.v1")
def build_transition_model(
    templates: str = "zhang_nivre",
    n_buckets: int = 2**22,
    tag_buckets: int = 2**20,
    max_length: int = 200,
    nO: Optional[int] = None,
    tagger_templates: str = "base",
    jackknife_tags: bool = False,
) -> Model:
    """Averaged perceptron over hashed templates, with an averaged perceptron tagger for the
    templates' tag values (``learning.tagger``; used when the training data has tags and no
    tagger runs before the parser).

    templates: name of a template set in ``transition.features.TEMPLATE_SETS``.
    n_buckets: hash table size (power of two); weights take ``4 * n_buckets`` bytes.
    tag_buckets: the tagger's hash table size (power of two).
    max_length: longest span parsed as one tree (``segment.sentence_spans``).
    nO: number of move classes, set by the component.
    tagger_templates: the tagger's template set (``learning.tagger.TAGGER_TEMPLATE_SETS``);
        ``"base"``, the default, is the set of configs written before the option existed.
    jackknife_tags: in training, give the parser tags from two taggers that each tag the half of
        the sentences they did not train on (``learning.tagger.JackknifeTagger``). Off by default:
        on EWT dev it cost 0.4-0.5 UAS (0.8 with unaveraged fold weights) against the tagger
        trained on everything.
    """
    if templates not in TEMPLATE_SETS:
        raise ValueError(f"unknown template set {templates!r}; expected one of {sorted(TEMPLATE_SETS)}")
    tagger_template_array(tagger_templates)  # an unknown set fails here, at config time
    linear = sparse_linear(n_buckets, nO=nO)
    tagger = sparse_linear(tag_buckets, nO=None)
    return Model(
        "hc_transition_perceptron",
        _linear_forward,
        init=_init_perceptron,
        layers=[linear, tagger],
        refs={"linear": linear, "tagger": tagger},
        dims={"nO": nO},
        attrs={"kind": "perceptron", "templates": templates, "tagger_templates": tagger_templates,
               "jackknife_tags": jackknife_tags, "max_length": max_length},
    )


def _init_perceptron(model: Model, X=None, Y=None) -> Model:
    linear = model.get_ref("linear")
    if model.get_dim("nO") is not None:
        linear.set_dim("nO", model.get_dim("nO"), force=True)
    linear.initialize()
    tagger = model.get_ref("tagger")
    if tagger.get_dim("nO") is None:
        tagger.set_dim("nO", 1)  # the component sets the number of tags before initializing
    tagger.initialize()
    return model


def _linear_forward(model: Model, X, is_train: bool):
    return model.get_ref("linear")(X, is_train)


@registry.architectures("spacy_hcparse.NeuralTransitionModel.v1")
def build_neural_transition_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    maxout_pieces: int = 3,
    max_length: int = 200,
    dropout: float = 0.1,
    nO: Optional[int] = None,
) -> Model:
    """Tok2Vec vectors of the configuration's positions -> Maxout hidden layer -> move scores."""
    scorer = chain(Maxout(nO=hidden_width, nP=maxout_pieces, dropout=dropout, normalize=True), Linear(nO=nO))
    return Model(
        "hc_transition_neural",
        _tok2vec_forward,
        init=_init_neural,
        layers=[tok2vec, scorer],
        refs={"tok2vec": tok2vec, "scorer": scorer, "output": scorer.layers[-1]},
        dims={"nO": nO},
        attrs={"kind": "neural", "max_length": max_length, "n_slots": N_SLOTS},
    )


def _init_neural(model: Model, X=None, Y=None) -> Model:
    tok2vec = model.get_ref("tok2vec")
    tok2vec.initialize(X=X)
    width = tok2vec.get_dim("nO")
    if model.get_dim("nO") is not None:
        model.get_ref("output").set_dim("nO", model.get_dim("nO"), force=True)
    sample = model.ops.alloc2f(2, width * N_SLOTS)
    model.get_ref("scorer").initialize(X=sample)
    return model


def _tok2vec_forward(model: Model, docs: List[Doc], is_train: bool):
    return model.get_ref("tok2vec")(docs, is_train)


class PrecomputedScorer:
    """The neural scorer with its hidden layer precomputed per token (the trick of spaCy's parser).

    The Maxout's pre-activation is affine in the concatenated slot vectors, so it is the sum over
    slots of ``table[row] @ W_slot.T``. ``hidden`` computes that once per token and slot,
    ``(len(table), N_SLOTS, nO * nP)``; ``scores`` then costs ``N_SLOTS`` row additions per
    configuration instead of a ``N_SLOTS * width`` by ``nO * nP`` product; with two moves per
    word that halves the work. The scorer's layers are looked up once, at construction: build
    one per parse call, not per step."""

    def __init__(self, model: Model) -> None:
        leaves = [layer for layer in model.get_ref("scorer").walk(order="dfs_pre") if not layer.layers]
        at = [layer.name for layer in leaves].index("maxout")
        self.maxout = leaves[at]
        self.after = leaves[at + 1:]  # LayerNorm, Dropout, the output Linear, in order

    def hidden(self, table: Floats2d) -> np.ndarray:
        """Per token and slot, the Maxout's pre-activation contribution; a zero row of ``table``
        (empty slots) gives zero contributions."""
        W = self.maxout.get_param("W")
        n_out, n_pieces, n_in = W.shape
        width = n_in // N_SLOTS
        flat = np.ascontiguousarray(W.reshape(n_out * n_pieces, N_SLOTS, width).transpose(2, 1, 0))
        out = np.asarray(table, dtype="f") @ flat.reshape(width, N_SLOTS * n_out * n_pieces)
        return out.reshape(len(table), N_SLOTS, n_out * n_pieces)

    def scores(self, hidden: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Move scores ``(len(rows), nO)`` of configurations whose slots hold the ``hidden`` rows
        ``rows`` (``(n, N_SLOTS)`` row indices); the same scores as the scorer applied to the
        concatenated slot vectors, up to float rounding."""
        Z = _gathered_maxout(hidden, rows, self.maxout.get_param("b"))
        for layer in self.after:
            Z = layer.predict(Z)
        return np.asarray(Z)


@njit(cache=True)
def _gathered_maxout(hidden: np.ndarray, rows: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``max_p (sum_k hidden[rows[:, k], k] + bias)[:, o, p]``: the Maxout's output for each
    configuration, without materializing the gathered ``(n, N_SLOTS, nO * nP)`` block."""
    n_out, n_pieces = bias.shape
    out = np.empty((rows.shape[0], n_out), dtype=np.float32)
    acc = np.empty(n_out * n_pieces, dtype=np.float32)
    for r in range(rows.shape[0]):
        acc[:] = bias.ravel()
        for k in range(rows.shape[1]):
            acc += hidden[rows[r, k], k]
        for o in range(n_out):
            best = acc[o * n_pieces]
            for p in range(1, n_pieces):
                best = max(best, acc[o * n_pieces + p])
            out[r, o] = best
    return out
