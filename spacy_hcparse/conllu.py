"""CoNLL-U reading and writing with errors that name the file and line.

The parsers work on syntactic words, as UD's evaluation aligns to: multiword-token lines
(``2-3``) are not words, but each sentence keeps them (``Sentence.multiword``, by first word id) so
that a writer can put them back; empty nodes (``1.1``) are dropped. Their ids are still checked: a
range must start at the next word and end inside the sentence, an empty node must follow its
word. Every other
malformed line raises ``ConlluError`` naming the file and line: not 10 tab-separated columns, a
word id or head that is not an integer, ids out of sequence, a negative head or one beyond the
sentence's last word, an empty FORM, bytes that are not UTF-8 (a byte order mark is allowed). A
sentence whose heads are not one tree (cycle, no root, several roots) raises too, naming its
first line and ``sent_id``, unless ``skip_invalid=True``, which skips it and records the message in
``skipped`` so a caller can report it; ``check_trees=False`` (system output) accepts it.

``parsed_conllu`` writes one parsed sentence (a spaCy Doc or Span, read by duck typing: this module
imports no spaCy) with the pipeline's own tags, and with the multiword-token lines of its source;
``with_range_lines`` adds range lines for the multiword tokens a tokenizer kept on the Doc
(``doc._.hc_multiword_tokens``, read by ``multiword_ranges``).
"""
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, TextIO, Tuple, Union

import numpy as np

from .decoders._checks import tree_problem
from .names import MULTIWORD_TOKENS


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
    """One sentence: its syntactic words (ids 1..n), comment lines, first line number, and its
    multiword-token lines (``2-3\tcan't\t...``, without the line break) by first word id."""

    words: List[Word]
    comments: List[str] = field(default_factory=list)
    line: int = 0
    multiword: Dict[int, str] = field(default_factory=dict)

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
    with path.open("rb") as handle:
        yield from parse_conllu(_decoded(handle, str(path)), str(path), skip_invalid=skip_invalid, skipped=skipped)


def read_lines(path: Union[str, Path]) -> List[str]:
    """All lines of a UTF-8 text file (``"-"``: stdin); a line that is not UTF-8 raises
    ``ConlluError`` naming the file and line."""
    return list(iter_lines(path))


def iter_lines(path: Union[str, Path]) -> Iterator[str]:
    """The lines of a UTF-8 text file (``"-"``: stdin) one at a time, a leading byte order mark
    dropped; only the current line is held in memory. A line that is not UTF-8 raises
    ``ConlluError`` naming the file and line."""
    if str(path) == "-":
        yield from _without_bom(_decoded(sys.stdin.buffer, "<stdin>"))
        return
    with Path(path).open("rb") as handle:
        yield from _without_bom(_decoded(handle, str(path)))


def _without_bom(lines: Iterator[str]) -> Iterator[str]:
    for i, line in enumerate(lines):
        yield line.lstrip("\ufeff") if i == 0 else line


def _decoded(handle, name: str) -> Iterator[str]:
    """The lines of a binary file as text, with an error naming the line that is not UTF-8."""
    for lineno, raw in enumerate(handle, start=1):
        try:
            yield raw.decode("utf8")
        except UnicodeDecodeError as err:
            raise ConlluError(f"{name}:{lineno}: not valid UTF-8 ({err.reason} at byte {err.start} of the line)") from None


def parse_conllu(
    lines: Union[TextIO, List[str]],
    name: str = "<input>",
    *,
    skip_invalid: bool = False,
    skipped: Optional[list] = None,
    check_trees: bool = True,
    words_only: bool = False,
) -> Iterator[Sentence]:
    """``read_conllu`` over lines. ``check_trees=False`` accepts heads that are not one tree
    (system output to be scored); every line is still checked. ``words_only=True`` reads input
    for a parser: HEAD may also be ``_`` (read as 0) and trees are not checked."""
    check_trees = check_trees and not words_only
    check = dict(skip_invalid=skip_invalid, skipped=skipped, check_trees=check_trees)
    words: List[Word] = []
    comments: List[str] = []
    where: List[int] = []  # the line of each word, then of each multiword token's last word
    ranges: List[Tuple[int, int]] = []  # (last word id of a multiword token, its line)
    multiword: Dict[int, str] = {}  # first word id -> the multiword token's line
    first = 0
    lineno = 0
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n").rstrip("\r")
        if lineno == 1:
            line = line.lstrip("\ufeff")  # a byte order mark
        if not line.strip():
            if words or comments:
                sentence = _finish(words, comments, first, name, lineno, where, ranges, **check)
                if sentence is not None:
                    sentence.multiword = multiword
                    yield sentence
            words, comments, where, ranges, multiword, first = [], [], [], [], {}, 0
            continue
        if not first:
            first = lineno
        if line.startswith("#"):
            comments.append(line)
            continue
        word = _parse_word(line, name, lineno, len(words), ranges, words_only)
        if word is None:
            if "-" in line.split("\t", 1)[0]:
                multiword[len(words) + 1] = line
            continue
        if word.id != len(words) + 1:
            raise ConlluError(f"{name}:{lineno}: word id {word.id} out of sequence (expected {len(words) + 1})")
        words.append(word)
        where.append(lineno)
    if words or comments:
        sentence = _finish(words, comments, first, name, lineno + 1, where, ranges, **check)
        if sentence is not None:
            sentence.multiword = multiword
            yield sentence


