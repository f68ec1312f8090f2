import numpy as np

from spacy_hcparse.decoding import DecodeResult
from spacy_hcparse.evaluation.harness import search_statistics


def result(score, certified=False, restarts=0):
    return DecodeResult(np.array([-1, 0]), score, certified, float("nan"), restarts, False)


def test_search_statistics_with_several_proven_spans_and_a_partial_decoder():
    results = {
        "dual": [result(5.0, True), result(3.0, True), result(2.0)],
        "hill_climb": [result(5.0, restarts=4), result(2.5, restarts=6), result(2.2, restarts=5)],
        "eisner": [result(4.0), result(1.0), result(2.0)],  # arc + sib only: not compared
    }
    stats = search_statistics(results, full=["dual", "hill_climb"])
    assert stats["spans"] == 3 and np.isclose(stats["proven_share"], 2 / 3)
    hill = stats["decoders"]["hill_climb"]
    assert hill["exact_share_of_proven"] == 0.5 and hill["max_gap_on_proven"] == 0.5
    assert hill["restarts"] == {"mean": 5.0, "median": 5.0, "max": 6}
    eisner = stats["decoders"]["eisner"]
    assert eisner["exact_share_of_proven"] is None and eisner["mean_gap_on_proven"] is None
    assert np.isclose(stats["decoders"]["dual"]["certified_share"], 2 / 3)
