"""Decoders on real factor scores of a trained hc_parser: certificates, exactness, speed,
local optima, calibration of arc probabilities.

    python benchmarks/decoders_real.py --scores /work/runs/scores/ewt [--split test]
        [--sections certify,hill_climb,speed,local_optima,calibration] [--limit 0]

Input format (written by the component's score dump; one ``.npz`` per split, named
``PREFIX_{dev,test}.npz``, optionally sharded as ``PREFIX_{split}_{k}.npz``). Per sentence ``i``
(its index in the split's CoNLL-U file; sentences the component splits into several spans are
left out and listed in ``skipped``):

* ``arc_full_i``: float64 (n+1, n+1), the unpruned first-order scores ``arc[h, m]`` (row 0 the
  root; column 0 and the diagonal unused);
* ``mask_i``: bool (n+1, n+1), the candidate arcs kept by pruning (each word's ``top_k`` best heads
  and the root);
* ``sib_triples_i`` int64 (T, 3) ``(h, s, m)`` and ``sib_vals_i`` float64 (T,): the scored
  sibling factors (``s == h`` for the closest modifier); ``grand_triples_i`` ``(g, h, m)`` and
  ``grand_vals_i`` likewise; the dense cubes hold these values and 0 elsewhere;
* ``gold_i``: int64 (n+1,), gold heads, ``gold[0] == -1``;
* ``n_sentences`` (int) and ``skipped`` (int64 array) once per file.

The decoders see ``arc = where(mask, arc_full, -inf)`` (pruned arcs absent) and the dense cubes,
as the component hands them over. Sections:

* ``certify``: dual decomposition alone (``decode_dual``'s engine, ``--max-iter``): share of
  sentences certified within k iterations, by length; then branch and bound (default caps) from
  the dual's state; then ``decode_certified`` (hill climbing, dominance pruning, search over the
  surviving candidates, dual decomposition, branch and bound): share proven and by which step.
* ``hill_climb``: ``decode_hill_climb`` (MST tree as first start, as the component does) with its
  default settings and with ``--hill-climb-options``, against the optimum proven on ALL sentences
  by a reference run (``decode_certified`` with large caps); unproven sentences are reported
  with their gap.
* ``speed``: words/sec (CPU time of this process, best of ``--repeat`` rounds in which the
  decoders alternate: the measure least disturbed by other processes) of hill climbing, dual
  decomposition, certified decoding, MST (arc scores only) and Eisner (arc + sibling) on the same
  arrays.
* ``local_optima``: ``count_local_optima`` on the first-order scores, with Zhang et al.'s (2014)
  summary (share of sentences with <= 21, <= 121, <= 2000 optima) under both definitions, pruned
  and unpruned; and how often first-order hill climbing (no MST start) finds the MST optimum.
* ``calibration``: reliability table and expected calibration error (10 equal-width bins) of the
  first-order arc marginals (``arc_marginals`` on ``arc_full``) against gold heads of the
  ``--calibration-split`` (dev): for each word the probability of its most probable head, and
  every arc's probability; at temperature 1 (``arc / T``), and with a temperature fitted on the
  first half (once by the gold heads' log-likelihood, once by the top-head ECE) and reported on
  the second half.
"""
import argparse
import glob
import json
import os
import sys
import time
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from spacy_hcparse.decoders import (  # noqa: E402
    arc_marginals, count_local_optima, decode_certified, decode_dual, decode_eisner,
    decode_hill_climb, decode_mst, tree_score,
)
from spacy_hcparse.decoders.absent import with_floor  # noqa: E402
from spacy_hcparse.decoders.branch_bound import branch_and_bound  # noqa: E402
from spacy_hcparse.decoders._checks import zero_unused  # noqa: E402
from spacy_hcparse.decoders.dual import DualEngine  # noqa: E402

BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 40), (41, 10**6))
COMPONENT_HC = {"max_restarts": 50, "min_restarts": 5, "converge": 3, "uniform_share": 0.0}
REFERENCE = dict(hill_climb_options={"max_restarts": 300, "min_restarts": 100, "converge": 100},
                 max_nodes=5000, node_iter=100, max_depth=80, search_nodes=200000,
                 time_limit=60.0)


class Sentence:
    """One sentence's arrays as the decoders see them."""

    def __init__(self, files, i):
        self.index = i
        self.full = _get(files, f"arc_full_{i}")
        self.mask = _get(files, f"mask_{i}")
        self.gold = _get(files, f"gold_{i}")
        size = self.full.shape[0]
        self.arc = np.where(self.mask, self.full, -np.inf)
        self.sib = _cube(size, _get(files, f"sib_triples_{i}"), _get(files, f"sib_vals_{i}"))
        self.grand = _cube(size, _get(files, f"grand_triples_{i}"), _get(files, f"grand_vals_{i}"))

    @property
    def n(self) -> int:
        return self.full.shape[0] - 1


