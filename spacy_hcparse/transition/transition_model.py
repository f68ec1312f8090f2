"""Registered architectures of ``hc_transition_parser``: a thinc Model and, in
``model.attrs["learner"]``, the learner class that parses and trains with it
(``transition.transition_types.TransitionLearner``).

- ``spacy_hcparse.TransitionModel.v2``: averaged perceptron over hashed Zhang & Nivre templates,
  with a perceptron tagger for the tag features and a sentence classifier of its own
  (``transition.perceptron_model``; learner ``transition.perceptron_learner.PerceptronLearner``).
- ``spacy_hcparse.NeuralTransitionModel.v2``: a spaCy Tok2Vec, the configuration's position vectors
  scored by Maxout -> Linear, and a sentence-start scorer (``transition.neural_model``; learner
  ``transition.neural_learner.NeuralLearner``).

Both carry ``attrs["max_length"]``, the longest span parsed as one tree. Docs without sentence
boundaries are segmented by the model's sentence classifier or scorer (``sentence_buckets`` or
``sentence_width`` 0: none, and such docs are cut into chunks of ``max_length`` words); docs with
boundaries keep theirs.
"""
from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .neural_learner import NeuralLearner
from .neural_model import neural_model
from .perceptron_learner import PerceptronLearner
from .perceptron_model import perceptron_model


@registry.architectures("spacy_hcparse.TransitionModel.v2")
def build_transition_model_v2(
    templates: str = "zhang_nivre",
    n_buckets: int = 2**22,
    tag_buckets: int = 2**20,
    max_length: int = 200,
    nO: Optional[int] = None,
    tagger_templates: str = "base",
    jackknife_tags: bool = False,
    sentence_buckets: int = 2**20,
) -> Model:
    """Averaged perceptron over hashed templates, with an averaged perceptron tagger for the
    templates' tag values (used when the training data has tags and no tagger runs before the
    parser) and a two-class perceptron sentence classifier (templates ``"sentence"`` of
    ``transition.tagging``: the word, its neighbours and their shapes), trained on the
    reference's sentence starts.

    templates: name of a template set in ``transition.templates.TEMPLATE_SETS``.
    n_buckets: hash table size (power of two); weights take ``4 * n_buckets`` bytes.
    tag_buckets: the tagger's hash table size (power of two).
    max_length: longest span parsed as one tree (``segment.sentence_spans``).
    nO: number of move classes, set by the component (as is ``nT``, the number of tags).
    tagger_templates: the tagger's template set (``transition.tagging.TAGGER_TEMPLATE_SETS``).
    jackknife_tags: in training, give the parser tags from two taggers that each tag the half of
        the sentences they did not train on (``transition.tagger_trainer.JackknifeTagger``). Off
        by default: it lost UAS against the tagger trained on everything (docs/experiments.md).
    sentence_buckets: the sentence classifier's hash table size (a power of two); 0 for none.
    """
    model = perceptron_model(templates, n_buckets, tag_buckets, max_length, nO, tagger_templates, jackknife_tags,
                             sentence_buckets)
    model.attrs["learner"] = PerceptronLearner
    return model


@registry.architectures("spacy_hcparse.NeuralTransitionModel.v2")
def build_neural_transition_model_v2(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    maxout_pieces: int = 3,
    max_length: int = 200,
    dropout: float = 0.1,
    sentence_width: int = 64,
    nO: Optional[int] = None,
) -> Model:
    """Tok2Vec vectors of the configuration's positions -> Maxout hidden layer -> move scores,
    with a sentence-start scorer on the Tok2Vec's vectors (``layers.sentence_starts``: a ReLU
    layer of ``sentence_width`` over each token and the one before it, dropout ``dropout``, then a
    logit), trained on the reference's sentence starts.

    sentence_width: 0 for no sentence-start scorer. max_length: as in ``TransitionModel.v2``.
    """
    model = neural_model(tok2vec, hidden_width, maxout_pieces, max_length, dropout, sentence_width, nO)
    model.attrs["learner"] = NeuralLearner
    return model
