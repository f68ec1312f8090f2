"""The label scorers grow their label outputs: old labels score as before, new ones from zero,
and the grown scorer's backprop still agrees with finite differences."""
import numpy as np
import pytest
from thinc.api import Adam

from spacy_hcparse.layers import biaffine_label, full_label
from tests.layers import test_gradients
from tests.layers.test_gradients import full_label_layer, label_layer, label_layer_v1

LAYERS = {"low_rank": label_layer, "low_rank_v1": label_layer_v1, "full_rank": full_label_layer}
RESIZED = {"biaffine_label": biaffine_label.resized, "full_label": full_label.resized}


def grown(make, extra=2):
    model, X = make()
    return model, RESIZED[model.name](model, model.get_dim("nO") + extra), X


@pytest.mark.parametrize("name", list(LAYERS))
def test_old_labels_score_as_before_and_new_ones_zero(name):
    model, bigger, X = grown(LAYERS[name])
    assert bigger is not model and bigger.layers == model.layers  # projections shared
    assert bigger.get_dim("nO") == model.get_dim("nO") + 2
    for old, new in zip(model.predict(X), bigger.predict(X)):
        assert np.array_equal(new[:, :-2], old)
        assert not new[:, -2:].any()


@pytest.mark.parametrize("name", list(LAYERS))
def test_grown_layer_gradients(name):
    _, bigger, X = grown(LAYERS[name])
    rng = np.random.default_rng(3)
    for param in bigger.param_names:  # every weight live, the new labels' too
        bigger.set_param(param, rng.normal(size=bigger.get_param(param).shape).astype("f"))
    test_gradients.test_param_gradient(lambda: (bigger, X))


@pytest.mark.parametrize("name", list(LAYERS))
def test_grown_layer_trains_with_an_optimizer_that_saw_the_old_one(name):
    model, X = LAYERS[name]()
    optimizer = Adam(0.01)
    Y, backprop = model.begin_update(X)
    backprop([np.ones_like(y) for y in Y])
    model.finish_update(optimizer)
    bigger = RESIZED[model.name](model, model.get_dim("nO") + 1)
    Y, backprop = bigger.begin_update(X)
    backprop([np.ones_like(y) for y in Y])
    bigger.finish_update(optimizer)  # new node: fresh optimizer state, no shape clash
    assert all(y.shape[1] == bigger.get_dim("nO") for y in bigger.predict(X))


@pytest.mark.parametrize("name", list(LAYERS))
def test_shrinking_is_refused(name):
    model, _ = LAYERS[name]()
    with pytest.raises(ValueError, match="shrink"):
        RESIZED[model.name](model, model.get_dim("nO") - 1)