def _get(files, key):
    for f in files:
        if key in f.files:
            return f[key]
    raise KeyError(key)


def _cube(size, triples, values):
    cube = np.zeros((size,) * 3)
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    if len(triples):
        cube[triples[:, 0], triples[:, 1], triples[:, 2]] = values
    return cube


def load(prefix: str, split: str, limit: int = 0):
    paths = sorted(glob.glob(f"{prefix}_{split}.npz") + glob.glob(f"{prefix}_{split}_*.npz"))
    if not paths:
        sys.exit(f"no score file {prefix}_{split}.npz")
    files = [np.load(p) for p in paths]
    total = int(sum(int(f["n_sentences"]) for f in files if "n_sentences" in f.files) or 0)
    keys = sorted({int(k.rsplit("_", 1)[1]) for f in files for k in f.files if k.startswith("gold_")})
    if limit:
        keys = keys[:limit]
    return [Sentence(files, i) for i in keys], total


def bucket_of(n):
    for lo, hi in BUCKETS:
        if lo <= n <= hi:
            return f"{lo}-{hi}" if hi < 10**6 else f"{lo}+"


def table(title, header, rows):
    print(f"\n{title}")
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    print("  " + "  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  " + "  ".join(str(x).rjust(w) for x, w in zip(row, widths)))


def pct(x):
    return f"{100 * x:.2f}%"


# ----------------------------------------------------------------------------- sections
def dual_then_branch(s, max_iter):
    """(certified by the dual alone, iterations, proven after branch and bound from it)."""
    allowed = with_floor(zero_unused(s.arc), s.sib, s.grand)
    engine = DualEngine.build(allowed, s.sib, s.grand)
    if engine is None:
        return True, 0, True
    engine.run(max_iter)
    if engine.certified:
        return True, engine.iterations, True
    found = branch_and_bound(engine, engine.best_heads, engine.score)
    return False, engine.iterations, found.proven


def section_certify(sents, args):
    iters, cert, lengths, branched = [], [], [], []
    for s in sents:
        certified, its, proven = dual_then_branch(s, args.max_iter)
        iters.append(its if certified else np.inf)
        cert.append(certified)
        branched.append(proven)
        lengths.append(s.n)
    iters, cert, lengths = np.array(iters), np.array(cert), np.array(lengths)
    branched = np.array(branched)
    marks = [k for k in (0, 1, 2, 5, 10, 20, 50, 100, 200, 500) if k <= args.max_iter]
    rows = [[f"<= {k}", pct(np.mean(iters <= k))] for k in marks]
    table(f"dual decomposition alone: certified within k iterations ({len(sents)} sentences; "
          "0 iterations: first-order only, n <= 1, or dominance pruning left one tree)",
          ["iterations", "certified"], rows)
    rows = []
    results = [decode_certified(s.arc, s.sib, s.grand, seed=args.seed) for s in sents]
    proven = np.array([r.certified for r in results])
    for lo, hi in BUCKETS:
        sel = (lengths >= lo) & (lengths <= hi)
        if sel.any():
            rows.append([bucket_of(lo), int(sel.sum()), pct(cert[sel].mean()),
                         pct(branched[sel].mean()), pct(proven[sel].mean())])
    rows.append(["all", len(sents), pct(cert.mean()), pct(branched.mean()), pct(proven.mean())])
    table("proven optimal, by length", ["length", "sentences", f"dual ({args.max_iter} it)",
                                        "dual + branch and bound", "decode_certified"], rows)
    methods = Counter(r.method or "unproven" for r in results)
    table("decode_certified: what proved each sentence", ["method", "sentences", "share"],
          [[m, c, pct(c / len(sents))] for m, c in methods.most_common()])
    gaps = [r.gap for r in results if not r.certified]
    if gaps:
        print(f"  unproven: {len(gaps)}, gaps {np.round(sorted(gaps), 6).tolist()}")
    print(f"  hill climbing's own tree was the answer on {pct(np.mean([r.hill_climb_exact for r in results]))}"
          f" (default settings); branch and bound nodes: max {max(r.nodes for r in results)}")


def reference_optima(sents, args):
    """(score, upper bound, proven) per sentence from a generous certified run."""
    out = []
    for s in sents:
        r = decode_certified(s.arc, s.sib, s.grand, seed=args.seed + 1, **REFERENCE)
        out.append((r.score, r.upper_bound, r.certified))
    return np.array(out, dtype=float)