def _parse_word(line: str, name: str, lineno: int, n_words: int, ranges: list, words_only: bool = False) -> Optional[Word]:
    cols = line.split("\t")
    if len(cols) != 10:
        raise ConlluError(f"{name}:{lineno}: expected 10 tab-separated columns, got {len(cols)}")
    ident = cols[0]
    if "-" in ident or "." in ident:
        _check_range_id(ident, name, lineno, n_words, ranges)
        return None  # multiword token (kept by the caller) or empty node: not a word
    try:
        wid = int(ident)
    except ValueError:
        raise ConlluError(f"{name}:{lineno}: word id {ident!r} is not an integer") from None
    try:
        head = 0 if words_only and cols[6] == "_" else int(cols[6])
    except ValueError:
        raise ConlluError(f"{name}:{lineno}: head {cols[6]!r} is not an integer") from None
    if head < 0:
        raise ConlluError(f"{name}:{lineno}: negative head {head}")
    if not cols[1]:
        raise ConlluError(f"{name}:{lineno}: empty FORM column")
    return Word(wid, *cols[1:6], head, *cols[7:10])


def _check_range_id(ident: str, name: str, lineno: int, n_words: int, ranges: list) -> None:
    """A multiword token ``a-b`` must come right before word ``a`` and span ``b > a``; an empty node
    ``k.m`` must follow word ``k``."""
    sep = "-" if "-" in ident else "."
    parts = ident.split(sep)
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ConlluError(f"{name}:{lineno}: malformed word id {ident!r}")
    a, b = int(parts[0]), int(parts[1])
    if sep == "-":
        if a != n_words + 1 or b <= a:
            raise ConlluError(
                f"{name}:{lineno}: multiword token {ident!r} must span words {n_words + 1}..N with N > {n_words + 1}"
            )
        ranges.append((b, lineno))
    elif a != n_words or b < 1:
        raise ConlluError(f"{name}:{lineno}: empty node {ident!r} out of place (expected {n_words}.1, {n_words}.2, ...)")


def _finish(words, comments, first, name, lineno, where, ranges, skip_invalid, skipped, check_trees) -> Optional[Sentence]:
    if not words:
        raise ConlluError(f"{name}:{lineno}: sentence starting at line {first} has no words")
    n = len(words)
    for last, line in ranges:
        if last > n:
            raise ConlluError(f"{name}:{line}: multiword token reaches word {last}, the sentence has {n} words")
    for w, line in zip(words, where):
        if w.head > n:
            raise ConlluError(f"{name}:{line}: head {w.head} of word {w.id} is out of range 0..{n}")
    if not check_trees:
        return Sentence(words, comments, first)
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


def _comment_key(line: str) -> str:
    """``sent_id`` of ``# sent_id = x``; the key of any ``# key = value`` comment, else ''."""
    body = line.lstrip("#").strip()
    return body.split("=", 1)[0].strip() if "=" in body else ""


