"""The calibration fitted on held-out spans: the ECE-fitted temperature undoes sharpened scores;
reliability and ECE; the isotonic map; head and tree probabilities against brute force, first
order and with siblings; the tree temperature."""
import json

import numpy as np
import pytest

from spacy_hcparse.graph.calibration import (MIN_TREE_SPANS, apply_knots, chosen_confidence, fit_calibration,
                                       head_probabilities, held_out, isotonic_knots, reliability)
from spacy_hcparse.decoders import decode_eisner, decode_mst
from tests.decoders.brute import all_trees, is_projective, reference_score
from tests.decoders.brute import tree_distribution as brute


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


def correctness(golds, chosen):
    """Per tree (n,) 1 where the chosen head is the gold one, else 0."""
    return [(c[1:] == g[1:]).astype(np.int64) for g, c in zip(golds, chosen)]


def factors(cubes):
    """Dense sibling cubes (None: a span without) as ``HeldOut.sib``: counts, triples, values."""
    triples = [np.argwhere(c != 0) if c is not None else np.zeros((0, 3), np.int64) for c in cubes]
    counts = np.array([len(t) if c is not None else -1 for t, c in zip(triples, cubes)], dtype=np.int64)
    values = [c[tuple(t.T)] if c is not None else np.zeros(0) for t, c in zip(triples, cubes)]
    return counts, np.concatenate(triples).astype(np.int64), np.concatenate(values)


def test_fitted_temperature_undoes_sharpened_scores():
    arcs, golds = sharpened_data(1)
    chosen = [decode_mst(arc) for arc in arcs]
    data = held_out(arcs, chosen, correctness(golds, chosen))
    fitted = fit_calibration(data)
    assert fitted["temperature"] > 1.0
    assert reliability(*chosen_confidence(data, fitted["temperature"]))[1] < reliability(*chosen_confidence(data, 1.0))[1]


def test_reliability_table_and_ece():
    rows, ece = reliability([0.95, 0.95, 0.55, 0.55], [True, False, True, False], bins=10)
    assert ece == pytest.approx(0.5 * 0.45 + 0.5 * 0.05)
    filled = [r for r in rows if r["words"]]
    assert [(r["low"], r["words"], r["accuracy"]) for r in filled] == [(0.5, 2, 0.5), (0.9, 2, 0.5)]
    assert reliability([1.0, 0.0], [True, False])[1] == 0.0


def test_isotonic_knots_pool_violators():
    xs, ys = isotonic_knots(np.array([0.1, 0.2, 0.3, 0.4]), np.array([1, 0, 1, 1]))
    assert xs == pytest.approx([0.15, 0.35]) and ys == pytest.approx([0.5, 1.0])
    assert np.all(np.diff(ys) >= 0) and np.all(np.diff(xs) >= 0)
    assert apply_knots(np.array([0.0, 0.15, 0.25, 0.9]), [xs, ys]) == pytest.approx([0.5, 0.5, 0.75, 1.0])
    assert apply_knots(np.array([0.3]), None) == pytest.approx([0.3])


def test_fit_calibration_beats_temperature_alone_on_a_miscalibrated_decoder():
    # a decoder better than the first-order marginals say: it takes the gold head 60% of the time
    # whatever the marginal, so no temperature calibrates it but the isotonic map does
    rng = np.random.default_rng(3)
    arcs, golds = sharpened_data(2)
    arcs, golds = arcs * 6, golds * 6
    chosen = [g.copy() if rng.random() < 0.6 else decode_mst(a) for a, g in zip(arcs, golds)]
    correct = correctness(golds, chosen)
    data = held_out(arcs, chosen, correct)
    fitted = fit_calibration(data, min_map_words=100)
    assert fitted["knots"] is not None and fitted["words"] == sum(len(c) for c in correct)
    conf, flags = chosen_confidence(data, fitted["temperature"])
    assert reliability(apply_knots(conf, fitted["knots"]), flags)[1] == pytest.approx(fitted["ece"])
    assert fitted["ece"] < reliability(conf, flags)[1]
    assert fitted["ece"] < 0.02
    json.dumps(fitted)  # stored in the component's cfg
    few = fit_calibration(held_out(arcs[:10], chosen[:10], correct[:10]))
    assert few["knots"] is None  # too few words for a map: the temperature alone


