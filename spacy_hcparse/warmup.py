"""``python -m spacy_hcparse warmup [MODEL]``: compile a pipeline's numba kernels ahead of time.

The kernels compile on first use and are then read from numba's cache (``spacy_hcparse.compiling``);
``warmup`` makes that first use happen at build time (a Docker image, a CI cache step), so the
first real parse is fast. With ``MODEL`` (a pipeline directory or package name) it loads the
pipeline and runs it on ``TEXT`` (sentence splitting, decoding, labels, tags, probabilities), then
asks each ``hc_parser`` sentence for its k-best trees. Without one it does the same with an
untrained ``hc_parser`` of the factory's default settings, initialized on ``SENTENCES``: the
kernels every pipeline with the default decoder uses. Then ``compile_fallbacks``
(``graph.ahead``) compiles the kernels a batch calls only where it needs them, which ``TEXT``
may not reach. Other decoders compile on their first use (or warm up with the model that names
them). On a fresh install without ``warmup``, ``graph.ahead`` compiles a loaded pipeline's
kernels in a second process while the first parse runs.
"""
import time
from typing import Callable, List, Optional

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from .compiling import watch_compiling
from .graph.ahead import compile_fallbacks

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
