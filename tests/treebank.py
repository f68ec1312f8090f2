"""A tiny hand-written treebank for component tests (heads 1-based, 0 = root), with
non-projective trees among them."""
from typing import List

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

SENTENCES = [
    # (words, heads, deps)
    (["I", "like", "green", "eggs", "."], [2, 0, 4, 2, 2], ["nsubj", "ROOT", "amod", "obj", "punct"]),
    (["She", "reads", "old", "books", "."], [2, 0, 4, 2, 2], ["nsubj", "ROOT", "amod", "obj", "punct"]),
    (["Dogs", "bark", "."], [2, 0, 2], ["nsubj", "ROOT", "punct"]),
    (["The", "cat", "sat", "on", "the", "mat", "."], [2, 3, 0, 6, 6, 3, 3],
     ["det", "nsubj", "ROOT", "case", "det", "obl", "punct"]),
    # non-projective: "A hearing is scheduled on the issue today ." (McDonald et al. 2005)
    (["A", "hearing", "is", "scheduled", "on", "the", "issue", "today", "."],
     [2, 4, 4, 0, 7, 7, 2, 4, 4],
     ["det", "nsubj", "aux", "ROOT", "case", "det", "nmod", "obl", "punct"]),
    # non-projective: "What did you say that he bought ?"
    (["What", "did", "you", "say", "that", "he", "bought", "?"],
     [7, 4, 4, 0, 7, 7, 4, 4],
     ["obj", "aux", "nsubj", "ROOT", "mark", "nsubj", "ccomp", "punct"]),
    (["We", "saw", "a", "man", "yesterday", "who", "was", "tall", "."],
     [2, 0, 4, 2, 2, 8, 8, 4, 2],
     ["nsubj", "ROOT", "det", "obj", "obl", "nsubj", "cop", "acl", "punct"]),
    (["Birds", "sing", "loudly", "and", "fly", "."], [2, 0, 2, 5, 2, 2],
     ["nsubj", "ROOT", "advmod", "cc", "conj", "punct"]),
]


def make_examples(nlp: Language, sentences=SENTENCES) -> List[Example]:
    examples = []
    for words, heads, deps in sentences:
        predicted = Doc(nlp.vocab, words=words)
        reference = Doc(nlp.vocab, words=words, heads=[h - 1 if h else i for i, h in enumerate(heads)], deps=deps)
        examples.append(Example(predicted, reference))
    return examples


def make_doc_examples(nlp: Language, sentences=SENTENCES, per_doc: int = 3) -> List[Example]:
    """Examples of multi-sentence docs: one per sentence, holding it and the ``per_doc - 1``
    sentences after it (wrapping around), so every sentence begins a doc once and follows another
    in the others. The reference has their trees and sentence starts, the predicted doc only the
    words (raw text)."""
    examples = []
    for lo in range(len(sentences)):
        group = [sentences[(lo + k) % len(sentences)] for k in range(per_doc)]
        words, heads, deps, starts, offset = [], [], [], [], 0
        for sent_words, sent_heads, sent_deps in group:
            words += sent_words
            heads += [offset + h - 1 if h else offset + i for i, h in enumerate(sent_heads)]
            deps += sent_deps
            starts += [i == 0 for i in range(len(sent_words))]
            offset += len(sent_words)
        reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps, sent_starts=starts)
        examples.append(Example(Doc(nlp.vocab, words=words), reference))
    return examples


def make_doc_with_sentences(nlp: Language, sentences=SENTENCES) -> Doc:
    """All sentences in one Doc with their sentence starts preset."""
    words = [w for s in sentences for w in s[0]]
    starts = [i == 0 for s in sentences for i in range(len(s[0]))]
    return Doc(nlp.vocab, words=words, sent_starts=starts)


def update_with_annotating_senter(nlp: Language, examples: List[Example], optimizer, steps: int = 3) -> bool:
    """``steps`` updates of a pipeline with a ``senter`` annotating the predicted docs; whether
    its sentence boundaries ever differed from the reference's."""
    differ = False
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer, annotates=["senter"])
        differ |= any([t.is_sent_start for t in eg.predicted] != [t.is_sent_start for t in eg.reference]
                      for eg in examples)
    return differ
