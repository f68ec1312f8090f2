"""Where spaCy's rule tokenizer of a language ends its tokens: the hint the tokenizer's model reads
(``features.piece_features`` column 5) and its decoding weighs (``hint_weight``).

spaCy's tokenizer cuts a text at whitespace and tokenizes each run of non-space characters (a
"chunk") on its own, by its special cases and affix rules. ``RuleEnds`` does the same with a cache
of each chunk's token ends (offsets inside the chunk: a dictionary from the chunk to its row in
flat arrays of ends), so that a chunk seen before costs a dictionary look-up, and the chunks not
seen yet go through spaCy's tokenizer together, as one text. This is spaCy's tokenization of each
chunk alone; on a whole text spaCy's tokenizer differs only where its phrase matcher of special
cases matches tokens across a space (``' '`` as the pattern of ``''``), which changes nothing there
but keeps a special case off the tokens it shares (``' ''1``: ``''`` is then not a token). Where a
special case holds whitespace beside other characters (no language of spaCy 3.8 has one; whitespace
alone, as ``"\\n"``, only makes whitespace tokens), chunks are not independent and every text goes
through spaCy's tokenizer whole.
"""
from itertools import chain, repeat
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import spacy
from spacy.attrs import IDX, LENGTH
from spacy.tokenizer import Tokenizer

from .features import SEPARATOR as SEPARATOR_OF_TEXTS
from .features import is_space

CACHE_SIZE = 200_000  # chunks remembered; the cache starts again when full
SEPARATOR = "\n"  # between the chunks tokenized together


