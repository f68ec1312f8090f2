"""Odd inputs for both parser components, and the checks every parse must pass.

``odd_docs(nlp)`` returns ``{name: Doc}``: an empty doc, one token, whitespace tokens, emoji and
mixed scripts (tokenized and given as words), 5,000 words without sentence boundaries, one preset
sentence of 600 words, docs that already carry heads (a full tree, every token its own root, a
flat tree), repeated punctuation. ``assert_parsed(doc, n)`` checks one tree per sentence.
"""
from typing import Dict, List

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc

from spacy_hcparse.decoders import tree_problem
from tests.treebank import SENTENCES

VOCAB = [w for s in SENTENCES for w in s[0]]
MIXED_TEXT = "I ❤️ 東京 and Москва 🙂 — مرحبا , नमस्ते !"


def words_without_boundaries(n: int, seed: int = 0) -> List[str]:
    rng = np.random.default_rng(seed)
    return [str(w) for w in rng.choice(VOCAB, size=n)]


def with_heads(nlp: Language, words, heads, deps) -> Doc:
    return Doc(nlp.vocab, words=words, heads=heads, deps=deps)


def odd_docs(nlp: Language) -> Dict[str, Doc]:
    vocab = nlp.vocab
    words, gold, labels = SENTENCES[3]
    n = len(words)
    long_sentence = words_without_boundaries(600, seed=1)
    return {
        "empty": Doc(vocab, words=[]),
        "one-token": Doc(vocab, words=["Hello"]),
        "whitespace-only": Doc(vocab, words=["  ", "\n", "\t"]),
        "whitespace-between": Doc(vocab, words=["Hi", " ", "there", "\t", "!", "\n"]),
        "emoji-mixed-tokenized": nlp.make_doc(MIXED_TEXT),
        "emoji-mixed-words": Doc(vocab, words=["🙂", "日本語", "Привет", "مرحبا", "❤️", "ok", "."]),
        "punct-only": Doc(vocab, words=["."] * 7),
        "5000-words-no-boundaries": Doc(vocab, words=words_without_boundaries(5000)),
        "600-word-sentence": Doc(vocab, words=long_sentence, sent_starts=[True] + [False] * 599),
        "heads-gold-tree": with_heads(nlp, words, [h - 1 if h else i for i, h in enumerate(gold)], labels),
        "heads-all-roots": with_heads(nlp, words, list(range(n)), ["dep"] * n),
        "heads-flat": with_heads(nlp, words, [0] * n, ["ROOT"] + ["dep"] * (n - 1)),
    }


def same_boundaries(nlp: Language, doc: Doc) -> Doc:
    """A fresh doc with ``doc``'s words and sentence starts, no heads: what a doc that already
    carries heads must be parsed like (its heads only fix the sentence boundaries)."""
    return Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               sent_starts=[bool(t.is_sent_start) for t in doc])


def span_heads(sent) -> np.ndarray:
    return np.array([-1] + [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent], dtype=np.int64)


def assert_parsed(doc: Doc, n_words: int) -> None:
    """len unchanged; every sentence one tree inside it with exactly one root, the root (and
    only it) labelled ``ROOT`` and heading itself; every token labelled."""
    assert len(doc) == n_words
    if not n_words:
        return
    assert doc.has_annotation("DEP")
    covered = 0
    for sent in doc.sents:
        heads = span_heads(sent)
        assert not tree_problem(heads), (tree_problem(heads), sent.text[:80])
        assert all(sent.start <= t.head.i < sent.end for t in sent)
        roots = [t for t in sent if t.head == t]
        assert len(roots) == 1 and roots[0].dep_ == "ROOT", [(t.text, t.dep_) for t in roots]
        assert [t.dep_ == "ROOT" for t in sent] == [t.head == t for t in sent]
        assert all(t.dep_ for t in sent)
        covered += len(sent)
    assert covered == n_words


def parse_of(doc: Doc):
    return [(t.head.i, t.dep_) for t in doc]
