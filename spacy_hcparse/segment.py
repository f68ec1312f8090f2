"""Which words the parsers decode together: sentences, or chunks of docs without boundaries.

A span is a half-open token range ``(start, end)`` of a Doc, parsed as one tree. Spans come from
the doc's own sentences (``sentence_spans``), from sentence starts a model predicted
(``predicted_spans``, ``segment_docs``), or from the reference's sentences in training; a
sentence longer than ``max_length`` becomes several spans (``continues``: whether a span carries
on the sentence of the span before it), cut where the model's sentence-start logit is highest
(in the second half of ``max_length`` tokens) when there is one, else after punctuation.

A model's segmentation (``segment_docs``) adds the UD tokenizer's sentence-start hints to the
model's logits where a doc carries them (``doc._.hc_sent_start_hints``, ``sentence_start_hints``),
never starts a sentence on a whitespace token (spaCy makes one for newlines and runs of spaces;
it ends the sentence before it, as spaCy's parser attaches it), and always starts one after a
blank line (whitespace holding two or more line breaks: a paragraph break), whatever the model
scored there. Inside a span both parsers keep whitespace a leaf of the word before it
(``leaf_whitespace``: which words that applies to).
"""
from typing import List, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import IS_SPACE, SENT_START
from spacy.tokens import Doc

from .names import MULTIWORD_TOKENS, SENT_START_HINTS, Span


def has_sent_starts(doc: Doc) -> bool:
    """``doc.has_annotation("SENT_START")`` (whether the doc has preset sentence boundaries: a
    start or a non-start set after its first token, a ``sents`` hook, or at most one token),
    read from one array instead of spaCy's walk over the tokens in a generator, which costs
    more than the rest of a short sentence's bookkeeping."""
    if len(doc) <= 1 or "sents" in doc.user_hooks:
        return True
    return bool(doc.to_array(SENT_START)[1:].any())


def preset_sentences(doc: Doc) -> Optional[List[Span]]:
    """The doc's preset sentences (``has_sent_starts``) as spans, as ``doc.sents`` gives them, or
    None for a doc without any; read from one array of sentence-start flags."""
    if len(doc) == 0:
        return []
    if "sents" in doc.user_hooks:
        return [(s.start, s.end) for s in doc.sents]
    if len(doc) == 1:
        return [(0, 1)]
    flags = doc.to_array(SENT_START).tolist()  # a list: faster than numpy on a sentence's tokens
    if not any(flags[1:]):
        return None
    cuts = [0, *(i for i in range(1, len(flags)) if flags[i] == 1), len(flags)]
    return list(zip(cuts[:-1], cuts[1:]))


def doc_sentence_starts(doc: Doc) -> List[int]:
    """Token offsets where the doc's preset sentences begin (the whole doc without any)."""
    sentences = preset_sentences(doc)
    return [start for start, _ in sentences] if sentences is not None else [0]


def preset_spans(doc: Doc, max_length: int) -> Optional[List[Span]]:
    """``sentence_spans`` of a doc with preset sentences; None for a doc without any (for a model
    to segment)."""
    if max_length < 1:
        raise ValueError(f"max_length must be positive, got {max_length}")
    sentences = preset_sentences(doc)
    return None if sentences is None else chunked(doc, sentences, max_length)


def sentence_spans(doc: Doc, max_length: int) -> List[Span]:
    """Split ``doc`` into spans of at most ``max_length`` tokens, each parsed as one tree.

    Sentence boundaries are used when the doc has them (``SENT_START`` set by a senter,
    sentencizer, reader or the user); longer sentences and docs without boundaries are chunked,
    cutting after the last punctuation token of the window when there is one.
    """
    spans = preset_spans(doc, max_length)
    return spans if spans is not None else chunked(doc, [(0, len(doc))], max_length)


