"""The sentence encoder: [tok2vec; BiLSTM] blocks, root row first, and a parser that learns on them."""
import numpy as np
import spacy
from spacy.tokens import Doc
from thinc.api import LSTM, with_padded

from spacy_hcparse.layers.sentence_encoder import sentence_encoder
from tests.treebank import SENTENCES, make_examples

TOK2VEC = {"@architectures": "spacy.HashEmbedCNN.v2", "width": 16, "depth": 1, "embed_size": 300,
           "window_size": 1, "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None}


def test_blocks_concatenate_tok2vec_and_context():
    nlp = spacy.blank("en")
    docs = [Doc(nlp.vocab, words=w) for w, _, _ in SENTENCES[:3]]
    spans = [[(0, len(doc))] for doc in docs]
    tok2vec = spacy.registry.resolve({"m": TOK2VEC})["m"]
    tok2vec.initialize(X=docs)
    tokvecs = tok2vec.predict(docs)
    encoder = sentence_encoder(with_padded(LSTM(nO=8, bi=True)))
    encoder.initialize(X=(tokvecs, spans))
    assert encoder.get_dim("nO") == 16 + 8
    blocks, backprop = encoder.begin_update((tokvecs, spans))
    assert [b.shape for b in blocks] == [(len(d) + 1, 24) for d in docs]
    # The tok2vec half is the tok2vec output itself (the skip connection), root row first.
    np.testing.assert_allclose(blocks[0][1:, :16], tokvecs[0], rtol=1e-5)
    np.testing.assert_allclose(blocks[0][0, :16], encoder.get_param("root"))
    d_tokvecs = backprop([np.ones_like(b) for b in blocks])
    assert np.abs(encoder.get_grad("root")).sum() > 0
    assert [d.shape for d in d_tokvecs] == [v.shape for v in tokvecs]


def test_parser_with_lstm_learns_tiny_treebank():
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    model = {"tok2vec": {"width": 32, "depth": 2, "embed_size": 500}, "lstm_width": 16,
             "arc_width": 32, "label_width": 16, "sibling_rank": 8, "grand_rank": 8}
    nlp.add_pipe("hc_parser", config={"model": model, "decoder": {"@misc": "spacy_hcparse.HillClimb.v1"}})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    for words, heads, deps in SENTENCES:
        doc = nlp(Doc(nlp.vocab, words=words))
        assert [t.head.i + 1 if t.head.i != t.i else 0 for t in doc] == heads, words
        assert [t.dep_ for t in doc] == deps, words
