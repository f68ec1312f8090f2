"""Long sentences from a weakly trained hc_parser: every written tree is one of the candidate
arcs pruning kept, so its score is finite and k-best lists are k trees long, whatever the
decoder and however tight the pruning (``top_k``)."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.graph.decoding import make_eisner, make_hill_climb, make_mst
from tests.components.test_graph_parser import TINY_MODEL
from tests.treebank import SENTENCES


def joined(count: int, seed: int, sentences=SENTENCES):
    """``count`` sentences of the tiny treebank run together into one: words, heads (1-based, 0
    the root) and labels, the later sentences' roots attached to the first's as parataxis."""
    rng = np.random.default_rng(seed)
    words, heads, deps = [], [], []
    root = None
    for j in rng.choice(len(sentences), size=count):
        sentence_words, sentence_heads, sentence_deps = sentences[j]
        offset = len(words)
        for head, dep in zip(sentence_heads, sentence_deps):
            if head:
                heads.append(head + offset)
                deps.append(dep)
            elif root is None:
                root = offset + sentence_heads.index(0) + 1
                heads.append(0)
                deps.append("ROOT")
            else:
                heads.append(root)
                deps.append("parataxis")
        words += sentence_words
    return words, heads, deps


@pytest.fixture(scope="module")
def weak():
    """Three updates on long sentences with two heads kept per word: on the old pruning most
    sentences of 35 or more words had no tree among the kept arcs."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser", config={"model": {**TINY_MODEL, "top_k": 2},
                                      "decoder": {"@misc": "spacy_hcparse.Eisner.v1"}})
    examples = []
    for seed in range(12):
        words, heads, deps = joined(6, seed)
        examples.append(Example(Doc(nlp.vocab, words=words),
                                Doc(nlp.vocab, words=words, heads=[h - 1 if h else i for i, h in enumerate(heads)],
                                    deps=deps)))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    return nlp


@pytest.mark.parametrize("decoder", [make_eisner, make_mst, make_hill_climb])
def test_long_sentences_of_a_weak_model_have_finite_scores_and_k_trees(weak, decoder):
    parser = weak.get_pipe("hc_parser")
    parser.decoder = decoder()
    try:
        for seed in range(100, 108):
            words = joined(7, seed)[0]
            assert len(words) >= 35
            doc = weak(Doc(weak.vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1)))
            assert np.isfinite(doc._.hc_parse_score)
            for sent in doc.sents:
                assert np.isfinite(sent._.hc_score), (decoder, seed)
                assert sent._.hc_parse_prob > 0
                trees = parser.kbest(sent, 3)
                assert len(trees) == 3 and all(np.isfinite(score) for _, _, score in trees)
    finally:
        parser.decoder = make_eisner()
