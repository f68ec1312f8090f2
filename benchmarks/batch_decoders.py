"""The batched host work (``decoders.batch``, ``decoders.batch_marginals``) against the per-span loop.

    OMP_NUM_THREADS=1 python benchmarks/batch_decoders.py [--gold corpus/RUN/test.conllu] [--spans 2000]
        [--labels 50] [--threads 1 2] [--repeats 5]

Spans with the word counts of ``--gold``'s sentences (a CoNLL-U file; else EWT-like lengths drawn
from a geometric distribution, mean 12), random normal arc scores pruned as ``hc_parser`` prunes
them (each word's 6 best heads and the root; the others ``-inf``), sibling factors on the triples
the candidates allow (spans of 2 to 100 words, as ``higher_order_max_length``), ``--labels`` label
scores per word and four label classes. Each step runs as the component ran it (one Python call
per span: ``decode_eisner`` on the dense cube + ``tree_score``, ``constrained_labels``,
``tree_probabilities``, the margins in numpy) and batched (one call per batch, each ``--threads``
setting); best of ``--repeats``, after a warm-up. Random scores measure speed only.
"""
import argparse
import time
from pathlib import Path

import numpy as np

from spacy_hcparse.decoders import constrained_labels, decode_eisner, tree_probabilities, tree_score
from spacy_hcparse.decoders.batch import cut, decode_eisner_batch, labels_batch, pack
from spacy_hcparse.decoders.batch_marginals import head_margins_batch, tree_probabilities_batch
from spacy_hcparse.graph.parses import margins


def lengths_of(gold, count, rng):
    if gold is None:
        return np.minimum(rng.geometric(1 / 12, size=count), 100)
    lengths = [0]
    for line in Path(gold).read_text(encoding="utf8").splitlines():
        if not line.strip():
            lengths.append(0)
        elif line.split("\t")[0].isdigit():
            lengths[-1] += 1
    lengths = np.minimum([n for n in lengths if n], 100)
    return lengths[:count] if count else lengths


def make_spans(lengths, n_labels, rng):
    """Per span: pruned arcs, full arcs, sibling (triples, values) or None."""
    from spacy_hcparse.graph.pruning import candidate_heads, sibling_triples

    spans = []
    for n in lengths:
        full = rng.normal(size=(n + 1, n + 1))
        mask = candidate_heads(full, 6)
        pruned = np.where(mask, full, -np.inf)
        sib = None
        if 1 < n <= 100:
            triples = sibling_triples(mask).astype(np.int64)
            sib = (triples, rng.normal(size=len(triples)))
        spans.append((pruned, full, sib))
    label_class = np.full(n_labels, -1, dtype=np.int64)
    label_class[:8] = [0, 0, 1, 1, 2, 2, 3, 3]
    return spans, rng.normal(size=(int(sum(lengths)), n_labels)), label_class


def dense(size, sib):
    cube = np.zeros((size, size, size))
    cube[sib[0][:, 0], sib[0][:, 1], sib[0][:, 2]] = sib[1]
    return cube


def per_span(spans, label_scores, label_class):
    """The component's loop: seconds per step."""
    times = {}
    t0 = time.perf_counter()
    trees = []
    for pruned, _, sib in spans:
        cube = None if sib is None else dense(len(pruned), sib)
        heads = decode_eisner(pruned, cube)
        tree_score(heads, pruned, cube)
        trees.append(heads)
    times["decode"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    start = 0
    for heads in trees:
        n = len(heads) - 1
        constrained_labels(heads, label_scores[start: start + n], label_class)
        start += n
    times["labels"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for (_, full, _), heads in zip(spans, trees):
        if len(heads) > 1:
            tree_probabilities(heads, full)
    times["probabilities"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for (_, full, _), heads in zip(spans, trees):
        if len(heads) > 1:
            margins(full, heads)
    times["margins"] = time.perf_counter() - t0
    return times, trees


def batched(spans, label_scores, label_class, threads):
    """One call per step over the batch, packing included: seconds per step."""
    times = {}
    t0 = time.perf_counter()
    arcs, sizes = pack([p for p, _, _ in spans])
    counts = np.array([-1 if s is None else len(s[0]) for _, _, s in spans], dtype=np.int64)
    triples = np.concatenate([s[0] for _, _, s in spans if s is not None] + [np.zeros((0, 3), np.int64)])
    values = np.concatenate([s[1] for _, _, s in spans if s is not None] + [np.zeros(0)])
    heads, _ = decode_eisner_batch(arcs, sizes, counts, triples, values, threads=threads)
    times["decode"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    labels_batch(heads, sizes, label_scores, label_class, threads=threads)
    times["labels"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    full, _ = pack([f for _, f, _ in spans])
    times["pack full arcs"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tree_probabilities_batch(heads, sizes, full, threads=threads)
    times["probabilities"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    head_margins_batch(heads, sizes, full, threads=threads)
    times["margins"] = time.perf_counter() - t0
    return times, cut(heads, sizes)


def best(runs):
    return {key: min(run[key] for run in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, default=None)
    parser.add_argument("--spans", type=int, default=2000, help="first N sentences (0: all of --gold)")
    parser.add_argument("--labels", type=int, default=50)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    lengths = lengths_of(args.gold, args.spans, rng)
    spans, label_scores, label_class = make_spans(lengths, args.labels, rng)
    small = spans[:20], label_scores[: sum(len(p) - 1 for p, _, _ in spans[:20])], label_class
    per_span(*small)
    for threads in args.threads:
        batched(*small, threads)
    loop = best([per_span(spans, label_scores, label_class)[0] for _ in range(args.repeats)])
    _, trees = per_span(spans, label_scores, label_class)
    rows = {"per span": loop}
    for threads in args.threads:
        runs = [batched(spans, label_scores, label_class, threads) for _ in range(args.repeats)]
        assert all(a.tolist() == b.tolist() for a, b in zip(runs[0][1], trees)), "batched heads differ"
        rows[f"batched, {threads} thread(s)"] = best([times for times, _ in runs])
    words = int(sum(lengths))
    print(f"{len(spans)} spans, {words} words, {args.labels} labels; best of {args.repeats}, milliseconds")
    steps = ["decode", "labels", "pack full arcs", "probabilities", "margins"]
    print(f"{'':<22}" + "".join(f"{s:>15}" for s in steps) + f"{'total':>10}{'words/s':>11}")
    for name, times in rows.items():
        total = sum(times.values())
        print(f"{name:<22}" + "".join(f"{1000 * times.get(s, 0.0):15.1f}" for s in steps)
              + f"{1000 * total:10.1f}{words / total:11.0f}")


if __name__ == "__main__":
    main()
