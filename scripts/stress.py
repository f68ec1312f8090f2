"""Stress test: parse a large shuffled corpus in docs of mixed shapes with ``nlp.pipe(n_process=2)``
for a bounded time and check every doc.

    python scripts/stress.py --corpus TREEBANK.conllu [--model PATH ...] [--seconds 120]
        [--n-process 2] [--batch-size 16] [--components hc_parser,hc_transition_parser]
        [--decoder dual] [--train N] [--seed 0] [--json stress.json]

Without ``--model`` it builds untrained-but-initialized pipelines (``hc_parser`` and
``hc_transition_parser`` with their default models, labels from the corpus, optionally updated on
``--train`` sentences), so it runs anywhere. Sentences of the corpus are shuffled into docs of
these shapes:

- ``sentence``: one gold sentence, its start preset;
- ``joined``: several sentences (up to 5,000 words) without any sentence boundary;
- ``long``: sentences concatenated into one preset sentence of 500 to 1,500 words;
- ``odd``: a sentence with whitespace tokens, emoji and other scripts mixed in;
- ``tiny``: an empty doc, one token, whitespace-only tokens;
- ``heads``: a sentence carrying its gold heads (to be overwritten);
- ``text``: the sentences' text through the tokenizer.

Every output doc is checked: no exception, ``len(doc)`` unchanged, each sentence one tree with
exactly one root (labelled ``ROOT``, heading itself). Before the run, the peak memory of parsing
a 1,000-word sentence is measured in this process (``tracemalloc``: Python and numpy
allocations). Prints, per pipeline: inputs tried per shape, words, the longest input sentence
and the longest span parsed as one tree, hill-climbing/dual time caps hit (``hc_parser`` records
them in ``doc.user_data["hc_time_capped"]``), the peak memory, the workers' peak RSS, and every
failure. Exit status 1 when any doc fails a check.
"""
import argparse
import json
import random
import resource
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import numpy as np
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.conllu import Sentence, read_conllu
from spacy_hcparse.decoders import tree_problem
from spacy_hcparse.evaluation.harness import DECODERS

ODD_TOKENS = ["  ", "\n", "\t", "🙂", "❤️", "👍🏽", "東京", "Москва", "مرحبا", "नमस्ते", "e\u0301", "\u200b", "…"]
SHAPES = ["sentence", "joined", "long", "odd", "tiny", "heads", "text"]
DEFAULT_CORPUS = Path("/work/shared/treebanks/UD_English-EWT/en_ewt-ud-train.conllu")
SAMPLE_CORPUS = Path(__file__).resolve().parents[1] / "assets/sample/sample-ud-train.conllu"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS if DEFAULT_CORPUS.exists() else SAMPLE_CORPUS)
    parser.add_argument("--model", action="append", default=[], help="trained pipeline (repeatable)")
    parser.add_argument("--seconds", type=float, default=120.0, help="time budget for all pipelines together")
    parser.add_argument("--n-process", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--train", type=int, default=0, help="untrained pipelines: update once on N sentences")
    parser.add_argument("--components", default="hc_parser,hc_transition_parser", help="untrained pipelines to build")
    parser.add_argument("--decoder", default=None, help="hc_parser's decoder for this run: hill_climb, dual, mst or eisner")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    args = parser.parse_args()

    skipped: List[str] = []
    sentences = list(read_conllu(args.corpus, skip_invalid=True, skipped=skipped))
    print(f"corpus {args.corpus}: {len(sentences)} sentences ({len(skipped)} not trees, skipped)")
    if args.model:
        pipelines = [(str(m), spacy.load(m)) for m in args.model]
    else:
        pipelines = [(f"{name} (untrained)", untrained(name, sentences, args.train, args.seed))
                     for name in args.components.split(",")]
    if args.decoder:
        decoder = spacy.registry.resolve({"d": DECODERS[args.decoder]})["d"]
        for _, nlp in pipelines:
            if "hc_parser" in nlp.pipe_names:
                nlp.get_pipe("hc_parser").decoder = decoder
    budget = args.seconds / len(pipelines)
    reports, ok = [], True
    for label, nlp in pipelines:
        report = stress(nlp, sentences, budget, args.n_process, args.batch_size, args.seed)
        report["pipeline"] = label
        reports.append(report)
        print_report(report)
        ok = ok and not report["failures"]
    if args.json:
        args.json.write_text(json.dumps({"corpus": str(args.corpus), "reports": reports}, indent=1) + "\n")
    return 0 if ok else 1


def untrained(name: str, sentences: List[Sentence], n_train: int, seed: int) -> Language:
    """A blank English pipeline with the component's default model, initialized on the corpus."""
    spacy.util.fix_random_seed(seed)
    nlp = spacy.blank("en")
    nlp.add_pipe(name)
    examples = [gold_example(nlp, s) for s in sentences[: max(200, n_train)]]
    optimizer = nlp.initialize(lambda: examples)
    for start in range(0, n_train, 16):
        nlp.update(examples[start : min(start + 16, n_train)], sgd=optimizer)
    return nlp


def gold_example(nlp: Language, sent: Sentence) -> Example:
    words = [w.form for w in sent.words]
    heads = [w.head - 1 if w.head else i for i, w in enumerate(sent.words)]
    deps = ["ROOT" if w.head == 0 else w.deprel for w in sent.words]
    return Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, heads=heads, deps=deps))


