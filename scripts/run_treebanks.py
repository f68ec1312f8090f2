"""Run the per-treebank workflow for a profile: the `smoke` run or every treebank in the mirror.

    python scripts/run_treebanks.py smoke          # `all` on an EWT subset, tiny configs (CI), then package
    python scripts/run_treebanks.py multilingual   # every treebank under $HCPARSE_UD_DIR
        [--profile full|small|smoke] [--only UD_Danish-DDT,...] [--rerun]

The multilingual run uses the `small` profile unless told otherwise: the same configs with a
fixed budget of 2,000 steps for the graph parser and spaCy's parser alike, because most mirror
treebanks train on their dev file (a few hundred sentences), where 8,000+ steps only overfit and
cost 40 minutes per treebank; within it each parser keeps its best checkpoint on held-out
sentences (every 10th dev sentence, scripts/convert.py), so a small treebank stops where it
starts to overfit. A treebank whose corpus, metrics (raw-text scores included) and report already
exist here (e.g. EWT from `spacy project run all`) is reused as it is, unless --rerun is given;
metrics committed without their (git-ignored) corpus are not reused.

Each treebank runs ``spacy project run treebank`` with its own variables (treebank, lang, file
prefix, run name), so the same commands with their deps and outputs do the work. The multilingual
run then writes reports/multilingual.md with one table row per language and parser, and, for
the treebanks whose raw text was scored (``evaluate-raw-parsers``: hc_parser and spaCy's parser,
each with spaCy's tokenizer and with the UD tokenizer trained on the treebank), Words, Sentences
and LAS from raw text beside LAS from gold words (``report.tokenizer_rows``). Without a
mirror the multilingual run covers English only (download or sample, see fetch_treebank.py).
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from wasabi import msg

from report import CROSSING_NOTE, TOKENIZER_HEADER, crossing_table, tokenizer_rows

SMOKE = {
    "train_limit": 300, "eval_limit": 100, "max_steps": 0, "eval_frequency": 100, "repeats": 3,
    "graph_config": "configs/smoke_graph.cfg", "spacy_config": "configs/smoke_spacy.cfg",
    "transition_steps": 300, "analyze_limit": 100,
    "pipeline_config": "configs/smoke_pipeline.cfg", "spacy_pipeline_config": "configs/smoke_spacy_pipeline.cfg",
    "tokenizer_epochs": 5,
    "nonprojective_config": "configs/smoke_graph.cfg",
}
FULL = {"train_limit": 0, "eval_limit": 0, "max_steps": 0, "eval_frequency": 0, "repeats": 3,
        "graph_config": "configs/ewt_fast.cfg", "spacy_config": "configs/spacy_parser.cfg",
        "transition_steps": 0, "analyze_limit": 500, "tokenizer_epochs": 0,
        "pipeline_config": "configs/ewt_pipeline.cfg", "spacy_pipeline_config": "configs/spacy_pipeline.cfg"}
SMALL = {**FULL, "graph_config": "configs/ud_fast.cfg", "max_steps": 2000, "eval_frequency": 250}
PROFILES = {"full": FULL, "small": SMALL, "smoke": SMOKE}
ENGLISH = ("UD_English-EWT", "en", "en_ewt")
PARSERS = ("hc_parser", "hc_transition_parser", "spacy_parser")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("smoke", "multilingual"))
    parser.add_argument("--profile", choices=tuple(PROFILES), default=None)
    parser.add_argument("--only", default="")
    parser.add_argument("--rerun", action="store_true", help="rerun treebanks that already have metrics and a report")
    args = parser.parse_args()
    profile = PROFILES[args.profile or ("smoke" if args.what == "smoke" else "small")]
    suffix = "-smoke" if profile is SMOKE else ""
    if args.what == "smoke":
        run_treebank(*ENGLISH, run=ENGLISH[0] + suffix, profile=profile, workflow="all")
        return
    treebanks = mirror_treebanks() or [ENGLISH]
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in only if name not in {t[0] for t in treebanks}]
    if unknown:
        msg.fail(f"--only {', '.join(unknown)}: not in the mirror; choose from {', '.join(t[0] for t in treebanks)}",
                 exits=1)
    selected = [t for t in treebanks if not only or t[0] in only]
    for treebank, lang, prefix in selected:
        if not args.rerun and is_done(treebank + suffix):
            msg.info(f"{treebank + suffix}: metrics and report exist, reused (--rerun to train again)")
            continue
        run_treebank(treebank, lang, prefix, run=treebank + suffix, profile=profile, workflow="treebank")
    # The summary covers every finished treebank, also those an --only run left alone.
    runs = [t[0] + suffix for t in treebanks if is_done(t[0] + suffix)]
    name = next(k for k, v in PROFILES.items() if v is profile)
    write_summary(runs, Path("reports") / f"multilingual{suffix}.md", name, profile)


def mirror_treebanks():
    """(treebank, lang, prefix) for every <dir>/<treebank>/*-ud-test.conllu in the mirror."""
    mirror = os.environ.get("HCPARSE_UD_DIR", "").strip()
    if not mirror:
        msg.warn("HCPARSE_UD_DIR is not set: the multilingual run covers English only")
        return []
    found = []
    for test in sorted(Path(mirror).glob("*/*-ud-test.conllu")):
        prefix = test.name[: -len("-ud-test.conllu")]
        found.append((test.parent.name, prefix.split("_")[0], prefix))
    return found