def predicted_spans(doc: Doc, starts: np.ndarray, max_length: int, logits: Optional[np.ndarray] = None) -> List[Span]:
    """Spans of the sentences that begin where ``starts`` (bool, one per token) is set (the first
    token always begins one), chunked to ``max_length`` (where ``logits``, the model's
    sentence-start logits (float per token), are highest, when given: ``chunked``)."""
    if max_length < 1:
        raise ValueError(f"max_length must be positive, got {max_length}")
    if len(doc) == 0:
        return []
    cuts = [0] + [i for i in np.flatnonzero(starts).tolist() if i > 0] + [len(doc)]
    return chunked(doc, list(zip(cuts[:-1], cuts[1:])), max_length, logits)


def segment_docs(
    docs: Sequence[Doc], given: Sequence[Optional[Sequence[Span]]], begins: Sequence[Optional[np.ndarray]],
    max_length: int,
) -> Tuple[List[List[Span]], List[Optional[List[int]]]]:
    """Per doc its spans and where its sentences begin (token offsets): the ``given`` spans
    (sentences None), or the sentences starting where ``begins`` (a model's prediction: its
    sentence-start logits, float per token, a start where positive; or its starts, bool per
    token) is set, after every blank line and at token 0, chunked to ``max_length`` (where the
    logits are highest: ``chunked``); without ``begins`` (None), chunks of the whole doc, each a
    sentence. A doc with the UD tokenizer's sentence-start hints (``sentence_start_hints``) has
    them added to the logits, the tokenizer's guess refined by the model's (without ``begins``,
    the hints decide; bool starts, which have no scale to add to, are kept as they are)."""
    spans, sentences = [], []
    for doc, doc_spans, doc_begins in zip(docs, given, begins):
        if doc_spans is not None:
            spans.append(list(doc_spans))
            sentences.append(None)
            continue
        hints = sentence_start_hints(doc)
        if hints is not None and doc_begins is None:
            doc_begins = hints
        elif hints is not None and np.asarray(doc_begins).dtype.kind == "f":
            doc_begins = np.asarray(doc_begins, dtype=np.float64) + hints
        if doc_begins is not None and len(doc):
            doc_begins = np.asarray(doc_begins)
            logits = doc_begins if doc_begins.dtype.kind == "f" else None
            starts = sentence_begins(doc, doc_begins > 0 if logits is not None else doc_begins)
            spans.append(predicted_spans(doc, starts, max_length, logits))
            sentences.append(np.flatnonzero(starts).tolist())
        else:
            spans.append(chunked(doc, [(0, len(doc))] if len(doc) else [], max_length))
            sentences.append([start for start, _ in spans[-1]])
    return spans, sentences


def sentence_start_hints(doc: Doc) -> Optional[np.ndarray]:
    """The UD tokenizer's sentence-start hints of ``doc`` (``doc._.hc_sent_start_hints``: float64
    per token, non-finite values as 0), or None where it has none or they do not fit the doc (a
    doc changed after tokenizing)."""
    hints = doc._.get(SENT_START_HINTS) if Doc.has_extension(SENT_START_HINTS) else None
    if hints is None:
        return None
    try:
        values = np.asarray(hints, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if values.shape != (len(doc),):
        return None
    if np.isfinite(values).all():
        return values
    return np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)


def sentence_begins(doc: Doc, begins: np.ndarray) -> np.ndarray:
    """Where the sentences of a non-empty ``doc`` begin (bool per token), from a model's ``begins``:
    token 0, and the model's starts and the first word after each blank line, each moved past
    whitespace (leading whitespace stays in the first sentence); none inside a multiword token."""
    begins = np.array(begins, dtype=bool)
    if len(begins) != len(doc):
        raise ValueError(f"{len(begins)} sentence-start flags for a doc of {len(doc)} tokens")
    space = whitespace(doc)
    out = _past_whitespace(begins | _blank_lines(doc, space), space)
    out[: _leading(space) + 1] = False
    out[_inside_multiword_tokens(doc)] = False
    out[0] = True
    return out


