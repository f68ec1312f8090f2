"""Cold start: what a fresh install pays before its first parse, against spaCy's parser, in one run.

Each measurement runs in a fresh Python process with ``NUMBA_CACHE_DIR`` pointed at a folder of
its own: first empty (a fresh install, a new container, a CI job), then again with the cache the
first process left (every later run). A process times, in this order:

- ``load``: ``import spacy`` and ``spacy.load(MODEL)`` (spacy_hcparse comes in through spaCy's
  entry points);
- ``parse``: the README quickstart's first parse and the values it prints (``hc_parse_prob``,
  ``hc_head_prob``);
- ``certified``: ``spacy.load`` with the ``Certified.v1`` decoder, then its first parse;
- ``kbest``: the first ``GraphParser.kbest(span, 3)`` call.

The peer is spaCy's parser pipeline (``--peer``; default: configs/spacy_parser.cfg trained for a
few steps on the sample treebank), loaded and run on the same text in a fresh process: the
``load + parse`` ratios divide by its load + first parse of the same run. Wall seconds and the
child's CPU seconds (user + sys, all threads) are printed, with the load average: on a busy
machine, CPU seconds are the figure to compare. ``--kernels N`` lists the N numba kernels whose
compiling took longest in the cold process (CPU seconds of the compiling thread, callees'
compiling excluded), and ``--json`` keeps every compile with its argument types and step.

With ``--ahead both`` (the default) the cold process runs twice, each with an empty cache of its
own: without compiling ahead (``SPACY_HCPARSE_COMPILE_AHEAD=0``) and with it (``ahead``: a second
process compiles the pipeline's kernels while the first loads and parses; its CPU seconds count in
the ``process`` row, not in the steps'); the warm process reads the first one's cache. ``--ahead
on`` or ``off`` runs one cold process.

Without ``--model`` the README quickstart model is trained first (configs/ewt_fast.cfg, 200 steps
on assets/sample), into ``--work`` (default: a temp dir), which takes a few minutes.

    python benchmarks/cold_start.py --model training/quickstart/model-best --kernels 15
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parent.parent
TEXT = "The dog chased a red ball in the garden. She reads old books at night."
CERTIFIED = {"components": {"hc_parser": {"decoder": {"@misc": "spacy_hcparse.Certified.v1", "time_limit": 1.0}}}}
STEPS = ("load", "parse", "certified", "kbest")
AHEAD = "SPACY_HCPARSE_COMPILE_AHEAD"  # graph.ahead.ENV


class Clock:
    """Wall and CPU seconds (this process, all threads) since the last ``lap``."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self) -> Dict[str, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        lap = {"wall": wall - self.wall, "cpu": cpu - self.cpu}
        self.wall, self.cpu = wall, cpu
        return lap


def kernel_recorder():
    """A numba listener that adds up each dispatcher's own compiling time (CPU seconds of the
    compiling thread, callees excluded), and the argument types it compiled for (``step``: the
    step under way, set by the caller)."""
    from numba.core import event

    class Recorder(event.Listener):
        def __init__(self) -> None:
            self.stack: List[list] = []
            self.own: Dict[str, float] = {}
            self.signatures: Dict[str, int] = {}
            self.step = ""
            self.log: List[list] = []

        def on_start(self, ev) -> None:
            self.stack.append([ev.data["dispatcher"], time.thread_time(), 0.0])

        def on_end(self, ev) -> None:
            dispatcher, start, inner = self.stack.pop()
            spent = time.thread_time() - start
            name = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"
            self.own[name] = self.own.get(name, 0.0) + spent - inner
            self.signatures[name] = self.signatures.get(name, 0) + 1
            parent = self.stack[-1][0].py_func.__qualname__ if self.stack else ""
            self.log.append([self.step, name, spent - inner, str(ev.data["args"]), parent])
            if self.stack:
                self.stack[-1][2] += spent

    recorder = Recorder()
    event.register("numba:compile", recorder)
    return recorder


