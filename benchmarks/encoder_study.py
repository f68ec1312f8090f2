"""The fast config's encoder variants: words/s against spaCy's parser, and dev LAS where trained.

Each variant is ``configs/ewt_fast.cfg`` with a few values changed (``VARIANTS`` below: CNN width
and depth, BiLSTM width, no BiLSTM with a deeper or wider-window CNN, a narrower arc scorer,
torch's LSTM kernel). Speed does not depend on the weights, so each variant is built from the
config and initialized on the training corpus (its labels), then parsed with the peer in one
process, taking turns (``evaluation.harness.interleaved_speeds``): EWT test, gold words and
sentences. ``--trained NAME=DIR`` reads a variant's best dev LAS from a ``spacy train`` output
(``DIR/model-best/meta.json``); ``scripts/train.py hc_parser configs/ewt_fast.cfg OUT -- --KEY
VALUE ...`` with the variant's overrides trains one.

    OMP_NUM_THREADS=1 python benchmarks/encoder_study.py --train corpus/UD_English-EWT/train.spacy \\
        --gold corpus/UD_English-EWT/test.conllu --peer SPACY_PARSER_MODEL [--variants base,cnn1]
"""
import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Dict

import spacy
from spacy.training.initialize import init_nlp
from spacy.util import load_config

from spacy_hcparse.evaluation import interleaved_speeds, speed_ratio

ROOT = Path(__file__).resolve().parents[1]
MODEL = "components.hc_parser.model"
CONTEXT = f"{MODEL}.context"
CNN = f"{MODEL}.tok2vec.encode"
EMBED = f"{MODEL}.tok2vec.embed"
# name -> (what changes, config overrides of configs/ewt_fast.cfg)
VARIANTS: Dict[str, tuple] = {
    "base": ("ewt_fast.cfg: CNN 96 x 2, BiLSTM 128, arcs 192", {}),
    "cnn1": ("CNN depth 1", {f"{CNN}.depth": 1}),
    "cnn64": ("CNN and embeddings 64 wide", {f"{CNN}.width": 64, f"{EMBED}.width": 64}),
    "lstm96": ("BiLSTM 96", {f"{CONTEXT}.width": 96}),
    "lstm64": ("BiLSTM 64", {f"{CONTEXT}.width": 64}),
    "cnn4_nolstm": ("no BiLSTM, CNN depth 4", {f"{CNN}.depth": 4, CONTEXT: None}),
    "cnn4w2_nolstm": ("no BiLSTM, CNN depth 4, window 2", {f"{CNN}.depth": 4, f"{CNN}.window_size": 2,
                                                            CONTEXT: None}),
    "arc128": ("arc scorer 128", {f"{MODEL}.arc_scorer.width": 128}),
    "torch_lstm": ("torch's LSTM kernel (same weights as base)",
                   {f"{CONTEXT}.@architectures": "spacy_hcparse.TorchBiLSTMContext.v1"}),
}


def build(name: str, train: Path, out: Path) -> spacy.Language:
    """The variant's pipeline, initialized on ``train`` (labels, tag sets), saved and reloaded.
    ``paths.dev`` names ``train`` too: initializing reads no dev data, but the config wants a path."""
    config = load_config(ROOT / "configs" / "ewt_fast.cfg", overrides={"paths.train": str(train),
                                                                       "paths.dev": str(train)})
    for key, value in VARIANTS[name][1].items():
        *path, last = key.split(".")
        node = config
        for part in path:
            node = node[part]
        node[last] = value
    nlp = init_nlp(config)
    nlp.to_disk(out / name)
    return spacy.load(out / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, required=True, help="training .spacy (labels)")
    parser.add_argument("--gold", type=Path, required=True, help="test .conllu to parse")
    parser.add_argument("--peer", type=Path, required=True, help="spaCy pipeline with the built-in parser")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--trained", action="append", default=[], help="NAME=DIR: its spacy train output")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="first N sentences only")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="encoder_study-"))
    names = args.variants.split(",")
    pipelines = {"spacy_parser": spacy.load(args.peer)}
    for name in names:
        pipelines[name] = build(name, args.train, out)
    speeds = interleaved_speeds(pipelines, args.gold, repeats=args.repeats, limit=args.limit)
    trained = dict(spec.split("=", 1) for spec in args.trained)
    rows = []
    for name in names:
        las = None
        if name in trained:
            meta = json.loads((Path(trained[name]) / "model-best" / "meta.json").read_text())
            las = meta["performance"]["dep_las"]
        rows.append({"variant": name, "what": VARIANTS[name][0], "words_per_sec": statistics.median(speeds[name]),
                     "ratio": speed_ratio(speeds[name], speeds["spacy_parser"]), "dev_las": las})
    print(f"spaCy's parser: {statistics.median(speeds['spacy_parser']):.0f} words/s; {args.gold.name}")
    print("| variant | what | words/s | x spaCy | dev LAS |\n| --- | --- | ---: | ---: | ---: |")
    for row in rows:
        las = "-" if row["dev_las"] is None else f"{100 * row['dev_las']:.2f}"
        print(f"| {row['variant']} | {row['what']} | {row['words_per_sec']:.0f} | {row['ratio']:.2f} | {las} |")
    if args.json:
        args.json.write_text(json.dumps({"peer_speeds": speeds["spacy_parser"], "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
