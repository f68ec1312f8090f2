"""The neural transition scorer's precomputed hidden layer gives the scorer's own scores."""
import numpy as np
from thinc.api import Model

from spacy_hcparse.models.transition import PrecomputedScorer, build_neural_transition_model
from spacy_hcparse.transition.features import N_SLOTS


def test_precomputed_scores_match_the_scorer():
    width = 8
    model = build_neural_transition_model(Model("tok2vec", lambda m, X, t: (X, lambda d: d), dims={"nO": width}),
                                          hidden_width=6, maxout_pieces=3, nO=5)
    model.get_ref("scorer").initialize(X=np.zeros((2, width * N_SLOTS), dtype="f"))
    rng = np.random.default_rng(0)
    for name in ("W", "b"):  # non-zero biases too
        maxout = next(layer for layer in model.walk() if layer.name == "maxout")
        maxout.set_param(name, rng.normal(size=maxout.get_param(name).shape).astype("f"))
    table = rng.normal(size=(30, width)).astype("f")
    table[-1] = 0.0  # the empty-slot row
    rows = rng.integers(0, 30, size=(11, N_SLOTS))
    rows[:, 3] = 29
    expected = np.asarray(model.get_ref("scorer").predict(table[rows].reshape(len(rows), -1)))
    scorer = PrecomputedScorer(model)
    got = scorer.scores(scorer.hidden(table), rows)
    assert got.shape == (11, 5)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