def child_hc(model: str, out: Path) -> None:
    """The timed steps of one ``hc_parser`` process (see the module docstring)."""
    recorder = kernel_recorder() if os.environ.get("COLD_START_KERNELS") else None
    clock = Clock()
    import spacy

    nlp = spacy.load(model)
    laps = {"load": clock.lap()}
    if recorder:
        recorder.step = "parse"
    doc = nlp(TEXT)
    values = [(sent._.hc_parse_prob, [token._.hc_head_prob for token in sent]) for sent in doc.sents]
    laps["parse"] = clock.lap()
    if recorder:
        recorder.step = "certified"
    certified = spacy.load(model, config=CERTIFIED)
    certified_doc = certified(TEXT)
    laps["certified"] = clock.lap()
    if recorder:
        recorder.step = "kbest"
    trees = nlp.get_pipe("hc_parser").kbest(list(doc.sents)[0], 3)
    laps["kbest"] = clock.lap()
    from spacy_hcparse.graph import ahead  # loaded by now, with the parser

    result = {"laps": laps, "helpers": [list(plan) for plan in ahead._STARTED], "why_not": ahead.why_not(),
              "kernels": recorder.own if recorder else {},
              "signatures": recorder.signatures if recorder else {}, "log": recorder.log if recorder else [],
              "n_trees": len(trees),
              "certified": [s._.hc_certified for s in certified_doc.sents], "values": repr(values)[:80]}
    out.write_text(json.dumps(result))


def child_peer(model: str, out: Path) -> None:
    """Load and first parse of spaCy's parser pipeline."""
    clock = Clock()
    import spacy

    nlp = spacy.load(model)
    laps = {"load": clock.lap()}
    doc = nlp(TEXT)
    [(token.dep_, token.head.i) for token in doc]
    laps["parse"] = clock.lap()
    out.write_text(json.dumps({"laps": laps}))


def run_child(kind: str, model: str, cache: Path, kernels: bool, ahead: bool = True) -> Dict:
    """One fresh process (``ahead``: compiling ahead allowed); its laps, plus its total CPU
    seconds as the OS counts them (with those of the processes it waited for)."""
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), AHEAD: "1" if ahead else "0", "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    if kernels:
        env["COLD_START_KERNELS"] = "1"
    before = os.times()
    start = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--child", kind, model, str(out)], env=env, check=True)
    after = os.times()
    result = json.loads(out.read_text())
    out.unlink()
    result["process"] = {"wall": time.perf_counter() - start,
                         "cpu": (after.children_user - before.children_user)
                         + (after.children_system - before.children_system)}
    return result