def parsed_conllu(sent, source: Optional[Sentence] = None, *, keep_columns: bool = False,
                  sent_id: Optional[str] = None) -> str:
    """One CoNLL-U block (ending in a blank line) for ``sent``, a parsed spaCy Doc or Span read as
    one sentence: heads 1-based within it, 0 for a token that heads itself (spaCy's root); the
    label is ``root`` exactly where the head is 0 (another label there, or ``root`` elsewhere,
    becomes ``root`` / ``dep``). LEMMA, UPOS, XPOS and FEATS are the pipeline's (``_`` where it set
    none). With ``source``, the sentence it was parsed from (same words), its comments, MISC and
    multiword-token lines are kept, and with ``keep_columns`` its LEMMA, UPOS, XPOS and FEATS too;
    without one, MISC holds ``SpaceAfter=No`` where the text has no space. Comments that are
    missing get added: ``# sent_id = <sent_id>`` (when given) and ``# text = <the sentence's text>``."""
    tokens = list(sent)
    if source is not None and len(source.words) != len(tokens):
        raise ValueError(f"sentence of {len(tokens)} tokens written against a source of {len(source.words)} words")
    offset = tokens[0].i if tokens else 0
    lines = list(source.comments) if source is not None else []
    if sent_id is not None and not any(_comment_key(line) == "sent_id" for line in lines):
        lines.insert(0, f"# sent_id = {sent_id}")
    rows = []
    for i, token in enumerate(tokens, start=1):
        head = 0 if token.head.i == token.i else token.head.i - offset + 1
        label = token.dep_ or "dep"
        label = "root" if head == 0 else "dep" if label.lower() == "root" else label
        tags = [token.lemma_ or "_", token.pos_ or "_", token.tag_ or "_", str(token.morph) or "_"]
        if source is None:
            misc = "_" if token.whitespace_ or i == len(tokens) else "SpaceAfter=No"
        else:
            word = source.words[i - 1]
            misc = word.misc
            if keep_columns:
                tags = [word.lemma, word.upos, word.xpos, word.feats]
            if i in source.multiword:
                rows.append(source.multiword[i])
        rows.append("\t".join([str(i), token.text, *tags, str(head), label, "_", misc]))
    if source is None:
        rows = with_range_lines(rows, [t.i for t in tokens], multiword_ranges(sent.doc if tokens else None))
    if not any(_comment_key(line) == "text" for line in lines):
        lines.append(f"# text = {text_of(rows)}")
    return "\n".join(lines + rows) + "\n\n"


def text_of(rows: List[str]) -> str:
    """A sentence's text from its word and multiword-token lines, as UD reads it: the forms of
    the tokens (a multiword token's, not its words'), a space after each but where MISC holds
    ``SpaceAfter=No``, none after the last."""
    pieces, covered = [], 0
    for row in rows:
        cols = row.split("\t")
        if "." in cols[0]:
            continue
        if "-" in cols[0]:
            covered = int(cols[0].split("-")[1])
        elif int(cols[0]) <= covered:
            continue
        pieces.append(cols[1] + ("" if "SpaceAfter=No" in cols[9].split("|") else " "))
    return "".join(pieces).rstrip(" ")


def multiword_ranges(doc) -> List[Tuple[int, int, str]]:
    """The multiword tokens a tokenizer kept on ``doc`` (``doc._.hc_multiword_tokens``: (start,
    end, form), Doc token indices, end exclusive); none where the extension is not set."""
    if doc is None:
        return []
    try:
        return list(doc._.get(MULTIWORD_TOKENS) or [])
    except AttributeError:  # the extension is not registered: no tokenizer of ours made the Doc
        return []


def with_range_lines(rows: List[str], token_ids: List[int], ranges: List[Tuple[int, int, str]]) -> List[str]:
    """Word ``rows`` (CoNLL-U lines; ``rows[k]`` is the Doc token ``token_ids[k]``, word id k + 1)
    with a range line ``a-b FORM _ ... MISC`` before the words of each multiword token in
    ``ranges`` whose words are all written, consecutively: its MISC takes the last word's
    ``SpaceAfter=No``, which leaves the words' MISC (UD keeps it on the surface token)."""
    if not ranges or not rows:
        return rows
    row_of = {t: k for k, t in enumerate(token_ids)}
    before: Dict[int, str] = {}
    rows = list(rows)
    for start, end, form in ranges:
        ks = [row_of.get(t) for t in range(start, end)]
        if end - start < 2 or None in ks or ks != list(range(ks[0], ks[0] + len(ks))):
            continue
        first, last = ks[0], ks[-1]
        space_after = "_"
        for k in range(first, last + 1):
            cols = rows[k].split("\t")
            misc = [m for m in cols[9].split("|") if m not in ("_", "SpaceAfter=No")]
            if k == last and "SpaceAfter=No" in cols[9].split("|"):
                space_after = "SpaceAfter=No"
            cols[9] = "|".join(misc) or "_"
            rows[k] = "\t".join(cols)
        before[first] = "\t".join([f"{first + 1}-{last + 1}", form.replace("\t", " ")] + ["_"] * 7 + [space_after])
    out = []
    for k, row in enumerate(rows):
        if k in before:
            out.append(before[k])
        out.append(row)
    return out
