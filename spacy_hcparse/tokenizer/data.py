"""Training texts for the tokenizer: a treebank's raw text with a label per character.

The text of each gold document is ``evaluation.raw_text.raw_documents`` (``# text`` lines, joined
as ``SpaceAfter=No`` says), with its paragraph breaks (``# newpar``) as blank lines or, for a
``flat_share`` of the documents chosen by the seed, as spaces, so that the model learns sentence
ends both with and without line breaks. Labels are ``features.LABELS``: the last character of
every surface token is a token end (a multiword token's: ``MWT_END``), of every sentence a
sentence end; whitespace and other characters are ``INSIDE``. Long documents are cut at
whitespace into pieces of at most ``max_chars`` characters.

``split_table`` learns the letter and digit runs the treebank cuts inside (``features.SplitTable``);
``piece_examples`` turns labelled texts into the model's rows and a label per piece: the label of
the piece's last character.
"""
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ..evaluation.conll18 import Treebank
from ..evaluation.raw_text import raw_documents
from .features import INSIDE, IS_TOKEN_END, MWT_END, SENT_END, TOKEN_END, SplitTable, is_space, piece_features, piece_spans


@dataclass
class LabelledText:
    """A text and its per-character labels (int32, ``features.LABELS``)."""

    text: str
    labels: np.ndarray


def char_labels(bank: Treebank) -> np.ndarray:
    """A label per character of ``bank.chars`` (the treebank's text without spaces)."""
    labels = np.full(len(bank.chars), INSIDE, dtype=np.int32)
    multiword = {(w.start, w.end) for w in bank.words if w.multiword}
    for start, end in bank.tokens:
        labels[end - 1] = MWT_END if (start, end) in multiword else TOKEN_END
    for _, end in bank.sentences:
        labels[end - 1] += SENT_END - TOKEN_END  # TOKEN_END -> SENT_END, MWT_END -> MWT_SENT_END
    return labels


def labelled_texts(bank: Treebank, *, flat_share: float = 0.5, max_chars: int = 1000,
                   seed: int = 0) -> List[LabelledText]:
    """The treebank's documents as labelled texts (see module docstring)."""
    if not 0.0 <= flat_share <= 1.0:
        raise ValueError(f"flat_share must be in [0, 1], got {flat_share}")
    rng = random.Random(seed)
    labels = char_labels(bank)
    blank = raw_documents(bank, group=0, paragraphs=True)
    flat = raw_documents(bank, group=0, paragraphs=False)
    out = []
    for with_breaks, without in zip(blank, flat):
        doc = without if rng.random() < flat_share else with_breaks
        out.extend(_pieces(_labelled(bank, labels, doc.text, doc.start), max_chars))
    return out


def multiword_pairs(bank: Treebank) -> Iterator[Tuple[str, Tuple[str, ...]]]:
    """(surface form, word forms) of every multiword token of the treebank."""
    words_of = {}
    for w in bank.words:
        if w.multiword:
            words_of.setdefault((w.start, w.end), []).append(w.form)
    for (start, end), form in zip(bank.tokens, bank.token_forms):
        words = words_of.get((start, end))
        if words:
            yield form, tuple(words)


def _labelled(bank: Treebank, labels: np.ndarray, text: str, first_sentence: int) -> LabelledText:
    space = is_space(text)
    where = np.flatnonzero(~space)
    begin = bank.sentences[first_sentence][0]
    chars = bank.chars[begin:begin + len(where)]
    if "".join(text[i] for i in where) != chars:
        raise ValueError(f"{bank.name}: the text of sentence {first_sentence + 1} does not spell its tokens")
    out = np.full(len(text), INSIDE, dtype=np.int32)
    out[where] = labels[begin:begin + len(where)]
    return LabelledText(text, out)


def _pieces(item: LabelledText, max_chars: int) -> List[LabelledText]:
    """``item`` cut after whitespace into pieces of at most ``max_chars`` characters (a piece
    without whitespace in reach is cut where it must)."""
    text, labels = item.text, item.labels
    pieces, start = [], 0
    while len(text) - start > max_chars:
        cut = text.rfind(" ", start + 1, start + max_chars)
        cut = start + max_chars if cut <= start else cut + 1
        pieces.append(LabelledText(text[start:cut], labels[start:cut]))
        start = cut
    if start < len(text):
        pieces.append(LabelledText(text[start:], labels[start:]))
    return pieces


@dataclass
class PieceExample:
    """A text as the model reads it: ``features`` (n_pieces, 4) uint64 and a label per piece."""

    features: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


def split_table(texts: Sequence[LabelledText]) -> SplitTable:
    """The runs that ``texts`` cut inside at least half the time (``features.SplitTable``)."""
    seen: Dict[str, Counter] = defaultdict(Counter)
    runs = []
    for item in texts:
        starts, ends = piece_spans(item.text)
        inner = IS_TOKEN_END[item.labels]
        inner_ends = np.concatenate(([0], np.cumsum(inner)))
        for k in np.flatnonzero(inner_ends[ends - 1] - inner_ends[starts] > 0).tolist():
            run = item.text[starts[k]:ends[k]]
            cuts = tuple(int(c) + 1 for c in np.flatnonzero(inner[starts[k]:ends[k] - 1]))
            if len(run.lower()) == len(run):
                seen[run.lower()][cuts] += 1
        runs.append((item.text, starts, ends))
    if not seen:
        return SplitTable()
    total: Counter = Counter()
    for text, starts, ends in runs:
        for s, e in zip(starts.tolist(), ends.tolist()):
            if e - s > 1 and text[s:e].lower() in seen:
                total[text[s:e].lower()] += 1
    counts = {run: {**c, (): total[run] - sum(c.values())} for run, c in seen.items()}
    return SplitTable.learn(counts)


def piece_examples(texts: Sequence[LabelledText], splits: SplitTable,
                   rule_ends: Optional[Callable[[str], np.ndarray]] = None) -> List[PieceExample]:
    """The model's rows and a label per piece of every text (pieces cut by ``splits``;
    ``rule_ends(text)``: where a rule tokenizer ends its tokens, see ``features.piece_features``)."""
    out = []
    for item in texts:
        starts, ends = piece_spans(item.text, splits)
        if len(starts):
            rules = rule_ends(item.text) if rule_ends is not None else None
            out.append(PieceExample(piece_features(item.text, starts, ends, rules), item.labels[ends - 1].astype(np.int32)))
    return out
