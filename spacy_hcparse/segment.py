"""Which words the parsers decode together: sentences, or chunks of docs without boundaries.

A span is a half-open token range ``(start, end)`` of a Doc. Both the encoder (which builds one
score block per span) and the components (which write one tree per span) call
``sentence_spans`` with the same ``max_length``, so the two always agree.
"""
from typing import List, Sequence, Tuple

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
    spans: List[Span] = []
    for start, end in sents:
        spans.extend(_chunk(doc, start, end, max_length))
    return spans


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
