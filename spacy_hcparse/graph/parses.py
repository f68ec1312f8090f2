"""What ``hc_parser.predict`` returns: per span its parse, per doc its spans and parses; and the
values the parser writes as extensions (``graph.extensions``) from them.

A span's parse: heads (n+1,), root at 0, label ids (n,), the decoder's ``DecodeResult``, each
word's first-order head margin and, with head probabilities, each chosen head's calibrated
marginal probability and the tree's log probability (``spacy_hcparse.graph.calibration``), and each
written label's probability given its head (``graph.graph_batch.span_parses`` makes them).
"""
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc

from ..names import Span
from ..segment import continues, doc_sentence_starts
from .decoding import DecodeResult
from .scores import GraphScores


class SpanParse(NamedTuple):
    """The parse of one span: heads (n+1,), label ids (n,), what the decoder knows, the
    first-order margin of each word's head (its score minus the best other head's), the marginal probability of each
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


def group_parses(docs: List[Doc], scores: GraphScores, parses: List[SpanParse]) -> List[DocParses]:
    """``parses`` (one per span of ``scores``) grouped per doc, with where its sentences begin:
    at every span of a doc the model segmented (a sentence it found longer than
    ``max_length``, such as a long text without punctuation, becomes several), else at the
    doc's own sentences (a longer one stays one sentence of several spans)."""
    out = []
    for d, (doc, spans, sentences, doc_parses) in enumerate(
            zip(docs, scores.spans, scores.sentences, regroup(parses, scores.spans))):
        begins = [start for start, _ in spans] if sentences is not None else doc_sentence_starts(doc)
        tags = {attr: np.asarray(logits[d]).argmax(axis=1) for attr, logits in scores.tags.items()}
        out.append(DocParses(spans, doc_parses, continues(spans, begins), tags))
    return out


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
    """A span's ``hc_`` extension values and its tokens' (see ``graph.extensions``)."""
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


def regroup(flat: Sequence, per_doc: Sequence[Sequence]) -> list:
    """``flat`` cut back into per-doc lists with the lengths of ``per_doc``."""
    out, pos = [], 0
    for items in per_doc:
        out.append(list(flat[pos: pos + len(items)]))
        pos += len(items)
    return out
