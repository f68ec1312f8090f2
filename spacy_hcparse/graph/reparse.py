"""Reparsing: the spans of docs that already have a parse, and per span the earlier parser's tree
and labels (its arcs raised by a bonus in ``graph_batch.span_arcs``, or its tree as a search's
start).

Conventions as in ``graph.scores``: ``arc[h, m]`` (n+1, n+1), index 0 the root; span-local heads
(n+1,) with ``heads[0] == -1`` and the root's child at 0.
"""
from typing import List, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.tokens import Doc

from ..decoders import tree_problem
from ..names import Span
from ..segment import preset_spans, sentence_spans

# A doc's own tree of a span: span-local heads (n+1,) and label ids (n,), -1 for unknown labels.
DocParse = Tuple[np.ndarray, np.ndarray]


def given_spans(docs: List[Doc], max_length: int, label_ids: Optional[dict] = None, keep_arcs: bool = False
                ) -> Tuple[List[Optional[List[Span]]], Optional[List[Optional[DocParse]]], Optional[list]]:
    """Per doc its spans where given (its sentences of at most ``max_length`` tokens; every doc's
    when reparsing, that is with ``label_ids``), else None (the model segments it); when
    reparsing, per span (doc after doc) the doc's own tree (``doc_parses``) and the heads whose
    arcs stay candidates (that tree's with ``keep_arcs``, else None); else None, None."""
    given = [sentence_spans(doc, max_length) if label_ids is not None else preset_spans(doc, max_length)
             for doc in docs]
    if label_ids is None:
        return given, None, None
    existing = [parse for doc, spans in zip(docs, given) for parse in doc_parses(doc, spans, label_ids)]
    keep = [None if parse is None or not keep_arcs else parse[0] for parse in existing]
    return given, existing, keep


def doc_parses(doc: Doc, spans: Sequence[Span], label_ids: dict) -> List[Optional[DocParse]]:
    """The doc's existing parse per span, as span-local heads and label ids (``label_ids``: label
    hash -> id; ``-1`` for labels not in it), where the doc has one tree there; None elsewhere
    (and everywhere for a doc without a parse)."""
    if not doc.has_annotation("DEP"):
        return [None] * len(spans)
    heads = np.arange(len(doc)) + doc.to_array(HEAD).astype(np.int64)  # offsets, stored as uint64
    labels = np.array([label_ids.get(h, -1) for h in doc.to_array(DEP).tolist()], dtype=np.int64)
    trees = [span_tree(heads, start, end) for start, end in spans]
    return [None if tree is None else (tree, labels[start:end]) for tree, (start, end) in zip(trees, spans)]


def span_tree(heads: np.ndarray, start: int, end: int) -> Optional[np.ndarray]:
    """The span-local tree (n+1,) of tokens ``start..end-1`` from their absolute heads (a token
    heading itself is a root; ``-1`` unknown): ``[-1, h_1 .. h_n]`` with the root's child at 0,
    or None if a head falls outside the span or the result is not one tree."""
    span_heads = heads[start:end]
    if (span_heads < start).any() or (span_heads >= end).any():
        return None
    local = np.empty(end - start + 1, dtype=np.int64)
    local[0] = -1
    local[1:] = span_heads - start + 1
    local[1:][span_heads == np.arange(start, end)] = 0
    return None if tree_problem(local) else local