def section_hill_climb(sents, args, reference):
    opt, upper, proven = reference[:, 0], reference[:, 1], reference[:, 2].astype(bool)
    print(f"\nreference optima: {int(proven.sum())}/{len(sents)} proven "
          f"({pct(proven.mean())}); unproven gaps: "
          f"{np.round(upper[~proven] - opt[~proven], 6).tolist()}")
    settings = [("defaults", {}), ("component (old)", COMPONENT_HC)]
    settings += [(f"option set {k + 1}", o) for k, o in enumerate(args.hill_climb_options)]
    rows = []
    lengths = np.array([s.n for s in sents])
    for name, options in settings:
        scores = []
        start = time.process_time()
        for s in sents:
            init = decode_mst(s.arc)
            scores.append(decode_hill_climb(s.arc, s.sib, s.grand, seed=args.seed, init=init,
                                            **options).score)
        cpu = time.process_time() - start
        scores = np.array(scores)
        exact = scores >= opt - 1e-7 * (1 + np.abs(opt))
        miss = (opt - scores)[proven & ~exact]
        long = lengths > 20
        rows.append([name, json.dumps(options), pct(exact[proven].mean()),
                     pct(exact[proven & long].mean()) if (proven & long).any() else "-",
                     len(miss), f"{miss.max():.3f}" if len(miss) else "0",
                     f"{np.median(miss):.3f}" if len(miss) else "0",
                     f"{lengths.sum() / cpu:.0f}"])
    table("hill climbing against the proven optimum (MST tree as first start)",
          ["settings", "options", "exact (proven)", "exact n>20", "misses", "max gap",
           "median gap", "words/s"], rows)


