"""Static arc-standard oracle: the one move sequence that builds a projective gold tree.

With stack ``[.., i, j]``: shift if the stack holds fewer than two items; left-arc(l) if
``(j, i, l)`` is gold; right-arc(l) if ``(i, j, l)`` is gold and every gold dependent of ``j`` is
already attached; shift otherwise. Gold heads use the package convention (``heads[0] == -1``,
index 0 the root); labels are ids for words ``1..n``; moves are ``transition.moves``'s classes.
"""
import numpy as np

from ..compiling import njit
from .moves import LAYOUT, LEFT, RIGHT, SHIFT, apply, class_of, is_valid, n_classes, valid_mask
from .state import META, N, NL, NR, SP, STACK, initial_state, is_final
from .templates import N_SLOTS, slot_words


@njit(cache=True)
def gold_child_counts(gold_heads: np.ndarray) -> np.ndarray:
    counts = np.zeros(len(gold_heads), dtype=np.int32)
    for m in range(1, len(gold_heads)):
        counts[gold_heads[m]] += 1
    return counts


@njit(cache=True)
def oracle_class(st, gold_heads, gold_labels, child_counts, n_labels, layout=LAYOUT) -> int:
    """The oracle's class in configuration ``st`` (``-1`` if no gold-consistent move exists), in
    class layout ``layout`` (``transition.moves``)."""
    sp = st[META, SP]
    if sp >= 2:
        j = st[STACK, sp - 1]
        i = st[STACK, sp - 2]
        if i != 0 and gold_heads[i] == j:
            return class_of(LEFT, gold_labels[i - 1], n_labels, layout)
        if gold_heads[j] == i and st[NL, j] + st[NR, j] == child_counts[j]:
            return class_of(RIGHT, gold_labels[j - 1], n_labels, layout)
    if st[META, 1] <= st[META, N]:
        return class_of(SHIFT, 0, n_labels, layout)
    return -1


@njit(cache=True)
def oracle_sequence(gold_heads, gold_labels, n_labels, root_label, layout=LAYOUT):
    """The gold class sequence (2n moves, class layout ``layout``), or an empty array if the tree
    is not reachable (non-projective, or not a single-rooted tree)."""
    n = len(gold_heads) - 1
    st = initial_state(n)
    counts = gold_child_counts(gold_heads)
    out = np.empty(2 * n, dtype=np.int64)
    for step in range(2 * n):
        cls = oracle_class(st, gold_heads, gold_labels, counts, n_labels, layout)
        if cls < 0 or not is_valid(st, cls, n_labels, root_label, layout):
            return np.empty(0, dtype=np.int64)
        out[step] = cls
        apply(st, cls, n_labels, layout)
    if not is_final(st):
        return np.empty(0, dtype=np.int64)
    return out


@njit(cache=True)
def oracle_slots(gold_heads, gold_labels, n_labels, root_label):
    """For the neural scorer: the slot words of each configuration on the oracle path
    ``(2n, N_SLOTS)``, the gold classes ``(2n,)`` and the valid-class masks ``(2n, n_classes)``.
    Empty arrays if the gold tree is not reachable."""
    n = len(gold_heads) - 1
    seq = oracle_sequence(gold_heads, gold_labels, n_labels, root_label)
    if len(seq) != 2 * n:
        return (np.empty((0, N_SLOTS), dtype=np.int64), np.empty(0, dtype=np.int64),
                np.empty((0, n_classes(n_labels)), dtype=np.bool_))
    slots, valid = path_slots(seq, n, n_labels, root_label)
    return slots, seq, valid


@njit(cache=True)
def path_slots(seq, n, n_labels, root_label):
    """The slot words ``(len(seq), N_SLOTS)`` and valid-class masks ``(len(seq), n_classes)`` of
    the configurations a move sequence passes through from the start of an ``n``-word span."""
    slots = np.empty((len(seq), N_SLOTS), dtype=np.int64)
    valid = np.empty((len(seq), n_classes(n_labels)), dtype=np.bool_)
    st = initial_state(n)
    for step in range(len(seq)):
        slot_words(st, slots[step])
        valid_mask(st, n_labels, root_label, valid[step])
        apply(st, seq[step], n_labels)
    return slots, valid
