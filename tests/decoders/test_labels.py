"""labels_batch on one tree (a batch of one): the best labels with at most one child per class under each head."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders.batch import labels_batch
from spacy_hcparse.decoders.labels import _hungarian

from .brute import all_trees


def one_tree_labels(heads, scores, label_class):
    """The labels of one tree: ``labels_batch`` over a batch of one."""
    return labels_batch(heads, [len(heads)], scores, label_class)


def feasible(heads, labels, label_class):
    """No head has two children whose labels share a class."""
    taken = set()
    for m, label in enumerate(labels, start=1):
        k = label_class[label]
        if k >= 0:
            if (heads[m], k) in taken:
                return False
            taken.add((heads[m], k))
    return True


def brute_best(heads, scores, label_class):
    """Best total score over every feasible labelling (finite scores)."""
    n, n_labels = scores.shape
    best = -np.inf
    for labels in itertools.product(range(n_labels), repeat=n):
        if feasible(heads, labels, label_class):
            best = max(best, scores[np.arange(n), list(labels)].sum())
    return best


def total(scores, labels):
    return scores[np.arange(len(labels)), labels].sum()


@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(1, 6))
        n_labels = int(rng.integers(1, 5))
        trees = all_trees(n)
        heads = trees[rng.integers(len(trees))]
        label_class = rng.integers(-1, 2, size=n_labels)
        if (label_class < 0).sum() == 0:
            label_class[0] = -1  # some labelling is feasible
        scores = rng.normal(size=(n, n_labels))
        labels = one_tree_labels(heads, scores, label_class)
        assert feasible(heads, labels, label_class)
        assert total(scores, labels) == pytest.approx(brute_best(heads, scores, label_class))


def test_without_classes_it_is_argmax():
    heads = np.array([-1, 2, 0, 2, 2])
    scores = np.array([[3.0, 0, 0], [0, 0, 3], [0, 3, 0], [3, 0, 0]])
    assert list(one_tree_labels(heads, scores, np.array([-1, -1, -1]))) == [0, 2, 1, 0]
    # words 1 and 4 both want label 0 under head 2; one of them (a tie) falls back to label 2
    labels = one_tree_labels(heads, scores, np.array([0, 1, -1]))
    assert labels[1:3].tolist() == [2, 1] and sorted([labels[0], labels[3]]) == [0, 2]


def test_two_subjects_become_one():
    # Head 3 has children 1 and 2 that both prefer "nsubj" (0); "nsubj:pass" (1) is in the same
    # class; "obj" (2) is free. Child 2 loses less by becoming obj.
    heads = np.array([-1, 3, 3, 0])
    scores = np.array([[5.0, 1.0, 0.0], [4.0, 3.5, 3.9], [0.0, 0.0, 1.0]])
    labels = one_tree_labels(heads, scores, np.array([0, 0, -1]))
    assert list(labels) == [0, 2, 2]


def test_children_of_different_heads_do_not_interact():
    heads = np.array([-1, 2, 0, 2, 3])
    scores = np.array([[5.0, 0.0], [0.0, 5.0], [0.0, 5.0], [5.0, 0.0]])
    assert list(one_tree_labels(heads, scores, np.array([0, -1]))) == [0, 1, 1, 0]


def test_constraint_yields_when_nothing_else_is_allowed():
    # Both children may only take label 0 (the free label is ruled out): one breaks the constraint
    # rather than get a label scored -inf.
    heads = np.array([-1, 3, 3, 0])
    scores = np.array([[1.0, -np.inf], [2.0, -np.inf], [-np.inf, 0.0]])
    labels = one_tree_labels(heads, scores, np.array([0, -1]))
    assert list(labels) == [0, 0, 1]


def test_forced_child_wins_its_class():
    # Child 1 can only be label 0; child 2 prefers 0 but has a free label: 1 takes 0.
    heads = np.array([-1, 3, 3, 0])
    scores = np.array([[0.0, -np.inf], [9.0, 1.0], [-np.inf, 0.0]])
    assert list(one_tree_labels(heads, scores, np.array([0, -1]))) == [0, 1, 1]


def test_empty_sentence():
    assert one_tree_labels(np.array([-1]), np.zeros((0, 3)), np.array([0, -1, -1])).shape == (0,)


@pytest.mark.parametrize(
    "heads, scores, label_class, message",
    [
        (np.array([0, 0]), np.zeros((1, 2)), np.array([0, -1]), "problem code 1"),
        (np.array([-1, 5]), np.zeros((1, 2)), np.array([0, -1]), "problem code 2"),
        (np.array([-1, 0]), np.zeros((2, 2)), np.array([0, -1]), "scores must have shape"),
        (np.array([-1, 0]), np.array([[np.nan, 0.0]]), np.array([0, -1]), "NaN"),
        (np.array([-1, 0]), np.array([[np.inf, 0.0]]), np.array([0, -1]), "\\+inf"),
        (np.array([-1, 0]), np.zeros((1, 2)), np.array([0]), "label_class must have shape"),
        (np.array([-1, 0]), np.zeros((1, 2)), np.array([0, -2]), "entries >= -1"),
        (np.array([-1, 0]), [["a", "b"]], np.array([0, -1]), "convert"),
    ],
)
def test_bad_input_raises_value_error(heads, scores, label_class, message):
    with pytest.raises(ValueError, match=message):
        one_tree_labels(heads, scores, label_class)


def test_hungarian_matches_brute_force():
    rng = np.random.default_rng(7)
    for _ in range(100):
        rows = int(rng.integers(1, 5))
        cols = int(rng.integers(rows, 7))
        cost = rng.normal(size=(rows, cols))
        column = _hungarian(cost)
        assert len(set(column.tolist())) == rows
        best = min(sum(cost[r, c] for r, c in enumerate(perm)) for perm in itertools.permutations(range(cols), rows))
        assert cost[np.arange(rows), column].sum() == pytest.approx(best)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_hypothesis_feasible_and_optimal(data):
    n = data.draw(st.integers(1, 5))
    n_labels = data.draw(st.integers(1, 4))
    trees = all_trees(n)
    heads = trees[data.draw(st.integers(0, len(trees) - 1))]
    label_class = np.array(data.draw(st.lists(st.integers(-1, 2), min_size=n_labels, max_size=n_labels)))
    label_class[0] = -1
    values = st.floats(-5, 5, allow_nan=False).map(lambda x: round(x, 1))  # ties included
    scores = np.array(data.draw(st.lists(st.lists(values, min_size=n_labels, max_size=n_labels),
                                         min_size=n, max_size=n)))
    labels = one_tree_labels(heads, scores, label_class)
    assert feasible(heads, labels, label_class)
    assert total(scores, labels) == pytest.approx(brute_best(heads, scores, label_class))