def best_cpu(runs, sents, repeat):
    """Best CPU time per run over ``repeat`` rounds; the runs alternate within each round, so a
    slow spell of the machine hits them alike."""
    for fn in runs.values():
        fn(sents[:5])  # compile / warm up
    best = {name: np.inf for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            start = time.process_time()
            fn(sents)
            best[name] = min(best[name], time.process_time() - start)
    return best


def section_speed(sents, args):
    words = sum(s.n for s in sents)
    hc = args.speed_hill_climb_options
    runs = {
        "hill climbing (incl. MST start)": lambda ss: [
            decode_hill_climb(s.arc, s.sib, s.grand, seed=args.seed, init=decode_mst(s.arc), **hc)
            for s in ss],
        "certified (hill climbing + proof)": lambda ss: [
            decode_certified(s.arc, s.sib, s.grand, seed=args.seed, hill_climb_options=hc or None)
            for s in ss],
        f"dual decomposition ({args.max_iter} it)": lambda ss: [
            decode_dual(s.arc, s.sib, s.grand, max_iter=args.max_iter) for s in ss],
        "MST (arc only)": lambda ss: [decode_mst(s.arc) for s in ss],
        "Eisner (arc + sib)": lambda ss: [decode_eisner(s.arc, s.sib) for s in ss],
    }
    cpu = best_cpu(runs, sents, args.repeat)
    rows = [[name, f"{words / cpu[name]:.0f}", f"{1e3 * cpu[name] / len(sents):.3f}"]
            for name in runs]
    ratio = cpu["certified (hill climbing + proof)"] / cpu["hill climbing (incl. MST start)"]
    table(f"speed: {len(sents)} sentences, {words} words, CPU time (best of {args.repeat}); "
          f"hill climbing options {json.dumps(hc)}", ["decoder", "words/s", "ms/sentence"], rows)
    print(f"  certified / hill climbing time: {ratio:.2f}")


def section_local_optima(sents, args):
    rows = []
    lengths = np.array([s.n for s in sents])
    for name, single, pruned in [("single root, unpruned", True, False),
                                 ("single root, pruned", True, True),
                                 ("Zhang et al.: root free, unpruned", False, False),
                                 ("Zhang et al.: root free, pruned", False, True)]:
        counts = np.array([count_local_optima(s.arc if pruned else s.full, max_count=args.max_count,
                                              single_root=single) for s in sents])
        row = [name, pct(np.mean(counts <= 21)), pct(np.mean(counts <= 121)),
               pct(np.mean(counts <= 2000))]
        for lo, hi in BUCKETS[:4]:
            sel = (lengths >= lo) & (lengths <= hi)
            row.append(f"{np.median(counts[sel]):.0f}" if sel.any() else "-")
        row.append(int(np.sum(counts >= args.max_count)))
        rows.append(row)
    table(f"local optima of first-order hill climbing (cap {args.max_count}; capped counts are "
          "lower bounds)", ["definition", "<=21", "<=121", "<=2000", "median 1-10", "11-20",
                            "21-30", "31-40", "capped"], rows)
    found = []
    for s in sents:
        best = tree_score(decode_mst(s.arc), s.arc)
        found.append(decode_hill_climb(s.arc, seed=args.seed).score >= best - 1e-9)
    found = np.array(found)
    print(f"  first-order hill climbing (random starts only, default settings) finds the MST "
          f"optimum: {pct(found[lengths <= 15].mean())} up to 15 words, "
          f"{pct(found[lengths > 15].mean())} above")


def _reliability(conf, correct, bins=10):
    conf, correct = np.asarray(conf), np.asarray(correct, dtype=float)
    idx = np.minimum((conf * bins).astype(int), bins - 1)
    ece, rows = 0.0, []
    for b in range(bins):
        sel = idx == b
        if sel.any():
            ece += sel.mean() * abs(conf[sel].mean() - correct[sel].mean())
            rows.append([f"{b / bins:.1f}-{(b + 1) / bins:.1f}", int(sel.sum()),
                         f"{conf[sel].mean():.3f}", f"{correct[sel].mean():.3f}"])
    return ece, rows


def _head_stats(sents, temperature):
    """(top-head confidences, their correctness, all arcs' probabilities, gold indicators, gold
    log-likelihood)."""
    conf, correct, probs, gold_ind, loglik = [], [], [], [], 0.0
    for s in sents:
        marg = arc_marginals(s.full / temperature)
        cols = np.arange(1, s.n + 1)
        top = marg[:, 1:].argmax(axis=0)
        conf.extend(marg[top, cols])
        correct.extend(top == s.gold[1:])
        usable = np.ones_like(marg, dtype=bool)
        usable[:, 0] = False
        np.fill_diagonal(usable, False)
        probs.extend(marg[usable])
        indicator = np.zeros_like(marg, dtype=bool)
        indicator[s.gold[1:], cols] = True
        gold_ind.extend(indicator[usable])
        loglik += float(np.log(np.maximum(marg[s.gold[1:], cols], 1e-300)).sum())
    return conf, correct, probs, gold_ind, loglik


def _fit_temperature(sents, objective):
    """The temperature in [0.5, 3] (steps of 0.02) that maximises the gold heads' marginal
    log-likelihood (``"nll"``) or minimises the top-head ECE (``"ece"``) on ``sents``."""
    best, best_t = np.inf, 1.0
    for t in np.arange(0.5, 3.0001, 0.02):
        conf, correct, _, _, loglik = _head_stats(sents, t)
        value = -loglik if objective == "nll" else _reliability(conf, correct)[0]
        if value < best:
            best, best_t = value, float(t)
    return best_t


def section_calibration(args):
    sents, _ = load(args.scores, args.calibration_split, args.limit)
    half = len(sents) // 2
    fit, held = sents[:half], sents[half:]
    by_nll, by_ece = _fit_temperature(fit, "nll"), _fit_temperature(fit, "ece")
    for name, data, t in [(f"{args.calibration_split}, T = 1", sents, 1.0),
                          (f"{args.calibration_split} second half, T = 1", held, 1.0),
                          (f"{args.calibration_split} second half, T = {by_nll:.2f} (gold-head "
                           "log-likelihood fitted on the first half)", held, by_nll),
                          (f"{args.calibration_split} second half, T = {by_ece:.2f} (top-head "
                           "ECE fitted on the first half)", held, by_ece)]:
        conf, correct, probs, gold_ind, _ = _head_stats(data, t)
        ece, rows = _reliability(conf, correct)
        ece_all, _ = _reliability(probs, gold_ind)
        table(f"calibration of P(most probable head), {name}: ECE {ece:.4f} "
              f"(all arcs' probabilities: ECE {ece_all:.4f}); accuracy {np.mean(correct):.4f}, "
              f"mean confidence {np.mean(conf):.4f}", ["bin", "words", "confidence", "accuracy"],
              rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scores", required=True, help="file prefix: PREFIX_{split}.npz")
    parser.add_argument("--split", default="test")
    parser.add_argument("--calibration-split", default="dev")
    parser.add_argument("--sections", default="certify,hill_climb,speed,local_optima,calibration")
    parser.add_argument("--limit", type=int, default=0, help="first N sentences only (0: all)")
    parser.add_argument("--max-iter", type=int, default=200)
    parser.add_argument("--max-count", type=int, default=100000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hill-climb-options", type=json.loads, action="append", default=[],
                        help="JSON dict of decode_hill_climb options to compare (repeatable)")
    parser.add_argument("--speed-hill-climb-options", type=json.loads, default={},
                        help="hill climbing options of the speed section (default: defaults)")
    args = parser.parse_args()
    sections = args.sections.split(",")
    sents, total = load(args.scores, args.split, args.limit)
    print(f"{args.scores}_{args.split}: {len(sents)} sentences of {total}, "
          f"{sum(s.n for s in sents)} words; pruned arcs absent (-inf)")
    if "certify" in sections:
        section_certify(sents, args)
    if "hill_climb" in sections:
        section_hill_climb(sents, args, reference_optima(sents, args))
    if "speed" in sections:
        section_speed(sents, args)
    if "local_optima" in sections:
        section_local_optima(sents, args)
    if "calibration" in sections:
        section_calibration(args)


if __name__ == "__main__":
    main()
