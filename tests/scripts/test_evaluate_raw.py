"""scripts/evaluate_raw.py on the sample treebank with three untrained stand-in pipelines (spaCy's
tokenizer and sentencizer, no parse): raw_text.json holds the CoNLL 2018 scores of each, per split,
with the speed ratio to the peer; and the report's raw-text table reads it."""
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory):
    """corpus/RUN (dev and test of the sample, data.json) and training/RUN with the three pipelines."""
    root = tmp_path_factory.mktemp("raw")
    corpus, training = root / "corpus", root / "training"
    corpus.mkdir()
    for split in ("dev", "test"):
        shutil.copy(SAMPLE / f"sample-ud-{split}.conllu", corpus / f"{split}.conllu")
    (corpus / "data.json").write_text(json.dumps({"treebank": "UD_Sample", "source": "sample", "train_on": "train",
                                                  "eval_splits": ["dev", "test"]}))
    for name in ("hc_pipeline", "hc_pipeline_ud", "hc_parser", "spacy_pipeline"):  # evaluate_raw.py's default list
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        (training / name).mkdir(parents=True)
        nlp.to_disk(training / name / "model-best")
    return root


@pytest.fixture(scope="module")
def raw_metrics(run_dirs):
    cmd = [sys.executable, str(ROOT / "scripts" / "evaluate_raw.py"), "corpus", "training", "metrics",
           "--group", "4", "--repeats", "1"]
    result = subprocess.run(cmd, cwd=run_dirs, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((run_dirs / "metrics" / "raw_text.json").read_text())


def test_raw_text_json_has_conll18_scores_per_pipeline_and_split(raw_metrics, run_dirs):
    assert raw_metrics["group"] == 4 and raw_metrics["data_source"] == "sample"
    assert raw_metrics["splits"]["test"] == {"sentences": 12, "words": raw_metrics["splits"]["test"]["words"],
                                             "documents": 3, "texts_rebuilt": 0}
    assert set(raw_metrics["pipelines"]) == {"hc_pipeline", "hc_pipeline_ud", "hc_parser", "spacy_pipeline"}
    for entry in raw_metrics["pipelines"].values():
        assert entry["pipeline"] == ["sentencizer"]
        for split in ("dev", "test"):
            s = entry["splits"][split]
            assert s["scores"]["Tokens"]["f1"] > 0.95  # spaCy's tokenizer on the sample's text: nearly its gold tokens
            assert s["scores"]["Sentences"]["f1"] > 0.9
            assert 0.0 <= s["scores"]["LAS"]["f1"] <= s["scores"]["UAS"]["f1"] <= 1.0
            assert s["words_per_sec"] > 0 and s["ratio_to_spacy"] > 0
            assert (run_dirs / "training" / Path(entry["model"]).parent.name / "output" / f"{split}.raw.conllu").exists()
    peer = raw_metrics["pipelines"]["spacy_pipeline"]["splits"]["test"]
    assert peer["ratio_to_spacy"] == pytest.approx(1.0)


def test_a_missing_pipeline_is_an_error(run_dirs):
    cmd = [sys.executable, str(ROOT / "scripts" / "evaluate_raw.py"), "corpus", "training", "metrics-missing",
           "--pipelines", "hc_pipeline,nothing_here", "--repeats", "1"]
    result = subprocess.run(cmd, cwd=run_dirs, capture_output=True, text=True)
    assert result.returncode == 1 and "nothing_here: no trained pipeline" in result.stdout + result.stderr
    assert not (run_dirs / "metrics-missing" / "raw_text.json").exists()


def test_speeds_are_medians_and_ratios_pair_rounds():
    module = load_script("evaluate_raw")
    pipelines = {name: {"splits": {"test": {}}} for name in ("hc_pipeline", "spacy_pipeline")}
    module.add_speeds(pipelines, "test", {"hc_pipeline": [2.0, 9.0, 4.0], "spacy_pipeline": [1.0, 10.0, 2.0]})
    hc = pipelines["hc_pipeline"]["splits"]["test"]
    assert hc["words_per_sec"] == 4.0 and hc["words_per_sec_runs"] == [2.0, 9.0, 4.0]
    assert hc["ratio_to_spacy"] == 2.0  # the median of 2.0, 0.9 and 2.0: a slow round slows both sides


def test_ratio_without_the_peer_is_none():
    module = load_script("evaluate_raw")
    pipelines = {"hc_pipeline": {"splits": {"test": {}}}}
    module.add_speeds(pipelines, "test", {"hc_pipeline": [10.0]})
    assert pipelines["hc_pipeline"]["splits"]["test"]["ratio_to_spacy"] is None


def test_report_puts_the_raw_table_beside_the_gold_table(raw_metrics):
    report = load_script("report")
    gold = {"parser": "spacy_parser", "splits": {split: {
        "ud_uas": 0.8, "ud_las": 0.7, "dep_uas": 0.8, "dep_las": 0.7, "exact_las": 0.1, "words_per_sec": 1000.0,
        "nonprojective": {"precision": None, "recall": None, "gold_arcs": 0}} for split in ("dev", "test")}}
    text = report.render("UD_Sample", [gold], {}, None, "x.png", raw_metrics)
    test = text[text.index("## test"): text.index("## dev")]
    assert test.index("Gold tokens and sentences:") < test.index("| spacy_parser |") < test.index(
        "Raw text (CoNLL 2018 F1):") < test.index("| hc_pipeline |")
    header = next(line for line in test.splitlines() if line.startswith("| pipeline |"))
    assert header == "| pipeline | Tokens | Sentences | Words | UPOS | UAS | LAS | CLAS | words/sec | ratio to spaCy |"
    assert "documents of 4 sentences" in text
    row = next(line for line in test.splitlines() if line.startswith("| hc_pipeline |"))
    tokens_f1 = raw_metrics["pipelines"]["hc_pipeline"]["splits"]["test"]["scores"]["Tokens"]["f1"]
    assert row.split(" | ")[1] == f"{100 * tokens_f1:.2f}"
    assert "Raw text" not in report.render("UD_Sample", [gold], {}, None, "x.png", None)
    with_flat = report.render("UD_Sample", [gold], {}, None, "x.png", raw_metrics, raw_metrics)
    assert "Raw text without line breaks" in with_flat


def test_flat_text_goes_to_its_own_file(run_dirs):
    cmd = [sys.executable, str(ROOT / "scripts" / "evaluate_raw.py"), "corpus", "training", "metrics-flat",
           "--group", "4", "--repeats", "1", "--flat", "--pipelines", "hc_parser,spacy_pipeline"]
    result = subprocess.run(cmd, cwd=run_dirs, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    flat = json.loads((run_dirs / "metrics-flat" / "raw_text_flat.json").read_text())
    assert flat["paragraphs"] == "space" and not (run_dirs / "metrics-flat" / "raw_text.json").exists()
    assert (run_dirs / "training" / "hc_parser" / "output" / "test.raw_flat.conllu").exists()
