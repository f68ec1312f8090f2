"""Text as the tokenizer's model reads it: pieces (character runs) with their features, and the
labels it predicts for them.

A token of UD ends, in the languages this package serves, almost always where a run of letters,
a run of digits or a single other character ends. ``piece_spans`` cuts a text into such pieces:
maximal runs of letters (with their marks), maximal runs of digits, and every other non-space
character alone; whitespace belongs to no piece. The few runs a treebank cuts inside
(``cannot`` = ``can not``) are cut by a learned table (``SplitTable``) before the model reads
them. The model labels the last character of every piece, so a label per piece is a label per
character at every place a token can end.

Each piece is one row of ``piece_features`` (uint64 columns): 0 a hash of the lowercased piece,
1 a hash of its last three lowercased characters, 2 its shape (class of its first character,
case pattern, length), 3 the whitespace before and after it (none, space, line break, blank line,
other), 4 a hash of its first three lowercased characters, 5 what a rule tokenizer (spaCy's for
the language) says of the piece's end: 1 no token ends there, 2 a token ends there (0 unknown).

Labels (``LABELS``): ``INSIDE`` (the piece does not end a token), ``TOKEN_END``, ``SENT_END``
(ends a sentence's last token), ``MWT_END`` (ends a multiword token) and ``MWT_SENT_END`` (both).
"""
import re
import unicodedata
from typing import Dict, Iterable, NamedTuple, Optional, Sequence, Tuple

import numpy as np

INSIDE, TOKEN_END, SENT_END, MWT_END, MWT_SENT_END = range(5)
LABELS = ("inside", "token_end", "sent_end", "mwt_end", "mwt_sent_end")
IS_TOKEN_END = np.array([False, True, True, True, True])
IS_SENT_END = np.array([False, False, True, False, True])
IS_MWT = np.array([False, False, False, True, True])

CHAR_CLASSES: Dict[str, int] = {
    "space": 1, "newline": 2, "other_space": 3, "lower": 4, "upper": 5, "letter": 6, "digit": 7,
    "period": 8, "stop": 9, "comma": 10, "quote": 11, "bracket": 12, "dash": 13, "punct": 14,
    "symbol": 15, "other": 16,
}
N_CLASSES = max(CHAR_CLASSES.values()) + 1
_TABLE_SIZE = 0x10000  # code points below this are looked up in tables; others are "other"


def _char_class(ch: str) -> int:
    if ch == " ":
        return CHAR_CLASSES["space"]
    if ch in "\n\r\u2028\u2029":
        return CHAR_CLASSES["newline"]
    if ch.isspace():
        return CHAR_CLASSES["other_space"]
    if ch == ".":
        return CHAR_CLASSES["period"]
    if ch in "!?;\u2026\u3002\uff01\uff1f":
        return CHAR_CLASSES["stop"]
    if ch in ",:\u060c\u3001":
        return CHAR_CLASSES["comma"]
    cat = unicodedata.category(ch)
    if ch in "'\"`" or cat in ("Pi", "Pf"):
        return CHAR_CLASSES["quote"]
    if cat in ("Ps", "Pe"):
        return CHAR_CLASSES["bracket"]
    if cat == "Pd":
        return CHAR_CLASSES["dash"]
    if cat.startswith("P"):
        return CHAR_CLASSES["punct"]
    if cat == "Ll":
        return CHAR_CLASSES["lower"]
    if cat in ("Lu", "Lt"):
        return CHAR_CLASSES["upper"]
    if cat.startswith("L") or cat.startswith("M"):
        return CHAR_CLASSES["letter"]
    if cat.startswith("N"):
        return CHAR_CLASSES["digit"]
    if cat.startswith("S"):
        return CHAR_CLASSES["symbol"]
    return CHAR_CLASSES["other"]


def _lower(ch: str) -> int:
    low = ch.lower()
    return ord(low) if len(low) == 1 else ord(ch)


def _tables():
    chars = [chr(c) for c in range(_TABLE_SIZE)]
    classes = np.array([_char_class(c) if not 0xD800 <= ord(c) < 0xE000 else CHAR_CLASSES["other"]
                        for c in chars], dtype=np.uint64)
    lower = np.array([_lower(c) if not 0xD800 <= ord(c) < 0xE000 else ord(c) for c in chars], dtype=np.uint64)
    return classes, lower


CLASS_TABLE, LOWER_TABLE = _tables()
SPACE_TABLE = np.isin(CLASS_TABLE, [CHAR_CLASSES["space"], CHAR_CLASSES["newline"], CHAR_CLASSES["other_space"]])

# What a character is to ``piece_spans``: the alternatives of ``_PIECE``.
SPACE_KIND, LETTER_KIND, DIGIT_KIND, OTHER_KIND = range(4)


