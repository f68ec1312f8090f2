"""Training walks guided by a scorer outside numba (the neural model's step scorer) and the dynamic
oracle: where gold is partial, train on the configurations the model itself reaches.

Every span starts from the start configuration; at each step the correct classes are the dynamic
oracle's (``dynamic_oracle.optimal_classes``: the valid classes that keep the best reachable tree's
known arcs, any label where the gold label is unknown), and the span follows its best-scoring
correct class. So no known arc is lost, and the model is trained where it will be at prediction
(a fixed oracle path, such as ``zero_cost_path``'s eager one, leaves out the configurations the
model reaches by taking another correct move). Spans are advanced together, as in
``search.greedy_batch``; rows follow its convention (word ``m`` of span ``i`` at ``firsts[i] + m``,
empty slots and the root at ``null``); classes are ``transition.moves``'s.
"""
from typing import Callable, List, NamedTuple, Sequence, Tuple

import numpy as np

from ..compiling import njit
from .dynamic_oracle import optimal_classes
from .moves import n_classes
from .search import apply_best, initial_states, step_inputs
from .state import heads_of, labels_of
from .templates import N_SLOTS

# (heads (n+1,) with heads[0] == -1, label ids (n,)); -1 unknown
PartialTree = Tuple[np.ndarray, np.ndarray]


class GuidedSteps(NamedTuple):
    """The configurations of a batch of walks, steps of all spans interleaved, and their trees."""

    rows: np.ndarray  # (k, N_SLOTS) slot rows
    correct: np.ndarray  # (k, n_classes) bool: the dynamic oracle's correct classes
    valid: np.ndarray  # (k, n_classes) bool
    trees: List[PartialTree]  # per span the tree the walk built (heads (n+1,), label ids (n,))


def guided_walk(
    score_rows: Callable[[np.ndarray], np.ndarray],
    firsts: Sequence[int],
    null: int,
    golds: Sequence[PartialTree],
    n_labels: int,
    root_label: int,
) -> GuidedSteps:
    """Every span's walk (``golds``: per span its partial tree); ``score_rows`` maps slot rows
    ``(k, N_SLOTS)`` to ``(k, n_classes)`` move scores."""
    sizes = np.array([len(heads) - 1 for heads, _ in golds], dtype=np.int64)
    heads, head_offsets = _packed([h for h, _ in golds])
    labels, label_offsets = _packed([lab for _, lab in golds])
    states = initial_states(sizes)
    firsts = np.array(firsts, dtype=np.int64)
    active = np.flatnonzero(sizes > 0).astype(np.int64)
    n_cls = n_classes(n_labels)
    rows = np.empty((len(active), N_SLOTS), dtype=np.int64)
    valid = np.empty((len(active), n_cls), dtype=np.bool_)
    correct = np.empty((len(active), n_cls), dtype=np.bool_)
    out: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    k = len(active)
    while k:
        step_inputs(states, active[:k], firsts, null, n_labels, root_label, rows, valid)
        correct_masks(states, active[:k], heads, head_offsets, labels, label_offsets, n_labels, root_label,
                      valid, correct)
        out.append((rows[:k].copy(), correct[:k].copy(), valid[:k].copy()))
        k = apply_best(states, active[:k], score_rows(rows[:k]), correct, n_labels)
    trees = [(heads_of(st), labels_of(st)) for st in states]
    if not out:
        return GuidedSteps(np.zeros((0, N_SLOTS), dtype=np.int64), np.zeros((0, n_cls), bool),
                           np.zeros((0, n_cls), bool), trees)
    return GuidedSteps(*(np.concatenate(parts) for parts in zip(*out)), trees)


def _packed(arrays: Sequence[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """The arrays one after another (int64) and their offsets ``(len(arrays) + 1,)``."""
    offsets = np.cumsum([0] + [len(a) for a in arrays]).astype(np.int64)
    flat = np.concatenate(arrays).astype(np.int64) if len(arrays) else np.zeros(0, dtype=np.int64)
    return flat, offsets


@njit(cache=True)
def correct_masks(states, active, heads, head_offsets, labels, label_offsets, n_labels, root_label, valid, correct):
    """For ``states[active]``: the dynamic oracle's correct classes into ``correct`` (the valid ones
    where none is: a gold that no tree can hold, kept walkable)."""
    for r in range(len(active)):
        i = active[r]
        gold_heads = heads[head_offsets[i] : head_offsets[i + 1]]
        gold_labels = labels[label_offsets[i] : label_offsets[i + 1]]
        optimal_classes(states[i], gold_heads, gold_labels, n_labels, root_label, valid[r], correct[r])
        if not correct[r].any():
            correct[r, :] = valid[r]
