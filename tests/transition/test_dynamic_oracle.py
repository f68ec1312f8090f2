"""Dynamic oracle: the best reachable tree's gold arcs against exhaustive search over moves."""
import numpy as np
import pytest

from spacy_hcparse.transition.dynamic_oracle import gold_so_far, optimal_classes, reachable_gold, zero_cost_path
from spacy_hcparse.transition.moves import LEFT, SHIFT, apply, label_of, move_of, n_classes, valid_mask
from spacy_hcparse.transition.oracle import oracle_sequence
from spacy_hcparse.transition.state import META, SP, STACK, heads_of, initial_state, is_final

N_LABELS, ROOT = 2, 1  # label 0 for every word-word arc, 1 the root's


def random_tree(rng, n):
    """A random single-rooted tree (not necessarily projective) as heads (n+1,)."""
    order = rng.permutation(np.arange(1, n + 1))
    heads = np.full(n + 1, -1, dtype=np.int64)
    heads[order[0]] = 0
    for k in range(1, n):
        heads[order[k]] = order[rng.integers(0, k)]
    return heads


def best_final(st, gold):
    """Exhaustive search: the most gold arcs of any final configuration reachable from ``st``."""
    if is_final(st):
        return gold_so_far(st, gold)
    valid = np.empty(n_classes(N_LABELS), dtype=np.bool_)
    valid_mask(st, N_LABELS, ROOT, valid)
    best = -1
    for cls in np.flatnonzero(valid):
        nxt = st.copy()
        apply(nxt, int(cls), N_LABELS)
        best = max(best, best_final(nxt, gold))
    return best


def random_configurations(rng, n, count):
    for _ in range(count):
        st = initial_state(n)
        valid = np.empty(n_classes(N_LABELS), dtype=np.bool_)
        for _ in range(rng.integers(0, 2 * n)):
            if is_final(st):
                break
            valid_mask(st, N_LABELS, ROOT, valid)
            apply(st, int(rng.choice(np.flatnonzero(valid))), N_LABELS)
        yield st


@pytest.mark.parametrize("seed", range(40))
def test_reachable_gold_matches_exhaustive_search(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    gold = random_tree(rng, n)
    for st in random_configurations(rng, n, 6):
        assert gold_so_far(st, gold) + reachable_gold(st, gold) == best_final(st, gold)


@pytest.mark.parametrize("seed", range(20))
def test_optimal_classes_are_the_moves_that_keep_the_best_tree(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 7))
    gold = random_tree(rng, n)
    labels = np.where(gold[1:] == 0, ROOT, 0).astype(np.int64)
    valid = np.empty(n_classes(N_LABELS), dtype=np.bool_)
    optimal = np.empty_like(valid)
    for st in random_configurations(rng, n, 6):
        if is_final(st):
            continue
        valid_mask(st, N_LABELS, ROOT, valid)
        optimal_classes(st, gold, labels, N_LABELS, ROOT, valid, optimal)
        best = best_final(st, gold)
        assert optimal.any()
        for cls in np.flatnonzero(valid):
            nxt = st.copy()
            apply(nxt, int(cls), N_LABELS)
            assert optimal[cls] == (best_final(nxt, gold) == best)


def test_static_oracle_path_is_optimal_on_projective_trees():
    heads = np.array([-1, 2, 0, 4, 2, 2], dtype=np.int64)  # projective
    labels = np.where(heads[1:] == 0, ROOT, 0).astype(np.int64)
    seq = oracle_sequence(heads, labels, N_LABELS, ROOT)
    st = initial_state(5)
    valid = np.empty(n_classes(N_LABELS), dtype=np.bool_)
    optimal = np.empty_like(valid)
    for cls in seq:
        valid_mask(st, N_LABELS, ROOT, valid)
        optimal_classes(st, heads, labels, N_LABELS, ROOT, valid, optimal)
        assert optimal[cls]
        apply(st, int(cls), N_LABELS)
    assert gold_so_far(st, heads) == 5


@pytest.mark.parametrize("seed", range(20))
def test_optimal_classes_with_unknown_heads_and_labels(seed):
    """Words of unknown head (-1) have no arc to lose (``best_final`` counts known arcs only); a
    label of -1 accepts any label."""
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(2, 7))
    full = random_tree(rng, n)
    gold = full.copy()
    gold[1:][rng.random(n) < 0.4] = -1
    labels = np.where(gold[1:] == 0, ROOT, 0).astype(np.int64)
    labels[rng.random(n) < 0.3] = -1
    valid = np.empty(n_classes(N_LABELS), dtype=np.bool_)
    optimal = np.empty_like(valid)
    for st in random_configurations(rng, n, 6):
        if is_final(st):
            continue
        valid_mask(st, N_LABELS, ROOT, valid)
        optimal_classes(st, gold, labels, N_LABELS, ROOT, valid, optimal)
        best = best_final(st, gold)
        assert optimal.any()
        for cls in np.flatnonzero(valid):
            nxt = st.copy()
            apply(nxt, int(cls), N_LABELS)
            keeps = best_final(nxt, gold) == best
            move, label = move_of(int(cls), N_LABELS), label_of(int(cls), N_LABELS)
            if keeps and move != SHIFT and labels_mismatch(st, move, label, gold, labels):
                keeps = False
            assert optimal[cls] == keeps


def labels_mismatch(st, move, label, gold, labels):
    """Whether an arc move makes a gold arc with a known gold label other than ``label``."""
    sp = st[META, SP]
    j, i = st[STACK, sp - 1], st[STACK, sp - 2]
    head, dep = (j, i) if move == LEFT else (i, j)
    return gold[dep] == head and labels[dep - 1] >= 0 and labels[dep - 1] != label


@pytest.mark.parametrize("seed", range(30))
def test_zero_cost_path_is_the_static_oracle_on_projective_trees(seed):
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(1, 9))
    heads = random_tree(rng, n)
    labels = np.where(heads[1:] == 0, ROOT, 0).astype(np.int64)
    static = oracle_sequence(heads, labels, N_LABELS, ROOT)
    if len(static) != 2 * n:
        return  # not projective
    seq, correct = zero_cost_path(heads, labels, N_LABELS, ROOT)
    assert seq.tolist() == static.tolist()
    assert correct[np.arange(2 * n), seq].all()


@pytest.mark.parametrize("seed", range(30))
def test_zero_cost_path_keeps_every_known_arc(seed):
    """On partial gold taken from a projective tree the path ends in a tree holding every known
    arc, and each step's correct classes include the move taken."""
    rng = np.random.default_rng(700 + seed)
    n = int(rng.integers(1, 9))
    full = random_tree(rng, n)
    labels = np.where(full[1:] == 0, ROOT, 0).astype(np.int64)
    if len(oracle_sequence(full, labels, N_LABELS, ROOT)) != 2 * n:
        return
    gold = full.copy()
    unknown = rng.random(n) < 0.5
    gold[1:][unknown] = -1
    labels[unknown] = -1
    seq, correct = zero_cost_path(gold, labels, N_LABELS, ROOT)
    st = initial_state(n)
    for step, cls in enumerate(seq):
        assert correct[step, cls]
        apply(st, int(cls), N_LABELS)
    assert is_final(st)
    known = gold[1:] >= 0
    assert (heads_of(st)[1:][known] == gold[1:][known]).all()
