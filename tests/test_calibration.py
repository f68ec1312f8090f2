"""Temperature scaling recovers the sharpening of overconfident scores; reliability and ECE."""
import numpy as np
import pytest

from spacy_hcparse.calibration import fit_temperature, fit_temperature_ece, head_confidence, head_nll, reliability
from spacy_hcparse.decoders import decode_mst
from tests.decoders.brute import all_trees, reference_score


def sampled_trees(logits, count, rng):
    trees = all_trees(len(logits) - 1)
    weights = np.array([reference_score(t, logits) for t in trees])
    probs = np.exp(weights - weights.max())
    probs /= probs.sum()
    return [trees[i] for i in rng.choice(len(trees), size=count, p=probs)]


def sharpened_data(seed):
    """Gold trees sampled from 60 random 4-word arc distributions, five per distribution, with
    the arc scores the model gives: the true logits times 2.5 (2.5 times too sure of itself)."""
    rng = np.random.default_rng(seed)
    arcs, golds = [], []
    for _ in range(60):
        logits = rng.normal(size=(5, 5)) * 1.5
        for tree in sampled_trees(logits, 5, rng):
            arcs.append(2.5 * logits)
            golds.append(np.asarray(tree))
    return arcs, golds


def test_fitted_temperature_undoes_sharpened_scores():
    arcs, golds = sharpened_data(0)
    fitted = fit_temperature(arcs, golds)
    assert fitted == pytest.approx(2.5, rel=0.2)
    assert head_nll(arcs, golds, fitted) < head_nll(arcs, golds, 1.0)


def test_reliability_table_and_ece():
    rows, ece = reliability([0.95, 0.95, 0.55, 0.55], [True, False, True, False], bins=10)
    assert ece == pytest.approx(0.5 * 0.45 + 0.5 * 0.05)
    filled = [r for r in rows if r["words"]]
    assert [(r["low"], r["words"], r["accuracy"]) for r in filled] == [(0.5, 2, 0.5), (0.9, 2, 0.5)]
    assert reliability([1.0, 0.0], [True, False])[1] == 0.0


def test_ece_fit_lowers_the_chosen_heads_calibration_error():
    arcs, golds = sharpened_data(1)
    chosen = [decode_mst(arc) for arc in arcs]
    fitted = fit_temperature_ece(arcs, golds, chosen)
    before = reliability(*head_confidence(arcs, golds, chosen, 1.0))[1]
    after = reliability(*head_confidence(arcs, golds, chosen, fitted))[1]
    assert fitted > 1.0 and after < before
