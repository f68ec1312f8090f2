"""scripts/train.py's step budget: a learn-rate schedule that spans the config's run keeps spanning
it when --max-steps (or a resume) changes the budget, as ``${training.max_steps}`` did."""
import sys
from pathlib import Path

from spacy.util import load_config

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import train as train_script  # noqa: E402

CONFIG = """
[training]
max_steps = 400
max_epochs = 0

[training.optimizer]
@optimizers = "Adam.v1"

[training.optimizer.learn_rate]
@schedules = "warmup_linear.v1"
warmup_steps = 10
total_steps = {total}
initial_rate = 0.001
"""


def overrides_for(tmp_path, total, steps):
    path = tmp_path / "train.cfg"
    path.write_text(CONFIG.format(total=total))
    args = train_script.step_overrides(train_script._training_settings(path), steps)
    return path, {args[i][2:]: int(args[i + 1]) for i in range(0, len(args), 2)}


def test_schedule_spanning_the_run_follows_the_budget(tmp_path):
    for total in ("400", "${training.max_steps}"):
        path, overrides = overrides_for(tmp_path, total, 150)
        training = load_config(path, overrides=overrides, interpolate=True)["training"]
        assert training["max_steps"] == training["optimizer"]["learn_rate"]["total_steps"] == 150


def test_schedule_not_spanning_the_run_is_kept(tmp_path):
    _, overrides = overrides_for(tmp_path, "1000", 150)
    assert overrides == {"training.max_steps": 150}