def is_done(run: str) -> bool:
    """Whether `run` was finished here: its corpus (git-ignored, so never from a checkout), all
    three parsers' metrics, the raw-text scores (both workflows write them since they train the
    UD tokenizer) and its report. Metrics and reports committed from another machine's run,
    without the corpus the summary reads, and runs of the workflow from before the tokenizer, do
    not count: the treebank runs again."""
    metrics = Path("metrics") / run
    return ((Path("corpus") / run / "data.json").exists() and (Path("reports") / f"{run}.md").exists()
            and (metrics / "raw_text.json").exists() and all((metrics / f"{p}.json").exists() for p in PARSERS))


def run_treebank(treebank: str, lang: str, prefix: str, run: str, profile: dict, workflow: str) -> None:
    overrides = {"treebank": treebank, "lang": lang, "prefix": prefix, "run": run, **profile}
    cmd = [sys.executable, "-m", "spacy", "project", "run", workflow, "."]
    for key, value in overrides.items():
        cmd += [f"--vars.{key}", str(value)]
    msg.divider(f"{workflow}: {run}")
    msg.info(" ".join(cmd))
    result = subprocess.run(cmd)
    if result.returncode != 0:
        msg.fail(f"{run}: `spacy project run {workflow}` failed ({result.returncode})", exits=result.returncode)


def write_summary(runs, path: Path, profile_name: str, profile: dict) -> None:
    budget = f"{profile['max_steps']:,} steps" if profile["max_steps"] else "each config's own step budget"
    lines = ["# Multilingual run", "",
             "UD-style LAS/UAS on test (punctuation counted, subtypes dropped), gold words and sentences; "
             "words/sec median of 3 and the ratio to spaCy's parser. Per-treebank reports: reports/<treebank>.md.", "",
             f"Profile `{profile_name}`: {profile['graph_config']} and {profile['spacy_config']} with {budget} "
             "for both; treebanks reused from an earlier run (EWT from `spacy project run all`) keep their own budget. "
             "A treebank without a train file trains on nine tenths of its dev file and selects its "
             "checkpoints (and hc_parser's recipe and decoder) on the other tenth; its test split is untouched.", "",
             "| treebank | trained on | parser | UAS | LAS | words/sec | ratio to spaCy |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for run in runs:
        data = json.loads((Path("corpus") / run / "data.json").read_text())
        results = {p.stem: json.loads(p.read_text()) for p in (Path("metrics") / run).glob("*_parser.json")}
        peer = results.get("spacy_parser", {}).get("splits", {}).get("test")
        for name in PARSERS:
            r = results.get(name)
            if not r or "skipped" in r:
                continue
            s = r["splits"]["test"]
            ratio = f"{s['words_per_sec'] / peer['words_per_sec']:.2f}" if peer else "n/a"
            trained = data["train_on"] + (" (sample data!)" if data["source"] == "sample" else "")
            lines.append(f"| {data['treebank']} | {trained} | {name} | {100 * s['ud_uas']:.2f} | {100 * s['ud_las']:.2f} | "
                         f"{s['words_per_sec']:,.0f} | {ratio} |")
    raw_runs = [run for run in runs if (Path("metrics") / run / "raw_text.json").exists()]
    if raw_runs:
        lines += ["", "## Raw text: spaCy's tokenizer and the UD tokenizer", "",
                  "CoNLL 2018 F1 (%) on test from raw text (documents of `raw_group` sentences; `metrics/<run>/raw_text.json`, "
                  "`raw_text_flat.json`): each parser with spaCy's rule tokenizer and with the UD tokenizer trained on "
                  "the treebank's training text (`_ud`; the shipped `hc_parser_ud` carries it), beside its UD LAS "
                  "from gold words; with paragraph breaks as blank lines and as spaces (no line breaks). Words/sec "
                  "and the ratio to the run's spaCy peer with spaCy's tokenizer (`spacy_parser`; `spacy_pipeline` in "
                  "runs of `all`): with paragraph breaks.", ""]
        lines += TOKENIZER_HEADER
        for run in raw_runs:
            metrics = Path("metrics") / run
            raw = json.loads((metrics / "raw_text.json").read_text())
            flat_path = metrics / "raw_text_flat.json"
            flat = json.loads(flat_path.read_text()) if flat_path.exists() else None
            gold = {p.stem: json.loads(p.read_text()).get("splits", {}).get("test", {}).get("ud_las")
                    for p in metrics.glob("*_parser.json")}
            lines += tokenizer_rows(raw["treebank"], raw, flat, gold)
    crossing = [run for run in runs if (Path("metrics") / run / "nonprojective.json").exists()]
    if crossing:
        lines += ["", "## Where trees cross: recipes and decoders", "",
                  "Per treebank (scripts/nonprojective_table.py). " + CROSSING_NOTE]
        for run in crossing:
            lines += ["", f"### {run}", "", crossing_table(json.loads((Path("metrics") / run / "nonprojective.json").read_text()))]
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    print(path.read_text())


if __name__ == "__main__":
    main()