def train(work: Path, config: str, name: str, steps: int) -> Path:
    """Train ``config`` on the sample treebank for ``steps`` steps (the README quickstart's recipe)."""
    corpus = work / "corpus"
    if not (corpus / "sample-ud-dev.spacy").exists():
        corpus.mkdir(parents=True, exist_ok=True)
        for split in ("train", "dev"):
            source = REPO / f"assets/sample/sample-ud-{split}.conllu"
            subprocess.run([sys.executable, "-m", "spacy", "convert", str(source), str(corpus), "--converter", "conllu",
                            "-n", "10"], check=True, stdout=subprocess.DEVNULL)
    output = work / name
    print(f"training {config} for {steps} steps into {output} ...", flush=True)
    subprocess.run([sys.executable, "-m", "spacy", "train", str(REPO / config), "--output", str(output),
                    "--paths.train", str(corpus / "sample-ud-train.spacy"),
                    "--paths.dev", str(corpus / "sample-ud-dev.spacy"),
                    "--training.max_steps", str(steps), "--training.eval_frequency", str(max(steps // 4, 1)),
                    *(["--training.optimizer.learn_rate.total_steps", str(steps),
                       "--training.optimizer.learn_rate.warmup_steps", str(max(steps // 10, 1))]
                      if "ewt_fast" in config else [])],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return output / "model-last"


def print_table(runs: Dict[str, Dict], peer: Dict) -> None:
    peer_wall = peer["laps"]["load"]["wall"] + peer["laps"]["parse"]["wall"]
    peer_cpu = peer["laps"]["load"]["cpu"] + peer["laps"]["parse"]["cpu"]
    print(f"\npeer (spaCy parser) load + first parse: {peer_wall:.2f} s wall, {peer_cpu:.2f} s CPU "
          f"(load {peer['laps']['load']['wall']:.2f}, parse {peer['laps']['parse']['wall']:.2f} s wall)")
    header = f"{'cache':<6} {'step':<18} {'wall s':>8} {'CPU s':>8} {'x peer wall':>12} {'x peer CPU':>11}"
    print(header)
    print("-" * len(header))
    for cache, run in runs.items():
        laps = run["laps"]
        rows = [(step, laps[step]["wall"], laps[step]["cpu"]) for step in STEPS]
        rows.insert(2, ("load + parse", laps["load"]["wall"] + laps["parse"]["wall"],
                        laps["load"]["cpu"] + laps["parse"]["cpu"]))
        rows.append(("process", run["process"]["wall"], run["process"]["cpu"]))
        for step, wall, cpu in rows:
            ratio = (f"{wall / peer_wall:12.2f} {cpu / peer_cpu:11.2f}" if step == "load + parse" else "")
            print(f"{cache:<6} {step:<18} {wall:8.2f} {cpu:8.2f} {ratio}")
    warm = runs["warm"]["laps"]
    print(f"warm load + parse minus the peer's: {warm['load']['wall'] + warm['parse']['wall'] - peer_wall:+.2f} s wall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="a trained hc_parser pipeline (default: train the quickstart's)")
    parser.add_argument("--peer", default=None, help="a spaCy parser pipeline (default: train one for a few steps)")
    parser.add_argument("--work", type=Path, default=None, help="where trained models and caches go (default: temp)")
    parser.add_argument("--kernels", type=int, default=0, help="list the N slowest-compiling kernels of the cold run")
    parser.add_argument("--ahead", choices=("both", "on", "off"), default="both",
                        help="cold processes without and with compiling ahead in a second process")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, model, out = args.child
        (child_hc if kind == "hc" else child_peer)(model, Path(out))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="cold_start_"))
    work.mkdir(parents=True, exist_ok=True)
    model = args.model or str(train(work, "configs/ewt_fast.cfg", "quickstart", 200))
    peer_model = args.peer or str(train(work, "configs/spacy_parser.cfg", "spacy_parser", 20))
    cache = Path(tempfile.mkdtemp(prefix="numba_cache_", dir=work))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cores: {os.cpu_count()}", flush=True)
    peer_cache = Path(tempfile.mkdtemp(prefix="numba_cache_", dir=work))
    run_child("peer", peer_model, peer_cache, False)  # spaCy's own first-run costs, paid once, as the hc runs do
    peer = run_child("peer", peer_model, peer_cache, False)
    runs = {}
    if args.ahead in ("both", "off"):
        runs["cold"] = run_child("hc", model, cache, args.kernels > 0, ahead=False)
    if args.ahead in ("both", "on"):
        ahead_cache = cache if args.ahead == "on" else Path(tempfile.mkdtemp(prefix="numba_cache_", dir=work))
        runs["ahead"] = run_child("hc", model, ahead_cache, args.kernels > 0, ahead=True)
    runs["warm"] = run_child("hc", model, cache, False)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print_table(runs, peer)
    print(f"k-best trees: {runs['warm']['n_trees']}; certified: {runs['warm']['certified']}")
    for kind, run in runs.items():
        why = f" ({run['why_not']} at the end)" if run["why_not"] else ""
        print(f"{kind}: helpers started {run['helpers'] or 'none'}{why}")
    for cache_kind in ("cold", "ahead") if args.kernels else ():
        if cache_kind not in runs:
            continue
        log = runs[cache_kind]["log"]
        counts = {step: [entry[2] for entry in log if entry[0] == step] for step in STEPS[1:]}
        print(f"\n{cache_kind}: compiles per step: "
              + ", ".join(f"{step} {len(own_s)} ({sum(own_s):.1f} s)" for step, own_s in counts.items()))
        own = sorted(runs[cache_kind]["kernels"].items(), key=lambda kv: -kv[1])
        print(f"{len(own)} kernels compiled in the {cache_kind} process, {sum(own_s for _, own_s in own):.1f} s "
              f"in all; the {args.kernels} slowest (own seconds, callees excluded):")
        for name, seconds in own[:args.kernels]:
            count = runs[cache_kind]["signatures"][name]
            signatures = f" ({count} signatures)" if count > 1 else ""
            print(f"  {seconds:6.2f}  {name.replace('spacy_hcparse.', '')}{signatures}")
    if args.json:
        summary = {"runs": runs, "peer": peer, "model": model, "peer_model": peer_model}
        args.json.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
