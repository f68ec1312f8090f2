"""Writing parses onto Docs: one tree per span, never crossing spans, one root each; and tags.

Labels and tags are written as the uint64 codes ``Doc.from_array`` takes (``codes``: string hashes
for DEP and TAG, part-of-speech symbol ids for POS); a component keeps its names' codes in a
``CodeTable`` instead of encoding every token's string.
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD, IS_SPACE, POS, TAG
from spacy.parts_of_speech import IDS
from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..segment import has_sent_starts

# UD's unspecified dependency: links the chunks of a sentence longer than a parser's max_length.
JOIN_LABEL = "dep"


def codes(vocab: Vocab, attr: str, names: Sequence[str]) -> np.ndarray:
    """The uint64 codes of ``names`` as values of ``attr`` (``"DEP"``, ``"TAG"`` or ``"POS"``),
    the strings added to ``vocab``; POS names must be UD part-of-speech tags."""
    if attr == "POS":
        return np.array([IDS[name] for name in names], dtype=np.uint64)
    return np.array([vocab.strings.add(name) for name in names], dtype=np.uint64)


class CodeTable:
    """A component's ``codes`` of one attribute's names, encoded once per (vocab, names) pair:
    ``table(vocab, names)[ids]`` are the codes of the names ``ids`` select."""

    def __init__(self, attr: str) -> None:
        self.attr = attr
        self._key: Optional[Tuple] = None
        self._codes = np.zeros(0, dtype=np.uint64)

    def __call__(self, vocab: Vocab, names: Sequence[str]) -> np.ndarray:
        key = (id(vocab), tuple(names))
        if key != self._key:
            self._codes = codes(vocab, self.attr, names)
            self._key = key
        return self._codes


def write_trees(
    doc: Doc, spans: Sequence[Tuple[int, int]], heads: Sequence[np.ndarray], labels: Sequence[np.ndarray],
    continues: Optional[Sequence[bool]] = None,
) -> None:
    """Set ``token.head`` and ``token.dep_`` from span-local trees (``tree_columns``)."""
    if len(doc):
        doc.from_array([HEAD, DEP], tree_columns(doc, spans, heads, labels, continues))


def tree_columns(
    doc: Doc, spans: Sequence[Tuple[int, int]], heads: Sequence[np.ndarray], labels: Sequence[np.ndarray],
    continues: Optional[Sequence[bool]] = None,
) -> np.ndarray:
    """The (len(doc), 2) uint64 ``HEAD`` (relative) and ``DEP`` columns of span-local trees, as
    ``Doc.from_array`` takes them.

    ``heads[i]`` is the (n+1,) heads array of ``spans[i]`` (index 0 the span's root, word ``m`` the
    token ``start + m - 1``); ``labels[i]`` holds the n labels' codes (``codes(vocab, "DEP",
    names)``). Tokens outside every span (none, when spans come from ``segment.sentence_spans``)
    become their own roots.

    A span that continues a sentence (``continues[i]``; by default: its first token is not a
    sentence start of a doc with preset sentences, i.e. a sentence longer than ``max_length`` was
    chunked) is not made a sentence of its own: its root is attached to the root of the
    sentence's first span with ``JOIN_LABEL``. The arc is projective (every word it covers
    belongs to the first root's chunks), so the sentence stays one tree with one root.
    """
    if continues is None:
        preset = has_sent_starts(doc)
        continues = [preset and start > 0 and doc[start].is_sent_start is not True for start, _ in spans]
    columns = np.zeros((len(doc), 2), dtype=np.uint64)  # a token heading itself is a root in spaCy
    relative, deps = columns[:, 0].view(np.int64), columns[:, 1]
    join = doc.vocab.strings.add(JOIN_LABEL)
    sentence_root = -1
    for (start, end), tree, span_labels, joined in zip(spans, heads, labels, continues):
        local = np.asarray(tree[1:], dtype=np.int64)
        is_root = local == 0
        relative[start:end] = np.where(is_root, 0, local - 1 - np.arange(end - start))
        deps[start:end] = span_labels
        root = start + int(is_root.argmax())
        if joined and sentence_root >= 0:
            relative[root] = sentence_root - root
            deps[root] = join
        else:
            sentence_root = root
    return columns


# What spaCy's taggers give whitespace tokens (a tag objective never sees them in training).
SPACE_TAGS = {"POS": "SPACE", "TAG": "_SP"}


def write_parse(doc: Doc, spans: Sequence[Tuple[int, int]], heads: Sequence[np.ndarray],
                labels: Sequence[np.ndarray], continues: Optional[Sequence[bool]], tags: Dict[str, np.ndarray]) -> None:
    """``write_trees`` (with no spans: none) and the tags ``tags`` in one ``Doc.from_array`` call:
    each attribute of ``tags`` (``"POS"`` and/or ``"TAG"``) set to its codes (one per token,
    ``codes(vocab, attr, names)``) on the tokens of ``doc`` that have none, whitespace tokens given
    ``SPACE_TAGS``."""
    attrs, values = tag_columns(doc, tags)
    if spans and len(doc):
        attrs, values = [HEAD, DEP, *attrs], np.hstack([tree_columns(doc, spans, heads, labels, continues), values])
    if attrs:
        doc.from_array(attrs, values)


def tag_columns(doc: Doc, tags: Dict[str, np.ndarray]) -> Tuple[List[int], np.ndarray]:
    """The attribute ids and (len(doc), len(tags)) uint64 values of the tags ``write_parse``
    writes: the codes of ``tags``, where a token has no tag yet (else its own), ``SPACE_TAGS`` on
    whitespace."""
    for attr, values in tags.items():
        if attr not in SPACE_TAGS:
            raise ValueError(f"cannot write tags of {attr!r}: only POS and TAG")
        if len(values) != len(doc):
            raise ValueError(f"{len(values)} {attr} tags for a doc of {len(doc)} tokens")
    if not tags or len(doc) == 0:
        return [], np.zeros((len(doc), 0), dtype=np.uint64)
    attrs = [{"POS": POS, "TAG": TAG}[attr] for attr in tags]
    new = np.empty((len(doc), len(tags)), dtype=np.uint64)
    for i, values in enumerate(tags.values()):
        new[:, i] = values
    present = doc.to_array([*attrs, IS_SPACE])
    if present.any():  # tags set before (a tagger earlier in the pipeline), or whitespace tokens
        space = present[:, -1] != 0
        new[space] = [codes(doc.vocab, attr, [SPACE_TAGS[attr]])[0] for attr in tags]
        new = np.where(present[:, :-1] != 0, present[:, :-1], new)
    return attrs, new
