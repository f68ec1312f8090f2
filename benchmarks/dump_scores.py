"""Dump a trained hc_parser's factor scores on gold sentences, for ``benchmarks/decoders_real.py``.

    python benchmarks/dump_scores.py MODEL GOLD.conllu OUT.npz [--limit 0] [--batch-size 128]

Every sentence of GOLD (gold words, one Doc per sentence with its start preset) goes through the
component's ``score_spans`` (the scores ``predict`` decodes), and per sentence ``i`` the file
gets ``arc_full_i`` (the unpruned (n+1, n+1) arc scores, float64), ``mask_i`` (the candidate
arcs), ``sib_triples_i``/``sib_vals_i`` and ``grand_triples_i``/``grand_vals_i`` (every
higher-order factor the model scores, whatever decoder its config names) and ``gold_i`` (the gold
heads, ``gold[0] == -1``); ``n_sentences`` and ``skipped`` (sentences longer than the model's
``max_length``, which are parsed in several spans) once. The format is documented in
``benchmarks/decoders_real.py``.
"""
import argparse
from pathlib import Path

import numpy as np
import spacy
from tqdm import tqdm

from spacy_hcparse.conllu import read_conllu
from spacy_hcparse.evaluation import input_doc
from spacy_hcparse.graph.scores import FACTORS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("gold", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    pipe = nlp.get_pipe("hc_parser")
    sentences = list(read_conllu(args.gold))[: args.limit or None]
    out, skipped = {}, []
    for start in tqdm(range(0, len(sentences), args.batch_size), desc="scores", unit="batch", mininterval=1.0):
        batch = list(enumerate(sentences[start: start + args.batch_size], start=start))
        keep = [(i, s) for i, s in batch if len(s.words) <= pipe.max_length]
        skipped += [i for i, s in batch if len(s.words) > pipe.max_length]
        docs = [input_doc(nlp, s) for _, s in keep]
        scores = pipe.score_spans(docs, [[(0, len(doc))] for doc in docs], factors=FACTORS)
        for k, (i, sentence) in enumerate(keep):
            out[f"arc_full_{i}"] = scores.arc(k)
            out[f"mask_{i}"] = scores.masks[k]
            out[f"sib_triples_{i}"] = np.asarray(scores.sib_triples(k), dtype=np.int64)
            out[f"sib_vals_{i}"] = np.asarray(scores.sib[k], dtype=np.float64)
            out[f"grand_triples_{i}"] = np.asarray(scores.grand_triples(k), dtype=np.int64)
            out[f"grand_vals_{i}"] = np.asarray(scores.grand[k], dtype=np.float64)
            out[f"gold_{i}"] = np.array([-1] + [w.head for w in sentence.words], dtype=np.int64)
    out["n_sentences"] = np.array(len(sentences))
    out["skipped"] = np.array(skipped, dtype=np.int64)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.output, **out)
    print(f"{args.output}: {len(sentences) - len(skipped)} sentences, {len(skipped)} longer than {pipe.max_length} left out")


if __name__ == "__main__":
    main()
