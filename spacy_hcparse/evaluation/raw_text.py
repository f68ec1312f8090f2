"""Raw text from a gold CoNLL-U file, for parsing from text and scoring with the CoNLL 2018 evaluation.

Each sentence's text is its ``# text`` comment; where that is missing, or its non-space characters
are not those of the sentence's tokens, the text is rebuilt from the token FORMs (multiword tokens
as written) and ``SpaceAfter=No``. Sentences are joined into documents: a paragraph or document
boundary (a ``# newpar`` or ``# newdoc`` comment on the next sentence) becomes a blank line
(``paragraphs=False``: a space, text without line breaks); any other boundary a space, or
nothing after ``SpaceAfter=No`` on the sentence's last token.

``group=N`` makes documents of N consecutive sentences in file order (the last may be shorter),
whatever the gold document boundaries; ``group=0`` one document per gold document (``# newdoc``;
the whole file when it has none). The non-space characters of all documents, in order, are those
of the gold file, so the system CoNLL-U written from their parses aligns with it.
"""
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Iterable, Iterator, List, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc

from .conll18 import Treebank, read_treebank


@dataclass
class RawDocument:
    """A document of raw text: gold sentences ``start`` to ``stop`` (exclusive) holding ``n_words``
    syntactic words."""

    text: str
    start: int
    stop: int
    n_words: int


def sentence_texts(bank: Treebank) -> Tuple[List[str], int]:
    """Each sentence's surface text, and how many were rebuilt from tokens (see module docstring)."""
    texts, rebuilt = [], 0
    for k, (lo, hi) in enumerate(bank.sentence_tokens):
        text = _comment_value(bank.sentence_comments[k], "text")
        a, b = bank.sentences[k]
        if text is None or _non_space(text) != _non_space(bank.chars[a:b]):
            rebuilt += 1
            parts = [form + (" " if space else "") for form, space in zip(bank.token_forms[lo:hi], bank.space_after[lo:hi])]
            text = "".join(parts).rstrip(" ")
        texts.append(text)
    return texts, rebuilt


def raw_documents(bank: Treebank, group: int = 0, paragraphs: bool = True) -> List[RawDocument]:
    """The gold file's text as documents of ``group`` sentences (0: per gold document), with a
    blank line at each paragraph break (``paragraphs``) or a space."""
    if group < 0:
        raise ValueError(f"group must be >= 0, got {group}")
    texts, _ = sentence_texts(bank)
    words_in = _words_per_sentence(bank)
    starts = set(range(0, len(texts), group)) if group else {0} | {
        k for k, c in enumerate(bank.sentence_comments) if _has_comment(c, "newdoc")}
    bounds = sorted(s for s in starts if s < len(texts)) + [len(texts)]
    docs = []
    for start, stop in zip(bounds, bounds[1:]):
        parts = [texts[start]]
        for k in range(start + 1, stop):
            parts.append(_separator(bank, k, paragraphs))
            parts.append(texts[k])
        docs.append(RawDocument("".join(parts), start, stop, sum(words_in[start:stop])))
    return docs


def read_raw_documents(path: Union[str, Path], group: int = 0) -> Tuple[Treebank, List[RawDocument]]:
    """The gold treebank at ``path`` and its text as ``raw_documents``."""
    bank = read_treebank(path)
    return bank, raw_documents(bank, group)


def _separator(bank: Treebank, k: int, paragraphs: bool = True) -> str:
    """What comes between sentence ``k - 1`` and sentence ``k``."""
    comments = bank.sentence_comments[k]
    if paragraphs and (_has_comment(comments, "newpar") or _has_comment(comments, "newdoc")):
        return "\n\n"
    last_token = bank.sentence_tokens[k - 1][1] - 1
    return " " if bank.space_after[last_token] else ""


def _words_per_sentence(bank: Treebank) -> List[int]:
    counts = [0] * len(bank.sentences)
    k = 0
    for w in bank.words:
        while w.start >= bank.sentences[k][1]:
            k += 1
        counts[k] += 1
    return counts


def _comment_value(comments: List[str], key: str):
    for c in comments:
        body = c[1:].strip()
        if body.startswith(key) and "=" in body and body.split("=", 1)[0].strip() == key:
            return body.split("=", 1)[1].strip()
    return None


def _has_comment(comments: List[str], key: str) -> bool:
    """A ``# key`` or ``# key id = ...`` line is there."""
    return any(c[1:].split("=", 1)[0].split()[:1] == [key] for c in comments)


def _non_space(text: str) -> str:
    return "".join(c for c in text if not c.isspace())


def tokenized(nlp: Language, texts: Iterable[Union[str, Doc]], batch_size: int = 64) -> Iterator[Doc]:
    """Docs of ``texts`` from the pipeline's tokenizer, ``batch_size`` texts per batch of its
    ``pipe`` (a ``UDTokenizer`` runs its model once per batch), one ``pipe`` call per run of
    texts; Docs pass through. spaCy's ``nlp.pipe`` tokenizes one text at a time: give it these
    Docs instead of the texts. A pipeline whose tokenizer has no ``pipe`` gets the texts back as
    they are."""
    if not hasattr(getattr(nlp, "tokenizer", None), "pipe"):
        yield from texts
        return
    for are_texts, run in groupby(texts, key=lambda item: isinstance(item, str)):
        if are_texts:
            yield from nlp.tokenizer.pipe(run, batch_size=batch_size)
        else:
            yield from run
