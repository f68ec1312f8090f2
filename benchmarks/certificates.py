"""Why dual decomposition leaves sentences uncertified and where hill climbing misses the optimum,
on dumped factor scores of a trained hc_parser (``benchmarks/dump_scores.py``).

    python benchmarks/certificates.py --scores PREFIX [PREFIX ...] [--split dev] [--limit 0]

``PREFIX``: a dump without its ``_{split}.npz`` ending (format in ``benchmarks/decoders_real.py``);
several prefixes are pooled. The decoders see the arrays as the component hands them over (pruned
arcs ``-inf``, dense cubes) with ``Dual.v1``'s and ``HillClimb.v2``'s settings (the MST tree as
hill climbing's first start). Printed:

* dual decomposition alone (``max_nodes=0``) and as ``Dual.v1`` ships (branch and bound after the
  iterations): certified share, and per sentence the alone run leaves open its length, iterations,
  whether the time cap stopped it, its gap (bound - best tree) and whether its best tree was
  already optimal (against a reference run with large caps); CPU time of ``Dual.v1`` over the
  dual alone (decoders only, the two taking turns, best of 3 rounds);
* hill climbing's exact share over the sentences the reference run proves, and per miss its
  length, gap, restarts, hits of its best score and the restart cap it had.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from decoders_real import load  # noqa: E402

from spacy_hcparse.decoders import decode_dual, decode_hill_climb, decode_mst  # noqa: E402
from spacy_hcparse.decoders.hill_climb import default_max_restarts  # noqa: E402
from spacy_hcparse.graph.decoding import make_dual, make_hill_climb_v2  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scores", nargs="+", required=True)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    sentences = [s for prefix in args.scores for s in load(prefix, args.split, args.limit)[0]]
    dual = make_dual().options
    alone_options = {**dual, "max_nodes": 0}
    hill = make_hill_climb_v2().options
    for s in sentences[:5]:  # compile every kernel before timing
        decode_dual(s.arc, s.sib, s.grand, **dual)
    rows = []
    for s in sentences:
        alone = decode_dual(s.arc, s.sib, s.grand, **alone_options)
        shipped = decode_dual(s.arc, s.sib, s.grand, **dual)
        ref = decode_dual(s.arc, s.sib, s.grand, max_iter=500, max_nodes=5000, time_limit=20.0)
        climb = decode_hill_climb(s.arc, s.sib, s.grand, init=decode_mst(s.arc), **hill)
        rows.append((s, alone, shipped, ref, climb))
    n = len(rows)
    print(f"{n} sentences ({args.split}); Dual.v1 {dual}")
    print(f"certified: dual alone {share(r[1].certified for r in rows)}, Dual.v1 {share(r[2].certified for r in rows)}, "
          f"reference {share(r[3].certified for r in rows)}")
    print("left open by the dual alone: n, iterations, time-capped, gap, best tree optimal, Dual.v1 certified (nodes)")
    for s, alone, shipped, ref, _ in rows:
        if not alone.certified:
            optimal = ref.certified and alone.score >= ref.score - tol(ref.score)
            print(f"  {s.n:4d} {alone.iterations:4d} {alone.time_capped!s:5} {alone.upper_bound - alone.score:9.4f} "
                  f"{optimal!s:5} {shipped.certified!s:5} ({shipped.nodes})")
    ratio = turns(sentences, dual, alone_options)
    print(f"CPU, Dual.v1 / dual alone: {ratio:.3f}")
    proven = [r for r in rows if r[3].certified]
    misses = [r for r in proven if r[4].score < r[3].score - tol(r[3].score)]
    print(f"hill climbing exact on {share(r[4].score >= r[3].score - tol(r[3].score) for r in proven)} of "
          f"{len(proven)} proven; misses: n, gap, restarts, hits, cap")
    for s, _, _, ref, climb in misses:
        print(f"  {s.n:4d} {ref.score - climb.score:9.4f} {climb.restarts:4d} {climb.hits:4d} {default_max_restarts(s.n):4d}")


def turns(sentences, first, second, rounds=3):
    best = {0: float("inf"), 1: float("inf")}
    for r in range(rounds):
        for k in ((0, 1) if r % 2 == 0 else (1, 0)):
            options = first if k == 0 else second
            started = time.process_time()
            for s in sentences:
                decode_dual(s.arc, s.sib, s.grand, **options)
            best[k] = min(best[k], time.process_time() - started)
    return best[0] / best[1]


def share(flags) -> str:
    flags = list(flags)
    return f"{100 * sum(flags) / max(len(flags), 1):.2f}%"


def tol(value: float) -> float:
    return 1e-6 * max(1.0, abs(value))


if __name__ == "__main__":
    main()
