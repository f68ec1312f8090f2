"""The tagger's training: mistakes drive updates, folds are stable, jackknifed tags come from the
other fold's tagger."""
import numpy as np

from spacy_hcparse.transition.tagger_trainer import JackknifeTagger, TaggerTrainer, span_folds, train_tagger
from spacy_hcparse.transition.tagging import tag_spans, tagger_templates
from tests.transition.test_tagging import N_BUCKETS, rows


def test_training_learns_the_gold_tags():
    attrs, offsets = rows([4, 6, 5], 0)
    n_tags = 3
    gold = np.where(np.isin(np.arange(len(attrs)), offsets[:-1]), -1, np.arange(len(attrs)) % n_tags)
    trainer = TaggerTrainer(np.zeros(N_BUCKETS + n_tags, dtype="f"))
    for _ in range(20):
        trainer.tag(attrs, offsets, tagger_templates("base"), np.int64(N_BUCKETS - 1), n_tags, gold)
    pred = np.empty(len(attrs), dtype=np.int64)
    tag_spans(attrs, offsets, trainer.average(), tagger_templates("base"), np.int64(N_BUCKETS - 1), n_tags, pred)
    assert (pred == gold).mean() > 0.9


def test_training_tags_are_the_predictions_before_each_update():
    attrs, offsets = rows([5, 3], 1)
    n_tags = 2
    W = np.random.default_rng(1).normal(size=N_BUCKETS + n_tags)
    expected = np.empty(len(attrs), dtype=np.int64)
    tag_spans(attrs, offsets, W, tagger_templates("base"), np.int64(N_BUCKETS - 1), n_tags, expected)
    got = np.empty(len(attrs), dtype=np.int64)
    none = np.full(len(attrs), -1, dtype=np.int64)  # no gold: no update, the same tags
    mistakes = train_tagger(attrs, offsets, W.copy(), np.zeros_like(W), np.ones(1), tagger_templates("base"),
                            np.int64(N_BUCKETS - 1), n_tags, none, got)
    assert mistakes == 0 and got.tolist() == expected.tolist()


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
    tag_spans(attrs, offsets, jk.W[0], tagger_templates("extended"), np.int64(N_BUCKETS - 1), n_tags, pred)
    assert (pred[folds == 0] == gold[folds == 0]).mean() > 0.9
