"""Where parse time (and training-step time) goes, on the current device, grouped.

    OMP_NUM_THREADS=1 python benchmarks/profile_parse.py training/RUN/hc_parser/model-best \\
        --gold corpus/RUN/test.conllu [--gpu-id 0] [--repeats 3] [--batch-size 256] [--limit N] \\
        [--train corpus/RUN/train.spacy --train-steps 50] [--cprofile 25] [--json out.json]
        [--threads N] [--override SECTION.KEY=VALUE ...]

Parsing: ``nlp.pipe`` over the gold file's words, one Doc per gold sentence with its start preset
(``.conllu``: as ``evaluation.harness``; ``.spacy``: each doc's sentences), one untimed warm-up on
the first 50 sentences, then ``--repeats`` timed runs; the table shows the last run. ``--train-steps
N``: N calls of ``nlp.update`` (batches of about 1,000 gold words from ``--train``, a ``.spacy``
file; dropout 0.2) after two untimed ones.

Each group's time is exclusive (a group inside another is not counted twice): the model's layers by
their refs (``tok2vec``, the encoder's context layer ``BiLSTM``, ``encoder`` for cutting spans out,
each scorer; in training also their backward passes), ``host transfer`` (every ``ops.to_numpy``),
``pruning`` (candidate heads and factor triples), and the component's steps (``decoding``, ``label
scores`` (the label scorer's call and its transfer; the scorer's own time is ``label_scorer``),
``labels``, ``head probabilities``, ``margins``, ``label probabilities``, ``writing Docs``, the
``loss``, the ``optimizer``), found by name in ``spacy_hcparse`` at run time: steps that are not
there in this version of the code are listed as not found and their time lands in ``other``
(everything untimed: spaCy's pipe loop, making Docs, Python glue). On a GPU (``--gpu-id``) every
timer synchronizes the device first, so a kernel's time lands in the group that launched it (this
costs a little throughput). ``--cprofile N`` also prints cProfile's top N functions by own time, of
the parse and of the training steps (its overhead inflates Python-heavy groups); ``--callers REGEX``
adds who calls the functions REGEX matches (e.g. ``"core.array"``: who makes device arrays). ``--override SECTION.KEY=VALUE`` (repeatable) loads the
pipeline with that config value changed (the value parsed as JSON, else a string), e.g.
``components.hc_parser.model.context.kernel="thinc"`` (the BiLSTM's kernel).
"""
import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path
from typing import Any, Callable, Dict, List

import spacy
from spacy.tokens import Doc, DocBin
from thinc.api import require_gpu

# (module, attribute, group): functions called by their global name in that module.
GB, GP = "spacy_hcparse.graph.graph_batch", "spacy_hcparse.graph.graph_parser"
FUNCTIONS = [
    ("spacy_hcparse.graph.graph_model", "prune_batch", "pruning"),
    ("spacy_hcparse.graph.decoding", "decode_eisner_batch", "decoding"),
    (GP, "span_arcs", "decoding"),
    (GP, "tree_label_scores", "label scores"),
    (GP, "span_parses", "parses (other)"),
    (GB, "decode_eisner_batch", "decoding"),
    (GB, "head_margins_batch", "margins"),
    (GB, "head_probabilities", "head probabilities"),  # imported from graph.calibration
    (GB, "apply_knots", "head probabilities"),
    (GB, "chosen_label_probs", "label probabilities"),
]
# (method of the hc_parser component, group).
METHODS = [
    ("decode_spans", "decoding"), ("label_trees", "labels"),
    ("label_spans", "parses (other)"),
    ("set_annotations", "writing Docs"), ("finish_update", "optimizer"), ("batch_gold", "gold (training)"),
]
# Groups printed first, in this order (others follow by time).
ORDER = ["tok2vec", "encoder", "BiLSTM", "context", "arc_scorer", "sibling_scorer", "grand_scorer", "label_scorer",
         "label_encoder", "start_scorer", "tag scorers", "tag_heads", "host transfer", "pruning", "decoding",
         "label scores", "labels", "head probabilities", "margins", "label probabilities", "parses (other)",
         "writing Docs", "loss", "optimizer"]


class Timers:
    """Exclusive wall time per group: entering a group pauses the one it runs inside."""

    def __init__(self, sync: Callable[[], None]) -> None:
        self.sync = sync
        self.seconds: Dict[str, float] = defaultdict(float)
        self.calls: Dict[str, int] = defaultdict(int)
        self.stack: List[str] = []
        self.last = 0.0

    def _switch(self) -> float:
        self.sync()
        now = time.perf_counter()
        if self.stack:
            self.seconds[self.stack[-1]] += now - self.last
        return now

    @contextmanager
    def group(self, name: str):
        self.last = self._switch()
        self.stack.append(name)
        self.calls[name] += 1
        try:
            yield
        finally:
            self.last = self._switch()
            self.stack.pop()

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()

    def wrap(self, name: str, fn: Callable) -> Callable:
        def timed(*args, **kwargs):
            with self.group(name):
                return fn(*args, **kwargs)

        timed.__wrapped__ = fn
        return timed


