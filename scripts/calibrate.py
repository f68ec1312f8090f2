"""Fit hc_parser's head-probability temperature on held-out gold data and report calibration.

    python scripts/calibrate.py MODEL DEV.conllu OUTPUT.json [--test TEST.conllu] [--write] [--objective ece|nll]

The temperature minimizing the expected calibration error of the chosen heads' probabilities on
dev (``--objective ece``, the default: ``spacy_hcparse.calibration.fit_temperature_ece``) or
maximizing the dev gold heads' marginal log-likelihood (``nll``: ``fit_temperature``); the
reliability table and expected calibration error of the
chosen heads' probabilities (``token._.hc_head_prob``) at temperature 1 and at the fitted one, on
dev (where it was fitted) and, with ``--test``, on test (held out). ``--write`` stores the
temperature in MODEL's config (``[components.hc_parser] prob_temperature``), so the pipeline
writes calibrated probabilities from then on.
"""
import argparse
import json
from pathlib import Path

import spacy
from wasabi import msg

from spacy_hcparse.calibration import calibration_report, fit_temperature, fit_temperature_ece
from spacy_hcparse.evaluation.harness import head_scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("dev", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--test", type=Path, default=None)
    parser.add_argument("--write", action="store_true", help="store the temperature in MODEL's config")
    parser.add_argument("--objective", choices=("ece", "nll"), default="ece")
    args = parser.parse_args()
    nlp = spacy.load(args.model, config={"components": {"hc_parser": {"prob_temperature": 1.0}}})
    dev = head_scores(nlp, args.dev)
    temperature = fit_temperature_ece(*dev) if args.objective == "ece" else fit_temperature(dev[0], dev[1])
    result = {"model": str(args.model), "objective": args.objective, "temperature": temperature,
              "dev": {"uncalibrated": calibration_report(*dev, 1.0), "calibrated": calibration_report(*dev, temperature)}}
    if args.test:
        test = head_scores(nlp, args.test)
        result["test"] = {"uncalibrated": calibration_report(*test, 1.0), "calibrated": calibration_report(*test, temperature)}
    for split in ("dev", "test"):
        if split in result:
            before, after = result[split]["uncalibrated"], result[split]["calibrated"]
            msg.text(f"{split}: ECE {before['ece']:.4f} at T = 1, {after['ece']:.4f} at T = {temperature:.3f} "
                     f"({after['words']} words, head accuracy {100 * after['accuracy']:.2f}%)")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    if args.write:
        config = spacy.util.load_config(args.model / "config.cfg", interpolate=False)
        config["components"]["hc_parser"]["prob_temperature"] = temperature
        config.to_disk(args.model / "config.cfg")
        msg.good(f"{args.model}: prob_temperature = {temperature:.4f}")


if __name__ == "__main__":
    main()