def test_chosen_confidence_skips_unknown_words():
    arc = np.zeros((4, 4))
    heads = np.array([-1, 0, 1, 1])
    conf, flags = chosen_confidence(held_out([arc], [heads], [np.array([1, -1, 0])]), 1.0)
    assert len(conf) == 2 and flags.tolist() == [True, False]
    probs, _ = brute(heads, arc, 1.0)
    assert conf == pytest.approx([probs[0], probs[2]])


@pytest.mark.parametrize("temperature", [0.7, 2.0])
def test_head_probabilities_are_the_tree_distributions(temperature):
    """First order for spans without siblings or with a crossing tree, projective with siblings
    otherwise; the tree's log probability at its own temperature where given."""
    rng = np.random.default_rng(6)
    arcs, cubes, chosen = [], [], []
    for k in range(30):
        n = int(rng.integers(0, 5))
        arc, sib = rng.normal(size=(n + 1, n + 1)), rng.normal(size=(n + 1,) * 3)
        arcs.append(arc)
        cubes.append(None if k % 3 == 0 else sib)
        chosen.append(decode_mst(arc) if k % 2 else decode_eisner(arc, sib))
    data = held_out(arcs, chosen, [np.ones(len(c) - 1, np.int64) for c in chosen], factors(cubes))
    assert any(c is not None and not is_projective(h) for c, h in zip(cubes, chosen))
    probs, log_probs = head_probabilities(data.heads, data.sizes, data.arcs, data.sib, temperature)
    trees, tree_logs = head_probabilities(data.heads, data.sizes, data.arcs, data.sib, temperature, 3.0)
    start = 0
    for arc, sib, heads, log_prob, tree_log in zip(arcs, cubes, chosen, log_probs, tree_logs):
        n = len(heads) - 1
        expected, expected_log = brute(heads, arc, temperature, sib)
        assert probs[start: start + n] == pytest.approx(expected, abs=1e-9)
        assert trees[start: start + n] == pytest.approx(expected, abs=1e-9)
        assert log_prob == pytest.approx(expected_log, abs=1e-9)
        with_sib = sib is not None and is_projective(heads) and n > 0
        assert tree_log == pytest.approx(brute(heads, arc, 3.0, sib)[1] if with_sib else expected_log, abs=1e-9)
        start += n


def test_sibling_calibration_reads_the_siblings():
    rng = np.random.default_rng(6)
    arcs, sibs, chosen, correct = [], [], [], []
    for _ in range(40):
        n = int(rng.integers(2, 5))
        arc, sib = rng.normal(size=(n + 1, n + 1)), rng.normal(size=(n + 1,) * 3)
        arcs.append(arc)
        sibs.append(sib)
        chosen.append(decode_eisner(arc, sib))
        correct.append((rng.random(n) < 0.7).astype(np.int64))
    fitted = fit_calibration(held_out(arcs, chosen, correct, factors(sibs)), min_map_words=10)
    assert fitted["siblings"] and fit_calibration(held_out(arcs, chosen, correct))["siblings"] is False
    first = fit_calibration(held_out(arcs, chosen, correct, factors([None] * len(sibs))), min_map_words=10)
    assert first["siblings"] is False


