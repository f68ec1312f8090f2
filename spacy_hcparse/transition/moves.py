"""The three arc-standard moves, each a pair of kernels ``<move>_is_valid`` and ``<move>_apply``.

With stack ``[.., i, j]`` (``j`` on top):

- ``Shift``: move the first buffer word onto the stack.
- ``LeftArc(l)``: add ``(j, i, l)`` and pop ``i``.
- ``RightArc(l)``: add ``(i, j, l)`` and pop ``j``.

Single root: the root (0) never becomes a dependent, and it takes its one dependent with
``RightArc(ROOT)`` only when the stack is ``[0, j]`` and the buffer is empty; ``ROOT`` is used for
nothing else. Every non-final configuration has a valid move, so a parser that only takes valid
moves always ends in a tree.

Whitespace (words marked by ``state.mark_whitespace``; none in training) is a leaf of the nearest
word before it, as in ``hc_parser``: once shifted it is attached at once by ``RightArc`` (the word
before it is then second on the stack, because that word cannot be popped while whitespace is next
in the buffer); whitespace before a span's first word waits on the stack for that word and is then
attached to it by ``LeftArc``. Whitespace never heads a word, and a configuration still always has
a valid move.

Moves are numbered as classes: ``0`` shift, ``1 + 2 * l`` left-arc with label ``l``,
``2 + 2 * l`` right-arc with label ``l`` (``n_classes = 1 + 2 * n_labels``; layout ``LAYOUT``). A
label's two classes come after those of the labels before it, so appending a label appends two
classes and moves no existing one: the classes of the first ``k`` labels are
``0..n_classes(k)-1`` whatever labels follow (``hc_transition_parser.add_label`` relies on it).
Layout ``1``, that of models saved before layout 2 existed (their perceptron weights cannot be
reordered), is ``1 + l`` left-arc and ``1 + n_labels + l`` right-arc: the kernels that map classes
to moves take the layout as their last argument, ``LAYOUT`` where left out. With a root label there
must be at least one other label, or words could never attach to each other.
"""
import numpy as np

from ..compiling import njit
from .state import (BUF, HEAD, LABEL, LC1, LC2, META, N, NL, NR, RC1, RC2, SP, SPACE, SPACE_LEFT, SPACE_RIGHT, STACK,
                    WORD)

SHIFT, LEFT, RIGHT = 0, 1, 2
LAYOUT = 2  # the class layout of models made now (see above); 1: that of older saved models
LAYOUTS = (1, 2)


@njit(cache=True)
def n_classes(n_labels: int) -> int:
    return 1 + 2 * n_labels


@njit(cache=True)
def move_of(cls: int, n_labels: int, layout: int = LAYOUT) -> int:
    if cls == 0:
        return SHIFT
    if layout == 1:
        return LEFT if cls <= n_labels else RIGHT
    return LEFT if cls % 2 == 1 else RIGHT


@njit(cache=True)
def label_of(cls: int, n_labels: int, layout: int = LAYOUT) -> int:
    if cls == 0:
        return -1
    if layout == 1:
        return (cls - 1) % n_labels
    return (cls - 1) // 2


@njit(cache=True)
def class_of(move: int, label: int, n_labels: int, layout: int = LAYOUT) -> int:
    if move == SHIFT:
        return 0
    if layout == 1:
        return 1 + label if move == LEFT else 1 + n_labels + label
    return 1 + 2 * label if move == LEFT else 2 + 2 * label


def layout_order(n_labels: int, layout: int) -> np.ndarray:
    """``(n_classes,)``: for each class of layout ``LAYOUT``, its number in ``layout`` (the rows of
    a ``layout`` scorer in ``LAYOUT``'s order are ``rows[layout_order(n_labels, layout)]``)."""
    out = np.empty(n_classes(n_labels), dtype=np.int64)
    for cls in range(len(out)):
        out[cls] = class_of(move_of(cls, n_labels, LAYOUT), label_of(cls, n_labels, LAYOUT), n_labels, layout)
    return out


# ----- the whitespace rule ----------------------------------------------------------------------
@njit(cache=True)
def _kind(st: np.ndarray, word: int) -> int:
    """``WORD``, ``SPACE_LEFT`` or ``SPACE_RIGHT`` (the root and empty slots are words)."""
    return st[SPACE, word] if word > 0 else WORD


@njit(cache=True)
def whitespace_allows(st: np.ndarray):
    """(shift, left-arc, right-arc): which move kinds the whitespace rule leaves allowed."""
    sp = st[META, SP]
    top = _kind(st, st[STACK, sp - 1]) if sp >= 1 else WORD
    if top == SPACE_LEFT:
        return False, False, True
    if top == SPACE_RIGHT:
        return True, False, False
    second = _kind(st, st[STACK, sp - 2]) if sp >= 2 else WORD
    if second == SPACE_RIGHT:
        return False, True, False
    front = _kind(st, st[META, BUF]) if st[META, BUF] <= st[META, N] else WORD
    return True, True, front != SPACE_LEFT


