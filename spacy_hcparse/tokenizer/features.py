"""Characters as the tokenizer's model reads them, and the labels it predicts for them.

Each character of a text is one row of ``char_features``: column 0 its lowercased code point
(hashed by the model's embedding, so any character has a row), column 1 its class
(``CHAR_CLASSES``: space, line break, lower or upper case letter, digit, sentence punctuation,
quotes, brackets, dashes...). Case lives in the class, so the embedding of ``a`` is shared by
``A``.

Labels, one per character (``LABELS``): ``INSIDE`` (not the last character of a token, or
whitespace), ``TOKEN_END`` (the last character of a token), ``SENT_END`` (the last character of
a sentence's last token), ``MWT_END`` (the last character of a multiword token) and
``MWT_SENT_END`` (both).
"""
import unicodedata
from typing import Dict

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


def code_points(text: str) -> np.ndarray:
    """The code points of ``text`` (uint32, one per character)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def char_features(text: str) -> np.ndarray:
    """The model's input for ``text``: (n_chars, 2) uint64, lowercased code point and class."""
    codes = code_points(text)
    inside = codes < _TABLE_SIZE
    index = np.where(inside, codes, 0)
    feats = np.empty((len(codes), 2), dtype=np.uint64)
    feats[:, 0] = np.where(inside, LOWER_TABLE[index], codes)
    feats[:, 1] = np.where(inside, CLASS_TABLE[index], CHAR_CLASSES["other"])
    return feats


def is_space(text: str) -> np.ndarray:
    """Per character of ``text``: is it whitespace (``str.isspace``)?"""
    codes = code_points(text)
    inside = codes < _TABLE_SIZE
    return np.where(inside, SPACE_TABLE[np.where(inside, codes, 0)], False)
