"""Perceptron training on partial gold: spans whose heads or labels are partly unknown are
trained with the dynamic oracle (nothing learned about the unknown arcs), and the known arcs are
learned as from whole trees."""
import numpy as np

from spacy_hcparse.transition.perceptron import AveragedPerceptron, is_partial
from spacy_hcparse.transition.templates import get_templates, token_attrs
from spacy_hcparse.transition.search import greedy_parse

N_BUCKETS, N_LABELS, ROOT = 2**12, 3, 0
# projective trees (heads with the root row first), labels 1 or 2 for word-word arcs
TREES = [
    [-1, 2, 0, 4, 2, 2],
    [-1, 0, 1, 2, 2],
    [-1, 3, 3, 0, 5, 3, 3],
]


def spans(seed=0):
    rng = np.random.default_rng(seed)
    attrs = np.concatenate([token_attrs(rng.integers(0, 50, size=(len(t) - 1, 5)), False) for t in TREES])
    offsets = np.cumsum([0] + [len(t) for t in TREES]).astype(np.int64)
    heads = np.concatenate([np.array(t, dtype=np.int64) for t in TREES])
    labels = np.where(heads == 0, ROOT, 1 + (np.arange(len(heads)) % 2)).astype(np.int64)
    labels[offsets[:-1]] = -1
    return attrs, offsets, heads, labels


def train(attrs, offsets, heads, labels, epochs=15):
    weights = AveragedPerceptron(N_BUCKETS + 1 + 2 * N_LABELS)
    for _ in range(epochs):
        weights.train(attrs, offsets, heads, labels, get_templates("zhang_nivre"), N_BUCKETS - 1, N_LABELS, ROOT)
    return weights.average()


def parse(attrs, offsets, W):
    heads = np.empty(len(attrs), dtype=np.int64)
    labels = np.empty(len(attrs), dtype=np.int64)
    no_space = np.zeros(len(attrs), dtype=bool)
    greedy_parse(attrs, no_space, offsets, W, get_templates("zhang_nivre"), np.int64(N_BUCKETS - 1), N_LABELS, ROOT,
                 heads, labels)
    return heads, labels


def test_is_partial():
    assert not is_partial(np.array([-1, 0, 1]), np.array([0, 1]))
    assert is_partial(np.array([-1, 0, -1]), np.array([0, 1]))
    assert is_partial(np.array([-1, 0, 1]), np.array([0, -1]))


def test_known_arcs_are_learned_from_partial_gold():
    attrs, offsets, heads, labels = spans()
    partial_heads, partial_labels = heads.copy(), labels.copy()
    hidden = np.array([offsets[0] + 3, offsets[2] + 5])  # one word of the first and third trees
    partial_heads[hidden] = -1
    partial_labels[offsets[1] + 2] = -1  # an unknown label in the second tree
    W = train(attrs, offsets, partial_heads, partial_labels)
    got_heads, got_labels = parse(attrs, offsets, W)
    known = partial_heads >= 0
    assert (got_heads[known] == heads[known]).all()
    labelled = known & (partial_labels >= 0)
    assert (got_labels[labelled] == labels[labelled]).all()


def test_whole_trees_train_as_before():
    """Whole gold follows the static oracle: the trees are learned exactly."""
    attrs, offsets, heads, labels = spans(1)
    got_heads, got_labels = parse(attrs, offsets, train(attrs, offsets, heads, labels))
    assert (got_heads == heads).all() and (got_labels[heads >= 0] == labels[heads >= 0]).all()
