"""The report a person reads: reports/<run>.md (tables) and reports/<run>.png (accuracy vs speed).

    python scripts/report.py metrics/RUN reports [--corpus corpus/RUN]

Reads ``metrics/RUN/<parser>.json`` from evaluate.py (and ``local_optima.json`` from analyze.py,
``raw_text.json`` and ``raw_text_flat.json`` from evaluate_raw.py, ``calibration.json`` from
calibrate.py, ``nonprojective.json`` from nonprojective_table.py, if present). The main table is on
test: parser, UAS and LAS on gold tokens (UD-style: punctuation counted, subtypes dropped;
spaCy-scorer values beside them), words/sec and the ratio to spaCy's parser. Beside it, per split,
the raw-text pipelines' CoNLL 2018 F1 (Tokens, Sentences, Words, UPOS, UAS, LAS, CLAS), words/sec
and the ratio to spaCy's pipeline; a pipeline named ``<name>_ud`` reads the text with the trained UD
tokenizer, the others with spaCy's rule tokenizer. Where evaluate_raw.py scored both tokenizers
(``--tokenizer``), a "Raw text by tokenizer" table sums up test: per pipeline and tokenizer, LAS
from gold words beside Words, Sentences and LAS from raw text, with paragraph breaks and without
(``tokenizer_table``, also in reports/multilingual.md). With ``calibration.json``, a Confidence
section: the ECE of hc_parser's head probabilities per split (as written and at T = 1 without the
map) and a link to the reliability diagram (the ``plot`` calibrate.py drew, else
reports/<run>-reliability.png, where it exists). With ``nonprojective.json`` (the treebank
workflow's ``evaluate-nonprojective``), a "Where trees cross" section: every hc_parser recipe and
decoder against spaCy's parser on test, the path chosen on held-out dev marked (the table of
reports/multilingual.md).
"""
import argparse
import json
import os
from pathlib import Path
from typing import Dict, List, Optional

