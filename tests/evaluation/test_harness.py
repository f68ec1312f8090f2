"""harness.search_statistics on hand-made decoder results; interleaved timing with a stand-in for parse_timed."""
from pathlib import Path
from types import SimpleNamespace

import pytest
import spacy

from spacy_hcparse.evaluation import harness
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


def test_interleaved_speeds_take_turns_and_ratio_pairs_rounds(monkeypatch):
    """Each pipeline parses the whole file once per round, in turns; the ratio is the median of
    the per-round ratios, so a slow round slows both sides of its ratio."""
    gold = Path(__file__).resolve().parents[2] / "assets" / "sample" / "sample-ud-dev.conllu"
    order = []

    def fake_parse_timed(nlp, make_inputs, n_words, repeats=3, batch_size=256, progress=None):
        docs = make_inputs()
        order.append(nlp.meta["name"])
        return docs, float(len(docs)), [float(len(docs))]

    monkeypatch.setattr(harness, "parse_timed", fake_parse_timed)
    pipelines = {}
    for name in ("peer", "mine"):
        nlp = spacy.blank("en")
        nlp.meta["name"] = name
        pipelines[name] = nlp
    speeds = harness.interleaved_speeds(pipelines, gold, repeats=3)
    assert order == ["peer", "mine"] * 3
    assert speeds["peer"] == speeds["mine"] and len(speeds["peer"]) == 3
    assert harness.speed_ratio([2.0, 1.0, 4.0], [1.0, 1.0, 1.0]) == 2.0
    assert harness.speed_ratio([10.0, 5.0, 2.0], [10.0, 5.0, 2.0]) == 1.0