def _inside_multiword_tokens(doc: Doc) -> List[int]:
    """The words of ``doc`` after the first of each multiword token (``doc._.hc_multiword_tokens``,
    the UD tokenizer's): a sentence never begins there."""
    ranges = doc._.get(MULTIWORD_TOKENS) if Doc.has_extension(MULTIWORD_TOKENS) else None
    return [i for start, end, _ in ranges or () for i in range(start + 1, end)]


def whitespace(doc: Doc) -> np.ndarray:
    """Which tokens of ``doc`` are whitespace (bool per token)."""
    return doc.to_array(IS_SPACE).astype(bool) if len(doc) else np.zeros(0, dtype=bool)


def leaf_whitespace(space: np.ndarray) -> np.ndarray:
    """Of a span's whitespace words (``space``, bool per word), those a parser keeps leaves (of
    the nearest word before them, or after them at the span's start): all of them, except in a
    span of whitespace only, which parses like any other."""
    return space if not space.all() else np.zeros_like(space)


def span_whitespace(docs: Sequence[Doc], spans: Sequence[Sequence[Span]]) -> List[np.ndarray]:
    """``leaf_whitespace`` of every span (bool per word), docs in order, spans in order."""
    out = []
    for doc, doc_spans in zip(docs, spans):
        space = whitespace(doc) if doc_spans else None
        out.extend(leaf_whitespace(space[start:end]) for start, end in doc_spans)
    return out


def _leading(space: np.ndarray) -> int:
    """How many tokens of whitespace begin the doc."""
    words = np.flatnonzero(~space)
    return int(words[0]) if len(words) else len(space)


def _blank_lines(doc: Doc, space: np.ndarray) -> np.ndarray:
    """The first token of each run of whitespace tokens holding two or more line breaks."""
    out = np.zeros(len(doc), dtype=bool)
    blanks = np.flatnonzero(space)
    for run in np.split(blanks, np.flatnonzero(np.diff(blanks) > 1) + 1) if len(blanks) else []:
        if sum(doc[i].text.count("\n") for i in run.tolist()) >= 2:
            out[run[0]] = True
    return out


def _past_whitespace(begins: np.ndarray, space: np.ndarray) -> np.ndarray:
    """``begins`` with every start on a whitespace token moved to the next token that is not
    whitespace (dropped where there is none)."""
    if not (begins & space).any():
        return begins
    words = np.flatnonzero(~space)
    moved = np.searchsorted(words, np.flatnonzero(begins & space))
    out = begins & ~space
    out[words[moved[moved < len(words)]]] = True
    return out


def chunked(doc: Doc, sentences: Sequence[Span], max_length: int, logits: Optional[np.ndarray] = None) -> List[Span]:
    """``sentences`` with every one longer than ``max_length`` cut into chunks of at most
    ``max_length`` tokens. With ``logits`` (a model's sentence-start logits, float per token of
    ``doc``) each chunk ends before the token of the highest logit in the second half of the
    ``max_length`` tokens after its start (so no chunk but the last is under half as long), never
    a whitespace token, the latest of equal ones; without, after the last punctuation token of
    that half, else at ``max_length`` tokens."""
    spans: List[Span] = []
    space = whitespace(doc) if logits is not None and any(end - start > max_length for start, end in sentences) \
        else None
    for start, end in sentences:
        if space is not None:
            spans.extend(_chunk_at_logits(logits, space, start, end, max_length))
        else:
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


def _chunk_at_logits(logits: np.ndarray, space: np.ndarray, start: int, end: int, max_length: int) -> List[Span]:
    chunks = []
    while end - start > max_length:
        lo = start + max_length // 2 + 1  # the first word a chunk may end before, as in ``_chunk``
        window = np.asarray(logits[lo: start + max_length + 1], dtype=np.float64)
        window = np.where(space[lo: start + max_length + 1] | np.isnan(window), -np.inf, window)
        cut = start + max_length
        if (window > -np.inf).any():
            cut = lo + len(window) - 1 - int(np.argmax(window[::-1]))  # the latest of the highest
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
