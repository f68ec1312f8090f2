"""Speed of the trained ``UDTokenizer`` on raw text, as a ratio to spaCy's rule tokenizer
(``spacy.blank(LANG).tokenizer``) measured in the same run.

The gold file's text is cut into documents of ``--group`` sentences (as ``raw_text.py``); both
tokenizers run ``tokenizer.pipe`` over all of them, taking turns for ``--repeats`` rounds after an
untimed pass over all of them. Words/s: gold syntactic words per second, median of the rounds; the ratio is the
median of the per-round ratios. ``--dump FILE`` writes the UDTokenizer's output (per document: the
words, the multiword token ranges, the sentence starts and, where it gives them, the sentence-start
hints) as JSON, to compare two versions of the code on the same weights. ``--profile`` prints a
cProfile of one more pass.

``--pipeline PATH``: the tokenizer's share of a parsing pipeline's raw-text time. The saved
pipeline at PATH runs ``nlp.pipe`` on the texts with its own tokenizer (the peer) and with the
UD tokenizer in its place (``ud_tokenizer_for``: the shipped setting, so a pipeline whose parser
segments gets the tokenizer's sentence-start hints), taking turns with the two tokenizers above,
of which the UD tokenizer is then the pipeline's (its ``pipe`` in batches, as
``raw_text.tokenized`` gives the pipeline its Docs). It prints the pipeline's words/s with the UD
tokenizer as a ratio to the peer (``pipeline x peer``) and the UD tokenizer's time as a share of
the UD pipeline's (``share``), each the median of the per-round values. ``--flat``: paragraph breaks as spaces (text without line
breaks), as ``raw_text.py --flat``.

``--baseline DIR``: another version's ``spacy_hcparse/tokenizer`` package (a copy, e.g. ``git archive
REV spacy_hcparse/tokenizer | tar -x -C /tmp/rev``, DIR ``/tmp/rev/spacy_hcparse/tokenizer``), imported
in the same process as ``spacy_hcparse.tokenizer_baseline`` (the rest of the package is this
one's) and run in the same turns, on the same weights and settings: each of its figures is
printed beside this code's, with the per-round ratio of their times (wall and process CPU).

    OMP_NUM_THREADS=1 python benchmarks/tokenizer_speed.py --gold ../shared/treebanks/UD_English-EWT/en_ewt-ud-test.conllu \\
        --tokenizer training/tokenizer/ewt --lang en [--group 0 --pipeline training/fast/model-best --repeats 9]
"""
import argparse
import cProfile
import importlib.util
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Callable, Dict, List

import spacy
from spacy.util import registry

from spacy_hcparse.evaluation.conll18 import read_treebank
from spacy_hcparse.evaluation.harness import speed_ratio
from spacy_hcparse.evaluation.raw_text import raw_documents, tokenized
from spacy_hcparse.names import MULTIWORD_TOKENS, SENT_START_HINTS
from spacy_hcparse.tokenizer import UDTokenizer, ud_tokenizer_for, use_ud_tokenizer
from spacy_hcparse.tokenizer.tokenizer import TOKENIZER_NAME

BASELINE_MODULE = "spacy_hcparse.tokenizer_baseline"


