"""Our parsers pull on a shared tok2vec as hard as spaCy's parser does.

Pipelines ``tok2vec + tagger + PARSER``, every component listening to the shared ``tok2vec``
(``spacy.Tok2VecListener.v1``), for PARSER in spaCy's ``parser``, ``hc_transition_parser`` (neural,
``NeuralTransitionModel.v2``) and ``hc_parser`` (``GraphParserModel.v8`` with full-rank labels, no BiLSTM, its default loss).
The gradient a parser sends into the shared layer is what it hands its listener's backprop; its
norm is compared with spaCy's parser's on the same batch after the same number of updates.

Where: after ``WARM_UP`` updates. spaCy's parser and tagger start with zero-initialized output
layers, so they send no gradient at all at first, and ours (randomly initialized, fitting the
tiny data faster) send less and less later; after 20 updates on these docs the ratio was
0.64-1.03 (hc_transition_parser) and 1.2-2.6 (hc_parser) over seeds 0-5. With the loss averaged
per configuration (the neural learner before) it was 0.009-0.016, and 0.02 for hc_parser's
``per_word`` loss.
"""
import numpy as np
import pytest
import spacy
from spacy.pipeline.tok2vec import Tok2VecListener
from thinc.api import Adam

from tests.treebank import make_doc_examples

WIDTH = 32
WARM_UP = 20
FACTOR = 5.0  # ours within [1/FACTOR, FACTOR] x spaCy's parser's
TOK2VEC = {"@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None, "width": WIDTH, "depth": 2,
           "embed_size": 500, "window_size": 1, "maxout_pieces": 3, "subword_features": True}
LISTENER = {"@architectures": "spacy.Tok2VecListener.v1", "width": WIDTH, "upstream": "*"}
PARSERS = {
    "parser": {"model": {"@architectures": "spacy.TransitionBasedParser.v2", "state_type": "parser",
                         "extra_state_tokens": False, "hidden_width": 64, "maxout_pieces": 2, "use_upper": True,
                         "nO": None, "tok2vec": LISTENER}},
    "hc_transition_parser": {"label_freq_cutoff": 1,
                             "model": {"@architectures": "spacy_hcparse.NeuralTransitionModel.v2", "hidden_width": 64,
                                       "maxout_pieces": 2, "sentence_width": 16, "dropout": 0.0,
                                       "tok2vec": LISTENER}},
    "hc_parser": {"model": {
        "@architectures": "spacy_hcparse.GraphParserModel.v8", "tok2vec": LISTENER, "context": None,
        "arc_scorer": {"@architectures": "spacy_hcparse.BiaffineArcScorer.v1", "width": 64, "dropout": 0.0},
        "sibling_scorer": {"@architectures": "spacy_hcparse.SiblingScorer.v1", "rank": 16, "dropout": 0.0},
        "grand_scorer": {"@architectures": "spacy_hcparse.GrandparentScorer.v1", "rank": 16, "dropout": 0.0},
        "label_scorer": {"@architectures": "spacy_hcparse.FullLabelScorer.v1", "width": 32, "dropout": 0.0},
        "start_scorer": {"@architectures": "spacy_hcparse.SentenceStartScorer.v1", "width": 16, "dropout": 0.0},
        "tags": {"@architectures": "spacy_hcparse.TagScorers.v1", "attrs": ["POS"], "from_context": False}}},
}


def pipeline(parser, seed=0):
    """The trained-from-scratch pipeline, its raw-text examples (tags: the upper-cased labels) and
    optimizer."""
    spacy.util.fix_random_seed(seed)
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec", config={"model": TOK2VEC})
    nlp.add_pipe("tagger", config={"model": {"@architectures": "spacy.Tagger.v2", "tok2vec": LISTENER}})
    nlp.add_pipe(parser, config=PARSERS[parser])
    examples = make_doc_examples(nlp)
    for eg in examples:
        for token in eg.reference:
            token.tag_ = token.dep_.upper()
    return nlp, examples, nlp.initialize(lambda: examples)


def gradient_norm(nlp, examples, optimizer, component):
    """The norm of the gradient ``component`` sends into the shared tok2vec in one update."""
    listener = next(node for node in nlp.get_pipe(component).model.walk() if isinstance(node, Tok2VecListener))
    seen = []
    receive = listener.receive

    def recording(batch_id, outputs, backprop):
        def wrapped(d_tokvecs):
            seen.append(float(np.sqrt(sum((np.asarray(d) ** 2).sum() for d in d_tokvecs))))
            return backprop(d_tokvecs)

        receive(batch_id, outputs, wrapped)

    listener.receive = recording
    try:
        nlp.update(examples, sgd=optimizer)
    finally:
        listener.receive = receive
    (norm,) = seen
    return norm


def norm_after_warm_up(parser):
    nlp, examples, optimizer = pipeline(parser)
    for _ in range(WARM_UP):
        nlp.update(examples, sgd=optimizer)
    return gradient_norm(nlp, examples, optimizer, parser)


@pytest.fixture(scope="module")
def spacy_norm():
    return norm_after_warm_up("parser")


@pytest.mark.parametrize("parser", ["hc_transition_parser", "hc_parser"])
def test_gradient_into_shared_tok2vec_is_on_spacys_scale(spacy_norm, parser):
    assert spacy_norm > 0
    ratio = norm_after_warm_up(parser) / spacy_norm
    assert 1 / FACTOR <= ratio <= FACTOR, ratio


@pytest.mark.parametrize("parser", ["parser", "hc_transition_parser", "hc_parser"])
def test_shared_tok2vec_learns_from_the_parser_alone(parser):
    """With the tagger left out of the updates, the parser (the tok2vec's last listener, which
    runs its backprop) still moves the shared weights. Adam without weight decay, so that only
    a gradient moves them."""
    nlp, examples, _ = pipeline(parser)
    optimizer = Adam(learn_rate=0.001, L2=0.0, grad_clip=1.0)
    tok2vec = nlp.get_pipe("tok2vec").model
    before = [(node.id, name, node.get_param(name).copy()) for node in tok2vec.walk()
              for name in node.param_names if node.has_param(name)]
    for _ in range(3):
        nlp.update(examples, sgd=optimizer, exclude=["tagger"])
    moved = [name for node_id, name, value in before
             if not np.array_equal(value, next(n for n in tok2vec.walk() if n.id == node_id).get_param(name))]
    assert moved, "the shared tok2vec did not change"
