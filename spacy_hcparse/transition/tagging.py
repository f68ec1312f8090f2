"""Greedy hashed part-of-speech tagging over the parser's word attribute rows (numba).

The parser's Zhang & Nivre templates are built around tags; when no tagger ran before it, the
perceptron model tags the words itself (``transition.perceptron_tagger``, trained by
``transition.tagger_trainer``). Left to right, with the previous two predicted tags as history
(Collins 2002). Weights are flat hashed weights, ``W[b + tag]`` (``transition.hashed_scoring``).

Input rows are the parser's word attribute rows (``transition.templates.token_attrs``), spans one
after another delimited by ``offsets``; row 0 of each span is the root and gets no tag (``-1``).
"""
from typing import Dict, List

import numpy as np

from ..compiling import njit
from .hashed_scoring import score
from .templates import ABSENT, PRE, SHAPE, SUF, T, W, hash_features

WINDOW = 2
N_WORD_FIELDS = 4  # W, SUF, PRE, SHAPE of each word in the window
PREV1 = (2 * WINDOW + 1) * N_WORD_FIELDS
PREV2 = PREV1 + 1
CONST = PREV2 + 1
N_TAG_VALUES = CONST + 1
FIELDS = {"w": 0, "suf": 1, "pre": 2, "shape": 3}
SALT = (1001, 0x1B873593)  # the tagger's own (offset, salt) for hash_features, apart from the parser's


def _idx(term: str) -> int:
    if term == "p1":
        return PREV1
    if term == "p2":
        return PREV2
    if term == "bias":
        return CONST
    pos, _, field = term.partition(".")
    return (int(pos) + WINDOW) * N_WORD_FIELDS + FIELDS[field]


BASE_TEMPLATES = [
    "bias", "0.w", "0.suf", "0.pre", "0.shape", "p1", "p2", "p1+p2", "p1+0.w", "p1+0.suf",
    "-1.w", "-1.suf", "-2.w", "-2.suf", "1.w", "1.suf", "1.shape", "2.w", "2.suf",
    "-1.w+0.w", "0.w+1.w", "0.shape+0.suf", "-1.shape+0.shape+1.shape", "p1+1.w",
]
# more history, neighbour and affix conjunctions (docs/experiments.md, "Transition parsers")
EXTENDED_TEMPLATES = BASE_TEMPLATES + [
    "p1+0.shape", "p2+0.w", "p1+p2+0.suf", "-1.w+1.w", "-1.suf+0.w", "0.w+1.suf", "0.pre+0.suf",
    "-1.shape", "1.pre", "-2.shape", "2.shape", "-1.pre",
]
# sentence starts (two classes: 1 starts a sentence): the word, the one before it and the pair, as
# forms and shapes (case lives in the shape and the prefix: forms are lowercase), and whether the
# previous word was taken as a start
SENTENCE_TEMPLATES = [
    "bias", "0.w", "0.pre", "0.shape", "0.suf", "-1.w", "-1.suf", "-1.shape", "-2.w", "1.w", "1.shape", "p1",
    "-1.w+0.w", "-1.w+0.shape", "-1.w+0.pre", "-1.shape+0.shape", "-2.w+-1.w", "-1.w+1.w",
    "0.shape+1.shape", "-1.w+0.shape+1.shape", "-2.shape+-1.w+0.shape", "p1+0.shape", "p1+-1.w",
]
TAGGER_TEMPLATE_SETS: Dict[str, List[str]] = {
    "base": BASE_TEMPLATES, "extended": EXTENDED_TEMPLATES, "sentence": SENTENCE_TEMPLATES,
}


def tagger_templates(name: str = "base") -> np.ndarray:
    """``(n_templates, 3)`` context indices of a set in ``TAGGER_TEMPLATE_SETS``, ``-1`` padding."""
    if name not in TAGGER_TEMPLATE_SETS:
        raise ValueError(f"unknown tagger template set {name!r}; expected one of {sorted(TAGGER_TEMPLATE_SETS)}")
    specs = TAGGER_TEMPLATE_SETS[name]
    out = np.full((len(specs), 3), -1, dtype=np.int64)
    for i, spec in enumerate(specs):
        terms = spec.split("+")
        out[i, : len(terms)] = [_idx(t) for t in terms]
    return out


