"""Static oracle: replaying it on projective gold trees gives the trees back."""
from pathlib import Path

import numpy as np
import pytest

from spacy_hcparse.transition.moves import apply
from spacy_hcparse.transition.oracle import oracle_sequence
from spacy_hcparse.transition.state import heads_of, initial_state, labels_of
from tests.decoders.brute import is_projective
from tests.treebank import SENTENCES

EWT_TRAIN = Path(__file__).resolve().parents[2] / ".." / "shared" / "treebanks" / "UD_English-EWT" / "en_ewt-ud-train.conllu"


def replay(gold_heads, gold_labels, n_labels, root_label):
    """The final configuration's (heads, labels) after the oracle's moves, or None where the
    gold tree is not reachable (no sequence of 2n moves)."""
    seq = oracle_sequence(np.asarray(gold_heads, np.int64), np.asarray(gold_labels, np.int64), n_labels, root_label)
    if len(seq) != 2 * (len(gold_heads) - 1):
        return None
    st = initial_state(len(gold_heads) - 1)
    for cls in seq:
        apply(st, int(cls), n_labels)
    return heads_of(st), labels_of(st)


def as_arrays(heads, labels, label_ids):
    gold = np.array([-1] + list(heads), dtype=np.int64)
    ids = np.array([label_ids.setdefault(l, len(label_ids)) for l in labels], dtype=np.int64)
    return gold, ids


@pytest.mark.parametrize("words,heads,deps", SENTENCES)
def test_round_trip_tiny_treebank(words, heads, deps):
    label_ids = {"ROOT": 0}
    gold, ids = as_arrays(heads, deps, label_ids)
    n_labels = 20
    result = replay(gold, ids, n_labels, 0)
    if not is_projective(gold):
        assert result is None
        return
    assert result is not None
    got_heads, got_labels = result
    assert got_heads.tolist() == gold.tolist()
    assert got_labels.tolist() == ids.tolist()
    assert len(oracle_sequence(gold, ids, n_labels, 0)) == 2 * len(words)


def test_empty_and_single_word():
    assert replay(np.array([-1]), np.zeros(0, dtype=np.int64), 2, 0)[0].tolist() == [-1]
    heads, labels = replay(np.array([-1, 0]), np.array([0]), 2, 0)
    assert heads.tolist() == [-1, 0] and labels.tolist() == [0]


def test_two_roots_unreachable():
    assert replay(np.array([-1, 0, 0]), np.array([0, 0]), 2, 0) is None


@pytest.mark.slow
def test_round_trip_all_projective_ewt_train():
    from spacy_hcparse.conllu import read_conllu

    if not EWT_TRAIN.exists():
        pytest.skip(f"{EWT_TRAIN} not found")
    label_ids = {"root": 0}
    checked = 0
    for sent in read_conllu(EWT_TRAIN, skip_invalid=True):
        heads = [w.head for w in sent.words]
        gold, ids = as_arrays(heads, [w.deprel for w in sent.words], label_ids)
        if not is_projective(gold):
            continue
        result = replay(gold, ids, 64, 0)
        assert result is not None, sent.line
        assert result[0].tolist() == gold.tolist(), sent.line
        assert result[1].tolist() == ids.tolist(), sent.line
        checked += 1
    assert checked > 10000