class RuleEnds:
    """Token ends of ``spacy.blank(lang).tokenizer`` (see module docstring)."""

    def __init__(self, lang: str, tokenizer: Optional[Tokenizer] = None):
        """``tokenizer``: spaCy's rule tokenizer to read (None: ``spacy.blank(lang)``'s)."""
        self.lang = lang
        self.tokenizer = tokenizer if tokenizer is not None else spacy.blank(lang).tokenizer
        self.whole_texts = any(_crosses_whitespace(case) for case in (self.tokenizer.rules or {}))
        self._clear()

    def _clear(self) -> None:
        """Forget every chunk: chunk -> row ``k``, whose token ends are ``_ends[_ptr[k]:_ptr[k + 1]]``."""
        self._rows: Dict[str, int] = {}
        self._ptr = np.zeros(1, dtype=np.int64)
        self._ends = np.zeros(0, dtype=np.int64)

    def __call__(self, texts: Sequence[str], offsets: np.ndarray) -> np.ndarray:
        """The token ends (exclusive character offsets, int64, ascending) of every text, text
        ``i``'s shifted by ``offsets[i]``; whitespace tokens' ends are left out where chunks are
        cached (no piece ends in whitespace)."""
        if self.whole_texts:
            return self._whole(texts, offsets)
        chunks: List[str] = []
        for text in texts:
            chunks.extend(text.split())  # str.split() cuts at str.isspace(), as spaCy's tokenizer
        return self._ends_of(chunks, _chunk_starts(texts, offsets))

    def joined(self, joined: str, offsets: np.ndarray, space: np.ndarray) -> np.ndarray:
        """``self(texts, offsets[:-1])`` for texts joined into ``joined`` as ``features.join_texts``
        joins them (``offsets``: as it gives them; ``space``: ``features.is_space(joined)``). Its
        separator is whitespace, so the chunks of ``joined`` are those of the texts, read at once."""
        if self.whole_texts:
            size = len(SEPARATOR_OF_TEXTS)
            texts = [joined[a:b - size] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
            return self._whole(texts, offsets[:-1])
        begins = ~space
        begins[1:] &= space[:-1]
        return self._ends_of(joined.split(), np.flatnonzero(begins).astype(np.int64))

    def _ends_of(self, chunks: List[str], chunk_starts: np.ndarray) -> np.ndarray:
        """The token ends of ``chunks`` (``chunk_starts``: where each begins), in one array."""
        if not chunks:
            return np.zeros(0, dtype=np.int64)
        rows = self._rows
        index = np.fromiter(map(rows.get, chunks, repeat(-1)), dtype=np.int64, count=len(chunks))
        if (index < 0).any():
            missing = [c for c in dict.fromkeys(chunks) if c not in rows]
            if len(rows) + len(missing) > CACHE_SIZE:
                self._clear()
                rows = self._rows
            self._remember(missing, self._chunk_ends(missing))
            index = np.fromiter(map(rows.__getitem__, chunks), dtype=np.int64, count=len(chunks))
        first, counts = self._ptr[index], self._ptr[index + 1] - self._ptr[index]
        before = np.cumsum(counts) - counts  # ends of the chunks before each one
        at = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(first - before, counts)
        return np.repeat(chunk_starts, counts) + self._ends[at]

    def _remember(self, chunks: List[str], ends: List[Tuple[int, ...]]) -> None:
        """Add ``chunks`` (not cached yet) and their token ends to the cache."""
        counts = np.fromiter(map(len, ends), dtype=np.int64, count=len(ends))
        self._rows.update(zip(chunks, range(len(self._rows), len(self._rows) + len(chunks))))
        self._ptr = np.concatenate((self._ptr, self._ptr[-1] + np.cumsum(counts)))
        self._ends = np.concatenate((self._ends, np.fromiter(chain.from_iterable(ends), dtype=np.int64,
                                                              count=int(counts.sum()))))

    def _chunk_ends(self, chunks: List[str]) -> List[Tuple[int, ...]]:
        """Per chunk its token ends (offsets inside it): the chunks tokenized as one text, a line
        break apart (a whitespace token, which no special case's pattern holds: each chunk is
        tokenized as alone)."""
        doc = self.tokenizer(SEPARATOR.join(chunks))
        spans = doc.to_array([IDX, LENGTH]).astype(np.int64).reshape(-1, 2)
        lengths = np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks))
        starts = np.concatenate(([0], np.cumsum(lengths + len(SEPARATOR))[:-1]))
        which = np.searchsorted(starts, spans[:, 0], side="right") - 1
        inside = spans[:, 0] < starts[which] + lengths[which]  # not a separator's token
        spans, which = spans[inside], which[inside]
        inner = (spans[:, 0] + spans[:, 1] - starts[which]).tolist()
        cuts = np.searchsorted(which, np.arange(1, len(chunks))).tolist()
        return [tuple(inner[a:b]) for a, b in zip([0] + cuts, cuts + [len(inner)])]

    def _whole(self, texts: Sequence[str], offsets: np.ndarray) -> np.ndarray:
        out = [np.zeros(0, dtype=np.int64)]
        for doc, offset in zip(self.tokenizer.pipe(texts), np.asarray(offsets, dtype=np.int64).tolist()):
            spans = doc.to_array([IDX, LENGTH]).astype(np.int64)
            if len(spans):
                out.append(spans[:, 0] + spans[:, 1] + offset)
        return np.concatenate(out)


def _chunk_starts(texts: Sequence[str], offsets: np.ndarray) -> np.ndarray:
    """Where the runs of non-space characters of every text begin (int64), text ``i``'s shifted
    by ``offsets[i]``, texts in order."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    firsts = np.concatenate(([0], np.cumsum(lengths)[:-1]))  # of each text in the texts joined
    space = is_space("".join(texts))
    begins = ~space
    begins[1:] &= space[:-1]
    begins[firsts[lengths > 0]] = ~space[firsts[lengths > 0]]  # a text's first character
    at = np.flatnonzero(begins)
    text_of = np.searchsorted(firsts, at, side="right") - 1
    return (at - firsts[text_of] + np.asarray(offsets, dtype=np.int64)[text_of]).astype(np.int64)


def _crosses_whitespace(case: str) -> bool:
    """Whether a special case of spaCy's tokenizer holds whitespace and other characters."""
    return any(ch.isspace() for ch in case) and not case.isspace()
