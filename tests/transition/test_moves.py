"""Moves only ever lead to trees: random scores, valid moves, always a single-rooted tree."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_hcparse.decoders import tree_problem
from spacy_hcparse.transition.moves import (LEFT, RIGHT, SHIFT, apply, class_of, is_valid, label_of, layout_order,
                                            left_apply, left_is_valid, move_of, n_classes, right_apply, right_is_valid,
                                            shift_apply, shift_is_valid, valid_mask)
from spacy_hcparse.transition.state import META, SP, STACK, heads_of, initial_state, is_final, labels_of, mark_whitespace


def test_units_on_a_small_sentence():
    st = initial_state(2)
    assert not left_is_valid(st, 1, 0) and not right_is_valid(st, 1, 0)
    shift_apply(st)
    assert not left_is_valid(st, 1, 0)  # the root never becomes a dependent
    assert not right_is_valid(st, 0, 0)  # the root's dependent waits for an empty buffer
    shift_apply(st)
    assert not shift_is_valid(st)
    left_apply(st, 1)  # 2 -> 1
    assert st[META, SP] == 2 and st[STACK, :2].tolist() == [0, 2]  # the stack, bottom to top
    assert not right_is_valid(st, 1, 0) and right_is_valid(st, 0, 0)
    right_apply(st, 0)
    assert is_final(st)
    assert heads_of(st).tolist() == [-1, 2, 0]
    assert labels_of(st).tolist() == [1, 0]


def test_valid_mask_agrees_with_is_valid():
    rng = np.random.default_rng(0)
    n_labels = 4
    for _ in range(50):
        st = initial_state(int(rng.integers(0, 8)))
        mask = np.empty(n_classes(n_labels), dtype=np.bool_)
        while not is_final(st):
            valid_mask(st, n_labels, 0, mask)
            expected = [is_valid(st, c, n_labels, 0) for c in range(len(mask))]
            assert mask.tolist() == expected
            apply(st, int(rng.choice(np.flatnonzero(mask))), n_labels)


def test_appending_a_label_moves_no_class():
    """What hc_transition_parser.add_label relies on: the classes of the first labels keep their
    numbers, moves and labels when labels are appended, and the new classes come last."""
    for n_labels in range(1, 6):
        classes = [(SHIFT, -1)] + [(move, label) for label in range(n_labels) for move in (LEFT, RIGHT)]
        for n_more in (n_labels, n_labels + 1, n_labels + 3):
            for move, label in classes:
                cls = class_of(move, label, n_more)
                assert cls == class_of(move, label, n_labels) < n_classes(n_labels)
                assert (move_of(cls, n_more), label_of(cls, n_more)) == (move, label)
            new = {class_of(move, label, n_more) for move in (LEFT, RIGHT) for label in range(n_labels, n_more)}
            assert new == set(range(n_classes(n_labels), n_classes(n_more)))


def test_valid_mask_of_the_first_labels_is_a_prefix():
    """Valid classes with labels appended (none of them the root) begin with those without."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        st = initial_state(int(rng.integers(0, 8)))
        short, long = np.empty(n_classes(3), dtype=np.bool_), np.empty(n_classes(5), dtype=np.bool_)
        while not is_final(st):
            valid_mask(st, 3, 0, short)
            valid_mask(st, 5, 0, long)
            assert long[: len(short)].tolist() == short.tolist()
            apply(st, int(rng.choice(np.flatnonzero(short))), 3)


def test_layout_1_numbers_classes_as_models_saved_before_layout_2():
    """Layout 1 (saved models without ``move_layout``): left-arc ``l`` is ``1 + l``, right-arc
    ``1 + n_labels + l``; ``layout_order`` gives each layout-2 class its layout-1 number."""
    for n_labels in range(1, 6):
        order = layout_order(n_labels, 1)
        assert order[0] == 0 and sorted(order.tolist()) == list(range(n_classes(n_labels)))
        for label in range(n_labels):
            for move, old in ((LEFT, 1 + label), (RIGHT, 1 + n_labels + label)):
                assert class_of(move, label, n_labels, 1) == old
                assert (move_of(old, n_labels, 1), label_of(old, n_labels, 1)) == (move, label)
                assert order[class_of(move, label, n_labels)] == old
        assert layout_order(n_labels, 2).tolist() == list(range(n_classes(n_labels)))