@njit(cache=True)
def _context(attrs, i, n, tags, ctx):
    for d in range(-WINDOW, WINDOW + 1):
        j = i + d
        base = (d + WINDOW) * N_WORD_FIELDS
        if 1 <= j <= n:
            ctx[base] = attrs[j, W]
            ctx[base + 1] = attrs[j, SUF]
            ctx[base + 2] = attrs[j, PRE]
            ctx[base + 3] = attrs[j, SHAPE]
        else:
            for f in range(N_WORD_FIELDS):
                ctx[base + f] = ABSENT + 1 + (j > n)
    ctx[PREV1] = tags[i - 1] + 16 if i >= 2 else ABSENT
    ctx[PREV2] = tags[i - 2] + 16 if i >= 3 else ABSENT
    ctx[CONST] = 7


@njit(cache=True)
def word_features(span, i, tags, templates, mask, ctx, feats) -> None:
    """The buckets ``feats`` of word ``i`` of a span (rows ``span``, root first), given the
    span's tags so far (``tags[1..i-1]``)."""
    _context(span, i, span.shape[0] - 1, tags, ctx)
    hash_features(ctx, templates, mask, feats, SALT[0], SALT[1])


@njit(cache=True)
def tag_spans(attrs, offsets, Wt, templates, mask, n_tags, out_tags) -> None:
    """Tag every span with weights ``Wt``; ``out_tags`` gets tag ids (``-1`` on root rows)."""
    none = np.zeros(0)
    tag_and_update(attrs, offsets, Wt, none, none, np.zeros(1), templates, mask, n_tags,
                   np.full(attrs.shape[0], -1, dtype=np.int64), out_tags)


@njit(cache=True)
def tag_and_update(attrs, offsets, Wt, learn, U, counter, templates, mask, n_tags, gold_tags, out_tags):
    """Tag every span greedily, left to right, with the weights ``Wt`` (``out_tags``: tag ids,
    ``-1`` on root rows); where ``gold_tags[row] >= 0`` and differs from the prediction, the
    perceptron update goes into ``learn``/``U`` (averaged by the clock ``counter[0]``, which
    counts words; in training ``learn`` is ``Wt`` itself, so later words read the updated
    weights). Returns the number of mistakes."""
    ctx = np.empty(N_TAG_VALUES, dtype=np.int64)
    feats = np.empty(templates.shape[0], dtype=np.int64)
    scores = np.empty(n_tags, dtype=np.float64)
    mistakes = 0
    for s in range(len(offsets) - 1):
        lo, hi = offsets[s], offsets[s + 1]
        span = attrs[lo:hi]
        tags = out_tags[lo:hi]
        tags[0] = -1
        for i in range(1, hi - lo):
            word_features(span, i, tags, templates, mask, ctx, feats)
            score(Wt, feats, n_tags, scores)
            pred = np.int64(np.argmax(scores))
            gold = gold_tags[lo + i]
            if gold >= 0 and gold != pred:
                mistakes += 1
                c = counter[0]
                for f in range(feats.shape[0]):
                    b = feats[f]
                    learn[b + gold] += 1.0
                    U[b + gold] += c
                    learn[b + pred] -= 1.0
                    U[b + pred] -= c
            counter[0] += 1
            tags[i] = pred
    return mistakes


def fill_tags(attrs: np.ndarray, untagged: np.ndarray, tag_ids: np.ndarray, tag_values: np.ndarray) -> np.ndarray:
    """A copy of ``attrs`` whose tag column holds ``tag_values[tag_ids]`` on the ``untagged`` rows
    that got a tag (``tag_ids >= 0``)."""
    out = attrs.copy()
    rows = untagged & (tag_ids >= 0)
    out[rows, T] = tag_values[tag_ids[rows]]
    return out
