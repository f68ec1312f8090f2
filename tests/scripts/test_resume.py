"""scripts/train.py --resume: a run killed half way continues from its last checkpoint with the
remaining steps, keeping the weights (and the better model-best)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import spacy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import train as train_script  # noqa: E402

from spacy_hcparse.loggers import complete_checkpoint, save_checkpoint  # noqa: E402

SMALL = ["--", "--components.hc_transition_parser.model.n_buckets", "65536",
         "--components.hc_transition_parser.model.tag_buckets", "4096", "--training.max_epochs", "0"]


def env():
    out = {k: v for k, v in os.environ.items() if k != "HCPARSE_UD_DIR"}
    out["HCPARSE_OFFLINE"] = "1"
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("resume")
    shutil.copytree(ROOT / "assets/sample", base / "assets/sample")
    for args in (["fetch_treebank.py", "UD_English-EWT", "en_ewt"], ["convert.py", "assets/ud/UD_English-EWT", "corpus/s"]):
        result = subprocess.run([sys.executable, str(ROOT / "scripts" / args[0]), *args[1:]], cwd=base, env=env(),
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
    return base


def train_cmd(corpus, output, *flags):
    return [sys.executable, str(ROOT / "scripts/train.py"), "hc_transition_parser", str(ROOT / "configs/ewt_transition.cfg"),
            str(output), "--corpus", str(corpus / "corpus/s"), "--lang", "en", "--eval-frequency", "5", *flags, *SMALL]


def test_resume_config_sources_every_component(tmp_path):
    text = train_script.resume_config(ROOT / "configs/ewt_transition.cfg", tmp_path / "ckpt")
    cfg = spacy.util.load_config_from_str(text, interpolate=False)
    assert dict(cfg["components"]["hc_transition_parser"]) == {
        "source": str((tmp_path / "ckpt").resolve()), "component": "hc_transition_parser"}
    assert cfg["training"]["max_epochs"] == 12  # the rest of the config is unchanged


def test_progress_is_read_from_the_json_lines_log(tmp_path):
    log = tmp_path / "log.jsonl"
    assert train_script.read_new_rows(log, 0) == ([], 0)
    log.write_text('{"epoch": 0, "step": 5, "score": 0.5}\n{"epoch": 1, "step": 1')  # the second line is unfinished
    rows, seen = train_script.read_new_rows(log, 0)
    assert [r["step"] for r in rows] == [5] and seen == len(log.read_text().split("\n")[0]) + 1
    with log.open("a") as handle:
        handle.write('0, "score": 0.6}\n')
    rows, _ = train_script.read_new_rows(log, seen)
    assert [r["step"] for r in rows] == [10]


def test_logged_config_wraps_the_configs_logger(tmp_path):
    path = train_script.logged_config(ROOT / "configs/ewt_transition.cfg", tmp_path)
    logger = spacy.util.load_config(path, interpolate=False)["training"]["logger"]
    assert logger["@loggers"] == "spacy_hcparse.JsonlLogger.v1" and logger["path"] == str(tmp_path / "log.jsonl")
    assert logger["logger"]["@loggers"] == "spacy.ConsoleLogger.v1"
    assert logger["checkpoint"] == str(tmp_path / "checkpoint-last")
    again = spacy.util.load_config(train_script.logged_config(path, tmp_path), interpolate=False)["training"]["logger"]
    assert again == logger  # wrapping is not repeated


def fake_pipeline(path: Path, weight: str) -> Path:
    path.mkdir(parents=True)
    (path / "config.cfg").write_text("")
    (path / "meta.json").write_text(json.dumps({"weight": weight}))
    return path


def test_checkpoint_is_replaced_by_renames_only(tmp_path):
    target = tmp_path / "checkpoint-last"
    save_checkpoint(fake_pipeline(tmp_path / "a", "a"), target, 0, 5)
    save_checkpoint(fake_pipeline(tmp_path / "b", "b"), target, 1, 10)
    assert json.loads((target / "checkpoint.json").read_text()) == {"epoch": 1, "step": 10}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "checkpoint-last"]
    target.rename(tmp_path / "checkpoint-last.old")  # a kill between the two renames
    assert complete_checkpoint(target) == tmp_path / "checkpoint-last.old"
    fake_pipeline(tmp_path / "checkpoint-last.tmp", "half written")  # no checkpoint.json: never complete
    assert complete_checkpoint(tmp_path / "nothing") is None


def test_resume_counts_steps_from_the_first_run(tmp_path):
    out = tmp_path / "out"
    save_checkpoint(fake_pipeline(tmp_path / "m", "m"), out / "checkpoint-last", 2, 30)
    progress = {"offset": {"epoch": 1, "step": 100}}
    assert train_script.checkpoint_for_resume(out, progress) == {"epoch": 3, "step": 130}
    assert not (out / "checkpoint-last").exists()
    # a resumed run stopped before its first evaluation resumes from the same checkpoint
    assert train_script.checkpoint_for_resume(out, {"offset": {"epoch": 3, "step": 130}}) == {"epoch": 3, "step": 130}
    (out / "resume-checkpoint").rename(out / "resume-checkpoint.old")
    assert train_script.checkpoint_for_resume(out, {}) == {"epoch": 3, "step": 130}
    assert (out / "resume-checkpoint" / "meta.json").is_file()
    assert train_script.checkpoint_for_resume(tmp_path / "empty", {}) is None


def first_uas(rows) -> float:
    """dep_uas of the first evaluation row of a run's JSON-lines log."""
    return 100 * float(rows[0]["scores"]["dep_uas"])


