"""spacy_hcparse.MultiHashEmbed.v1: spaCy's MultiHashEmbed.v2 with word dropout."""
import numpy as np
import pytest
import spacy
from spacy.util import registry
from thinc.api import fix_random_seed

WORDS = "the quick brown fox jumps over the lazy dog again and again".split()


def build(name="spacy_hcparse.MultiHashEmbed.v1", **kwargs):
    make = registry.architectures.get(name)
    return make(width=8, attrs=["NORM", "PREFIX", "SUFFIX", "SHAPE"], rows=[50, 20, 30, 30], **kwargs)


def docs():
    nlp = spacy.blank("en")
    return [nlp(" ".join(WORDS)), nlp("fox")]


def test_same_output_as_spacy_multi_hash_embed_at_prediction():
    fix_random_seed(0)
    ours = build(word_dropout_rate=0.5)
    ours.initialize(X=docs())
    fix_random_seed(0)
    theirs = build("spacy.MultiHashEmbed.v2", include_static_vectors=False)
    theirs.initialize(X=docs())
    for a, b in zip(ours.predict(docs()), theirs.predict(docs())):
        assert a.shape == b.shape and np.allclose(a, b)


def test_training_drops_some_words_of_the_named_table():
    fix_random_seed(0)
    model = build(word_dropout_rate=0.5)
    model.initialize(X=docs())
    predicted = model.predict(docs())[0]
    trained = model(docs(), is_train=True)[0][0]
    changed = ~np.isclose(predicted, trained).all(axis=1)
    assert 0 < changed.sum() < len(WORDS)


def test_unknown_dropout_attr():
    with pytest.raises(ValueError, match="not among attrs"):
        build(word_dropout_attrs=["LOWER"])


def vector_docs():
    nlp = spacy.blank("en")
    rng = np.random.default_rng(0)
    for word in WORDS[:6]:
        nlp.vocab.set_vector(word, rng.normal(size=5).astype("float32"))
    return [nlp(" ".join(WORDS)), nlp("fox")]


def test_static_vectors_reach_the_output():
    fix_random_seed(0)
    model = build(include_static_vectors=True, word_dropout_rate=0.0)
    docs = vector_docs()
    model.initialize(X=docs)
    before = model.predict(docs)[0]
    docs[0].vocab.set_vector("quick", np.full(5, 3.0, dtype="float32"))
    after = model.predict(docs)[0]
    changed = ~np.isclose(before, after).all(axis=1)
    assert changed.tolist() == [word == "quick" for word in WORDS]


def test_vectors_dropout_drops_whole_vectors_in_training_only():
    fix_random_seed(0)
    model = build(include_static_vectors=True, word_dropout_rate=0.0, vectors_dropout_rate=0.5)
    docs = vector_docs()
    model.initialize(X=docs)
    fix_random_seed(0)
    plain = build(include_static_vectors=True, word_dropout_rate=0.0)
    plain.initialize(X=docs)
    assert np.allclose(model.predict(docs)[0], plain.predict(docs)[0])
    trained = model(docs, is_train=True)[0][0]
    changed = ~np.isclose(model.predict(docs)[0], trained).all(axis=1)
    assert 0 < changed.sum() < len(WORDS)


def test_vectors_dropout_needs_vectors():
    with pytest.raises(ValueError, match="include_static_vectors"):
        build(vectors_dropout_rate=0.2)


def test_concat_tok2vec_puts_the_features_after_the_tok2vec_rows_and_splits_the_gradient():
    fix_random_seed(0)
    first, second = build(), build(word_dropout_rate=0.0)
    concat = registry.architectures.get("spacy_hcparse.ConcatTok2Vec.v1")(tok2vec=first, features=second)
    concat.initialize(X=docs())
    assert concat.get_dim("nO") == 16
    joined = concat.predict(docs())
    for row, a, b in zip(joined, first.predict(docs()), second.predict(docs())):
        assert row.shape == (len(a), 16)
        assert np.allclose(row[:, :8], a) and np.allclose(row[:, 8:], b)
    seen = {}
    for name, layer in (("first", first), ("second", second)):
        forward = layer._func

        def recording(model, X, is_train, name=name, forward=forward):
            Y, backprop = forward(model, X, is_train)

            def record(dY):
                seen[name] = [d.copy() for d in dY]
                return backprop(dY)

            return Y, record

        layer._func = recording
    output, backprop = concat(docs(), is_train=True)
    gradient = [np.arange(d.size, dtype="f").reshape(d.shape) for d in output]
    backprop(gradient)
    for d, a, b in zip(gradient, seen["first"], seen["second"]):
        assert np.array_equal(a, d[:, :8]) and np.array_equal(b, d[:, 8:])


def test_concat_tok2vec_drops_feature_units_and_rows_in_training_only():
    fix_random_seed(0)
    make = registry.architectures.get("spacy_hcparse.ConcatTok2Vec.v1")
    concat = make(tok2vec=build(word_dropout_rate=0.0), features=build(word_dropout_rate=0.0),
                  features_dropout=0.3, features_word_dropout=0.5)
    concat.initialize(X=docs())
    predicted = concat.predict(docs())[0]
    trained = concat(docs(), is_train=True)[0][0]
    assert np.allclose(predicted[:, :8], trained[:, :8])  # the tok2vec's rows untouched
    dropped_rows = (trained[:, 8:] == 0).all(axis=1)
    assert 0 < dropped_rows.sum() < len(WORDS)
    kept = trained[~dropped_rows, 8:]
    assert (kept == 0).any() and not np.allclose(kept, predicted[~dropped_rows, 8:])  # units dropped, rescaled


def test_features_cross_to_the_device_in_one_copy_per_batch(monkeypatch):
    """The embed's feature extractor copies a batch's token features to the device once (spaCy's
    copies once per doc, and on a GPU each copy is a transfer), with spaCy's values."""
    from spacy_hcparse.models.embed import feature_extractor
    from tests.strict_ops import DeviceArray, StrictOps, teach_thinc

    teach_thinc(monkeypatch)
    many = docs() * 5 + [spacy.blank("en")("")]
    columns = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
    extractor = feature_extractor(columns)
    extractor.ops = StrictOps()
    copies = []
    real = StrictOps.asarray
    monkeypatch.setattr(StrictOps, "asarray",
                        lambda self, data, dtype=None: copies.append(1) or real(self, data, dtype=dtype))
    features = extractor.predict(many)
    assert len(copies) == 1 and all(isinstance(f, DeviceArray) for f in features)
    for doc, values in zip(many, features):
        assert values.get().dtype == np.uint64 and values.get().tolist() == doc.to_array(columns).tolist()


def test_a_model_saved_with_spacys_feature_extractor_loads():
    """Pipelines saved before the embed had its own extractor (spaCy's node in its place) load,
    and give the same output."""
    from spacy.ml.featureextractor import FeatureExtractor

    fix_random_seed(0)
    old = build()
    extractor = next(node for node in old.walk() if node.name == "extract_features")
    old.replace_node(extractor, FeatureExtractor(extractor.attrs["columns"]))
    old.initialize(X=docs())
    new = build().from_bytes(old.to_bytes())
    for a, b in zip(old.predict(docs()), new.predict(docs())):
        assert np.array_equal(a, b)
