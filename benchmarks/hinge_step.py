"""A training step with each hinge decoder, in turns: Eisner (the shipped configs') against the
batched MST and hill climbing (``configs/ud_nonprojective.cfg``'s training restarts).

    OMP_NUM_THREADS=1 python benchmarks/hinge_step.py MODEL corpus/RUN/train.spacy [--batches 10]
        [--words 1000] [--repeats 3]

``MODEL``: a trained pipeline with ``hc_parser`` (its weights give realistic scores). Batches of
about ``--words`` words (whole docs) from the corpus. Per batch and decoder: the whole update
without an optimizer (scores, gold, loss with the decoder's cost-augmented trees, backprop) and the
hinge's decoding alone (``graph.batch_hinge.hinge_trees``), after one warm-up round; the
decoders take turns batch by batch, ``--repeats`` rounds; printed as seconds per batch (best
round) and as ratios to Eisner's.
"""
import argparse
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_hcparse.graph.decoding import MST, Eisner, HillClimb
from spacy_hcparse.graph.scores import GraphInput
from spacy_hcparse.graph.batch_hinge import hinge_trees

TRAINING_HILL_CLIMB = dict(max_restarts=4, min_restarts=1, converge=2, uniform_share=0.0, temperature=1.0,
                           time_limit=None, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    pipe = nlp.get_pipe("hc_parser")
    docs = list(DocBin().from_disk(args.corpus).get_docs(nlp.vocab))
    batches, batch, words = [], [], 0
    for doc in docs:
        predicted = Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
        batch.append(Example(predicted, doc))
        words += len(doc)
        if words >= args.words:
            batches.append(batch)
            batch, words = [], 0
        if len(batches) == args.batches:
            break
    decoders = {"eisner": Eisner(), "mst": MST(), "hill_climb": HillClimb(**TRAINING_HILL_CLIMB)}
    step = {name: [float("inf")] * len(batches) for name in decoders}
    hinge = {name: [float("inf")] * len(batches) for name in decoders}
    for round_ in range(args.repeats + 1):
        for b, examples in enumerate(batches):
            for name, decoder in decoders.items():
                pipe.loss.decoder = decoder
                start = time.perf_counter()
                pipe.update(examples, sgd=None, drop=0.1)
                elapsed = time.perf_counter() - start
                gold = pipe.batch_gold(examples)
                keep = [None if g is None else g[0] for g in gold.gold.spans]
                scores = pipe.model.predict(GraphInput([eg.predicted for eg in examples], gold.spans, keep,
                                                       decoder.factors)).to_numpy(pipe.model.ops)
                start = time.perf_counter()
                hinge_trees(scores, gold.gold.spans, decoder)
                decode = time.perf_counter() - start
                if round_:  # round 0 warms up (numba's cache, first allocations)
                    step[name][b] = min(step[name][b], elapsed)
                    hinge[name][b] = min(hinge[name][b], decode)
    n_words = sum(len(eg.reference) for examples in batches for eg in examples)
    print(f"{len(batches)} batches, {n_words} words; best of {args.repeats} rounds, decoders in turns")
    base_step, base_hinge = sum(step["eisner"]), sum(hinge["eisner"])
    for name in decoders:
        s, h = sum(step[name]), sum(hinge[name])
        print(f"{name:>11}: step {s / len(batches):.3f} s/batch ({s / base_step:.2f}x Eisner's)  "
              f"hinge decoding {h / len(batches):.4f} s/batch ({h / base_hinge:.2f}x Eisner's)")


if __name__ == "__main__":
    main()
