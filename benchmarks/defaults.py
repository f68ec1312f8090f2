"""What most users train: ``nlp.add_pipe("hc_parser")`` with no config against spaCy's
``nlp.add_pipe("parser")``, both on the same small training set, in one run.

Each pipeline is ``spacy.blank(LANG)`` plus the component with its factory defaults, initialized
on the first ``--train-sentences`` sentences of ``--train`` (one Doc per gold sentence, gold
tokens) and updated for ``--epochs`` epochs in batches of ``--batch-size`` sentences (shuffled
with a fixed seed, no dropout override: each component's defaults). Both are then scored on
``--dev`` with the harness of ``parser_vs_spacy.py`` (gold tokens and sentences, spaCy's
``dep_uas``/``dep_las``; words/sec of ``nlp.pipe`` with the two taking turns for ``--repeats``
rounds, and the ratio to spaCy's: the median of the per-round ratios).

    OMP_NUM_THREADS=1 python benchmarks/defaults.py --train corpus/UD_English-EWT/train.conllu \\
        --dev corpus/UD_English-EWT/dev.conllu
"""
import argparse
import json
import random
import statistics
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import List, Optional

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.conllu import read_conllu
from spacy_hcparse.evaluation import evaluate_gold, gold_doc, interleaved_speeds, speed_ratio


def gold_examples(nlp: Language, path: Path, limit: int) -> List[Example]:
    """One Example per gold sentence: the harness's reference Doc (gold words, heads, labels)
    with the treebank's UPOS added (each component learns what it uses), and the bare words."""
    examples = []
    for sentence in islice(read_conllu(path), limit):
        reference = gold_doc(nlp, sentence)
        for token, word in zip(reference, sentence.words):
            token.pos_ = word.upos
        examples.append(Example(Doc(nlp.vocab, words=[t.text for t in reference]), reference))
    return examples


def train(factory: str, lang: str, train_path: Path, limit: int, epochs: int, batch_size: int, seed: int,
          config: Optional[dict] = None) -> Language:
    spacy.util.fix_random_seed(seed)
    nlp = spacy.blank(lang)
    nlp.add_pipe(factory, config=config or {})
    examples = gold_examples(nlp, train_path, limit)
    optimizer = nlp.initialize(lambda: examples)
    rng = random.Random(seed)
    start = time.process_time()
    for _ in range(epochs):
        rng.shuffle(examples)
        for i in range(0, len(examples), batch_size):
            nlp.update(examples[i:i + batch_size], sgd=optimizer)
    print(f"{factory}: trained in {time.process_time() - start:.0f} CPU-s")
    return nlp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, required=True, help="gold CoNLL-U to train on")
    parser.add_argument("--dev", type=Path, required=True, help="gold CoNLL-U to score on")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--train-sentences", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hc-config", type=json.loads, default=None,
                        help='JSON overrides of hc_parser\'s config, e.g. \'{"decoder": {"@misc": "spacy_hcparse.Eisner.v1"}}\'')
    args = parser.parse_args()

    out = Path(tempfile.mkdtemp(prefix="defaults-"))
    pipelines, scores = {}, {}
    for factory in ("parser", "hc_parser"):
        config = args.hc_config if factory == "hc_parser" else None
        pipelines[factory] = train(factory, args.lang, args.train, args.train_sentences, args.epochs, args.batch_size,
                                   args.seed, config)
        scores[factory], _ = evaluate_gold(pipelines[factory], args.dev, out / f"{factory}.conllu", repeats=1)
    speeds = interleaved_speeds(pipelines, args.dev, repeats=args.repeats)
    print(f"{args.train_sentences} training sentences, {args.epochs} epochs; scored on {args.dev.name}")
    print(f"{'factory':<10} {'UAS':>7} {'LAS':>7} {'words/s':>9} {'x spaCy':>8}")
    for factory, s in scores.items():
        print(f"{factory:<10} {100 * s['dep_uas']:7.2f} {100 * s['dep_las']:7.2f} "
              f"{statistics.median(speeds[factory]):9.0f} {speed_ratio(speeds[factory], speeds['parser']):8.2f}")


if __name__ == "__main__":
    main()
