"""Helpers of ``benchmarks/gpu_check.sh``: timed training steps, and the table of issue 38.

    python benchmarks/gpu_check.py train CONFIG --data DIR --out DIR [--gpu-id 0] [--steps 200]
        [--warmup 20] [--name NAME] [--set SECTION.KEY=VALUE ...]
    python benchmarks/gpu_check.py table RESULTS_DIR

``train``: the config's training steps as ``spacy train`` runs them (``spacy.training.loop``:
``init_nlp``, the config's corpus, batcher, dropout and optimizer, ``train_while_improving``), with
``DIR/train.spacy`` and ``DIR/dev.spacy`` as paths and ``--set`` config values (JSON, else strings),
for ``--steps`` steps and without the dev evaluations; steps before ``--warmup`` (numba compiling,
the device's first kernels) are timed apart. The device is synchronized at each timed step's end.
One evaluation on dev follows (untimed, as ``spacy train`` ends with one: ``hc_parser`` fits its
head-probability calibration there, which parsing then applies). Saves the pipeline to ``--out/model`` and writes ``--out/train.json`` (also printed as one JSON
line). ``table``: reads ``RESULTS_DIR/results.jsonl`` (one record per training, the ``train.json``
above, and per parse run, ``parser_vs_spacy.py --json``) and prints issue 38's table, with whatever
is there.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional


def train(args: argparse.Namespace) -> None:
    import spacy
    from spacy import util
    from spacy.schemas import ConfigSchemaTraining
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import create_train_batches, train_while_improving
    from spacy.util import registry, resolve_dot_names

    if args.gpu_id >= 0:
        spacy.require_gpu(args.gpu_id)
    sync = _device_sync(args.gpu_id >= 0)
    overrides = {"paths.train": str(args.data / "train.spacy"), "paths.dev": str(args.data / "dev.spacy"),
                 "training.max_steps": args.steps, "training.eval_frequency": 10 ** 9, "training.patience": 0}
    for setting in args.set:
        key, _, value = setting.partition("=")
        try:
            overrides[key] = json.loads(value)
        except json.JSONDecodeError:
            overrides[key] = value
    config = util.load_config(args.config, overrides=overrides, interpolate=False)
    schedule = config["training"]["optimizer"].get("learn_rate")
    if isinstance(schedule, dict) and "total_steps" in schedule:
        config["training"]["optimizer"]["learn_rate"]["total_steps"] = args.steps
    started = time.perf_counter()
    nlp = init_nlp(config, use_gpu=args.gpu_id)
    init_seconds = time.perf_counter() - started
    resolved = nlp.config.interpolate()
    T = registry.resolve(resolved["training"], schema=ConfigSchemaTraining)
    train_corpus, = resolve_dot_names(resolved, [T["train_corpus"]])
    steps = train_while_improving(
        nlp, T["optimizer"], create_train_batches(nlp, train_corpus, T["batcher"], T["max_epochs"]),
        lambda: (0.0, {}), dropout=T["dropout"], accumulate_gradient=T["accumulate_gradient"], patience=0,
        max_steps=args.steps, eval_frequency=10 ** 9, exclude=T["frozen_components"],
        annotating_components=T["annotating_components"], before_update=T["before_update"])
    times: List[float] = []
    words: List[int] = []
    last = time.perf_counter()
    for batch, info, _ in steps:
        sync()
        now = time.perf_counter()
        times.append(now - last)
        words.append(sum(len(eg) for eg in batch))
        last = now
    # An evaluation on dev, as spacy train ends with: hc_parser fits its head-probability
    # calibration there, so the saved pipeline writes what a trained one writes (and costs as much).
    dev_corpus, = resolve_dot_names(resolved, [T["dev_corpus"]])
    started = time.perf_counter()
    nlp.evaluate(list(dev_corpus(nlp)))
    eval_seconds = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.out / "model")
    warm = min(args.warmup, max(0, len(times) - 1))
    timed = times[warm:]
    result = {"name": args.name or args.config.stem, "config": str(args.config), "set": args.set,
              "device": _device(args.gpu_id),
              "steps": len(times), "warmup_steps": warm, "init_s": round(init_seconds, 2),
              "eval_s": round(eval_seconds, 2),
              "warmup_s": round(sum(times[:warm]), 2), "timed_steps": len(timed),
              "s_per_100_steps": round(100 * sum(timed) / max(1, len(timed)), 2),
              # the median step, against a one-off stall among the timed steps (a numba kernel
              # compiled for the first time on a fresh machine, a cupy kernel built by NVRTC)
              "median_step_s": round(float(statistics.median(timed)) if timed else 0.0, 4),
              "step_s": [round(t, 4) for t in times],
              "words_per_s": round(sum(words[warm:]) / max(sum(timed), 1e-9), 1),
              "model": str(args.out / "model")}
    (args.out / "train.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result), flush=True)


def _device(gpu_id: int) -> str:
    if gpu_id < 0:
        return "CPU"
    try:
        import cupy

        name = cupy.cuda.runtime.getDeviceProperties(gpu_id)["name"]
        return f"GPU {gpu_id} ({name.decode() if isinstance(name, bytes) else name})"
    except Exception:  # the name is decoration only
        return f"GPU {gpu_id}"


def _device_sync(gpu: bool):
    if not gpu:
        return lambda: None
    import cupy

    return cupy.cuda.runtime.deviceSynchronize


def table(args: argparse.Namespace) -> None:
    """Issue 38's table from ``RESULTS_DIR/results.jsonl`` (what ``gpu_check.sh`` records)."""
    path = args.results / "results.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    parses = [r for r in records if r["kind"] == "parse"]
    trains = [r for r in records if r["kind"] == "train"]
    print("\n| where | hc_parser words/s | spaCy parser words/s | ratio | hc_parser UAS/LAS | spaCy UAS/LAS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for result in parses:
        rows = {row["parser"]: row for row in result["rows"]}
        peer = rows.get("spacy_parser")
        for name, row in rows.items():
            if name == "spacy_parser" or peer is None:
                continue
            where = result["key"] if name == "hc_parser" else f"{result['key']}, {name}"
            print(f"| {result.get('device', '?')} ({where}) | {row['words_per_sec']:,.0f} | "
                  f"{peer['words_per_sec']:,.0f} | **{row['ratio']:.2f}x** | {100 * row['dep_uas']:.2f}/"
                  f"{100 * row['dep_las']:.2f} | {100 * peer['dep_uas']:.2f}/{100 * peer['dep_las']:.2f} |")
    print("\n| training | device | s per 100 steps | median step s | steps timed (after warm-up) | warm-up s | init s "
          "| words/s |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in trains:
        median = f"{r['median_step_s']:.3f}" if "median_step_s" in r else "-"
        print(f"| {r['name']} | {r['device']} | {r['s_per_100_steps']:.2f} | {median} | {r['timed_steps']} (after "
              f"{r['warmup_steps']}) | {r['warmup_s']:.1f} | {r['init_s']:.1f} | {r['words_per_s']:,.0f} |")
    for gpu in (r for r in trains if r["device"] != "CPU"):
        base = gpu["name"].replace("_torch", "")
        cpu = _first(r for r in trains if r["name"] == base and r["device"] == "CPU")
        if cpu:
            print(f"{gpu['name']}: training on {gpu['device']} {cpu['s_per_100_steps'] / gpu['s_per_100_steps']:.2f}x "
                  f"as fast as {base} on one CPU thread")
    if not records:
        print("(no results yet)")


def _first(items) -> Optional[Dict]:
    return next(iter(items), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("config", type=Path)
    t.add_argument("--data", type=Path, required=True, help="folder with train.spacy and dev.spacy")
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--gpu-id", type=int, default=-1)
    t.add_argument("--steps", type=int, default=200)
    t.add_argument("--warmup", type=int, default=20)
    t.add_argument("--name", default="")
    t.add_argument("--set", action="append", default=[], help="SECTION.KEY=VALUE config override")
    r = sub.add_parser("table")
    r.add_argument("results", type=Path)
    args = parser.parse_args()
    train(args) if args.command == "train" else table(args)


if __name__ == "__main__":
    sys.exit(main())