def test_layout_1_valid_mask_and_moves_are_layout_2_reordered():
    """Along random walks, layout 1's valid classes are layout 2's in ``layout_order``, and a class
    applied in each layout makes the same configuration."""
    rng = np.random.default_rng(1)
    n_labels, root = 4, 2
    order = layout_order(n_labels, 1)
    for _ in range(50):
        st = initial_state(int(rng.integers(0, 8)))
        st1 = st.copy()
        new, old = np.empty(n_classes(n_labels), dtype=np.bool_), np.empty(n_classes(n_labels), dtype=np.bool_)
        while not is_final(st):
            valid_mask(st, n_labels, root, new)
            valid_mask(st1, n_labels, root, old, 1)
            assert old[order].tolist() == new.tolist()
            cls = int(rng.choice(np.flatnonzero(new)))
            assert is_valid(st1, int(order[cls]), n_labels, root, 1)
            apply(st, cls, n_labels)
            apply(st1, int(order[cls]), n_labels, 1)
            assert np.array_equal(st, st1)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 30), n_labels=st.integers(2, 5), seed=st.integers(0, 2**31 - 1))
def test_random_valid_moves_always_give_a_tree(n, n_labels, seed):
    rng = np.random.default_rng(seed)
    root = int(rng.integers(0, n_labels))
    st = initial_state(n)
    mask = np.empty(n_classes(n_labels), dtype=np.bool_)
    steps = 0
    while not is_final(st):
        valid_mask(st, n_labels, root, mask)
        assert mask.any(), "a non-final configuration without a valid move"
        scores = rng.normal(size=len(mask))
        apply(st, int(np.where(mask, scores, -np.inf).argmax()), n_labels)
        steps += 1
    assert steps == 2 * n
    heads = heads_of(st)
    if n:
        assert not tree_problem(heads), tree_problem(heads)
        labels = labels_of(st)
        assert ((heads[1:] == 0) == (labels == root)).all()


def expected_whitespace_heads(space):
    """Where each whitespace word must hang (word numbers, 1-based): the nearest word before it,
    or the first word for whitespace before it; {} for a span of whitespace only."""
    words = [m for m in range(1, len(space) + 1) if not space[m - 1]]
    if not words:
        return {}
    return {m: max([w for w in words if w < m], default=words[0]) for m in range(1, len(space) + 1) if space[m - 1]}


@settings(max_examples=300, deadline=None)
@given(space=st.lists(st.booleans(), min_size=1, max_size=25), n_labels=st.integers(2, 4),
       seed=st.integers(0, 2**31 - 1))
def test_whitespace_stays_a_leaf_of_the_word_before_it(space, n_labels, seed):
    """Whatever the scores: a tree, marked whitespace heads nothing and hangs from the nearest word
    before it (the first word, before it), and every configuration has a valid move."""
    rng = np.random.default_rng(seed)
    n = len(space)
    st_ = initial_state(n)
    mark_whitespace(st_, np.array(space))
    mask = np.empty(n_classes(n_labels), dtype=np.bool_)
    while not is_final(st_):
        valid_mask(st_, n_labels, 0, mask)
        assert mask.any(), "a non-final configuration without a valid move"
        assert mask.tolist() == [is_valid(st_, c, n_labels, 0) for c in range(len(mask))]
        apply(st_, int(np.where(mask, rng.normal(size=len(mask)), -np.inf).argmax()), n_labels)
    heads = heads_of(st_)
    assert not tree_problem(heads), tree_problem(heads)
    for m, head in expected_whitespace_heads(space).items():
        assert heads[m] == head
        assert m not in heads.tolist()
