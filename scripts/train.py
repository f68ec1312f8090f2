"""Train one parser with ``spacy train`` on a run's corpus, following its progress.

    python scripts/train.py FACTORY CONFIG OUTPUT --corpus corpus/RUN --lang en [--max-steps N]
        [--eval-frequency N] [--resume] [-- extra spacy train overrides]

Progress: the run's config is trained with its logger wrapped in ``spacy_hcparse.JsonlLogger.v1``
(``OUTPUT/train.cfg``), which writes one flushed JSON line per evaluation to ``OUTPUT/log.jsonl``;
each evaluation's ``model-last`` is also copied, by renames only, to ``OUTPUT/checkpoint-last`` (the
logger's ``checkpoint``), whose ``checkpoint.json`` names its epoch and step: spaCy rewrites
``model-last`` in place, so a run killed while saving leaves it half written, but the copy is always
complete. ``OUTPUT/progress.json`` follows the run (epoch and step, for people and tools).
``--resume`` continues a run that was stopped half way: the last checkpoint becomes
``OUTPUT/resume-checkpoint`` (with its step counted from the start of the first run), the
pipeline's components are sourced from it (``[components.NAME] source = ...``, which keeps the
weights and labels and calls ``resume_training``), and the run gets the remaining steps
(``--max-steps``, when given, is the total including the steps already done) or epochs. The
optimizer's moments, the learning-rate schedule and the order of the training batches start over;
the weights do not. The previous ``model-best`` is kept unless the resumed run beats it. A
finished run deletes its checkpoints (``model-last`` is the same model).

A missing config file or a factory no installed package registers is an error (exit status 1):
a broken install must not look like a finished run. ``--max-steps`` and ``--eval-frequency``
override the config when positive. A learn-rate schedule that spans the
config's whole run (``[training.optimizer.learn_rate] total_steps`` equal to ``training.max_steps``)
keeps spanning it: the step overrides set both. (The configs repeat the number rather than write
``total_steps = ${training.max_steps}``, which spaCy cannot resolve where it builds the optimizer
from the uninterpolated config: ``nlp.initialize()`` without an optimizer, ``spacy debug data``.)
"""
import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

from wasabi import msg

from spacy_hcparse.loggers import STEP_FILE, complete_checkpoint, save_checkpoint

PROGRESS = "progress.json"
CHECKPOINT = "resume-checkpoint"
SNAPSHOT = "checkpoint-last"
PREVIOUS_BEST = "model-best-before-resume"
LOG = "log.jsonl"


def factory_available(name: str) -> bool:
    """Whether ``name`` is a registered spaCy factory (entry points included)."""
    import spacy
    from spacy.language import Language

    spacy.blank("xx")  # loads the factories registered through entry points
    return Language.has_factory(name)


