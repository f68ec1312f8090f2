"""scripts/choose_recipe.py: the recipe whose chosen decoder has the best dev LAS is copied to the
output's model-best; a tie keeps the first; the candidates are left as they were (the workflow's
training steps stay up to date), so a rerun chooses the same."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fake_run(path: Path, las: float, uas: float = 0.5) -> Path:
    """A training directory with a model-best (one marker file) and its decoder choice."""
    (path / "model-best").mkdir(parents=True)
    (path / "model-best" / "which").write_text(path.name)
    scores = {"eisner": {"dep_las": las - 0.01, "dep_uas": uas}, "hill_climb": {"dep_las": las, "dep_uas": uas}}
    (path / "decoder_choice.json").write_text(json.dumps({"chosen": "hill_climb", "per_decoder": scores}))
    return path


def choose(output: Path, *runs: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "choose_recipe.py"), str(output), *map(str, runs)],
                          capture_output=True, text=True, cwd=ROOT)


def snapshot(run: Path) -> dict:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def test_the_better_recipe_is_shipped_and_the_candidates_are_untouched(tmp_path):
    first = fake_run(tmp_path / "hc_parser_projective", 0.70)
    other = fake_run(tmp_path / "hc_parser_nonprojective", 0.71)
    before = {run: snapshot(run) for run in (first, other)}
    output = tmp_path / "hc_parser"
    assert choose(output, first, other).returncode == 0
    assert (output / "model-best" / "which").read_text() == "hc_parser_nonprojective"
    choice = json.loads((output / "recipe_choice.json").read_text())
    assert choice["chosen"] == str(other) and choice["decoder"] == "hill_climb"
    assert choice["models"] == {str(first): str(first / "model-best"), str(other): str(other / "model-best")}
    assert {run: snapshot(run) for run in (first, other)} == before
    # A rerun (the workflow run again after a later step failed) replaces the shipped copy with the same choice.
    (output / "model-best" / "stale").write_text("from an earlier run")
    assert choose(output, first, other).returncode == 0
    assert snapshot(output / "model-best") == snapshot(other / "model-best")


def test_a_tie_keeps_the_first_recipe(tmp_path):
    first = fake_run(tmp_path / "hc_parser_projective", 0.70)
    other = fake_run(tmp_path / "hc_parser_nonprojective", 0.70)
    assert choose(tmp_path / "hc_parser", first, other).returncode == 0
    assert (tmp_path / "hc_parser" / "model-best" / "which").read_text() == "hc_parser_projective"


def test_a_run_without_its_decoder_choice_stops(tmp_path):
    first = fake_run(tmp_path / "hc_parser_projective", 0.70)
    (tmp_path / "other" / "model-best").mkdir(parents=True)
    assert choose(tmp_path / "hc_parser", first, tmp_path / "other").returncode == 1
    assert not (tmp_path / "hc_parser" / "model-best").exists()


def test_the_output_is_not_a_candidate(tmp_path):
    first = fake_run(tmp_path / "hc_parser", 0.70)
    assert choose(first, first).returncode == 1
    assert (first / "model-best" / "which").read_text() == "hc_parser"
