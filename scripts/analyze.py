"""Local optima of first-order hill climbing on the trained hc_parser's arc scores, by length.

    python scripts/analyze.py MODEL GOLD.conllu OUTPUT.json [--limit 500] [--max-count 10000] [--any-root]

For each gold sentence (gold words, one Doc each) the model's (n+1, n+1) arc block is taken from
the component's ``score_spans`` and ``spacy_hcparse.decoders.count_local_optima`` counts the single-root trees
that no single head change improves (``--any-root``: Zhang et al.'s 2014 definition instead, any
number of words on the root). Counts are capped at ``--max-count`` (read "at least").
"""
import argparse
import json
from pathlib import Path

import numpy as np
import spacy
from tqdm import tqdm
from wasabi import msg

from spacy_hcparse.conllu import read_conllu
from spacy_hcparse.decoders import count_local_optima
from spacy_hcparse.evaluation import input_doc
from spacy_hcparse.segment import sentence_spans

BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 40), (41, 60), (61, 10**6))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("gold", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--max-count", type=int, default=10000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--any-root", action="store_true", help="Zhang et al.'s definition: any number of root children")
    args = parser.parse_args()
    if not (args.model / "model-best").exists() and not (args.model / "config.cfg").exists():
        msg.fail(f"no trained hc_parser pipeline at {args.model}", exits=1)
    model_dir = args.model / "model-best" if (args.model / "model-best").exists() else args.model
    nlp = spacy.load(model_dir)
    pipe = nlp.get_pipe("hc_parser")
    gold = list(read_conllu(args.gold))[: args.limit or None]
    counts = {}
    for start in tqdm(range(0, len(gold), args.batch_size), desc="local optima", unit="batch", mininterval=1.0):
        docs = [input_doc(nlp, s) for s in gold[start : start + args.batch_size]]
        spans = [sentence_spans(doc, pipe.max_length) for doc in docs]
        for arc in pipe.score_spans(docs, spans, factors=frozenset()).arcs:
            counts.setdefault(arc.shape[0] - 1, []).append(count_local_optima(arc, max_count=args.max_count,
                                                                         single_root=not args.any_root))
    rows = []
    for lo, hi in BUCKETS:
        values = [c for n, cs in counts.items() if lo <= n <= hi for c in cs]
        if values:
            rows.append({
                "length": f"{lo}-{hi}" if hi < 10**6 else f"{lo}+",
                "sentences": len(values),
                "mean": float(np.mean(values)),
                "median": float(np.median(values)),
                "max": int(max(values)),
                "share_single_optimum": float(np.mean([v == 1 for v in values])),
                "capped": int(sum(v >= args.max_count for v in values)),
            })
    result = {"model": str(model_dir), "gold": str(args.gold), "sentences": len(gold), "max_count": args.max_count,
              "single_root": not args.any_root,
              "by_length": rows}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    for row in rows:
        msg.text(f"  length {row['length']:>7}: {row['sentences']:5d} sentences, mean {row['mean']:.1f}, "
                 f"median {row['median']:.0f}, max {row['max']}, single optimum {100 * row['share_single_optimum']:.0f}%")
    msg.good(f"wrote {args.output}")


if __name__ == "__main__":
    main()
