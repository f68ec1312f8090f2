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
