"""Evaluate every trained parser of a run on gold tokens and sentences; one JSON per parser.

    python scripts/evaluate.py corpus/RUN training/RUN metrics/RUN [--repeats 3]

Measured with ``spacy_hcparse.evaluation.harness`` (the definitions of every figure are there):
per parser and split (dev and test, or test only when dev was the training set) ``dep_uas``/
``dep_las``, ``ud_uas``/``ud_las`` and the other UD metrics from the CoNLL-U the parser wrote
(``training/RUN/<parser>/output/<split>.conllu``), and words/sec (``--repeats`` runs per parser,
the parsers taking turns run by run, ``harness.interleaved_speeds``); for ``hc_parser`` also every
decoder with the same weights and the search statistics (``harness.search_statistics``).
Writes ``metrics/RUN/<parser>.json``. A parser without a trained model is an error.
"""
import argparse
import json
import platform
import statistics
from pathlib import Path
from typing import Dict

import spacy
from spacy.language import Language
from wasabi import msg

from spacy_hcparse.evaluation import compare_decoders, evaluate_gold, interleaved_speeds

PARSERS = ("hc_parser", "hc_transition_parser", "spacy_parser")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("training", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--parsers", default=",".join(PARSERS))
    args = parser.parse_args()
    data = json.loads((args.corpus / "data.json").read_text())
    args.output.mkdir(parents=True, exist_ok=True)
    models = {name: trained_model(name, args.training / name) for name in args.parsers.split(",")}
    pipelines = {name: spacy.load(model) for name, model in models.items()}
    results = {name: evaluate_parser(name, pipelines[name], models[name], args.corpus, data, args.batch_size)
               for name in models}
    add_speeds(results, pipelines, args.corpus, data, args.repeats, args.batch_size)
    for name, result in results.items():
        path = args.output / f"{name}.json"
        path.write_text(json.dumps(result, indent=2) + "\n")
        msg.good(f"wrote {path}")


def trained_model(name: str, train_dir: Path) -> Path:
    """``train_dir/model-best``; a missing one stops the step with the parser named."""
    model = train_dir / "model-best"
    if not model.exists():
        msg.fail(f"{name}: no trained model at {model}", exits=1)
    return model


def add_speeds(results: Dict[str, Dict], pipelines: Dict[str, Language], corpus: Path, data: Dict, repeats: int,
               batch_size: int) -> None:
    """Per split, every parser's words/sec from runs taken in turns (median, and the runs)."""
    for result in results.values():
        result["repeats"] = repeats
    for split in data["eval_splits"]:
        msg.info(f"words/sec on {split}: {repeats} runs per parser, in turns")
        speeds = interleaved_speeds(pipelines, corpus / f"{split}.conllu", repeats=repeats, batch_size=batch_size)
        for name, runs in speeds.items():
            scores = results[name]["splits"][split]
            scores["words_per_sec"], scores["words_per_sec_runs"] = statistics.median(runs), runs
            msg.text(f"  {name}: {scores['words_per_sec']:,.0f} words/s")


def evaluate_parser(name: str, nlp: Language, model: Path, corpus: Path, data: Dict, batch_size: int) -> Dict:
    """Scores of one parser (``nlp``, loaded from ``model``) per split (words/sec from one run;
    ``add_speeds`` replaces them)."""
    result = {"parser": name, "treebank": data["treebank"], "data_source": data["source"], "train_on": data["train_on"]}
    result.update({"model": str(model), "pipeline": nlp.pipe_names, "machine": platform.processor() or platform.machine(),
                   "splits": {}})
    out_dir = model.parent / "output"
    out_dir.mkdir(exist_ok=True)
    for split in data["eval_splits"]:
        gold_path = corpus / f"{split}.conllu"
        msg.info(f"{name} on {split}")
        scores, _ = evaluate_gold(nlp, gold_path, out_dir / f"{split}.conllu", repeats=1, batch_size=batch_size,
                                  progress=f"{name}/{split}")
        if "hc_parser" in nlp.pipe_names:
            scores["search"] = compare_decoders(model, gold_path, out_dir, batch_size=batch_size, progress=True)
            scores["search"]["default_decoder"] = type(nlp.get_pipe("hc_parser").decoder).__name__
        result["splits"][split] = scores
        msg.text(f"  {split}: dep_uas {_pct(scores['dep_uas'])} dep_las {_pct(scores['dep_las'])} "
                 f"ud_uas {_pct(scores['ud_uas'])} ud_las {_pct(scores['ud_las'])} {scores['words_per_sec']:.0f} words/s")
    return result


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


if __name__ == "__main__":
    main()
