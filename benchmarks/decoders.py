"""Decoder speed table: sentences/sec on random score matrices, JIT/import costs, MST vs ufal.

Run: ``python benchmarks/decoders.py [--sizes 10 25 50 100] [--repeat 50] [--seconds 1.0] [--cold]
[--top-k 6]``

Random scores measure speed only. ``--top-k K`` prunes them as the component does (each word keeps
its K best heads and the root; the other arcs are absent, ``-inf``), which is what the decoders
see in use; without it every arc is a candidate, which hides the cost of ignoring pruning.
Certificates, exactness and speed on real scores of a trained model: ``decoders_real.py``.

* Throughput: each decoder runs on a pool of ``--repeat`` random matrices per length (fewer for
  the (n+1)^3 sibling/grandparent cubes at large n) for about ``--seconds`` (at least one call),
  after one warm-up call; the figure is calls / elapsed time, input validation included.
* ``decode_mst`` is compared with ``ufal.chu_liu_edmonds.chu_liu_edmonds`` (optional ``bench``
  extra) on the same matrices. That function takes ``score_matrix[m, h]`` (dependent, head), NaN for
  forbidden arcs, and does NOT enforce a single root child, so it solves an easier problem; its
  input conversion is done before timing.
* Import time of ``spacy_hcparse.decoders`` and the first call of each decoder are measured in a
  fresh subprocess, once with the numba on-disk cache as it is and, with ``--cold``, once more
  with an empty cache directory (true compile time).
* ``decode_hill_climb`` and ``decode_dual`` rows appear when those functions import.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from spacy_hcparse.decoders.eisner import decode_eisner  # noqa: E402
from spacy_hcparse.decoders.mst import decode_mst, mst_kernel  # noqa: E402

CUBE_BUDGET = 1e7  # at most this many cube cells per pool (two cubes of float64: 160 MB)


def optional_decoders():
    """(name, function, needs sib, needs grand) for the decoders written by others, if present."""
    found = []
    try:
        from spacy_hcparse.decoders.hill_climb import decode_hill_climb

        found.append(("hill_climb arc+sib+grand", decode_hill_climb, True, True))
    except (ImportError, AttributeError) as err:
        print(f"(decode_hill_climb unavailable: {err})")
    try:
        from spacy_hcparse.decoders.dual import decode_dual

        found.append(("dual arc+sib+grand", decode_dual, True, True))
    except (ImportError, AttributeError) as err:
        print(f"(decode_dual unavailable: {err})")
    try:
        from spacy_hcparse.decoders.certified import decode_certified

        found.append(("certified arc+sib+grand", decode_certified, True, True))
    except (ImportError, AttributeError) as err:
        print(f"(decode_certified unavailable: {err})")
    return found


def ufal_function():
    try:
        from ufal.chu_liu_edmonds import chu_liu_edmonds
    except ImportError:
        return None
    return chu_liu_edmonds


def to_ufal(arc):
    """Our arc[h, m] -> ufal's score_matrix[m, h], NaN where no arc may go (into root, self loops)."""
    scores = np.ascontiguousarray(arc.T, dtype=np.float64)
    scores[0, :] = np.nan
    np.fill_diagonal(scores, np.nan)
    return scores


TOP_K = 0  # set by --top-k: 0 keeps every arc


