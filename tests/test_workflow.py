"""`spacy project run smoke` end to end in a copy of the project, on the sample treebank (slow)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import srsly
from weasel.util.config import load_project_config

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from run_treebanks import PARSERS, PROFILES, is_done  # noqa: E402


def project():
    return srsly.read_yaml(ROOT / "project.yml")


def test_workflows_name_defined_commands_and_profiles_set_known_vars():
    config = project()
    commands = {c["name"] for c in config["commands"]}
    for name, steps in config["workflows"].items():
        assert set(steps) <= commands, (name, set(steps) - commands)
    for name, profile in PROFILES.items():
        assert set(profile) <= set(config["vars"]), (name, set(profile) - set(config["vars"]))
        for key, value in profile.items():
            if key.endswith("_config"):
                assert (ROOT / value).is_file(), (name, key, value)


def test_committed_metrics_without_their_corpus_are_trained_again(tmp_path, monkeypatch):
    """A checkout holds metrics/RUN and reports/RUN.md from another machine's run but never corpus/
    (git-ignored), which the summary reads: the multilingual run must train such a treebank, not
    reuse it and then fail on the missing corpus."""
    monkeypatch.chdir(tmp_path)
    run = "UD_Danish-DDT"
    (tmp_path / "metrics" / run).mkdir(parents=True)
    for parser in PARSERS:
        (tmp_path / "metrics" / run / f"{parser}.json").write_text("{}")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / f"{run}.md").write_text("# old run\n")
    assert not is_done(run)
    (tmp_path / "corpus" / run).mkdir(parents=True)
    (tmp_path / "corpus" / run / "data.json").write_text("{}")
    assert not is_done(run)  # a run from before the workflow trained the UD tokenizer: no raw-text scores
    (tmp_path / "metrics" / run / "raw_text.json").write_text("{}")
    assert is_done(run)


def test_only_a_treebank_not_in_the_mirror_stops(tmp_path):
    """A misspelled --only trains nothing and must say so, not rewrite reports/multilingual.md."""
    mirror = tmp_path / "mirror" / "UD_Danish-DDT"
    mirror.mkdir(parents=True)
    (mirror / "da_ddt-ud-test.conllu").write_text("")
    env = {**os.environ, "HCPARSE_UD_DIR": str(tmp_path / "mirror")}
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "run_treebanks.py"), "multilingual", "--only",
                             "UD_Danish_DDT"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 1 and "UD_Danish-DDT" in result.stdout + result.stderr
    assert not (tmp_path / "reports").exists()


def test_all_trains_evaluates_and_packages_the_raw_text_pipelines():
    config = project()
    steps = config["workflows"]["all"]
    order = ["train-pipeline", "train-spacy-pipeline", "evaluate-raw", "report", "package"]
    assert all(s in steps for s in order) and [steps.index(s) for s in order] == sorted(steps.index(s) for s in order)
    commands = {c["name"]: c for c in config["commands"]}
    assert "${vars.pipeline_config}" in commands["train-pipeline"]["script"][0]
    assert "${vars.spacy_pipeline_config}" in commands["train-spacy-pipeline"]["script"][0]
    assert commands["evaluate-raw"]["outputs"] == ["metrics/${vars.run}/raw_text.json",
                                                   "metrics/${vars.run}/raw_text_flat.json"]
    assert "training/${vars.run}/hc_parser/model-best" in commands["evaluate-raw"]["deps"]
    assert config["vars"]["package_model"] == "hc_pipeline_ud"
    assert config["vars"]["package_path"] == "training/${vars.run}/${vars.package_model}/model-best"
    assert commands["package"]["deps"][0] == "${vars.package_path}"
    # The `treebank` workflow (multilingual) trains no pipeline, so nothing it runs may depend on one.
    for step in config["workflows"]["treebank"]:
        assert not any("pipeline/" in d for d in commands[step].get("deps", [])), step


def test_the_tokenizer_trains_first_and_ships_with_the_pipelines():
    """train-tokenizer runs on the run's corpus before any pipeline trains; the shipped pipeline
    (hc_pipeline_ud, hc_parser_ud in the treebank workflow) is saved with it before raw text is
    scored, with both tokenizers, and before `package`."""
    config = project()
    commands = {c["name"]: c for c in config["commands"]}
    tokenizer = "training/${vars.run}/tokenizer/tokenizer"
    train = commands["train-tokenizer"]
    assert train["script"][0].startswith("python -m spacy_hcparse train-tokenizer corpus/${vars.run}/train.conllu "
                                         "corpus/${vars.run}/dev.conllu training/${vars.run}/tokenizer ")
    assert "--max-epochs ${vars.tokenizer_epochs}" in train["script"][0] and train["outputs"][0] == tokenizer
    assert set(train["deps"]) <= set(commands["convert"]["outputs"])
    for workflow, first, assemble, evaluate in (("all", "train-graph", "assemble-ud-pipeline", "evaluate-raw"),
                                                ("treebank", "train-graph-projective", "assemble-ud-parser",
                                                 "evaluate-raw-parsers")):
        steps = config["workflows"][workflow]
        assert steps.index("convert") < steps.index("train-tokenizer") < steps.index(first), workflow
        assert steps.index("train-tokenizer") < steps.index(assemble) < steps.index(evaluate) < steps.index("report")
        assert tokenizer in commands[assemble]["deps"] and tokenizer in commands[evaluate]["deps"]
        assert all(f"--tokenizer {tokenizer}" in line for line in commands[evaluate]["script"])
        assert [line.endswith("--flat") for line in commands[evaluate]["script"]] == [False, True]
    steps = config["workflows"]["all"]
    assert steps.index("train-tokenizer") < steps.index("train-pipeline") < steps.index("assemble-ud-pipeline")
    assert steps.index("assemble-ud-pipeline") < steps.index("package")
    assert commands["assemble-ud-pipeline"]["outputs"] == ["training/${vars.run}/hc_pipeline_ud/model-best"]
    assert "training/${vars.run}/hc_pipeline_ud/model-best" in commands["evaluate-raw"]["deps"]
    assert commands["assemble-ud-parser"]["outputs"] == ["training/${vars.run}/hc_parser_ud/model-best"]
    assert 0 < PROFILES["smoke"]["tokenizer_epochs"] <= 5  # CI: a few passes
    assert PROFILES["small"]["tokenizer_epochs"] == 0  # the multilingual run: train-tokenizer's own default


def test_treebank_workflow_ships_the_recipe_chosen_on_dev_without_touching_the_candidates():
    """The treebank workflow trains three hc_parser recipes, each in its own directory, and
    choose-recipe copies the winner to training/RUN/hc_parser/model-best, which every later step
    reads. No step writes another step's output: a step whose output changed after it ran is
    retrained by the next `spacy project run` (project.lock), which once made a rerun retrain the
    Eisner recipe over the shipped non-projective model while recipe_choice.json still named the
    latter."""
    config = project()
    commands = {c["name"]: c for c in config["commands"]}
    steps = config["workflows"]["treebank"]
    recipes = ["train-graph-projective", "train-graph-pseudo-projective", "train-graph-nonprojective"]
    shipped = "training/${vars.run}/hc_parser/model-best"
    assert [steps.index(r) for r in recipes] == sorted(steps.index(r) for r in recipes) < [steps.index("choose-recipe")] * 3
    choose = commands["choose-recipe"]
    assert choose["outputs"] == [shipped, "training/${vars.run}/hc_parser/recipe_choice.json"]
    candidates = [commands[r]["outputs"][0] for r in recipes]
    assert set(candidates) <= set(choose["deps"])
    # The first candidate wins ties: the plain Eisner recipe, unless another one gains on dev.
    assert choose["script"][0].split()[2:] == ["training/${vars.run}/hc_parser"] + [c[: -len("/model-best")] for c in candidates]
    assert "projectivize true" in commands["train-graph-pseudo-projective"]["script"][0]
    outputs = [o for step in steps for o in commands[step].get("outputs", [])]
    assert len(outputs) == len(set(outputs)), "two steps of the treebank workflow write the same output"
    later = steps[steps.index("choose-recipe") + 1:]
    assert not any(shipped in commands[s].get("outputs", []) for s in later)
    assert all(shipped in commands[s]["deps"] for s in ("assemble-ud-parser", "evaluate", "analyze"))


def test_no_training_output_holds_what_evaluate_writes():
    """scripts/evaluate.py writes each parser's parses into training/RUN/<parser>/output/: a training
    step whose output is the whole directory sees it changed and trains again on every later
    `spacy project run` (train-transition did, in every run of the treebank workflow)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from evaluate import PARSERS as EVALUATED

    config = project()
    for command in config["commands"]:
        for out in command.get("outputs", []):
            assert out.rstrip("/") not in {f"training/${{vars.run}}/{p}" for p in EVALUATED}, (command["name"], out)