def test_tree_temperature_is_fitted_with_siblings():
    rng = np.random.default_rng(8)
    arcs, sibs, chosen, correct = [], [], [], []
    for _ in range(MIN_TREE_SPANS + 20):
        n = int(rng.integers(2, 5))
        arc, sib = 3.0 * rng.normal(size=(n + 1, n + 1)), rng.normal(size=(n + 1,) * 3)
        arcs.append(arc)
        sibs.append(sib)
        chosen.append(decode_eisner(arc, sib))
        correct.append((rng.random(n) < 0.8).astype(np.int64))
    fitted = fit_calibration(held_out(arcs, chosen, correct, factors(sibs)), min_map_words=10)
    assert fitted["tree_temperature"] > 0
    few = held_out(arcs[:50], chosen[:50], correct[:50], factors(sibs[:50]))
    assert "tree_temperature" not in fit_calibration(few)
    assert "tree_temperature" not in fit_calibration(held_out(arcs, chosen, correct))  # first order: none


def test_calibrate_script_reports_ece_per_sent_id_genre(tmp_path):
    """scripts/calibrate.py --by-genre: words grouped by the prefix of their sentence's sent_id,
    one report (and ECE) per genre."""
    import importlib.util
    from pathlib import Path

    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    from spacy_hcparse.graph.extensions import register_extensions
    from spacy_hcparse.conllu import read_conllu
    from spacy_hcparse.evaluation.ud import gold_doc

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("scripts_calibrate", root / "scripts" / "calibrate.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.genre("email-enronsent01_01-0001") == "email" and script.genre(None) == ""
    register_extensions()
    rows = "1\tA\ta\tX\t_\t_\t2\tdep\t_\t_\n2\tB\tb\tX\t_\t_\t0\troot\t_\t_\n"
    path = tmp_path / "g.conllu"
    sent_ids = ("weblog-a-0001", "email-b-0001", "weblog-a-0002")
    path.write_text("".join(f"# sent_id = {sid}\n{rows}\n" for sid in sent_ids))
    nlp = spacy.blank("en")
    examples = []
    for k, sentence in enumerate(read_conllu(path)):
        heads = [0, 1] if k == 1 else [1, 1]  # the email sentence's first head wrong
        doc = Doc(nlp.vocab, words=[w.form for w in sentence.words], heads=heads, deps=["dep", "ROOT"])
        doc[0]._.hc_head_prob, doc[1]._.hc_head_prob = 0.75, 0.95
        examples.append(Example(doc, gold_doc(nlp, sentence)))
    result = script.by_genre(examples, path)
    assert sorted(result) == ["email", "weblog"]
    assert result["weblog"]["words"] == 4 and result["email"]["words"] == 2
    assert result["email"]["ece"] == pytest.approx(0.5 * 0.75 + 0.5 * 0.05)
    assert result["weblog"]["ece"] == pytest.approx(0.5 * 0.25 + 0.5 * 0.05)


def load_script(name: str):
    """scripts/<name>.py as a module."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def calibration_result(ece_dev=0.0123, ece_test=0.0234, plot=None):
    """A calibration.json as calibrate.py writes it (two bins shown), with ``plot`` where given."""
    def split(ece, raw):
        bins = [{"low": 0.8, "high": 0.9, "words": 10, "confidence": 0.85, "accuracy": 0.8},
                {"low": 0.9, "high": 1.0, "words": 30, "confidence": 0.95, "accuracy": 0.9}]
        return {"written": {"words": 40, "ece": ece, "accuracy": 0.875, "mean_confidence": 0.925, "bins": bins},
                "uncalibrated": {"words": 40, "ece": raw, "accuracy": 0.875, "mean_confidence": 0.8, "bins": bins}}
    result = {"model": "m", "calibration": {"temperature": 1.41, "knots": [[0.1, 0.9], [0.2, 0.8]]},
              "dev": split(ece_dev, 0.0456), "test": split(ece_test, 0.0567)}
    return {**result, "plot": plot} if plot else result


def test_report_has_a_confidence_section_only_with_calibration_json():
    report = load_script("report")
    gold = {"parser": "hc_parser", "splits": {"test": {
        "ud_uas": 0.8, "ud_las": 0.7, "dep_uas": 0.8, "dep_las": 0.7, "exact_las": 0.1, "words_per_sec": 1000.0,
        "nonprojective": {"precision": None, "recall": None, "gold_arcs": 0}}}}
    assert "Confidence" not in report.render("UD_Sample", [gold], {}, None, "x.png")
    text = report.render("UD_Sample", [gold], {}, None, "x.png", calibration=calibration_result(),
                         reliability_png="UD_Sample-reliability.png")
    section = text[text.index("## Confidence"):]
    rows = [line for line in section.splitlines() if line.startswith("| test |") or line.startswith("| dev |")]
    assert rows == ["| test | 40 | 87.50 | 92.50 | 0.0234 | 0.0567 |", "| dev | 40 | 87.50 | 92.50 | 0.0123 | 0.0456 |"]
    assert "T = 1.410, with an isotonic map" in section
    assert "![reliability diagram of hc_parser's head probabilities](UD_Sample-reliability.png)" in section
    assert "](" not in report.render("UD_Sample", [gold], {}, None, "x.png", calibration=calibration_result()).split(
        "## Confidence")[1]  # no plot, no image


def test_report_script_links_the_reliability_plot(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    metrics, reports = tmp_path / "metrics" / "RUN", tmp_path / "reports"
    metrics.mkdir(parents=True)
    reports.mkdir()
    (reports / "RUN-reliability.png").write_bytes(b"png")
    cmd = [sys.executable, str(root / "scripts" / "report.py"), "metrics/RUN", "reports"]
    result = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Confidence" not in (reports / "RUN.md").read_text()
    (metrics / "calibration.json").write_text(json.dumps(calibration_result(plot="reports/RUN-reliability.png")))
    result = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (reports / "RUN.md").read_text()
    assert "## Confidence" in text and "](RUN-reliability.png)" in text
    report = load_script("report")
    assert report.reliability_link({"plot": str(tmp_path / "elsewhere.png")}, reports, "RUN") == "RUN-reliability.png"
    assert report.reliability_link({}, reports, "OTHER") is None


def test_calibrate_script_writes_the_json_and_the_reliability_plot(tmp_path):
    """calibrate.py on an untrained tiny hc_parser (initialized on the sample train split): ECE as
    written and at T = 1 per split, the reliability tables, the plot and its path."""
    import subprocess
    import sys
    from pathlib import Path

    import spacy
    from spacy.training import Example

    from spacy_hcparse.conllu import read_conllu
    from spacy_hcparse.evaluation.ud import gold_doc, input_doc

    root = Path(__file__).resolve().parents[2]
    sample = root / "assets" / "sample"
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser", config={"model": {"tok2vec": {"width": 32, "depth": 1, "embed_size": 500},
                                                "arc_scorer": {"width": 16}, "label_scorer": {"width": 16},
                                                "sibling_scorer": {"rank": 4}, "grand_scorer": {"rank": 4}}})
    examples = [Example(input_doc(nlp, s), gold_doc(nlp, s)) for s in read_conllu(sample / "sample-ud-train.conllu")]
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp_path / "model")
    out, png = tmp_path / "metrics" / "calibration.json", tmp_path / "reports" / "RUN-reliability.png"
    cmd = [sys.executable, str(root / "scripts" / "calibrate.py"), str(tmp_path / "model"),
           str(sample / "sample-ud-dev.conllu"), str(out), "--test", str(sample / "sample-ud-test.conllu"),
           "--plot", str(png)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    written = json.loads(out.read_text())
    assert written["plot"] == str(png) and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for split in ("dev", "test"):
        for kind in ("written", "uncalibrated"):
            entry = written[split][kind]
            assert entry["words"] > 0 and 0.0 <= entry["ece"] <= 1.0
            assert len(entry["bins"]) == 10 and sum(b["words"] for b in entry["bins"]) == entry["words"]
