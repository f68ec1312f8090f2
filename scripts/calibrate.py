"""How well hc_parser's head probabilities are calibrated, as a pipeline writes them; refit on demand.

    python scripts/calibrate.py MODEL DEV.conllu OUTPUT.json [--test TEST.conllu] [--plot PLOT.png] [--write]
        [--by-genre]

``hc_parser`` calibrates itself: at each evaluation of ``spacy train`` it fits its calibration
(``spacy_hcparse.graph.calibration.fit_calibration``: a temperature, then an isotonic map) on the dev data
and stores it in the model, so no step is needed. This script measures it: the expected calibration
error and reliability table of ``token._.hc_head_prob`` as MODEL writes it (gold words, one Doc per
sentence), on DEV and on ``--test``, beside the first-order marginals at temperature 1 without the
map (``uncalibrated``); each with its ECE and its reliability table (``bins``: per bin its bounds,
words, accuracy and mean confidence). ``--plot`` draws the reliability diagram of the written and
uncalibrated probabilities (its path in OUTPUT's ``plot``; scripts/report.py links it).
``--by-genre`` adds the ECE per genre (``by_genre`` in each split): the prefix of each sentence's
``sent_id`` before its first "-" (UD English-EWT: answers, email, newsgroup, reviews, weblog).
``--write`` refits the calibration on DEV (``refitted`` in OUTPUT, with its ECE on ``--test``) and
stores it in MODEL (``hc_parser/cfg``; a ``prob_temperature`` set in its config, which would
override it, is set to null): for a pipeline trained before calibration was automatic, or on data of
another domain.
"""
import argparse
import json
from pathlib import Path
from typing import Dict, List, Optional

import spacy
import srsly
from spacy.language import Language
from spacy.training import Example
from wasabi import msg

from spacy_hcparse.graph.calibration import fit_calibration, reliability
from spacy_hcparse.conllu import read_conllu
from spacy_hcparse.evaluation.ud import gold_doc, input_doc

UNCALIBRATED = {"components": {"hc_parser": {"prob_temperature": 1.0}}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("dev", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--test", type=Path, default=None)
    parser.add_argument("--plot", type=Path, default=None, help="reliability diagram of the written probabilities")
    parser.add_argument("--write", action="store_true", help="refit on DEV and store the calibration in MODEL")
    parser.add_argument("--by-genre", action="store_true", help="ECE per genre (sent_id prefix, e.g. EWT's)")
    args = parser.parse_args()
    splits = {"dev": args.dev, **({"test": args.test} if args.test else {})}
    nlp = spacy.load(args.model)
    raw = spacy.load(args.model, config=UNCALIBRATED)
    result: Dict = {"model": str(args.model), "calibration": nlp.get_pipe("hc_parser").calibration}
    examples = {}
    for split, path in splits.items():
        examples[split] = parsed_examples(nlp, path)
        uncalibrated = parsed_examples(raw, path)
        result[split] = {"written": report(examples[split]), "uncalibrated": report(uncalibrated)}
        msg.text(f"{split}: ECE {result[split]['written']['ece']:.4f} as written, "
                 f"{result[split]['uncalibrated']['ece']:.4f} at T = 1 without the map "
                 f"({result[split]['written']['words']} words)")
        if args.by_genre:
            result[split]["by_genre"] = {"written": by_genre(examples[split], path),
                                         "uncalibrated": by_genre(uncalibrated, path)}
            for name, row in result[split]["by_genre"]["written"].items():
                msg.text(f"  {name}: ECE {row['ece']:.4f} as written, "
                         f"{result[split]['by_genre']['uncalibrated'][name]['ece']:.4f} at T = 1 without the map "
                         f"({row['words']} words)")
    if args.write:
        fitted = fit_calibration(raw.get_pipe("hc_parser").calibration_data(parsed_examples(raw, args.dev)))
        result["refitted"] = fitted
        store(args.model, fitted)
        msg.good(f"{args.model}: calibration refitted on {args.dev} (T = {fitted['temperature']:.3f}, "
                 f"in-sample ECE {fitted['ece']:.4f})")
        if args.test:
            result["test"]["refitted"] = report(parsed_examples(spacy.load(args.model), args.test))
    if args.plot:
        plot(result, args.plot)
        result["plot"] = str(args.plot)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")


def parsed_examples(nlp: Language, path: Path) -> List[Example]:
    """The gold file's sentences parsed by ``nlp`` (gold words, one Doc each), with their gold."""
    gold = list(read_conllu(path))
    docs = nlp.pipe([input_doc(nlp, s) for s in gold], batch_size=256)
    return [Example(doc, gold_doc(nlp, s)) for doc, s in zip(docs, gold)]


def report(examples: List[Example], bins: int = 10) -> Dict:
    """Reliability table and ECE of the written ``token._.hc_head_prob`` (words with one)."""
    confidence, correct = [], []
    for eg in examples:
        for tok, ref in zip(eg.predicted, eg.reference):
            if tok._.hc_head_prob is not None:
                confidence.append(tok._.hc_head_prob)
                correct.append(tok.head.i == ref.head.i)
    rows, ece = reliability(confidence, correct, bins)
    return {"words": len(confidence), "ece": ece, "accuracy": sum(correct) / max(len(correct), 1),
            "mean_confidence": sum(confidence) / max(len(confidence), 1), "bins": rows}


def genre(sent_id: Optional[str]) -> str:
    """A sentence's genre: its ``sent_id`` up to the first "-" (EWT's ``email-enronsent01_01-0001``
    is ``email``); "" without a ``sent_id``."""
    return (sent_id or "").split("-", 1)[0]


def by_genre(examples: List[Example], path: Path) -> Dict[str, Dict]:
    """``report`` per genre of the gold file's sentences; ``examples`` are its sentences in order
    (``parsed_examples``)."""
    genres = [genre(s.sent_id) for s in read_conllu(path)]
    if len(genres) != len(examples):
        raise ValueError(f"{path}: {len(genres)} sentences, {len(examples)} examples")
    groups: Dict[str, List[Example]] = {}
    for name, eg in zip(genres, examples):
        groups.setdefault(name, []).append(eg)
    return {name: report(groups[name]) for name in sorted(groups)}


def store(model: Path, calibration: Dict) -> None:
    """The calibration into MODEL's ``hc_parser/cfg``; a ``prob_temperature`` in its config, which
    would take precedence, set to null."""
    cfg_path = model / "hc_parser" / "cfg"
    cfg = srsly.read_json(cfg_path)
    cfg["calibration"] = calibration
    srsly.write_json(cfg_path, cfg)
    config = spacy.util.load_config(model / "config.cfg", interpolate=False)
    if config["components"]["hc_parser"].get("prob_temperature") is not None:
        config["components"]["hc_parser"]["prob_temperature"] = None
        config.to_disk(model / "config.cfg")


def plot(result: Dict, path: Path) -> None:
    """Reliability diagram: accuracy against mean confidence per bin, written and uncalibrated."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle=":")
    for split, style in (("dev", "-"), ("test", "--")):
        for kind, color in (("written", "tab:blue"), ("uncalibrated", "tab:orange")):
            if split in result:
                rows = [r for r in result[split][kind]["bins"] if r["words"]]
                ax.plot([r["confidence"] for r in rows], [r["accuracy"] for r in rows], style, color=color, marker="o",
                        markersize=3, label=f"{split} {kind} (ECE {result[split][kind]['ece']:.3f})")
    ax.set_xlabel("token._.hc_head_prob (bin mean)")
    ax.set_ylabel("head accuracy")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
