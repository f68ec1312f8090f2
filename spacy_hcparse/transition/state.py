"""Arc-standard configurations (stack S, buffer Q, arcs A) as one int32 array.

Index 0 is the artificial root, words are ``1..n``. A configuration of an ``n``-word sentence is
an ``(N_ROWS, max(n + 2, 3))`` int32 array, so a beam copies it with one ``.copy()`` and numba kernels take
it without boxing:

- ``STACK``: stack items bottom to top, the root first; ``META[SP]`` of them are in use.
- ``HEAD`` / ``LABEL``: the arcs so far (``-1`` while a word has no head).
- ``LC1``/``LC2``: the leftmost and second leftmost dependent of each word; ``RC1``/``RC2`` the
  rightmost and second rightmost (``-1`` when none). Arc-standard attaches left dependents from
  right to left and right dependents from left to right, so the newest arc is always the outermost.
- ``NL``/``NR``: how many left and right dependents each word has (valency).
- ``META``: ``[SP]`` stack size, ``[BUF]`` the first buffer word (``n + 1`` when empty), ``[N]`` n.
- ``SPACE``: what each word is for the whitespace rule of ``moves`` (``mark_whitespace``):
  ``WORD`` (0, every word unless marked), ``SPACE_LEFT`` (whitespace, a leaf of the nearest word
  before it) or ``SPACE_RIGHT`` (whitespace before the span's first word, a leaf of that word).

Start: ``([0], [1..n], {})``; end: ``([0], [], A)`` with every word attached.
"""
import numpy as np

from ..compiling import njit

STACK, HEAD, LABEL, LC1, LC2, RC1, RC2, NL, NR, META, SPACE = range(11)
N_ROWS = 11
SP, BUF, N = 0, 1, 2
NONE = -1
WORD, SPACE_LEFT, SPACE_RIGHT = 0, 1, 2


@njit(cache=True)
def initial_state(n: int) -> np.ndarray:
    """The start configuration of an ``n``-word sentence."""
    st = np.full((N_ROWS, max(n + 2, 3)), NONE, dtype=np.int32)
    st[NL, :] = 0
    st[NR, :] = 0
    st[SPACE, :] = WORD
    st[STACK, 0] = 0
    st[META, :] = 0
    st[META, SP] = 1
    st[META, BUF] = 1
    st[META, N] = n
    return st


@njit(cache=True)
def mark_whitespace(st: np.ndarray, space: np.ndarray) -> None:
    """Mark the whitespace words of a start configuration (``space``: (n,) bool, word ``m`` at
    ``space[m - 1]``) so that ``moves`` makes each a leaf: of the nearest word before it, or of
    the first word for whitespace before it. A span with no whitespace, or of whitespace only,
    stays unmarked (its words parse freely)."""
    n = st[META, N]
    first = 0
    while first < n and space[first]:
        first += 1
    if first == n:
        return
    for m in range(1, n + 1):
        if space[m - 1]:
            st[SPACE, m] = SPACE_RIGHT if m - 1 < first else SPACE_LEFT


@njit(cache=True)
def is_final(st: np.ndarray) -> bool:
    return st[META, SP] == 1 and st[META, BUF] > st[META, N]


def heads_of(st: np.ndarray) -> np.ndarray:
    """The (n+1,) heads array of a configuration (``heads[0] == -1``)."""
    n = int(st[META, N])
    heads = st[HEAD, : n + 1].astype(np.int64)
    heads[0] = -1
    return heads


def labels_of(st: np.ndarray) -> np.ndarray:
    """Label ids of words ``1..n`` (``-1`` where unattached)."""
    n = int(st[META, N])
    return st[LABEL, 1 : n + 1].astype(np.int64)