def import_baseline(path: Path) -> ModuleType:
    """The tokenizer package at ``path`` as ``BASELINE_MODULE``; spaCy's registry keeps this
    code's ``UDTokenizer`` factory."""
    ours = registry.tokenizers.get(TOKENIZER_NAME)
    spec = importlib.util.spec_from_file_location(BASELINE_MODULE, path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[BASELINE_MODULE] = module
    spec.loader.exec_module(module)
    registry.tokenizers.register(TOKENIZER_NAME, func=ours)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--tokenizer", type=Path, required=True, help="a trained UDTokenizer file")
    parser.add_argument("--lang", default="en", help="the peer: spacy.blank(LANG).tokenizer")
    parser.add_argument("--group", type=int, default=10, help="sentences per document (0: per gold document)")
    parser.add_argument("--flat", action="store_true", help="paragraph breaks as spaces, not blank lines")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--pipeline", type=Path, default=None, help="a saved pipeline: the tokenizer's share of its time")
    parser.add_argument("--baseline", type=Path, default=None, help="another version's tokenizer package, run in turns")
    parser.add_argument("--dump", type=Path, default=None)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if os.environ.get("OMP_NUM_THREADS") != "1":
        print("note: OMP_NUM_THREADS is not 1")
    docs = raw_documents(read_treebank(args.gold), args.group, paragraphs=not args.flat)
    texts = [d.text for d in docs]
    n_words = sum(d.n_words for d in docs)
    load = os.getloadavg()[0]
    versions = {"ud": sys.modules["spacy_hcparse.tokenizer"]}
    if args.baseline is not None:
        versions["ud baseline"] = import_baseline(args.baseline)
    uds, ud_nlps = {}, {}
    for name, version in versions.items():
        if args.pipeline is None:
            uds[name] = version.UDTokenizer(spacy.blank("xx").vocab).from_disk(args.tokenizer)
        else:
            ud_nlps[name] = nlp = spacy.load(args.pipeline)
            uds[name] = version.use_ud_tokenizer(nlp, version.ud_tokenizer_for(nlp, args.tokenizer)).tokenizer
    ud = uds["ud"]
    peer = spacy.blank(args.lang).tokenizer
    size = args.batch_size
    runs: Dict[str, Callable[[List[str]], list]] = {}
    for name, tokenizer in uds.items():
        runs[name] = lambda xs, tokenizer=tokenizer: list(tokenizer.pipe(xs, batch_size=size))
    runs["peer"] = lambda xs: list(peer.pipe(xs, batch_size=size))
    if args.pipeline is not None:
        peer_nlp = spacy.load(args.pipeline)
        for name, nlp in ud_nlps.items():
            runs[f"pipeline {name}"] = lambda xs, nlp=nlp: list(nlp.pipe(tokenized(nlp, xs, size), batch_size=size))
        runs["pipeline peer"] = lambda xs: list(peer_nlp.pipe(xs, batch_size=size))
    for run in runs.values():  # an untimed pass: numba's cache, the vocabulary's new words, first allocations
        run(texts)
    seconds: Dict[str, List[float]] = {name: [] for name in runs}
    cpu: Dict[str, List[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, run in runs.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            run(texts)
            seconds[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    speeds = {name: [n_words / t for t in values] for name, values in seconds.items()}
    print(f"{args.gold.name}: {len(texts)} documents of {args.group or 'a gold document'} sentences, {n_words} words"
          + ("; paragraph breaks as spaces" if args.flat else "; paragraph breaks as blank lines")
          + f"; load {load:.2f} -> {os.getloadavg()[0]:.2f}; batch size {args.batch_size}; {args.repeats} rounds in turns")
    for name, values in speeds.items():
        print(f"{name:<22}{statistics.median(values):12.0f} words/s  rounds {[round(v) for v in values]}")
    for name in uds:
        print(f"{name} / spacy.blank({args.lang!r}).tokenizer: {speed_ratio(speeds[name], speeds['peer']):.3f}")
        if args.pipeline is not None:
            ratios = [a / b for a, b in zip(speeds[f"pipeline {name}"], speeds["pipeline peer"])]
            shares = [a / b for a, b in zip(seconds[name], seconds[f"pipeline {name}"])]
            print(f"{name}: pipeline x peer: {statistics.median(ratios):.3f} (rounds {min(ratios):.3f}-{max(ratios):.3f})")
            print(f"{name}: share: {statistics.median(shares):.4f} (rounds {min(shares):.4f}-{max(shares):.4f}) "
                  f"of the UD pipeline's time is its tokenizer's")
    if args.baseline is not None:
        for prefix in ("", "pipeline ") if args.pipeline is not None else ("",):
            wall = [a / b for a, b in zip(seconds[f"{prefix}ud"], seconds[f"{prefix}ud baseline"])]
            process = [a / b for a, b in zip(cpu[f"{prefix}ud"], cpu[f"{prefix}ud baseline"])]
            print(f"{prefix}ud time / {prefix}ud baseline time: {statistics.median(wall):.3f} "
                  f"(rounds {min(wall):.3f}-{max(wall):.3f}; process CPU time {statistics.median(process):.3f})")
    if args.dump:
        out = []
        for doc in ud.pipe(texts, batch_size=args.batch_size):
            row = {"words": [t.text_with_ws for t in doc], "mwt": [list(r) for r in doc._.get(MULTIWORD_TOKENS)],
                   "sent_starts": [t.i for t in doc if t.is_sent_start]}
            if doc._.get(SENT_START_HINTS) is not None:
                row["hints"] = list(doc._.get(SENT_START_HINTS))
            out.append(row)
        args.dump.write_text(json.dumps(out, ensure_ascii=False))
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _doc in ud.pipe(texts, batch_size=args.batch_size):
            pass
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
