"""Choose hc_parser's training recipe on held-out dev: the shipped run keeps the best one.

    python scripts/choose_recipe.py training/RUN/hc_parser training/RUN/hc_parser_nonprojective [...]

Each argument is a training directory whose ``model-best`` has had its decoder chosen on dev
(``scripts/choose_decoder.py``: ``decoder_choice.json`` beside it). The recipe whose chosen
decoder has the best dev LAS (then UAS; a tie keeps the earlier argument, so the first recipe
stays unless another one gains) becomes the first directory's ``model-best``, which the later
steps evaluate, report and package; the first recipe's own model moves to
``model-best-<its directory name>``. Every candidate's scores, and where its model now is
(``models``), go to the first directory's ``recipe_choice.json``. A rerun after a swap keeps the
choice (the first directory's model is no longer its own recipe's).
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
    parser.add_argument("runs", type=Path, nargs="+")
    args = parser.parse_args()
    first = args.runs[0]
    previous = json.loads((first / OUT).read_text()) if (first / OUT).exists() else None
    if previous is not None and previous["chosen"] != str(first):
        msg.info(f"{first}: recipe already chosen ({previous['chosen']}), kept")
        return
    candidates = {}
    for run in args.runs:
        path = run / CHOICE
        if not path.exists() or not (run / "model-best").exists():
            msg.fail(f"{run}: no model-best with its {CHOICE} (run scripts/choose_decoder.py first)", exits=1)
        choice = json.loads(path.read_text())
        scores = choice["per_decoder"][choice["chosen"]]
        candidates[str(run)] = {"decoder": choice["chosen"], "dep_las": scores["dep_las"], "dep_uas": scores["dep_uas"]}
    order = list(candidates)
    best = max(order, key=lambda r: (round(candidates[r]["dep_las"], 6), round(candidates[r]["dep_uas"], 6),
                                     -order.index(r)))
    for run, c in candidates.items():
        marker = "  <- chosen" if run == best else ""
        msg.text(f"{run}: {c['decoder']} dev UAS {100 * c['dep_uas']:.2f} LAS {100 * c['dep_las']:.2f}{marker}")
    models = {run: str(Path(run) / "model-best") for run in candidates}
    if best != str(first):
        kept = first / f"model-best-{first.name}"
        if kept.exists():
            shutil.rmtree(kept)
        (first / "model-best").rename(kept)
        shutil.copytree(Path(best) / "model-best", first / "model-best")
        models[str(first)] = str(kept)
    (first / OUT).write_text(json.dumps({"chosen": best, "candidates": candidates, "models": models}, indent=2) + "\n")
    msg.good(f"{first}/model-best is the recipe of {best} with {candidates[best]['decoder']}")


if __name__ == "__main__":
    main()
