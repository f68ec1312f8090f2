"""Which words the parsers decode together: sentences, or chunks of docs without boundaries.

A span is a half-open token range ``(start, end)`` of a Doc, parsed as one tree. Spans come from
the doc's own sentences (``sentence_spans``), from sentence starts a model predicted
(``predicted_spans``), or from the reference's sentences in training; a sentence longer than
``max_length`` becomes several spans (``continues``: whether a span carries on the sentence of
the span before it).
"""
from typing import List, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc

Span = Tuple[int, int]


def sentence_spans(doc: Doc, max_length: int) -> List[Span]:
    """Split ``doc`` into spans of at most ``max_length`` tokens, each parsed as one tree.

    Sentence boundaries are used when the doc has them (``SENT_START`` set by a senter,
    sentencizer, reader or the user); longer sentences and docs without boundaries are chunked,
    cutting after the last punctuation token of the window when there is one.
    """
    if max_length < 1:
        raise ValueError(f"max_length must be positive, got {max_length}")
    if len(doc) == 0:
        return []
    if doc.has_annotation("SENT_START"):
        sents = [(s.start, s.end) for s in doc.sents]
    else:
        sents = [(0, len(doc))]
    return chunked(doc, sents, max_length)


def predicted_spans(doc: Doc, starts: np.ndarray, max_length: int) -> List[Span]:
    """Spans of the sentences that begin where ``starts`` (bool, one per token) is set (the first
    token always begins one), chunked to ``max_length``."""
    if max_length < 1:
        raise ValueError(f"max_length must be positive, got {max_length}")
    if len(doc) == 0:
        return []
    cuts = [0] + [i for i in np.flatnonzero(starts).tolist() if i > 0] + [len(doc)]
    return chunked(doc, list(zip(cuts[:-1], cuts[1:])), max_length)


def chunked(doc: Doc, sentences: Sequence[Span], max_length: int) -> List[Span]:
    """``sentences`` with every one longer than ``max_length`` cut into chunks."""
    spans: List[Span] = []
    for start, end in sentences:
        spans.extend(_chunk(doc, start, end, max_length))
    return spans


def continues(spans: Sequence[Span], sentence_starts: Sequence[int]) -> List[bool]:
    """Per span, whether it carries on the sentence of the span before it (it does not begin at
    one of the token offsets ``sentence_starts``)."""
    begins = set(sentence_starts)
    return [i > 0 and start not in begins for i, (start, _) in enumerate(spans)]


def _chunk(doc: Doc, start: int, end: int, max_length: int) -> List[Span]:
    chunks = []
    while end - start > max_length:
        cut = start + max_length
        for i in range(start + max_length - 1, start + max_length // 2, -1):
            if doc[i].is_punct:
                cut = i + 1
                break
        chunks.append((start, cut))
        start = cut
    chunks.append((start, end))
    return chunks


def index_groups(lengths: Sequence[int], budget: int) -> List[Tuple[int, int]]:
    """Consecutive index ranges ``(lo, hi)`` whose lengths add up to at most ``budget`` (a range
    holds at least one item, however long)."""
    groups, lo, total = [], 0, 0
    for i, length in enumerate(lengths):
        if i > lo and total + length > budget:
            groups.append((lo, i))
            lo, total = i, 0
        total += length
    if lengths:
        groups.append((lo, len(lengths)))
    return groups
