"""scripts/choose_recipe.py: the recipe whose chosen decoder has the best dev LAS becomes the first
training directory's model-best; a tie keeps the first; a rerun keeps the choice."""
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


def choose(*runs: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "choose_recipe.py"), *map(str, runs)],
                          capture_output=True, text=True, cwd=ROOT)


def test_a_better_recipe_replaces_the_first_ones_model(tmp_path):
    first, other = fake_run(tmp_path / "hc_parser", 0.70), fake_run(tmp_path / "hc_parser_nonprojective", 0.71)
    assert choose(first, other).returncode == 0
    assert (first / "model-best" / "which").read_text() == "hc_parser_nonprojective"
    assert (first / "model-best-hc_parser" / "which").read_text() == "hc_parser"
    choice = json.loads((first / "recipe_choice.json").read_text())
    assert choice["chosen"] == str(other)
    assert choice["models"] == {str(first): str(first / "model-best-hc_parser"), str(other): str(other / "model-best")}
    assert choose(first, other).returncode == 0  # a rerun keeps the swap, and does not swap back
    assert (first / "model-best" / "which").read_text() == "hc_parser_nonprojective"


def test_a_tie_keeps_the_first_recipe(tmp_path):
    first, other = fake_run(tmp_path / "hc_parser", 0.70), fake_run(tmp_path / "hc_parser_nonprojective", 0.70)
    assert choose(first, other).returncode == 0
    assert (first / "model-best" / "which").read_text() == "hc_parser"
    assert not (first / "model-best-hc_parser").exists()


def test_a_run_without_its_decoder_choice_stops(tmp_path):
    first = fake_run(tmp_path / "hc_parser", 0.70)
    (tmp_path / "other" / "model-best").mkdir(parents=True)
    assert choose(first, tmp_path / "other").returncode == 1
