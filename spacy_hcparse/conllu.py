"""CoNLL-U reading and writing with errors that name the file and line.

Multiword-token lines (``1-2``) and empty nodes (``1.1``) are skipped on reading: the parsers work
on syntactic words, as UD's evaluation aligns to. Every other malformed line raises
``ConlluError`` naming the file and line; a sentence whose heads are not one tree (cycle, no root,
several roots) raises too, unless ``skip_invalid=True``, which skips it and records it in
``skipped`` so a caller can report it.
"""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, TextIO, Tuple, Union

import numpy as np

from .decoders._checks import tree_problem


class ConlluError(ValueError):
    """A malformed CoNLL-U input, with the file and line in the message."""


@dataclass
class Word:
    id: int
    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    head: int = 0
    deprel: str = "_"
    deps: str = "_"
    misc: str = "_"


@dataclass
class Sentence:
    """One sentence: its syntactic words (ids 1..n), comment lines and first line number."""

    words: List[Word]
    comments: List[str] = field(default_factory=list)
    line: int = 0

    @property
    def tokens(self) -> List[Word]:
        return self.words

    @property
    def heads(self) -> np.ndarray:
        """(n+1,) heads array in the decoders' convention (``heads[0] == -1``)."""
        return np.array([-1] + [w.head for w in self.words], dtype=np.int64)

    @property
    def sent_id(self) -> Optional[str]:
        for c in self.comments:
            if c.startswith("# sent_id"):
                return c.split("=", 1)[-1].strip()
        return None


def read_conllu(
    path: Union[str, Path], *, skip_invalid: bool = False, skipped: Optional[list] = None
) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL-U file (see the module docstring for what is checked)."""
    path = Path(path)
    with path.open(encoding="utf8") as handle:
        yield from parse_conllu(handle, str(path), skip_invalid=skip_invalid, skipped=skipped)


def parse_conllu(
    lines: Union[TextIO, List[str]],
    name: str = "<input>",
    *,
    skip_invalid: bool = False,
    skipped: Optional[list] = None,
    check_trees: bool = True,
) -> Iterator[Sentence]:
    """``read_conllu`` over lines. ``check_trees=False`` accepts heads that are not one tree
    (system output to be scored); every line is still checked."""
    check = dict(skip_invalid=skip_invalid, skipped=skipped, check_trees=check_trees)
    words: List[Word] = []
    comments: List[str] = []
    first = 0
    lineno = 0
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n").rstrip("\r")
        if not line.strip():
            if words or comments:
                sentence = _finish(words, comments, first, name, lineno, **check)
                if sentence is not None:
                    yield sentence
            words, comments, first = [], [], 0
            continue
        if not first:
            first = lineno
        if line.startswith("#"):
            comments.append(line)
            continue
        word = _parse_word(line, name, lineno)
        if word is None:
            continue
        if word.id != len(words) + 1:
            raise ConlluError(f"{name}:{lineno}: word id {word.id} out of sequence (expected {len(words) + 1})")
        words.append(word)
    if words or comments:
        sentence = _finish(words, comments, first, name, lineno + 1, **check)
        if sentence is not None:
            yield sentence


def _parse_word(line: str, name: str, lineno: int) -> Optional[Word]:
    cols = line.split("\t")
    if len(cols) != 10:
        raise ConlluError(f"{name}:{lineno}: expected 10 tab-separated columns, got {len(cols)}")
    ident = cols[0]
    if "-" in ident or "." in ident:
        _check_range_id(ident, name, lineno)
        return None  # multiword token or empty node: documented skip
    try:
        wid = int(ident)
    except ValueError:
        raise ConlluError(f"{name}:{lineno}: word id {ident!r} is not an integer") from None
    try:
        head = int(cols[6])
    except ValueError:
        raise ConlluError(f"{name}:{lineno}: head {cols[6]!r} is not an integer") from None
    if head < 0:
        raise ConlluError(f"{name}:{lineno}: negative head {head}")
    if not cols[1]:
        raise ConlluError(f"{name}:{lineno}: empty FORM column")
    return Word(wid, *cols[1:6], head, *cols[7:10])


def _check_range_id(ident: str, name: str, lineno: int) -> None:
    sep = "-" if "-" in ident else "."
    parts = ident.split(sep)
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ConlluError(f"{name}:{lineno}: malformed word id {ident!r}")


def _finish(words, comments, first, name, lineno, skip_invalid, skipped, check_trees) -> Optional[Sentence]:
    if not words:
        raise ConlluError(f"{name}:{lineno}: sentence starting at line {first} has no words")
    if not check_trees:
        return Sentence(words, comments, first)
    n = len(words)
    for w in words:
        if w.head > n:
            problem = f"head {w.head} of word {w.id} is out of range 0..{n}"
            break
    else:
        problem = tree_problem(np.array([-1] + [w.head for w in words], dtype=np.int64))
    sentence = Sentence(words, comments, first)
    if problem:
        message = f"{name}:{first}: sentence {sentence.sent_id or ''} is not a tree: {problem}".replace("  ", " ")
        if not skip_invalid:
            raise ConlluError(message)
        if skipped is not None:
            skipped.append(message)
        return None
    return sentence


def format_conllu(sentences: List[Tuple[List[str], List[int], List[str]]], comments=None) -> str:
    """CoNLL-U text for (words, heads (1-based, 0 root), labels) triples."""
    out = []
    for i, (words, heads, labels) in enumerate(sentences):
        for c in (comments[i] if comments else []):
            out.append(c)
        for j, (w, h, l) in enumerate(zip(words, heads, labels), start=1):
            out.append("\t".join([str(j), w, "_", "_", "_", "_", str(h), l, "_", "_"]))
        out.append("")
    return "\n".join(out) + "\n"
