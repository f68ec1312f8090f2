"""A training logger that also writes each evaluation as one flushed JSON line.

``spacy_hcparse.JsonlLogger.v1`` wraps another logger (spaCy's console logger by default): the
console shows spaCy's training table as usual, and ``path`` gets one line per evaluation,
written and flushed at once, so a supervisor (``scripts/train.py``) can follow a run from the
file instead of parsing the console::

    {"epoch": 3, "step": 4500, "score": 0.84, "scores": {"dep_uas": 0.86, ...}, "losses": {...}}

With ``checkpoint`` set, each evaluated ``model-last`` is also copied to that folder before its
line is written, and the copy replaces the previous one by renames, so the folder always holds a
complete pipeline (``checkpoint.json`` inside it gives the run's epoch and step). spaCy rewrites
``model-last`` in place: a run killed while it saves leaves a half-written one, never a
half-written checkpoint. A kill between the two renames leaves the previous copy in
``CHECKPOINT.old`` (see :func:`complete_checkpoint`).
"""
import json
import shutil
from pathlib import Path
from typing import IO, Any, Callable, Dict, Optional, Tuple

from spacy.training.loggers import console_logger
from spacy.util import registry

STEP_FILE = "checkpoint.json"


@registry.loggers("spacy_hcparse.JsonlLogger.v1")
def jsonl_logger(path: str, logger: Optional[Callable] = None, checkpoint: Optional[str] = None) -> Callable:
    """``logger`` (a spaCy logger; default ``spacy.ConsoleLogger.v1``) plus the JSON lines in
    ``path`` (its folder is created; an existing file is appended to), and a copy of each
    evaluated ``model-last`` in ``checkpoint`` when given."""
    inner = logger if logger is not None else console_logger(progress_bar=False)

    def setup(nlp, stdout: IO, stderr: IO) -> Tuple[Callable[[Optional[Dict[str, Any]]], None], Callable[[], None]]:
        log_inner, finalize_inner = inner(nlp, stdout, stderr)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        stream = open(path, "a", encoding="utf8")

        def log_step(info: Optional[Dict[str, Any]]) -> None:
            if info is not None:
                if checkpoint and info.get("output_path"):
                    save_checkpoint(Path(info["output_path"]), Path(checkpoint), info["epoch"], info["step"])
                # the line goes out before the console row, so a supervisor reading the console
                # finds the line when it sees the row
                stream.write(json.dumps(_row(info)) + "\n")
                stream.flush()
            log_inner(info)

        def finalize() -> None:
            finalize_inner()
            stream.close()

        return log_step, finalize

    return setup


def _row(info: Dict[str, Any]) -> Dict[str, Any]:
    scores = {k: v for k, v in info.get("other_scores", {}).items() if isinstance(v, (int, float))}
    return {"epoch": info["epoch"], "step": info["step"], "score": float(info["score"]),
            "scores": scores, "losses": {k: float(v) for k, v in info["losses"].items()},
            "words": info.get("words"), "seconds": info.get("seconds")}


def save_checkpoint(source: Path, target: Path, epoch: int, step: int) -> None:
    """Copy the pipeline in ``source`` to ``target``, replacing it by renames only."""
    tmp, old = target.with_name(target.name + ".tmp"), target.with_name(target.name + ".old")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp)
    (tmp / STEP_FILE).write_text(json.dumps({"epoch": int(epoch), "step": int(step)}))
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def complete_checkpoint(target: Path) -> Optional[Path]:
    """The complete checkpoint :func:`save_checkpoint` left at ``target`` (or in ``target.old``,
    when a kill came between its renames), or None."""
    for path in (target, target.with_name(target.name + ".old")):
        if (path / STEP_FILE).is_file():
            return path
    return None
