"""System CoNLL-U from spaCy Docs parsed from raw text, for the CoNLL 2018 evaluation.

Each ``doc.sents`` sentence becomes one CoNLL-U sentence with ``# sent_id`` and ``# text``;
word ids are 1-based; FORM is the token text; LEMMA, UPOS (``pos_``), XPOS (``tag_``) and FEATS
(``morph``) are written where the pipeline set them (``Doc.has_annotation``), ``_`` otherwise;
HEAD is 0 for the root; DEPREL is the token's label with spaCy's ``ROOT`` written ``root``; MISC
has ``SpaceAfter=No`` where a non-space character follows the token directly.

A multiword token a tokenizer kept on the Doc (``doc._.hc_multiword_tokens``) is written as a
range line before its words (``conllu.with_range_lines``), so the evaluation sees its surface form.

Whitespace tokens (spaCy makes one for every run of spaces beyond the first, and for newlines)
are not written: they hold no non-space character, so they are not words to the evaluation. A word
whose head is a dropped whitespace token takes that token's head (up the chain of whitespace
tokens); a word below a whitespace token that was the root becomes a root.

Every sentence is written as one tree, because the CoNLL 2018 evaluation (like the official script)
rejects other heads. Repairs are counted in the ``stats`` Counter, and a caller should report them:

* ``heads_outside_sentence``: a head in another sentence. The parsers in this package never do
  this (a Doc's sentences come from the parse or are respected by it), but a Doc whose sentence
  starts were changed after parsing can. Such a word is written as a root candidate.
* ``roots_attached``: a sentence with several root candidates (a word outside, below a whitespace
  root, or several ``token.head == token``) keeps one: spaCy's own root if there is one, else the
  first; the others attach to it with their label kept.
* ``cycles_broken``: a word on a cycle of heads (not made by spaCy's parsers) attaches to the root.
* ``unparsed_sentences``: a Doc without a parse (``has_annotation("DEP")`` is false) is written with
  the first word as the root and every other word attached to it, DEPREL ``_``; such sentences are
  counted here, not as repairs. A Doc without sentence boundaries is one sentence.
"""
from collections import Counter
from pathlib import Path
from typing import Iterable, List, Optional, Tuple, Union

from spacy.tokens import Doc, Span, Token

from ..conllu import multiword_ranges, with_range_lines

REPAIRS = ("heads_outside_sentence", "roots_attached", "cycles_broken")


def doc_to_conllu(doc: Doc, *, doc_id: Optional[str] = None, first_sent: int = 1,
                  stats: Optional[Counter] = None) -> str:
    """CoNLL-U text of ``doc`` (see the module docstring). Sentence ids are ``{doc_id}-{k}`` (or
    ``k`` without ``doc_id``) for k from ``first_sent``; with ``doc_id`` the first sentence also
    gets ``# newdoc id``. ``stats`` (updated in place) counts sentences, words, dropped
    whitespace tokens and the repairs."""
    stats = Counter() if stats is None else stats
    blocks = []
    k = first_sent
    for sent in _sentences(doc):
        words = [t for t in sent if not t.is_space]
        stats["whitespace_tokens"] += len(sent) - len(words)
        if not words:
            continue
        comments = []
        if doc_id is not None and not blocks:
            comments.append(f"# newdoc id = {doc_id}")
        comments.append(f"# sent_id = {k if doc_id is None else f'{doc_id}-{k}'}")
        comments.append(f"# text = {_one_line(doc.text[words[0].idx:words[-1].idx + len(words[-1])])}")
        rows = with_range_lines(sentence_rows(sent, words, stats), [t.i for t in words], multiword_ranges(doc))
        blocks.append("\n".join(comments + rows) + "\n")
        stats["sentences"] += 1
        stats["words"] += len(words)
        k += 1
    return "\n".join(blocks) + ("\n" if blocks else "")