def pool(n, count, seed, cube):
    rng = np.random.default_rng(seed)
    size = n + 1
    if cube:
        count = max(2, min(count, int(CUBE_BUDGET // size**3)))
    return [
        (
            pruned(rng.normal(size=(size, size)), TOP_K),
            rng.normal(size=(size,) * 3) if cube else None,
            rng.normal(size=(size,) * 3) if cube else None,
        )
        for _ in range(count)
    ]


def pruned(arc, top_k):
    """``arc`` with every arc outside each word's ``top_k`` best heads and the root at -inf."""
    if not top_k:
        return arc
    size = arc.shape[0]
    keep = np.zeros((size, size), dtype=bool)
    for m in range(1, size):
        column = arc[:, m].copy()
        column[m] = -np.inf
        keep[np.argsort(-column, kind="stable")[:top_k], m] = True
        keep[0, m] = True
        keep[m, m] = False
    return np.where(keep, arc, -np.inf)


def throughput(call, inputs, seconds):
    """Calls per second over the pool (one warm-up call first, at least one timed call)."""
    call(*inputs[0])
    done = 0
    start = time.perf_counter()
    while True:
        call(*inputs[done % len(inputs)])
        done += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def table(rows, header):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = "  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths))))


def fmt(rate):
    return "-" if rate is None else (f"{rate:,.0f}" if rate >= 10 else f"{rate:.2f}")


def speed_table(sizes, repeat, seconds):
    decoders = [
        ("mst (decode_mst)", lambda a, s, g: decode_mst(a), False),
        ("mst_kernel (no checks)", lambda a, s, g: mst_kernel(a), False),
        ("eisner 1st order", lambda a, s, g: decode_eisner(a), False),
        ("eisner + sib", lambda a, s, g: decode_eisner(a, s), True),
    ]
    for name, fn, use_sib, use_grand in optional_decoders():
        decoders.append((name, _optional_call(fn, use_sib, use_grand), True))
    rows = []
    for name, call, cube in decoders:
        row = [name]
        for n in sizes:
            try:
                row.append(fmt(throughput(call, pool(n, repeat, n, cube), seconds)))
            except Exception as err:  # a concurrently written decoder may fail: report, go on
                row.append(f"error: {type(err).__name__}")
        rows.append(row)
        print(f"  done: {name}", file=sys.stderr)
    pruning = f"top {TOP_K} heads + root kept, other arcs -inf" if TOP_K else "no pruning"
    print(f"\nThroughput (sentences/sec, random N(0,1) scores, {pruning}, validation included)\n")
    table(rows, ["decoder"] + [f"n={n}" for n in sizes])


def _optional_call(fn, use_sib, use_grand):
    def call(arc, sib, grand):
        return fn(arc, sib if use_sib else None, grand if use_grand else None)

    return call


def ufal_table(sizes, repeat, seconds):
    chu_liu_edmonds = ufal_function()
    if chu_liu_edmonds is None:
        print("\nufal.chu_liu_edmonds not installed (pip install 'spacy-hcparse[bench]'): skipped")
        return
    rows = []
    for n in sizes:
        mats = [a for a, _, _ in pool(n, repeat, 1000 + n, False)]
        conv = [to_ufal(a) for a in mats]
        ours = throughput(lambda a: decode_mst(a), [(a,) for a in mats], seconds)
        kern = throughput(lambda a: mst_kernel(a), [(a,) for a in mats], seconds)
        theirs = throughput(lambda s: chu_liu_edmonds(s), [(s,) for s in conv], seconds)
        multi = sum(int(np.sum(np.asarray(chu_liu_edmonds(s)[0])[1:] == 0) > 1) for s in conv)
        rows.append([f"n={n}", fmt(ours), fmt(kern), fmt(theirs), f"{ours / theirs:.2f}x",
                     f"{multi}/{len(conv)}"])
    print("\ndecode_mst vs ufal.chu_liu_edmonds (same matrices; ufal does NOT enforce a single root)\n")
    table(rows, ["length", "decode_mst/s", "mst_kernel/s", "ufal/s", "ours/ufal", "ufal multi-root"])


STARTUP_SCRIPT = r"""
import json, time
t0 = time.perf_counter()
import spacy_hcparse.decoders
t1 = time.perf_counter()
import numpy as np
from spacy_hcparse.decoders.mst import decode_mst
from spacy_hcparse.decoders.eisner import decode_eisner
from spacy_hcparse.decoders.local_optima import count_local_optima
rng = np.random.default_rng(0)
arc = rng.normal(size=(11, 11)); sib = rng.normal(size=(11, 11, 11)); grand = rng.normal(size=(11, 11, 11))
calls = [("decode_mst", lambda: decode_mst(arc)), ("decode_eisner", lambda: decode_eisner(arc)),
         ("decode_eisner + sib", lambda: decode_eisner(arc, sib)),
         ("count_local_optima", lambda: count_local_optima(arc))]
try:
    from spacy_hcparse.decoders.hill_climb import decode_hill_climb
    calls.append(("decode_hill_climb", lambda: decode_hill_climb(arc, sib, grand)))
except (ImportError, AttributeError):
    pass
try:
    from spacy_hcparse.decoders.dual import decode_dual
    calls.append(("decode_dual", lambda: decode_dual(arc, sib, grand)))
except (ImportError, AttributeError):
    pass
out = {"import spacy_hcparse.decoders": t1 - t0}
for name, call in calls:
    t = time.perf_counter(); call(); first = time.perf_counter() - t
    t = time.perf_counter(); call(); second = time.perf_counter() - t
    out[name] = (first, second)
print(json.dumps(out))
"""


def startup_table(cold):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    runs = [("cache as is", None)]
    if cold:
        runs.append(("empty cache", tempfile.mkdtemp(prefix="numba_cold_")))
    results = {}
    for label, cache_dir in runs:
        env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        if cache_dir:
            env["NUMBA_CACHE_DIR"] = cache_dir
        proc = subprocess.run([sys.executable, "-c", STARTUP_SCRIPT], env=env, capture_output=True,
                              text=True, cwd=root)
        if proc.returncode != 0:
            print(f"startup run ({label}) failed:\n{proc.stderr[-2000:]}")
            continue
        results[label] = json.loads(proc.stdout.strip().splitlines()[-1])
    if not results:
        return
    labels = list(results)
    names = list(results[labels[0]])
    rows = []
    for name in names:
        row = [name]
        for label in labels:
            val = results[label].get(name)
            if isinstance(val, list):
                row.append(f"{val[0] * 1e3:,.1f} ms (then {val[1] * 1e3:.2f} ms)")
            else:
                row.append("-" if val is None else f"{val * 1e3:,.1f} ms")
        rows.append(row)
    print("\nStart-up in a fresh process: import time, first call (JIT compile or cache load), second call\n")
    table(rows, ["step (n=10)"] + labels)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50, 100])
    parser.add_argument("--repeat", type=int, default=50, help="random matrices per length")
    parser.add_argument("--seconds", type=float, default=1.0, help="time budget per table cell")
    parser.add_argument("--cold", action="store_true", help="also time compiling with an empty numba cache")
    parser.add_argument("--top-k", type=int, default=0, help="prune like the component (0: no pruning)")
    args = parser.parse_args(argv)
    global TOP_K
    TOP_K = args.top_k
    startup_table(args.cold)
    speed_table(args.sizes, args.repeat, args.seconds)
    ufal_table(args.sizes, args.repeat, args.seconds)


if __name__ == "__main__":
    main()
