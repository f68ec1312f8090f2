"""Choose hc_parser's training recipe on held-out dev and save the winner as the shipped model.

    python scripts/choose_recipe.py OUTPUT RUN [RUN ...]
    e.g. training/R/hc_parser training/R/hc_parser_projective training/R/hc_parser_nonprojective

Each ``RUN`` is a training directory whose ``model-best`` has had its decoder chosen on dev
(``scripts/choose_decoder.py``: ``decoder_choice.json`` beside it); the recipe is named by the
directory. The recipe whose chosen decoder has the best dev LAS (then UAS; a tie keeps the earlier
argument, so list the default recipe first) is copied to ``OUTPUT/model-best``, which the later
steps evaluate, report, assemble and package. Every candidate's scores and its model (``models``)
go to ``OUTPUT/recipe_choice.json``.

The candidates are never modified, so the workflow's steps that trained them stay up to date in
``project.lock`` and a rerun chooses again from the same models with the same result.
"""
import argparse
import json
import shutil
from pathlib import Path

from wasabi import msg

CHOICE = "decoder_choice.json"
OUT = "recipe_choice.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    args = parser.parse_args()
    if args.output.resolve() in {run.resolve() for run in args.runs}:
        msg.fail(f"{args.output}: the output must not be one of the candidates", exits=1)
    candidates = {}
    for run in args.runs:
        path = run / CHOICE
        if not path.exists() or not (run / "model-best").exists():
            msg.fail(f"{run}: no model-best with its {CHOICE} (run scripts/choose_decoder.py first)", exits=1)
        choice = json.loads(path.read_text())
        scores = choice["per_decoder"][choice["chosen"]]
        candidates[str(run)] = {"decoder": choice["chosen"], "dep_las": scores["dep_las"], "dep_uas": scores["dep_uas"]}
    best = choose(candidates)
    for run, c in candidates.items():
        marker = "  <- chosen" if run == best else ""
        msg.text(f"{run}: {c['decoder']} dev UAS {100 * c['dep_uas']:.2f} LAS {100 * c['dep_las']:.2f}{marker}")
    shipped = args.output / "model-best"
    args.output.mkdir(parents=True, exist_ok=True)
    if shipped.exists():
        shutil.rmtree(shipped)
    shutil.copytree(Path(best) / "model-best", shipped)
    models = {run: str(Path(run) / "model-best") for run in candidates}
    (args.output / OUT).write_text(json.dumps({"chosen": best, "decoder": candidates[best]["decoder"],
                                               "candidates": candidates, "models": models}, indent=2) + "\n")
    msg.good(f"{shipped} is the recipe of {best} with {candidates[best]['decoder']}")


def choose(candidates: dict) -> str:
    """The run with the best (dev LAS, dev UAS); ties keep the earlier run."""
    order = list(candidates)
    return max(order, key=lambda r: (round(candidates[r]["dep_las"], 6), round(candidates[r]["dep_uas"], 6),
                                     -order.index(r)))


if __name__ == "__main__":
    main()
