"""``python -m spacy_hcparse warmup [MODEL]``: compile a pipeline's numba kernels ahead of time.

The kernels compile on first use and are then read from numba's cache (``spacy_hcparse.compiling``);
``warmup`` makes that first use happen at build time (a Docker image, a CI cache step), so the
first real parse is fast. With ``MODEL`` (a pipeline directory or package name) it loads the
pipeline and runs it on ``TEXT`` (sentence splitting, decoding, labels, tags, probabilities), then
asks each ``hc_parser`` sentence for its k-best trees. Without one it does the same with an
untrained ``hc_parser`` of the factory's default settings, initialized on ``SENTENCES``: the
kernels every pipeline with the default decoder uses. Then ``compile_fallbacks`` compiles the
kernels a batch calls only where it needs them, which ``TEXT`` may not reach. Other decoders
compile on their first use (or warm up with the model that names them).
"""
import time
from typing import Callable, List, Optional

import numpy as np
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from .compiling import watch_compiling
from .decoders.batch import decode_eisner_batch, labels_batch
from .decoders.batch_marginals import sibling_probabilities_batch
from .graph.pruning import prune_batch

TEXT = ("The dog chased a red ball in the garden. She reads old books at night, and her brother "
        "plays the piano loudly while their parents cook dinner in the small kitchen")
# (words, heads (0 = root, 1-based), labels): enough for ``hc_parser.initialize``
SENTENCES = [
    (["The", "dog", "chased", "a", "ball", "."], [2, 3, 0, 5, 3, 3], ["det", "nsubj", "ROOT", "det", "obj", "punct"]),
    (["She", "reads", "old", "books", "."], [2, 0, 4, 2, 2], ["nsubj", "ROOT", "amod", "obj", "punct"]),
]


def default_pipeline() -> Language:
    """An untrained English ``hc_parser`` pipeline with the factory's defaults."""
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser")
    examples = []
    for words, heads, labels in SENTENCES:
        reference = Doc(nlp.vocab, words=words, heads=[h - 1 if h else i for i, h in enumerate(heads)], deps=labels)
        examples.append(Example(Doc(nlp.vocab, words=words), reference))
    nlp.initialize(lambda: examples)
    return nlp


def warmup(model: Optional[str] = None, say: Callable[[str], None] = print) -> float:
    """Run ``model`` (default: ``default_pipeline()``) once on ``TEXT`` with its k-best trees, so
    every kernel that takes compiles into numba's cache; returns the seconds it took."""
    watch_compiling()
    start = time.perf_counter()
    nlp = spacy.load(model) if model else default_pipeline()
    docs: List[Doc] = [nlp(TEXT), *nlp.pipe([TEXT, TEXT[:40]])]
    parsers = [pipe for name, pipe in nlp.pipeline
               if name == "hc_parser" or getattr(pipe, "factory_name", "") == "hc_parser"]
    hc_parsed = bool(parsers)
    if hc_parsed and Doc.has_extension("hc_parse_prob"):
        for sent in docs[0].sents:
            parsers[0].kbest(sent, 3)
    if hc_parsed:
        compile_fallbacks()
    seconds = time.perf_counter() - start
    say(f"done: the kernels of {model or 'the default hc_parser'} ({', '.join(nlp.pipe_names)}) are in "
        f"numba's cache ({seconds:.1f} s)")
    return seconds


def compile_fallbacks() -> None:
    """Run, on tiny inputs with the argument types the parser passes, the batch kernels that
    compile only where a batch needs them: first-order Eisner (spans without sibling factors:
    one word, or past ``higher_order_max_length``), the log-space sibling chart (scores out of
    the linear chart's range), the tree that pruning adds (top-k heads that hold none), and the
    labels of children whose classes clash."""
    rng = np.random.default_rng(0)
    arc = rng.normal(size=(4, 4))
    decode_eisner_batch(arc.ravel(), [4])
    wide = arc * 1000.0
    triples = np.array([[h, h, m] for h in range(4) for m in range(1, 4) if h != m], np.int64)
    values = rng.normal(size=len(triples)) * 1000.0
    heads, _ = decode_eisner_batch(wide.ravel(), [4], [len(triples)], triples, values)
    sibling_probabilities_batch(heads, [4], wide.ravel(), [len(triples)], triples, values, 1.0, 1.0)
    apart = np.full((7, 7), -5.0, np.float32)  # two blocks whose words prefer heads inside them
    for block in ((1, 2, 3), (4, 5, 6)):
        for h in block:
            apart[h, list(block)] = 1.0 if h == block[1] else 0.0
    prune_batch([apart], 1, [None], [True], [False])
    labels_batch([-1, 0, 1, 1], [4], np.array([[0.0, 1.0], [5.0, 0.0], [5.0, 0.0]]), np.array([0, -1]))
