"""Writing parses onto Docs: one tree per span, never crossing spans, one root each; and tags."""
from typing import List, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD, IS_SPACE, POS, TAG
from spacy.parts_of_speech import IDS
from spacy.tokens import Doc

# UD's unspecified dependency: links the chunks of a sentence longer than a parser's max_length.
JOIN_LABEL = "dep"


def write_trees(
    doc: Doc, spans: Sequence[Tuple[int, int]], heads: Sequence[np.ndarray], labels: Sequence[List[str]],
    continues: Optional[Sequence[bool]] = None,
) -> None:
    """Set ``token.head`` and ``token.dep_`` from span-local trees.

    ``heads[i]`` is the (n+1,) heads array of ``spans[i]`` (index 0 the span's root, word ``m`` the
    token ``start + m - 1``); ``labels[i]`` holds the n labels. Tokens outside every span (none,
    when spans come from ``segment.sentence_spans``) become their own roots.

    A span that continues a sentence (``continues[i]``; by default: its first token is not a
    sentence start of a doc with preset sentences, i.e. a sentence longer than ``max_length`` was
    chunked) is not made a sentence of its own: its root is attached to the root of the
    sentence's first span with ``JOIN_LABEL``. The arc is projective (every word it covers
    belongs to the first root's chunks), so the sentence stays one tree with one root.
    """
    if len(doc) == 0:
        return
    if continues is None:
        preset = doc.has_annotation("SENT_START")
        continues = [preset and start > 0 and doc[start].is_sent_start is not True for start, _ in spans]
    positions = np.arange(len(doc), dtype=np.int64)
    absolute = positions.copy()  # a token heading itself is a root in spaCy
    deps = np.zeros(len(doc), dtype=np.uint64)
    strings = doc.vocab.strings
    sentence_root = -1
    for (start, end), tree, names, joined in zip(spans, heads, labels, continues):
        local = np.asarray(tree[1:], dtype=np.int64)
        span_pos = positions[start:end]
        absolute[start:end] = np.where(local == 0, span_pos, start + local - 1)
        deps[start:end] = [strings.add(name) for name in names]
        root = start + int(np.flatnonzero(local == 0)[0])
        if joined and sentence_root >= 0:
            absolute[root] = sentence_root
            deps[root] = strings.add(JOIN_LABEL)
        else:
            sentence_root = root
    relative = (absolute - positions).astype(np.uint64)
    doc.from_array([HEAD, DEP], np.stack([relative, deps], axis=1))


# What spaCy's taggers give whitespace tokens (a tag objective never sees them in training).
SPACE_TAGS = {"POS": "SPACE", "TAG": "_SP"}


def write_tags(doc: Doc, attr: str, tags: Sequence[str]) -> None:
    """Set ``attr`` (``"POS"`` or ``"TAG"``) to ``tags`` (one per token) on the tokens of ``doc``
    that have none; whitespace tokens get ``SPACE_TAGS``."""
    if attr not in SPACE_TAGS:
        raise ValueError(f"cannot write tags of {attr!r}: only POS and TAG")
    if len(tags) != len(doc):
        raise ValueError(f"{len(tags)} {attr} tags for a doc of {len(doc)} tokens")
    column = {"POS": POS, "TAG": TAG}[attr]
    values = doc.to_array([column, IS_SPACE]).astype(np.uint64)
    missing = values[:, 0] == 0
    if not missing.any():
        return
    encode = (lambda tag: IDS[tag]) if attr == "POS" else doc.vocab.strings.add
    codes = {tag: encode(tag) for tag in set(tags)}
    new = np.array([codes[tag] for tag in tags], dtype=np.uint64)
    new[values[:, 1] != 0] = encode(SPACE_TAGS[attr])
    doc.from_array([column], np.where(missing, new, values[:, 0])[:, None])
