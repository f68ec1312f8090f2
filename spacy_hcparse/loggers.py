"""A training logger that also writes each evaluation as one flushed JSON line.

``spacy_hcparse.JsonlLogger.v1`` wraps another logger (spaCy's console logger by default): the
console shows spaCy's training table as usual, and ``path`` gets one line per evaluation,
written and flushed at once, so a supervisor (``scripts/train.py``) can follow a run from the
file instead of parsing the console::

    {"epoch": 3, "step": 4500, "score": 0.84, "scores": {"dep_uas": 0.86, ...}, "losses": {...}}
"""
import json
from pathlib import Path
from typing import IO, Any, Callable, Dict, Optional, Tuple

from spacy.training.loggers import console_logger
from spacy.util import registry


@registry.loggers("spacy_hcparse.JsonlLogger.v1")
def jsonl_logger(path: str, logger: Optional[Callable] = None) -> Callable:
    """``logger`` (a spaCy logger; default ``spacy.ConsoleLogger.v1``) plus the JSON lines in
    ``path`` (its folder is created; an existing file is appended to)."""
    inner = logger if logger is not None else console_logger(progress_bar=False)

    def setup(nlp, stdout: IO, stderr: IO) -> Tuple[Callable[[Optional[Dict[str, Any]]], None], Callable[[], None]]:
        log_inner, finalize_inner = inner(nlp, stdout, stderr)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        stream = open(path, "a", encoding="utf8")

        def log_step(info: Optional[Dict[str, Any]]) -> None:
            log_inner(info)
            if info is None:
                return
            scores = {k: v for k, v in info.get("other_scores", {}).items() if isinstance(v, (int, float))}
            row = {"epoch": info["epoch"], "step": info["step"], "score": float(info["score"]),
                   "scores": scores, "losses": {k: float(v) for k, v in info["losses"].items()},
                   "words": info.get("words"), "seconds": info.get("seconds")}
            stream.write(json.dumps(row) + "\n")
            stream.flush()

        def finalize() -> None:
            finalize_inner()
            stream.close()

        return log_step, finalize

    return setup
