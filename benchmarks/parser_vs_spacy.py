"""Accuracy and speed of trained parser pipelines against spaCy's own parser, in one run.

Measured with ``spacy_hcparse.evaluation.harness`` (the workflow's evaluation uses the same
functions): gold tokens, one Doc per gold sentence with its start preset, spaCy's parser scorer
(``dep_uas``/``dep_las``, punctuation dropped) and the UD-style ``ud_uas``/``ud_las``, words/sec of
``nlp.pipe`` in one process (median of ``--repeats`` runs, the pipelines taking turns run by run)
and its ratio to the peer's (the median of the per-round ratios).
``--decoders`` also runs every listed decoder with each ``hc_parser`` model's weights and prints
the search statistics. ``--gpu-id N`` runs every pipeline on that GPU (thinc's ``require_gpu``
before any is loaded, so the peer and ``hc_parser`` share the device); without it, the CPU.
``--override NAME:SECTION.KEY=VALUE`` loads pipeline NAME with that config value changed (JSON
values), e.g. another decoder or LSTM kernel for the same weights; a pipeline may be listed twice
under two names (``--model fast=PATH --model fast_torch=PATH``). ``--numpy-blas NAME`` makes every model of
pipeline NAME multiply with numpy's BLAS instead of thinc's blis (``spacy_hcparse.blas``; what
``hc_parser``'s ``cpu_blas = "numpy"`` does for its own model), e.g. spaCy's parser listed a second
time, to see what the same switch gives it; run with ``OMP_NUM_THREADS=1`` for one thread.

    python benchmarks/parser_vs_spacy.py --gold corpus/UD_English-EWT/test.conllu \\
        --peer training/UD_English-EWT/spacy_parser/model-best \\
        --model fast=training/UD_English-EWT/hc_parser/model-best --decoders hill_climb,dual,mst,eisner
"""
import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any, Dict, List

import spacy
from thinc.api import get_current_ops, require_gpu

from spacy_hcparse.evaluation import compare_decoders, evaluate_gold, interleaved_speeds, speed_ratio
from spacy_hcparse.blas import use_blas
from spacy_hcparse.evaluation.harness import DECODERS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--peer", type=Path, required=True, help="spaCy pipeline with the built-in parser")
    parser.add_argument("--model", action="append", default=[], help="NAME=PATH of a pipeline to compare")
    parser.add_argument("--decoders", default="", help="decoders to run with each hc_parser model's weights")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per pipeline, in turns")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--limit", type=int, default=0, help="first N sentences only")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--gpu-id", type=int, default=-1, help="run every pipeline on this GPU (-1: CPU)")
    parser.add_argument("--numpy-blas", action="append", default=[],
                        help="NAME: every model of it multiplies with numpy's BLAS, not blis")
    parser.add_argument("--override", action="append", default=[],
                        help="NAME:SECTION.KEY=VALUE, a config value for pipeline NAME (JSON value)")
    args = parser.parse_args()
    if args.gpu_id >= 0:
        require_gpu(args.gpu_id)
    overrides = config_overrides(args.override)

    out = Path(tempfile.mkdtemp(prefix="parser_vs_spacy-"))
    specs = [("spacy_parser", args.peer)] + [tuple(spec.split("=", 1)) for spec in args.model]
    rows, decoders, pipelines = [], {}, {}
    for name, path in specs:
        nlp = pipelines[name] = spacy.load(path, config=overrides.get(name, {}))
        if name in args.numpy_blas:
            for _, component in nlp.pipeline:
                if hasattr(component, "model"):
                    use_blas(component.model, "numpy")
        scores, _ = evaluate_gold(nlp, args.gold, out / f"{name}.conllu", repeats=1,
                                  batch_size=args.batch_size, limit=args.limit, progress=name)
        rows.append({"parser": name, **{k: scores[k] for k in ("dep_uas", "dep_las", "ud_uas", "ud_las", "words")}})
        if args.decoders and "hc_parser" in nlp.pipe_names:
            chosen = {d: DECODERS[d] for d in args.decoders.split(",")}
            decoders[name] = compare_decoders(path, args.gold, out / name, decoders=chosen, batch_size=args.batch_size,
                                              limit=args.limit, progress=True)
    speeds = interleaved_speeds(pipelines, args.gold, repeats=args.repeats, batch_size=args.batch_size, limit=args.limit)
    for row in rows:
        row["words_per_sec_runs"] = speeds[row["parser"]]
        row["words_per_sec"] = statistics.median(speeds[row["parser"]])
        row["ratio"] = speed_ratio(speeds[row["parser"]], speeds["spacy_parser"])
    peer_wps = rows[0]["words_per_sec"]
    device = f"GPU {args.gpu_id} ({type(get_current_ops()).__name__})" if args.gpu_id >= 0 else "CPU"
    print(f"{args.gold.name}: {rows[0]['words']} words; gold tokens and sentences; {device}; outputs in {out}")
    print(f"{'parser':<20} {'UAS':>7} {'LAS':>7} {'ud_uas':>7} {'ud_las':>7} {'words/s':>9} {'x spaCy':>8}")
    for row in rows:
        print(f"{row['parser']:<20} {100 * row['dep_uas']:7.2f} {100 * row['dep_las']:7.2f} {100 * row['ud_uas']:7.2f} "
              f"{100 * row['ud_las']:7.2f} {row['words_per_sec']:9.0f} {row['ratio']:8.2f}")
    for name, comparison in decoders.items():
        stats = comparison["search"]
        print(f"\n{name}: every decoder with the same weights ({100 * stats['proven_share']:.2f}% of "
              f"{stats['spans']} spans proven optimal)")
        for decoder, s in comparison["per_decoder"].items():
            d = stats["decoders"][decoder]
            exact = "" if d["exact_share_of_proven"] is None else f", exact on proven {100 * d['exact_share_of_proven']:.2f}%"
            print(f"  {decoder:<10} UAS {100 * s['dep_uas']:.2f} LAS {100 * s['dep_las']:.2f} {s['words_per_sec']:8.0f} words/s "
                  f"({s['words_per_sec'] / peer_wps:.2f}x), certified {100 * d['certified_share']:.2f}%{exact}")
    if args.json:
        args.json.write_text(json.dumps({"device": device, "rows": rows, "decoders": decoders}, indent=2))


def config_overrides(specs: List[str]) -> Dict[str, Dict[str, Any]]:
    """Per pipeline name its ``spacy.load`` config overrides from ``NAME:SECTION.KEY=VALUE`` (the
    value parsed as JSON, else kept as a string)."""
    out: Dict[str, Dict[str, Any]] = {}
    for spec in specs:
        name, _, setting = spec.partition(":")
        key, _, value = setting.partition("=")
        if not name or not key or not _:
            raise SystemExit(f"--override {spec!r}: expected NAME:SECTION.KEY=VALUE")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out.setdefault(name, {})[key] = parsed
    return out


if __name__ == "__main__":
    main()
