"""The sentence encoder: [tok2vec; BiLSTM] blocks, root row first, and a parser that learns on them;
``token_rows``, blocks back to tokens."""
import numpy as np
import spacy
from spacy.tokens import Doc
from thinc.api import LSTM, NumpyOps, with_padded

from spacy_hcparse.layers.sentence_encoder import sentence_encoder, token_rows
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
    model = {"tok2vec": {"width": 32, "depth": 2, "embed_size": 500}, "context": {"width": 16},
             "arc_scorer": {"width": 32}, "label_scorer": {"width": 16}, "sibling_scorer": {"rank": 8},
             "grand_scorer": {"rank": 8}}
    nlp.add_pipe("hc_parser", config={"model": model, "decoder": {"@misc": "spacy_hcparse.HillClimb.v1"}})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    for words, heads, deps in SENTENCES:
        doc = nlp(Doc(nlp.vocab, words=words))
        assert [t.head.i + 1 if t.head.i != t.i else 0 for t in doc] == heads, words
        assert [t.dep_ for t in doc] == deps, words


def test_token_rows_map_blocks_back_to_tokens():
    """Each token takes its span's block row (row 0, the root, is nobody's); an uncovered token
    its tok2vec vector, zero-padded. The backprop is the adjoint of that linear map."""
    ops = NumpyOps()
    rng = np.random.default_rng(0)
    tokvecs = [rng.normal(size=(5, 2)).astype("f"), rng.normal(size=(3, 2)).astype("f")]
    spans = [[(0, 2), (2, 4)], [(0, 3)]]  # the first doc's last token is covered by no span
    blocks = [rng.normal(size=(end - start + 1, 4)).astype("f") for doc in spans for start, end in doc]
    rows, backprop = token_rows(ops, tokvecs, blocks, spans, 4)
    assert np.array_equal(rows[0][:2], blocks[0][1:]) and np.array_equal(rows[0][2:4], blocks[1][1:])
    assert np.array_equal(rows[0][4], np.concatenate([tokvecs[0][4], np.zeros(2, "f")]))
    assert np.array_equal(rows[1], blocks[2][1:])
    d_rows = [rng.normal(size=r.shape).astype("f") for r in rows]
    d_blocks, d_tokvecs = backprop(d_rows)
    forward_dot = sum(float((r * d).sum()) for r, d in zip(rows, d_rows))
    adjoint_dot = sum(float((b * d).sum()) for b, d in zip(blocks, d_blocks)) + \
        sum(float((t * d).sum()) for t, d in zip(tokvecs, d_tokvecs))
    assert abs(forward_dot - adjoint_dot) < 1e-4


def _random_spans(rng, lengths, overlap=False):
    """Per doc sorted spans of 1+ tokens, some tokens left out; with ``overlap`` spans may share tokens."""
    out = []
    for n in lengths:
        spans, start = [], 0
        while start < n:
            end = int(rng.integers(start + 1, n + 1))
            if rng.random() < 0.8:
                spans.append((start, end))
            start = end - int(overlap and end - start > 1 and rng.random() < 0.5)
        out.append(spans)
    return out


def test_encoder_blocks_and_gradients_are_the_per_span_definition():
    """The batched gather and scatter give each span's ``[root; its rows]`` block and, for the
    gradients, the sums a per-span loop gives (also where spans share tokens), with a context
    layer beside the rows."""
    ops = NumpyOps()
    for seed in range(20):
        rng = np.random.default_rng(seed)
        lengths = [int(n) for n in rng.integers(0, 9, size=rng.integers(1, 5))]
        tokvecs = [rng.normal(size=(n, 3)).astype("f") for n in lengths]
        spans = _random_spans(rng, lengths, overlap=seed % 2 == 1)
        encoder = sentence_encoder(with_padded(LSTM(nO=4, bi=True)))
        encoder.initialize(X=(tokvecs, spans) if any(spans) else ([np.zeros((2, 3), "f")], [[(0, 2)]]))
        root = encoder.get_param("root")
        blocks, backprop = encoder.begin_update((tokvecs, spans))
        index = [(i, s, e) for i, doc in enumerate(spans) for s, e in doc]
        assert len(blocks) == len(index)
        for block, (i, s, e) in zip(blocks, index):
            assert np.array_equal(block[:, :3], np.vstack((root[None, :], tokvecs[i][s:e])))
        d_blocks = [rng.normal(size=b.shape).astype("f") for b in blocks]
        encoder.set_grad("root", np.zeros_like(root))
        d_tokvecs = backprop(d_blocks)
        # The per-span definition, through the same context layer's gradients.
        inner = encoder.layers[0]
        _, bp_inner = inner.begin_update([b[:, :3].copy() for b in blocks])
        direct = [d[:, :3] + c for d, c in zip(d_blocks, bp_inner([d[:, 3:].copy() for d in d_blocks]))]
        expected = [np.zeros_like(v) for v in tokvecs]
        for d, (i, s, e) in zip(direct, index):
            expected[i][s:e] += d[1:]
        for got, want in zip(d_tokvecs, expected):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        want_root = sum((d[0] for d in direct), np.zeros_like(root))
        np.testing.assert_allclose(encoder.get_grad("root"), want_root, rtol=1e-5, atol=1e-6)


def test_token_rows_is_the_per_span_definition():
    ops = NumpyOps()
    for seed in range(20):
        rng = np.random.default_rng(seed)
        lengths = [int(n) for n in rng.integers(0, 9, size=rng.integers(1, 5))]
        tokvecs = [rng.normal(size=(n, 2)).astype("f") for n in lengths]
        spans = _random_spans(rng, lengths)
        blocks = [rng.normal(size=(e - s + 1, 5)).astype("f") for doc in spans for s, e in doc]
        rows, backprop = token_rows(ops, tokvecs, blocks, spans, 5)
        index = [(i, s, e) for i, doc in enumerate(spans) for s, e in doc]
        want = [np.hstack((v, np.zeros((len(v), 3), "f"))) for v in tokvecs]
        for block, (i, s, e) in zip(blocks, index):
            want[i][s:e] = block[1:]
        assert all(np.array_equal(r, w) for r, w in zip(rows, want))
        d_rows = [rng.normal(size=r.shape).astype("f") for r in rows]
        d_blocks, d_tokvecs = backprop(d_rows)
        for d_block, (i, s, e) in zip(d_blocks, index):
            assert np.array_equal(d_block[1:], d_rows[i][s:e]) and not d_block[0].any()
        covered = [np.zeros(n, bool) for n in lengths]
        for i, s, e in index:
            covered[i][s:e] = True
        for d, d_row, mask in zip(d_tokvecs, d_rows, covered):
            assert np.array_equal(d[~mask], d_row[~mask, :2]) and not d[mask].any()