@pytest.mark.slow  # two `spacy train` subprocesses: about 20 s idle, more on a busy machine
def test_killed_run_resumes_from_last_checkpoint(corpus, tmp_path):
    out = tmp_path / "out"
    log = (tmp_path / "first.log").open("w")
    proc = subprocess.Popen(train_cmd(corpus, out, "--max-steps", "5000"), cwd=corpus, env=env(),
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 240
    progress = {}
    while time.time() < deadline and proc.poll() is None:
        try:
            progress = json.loads((out / "progress.json").read_text())
        except (OSError, ValueError):
            progress = {}
        if progress.get("step", 0) >= 10:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the first run ended before it could be stopped"
    os.killpg(proc.pid, signal.SIGKILL)  # the group this test started: train.py and spacy train
    proc.wait()
    log.close()
    first_rows, seen = train_script.read_new_rows(out / "log.jsonl", 0)
    assert not json.loads((out / "progress.json").read_text())["finished"]
    # the kill may have come while spaCy rewrote model-last; the logger's checkpoint is complete
    checkpoint = complete_checkpoint(out / "checkpoint-last")
    stopped = json.loads((checkpoint / "checkpoint.json").read_text())
    assert stopped["step"] >= 10
    before = spacy.load(checkpoint).get_pipe("hc_transition_parser").model.get_ref("linear").get_param("W").copy()
    assert before.any()
    total = stopped["step"] + 15
    result = subprocess.run(train_cmd(corpus, out, "--max-steps", str(total), "--resume"), cwd=corpus, env=env(),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"resuming from step {stopped['step']}" in result.stdout
    assert "--training.max_steps 15" in result.stdout
    done = json.loads((out / "progress.json").read_text())
    assert done["finished"] and done["resumed"] == 1 and done["step"] >= stopped["step"]
    cfg = spacy.util.load_config(out / "resume.cfg", interpolate=False)
    assert cfg["components"]["hc_transition_parser"]["source"].endswith("resume-checkpoint")
    # the resumed run started from the checkpoint's weights, not from zero: its first evaluation
    # (after one batch) is far above the first run's first evaluation
    assert first_uas(train_script.read_new_rows(out / "log.jsonl", seen)[0]) > first_uas(first_rows) + 10
    nlp = spacy.load(out / "model-best")
    assert len(nlp("The old farmer sold three goats.")) == 7
    assert (out / "model-last").exists() and not (out / "model-best-before-resume").exists()
    assert not (out / "checkpoint-last").exists() and not (out / "resume-checkpoint").exists()  # finished
    # running --resume again has nothing left to do
    again = subprocess.run(train_cmd(corpus, out, "--max-steps", str(total), "--resume"), cwd=corpus, env=env(),
                           capture_output=True, text=True)
    assert again.returncode == 0 and "nothing to resume" in again.stdout + again.stderr


@pytest.mark.slow  # one short `spacy train` subprocess
def test_run_ending_between_evaluations_keeps_its_last_steps(corpus, tmp_path):
    """Steps after the last evaluation still compete for model-best: a run whose epochs end before
    its second evaluation (a small treebank) does not ship the model evaluated at step 0."""
    out = tmp_path / "out"
    cmd = train_cmd(corpus, out, "--max-steps", "40")
    cmd[cmd.index("--eval-frequency") + 1] = "1000"
    result = subprocess.run(cmd, cwd=corpus, env=env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "it is model-best now" in result.stdout
    best = json.loads((out / "model-best" / "meta.json").read_text())["performance"]
    assert best["dep_uas"] > first_uas(train_script.read_new_rows(out / "log.jsonl", 0)[0]) / 100 + 0.1
