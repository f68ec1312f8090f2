"""Guided walks: whatever the scorer prefers, a walk keeps every known arc the best reachable tree
has (all of them for projective gold), takes 2n steps per span, and records correct classes that
are valid and reach the scorer's own choices."""
import hashlib

import numpy as np
import pytest

from spacy_hcparse.transition.dynamic_oracle import reachable_gold
from spacy_hcparse.transition.guided import guided_walk
from spacy_hcparse.transition.moves import n_classes
from spacy_hcparse.transition.oracle import oracle_sequence
from spacy_hcparse.transition.state import initial_state

N_LABELS, ROOT = 3, 2  # labels 0 and 1 for word-word arcs, 2 the root's


def random_projective_tree(rng, n):
    """A random projective tree (heads (n+1,)), with labels (n,), built by random valid moves."""
    heads = np.full(n + 1, -1, dtype=np.int64)
    stack, buffer = [0], list(range(1, n + 1))
    while buffer or len(stack) > 1:
        can_reduce = len(stack) > 2 or (len(stack) == 2 and not buffer)
        if buffer and (not can_reduce or rng.random() < 0.5):
            stack.append(buffer.pop(0))
        elif len(stack) > 2 and rng.random() < 0.5:
            heads[stack.pop(-2)] = stack[-1]
        else:
            dep = stack.pop()
            heads[dep] = stack[-1]
    labels = np.where(heads[1:] == 0, ROOT, rng.integers(0, 2, size=n))
    return heads, labels


def random_scorer(seed):
    """Scores that depend on the rows only (the same configuration scores the same)."""

    def scores(rows):
        out = np.empty((len(rows), n_classes(N_LABELS)))
        for i, row in enumerate(rows):
            key = int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=8, key=bytes([seed])).digest(), "little")
            out[i] = np.random.default_rng(key).normal(size=out.shape[1])
        return out

    return scores


@pytest.mark.parametrize("seed", range(8))
def test_walks_keep_the_known_arcs_whatever_the_scorer_prefers(seed):
    rng = np.random.default_rng(seed)
    golds, sizes = [], [int(n) for n in rng.integers(1, 9, size=4)]
    for n in sizes:
        heads, labels = random_projective_tree(rng, n)
        unknown = rng.random(n) < 0.4
        heads[1:][unknown] = -1
        labels[unknown | (rng.random(n) < 0.2)] = -1
        golds.append((heads, labels))
    firsts = np.cumsum([0] + sizes[:-1]) - 1
    steps = guided_walk(random_scorer(seed), firsts, sum(sizes), golds, N_LABELS, ROOT)
    assert len(steps.rows) == 2 * sum(sizes)
    assert (steps.correct <= steps.valid).all() and steps.correct.any(axis=1).all()
    assert ((steps.rows >= 0) & (steps.rows <= sum(sizes))).all()
    for (heads, labels), (got_heads, got_labels), n in zip(golds, steps.trees, sizes):
        known = heads[1:] >= 0
        assert reachable_gold(initial_state(n), heads) == known.sum()  # projective: all reachable
        assert (got_heads[1:][known] == heads[1:][known]).all()
        labelled = known & (labels >= 0)
        assert (got_labels[labelled] == labels[labelled]).all()


def test_full_gold_walk_builds_the_gold_tree():
    rng = np.random.default_rng(11)
    heads, labels = random_projective_tree(rng, 7)
    steps = guided_walk(random_scorer(3), [-1], 7, [(heads, labels)], N_LABELS, ROOT)
    assert steps.trees[0][0].tolist() == heads.tolist() and steps.trees[0][1].tolist() == labels.tolist()
    assert len(oracle_sequence(heads, labels, N_LABELS, ROOT)) == len(steps.rows) == 14


def test_no_spans():
    steps = guided_walk(random_scorer(0), [], 0, [], N_LABELS, ROOT)
    assert steps.rows.shape == (0, 14) and steps.trees == []