def _piece_kind(ch: str) -> int:
    """``ch``'s alternative of ``_PIECE``: whitespace (``\\s``), a letter run's (``[^\\W\\d_]``:
    ``str.isalnum()`` but no decimal digit), a digit run's (``\\d``) or another character alone."""
    if ch.isspace():
        return SPACE_KIND
    if ch.isdecimal():
        return DIGIT_KIND
    return LETTER_KIND if ch.isalnum() else OTHER_KIND


KIND_TABLE = np.array([_piece_kind(chr(c)) for c in range(_TABLE_SIZE)], dtype=np.int8)


def code_points(text: str) -> np.ndarray:
    """The code points of ``text`` (uint32, one per character)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def is_space(text: str) -> np.ndarray:
    """Per character of ``text``: is it whitespace (``str.isspace``)?"""
    return space_codes(code_points(text))


def space_codes(codes: np.ndarray) -> np.ndarray:
    """Per code point: is it whitespace (``str.isspace``; none is above U+FFFF)?"""
    inside = codes < _TABLE_SIZE
    return np.where(inside, SPACE_TABLE[np.where(inside, codes, 0)], False)


_PIECE = re.compile(r"[^\W\d_]+|\d+|\S")
_HASH_MUL = np.uint64(0x100000001B3)  # odd: invertible modulo 2**64
_HASH_INV = np.uint64(pow(0x100000001B3, -1, 2 ** 64))
N_SHAPES = N_CLASSES * 4 * 6
N_GAPS = 5 * 5
N_FEATURES = 6
N_RULE_VALUES = 3
HASHED_COLUMNS = [0, 1, 4]  # the piece's text, its last and first three characters
RULE_COLUMN = 5  # what the rule tokenizer says of the piece's end
UNKNOWN = np.uint64(0)  # what training puts in a hashed column to hide the text (piece dropout)
Hashes = Tuple[np.ndarray, np.ndarray]  # a text's prefix hashes and inverse powers: ``text_hashes``


def piece_spans(text: str, splits: "SplitTable" = None, hashes: Optional[Hashes] = None,
                codes: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the pieces of ``text`` (int64 character offsets, end exclusive), runs that
    ``splits`` cuts cut (see module docstring; ``hashes``: ``text_hashes(text)``, ``codes``:
    ``code_points(text)``, each computed when None)."""
    kinds = piece_kinds(code_points(text) if codes is None else codes)
    n = len(kinds)
    # a piece begins where a character's kind differs from the one before, or at every OTHER_KIND
    # character, and ends before the next beginning or whitespace
    new = np.empty(n + 1, dtype=bool)
    new[0], new[n] = True, True
    np.not_equal(kinds[1:], kinds[:-1], out=new[1:n])
    new[:n] |= kinds == OTHER_KIND
    new[:n] &= kinds != SPACE_KIND
    starts = np.flatnonzero(new[:n])
    after = new.copy()  # where a piece ends: the next piece begins, whitespace, or the text's end
    after[:n] |= kinds == SPACE_KIND
    after = np.flatnonzero(after[1:]) + 1
    ends = after[np.searchsorted(after, starts, side="right")] if len(starts) else after[:0]
    starts, ends = starts.astype(np.int64), ends.astype(np.int64)
    if splits is not None and len(splits):
        starts, ends = splits.apply(text, starts, ends, hashes)
    return starts, ends


def piece_kinds(codes: np.ndarray) -> np.ndarray:
    """Per code point, its ``_piece_kind`` (int8): from ``KIND_TABLE`` below U+10000, else from
    ``str`` methods (one character at a time: such characters are rare)."""
    inside = codes < _TABLE_SIZE
    kinds = KIND_TABLE[np.where(inside, codes, 0)]
    for i in np.flatnonzero(~inside).tolist():
        kinds[i] = _piece_kind(chr(codes[i]))
    return kinds


