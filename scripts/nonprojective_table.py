"""Where trees cross: every recipe and decoder of hc_parser against spaCy's parser on one treebank.

    python scripts/nonprojective_table.py corpus/RUN OUT.json
        [--choice training/RUN/hc_parser/recipe_choice.json] [--recipe NAME=MODEL ...]
        --spacy training/RUN/spacy_parser/model-best [--decoders eisner,mst,hill_climb] [--dual NAME,...]
        [--repeats 3]

Recipes: the models ``scripts/choose_recipe.py`` compared (``--choice``, named by their training
directories) and any ``--recipe``. Per recipe (a trained ``hc_parser``: its loss's decoder, or
pseudo-projective training) and decoder (the same weights loaded with each decoder in the config; a
pseudo-projective recipe, ``projectivize``, only with Eisner; the recipes named in ``--dual``,
default all others, also with dual decomposition), and for spaCy's parser: on held-out dev (the
choice) and on test (the report), UD UAS/LAS, non-projective arc precision/recall
(``evaluation.ud``), exact match (LAS), and words/s; per recipe the search statistics of its
full-objective decoders on test (``harness.search_statistics``: dual decomposition's certified share,
hill climbing's exact share of the proven spans, time caps). The chosen path is the one the workflow
shipped (``--choice``: the recipe ``choose_recipe.py`` kept, with the decoder ``choose_decoder.py``
wrote into it, both by dev LAS without punctuation), else the path with the best dev UD LAS; its
test words/s are measured again in turns with spaCy's parser (``harness.interleaved_speeds``, median
of ``--repeats``).
Writes ``OUT.json`` and prints its Markdown table (``report.crossing_table``).
"""
import argparse
import json
from pathlib import Path
from typing import Dict

import spacy
from wasabi import msg

from spacy_hcparse.conllu import read_conllu
from spacy_hcparse.evaluation import evaluate_gold, interleaved_speeds
from spacy_hcparse.evaluation.harness import DECODERS, search_statistics, span_results
from spacy_hcparse.evaluation.ud import input_doc
from spacy_hcparse.graph.scores import FACTORS

from report import crossing_table

KEYS = ("ud_uas", "ud_las", "exact_las", "words_per_sec")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--choice", type=Path, default=None, help="recipe_choice.json of scripts/choose_recipe.py")
    parser.add_argument("--recipe", action="append", default=[], help="NAME=MODEL (a trained hc_parser pipeline)")
    parser.add_argument("--spacy", type=Path, default=None, help="spaCy's parser (the peer; without it no speed ratio)")
    parser.add_argument("--decoders", default="eisner,mst,hill_climb")
    parser.add_argument("--dual", default=None, help="recipes also decoded by dual decomposition (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    recipes, shipped = {}, None
    if args.choice is not None:
        choice = json.loads(args.choice.read_text())
        recipes.update({Path(run).name: model for run, model in choice["models"].items()})
        shipped = f"{Path(choice['chosen']).name}/{choice['candidates'][choice['chosen']]['decoder']}"
    recipes.update(dict(r.split("=", 1) for r in args.recipe))
    decoders = [d for d in args.decoders.split(",") if d]
    out_dir = args.out.parent / args.out.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    rows: Dict[str, Dict] = {}
    stats: Dict[str, Dict] = {}
    dual = set(recipes) if args.dual is None else set(args.dual.split(","))
    test = list(read_conllu(args.corpus / "test.conllu"))
    for recipe, model in recipes.items():
        projective = spacy.load(model).get_pipe("hc_parser").projectivize
        names = ["eisner"] if projective else decoders + (["dual"] if recipe in dual else [])
        results, full = {}, []
        for name in names:
            nlp = spacy.load(model, config={"components": {"hc_parser": {"decoder": DECODERS[name]}}})
            rows[f"{recipe}/{name}"] = row = split_scores(nlp, args.corpus, out_dir / f"{recipe}.{name}")
            msg.text(f"{recipe}/{name}: " + summary(row))
            if "dual" in names and nlp.get_pipe("hc_parser").decoder.factors == FACTORS:
                full.append(name)
                results[name] = span_results(nlp, (input_doc(nlp, s) for s in test))
        if results:
            stats[recipe] = search_statistics(results, full)
    chosen = shipped if shipped in rows else max(rows, key=lambda k: rows[k]["dev"]["ud_las"])
    speeds, ratio = {}, None
    if args.spacy is not None:
        peer = spacy.load(args.spacy)
        rows["spacy_parser"] = split_scores(peer, args.corpus, out_dir / "spacy_parser")
        msg.text("spacy_parser: " + summary(rows["spacy_parser"]))
        recipe, name = chosen.rsplit("/", 1)
        nlp = spacy.load(recipes[recipe], config={"components": {"hc_parser": {"decoder": DECODERS[name]}}})
        speeds = interleaved_speeds({"chosen": nlp, "spacy_parser": peer}, args.corpus / "test.conllu",
                                    repeats=args.repeats)
        ratios = sorted(a / b for a, b in zip(speeds["chosen"], speeds["spacy_parser"]))
        ratio = ratios[len(ratios) // 2]
    result = {"corpus": str(args.corpus), "recipes": recipes, "rows": rows, "search": stats, "chosen": chosen,
              "speed_runs": speeds, "speed_ratio_median": ratio}
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(crossing_table(result))


def split_scores(nlp, corpus: Path, prefix: Path) -> Dict:
    row = {}
    for split in ("dev", "test"):
        scores, _ = evaluate_gold(nlp, corpus / f"{split}.conllu", prefix.with_suffix(f".{split}.conllu"), repeats=1)
        row[split] = {**{k: scores[k] for k in KEYS}, "nonprojective": scores["nonprojective"]}
    return row


def summary(row: Dict) -> str:
    d, t = row["dev"], row["test"]
    return f"dev LAS {100 * d['ud_las']:.2f}  test UAS {100 * t['ud_uas']:.2f} LAS {100 * t['ud_las']:.2f}"


if __name__ == "__main__":
    main()