PARSERS = ("hc_parser", "hc_transition_parser", "spacy_parser")
PEER = "spacy_parser"
RAW_METRICS = ("Tokens", "Sentences", "Words", "UPOS", "UAS", "LAS", "CLAS")
TOKENIZER_METRICS = ("Words", "Sentences", "LAS")  # the raw-text figures of the tokenizer table
UD = "_ud"  # the suffix of a pipeline with the trained UD tokenizer (scripts/evaluate_raw.py)
DECODER_CLASSES = {"hill_climb": "HillClimb", "dual": "Dual", "mst": "MST", "eisner": "Eisner"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("reports", type=Path)
    parser.add_argument("--corpus", type=Path, default=None)
    args = parser.parse_args()
    run = args.metrics.name
    results = load_results(args.metrics)
    data = json.loads((args.corpus / "data.json").read_text()) if args.corpus and (args.corpus / "data.json").exists() else {}
    args.reports.mkdir(parents=True, exist_ok=True)
    png = args.reports / f"{run}.png"
    plot(results, png, run)
    optima = args.metrics / "local_optima.json"
    raw, flat = args.metrics / "raw_text.json", args.metrics / "raw_text_flat.json"
    calibration_path = args.metrics / "calibration.json"
    calibration = json.loads(calibration_path.read_text()) if calibration_path.exists() else None
    crossing_path = args.metrics / "nonprojective.json"
    crossing = json.loads(crossing_path.read_text()) if crossing_path.exists() else None
    text = render(run, results, data, json.loads(optima.read_text()) if optima.exists() else None, png.name,
                  json.loads(raw.read_text()) if raw.exists() else None,
                  json.loads(flat.read_text()) if flat.exists() else None,
                  calibration, reliability_link(calibration, args.reports, run) if calibration else None, crossing)
    (args.reports / f"{run}.md").write_text(text)
    print(text)


def load_results(metrics: Path) -> List[Dict]:
    found = {p.stem: json.loads(p.read_text()) for p in metrics.glob("*.json") if p.stem in PARSERS}
    return [found[name] for name in PARSERS if name in found]


def main_split(result: Dict) -> str:
    splits = result.get("splits", {})
    return "test" if "test" in splits else next(iter(splits), "test")


def table(results: List[Dict], split: str) -> List[str]:
    peer = next((r for r in results if r["parser"] == PEER and split in r.get("splits", {})), None)
    peer_wps = peer["splits"][split]["words_per_sec"] if peer else None
    lines = ["| parser | UAS | LAS | words/sec | ratio to spaCy | dep_uas | dep_las | exact LAS | non-proj P / R |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        s = r["splits"].get(split)
        if s is None:
            continue
        ratio = f"{s['words_per_sec'] / peer_wps:.2f}" if peer_wps else "n/a"
        npj = s["nonprojective"]
        lines.append(
            f"| {r['parser']} | {_pct(s['ud_uas'])} | {_pct(s['ud_las'])} | {s['words_per_sec']:,.0f} | {ratio} | "
            f"{_pct(s['dep_uas'])} | {_pct(s['dep_las'])} | {_pct(s['exact_las'])} | "
            f"{_pct(npj['precision'])} / {_pct(npj['recall'])} ({npj['gold_arcs']} gold) |"
        )
    return lines


RAW_FLAT_TITLE = "Raw text without line breaks (paragraph breaks as spaces; `raw_text_flat.json`):"


def raw_table(raw: Dict, split: str) -> List[str]:
    """The raw-text table of one split: CoNLL 2018 F1 per pipeline, words/sec, ratio to spaCy's pipeline."""
    lines = ["| pipeline | " + " | ".join(RAW_METRICS) + " | words/sec | ratio to spaCy |",
             "| --- |" + " ---: |" * (len(RAW_METRICS) + 2)]
    for name, entry in raw["pipelines"].items():
        s = entry["splits"].get(split)
        if s is None:
            continue
        ratio = "n/a" if s.get("ratio_to_spacy") is None else f"{s['ratio_to_spacy']:.2f}"
        cells = " | ".join(_pct(s["scores"][m]["f1"]) for m in RAW_METRICS)
        lines.append(f"| {name} | {cells} | {s['words_per_sec']:,.0f} | {ratio} |")
    return lines


TOKENIZER_HEADER = [
    "| treebank | pipeline | tokenizer | LAS, gold words | " + " | ".join(TOKENIZER_METRICS) + " | "
    + " | ".join(f"{m}, no line breaks" for m in TOKENIZER_METRICS) + " | words/sec | ratio to spaCy |",
    "| --- | --- | --- |" + " ---: |" * (2 * len(TOKENIZER_METRICS) + 3)]


def tokenizer_kind(name: str, entry: Dict) -> str:
    """"UD" (the trained UD tokenizer) or "spaCy rules": as evaluate_raw.py recorded it, else by name."""
    return entry.get("tokenizer") or ("UD" if name.endswith(UD) else "spaCy rules")


def tokenizer_rows(treebank: str, raw: Dict, flat: Optional[Dict], gold_las: Dict[str, float],
                   split: str = "test") -> List[str]:
    """One row per raw-text pipeline of ``raw`` (raw_text.json) on ``split``: its tokenizer, the
    UD LAS of the same pipeline on gold words (``gold_las`` by pipeline name, ``<name>_ud`` reading
    ``<name>``'s; n/a where not measured), then Words, Sentences and LAS F1 with paragraph breaks
    and from ``flat`` (raw_text_flat.json: without line breaks), words/sec and the ratio to the
    peer (with paragraph breaks)."""
    lines = []
    for name, entry in raw["pipelines"].items():
        s = entry["splits"].get(split)
        if s is None:
            continue
        f = ((flat or {}).get("pipelines", {}).get(name) or {}).get("splits", {}).get(split)
        base = name[: -len(UD)] if name.endswith(UD) else name
        cells = [_pct(s["scores"][m]["f1"]) for m in TOKENIZER_METRICS]
        cells += [_pct(f["scores"][m]["f1"]) if f else "n/a" for m in TOKENIZER_METRICS]
        ratio = "n/a" if s.get("ratio_to_spacy") is None else f"{s['ratio_to_spacy']:.2f}"
        lines.append(f"| {treebank} | {name} | {tokenizer_kind(name, entry)} | {_pct(gold_las.get(base))} | "
                     + " | ".join(cells) + f" | {s['words_per_sec']:,.0f} | {ratio} |")
    return lines


def tokenizer_table(run: str, results: List[Dict], raw: Dict, flat: Optional[Dict]) -> List[str]:
    """The "Raw text by tokenizer" section of reports/<run>.md (test, else the first split)."""
    split = "test" if any("test" in e["splits"] for e in raw["pipelines"].values()) else next(
        iter(next(iter(raw["pipelines"].values()))["splits"]), "test")
    gold = {r["parser"]: r["splits"][split]["ud_las"] for r in results if split in r.get("splits", {})}
    return ([f"## Raw text by tokenizer ({split})", "",
             "CoNLL 2018 F1 (%) from raw text with spaCy's rule tokenizer and with the UD tokenizer trained on this "
             f"treebank (`training/{run}/tokenizer`; `_ud` pipelines), beside the same parser's UD LAS from gold words; "
             "with paragraph breaks as blank lines and as spaces (no line breaks). Words/sec and the ratio to "
             f"`{raw.get('peer', 'spacy_pipeline')}` with spaCy's tokenizer: with paragraph breaks.", ""]
            + TOKENIZER_HEADER + tokenizer_rows(run, raw, flat, gold, split) + [""])


def raw_note(raw: Dict) -> str:
    group = raw.get("group") or "a gold document's"
    return (f"Raw text (CoNLL 2018 F1): the pipelines (tokenizer, their own sentence boundaries, tags and parse) "
            f"parse the gold files' text in documents of {group} sentences and are scored with the CoNLL 2018 "
            "shared task evaluation (`spacy_hcparse.evaluation.conll18`; `metrics/<run>/raw_text.json` has every "
            "metric). Words/sec: gold words per second of `nlp.pipe`, median of the repeats; the ratio is to "
            f"spaCy's pipeline (`{raw.get('peer', 'spacy_pipeline')}`) on the same text. A pipeline named `<name>_ud` reads the "
            "text with the UD tokenizer trained on the treebank, the others with spaCy's rule tokenizer.")


def crossing_table(result: Dict) -> str:
    """The Markdown table of ``nonprojective.json`` (scripts/nonprojective_table.py): per path (recipe/decoder)
    and spaCy's parser, dev LAS and test scores; the path chosen on dev marked, its speed ratio below."""
    lines = ["| path | dev LAS | UAS | LAS | non-proj. P | non-proj. R | exact (LAS) | certified | "
             "HC exact of proven | words/s |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for key, row in result["rows"].items():
        t, npj = row["test"], row["test"]["nonprojective"]
        recipe = key.split("/")[0]
        search = result["search"].get(recipe, {}).get("decoders", {})
        dual = search.get("dual", {}).get("certified_share")
        exact = search.get("hill_climb", {}).get("exact_share_of_proven")
        mark = " (chosen)" if key == result["chosen"] else ""
        lines.append(f"| {key}{mark} | {100 * row['dev']['ud_las']:.2f} | {100 * t['ud_uas']:.2f} | "
                     f"{100 * t['ud_las']:.2f} | {_pct(npj.get('precision'))} | {_pct(npj.get('recall'))} | "
                     f"{_pct(t.get('exact_las'))} | {_pct(dual) if key.endswith('/dual') else ''} | "
                     f"{_pct(exact) if key.endswith('/hill_climb') else ''} | {t['words_per_sec']:,.0f} |")
    lines.append(f"\nChosen on dev: {result['chosen']}.")
    if result["speed_ratio_median"] is not None:
        lines[-1] += (f" Its test words/s / spaCy's parser's, in turns: {result['speed_ratio_median']:.2f}x "
                      f"(median of {len(result['speed_runs']['chosen'])} runs).")
    return "\n".join(lines)


CROSSING_NOTE = (
    "Each hc_parser recipe of the treebank workflow (`hc_parser_projective`: the graph config, Eisner hinge; "
    "`hc_parser_pseudo_projective`: the same on pseudo-projective gold, Eisner only; `hc_parser_nonprojective`: "
    "configs/ud_nonprojective.cfg, hill-climbing hinge) with each decoder, and spaCy's parser, on the same gold "
    "words: dev LAS on the held-out dev sentences, UD scores on test, non-projective arc precision and recall, exact "
    "match (LAS), dual decomposition's certified share, hill climbing's exact share of the proven sentences, words/s "
    "of single runs. The chosen path is the one shipped as `hc_parser` (`training/<run>/hc_parser/recipe_choice.json`: "
    "recipe and decoder chosen by dev LAS without punctuation).")


def crossing_section(crossing: Dict) -> List[str]:
    """The "Where trees cross" section from ``nonprojective.json`` (scripts/nonprojective_table.py)."""
    return ["## Where trees cross: recipes and decoders (test)", "", CROSSING_NOTE, "", crossing_table(crossing), ""]


def reliability_link(calibration: Dict, reports: Path, run: str) -> Optional[str]:
    """The reliability diagram's link from reports/<run>.md (relative, with "/"): the ``plot`` that
    calibrate.py recorded (a path from the project directory), else reports/<run>-reliability.png;
    None where neither file exists."""
    candidates = ([Path(calibration["plot"])] if calibration.get("plot") else []) + [reports / f"{run}-reliability.png"]
    found = next((p for p in candidates if p.exists()), None)
    return None if found is None else Path(os.path.relpath(found, reports)).as_posix()


def confidence(calibration: Dict, plot: Optional[str] = None) -> List[str]:
    """The Confidence section: per split (test first) the words, head accuracy, mean
    ``hc_head_prob`` and ECE as written and at T = 1 without the map; the fitted calibration; the
    reliability diagram where ``plot`` is given."""
    out = ["## Confidence (hc_parser head probabilities)", "",
           "`token._.hc_head_prob` as the trained pipeline writes it (the calibration fitted on dev in training) "
           "against the first-order marginals at temperature 1 without the isotonic map; ECE over 10 equal-width "
           "bins (`scripts/calibrate.py`, docs/confidence.md).", "",
           "| split | words | head accuracy | mean hc_head_prob | ECE as written | ECE at T = 1 without the map |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for split in sorted((s for s in ("dev", "test") if s in calibration), key=lambda s: s != "test"):
        written, raw = calibration[split]["written"], calibration[split]["uncalibrated"]
        out.append(f"| {split} | {written['words']} | {_pct(written['accuracy'])} | {_pct(written['mean_confidence'])} | "
                   f"{written['ece']:.4f} | {raw['ece']:.4f} |")
    fitted = calibration.get("calibration") or {}
    if fitted.get("temperature") is not None:
        out += ["", f"Calibration in the model: T = {fitted['temperature']:.3f}, "
                f"{'with' if fitted.get('knots') else 'without'} an isotonic map."]
    out += [""]
    if plot:
        out += [f"![reliability diagram of hc_parser's head probabilities]({plot})", ""]
    return out


def render(run: str, results: List[Dict], data: Dict, optima, png: str, raw: Optional[Dict] = None,
           flat: Optional[Dict] = None, calibration: Optional[Dict] = None,
           reliability_png: Optional[str] = None, crossing: Optional[Dict] = None) -> str:
    out = [f"# {run}", ""]
    if data.get("source") == "sample" or any(r.get("data_source") == "sample" for r in results):
        out += ["> **SAMPLE DATA, NOT A UD TREEBANK.** " + (data.get("source_note") or "The sample treebank in assets/sample/ was used.")
                + " The numbers only show that the workflow runs.", ""]
    if data:
        counts = ", ".join(f"{k} {v['sentences']} sentences / {v['words']} words" for k, v in data["counts"].items())
        out += [f"Data: {data['treebank']} from {data['source']} ({counts})."]
        if data["train_on"] == "dev":
            out += ["**No train file in this treebank: the parsers were trained on nine tenths of dev (every 10th sentence held out to select checkpoints) and are evaluated on test only.**"]
        if data.get("train_limit") or data.get("eval_limit"):
            out += [f"Subset: first {data.get('train_limit') or 'all'} training and {data.get('eval_limit') or 'all'} evaluation sentences."]
        out += [""]
    out += [
        "Every parser gets the gold words, one Doc per gold sentence with the sentence start preset. "
        "UAS/LAS are UD-style (`ud_uas`/`ud_las`: punctuation counted, label subtypes dropped); "
        "`dep_uas`/`dep_las` are spaCy's Scorer (punctuation dropped). Words/sec: `nlp.pipe`, one process, "
        "median of the repeats; the ratio is to spaCy's parser on the same machine.",
        "",
    ]
    if raw:
        out += [raw_note(raw), ""]
    splits = []
    for r in results:
        for s in r.get("splits", {}):
            if s not in splits:
                splits.append(s)
    for entry in (raw or {}).get("pipelines", {}).values():
        splits += [s for s in entry["splits"] if s not in splits]
    for split in sorted(splits, key=lambda s: s != "test"):
        out += [f"## {split}", ""]
        if any(split in r.get("splits", {}) for r in results):
            out += ["Gold tokens and sentences:", ""] + table(results, split) + [""]
        for metrics, title in ((raw, "Raw text (CoNLL 2018 F1):"), (flat, RAW_FLAT_TITLE)):
            if metrics and any(split in e["splits"] for e in metrics["pipelines"].values()):
                out += [title, ""] + raw_table(metrics, split) + [""]
    if raw and raw.get("tokenizer") and raw.get("pipelines"):
        out += tokenizer_table(run, results, raw, flat)
    if crossing:
        out += crossing_section(crossing)
    hc = next((r for r in results if r["parser"] == "hc_parser" and "splits" in r), None)
    if hc:
        split = main_split(hc)
        search = hc["splits"][split].get("search")
        if search:
            out += [f"## hc_parser search ({split})", ""]
            default = search.get("default_decoder", "")
            stats = search["search"]
            out += ["| decoder | UAS | LAS | dep_uas | dep_las | words/sec | certified | exact on proven | mean / max gap | restarts (mean / max) | time capped |",
                    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for name, s in search["per_decoder"].items():
                d = stats["decoders"][name]
                mark = " (default)" if DECODER_CLASSES.get(name) == default else ""
                rs = d["restarts"] or {}
                out.append(f"| {name}{mark} | {_pct(s['ud_uas'])} | {_pct(s['ud_las'])} | {_pct(s['dep_uas'])} | "
                           f"{_pct(s['dep_las'])} | {s['words_per_sec']:,.0f} | {_pct(d['certified_share'])} | "
                           f"{_pct(d['exact_share_of_proven'])} | {_num(d['mean_gap_on_proven'])} / {_num(d['max_gap_on_proven'])} | "
                           f"{rs.get('mean', 0):.1f} / {rs.get('max', 0)} | {_pct(d['time_capped_share'])} |")
            out += ["", f"{_pct(stats['proven_share'])}% of the {stats['spans']} spans were proven optimal by a "
                    "certifying decoder; 'exact on proven' is the share of those where the decoder's tree scores the "
                    "proven optimum (`spacy_hcparse.evaluation.harness.search_statistics`)."]
            out += [""]
        labels = hc["splits"][split].get("ud_las_per_label", {})
        if labels:
            top = sorted(labels.items(), key=lambda kv: -kv[1]["gold"])[:12]
            out += [f"### hc_parser per-label LAS ({split}, most frequent labels)", "",
                    "| label | gold | P | R | F |", "| --- | ---: | ---: | ---: | ---: |"]
            out += [f"| {k} | {v['gold']} | {_pct(v['p'])} | {_pct(v['r'])} | {_pct(v['f'])} |" for k, v in top]
            out += [""]
    if optima:
        out += [f"## Local optima of first-order hill climbing (hc_parser arc scores, {optima['sentences']} sentences)", "",
                "| length | sentences | mean | median | max | single optimum |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for row in optima["by_length"]:
            out.append(f"| {row['length']} | {row['sentences']} | {row['mean']:.1f} | {row['median']:.0f} | "
                       f"{row['max']}{'+' if row['capped'] else ''} | {100 * row['share_single_optimum']:.0f}% |")
        out += [""]
    out += [f"![accuracy against speed]({png})", ""]
    if calibration:
        out += confidence(calibration, reliability_png)
    return "\n".join(out)


def plot(results: List[Dict], path: Path, run: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for r in results:
        if "splits" not in r:
            continue
        s = r["splits"][main_split(r)]
        ax.scatter(s["words_per_sec"], 100 * s["ud_las"], s=50)
        ax.annotate(r["parser"], (s["words_per_sec"], 100 * s["ud_las"]), textcoords="offset points", xytext=(5, 5))
        search = s.get("search")
        if search:
            for name, d in search["per_decoder"].items():
                ax.scatter(d["words_per_sec"], 100 * d["ud_las"], marker="x", color="grey")
                ax.annotate(name, (d["words_per_sec"], 100 * d["ud_las"]), textcoords="offset points", xytext=(4, -10),
                            fontsize=7, color="grey")
    ax.set_xscale("log")
    ax.set_xlabel("words/sec (log scale)")
    ax.set_ylabel("LAS (UD-style)")
    ax.set_title(f"{run}: accuracy against speed")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def _num(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


if __name__ == "__main__":
    main()