def main() -> None:
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("factory")
    parser.add_argument("config", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--lang", required=True)
    parser.add_argument("--max-steps", type=int, default=0)
    parser.add_argument("--eval-frequency", type=int, default=0)
    parser.add_argument("--resume", action="store_true", help="continue a stopped run from its last checkpoint")
    args = parser.parse_args(argv)
    if not args.config.exists():
        msg.fail(f"config {args.config} does not exist", exits=1)
    if not factory_available(args.factory):
        msg.fail(f"no installed package registers the spaCy factory '{args.factory}': is spacy-hcparse "
                 f"installed in this environment (pip install -e .)?", exits=1)
    training = _training_settings(args.config)
    target_steps = args.max_steps if args.max_steps > 0 else training["max_steps"]
    config, offset = args.config, {"epoch": 0, "step": 0}
    overrides = []
    if args.resume:
        plan = plan_resume(args.output, args.config, target_steps, training)
        if plan is None:
            return
        config, offset, overrides = plan
        extra = _without_component_overrides(extra)
    else:
        _warn_if_stopped(args.output)
        if args.max_steps > 0:
            overrides += step_overrides(training, args.max_steps)
        (args.output / LOG).unlink(missing_ok=True)
        _remove_checkpoints(args.output)
    args.output.mkdir(parents=True, exist_ok=True)
    config = logged_config(config, args.output)
    cmd = [
        sys.executable, "-m", "spacy", "train", str(config), "--output", str(args.output),
        "--paths.train", str(args.corpus / "train.spacy"), "--paths.dev", str(args.corpus / "dev.spacy"),
        "--nlp.lang", args.lang, *overrides,
    ]
    if args.eval_frequency > 0:
        cmd += ["--training.eval_frequency", str(args.eval_frequency)]
    cmd += extra
    msg.info(" ".join(cmd))
    progress = {"factory": args.factory, "config": str(args.config), "max_steps": target_steps,
                "epoch": offset["epoch"], "step": offset["step"], "offset": offset, "finished": False,
                "resumed": _read_progress(args.output).get("resumed", 0) + 1 if args.resume else 0}
    _write_progress(args.output, progress)
    code = run_logged(cmd, args.output, progress, offset)
    if code == 0:
        _best_of_last(args.output, args.corpus / "dev.spacy", training)
        if args.resume:
            _keep_better_best(args.output, training["score_weights"])
        progress["finished"] = True
        _write_progress(args.output, progress)
        _remove_checkpoints(args.output)
    sys.exit(code)


# ----- progress and resuming ---------------------------------------------------------------
def run_logged(cmd, output: Path, progress: Dict, offset: Dict) -> int:
    """Run ``spacy train``, passing its output through, and record each checkpoint's epoch and
    step (offset by the steps done before a resume) in ``OUTPUT/progress.json``, from the rows
    the JSON-lines logger appends to ``OUTPUT/log.jsonl``."""
    log = output / LOG
    seen = log.stat().st_size if log.exists() else 0
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        rows, seen = read_new_rows(log, seen)
        if rows:  # the logger writes a row before its console line
            progress["epoch"] = offset["epoch"] + int(rows[-1]["epoch"])
            progress["step"] = offset["step"] + int(rows[-1]["step"])
            _write_progress(output, progress)
    return proc.wait()


def read_new_rows(log: Path, seen: int):
    """The complete JSON lines written to ``log`` after byte ``seen``, and the new offset."""
    if not log.exists():
        return [], seen
    with log.open("rb") as handle:
        handle.seek(seen)
        data = handle.read()
    complete = data[: data.rfind(b"\n") + 1]
    rows = [json.loads(line) for line in complete.decode("utf8").splitlines() if line.strip()]
    return rows, seen + len(complete)


def logged_config(config: Path, output: Path) -> Path:
    """``config`` with its training logger wrapped in ``spacy_hcparse.JsonlLogger.v1`` writing to
    ``OUTPUT/log.jsonl``, saved as ``OUTPUT/train.cfg`` (the config spaCy trains)."""
    from thinc.api import Config

    cfg = Config().from_disk(config, interpolate=False)
    inner = dict(cfg["training"].get("logger") or {"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": False})
    if inner.get("@loggers") == "spacy_hcparse.JsonlLogger.v1":
        inner = inner.get("logger") or {"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": False}
    cfg["training"]["logger"] = {"@loggers": "spacy_hcparse.JsonlLogger.v1", "path": str(output / LOG),
                                 "logger": inner, "checkpoint": str(output / SNAPSHOT)}
    path = output / "train.cfg"
    path.write_text(cfg.to_str(), encoding="utf8")
    return path


def plan_resume(output: Path, config: Path, target_steps: int, training: Dict):
    """(config to train, epoch/step offset, overrides) for continuing the run in ``output``, or
    None when there is nothing left to do."""
    progress = _read_progress(output)
    if progress.get("finished"):
        msg.good(f"{output}: the run finished at step {progress.get('step')}; nothing to resume")
        return None
    offset = checkpoint_for_resume(output, progress)
    if offset is None:
        msg.fail(f"cannot resume: no complete checkpoint in {output / SNAPSHOT} (or {output / CHECKPOINT})", exits=1)
    if (output / "model-best").exists():
        if (output / PREVIOUS_BEST).exists():
            shutil.rmtree(output / PREVIOUS_BEST)
        shutil.copytree(output / "model-best", output / PREVIOUS_BEST)
    overrides = []
    if target_steps > 0:
        remaining = target_steps - offset["step"]
        if remaining <= 0:
            msg.good(f"{output}: {offset['step']} of {target_steps} steps done; nothing to resume")
            return None
        overrides += step_overrides(training, remaining)
    elif training["max_epochs"] > 0:  # the interrupted epoch is run again
        overrides += ["--training.max_epochs", str(max(1, training["max_epochs"] - offset["epoch"]))]
    resumed = output / "resume.cfg"
    saved = output / CHECKPOINT
    resumed.write_text(resume_config(config, saved), encoding="utf8")
    msg.info(f"resuming from step {offset['step']} (epoch {offset['epoch']}) with the weights in {saved}")
    return resumed, offset, overrides


def checkpoint_for_resume(output: Path, progress: Dict) -> Optional[Dict[str, int]]:
    """Make the stopped run's last checkpoint ``OUTPUT/resume-checkpoint`` and return its epoch and
    step counted from the start of the first run; None when there is none.

    The logger's checkpoint counts from the start of the run that wrote it (``progress['offset']``);
    ``resume-checkpoint`` keeps the count from the first run in its ``checkpoint.json``, so a resumed
    run stopped before its first evaluation resumes from it again. Each step here can be repeated
    after a kill at any point.
    """
    snapshot, saved = complete_checkpoint(output / SNAPSHOT), output / CHECKPOINT
    if snapshot is not None:
        local, base = _checkpoint_step(snapshot), progress.get("offset", {"epoch": 0, "step": 0})
        save_checkpoint(snapshot, saved, base["epoch"] + local["epoch"], base["step"] + local["step"])
        for path in (output / SNAPSHOT, output / (SNAPSHOT + ".old")):
            shutil.rmtree(path, ignore_errors=True)
    found = complete_checkpoint(saved)
    if found is None:
        return None
    if found != saved:  # a kill came between the renames of save_checkpoint
        found.rename(saved)
    return _checkpoint_step(saved)


def _checkpoint_step(path: Path) -> Dict[str, int]:
    found = json.loads((path / STEP_FILE).read_text())
    return {"epoch": int(found["epoch"]), "step": int(found["step"])}


def _remove_checkpoints(output: Path) -> None:
    for name in (SNAPSHOT, CHECKPOINT):
        for suffix in ("", ".old", ".tmp"):
            shutil.rmtree(output / (name + suffix), ignore_errors=True)


def step_overrides(training: Dict, steps: int) -> List[str]:
    """``spacy train`` overrides for a budget of ``steps``: ``training.max_steps``, and the
    learn-rate schedule's ``total_steps`` too when it spans the config's whole run."""
    overrides = ["--training.max_steps", str(steps)]
    if training["schedule_spans_run"]:
        overrides += ["--training.optimizer.learn_rate.total_steps", str(steps)]
    return overrides


def resume_config(config: Path, checkpoint: Path) -> str:
    """``config`` with every pipeline component sourced from ``checkpoint``."""
    from thinc.api import Config

    cfg = Config().from_disk(config, interpolate=False)
    for name in cfg["nlp"]["pipeline"]:
        cfg["components"][name] = {"source": str(checkpoint.resolve()), "component": name}
    return cfg.to_str()


def _without_component_overrides(extra):
    """Drop ``--components.X... VALUE`` overrides: a sourced component keeps the settings it was
    saved with (its weights fix them)."""
    out, skip = [], False
    for i, item in enumerate(extra):
        if skip:
            skip = False
            continue
        if item.startswith("--components."):
            msg.info(f"resume: ignoring {item} (the checkpoint's component keeps its own settings)")
            skip = "=" not in item
            continue
        out.append(item)
    return out


def checkpoint_score(model: Path, weights: Dict[str, Optional[float]]) -> float:
    """The weighted score spaCy selects ``model-best`` by, from the checkpoint's meta.json."""
    performance = json.loads((model / "meta.json").read_text()).get("performance", {})
    return sum(float(w) * float(performance.get(k) or 0.0) for k, w in weights.items() if w)


def _best_of_last(output: Path, dev: Path, training: Dict) -> None:
    """Score ``model-last`` on dev and make it ``model-best`` when it is better.

    spaCy evaluates only every ``eval_frequency`` steps, so the steps after the last evaluation
    (all of them, when a small treebank's epochs end before the first evaluation) never compete
    for ``model-best``.
    """
    import spacy
    from spacy.training import Corpus

    last, best = output / "model-last", output / "model-best"
    if not _is_pipeline(last) or not dev.exists():
        return
    nlp = spacy.load(last)
    scores = nlp.evaluate(list(Corpus(dev, gold_preproc=training["gold_preproc"])(nlp)))
    weights = training["score_weights"]
    score = sum(float(w) * float(scores.get(k) or 0.0) for k, w in weights.items() if w)
    if best.exists() and checkpoint_score(best, weights) >= score:
        return
    if best.exists():
        shutil.rmtree(best)
    shutil.copytree(last, best)
    meta = json.loads((best / "meta.json").read_text())
    meta["performance"] = {**meta.get("performance", {}), **{k: v for k, v in scores.items() if isinstance(v, (int, float))}}
    (best / "meta.json").write_text(json.dumps(meta, indent=2))
    msg.info(f"model-last scores {score:.4f} on dev, above the last evaluated checkpoint: it is model-best now")


def _keep_better_best(output: Path, weights) -> None:
    previous, best = output / PREVIOUS_BEST, output / "model-best"
    if not previous.exists():
        return
    if best.exists() and checkpoint_score(best, weights) >= checkpoint_score(previous, weights):
        shutil.rmtree(previous)
        msg.good("the resumed run's model-best is the best so far")
        return
    if best.exists():
        shutil.rmtree(best)
    previous.rename(best)
    msg.info("kept the model-best from before the resume: the resumed run did not beat it")


def _training_settings(config: Path) -> Dict:
    from thinc.api import Config

    cfg = Config().from_disk(config, interpolate=False)
    training = cfg["training"]
    dev = cfg.get("corpora", {}).get("dev", {})
    max_steps = int(training.get("max_steps", 0) or 0)
    learn_rate = training.get("optimizer", {}).get("learn_rate")
    total = learn_rate.get("total_steps") if isinstance(learn_rate, dict) else None
    spans_run = total == "${training.max_steps}" or (max_steps > 0 and str(total) == str(max_steps))
    return {"max_steps": max_steps, "max_epochs": int(training.get("max_epochs", 0) or 0),
            "score_weights": dict(training.get("score_weights", {})),
            "gold_preproc": bool(dev.get("gold_preproc", False)), "schedule_spans_run": spans_run}


def _warn_if_stopped(output: Path) -> None:
    progress = _read_progress(output)
    if progress and not progress.get("finished") and complete_checkpoint(output / SNAPSHOT) is not None:
        msg.warn(f"{output} holds a run stopped at step {progress.get('step')}: starting over "
                 f"(pass --resume to continue it instead)")


def _is_pipeline(path: Path) -> bool:
    return (path / "config.cfg").is_file() and (path / "meta.json").is_file()


def _read_progress(output: Path) -> Dict:
    try:
        return json.loads((output / PROGRESS).read_text())
    except (OSError, ValueError):
        return {}


def _write_progress(output: Path, progress: Dict) -> None:
    tmp = output / (PROGRESS + ".tmp")
    tmp.write_text(json.dumps(progress, indent=1) + "\n")
    tmp.replace(output / PROGRESS)


if __name__ == "__main__":
    main()
