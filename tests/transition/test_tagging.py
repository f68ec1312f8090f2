"""The hashed tagger's template sets, tagging kernel and tag column filling."""
import numpy as np
import pytest

from spacy_hcparse.transition.templates import T, token_attrs
from spacy_hcparse.transition.tagging import (
    BASE_TEMPLATES,
    EXTENDED_TEMPLATES,
    fill_tags,
    tag_spans,
    tagger_templates,
)

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


def test_tags_every_word_and_no_root():
    attrs, offsets = rows([3, 0, 5], 2)
    n_tags = 4
    W = np.random.default_rng(0).normal(size=N_BUCKETS + n_tags).astype("f")
    out = np.empty(len(attrs), dtype=np.int64)
    tag_spans(attrs, offsets, W, tagger_templates("base"), np.int64(N_BUCKETS - 1), n_tags, out)
    roots = np.zeros(len(attrs), dtype=bool)
    roots[offsets[:-1]] = True
    assert (out[roots] == -1).all()
    assert ((out[~roots] >= 0) & (out[~roots] < n_tags)).all()


def test_fill_tags_writes_only_untagged_words_and_copies():
    attrs, offsets = rows([2, 2], 3)
    untagged = np.array([False, True, True, False, False, False])
    tag_ids = np.array([-1, 1, 0, -1, 1, 1])
    values = np.array([100, 200], dtype=np.int64)
    before = attrs.copy()
    out = fill_tags(attrs, untagged, tag_ids, values)
    assert (attrs == before).all()
    assert out[:, T].tolist() == [attrs[0, T], 200, 100, attrs[3, T], attrs[4, T], attrs[5, T]]
