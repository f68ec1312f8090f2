"""spaCy's string ids (``spacy.strings.hash_string``: MurmurHash64A, seed 1, of the UTF-8 bytes)
of many spans of one text at once, so that the tokenizer can build its Docs from ids
(``Doc(vocab, words=[id, ...])``, which spaCy documents) instead of a Python string per word.

An id is only an id where the vocabulary's ``StringStore`` holds its string: the caller gives
the string itself for the others (and for spaCy's symbols, such as ``"ID"``, whose id is not
their hash), and a text that has no UTF-8 form (a lone surrogate) gets no ids at all.
"""
from typing import Optional

import numpy as np

from ..compiling import njit

_M = np.uint64(0xC6A4A7935BD1E995)
_R = np.uint64(47)
SEED = np.uint64(1)  # spaCy's hash_utf8: hash64(string, length, 1)


def span_orths(text: str, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Optional[np.ndarray]:
    """``hash_string(text[a:b])`` of every span (uint64; ``codes``: ``features.code_points(text)``;
    ``starts``, ``ends``: character offsets, end exclusive); None where ``text`` has no UTF-8 form."""
    if text.isascii():
        data = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        return _murmur_spans(data, np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64))
    try:
        data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    except UnicodeEncodeError:
        return None
    widths = 1 + (codes >= 0x80).astype(np.int64) + (codes >= 0x800) + (codes >= 0x10000)
    at = np.concatenate(([0], np.cumsum(widths)))  # per character, its first byte
    return _murmur_spans(data, at[starts], at[ends])


@njit(cache=True)
def _murmur_spans(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """MurmurHash64A (seed ``SEED``) of ``data[starts[i]:ends[i]]`` for every i (byte offsets)."""
    out = np.empty(len(starts), dtype=np.uint64)
    for i in range(len(starts)):
        lo, n = starts[i], ends[i] - starts[i]
        h = SEED ^ (np.uint64(n) * _M)
        blocks = n // 8
        for b in range(blocks):
            k = np.uint64(0)
            for j in range(8):
                k |= np.uint64(data[lo + 8 * b + j]) << np.uint64(8 * j)
            k *= _M
            k ^= k >> _R
            k *= _M
            h ^= k
            h *= _M
        rest = n - 8 * blocks
        if rest > 0:
            for j in range(rest - 1, -1, -1):
                h ^= np.uint64(data[lo + 8 * blocks + j]) << np.uint64(8 * j)
            h *= _M
        h ^= h >> _R
        h *= _M
        h ^= h >> _R
        out[i] = h
    return out