def device_sync(gpu: bool) -> Callable[[], None]:
    """A function that waits for the device's queued work (a no-op on CPU)."""
    if not gpu:
        return lambda: None
    syncs = []
    try:
        import cupy

        syncs.append(cupy.cuda.runtime.deviceSynchronize)
    except ImportError:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            syncs.append(torch.cuda.synchronize)
    except ImportError:
        pass
    return lambda: [s() for s in syncs] and None


def instrument(nlp, timers: Timers) -> List[str]:
    """Wrap the model's layers, the ops' ``to_numpy``, the component's steps and the functions of
    ``FUNCTIONS`` in timers; returns what was not found."""
    pipe = nlp.get_pipe("hc_parser")
    model = pipe.model
    missing = []
    for ref in model.ref_names:
        node = model.get_ref(ref)
        group = "tag scorers" if ref.startswith("tag_scorer") else ref
        _wrap_layer(node, group, timers)
    if model.has_ref("encoder") and model.get_ref("encoder").layers:
        _wrap_layer(model.get_ref("encoder").layers[0], "BiLSTM", timers)
    for ops in {id(node.ops): node.ops for node in model.walk()}.values():
        ops.to_numpy = timers.wrap("host transfer", ops.to_numpy)
    for method, group in METHODS:
        if hasattr(pipe, method):
            setattr(pipe, method, timers.wrap(group, getattr(pipe, method)))
    loss = getattr(pipe, "loss", None)
    if loss is not None:
        pipe.loss = _TimedCall(loss, timers.wrap("loss", loss))
    found = set()
    for module_name, attr, group in FUNCTIONS:
        try:
            module = import_module(module_name)
        except ImportError:
            continue
        if hasattr(module, attr):
            setattr(module, attr, timers.wrap(group, getattr(module, attr)))
            found.add(attr)
    missing += [attr for _, attr, _ in FUNCTIONS if attr not in found]
    missing += [m for m, _ in METHODS if not hasattr(pipe, m)]
    return sorted(set(missing))


class _TimedCall:
    """``target`` with its calls timed (its attributes, e.g. a loss's ``factors``, unchanged)."""

    def __init__(self, target, timed) -> None:
        self._target = target
        self._timed = timed

    def __call__(self, *args, **kwargs):
        return self._timed(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._target, name)


def _wrap_layer(node, group: str, timers: Timers) -> None:
    """Time ``node``'s forward pass under ``group`` and its backward pass under ``group
    backward`` (thinc runs every layer through ``node._func(node, X, is_train)``)."""
    forward = node._func
    if getattr(forward, "_profiled", False):
        return

    def timed(model, X, is_train):
        with timers.group(group):
            Y, backprop = forward(model, X, is_train)
        return Y, timers.wrap(f"{group} backward", backprop)

    timed._profiled = True
    node._func = timed


def input_docs(nlp, gold: Path, limit: int) -> Callable[[], List[Doc]]:
    """A function making fresh input Docs: gold words, one per gold sentence, start preset."""
    if gold.suffix == ".conllu":
        from spacy_hcparse.conllu import read_conllu
        from spacy_hcparse.evaluation.ud import input_doc

        sentences = list(read_conllu(gold))[: limit or None]
        return lambda: [input_doc(nlp, s) for s in sentences]
    rows = []
    for doc in DocBin().from_disk(gold).get_docs(nlp.vocab):
        for sent in doc.sents:
            rows.append(([t.text for t in sent], [bool(t.whitespace_) for t in sent]))
    rows = rows[: limit or None]
    return lambda: [Doc(nlp.vocab, words=w, spaces=s, sent_starts=[True] + [False] * (len(w) - 1)) for w, s in rows]


