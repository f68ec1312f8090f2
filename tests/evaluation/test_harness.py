"""harness.search_statistics on hand-made decoder results."""
from types import SimpleNamespace

import pytest

from spacy_hcparse.evaluation.harness import search_statistics


def result(score, certified=False, restarts=1, time_capped=False):
    return SimpleNamespace(score=score, certified=certified, restarts=restarts, time_capped=time_capped)


def test_search_statistics_compares_full_decoders_only_on_proven_spans():
    results = {
        "certified": [result(5.0, certified=True), result(3.0, certified=True), result(1.0)],
        "hill_climb": [result(5.0, restarts=4), result(2.5, restarts=2), result(9.0, time_capped=True)],
        "mst": [result(7.0, certified=True), result(6.0, certified=True), result(2.0)],  # another objective
    }
    stats = search_statistics(results, full=["certified", "hill_climb"])
    assert stats["spans"] == 3 and stats["proven_share"] == pytest.approx(2 / 3)
    climb = stats["decoders"]["hill_climb"]
    assert climb["exact_share_of_proven"] == pytest.approx(0.5)
    assert climb["mean_gap_on_proven"] == pytest.approx(0.25) and climb["max_gap_on_proven"] == pytest.approx(0.5)
    assert climb["restarts"] == {"mean": pytest.approx(7 / 3), "median": 2.0, "max": 4}
    assert climb["time_capped_share"] == pytest.approx(1 / 3)
    mst = stats["decoders"]["mst"]  # not on the full objective: certified, but never compared
    assert mst["certified_share"] == pytest.approx(2 / 3)
    assert mst["exact_share_of_proven"] is None and mst["mean_gap_on_proven"] is None
