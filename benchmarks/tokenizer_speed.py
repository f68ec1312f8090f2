"""Speed of the trained ``UDTokenizer`` on raw text, as a ratio to spaCy's rule tokenizer
(``spacy.blank(LANG).tokenizer``) measured in the same run.

The gold file's text is cut into documents of ``--group`` sentences (as ``raw_text.py``); both
tokenizers run ``tokenizer.pipe`` over all of them, taking turns for ``--repeats`` rounds after an
untimed warm-up. Words/s: gold syntactic words per second, median of the rounds; the ratio is the
median of the per-round ratios. ``--dump FILE`` writes the UDTokenizer's output (per document: the
words, the multiword token ranges and the sentence starts) as JSON, to compare two versions of
the code on the same weights. ``--profile`` prints a cProfile of one more pass.

    OMP_NUM_THREADS=1 python benchmarks/tokenizer_speed.py --gold ../shared/treebanks/UD_English-EWT/en_ewt-ud-test.conllu \\
        --tokenizer training/tokenizer/ewt --lang en
"""
import argparse
import cProfile
import json
import os
import pstats
import statistics
import time
from pathlib import Path

import spacy

from spacy_hcparse.evaluation.conll18 import read_treebank
from spacy_hcparse.evaluation.raw_text import raw_documents
from spacy_hcparse.names import MULTIWORD_TOKENS
from spacy_hcparse.tokenizer import UDTokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--tokenizer", type=Path, required=True, help="a trained UDTokenizer file")
    parser.add_argument("--lang", default="en", help="the peer: spacy.blank(LANG).tokenizer")
    parser.add_argument("--group", type=int, default=10, help="sentences per document (0: per gold document)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--dump", type=Path, default=None)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if os.environ.get("OMP_NUM_THREADS") != "1":
        print("note: OMP_NUM_THREADS is not 1")
    docs = raw_documents(read_treebank(args.gold), args.group)
    texts = [d.text for d in docs]
    n_words = sum(d.n_words for d in docs)
    nlp = spacy.blank("xx")
    ud = UDTokenizer(nlp.vocab).from_disk(args.tokenizer)
    peer = spacy.blank(args.lang).tokenizer
    tokenizers = {"ud": ud, "peer": peer}
    for tok in tokenizers.values():
        list(tok.pipe(texts[:50], batch_size=args.batch_size))
    speeds = {name: [] for name in tokenizers}
    for _ in range(args.repeats):
        for name, tok in tokenizers.items():
            start = time.perf_counter()
            for _doc in tok.pipe(texts, batch_size=args.batch_size):
                pass
            speeds[name].append(n_words / (time.perf_counter() - start))
    ratio = statistics.median(a / b for a, b in zip(speeds["ud"], speeds["peer"]))
    print(f"{args.gold.name}: {len(texts)} documents of {args.group or 'a gold document'} sentences, {n_words} words; "
          f"load {os.getloadavg()[0]:.2f}; batch size {args.batch_size}")
    for name, values in speeds.items():
        print(f"{name:<6}{statistics.median(values):12.0f} words/s  rounds {[round(v) for v in values]}")
    print(f"ud / spacy.blank({args.lang!r}).tokenizer: {ratio:.3f}")
    if args.dump:
        out = [{"words": [t.text_with_ws for t in doc], "mwt": [list(r) for r in doc._.get(MULTIWORD_TOKENS)],
                "sent_starts": [t.i for t in doc if t.is_sent_start]}
               for doc in ud.pipe(texts, batch_size=args.batch_size)]
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