# ----- Shift ----------------------------------------------------------------------------------
@njit(cache=True)
def shift_is_valid(st: np.ndarray) -> bool:
    return st[META, BUF] <= st[META, N]


@njit(cache=True)
def shift_apply(st: np.ndarray) -> None:
    sp = st[META, SP]
    st[STACK, sp] = st[META, BUF]
    st[META, SP] = sp + 1
    st[META, BUF] += 1


# ----- LeftArc --------------------------------------------------------------------------------
@njit(cache=True)
def left_is_valid(st: np.ndarray, label: int, root_label: int) -> bool:
    sp = st[META, SP]
    return sp >= 2 and st[STACK, sp - 2] != 0 and label != root_label


@njit(cache=True)
def left_apply(st: np.ndarray, label: int) -> None:
    sp = st[META, SP]
    j = st[STACK, sp - 1]
    _attach(st, j, st[STACK, sp - 2], label, LC1, LC2, NL)
    st[STACK, sp - 2] = j
    st[META, SP] = sp - 1


# ----- RightArc -------------------------------------------------------------------------------
@njit(cache=True)
def right_is_valid(st: np.ndarray, label: int, root_label: int) -> bool:
    sp = st[META, SP]
    if sp < 2:
        return False
    if st[STACK, sp - 2] == 0:  # the root's one dependent, last of all
        return sp == 2 and st[META, BUF] > st[META, N] and (label == root_label or root_label < 0)
    return label != root_label


@njit(cache=True)
def right_apply(st: np.ndarray, label: int) -> None:
    sp = st[META, SP]
    _attach(st, st[STACK, sp - 2], st[STACK, sp - 1], label, RC1, RC2, NR)
    st[META, SP] = sp - 1


@njit(cache=True, inline="always")
def _attach(st: np.ndarray, head: int, dep: int, label: int, closest: int, second: int, count: int) -> None:
    """The arc ``head -> dep`` with ``label``: ``dep`` becomes ``head``'s closest dependent on
    its side (rows ``closest``/``second``/``count``: ``LC1``/``LC2``/``NL`` or ``RC1``/``RC2``/``NR``)."""
    st[HEAD, dep] = head
    st[LABEL, dep] = label
    st[second, head] = st[closest, head]
    st[closest, head] = dep
    st[count, head] += 1


# ----- by class -------------------------------------------------------------------------------
@njit(cache=True)
def is_valid(st: np.ndarray, cls: int, n_labels: int, root_label: int, layout: int = LAYOUT) -> bool:
    move = move_of(cls, n_labels, layout)
    shift_ok, left_ok, right_ok = whitespace_allows(st)
    if move == SHIFT:
        return shift_ok and shift_is_valid(st)
    if move == LEFT:
        return left_ok and left_is_valid(st, label_of(cls, n_labels, layout), root_label)
    return right_ok and right_is_valid(st, label_of(cls, n_labels, layout), root_label)


@njit(cache=True)
def apply(st: np.ndarray, cls: int, n_labels: int, layout: int = LAYOUT) -> None:
    move = move_of(cls, n_labels, layout)
    if move == SHIFT:
        shift_apply(st)
    elif move == LEFT:
        left_apply(st, label_of(cls, n_labels, layout))
    else:
        right_apply(st, label_of(cls, n_labels, layout))


@njit(cache=True)
def valid_mask(st: np.ndarray, n_labels: int, root_label: int, out: np.ndarray, layout: int = LAYOUT) -> None:
    """``out[c] = True`` for the valid classes (checks each move kind once, not per label)."""
    sp = st[META, SP]
    buffer_empty = st[META, BUF] > st[META, N]
    shift_ok, left_space_ok, right_space_ok = whitespace_allows(st)
    out[0] = shift_ok and not buffer_empty
    left_ok = left_space_ok and sp >= 2 and st[STACK, sp - 2] != 0
    right_root = right_space_ok and sp == 2 and buffer_empty
    right_other = right_space_ok and sp >= 2 and st[STACK, sp - 2] != 0
    for label in range(n_labels):
        is_root = label == root_label
        left, right = (1 + label, 1 + n_labels + label) if layout == 1 else (1 + 2 * label, 2 + 2 * label)
        out[left] = left_ok and not is_root
        if root_label < 0:
            out[right] = right_root or right_other
        else:
            out[right] = (right_root and is_root) or (right_other and not is_root)
