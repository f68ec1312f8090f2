"""Accuracy and speed of trained hc_parser pipelines against spaCy's own parser, in one run.

Every parser sees the same input: gold tokens, one Doc per gold sentence, sentence starts preset.
Scores come from spaCy's Scorer (``dep_uas``/``dep_las``, punctuation dropped). Speed is words/sec
of ``nlp.pipe`` in one process, median of ``--repeats`` runs, and its ratio to the peer.

    python benchmarks/parser_vs_spacy.py --gold ../shared/treebanks/UD_English-EWT/en_ewt-ud-test.conllu \
        --peer training/spacy/model-best --model fast=training/fast/model-best --decoders hill_climb,dual,mst,eisner
"""
import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Dict, List

import numpy as np
import spacy
from spacy.pipeline.dep_parser import parser_score
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.conllu import read_conllu


def gold_examples(nlp, path: Path) -> List[Example]:
    examples = []
    for sent in read_conllu(path):
        words = [t.form for t in sent.tokens]
        heads = [t.head - 1 if t.head > 0 else i for i, t in enumerate(sent.tokens)]
        deps = ["ROOT" if t.head == 0 else t.deprel for t in sent.tokens]
        reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps)
        examples.append(Example(_input_doc(nlp, words), reference))
    return examples


def _input_doc(nlp, words):
    return Doc(nlp.vocab, words=words, sent_starts=[i == 0 for i in range(len(words))])


def run(nlp, examples, repeats: int, batch_size: int):
    """(scores, median words/sec, parsed docs) for ``nlp`` on fresh copies of the inputs."""
    n_words = sum(len(eg.reference) for eg in examples)
    speeds, docs = [], None
    for _ in range(repeats):
        inputs = [_input_doc(nlp, [t.text for t in eg.reference]) for eg in examples]
        start = time.perf_counter()
        docs = list(nlp.pipe(inputs, batch_size=batch_size))
        speeds.append(n_words / (time.perf_counter() - start))
    scored = [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]
    scores = parser_score(scored)  # spaCy's own parser scorer: punctuation dropped
    return scores, statistics.median(speeds), docs


def search_stats(docs_hc, docs_dual) -> Dict[str, float]:
    """Hill climbing against dual decomposition on the same sentences and weights."""
    certified = reached = 0
    gaps = []
    for a, b in zip(docs_hc, docs_dual):
        sent = next(b.sents)
        if sent._.hc_certified:
            certified += 1
            if a._.hc_parse_score >= b._.hc_parse_score - 1e-6:
                reached += 1
        gaps.append(b._.hc_parse_score - a._.hc_parse_score)
    n = max(1, len(docs_hc))
    return {
        "certificate_rate": certified / n,
        "hill_climb_reaches_certified_optimum": reached / max(1, certified),
        "mean_score_gap_dual_minus_hill_climb": float(np.mean(gaps)) if gaps else 0.0,
    }


def decoder_comparison(nlp, examples, decoders: List[str], batch_size: int) -> Dict:
    """Scores of every decoder with the same hc_parser weights, and hill climbing against dual."""
    pipe = nlp.get_pipe("hc_parser")
    default = pipe.cfg["decoder"]
    by_decoder = {}
    for decoder in decoders:
        pipe.cfg["decoder"] = decoder
        s, w, d = run(nlp, examples, 1, batch_size)
        by_decoder[decoder] = {"uas": s["dep_uas"], "las": s["dep_las"], "wps": w, "docs": d}
    pipe.cfg["decoder"] = default
    result = {"per_decoder": {k: {x: v[x] for x in ("uas", "las", "wps")} for k, v in by_decoder.items()}}
    if "hill_climb" in by_decoder and "dual" in by_decoder:
        result["search"] = search_stats(by_decoder["hill_climb"]["docs"], by_decoder["dual"]["docs"])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--peer", type=Path, required=True, help="spaCy pipeline with the built-in parser")
    parser.add_argument("--model", action="append", default=[], help="NAME=PATH of an hc_parser pipeline")
    parser.add_argument("--decoders", default="", help="decoders to score with each hc_parser model's weights")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    peer = spacy.load(args.peer)
    examples = gold_examples(peer, args.gold)
    if args.limit:
        examples = examples[: args.limit]
    rows = []
    peer_scores, peer_wps, _ = run(peer, examples, args.repeats, args.batch_size)
    rows.append({"parser": "spacy_parser", "uas": peer_scores["dep_uas"], "las": peer_scores["dep_las"], "wps": peer_wps})
    extra = {}
    for spec in args.model:
        name, path = spec.split("=", 1)
        nlp = spacy.load(path)
        scores, wps, docs = run(nlp, examples, args.repeats, args.batch_size)
        rows.append({"parser": name, "uas": scores["dep_uas"], "las": scores["dep_las"], "wps": wps})
        if args.decoders and "hc_parser" in nlp.pipe_names:
            extra[name] = decoder_comparison(nlp, examples, args.decoders.split(","), args.batch_size)
    n_words = sum(len(eg.reference) for eg in examples)
    print(f"{args.gold.name}: {len(examples)} sentences, {n_words} words; gold tokens and sentences")
    print(f"{'parser':<16} {'UAS':>7} {'LAS':>7} {'words/s':>9} {'x spaCy':>8}")
    for row in rows:
        row["ratio"] = row["wps"] / peer_wps
        print(f"{row['parser']:<16} {100 * row['uas']:7.2f} {100 * row['las']:7.2f} {row['wps']:9.0f} {row['ratio']:8.2f}")
    for name, comparison in extra.items():
        for decoder, s in comparison["per_decoder"].items():
            print(f"  {name} decoder {decoder:<10} UAS {100 * s['uas']:.2f} LAS {100 * s['las']:.2f} ({s['wps']:.0f} words/s)")
        if "search" in comparison:
            print(f"  {name} search:", json.dumps(comparison["search"]))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "decoders": extra}, indent=2))


if __name__ == "__main__":
    main()
