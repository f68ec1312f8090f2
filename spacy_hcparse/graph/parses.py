"""What ``hc_parser.predict`` returns: per span its parse, per doc its spans and parses; and the
values the parser writes as extensions (``components.extensions``) from them.

A span's parse: heads (n+1,), root at 0, label ids (n,), the decoder's ``DecodeResult``, each
word's first-order head margin (``margins``) and, with head probabilities, each chosen head's
marginal probability and the tree's log probability under the first-order model (calibrated:
``spacy_hcparse.calibration``), and each written label's probability given its head.
"""
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.tokens import Doc

from ..decoders import written_label_probs
from ..names import Span
from .decoding import DecodeResult


class SpanParse(NamedTuple):
    """The parse of one span: heads (n+1,), label ids (n,), what the decoder knows, the
    first-order margin of each word's head (see ``margins``), the marginal probability of each
    word's head and the tree's log probability (None without head probabilities), the
    probability of each word's label given its head (None: not computed)."""

    heads: np.ndarray
    labels: np.ndarray
    result: DecodeResult
    margins: np.ndarray
    head_probs: Optional[np.ndarray] = None
    log_prob: Optional[float] = None
    dep_probs: Optional[np.ndarray] = None


class DocParses(NamedTuple):
    """A doc's spans, their parses, which spans carry on the sentence of the span before them,
    and per tag attribute the tag ids of its tokens (what ``predict`` returns per doc)."""

    spans: List[Span]
    parses: List[SpanParse]
    continues: List[bool]
    tags: Dict[str, np.ndarray] = {}


def span_parse(arc: np.ndarray, result: DecodeResult, labels: np.ndarray, head_probs: Optional[Callable],
               dep_probs: Optional[np.ndarray] = None) -> SpanParse:
    """A span's parse from its (n+1, n+1) first-order arc scores (unpruned), the decoder's result
    and the tree's label ids; ``head_probs(heads, arc)``: the head probabilities and the tree's
    log probability (the component's calibration, ``calibration.calibrated_probabilities``;
    None: none); ``dep_probs`` (n,): its labels' probabilities."""
    parse = SpanParse(result.heads, labels, result, margins(arc, result.heads), dep_probs=dep_probs)
    if head_probs is None or len(arc) < 2:
        return parse
    probs, log_prob = head_probs(result.heads, arc)
    return parse._replace(head_probs=probs, log_prob=log_prob)


def label_probs(heads: np.ndarray, rows: np.ndarray, labels: np.ndarray, label_set, space: np.ndarray) -> np.ndarray:
    """``P(label | head)`` of a tree's written labels (n,): the softmax of each arc's label scores
    ``rows`` (n, L) under the labeler's rules (``graph.labeling.LabelSet``: ``ROOT`` only on the
    root's child, unseen labels never); 1 for whitespace tokens (``space``), whose label is set."""
    probs = written_label_probs(rows, heads, labels, label_set.root, label_set.unseen)
    probs[np.asarray(space, dtype=bool)] = 1.0
    return probs


def margins(arc: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """First-order score gap between each word's chosen head and its best other head."""
    n = len(heads) - 1
    if n == 0:
        return np.zeros(0)
    scores = arc[:, 1:].copy()
    np.fill_diagonal(scores[1:], -np.inf)
    words = np.arange(n)
    chosen = scores[heads[1:], words].copy()
    scores[heads[1:], words] = -np.inf
    best_other = scores.max(axis=0)
    return np.where(np.isfinite(best_other), chosen - best_other, 0.0)


def doc_sentence_starts(doc: Doc) -> List[int]:
    """Token offsets where the doc's preset sentences begin (the whole doc without any)."""
    if len(doc) == 0:
        return []
    return [sent.start for sent in doc.sents] if doc.has_annotation("SENT_START") else [0]


def joined_values(spans: List[Span], continues: List[bool], values: List[Tuple[Dict, Dict]]
                  ) -> Tuple[List[Span], List[Tuple[Dict, Dict]]]:
    """The sentences of several spans (a preset sentence longer than ``max_length``: each span
    after the first ``continues`` it) and their extension values from their spans' ``values``:
    scores and upper bounds summed, certified where every span is, the tree probability the
    product of the spans' (None where a span has none); no token values (each span's stand)."""
    groups: List[List[int]] = []
    for i, joined in enumerate(continues):
        if joined and groups:
            groups[-1].append(i)
        else:
            groups.append([i])
    sentences, items = [], []
    for group in (g for g in groups if len(g) > 1):
        parts = [values[i][0] for i in group]
        score = sum(p["hc_score"] for p in parts)
        certified = all(p["hc_certified"] for p in parts)
        bounds = [p["hc_upper_bound"] for p in parts]
        bound = None if any(b is None for b in bounds) else float(sum(bounds))
        span = {"hc_score": score, "hc_certified": certified, "hc_upper_bound": bound,
                "hc_gap": 0.0 if certified else (None if bound is None else max(0.0, bound - score))}
        probs = [p.get("hc_parse_prob") for p in parts]
        if all(p is not None for p in probs):
            span["hc_parse_prob"] = float(np.prod(probs))
        sentences.append((spans[group[0]][0], spans[group[-1]][1]))
        items.append((span, {}))
    return sentences, items


def extension_values(parse: SpanParse) -> Tuple[Dict, Dict]:
    """A span's ``hc_`` extension values and its tokens' (see ``components.extensions``)."""
    result = parse.result
    bound = None if np.isnan(result.upper_bound) else float(result.upper_bound)
    score = float(result.score)
    span = {"hc_score": score, "hc_certified": bool(result.certified), "hc_upper_bound": bound,
            "hc_gap": 0.0 if result.certified else (None if bound is None else max(0.0, bound - score))}
    tokens = {"hc_head_margin": np.asarray(parse.margins, dtype=float).tolist()}
    if parse.head_probs is not None:
        span["hc_parse_prob"] = float(np.exp(parse.log_prob))
        tokens["hc_head_prob"] = parse.head_probs.tolist()
    if parse.dep_probs is not None:
        tokens["hc_dep_prob"] = np.asarray(parse.dep_probs, dtype=float).tolist()
    return span, tokens
