"""Dynamic arc-standard oracle: the cost of each move in any configuration, on or off the gold path.

The loss of a configuration is the number of gold arcs missing from the best tree still
reachable from it (Goldberg, Sartorio & Satta 2014); a move is optimal when it does not raise
that loss. Computed exactly, by dynamic programming over the configuration's *units*: the stack
items (root first) followed by the buffer words. Every new arc joins two units, and a tree over
the units is reachable exactly when

- it is projective and single-rooted (the root, always the bottom unit, takes one dependent, and
  takes it last), and
- no stack item other than the top takes a right dependent whose subtree ends before the top of
  the stack: such a dependent would have to be popped while the items above it still sit on the
  stack.

So the best reachable tree is a first-order Eisner parse over the units with arc weight 1 for
gold arcs, and the second condition forbids right-complete spans ``[h, e]`` with
``h < e < top``. Heads use the package convention (``gold_heads[0] == -1``, index 0 the root).

Partial gold: a word whose gold head is ``-1`` (unknown: a token that does not align with the
reference, an arc leaving a chunk of a long sentence) has no gold arc to lose, and a gold label of
``-1`` accepts any label; the loss counts the known arcs only. ``zero_cost_path`` walks such a
gold from the start, so training can learn the moves it determines (every move that keeps the
best reachable tree is correct) and nothing about the rest. Moves are ``transition.moves``'s classes.
"""
import numpy as np

from ..compiling import njit
from .moves import LAYOUT, LEFT, RIGHT, SHIFT, apply, class_of, is_valid, label_of, move_of, n_classes, valid_mask
from .state import HEAD, META, N, BUF, SP, STACK, initial_state

_NEG = -(1 << 30)


@njit(cache=True)
def _units(st: np.ndarray) -> np.ndarray:
    sp = st[META, SP]
    b, n = st[META, BUF], st[META, N]
    out = np.empty(sp + max(0, n + 1 - b), dtype=np.int64)
    for i in range(sp):
        out[i] = st[STACK, i]
    for i in range(b, n + 1):
        out[sp + i - b] = i
    return out


@njit(cache=True)
def reachable_gold(st: np.ndarray, gold_heads: np.ndarray) -> int:
    """The most gold arcs any tree reachable from ``st`` can add to its arcs so far."""
    units = _units(st)
    m = len(units)
    if m <= 1:
        return 0
    top = st[META, SP] - 1  # unit index of the stack's top
    # Eisner tables over units 1..m-1: cr[s, t] s heads s..t (right complete), cl[s, t] t heads
    # s..t (left complete). Incomplete spans are split by whether the dependent's far half is
    # empty ("bare"): ir_*[s, t] s -> t, by t's left half; il_*[s, t] t -> s, by s's right half.
    cr = np.full((m, m), _NEG, dtype=np.int64)
    cl = np.full((m, m), _NEG, dtype=np.int64)
    ir_bare = np.full((m, m), _NEG, dtype=np.int64)
    ir_full = np.full((m, m), _NEG, dtype=np.int64)
    il_bare = np.full((m, m), _NEG, dtype=np.int64)
    il_full = np.full((m, m), _NEG, dtype=np.int64)
    for i in range(m):
        cr[i, i] = 0
        cl[i, i] = 0
    for length in range(1, m - 1):
        for s in range(1, m - length):
            t = s + length
            w_right = 1 if gold_heads[units[t]] == units[s] else 0
            w_left = 1 if gold_heads[units[s]] == units[t] else 0
            ir_bare[s, t] = cr[s, t - 1] + w_right  # t's left half empty
            il_bare[s, t] = cl[s + 1, t] + w_left  # s's right half empty
            best_r = _NEG
            for r in range(s, t - 1):
                best_r = max(best_r, cr[s, r] + cl[r + 1, t])
            ir_full[s, t] = best_r + w_right
            best_l = _NEG
            for r in range(s + 1, t):
                best_l = max(best_l, cr[s, r] + cl[r + 1, t])
            il_full[s, t] = best_l + w_left
            # A stack item below the top that takes dependents must end up above all the items
            # over it: with a left half it needs a right half too (which then reaches the top).
            best = _NEG
            for r in range(s, t):
                v = cl[s, r] + il_full[r, t]
                if s == r or r >= top:
                    v = max(v, cl[s, r] + il_bare[r, t])
                best = max(best, v)
            cl[s, t] = best
            if t < top:
                continue  # a stack item's right dependent ending below the top: unreachable
            best = _NEG
            for r in range(s + 1, t + 1):
                v = ir_bare[s, r] + cr[r, t]
                if r >= top or t > r:
                    v = max(v, ir_full[s, r] + cr[r, t])
                best = max(best, v)
            cr[s, t] = best
    best = _NEG
    for r in range(1, m):
        best = max(best, cl[1, r] + cr[r, m - 1] + (1 if gold_heads[units[r]] == 0 else 0))
    return best