# ----- inputs ---------------------------------------------------------------------------------
def make_input(nlp: Language, shape: str, pick, rng: random.Random) -> Tuple[Doc, Dict]:
    """(doc, context) of the given shape; the context holds the shape and the expected length."""
    vocab = nlp.vocab
    if shape == "sentence":
        words = pick_words(pick)
        doc = Doc(vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1))
    elif shape == "joined":
        target = rng.choice([50, 200, 1000, 5000])
        words = []
        while len(words) < target:
            words += pick_words(pick)
        doc = Doc(vocab, words=words[:target])
    elif shape == "long":
        target = rng.randint(500, 1500)
        words = []
        while len(words) < target:
            words += pick_words(pick)
        doc = Doc(vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1))
    elif shape == "odd":
        words = pick_words(pick)
        for _ in range(rng.randint(1, 4)):
            words.insert(rng.randint(0, len(words)), rng.choice(ODD_TOKENS))
        doc = Doc(vocab, words=words)
    elif shape == "tiny":
        words = rng.choice([[], [pick_words(pick)[0]], ["  ", "\n"], ["\t"], ["🙂"]])
        doc = Doc(vocab, words=words)
    elif shape == "heads":
        sent = pick()
        doc = gold_example(nlp, sent).reference
    else:  # text
        text = " ".join(" ".join(pick_words(pick)) for _ in range(rng.randint(1, 5)))
        doc = nlp.make_doc(text)
    return doc, {"shape": shape, "n": len(doc), "preset": shape in ("sentence", "long", "heads")}


def pick_words(pick) -> List[str]:
    return [w.form for w in pick().words]


def inputs(nlp: Language, sentences: List[Sentence], deadline: float, seed: int) -> Iterator[Tuple[Doc, Dict]]:
    rng = random.Random(seed)
    order = list(range(len(sentences)))
    rng.shuffle(order)
    position = 0

    def pick() -> Sentence:
        nonlocal position
        sent = sentences[order[position % len(order)]]
        position += 1
        return sent

    i = 0
    while time.perf_counter() < deadline:
        yield make_input(nlp, SHAPES[i % len(SHAPES)] if i < len(SHAPES) else rng.choice(SHAPES), pick, rng)
        i += 1


# ----- checks ---------------------------------------------------------------------------------
def check(doc: Doc, n: int) -> Optional[str]:
    """What is wrong with a parsed doc, or None."""
    if len(doc) != n:
        return f"len changed from {n} to {len(doc)}"
    if n == 0:
        return None
    if not doc.has_annotation("DEP"):
        return "no parse"
    covered = 0
    for sent in doc.sents:
        heads = [-1] + [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent]
        if any(not (sent.start <= t.head.i < sent.end) for t in sent):
            return f"a head outside its sentence at token {sent.start}"
        problem = tree_problem(np.array(heads, dtype=np.int64))
        if problem:
            return f"sentence at token {sent.start}: {problem}"
        roots = [t for t in sent if t.head == t]
        if len(roots) != 1 or roots[0].dep_ != "ROOT" or sum(t.dep_ == "ROOT" for t in sent) != 1:
            return f"sentence at token {sent.start}: roots {[(t.i, t.dep_) for t in roots]}"
        covered += len(sent)
    return None if covered == n else f"sentences cover {covered} of {n} tokens"