def piece_features(text: str, starts: np.ndarray, ends: np.ndarray, rule_ends: Optional[np.ndarray] = None,
                   bounds: Optional[Tuple[np.ndarray, np.ndarray]] = None, hashes: Optional[Hashes] = None,
                   codes: Optional[np.ndarray] = None) -> np.ndarray:
    """The model's input: (n_pieces, N_FEATURES) uint64 rows (see module docstring); ``rule_ends``:
    the character offsets (exclusive) where a rule tokenizer ends its tokens, None if unknown.
    ``bounds``: per piece, the (start, end) offsets of the stretch of ``text`` it belongs to, for
    several texts joined into one (``join_texts``): the whitespace before a stretch's first piece
    and after its last is read inside the stretch only, so every piece has the features it has
    in its own text (None: the whole text is one stretch). ``hashes``: ``text_hashes(text)``,
    ``codes``: ``code_points(text)``, each computed when None."""
    n = len(starts)
    feats = np.zeros((n, N_FEATURES), dtype=np.uint64)
    if n == 0:
        return feats
    codes = code_points(text) if codes is None else codes
    inside = codes < _TABLE_SIZE
    index = np.where(inside, codes, 0)
    classes = np.where(inside, CLASS_TABLE[index], CHAR_CLASSES["other"]).astype(np.int64)
    prefix, inverse = hashes if hashes is not None else text_hashes(text)
    feats[:, 0] = _span_hash(prefix, inverse, starts, ends)
    feats[:, 1] = _span_hash(prefix, inverse, np.maximum(starts, ends - 3), ends)
    feats[:, 4] = _span_hash(prefix, inverse, starts, np.minimum(ends, starts + 3))
    upper = np.concatenate(([0], np.cumsum(classes == CHAR_CLASSES["upper"])))
    first_upper = (classes[starts] == CHAR_CLASSES["upper"]).astype(np.int64)
    rest_upper = (upper[ends] - upper[starts + 1] > 0).astype(np.int64)
    length = np.minimum(ends - starts, 6) - 1
    feats[:, 2] = ((classes[starts] * 4 + first_upper * 2 + rest_upper) * 6 + length).astype(np.uint64)
    if bounds is None:
        gap = _gap_kinds(_gap_counts(codes), np.concatenate(([0], ends)), np.concatenate((starts, [len(text)])))
        before, after = gap[:-1], gap[1:]
    else:
        lo, hi = bounds
        counts = _gap_counts(codes)
        before = _gap_kinds(counts, np.maximum(np.concatenate(([0], ends[:-1])), lo), starts)
        after = _gap_kinds(counts, ends, np.minimum(np.concatenate((starts[1:], [len(text)])), hi))
    feats[:, 3] = (before * 5 + after).astype(np.uint64)
    if rule_ends is not None:
        feats[:, RULE_COLUMN] = _sorted_isin(ends, rule_ends).astype(np.uint64) + np.uint64(1)
    return feats