@njit(cache=True)
def gold_so_far(st: np.ndarray, gold_heads: np.ndarray) -> int:
    n = st[META, N]
    count = 0
    for i in range(1, n + 1):
        if st[HEAD, i] >= 0 and st[HEAD, i] == gold_heads[i]:
            count += 1
    return count


@njit(cache=True)
def move_values(st: np.ndarray, gold_heads: np.ndarray, n_labels: int, root_label: int, out: np.ndarray,
                layout: int = LAYOUT) -> None:
    """``out[move]`` for ``SHIFT``, ``LEFT``, ``RIGHT``: the gold arcs of the best tree reachable
    after the move (arcs so far included), ``-1`` where the move is not valid. Labels are left to
    ``optimal_classes``."""
    for move in (SHIFT, LEFT, RIGHT):
        out[move] = -1
        for label in range(n_labels if move != SHIFT else 1):
            cls = class_of(move, label, n_labels, layout)
            if is_valid(st, cls, n_labels, root_label, layout):
                nxt = st.copy()
                apply(nxt, cls, n_labels, layout)
                out[move] = gold_so_far(nxt, gold_heads) + reachable_gold(nxt, gold_heads)
                break


@njit(cache=True)
def optimal_classes(st, gold_heads, gold_labels, n_labels, root_label, valid, out, layout=LAYOUT) -> None:
    """``out[c] = True`` for the valid classes (class layout ``layout``) that keep the best
    reachable tree's gold arcs (and, for an arc that is gold, carry its gold label, any label where
    that is ``-1``); ``gold_labels`` are ids for words ``1..n``."""
    values = np.empty(3, dtype=np.int64)
    move_values(st, gold_heads, n_labels, root_label, values, layout)
    best = max(values[SHIFT], max(values[LEFT], values[RIGHT]))
    sp = st[META, SP]
    for cls in range(out.shape[0]):
        out[cls] = False
        if not valid[cls]:
            continue
        move = move_of(cls, n_labels, layout)
        if values[move] != best:
            continue
        if move != SHIFT:
            j, i = st[STACK, sp - 1], st[STACK, sp - 2]
            head, dep = (j, i) if move == LEFT else (i, j)
            gold_label = gold_labels[dep - 1]
            if gold_heads[dep] == head and gold_label >= 0 and label_of(cls, n_labels, layout) != gold_label:
                continue
        out[cls] = True


@njit(cache=True)
def zero_cost_path(gold_heads, gold_labels, n_labels, root_label, layout=LAYOUT):
    """A move sequence (2n,) from the start that keeps the best reachable tree at every step, and
    the correct classes of each of its configurations ``(2n, n_classes)`` (``optimal_classes``),
    classes in layout ``layout``. At each step the path takes the first correct arc class
    (attaching eagerly), else a shift: with full gold that builds the gold tree if it is
    projective; words of unknown head end up attached somewhere, and nothing says where they
    belong."""
    n = len(gold_heads) - 1
    n_cls = n_classes(n_labels)
    seq = np.empty(2 * n, dtype=np.int64)
    correct = np.zeros((2 * n, n_cls), dtype=np.bool_)
    valid = np.empty(n_cls, dtype=np.bool_)
    st = initial_state(n)
    for step in range(2 * n):
        valid_mask(st, n_labels, root_label, valid, layout)
        optimal_classes(st, gold_heads, gold_labels, n_labels, root_label, valid, correct[step], layout)
        cls = -1
        for c in range(1, n_cls):
            if correct[step, c]:
                cls = c
                break
        if cls < 0:
            cls = 0
        seq[step] = cls
        apply(st, cls, n_labels, layout)
    return seq, correct