def training_batches(nlp, path: Path, steps: int, words: int = 1000):
    """``steps`` + 2 batches of about ``words`` gold words (gold tokens, as the configs train)."""
    from spacy.training import Corpus

    examples = list(Corpus(str(path), gold_preproc=True)(nlp))
    batches, batch, size = [], [], 0
    for eg in examples * (1 + (steps + 2) * words // max(1, sum(len(e) for e in examples))):
        batch.append(eg)
        size += len(eg)
        if size >= words:
            batches.append(batch)
            batch, size = [], 0
            if len(batches) == steps + 2:
                break
    return batches


def report(title: str, timers: Timers, total: float, words: int, missing: List[str]) -> Dict:
    seconds = dict(timers.seconds)
    accounted = sum(seconds.values())
    seconds["other"] = max(0.0, total - accounted)
    names = [n for n in ORDER if n in seconds] + sorted((n for n in seconds if n not in ORDER and n != "other"),
                                                       key=lambda n: -seconds[n]) + ["other"]
    print(f"\n{title}: {total:.3f} s, {words} words, {words / total:,.0f} words/s")
    print(f"  {'group':<28}{'seconds':>9}{'share':>8}{'calls':>8}")
    for name in names:
        print(f"  {name:<28}{seconds[name]:9.3f}{100 * seconds[name] / total:7.1f}%{timers.calls.get(name, 0):8d}")
    if missing:
        print(f"  (not found in this version, so not timed: {', '.join(missing)})")
    return {"seconds": total, "words": words, "groups": seconds, "calls": dict(timers.calls)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path, help="a trained pipeline with hc_parser")
    parser.add_argument("--gold", type=Path, required=True, help=".conllu or .spacy with gold words")
    parser.add_argument("--gpu-id", type=int, default=-1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--limit", type=int, default=0, help="first N sentences only")
    parser.add_argument("--train", type=Path, default=None, help=".spacy file for --train-steps")
    parser.add_argument("--train-steps", type=int, default=0)
    parser.add_argument("--cprofile", type=int, default=0, help="also print cProfile's top N functions (parse, and training)")
    parser.add_argument("--callers", default="", help="with --cprofile: also who calls the functions this regex matches")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=1, help="numba threads of the host work")
    parser.add_argument("--override", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="load the pipeline with this config value changed (repeatable)")
    args = parser.parse_args()
    if args.gpu_id >= 0:
        require_gpu(args.gpu_id)
    nlp = spacy.load(args.model, config=config_overrides(args.override))
    pipe = nlp.get_pipe("hc_parser")
    pipe.threads = args.threads
    device = "GPU %d" % args.gpu_id if args.gpu_id >= 0 else "CPU"
    print(f"{args.model} on {device} ({type(pipe.model.ops).__name__}); pipeline {nlp.pipe_names}; host work "
          f"on {args.threads} thread(s)")
    if args.override:
        print("config overrides: " + ", ".join(args.override))
    timers = Timers(device_sync(args.gpu_id >= 0))
    missing = instrument(nlp, timers)
    make_docs = input_docs(nlp, args.gold, args.limit)
    list(nlp.pipe(make_docs()[:50], batch_size=args.batch_size))
    out = {"device": device, "model": str(args.model)}
    total = 0.0
    for _ in range(max(1, args.repeats)):
        docs = make_docs()
        timers.reset()
        profile = cProfile.Profile() if args.cprofile else None
        start = time.perf_counter()
        if profile:
            profile.enable()
        parsed = list(nlp.pipe(docs, batch_size=args.batch_size))
        if profile:
            profile.disable()
        timers.sync()
        total = time.perf_counter() - start
    words = sum(len(d) for d in parsed)
    out["parse"] = report(f"parse ({args.repeats} runs, the last shown)", timers, total, words, missing)
    if profile:
        _print_profile(profile, args.cprofile, args.callers)
    if args.train_steps and args.train is not None:
        batches = training_batches(nlp, args.train, args.train_steps)
        optimizer = nlp.resume_training()
        for batch in batches[:2]:
            nlp.update(batch, sgd=optimizer, drop=0.2)
        timers.reset()
        profile = cProfile.Profile() if args.cprofile else None
        start = time.perf_counter()
        if profile:
            profile.enable()
        for batch in batches[2:]:
            nlp.update(batch, sgd=optimizer, drop=0.2)
        timers.sync()
        if profile:
            profile.disable()
        total = time.perf_counter() - start
        words = sum(len(eg) for batch in batches[2:] for eg in batch)
        out["train"] = report(f"training, {len(batches) - 2} steps of ~1,000 words "
                              f"({100 * total / max(1, len(batches) - 2):.1f} s per 100 steps)",
                              timers, total, words, missing)
        if profile:
            _print_profile(profile, args.cprofile, args.callers)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


def config_overrides(specs: List[str]) -> Dict[str, Any]:
    """``spacy.load``'s config overrides from ``SECTION.KEY=VALUE`` (the value parsed as JSON, else
    kept as a string), as ``benchmarks/parser_vs_spacy.py``'s ``--override`` without the name."""
    out: Dict[str, Any] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not key or not sep:
            raise SystemExit(f"--override {spec!r}: expected SECTION.KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _print_profile(profile: cProfile.Profile, top: int, callers: str = "") -> None:
    """cProfile's ``top`` functions by own time; with ``callers`` (a regular expression), also
    who calls the functions it matches, and how often."""
    stream = io.StringIO()
    stats = pstats.Stats(profile, stream=stream).sort_stats("tottime")
    stats.print_stats(top)
    print("\ncProfile, by own time:")
    print("\n".join(line for line in stream.getvalue().splitlines()[4:] if line.strip()))
    if callers:
        stream.seek(0)
        stream.truncate()
        stats.print_callers(callers)
        print(f"\ncProfile, callers of {callers!r}:")
        print("\n".join(line for line in stream.getvalue().splitlines() if line.strip() and "Ordered by" not in line))


if __name__ == "__main__":
    sys.exit(main())