def _sorted_isin(values: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """``np.isin(values, sorted_values)`` where ``sorted_values`` ascend (sorted here otherwise)."""
    if len(sorted_values) > 1 and (sorted_values[1:] < sorted_values[:-1]).any():
        sorted_values = np.sort(sorted_values)
    at = np.minimum(np.searchsorted(sorted_values, values), max(len(sorted_values) - 1, 0))
    return sorted_values[at] == values if len(sorted_values) else np.zeros(len(values), dtype=bool)


SEPARATOR = "\n\n"  # between texts joined into one: whitespace, so no piece crosses it


class Joined(NamedTuple):
    """A batch of texts as one string (``join_texts``): ``text``; ``offsets`` (int64, one per text
    and one more at the end: the joined length plus ``len(SEPARATOR)``), so that text ``i`` is
    ``text[offsets[i]:offsets[i + 1] - len(SEPARATOR)]``; its ``codes`` (``code_points``) and
    ``space`` (``space_codes`` of them), read once for the whole batch."""

    text: str
    offsets: np.ndarray
    codes: np.ndarray
    space: np.ndarray


def join_texts(texts: Sequence[str]) -> Joined:
    """``texts`` as one string, ``SEPARATOR`` between them (``Joined``)."""
    lengths = np.array([len(t) + len(SEPARATOR) for t in texts], dtype=np.int64)
    text = SEPARATOR.join(texts)
    codes = code_points(text)
    return Joined(text, np.concatenate(([0], np.cumsum(lengths))), codes, space_codes(codes))


def span_hashes(texts: Iterable[str]) -> np.ndarray:
    """The hash ``piece_features`` gives each of ``texts`` read as one piece (lowercased)."""
    out = []
    for text in texts:
        lower = np.array([_lower(c) if ord(c) < _TABLE_SIZE else ord(c) for c in text], dtype=np.uint64)
        prefix, inverse = _prefix_hashes(lower)
        out.append(_span_hash(prefix, inverse, np.array([0]), np.array([len(text)]))[0])
    return np.array(out, dtype=np.uint64)


def text_hashes(text: str, codes: Optional[np.ndarray] = None) -> Hashes:
    """``_prefix_hashes`` of the lowercased ``text``, from which ``_span_hash`` hashes any span:
    what ``piece_features`` and ``SplitTable.apply`` read (computed once for both; ``codes``:
    ``code_points(text)``, computed when None)."""
    codes = code_points(text) if codes is None else codes
    inside = codes < _TABLE_SIZE
    return _prefix_hashes(np.where(inside, LOWER_TABLE[np.where(inside, codes, 0)], codes))


def _prefix_hashes(lower: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Prefix sums of ``lower[i] * MUL**i`` and the powers ``MUL**-i`` (wrapping uint64), so that
    a span's polynomial hash is ``(prefix[e] - prefix[s]) * inverse[s]``."""
    n = len(lower)
    powers, inverse = _powers(n + 1)
    with np.errstate(over="ignore"):
        prefix = np.concatenate(([np.uint64(0)], np.cumsum((lower + np.uint64(1)) * powers[:n], dtype=np.uint64)))
    return prefix, inverse[:n + 1]


_POWERS = (np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint64))  # MUL**i and MUL**-i, i < len


def _powers(n: int) -> Tuple[np.ndarray, np.ndarray]:
    """``MUL**i`` and ``MUL**-i`` (wrapping uint64) for i < at least ``n``, kept from one call to
    the next (grown to twice the length asked when short)."""
    global _POWERS
    if len(_POWERS[0]) < n:
        size = 2 * n
        with np.errstate(over="ignore"):
            _POWERS = tuple(np.concatenate(([np.uint64(1)], np.cumprod(np.full(size - 1, mul, dtype=np.uint64))))
                            for mul in (_HASH_MUL, _HASH_INV))
    return _POWERS


def _span_hash(prefix: np.ndarray, inverse: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (prefix[ends] - prefix[starts]) * inverse[starts] + (ends - starts).astype(np.uint64)


def _gap_counts(codes: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Prefix counts of line breaks and of spaces in a text's code points (what ``_gap_kinds`` reads)."""
    return np.concatenate(([0], np.cumsum(codes == 10))), np.concatenate(([0], np.cumsum(codes == 32)))


def _gap_kinds(counts: Tuple[np.ndarray, np.ndarray], gap_starts: np.ndarray, gap_ends: np.ndarray) -> np.ndarray:
    """Kind of each text stretch [gap_starts, gap_ends): 0 empty, 1 spaces, 2 one line break, 3 a
    blank line (two or more line breaks), 4 other whitespace (``counts``: ``_gap_counts``)."""
    newline, space = counts
    size = gap_ends - gap_starts
    breaks = newline[gap_ends] - newline[gap_starts]
    spaces = space[gap_ends] - space[gap_starts]
    kind = np.where(size == 0, 0, np.where(breaks >= 2, 3, np.where(breaks == 1, 2, np.where(spaces == size, 1, 4))))
    return kind.astype(np.int64)


class SplitTable:
    """Letter or digit runs a treebank cuts inside: lowercased run -> cut offsets (inside the run),
    kept where the treebank cuts at least half of the run's occurrences."""

    def __init__(self, cuts: Dict[str, Tuple[int, ...]] = None):
        self.cuts: Dict[str, Tuple[int, ...]] = {k: tuple(int(c) for c in v) for k, v in (cuts or {}).items()}
        for run, offsets in self.cuts.items():
            if not offsets or any(not 0 < c < len(run) for c in offsets) or list(offsets) != sorted(set(offsets)):
                raise ValueError(f"bad cut offsets {offsets!r} for {run!r}")
        self._hashes = np.sort(span_hashes(self.cuts)) if self.cuts else np.zeros(0, dtype=np.uint64)

    def __len__(self) -> int:
        return len(self.cuts)

    def apply(self, text: str, starts: np.ndarray, ends: np.ndarray, hashes: Optional[Hashes] = None
              ) -> Tuple[np.ndarray, np.ndarray]:
        """The pieces (starts, ends) with the runs of the table cut (``hashes``: ``text_hashes(text)``,
        computed when None)."""
        if not len(self.cuts):
            return starts, ends
        prefix, inverse = hashes if hashes is not None else text_hashes(text)
        hits = np.flatnonzero(_sorted_isin(_span_hash(prefix, inverse, starts, ends), self._hashes))
        if not len(hits):
            return starts, ends
        cut_at = []
        for k in hits.tolist():
            offsets = self.cuts.get(text[starts[k]:ends[k]].lower())  # None for a hash collision
            if offsets is None:
                continue
            cut_at.extend(starts[k] + c for c in offsets)
        if not cut_at:
            return starts, ends
        cuts = np.array(cut_at, dtype=np.int64)  # ascending, each strictly inside its run
        return (np.insert(starts, np.searchsorted(starts, cuts), cuts),
                np.insert(ends, np.searchsorted(ends, cuts), cuts))

    @classmethod
    def learn(cls, counts: Dict[str, Dict[Tuple[int, ...], int]]) -> "SplitTable":
        """From ``run -> {cut offsets (empty: not cut) -> occurrences}``."""
        cuts = {}
        for run, seen in counts.items():
            total = sum(seen.values())
            best, n = max(((c, k) for c, k in seen.items() if c), key=lambda x: x[1], default=((), 0))
            if best and 2 * n >= total:
                cuts[run] = best
        return cls(cuts)
