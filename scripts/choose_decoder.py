"""Choose hc_parser's decoder on dev and write it into the trained pipeline's config.

    python scripts/choose_decoder.py MODEL DEV.conllu [--decoders eisner,hill_climb,mst] [--out FILE]

Parses DEV (gold words and sentences) with the same weights under each decoder (loaded through
the config, as a user would switch them), keeps the one with the best dev LAS (then UAS; a tie
keeps the earlier in ``--decoders``, so Eisner stays where a non-projective decoder gains
nothing), and writes it as ``[components.hc_parser.decoder]`` of ``MODEL/config.cfg``. The
scores of every candidate go to ``--out`` (default ``MODEL/../decoder_choice.json``).

Why: Eisner finds the best projective tree (arcs and siblings); treebanks with many crossing arcs
(Dutch, Danish, Turkish, ...) may parse better with a non-projective search, and which one wins
depends on the model, so it is measured per trained model rather than fixed per language.
"""
import argparse
import json
from pathlib import Path

from spacy.util import load_config
from wasabi import msg

from spacy_hcparse.evaluation.harness import DECODERS, compare_decoders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("dev", type=Path)
    parser.add_argument("--decoders", default="eisner,hill_climb,mst")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    names = [n.strip() for n in args.decoders.split(",") if n.strip()]
    unknown = [n for n in names if n not in DECODERS]
    if not names or unknown:
        msg.fail(f"unknown decoders {unknown}; choose from {sorted(DECODERS)}", exits=1)
    out = args.out or args.model.parent / "decoder_choice.json"
    result = compare_decoders(args.model, args.dev, out.parent / "decoder_choice",
                              decoders={n: DECODERS[n] for n in names}, progress=True)
    scores = result["per_decoder"]
    best = choose(scores, names)
    write_decoder(args.model, DECODERS[best])
    out.write_text(json.dumps({"dev": str(args.dev), "chosen": best, "decoder": DECODERS[best], **result}, indent=2) + "\n")
    for name in names:
        s = scores[name]
        marker = "  <- chosen" if name == best else ""
        msg.text(f"{name:>12}: dev UAS {100 * s['dep_uas']:.2f}  LAS {100 * s['dep_las']:.2f}  "
                 f"{s['words_per_sec']:,.0f} words/s{marker}")
    msg.good(f"{args.model}/config.cfg decodes with {DECODERS[best]['@misc']} ({out})")


def choose(scores: dict, names: list) -> str:
    """The name with the best (LAS, UAS); ties keep the earlier name."""
    return max(names, key=lambda n: (round(scores[n]["dep_las"], 6), round(scores[n]["dep_uas"], 6), -names.index(n)))


def write_decoder(model: Path, decoder: dict) -> None:
    config = load_config(model / "config.cfg", interpolate=False)
    config["components"]["hc_parser"]["decoder"] = dict(decoder)
    config.to_disk(model / "config.cfg")


if __name__ == "__main__":
    main()
