"""The perceptron tagger's template sets and jackknifed training tags."""
import numpy as np
import pytest

from spacy_hcparse.learning.tagger import (
    BASE_TEMPLATES,
    EXTENDED_TEMPLATES,
    JackknifeTagger,
    span_folds,
    tag_spans,
    tagger_templates,
)
from spacy_hcparse.transition.features import token_attrs

N_BUCKETS = 2**12


def rows(lengths, seed):
    rng = np.random.default_rng(seed)
    attrs = np.concatenate([token_attrs(rng.integers(0, 2**62, size=(n, 5)), False) for n in lengths])
    offsets = np.cumsum([0] + [n + 1 for n in lengths]).astype(np.int64)
    return attrs, offsets


def test_template_sets():
    assert tagger_templates("base").shape == (len(BASE_TEMPLATES), 3)
    assert tagger_templates().shape == (len(BASE_TEMPLATES), 3)
    ext = tagger_templates("extended")
    assert ext.shape == (len(EXTENDED_TEMPLATES), 3)
    assert (ext[: len(BASE_TEMPLATES)] == tagger_templates("base")).all()  # base weights stay meaningful
    with pytest.raises(ValueError, match="unknown tagger template set"):
        tagger_templates("nope")


def test_folds_are_per_span_and_stable():
    attrs, offsets = rows([3, 0, 5, 4], 0)
    folds = span_folds(attrs, offsets)
    assert (folds[offsets[:-1]] == -1).all()  # root rows
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        assert len(set(folds[lo + 1 : hi].tolist())) <= 1
    shuffled = np.concatenate([attrs[offsets[2] : offsets[4]], attrs[: offsets[2]]])
    assert span_folds(shuffled, np.array([0, 6, 11, 15, 16])).tolist() == np.concatenate(
        [folds[offsets[2] : offsets[4]], folds[: offsets[2]]]
    ).tolist()


def test_jackknife_tags_come_from_the_other_folds_tagger():
    attrs, offsets = rows([4, 6, 5, 3, 7, 2, 6, 4], 1)
    folds = span_folds(attrs, offsets)
    assert {0, 1} <= set(folds.tolist())
    n_tags = 3
    gold = np.where(folds == 0, np.arange(len(attrs)) % n_tags, -1)  # only fold 0 has gold tags
    jk = JackknifeTagger(N_BUCKETS + n_tags)
    for _ in range(5):
        out = jk.tag(attrs, offsets, tagger_templates("extended"), np.int64(N_BUCKETS - 1), n_tags, gold)
    assert not jk.W[1].any()  # the fold-1 tagger never saw a gold tag ...
    assert (out[folds == 0] == 0).all()  # ... and tags fold 0 (argmax of zero scores)
    assert (out[folds == -1] == -1).all()
    # the fold-0 tagger learned fold 0, as a tagger trained on everything would
    pred = np.empty(len(attrs), dtype=np.int64)
    tag_spans(attrs, offsets, jk.W[0], tagger_templates("extended"), np.int64(N_BUCKETS - 1), n_tags, pred,
              gold, np.zeros(1), np.ones(1), False)
    assert (pred[folds == 0] == gold[folds == 0]).mean() > 0.9