def write_conllu(docs: Iterable[Doc], path: Union[str, Path], *, doc_prefix: str = "doc") -> Counter:
    """Write every Doc (``doc_to_conllu``, ids ``{doc_prefix}{n}``) to ``path``; return the stats."""
    stats: Counter = Counter()
    with Path(path).open("w", encoding="utf8") as out:
        for n, doc in enumerate(docs, start=1):
            out.write(doc_to_conllu(doc, doc_id=f"{doc_prefix}{n}", stats=stats))
    return stats


def sentence_rows(sent: Span, words: List[Token], stats: Counter) -> List[str]:
    """The word lines of one sentence; ``words`` are its tokens that are not whitespace."""
    doc = sent.doc
    parsed = doc.has_annotation("DEP")
    heads, own_root = _heads(sent, words, stats) if parsed else ([0] * len(words), None)
    heads = _one_tree(heads, own_root, stats if parsed else Counter())
    if not parsed:
        stats["unparsed_sentences"] += 1
    has = {attr: doc.has_annotation(attr) for attr in ("LEMMA", "POS", "TAG", "MORPH")}
    rows = []
    for i, (token, head) in enumerate(zip(words, heads), start=1):
        label = token.dep_ if parsed else ""
        cols = [
            str(i),
            _one_line(token.text),
            _one_line(token.lemma_) if has["LEMMA"] else "",
            token.pos_ if has["POS"] else "",
            token.tag_ if has["TAG"] else "",
            str(token.morph) if has["MORPH"] else "",
            str(head),
            "root" if label == "ROOT" else label,
            "",
            "" if _space_follows(token) else "SpaceAfter=No",
        ]
        rows.append("\t".join(c or "_" for c in cols))
    return rows


def _heads(sent: Span, words: List[Token], stats: Counter) -> Tuple[List[int], Optional[int]]:
    """1-based heads within the written words (0: root candidate) and the index of spaCy's own
    root among them, if it is a word."""
    ids = {t.i: k + 1 for k, t in enumerate(words)}
    heads, own_root = [], None
    for k, token in enumerate(words):
        if token.head.i == token.i:
            heads.append(0)
            own_root = k if own_root is None else own_root
            continue
        head, seen = token.head, {token.i}
        while head.is_space and head.head.i != head.i and head.i not in seen:
            seen.add(head.i)
            head = head.head
        if head.i in ids:
            heads.append(ids[head.i])
        else:
            if not (sent.start <= head.i < sent.end):
                stats["heads_outside_sentence"] += 1
            heads.append(0)
    return heads, own_root


def _one_tree(heads: List[int], root: Optional[int], stats: Counter) -> List[int]:
    """``heads`` (1-based, 0 root) made one tree: ``root`` (or the first root candidate, or word 0)
    stays the root, other root candidates and one word of each cycle attach to it."""
    heads = list(heads)
    candidates = [k for k, h in enumerate(heads) if h == 0]
    if root is None:
        root = candidates[0] if candidates else 0
    heads[root] = 0
    for k in candidates:
        if k != root:
            heads[k] = root + 1
            stats["roots_attached"] += 1
    state = [0] * len(heads)  # 0 unseen, 1 on the current path, 2 reaches the root
    state[root] = 2
    for k in range(len(heads)):
        path = []
        j = k
        while state[j] == 0:
            state[j] = 1
            path.append(j)
            j = heads[j] - 1
        if state[j] == 1:  # j is on a cycle: attach it to the root
            heads[j] = root + 1
            stats["cycles_broken"] += 1
        for p in path:
            state[p] = 2
    return heads


def _sentences(doc: Doc) -> Iterable[Span]:
    """``doc.sents``, or the whole Doc as one sentence where nothing set sentence boundaries."""
    if doc.has_annotation("SENT_START") or doc.has_annotation("DEP"):
        return doc.sents
    return [doc[:]] if len(doc) else []


def _space_follows(token: Token) -> bool:
    """A space (or the end of the text) follows the token: its own trailing space, or a
    whitespace token next."""
    doc = token.doc
    return bool(token.whitespace_) or token.i + 1 == len(doc) or doc[token.i + 1].is_space


def _one_line(text: str) -> str:
    """Text for one CoNLL-U column or comment: tabs and line breaks become spaces."""
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