def test_all_measures_hc_parser_calibration_before_the_report():
    config = project()
    steps = config["workflows"]["all"]
    assert steps.index("train-graph") < steps.index("calibration") < steps.index("report")
    command = next(c for c in config["commands"] if c["name"] == "calibration")
    script = command["script"][0]
    assert script.startswith("python scripts/calibrate.py training/${vars.run}/hc_parser/model-best")
    assert "--test corpus/${vars.run}/test.conllu" in script and "--plot reports/${vars.run}-reliability.png" in script
    assert {"scripts/calibrate.py", "training/${vars.run}/hc_parser/model-best"} <= set(command["deps"])
    assert command["outputs"] == ["metrics/${vars.run}/calibration.json", "reports/${vars.run}-reliability.png"]


@pytest.mark.slow
def test_smoke_workflow_on_sample(tmp_path):
    # What a clone holds: the project, and the source the package step builds the wheel from.
    for name in ("project.yml", "setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("scripts", "configs", "assets/sample", "spacy_hcparse"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    env = {k: v for k, v in os.environ.items() if k != "HCPARSE_UD_DIR"}
    env["HCPARSE_OFFLINE"] = "1"
    result = subprocess.run([sys.executable, "-m", "spacy", "project", "run", "smoke"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    run = "UD_English-EWT-smoke"
    for parser in ("hc_parser", "spacy_parser"):
        metrics = json.loads((tmp_path / f"metrics/{run}/{parser}.json").read_text())
        assert metrics["parser"] == parser and metrics["data_source"] == "sample"
        assert 0.0 <= metrics["splits"]["test"]["ud_las"] <= 1.0
    assert "search" in json.loads((tmp_path / f"metrics/{run}/hc_parser.json").read_text())["splits"]["test"]
    raw = json.loads((tmp_path / f"metrics/{run}/raw_text.json").read_text())
    assert raw["group"] == 10 and raw["data_source"] == "sample"
    assert raw["pipelines"]["hc_pipeline"]["pipeline"] == ["tok2vec", "morphologizer", "hc_parser"]
    assert raw["pipelines"]["spacy_pipeline"]["pipeline"] == ["tok2vec", "morphologizer", "parser"]
    assert raw["pipelines"]["hc_parser"]["pipeline"] == ["hc_parser"]
    assert {name: entry["tokenizer"] for name, entry in raw["pipelines"].items()} == {
        "hc_pipeline": "spaCy rules", "hc_pipeline_ud": "UD", "hc_parser": "spaCy rules", "hc_parser_ud": "UD",
        "spacy_pipeline": "spaCy rules", "spacy_pipeline_ud": "UD"}
    assert (tmp_path / f"training/{run}/tokenizer/tokenizer").is_file()
    flat = json.loads((tmp_path / f"metrics/{run}/raw_text_flat.json").read_text())
    assert flat["paragraphs"] == "space" and set(flat["pipelines"]) == set(raw["pipelines"])
    for entry in raw["pipelines"].values():
        test = entry["splits"]["test"]
        assert {"Tokens", "Sentences", "Words", "UPOS", "UAS", "LAS", "CLAS"} <= set(test["scores"])
        assert 0.0 <= test["scores"]["LAS"]["f1"] <= test["scores"]["UAS"]["f1"] <= 1.0
        assert test["words_per_sec"] > 0 and test["ratio_to_spacy"] > 0
    report = (tmp_path / f"reports/{run}.md").read_text()
    assert "SAMPLE DATA, NOT A UD TREEBANK" in report and "| spacy_parser |" in report
    assert "Raw text (CoNLL 2018 F1):" in report and "| hc_pipeline |" in report and "| spacy_pipeline |" in report
    assert "Raw text without line breaks" in report
    assert "## Raw text by tokenizer (test)" in report and f"| {run} | hc_pipeline_ud | UD |" in report
    assert (tmp_path / f"reports/{run}.png").stat().st_size > 1000
    calibration = json.loads((tmp_path / f"metrics/{run}/calibration.json").read_text())
    assert {"written", "uncalibrated"} <= set(calibration["test"]) and {"written", "uncalibrated"} <= set(calibration["dev"])
    assert (tmp_path / f"reports/{run}-reliability.png").stat().st_size > 1000
    assert "## Confidence" in report and f"]({run}-reliability.png)" in report
    check = json.loads((tmp_path / f"packages/{run}/check.json").read_text())
    assert "hc_parser" in check["entry_points"] and check["parse"]
    assert check["pipeline"] == ["tok2vec", "morphologizer", "hc_parser"] and len(check["pos"]) == len(check["parse"])
    assert check["config_tokenizer"] == "spacy_hcparse.UDTokenizer.v1"
    assert check["tokenizer"] == "spacy_hcparse.tokenizer.tokenizer.UDTokenizer"  # spacy.load(package): UD words
    assert not check["system_site_packages"] and check["spacy_hcparse_from_venv"]
    wheels = sorted(p.name for p in (tmp_path / f"packages/{run}/dist").glob("*.whl"))
    assert [w.split("-")[0] for w in wheels] == ["en_hcparse", "spacy_hcparse"]


def test_package_takes_any_trained_pipeline():
    """`--vars.package_path` (the quickstart's model, say) is what `package` depends on and ships."""
    config = load_project_config(ROOT, overrides={"vars.package_path": "training/quickstart/model-best",
                                                  "vars.run": "quickstart"})
    (command,) = [c for c in config["commands"] if c["name"] == "package"]
    assert command["deps"][0] == "training/quickstart/model-best"
    assert command["script"][0].startswith("python scripts/package_check.py training/quickstart/model-best "
                                           "packages/quickstart ")
    default = load_project_config(ROOT)
    (command,) = [c for c in default["commands"] if c["name"] == "package"]
    assert command["deps"][0] == "training/UD_English-EWT/hc_pipeline_ud/model-best"