def peak_memory(nlp: Language, sentences: List[Sentence], n_words: int = 1000) -> Dict[str, float]:
    """tracemalloc peak (MB) and seconds for one preset sentence of ``n_words`` words and for the
    same words without boundaries."""
    words: List[str] = []
    for sent in sentences:
        words += [w.form for w in sent.words]
        if len(words) >= n_words:
            break
    words = (words * (n_words // max(1, len(words)) + 1))[:n_words]
    nlp(Doc(nlp.vocab, words=words[:60]))  # warm up: numba compilation, caches
    out = {}
    for key, starts in (("sentence", [True] + [False] * (n_words - 1)), ("no_boundaries", None)):
        doc = Doc(nlp.vocab, words=words, sent_starts=starts)
        tracemalloc.start()
        begin = time.perf_counter()
        try:
            parsed = nlp(doc)
            seconds = time.perf_counter() - begin
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        problem = check(parsed, n_words)
        if problem:
            raise AssertionError(f"{n_words}-word {key}: {problem}")
        out[f"{key}_peak_mb"] = round(peak / 2**20, 1)
        out[f"{key}_seconds"] = round(seconds, 2)
    return out


def stress(nlp: Language, sentences: List[Sentence], seconds: float, n_process: int, batch_size: int,
           seed: int) -> Dict:
    memory = peak_memory(nlp, sentences)
    start = time.perf_counter()
    deadline = start + seconds
    tried, words, failures = Counter(), 0, []
    longest_input = longest_span = capped = spans = 0
    stream = inputs(nlp, sentences, deadline, seed)
    try:
        for doc, context in nlp.pipe(stream, as_tuples=True, n_process=n_process, batch_size=batch_size):
            tried[context["shape"]] += 1
            words += context["n"]
            problem = check(doc, context["n"])
            if problem:
                failures.append(f"{context['shape']} doc of {context['n']} words: {problem}")
                continue
            if context["preset"]:  # one input sentence
                longest_input = max(longest_input, context["n"])
            if len(doc):
                sents = list(doc.sents)
                spans += len(sents)
                longest_span = max(longest_span, max(len(s) for s in sents))
            capped += int(doc.user_data.get("hc_time_capped", 0) or 0)
    except Exception as err:  # a crash is a failure like any other, reported with the shapes tried
        failures.append(f"nlp.pipe raised {type(err).__name__}: {err}")
    elapsed = time.perf_counter() - start
    return {
        "seconds": round(elapsed, 1),
        "n_process": n_process,
        "inputs": sum(tried.values()),
        "inputs_by_shape": dict(tried),
        "words": words,
        "words_per_second": round(words / max(elapsed, 1e-9)),
        "longest_input_sentence": longest_input,
        "longest_span_parsed": longest_span,
        "spans": spans,
        "time_caps_hit": capped,
        "memory_1000_words": memory,
        "workers_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
        "main_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "failures": failures[:50],
        "n_failures": len(failures),
    }


def print_report(r: Dict) -> None:
    print(f"\n== {r['pipeline']}: {r['inputs']} inputs, {r['words']:,} words in {r['seconds']} s "
          f"(n_process={r['n_process']}, {r['words_per_second']:,} words/s)")
    print("   inputs by shape: " + ", ".join(f"{k} {v}" for k, v in sorted(r["inputs_by_shape"].items())))
    print(f"   longest input sentence {r['longest_input_sentence']} words; longest span parsed as one tree "
          f"{r['longest_span_parsed']} words; {r['spans']} spans, time caps hit {r['time_caps_hit']}")
    m = r["memory_1000_words"]
    print(f"   1,000 words: one sentence peak {m['sentence_peak_mb']} MB ({m['sentence_seconds']} s), without "
          f"boundaries {m['no_boundaries_peak_mb']} MB ({m['no_boundaries_seconds']} s) [tracemalloc]; "
          f"peak RSS main {r['main_peak_rss_mb']} MB, workers {r['workers_peak_rss_mb']} MB")
    print(f"   failures: {r['n_failures']}")
    for failure in r["failures"]:
        print(f"     {failure}")


if __name__ == "__main__":
    sys.exit(main())
