"""Input validation shared by the public decoder functions.

Every public decoder checks its score arrays here before handing them to a numba kernel, so a
malformed input fails with a ``ValueError`` that names the argument, never inside compiled code.
"""
from typing import Optional, Tuple

import numpy as np

from ..compiling import njit

# A sentence longer than this is refused: the (n+1)^3 higher-order arrays alone would exceed
# several GB. Callers with longer inputs split them first (the spaCy components do).
MAX_WORDS = 2000


def check_arc(arc) -> np.ndarray:
    """Return ``arc`` as a C-contiguous float64 (n+1, n+1) array, or raise ``ValueError``.

    Off-diagonal cells of columns ``1..n`` must be finite or ``-inf`` (an absent arc, see
    ``absent.py``); NaN and ``+inf`` there are errors. Column 0 and the diagonal may hold anything.
    """
    arr = _as_float_array(arc, "arc")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"arc must be a square (n+1, n+1) array, got shape {arr.shape}")
    if arr.shape[0] < 1:
        raise ValueError("arc must have at least one row (the root), got shape (0, 0)")
    if arr.shape[0] - 1 > MAX_WORDS:
        raise ValueError(
            f"sentence of {arr.shape[0] - 1} words exceeds MAX_WORDS={MAX_WORDS}; split it first"
        )
    if not _arc_finite(arr):
        view = zero_unused(arr)
        view[view == -np.inf] = 0.0  # absent arcs are allowed
        _check_finite(view, "arc")  # finds and names the first bad entry
    return arr


def check_cube(scores, name: str, size: int) -> Optional[np.ndarray]:
    """Return a (size, size, size) float64 array for ``sib`` / ``grand`` (``None`` passes through)."""
    if scores is None:
        return None
    arr = _as_float_array(scores, name)
    if arr.shape != (size, size, size):
        raise ValueError(
            f"{name} must have shape {(size, size, size)} to match arc, got {arr.shape}"
        )
    _check_finite(arr, name)
    return arr


def check_heads(heads, size: int) -> np.ndarray:
    """Return ``heads`` as an int64 (n+1,) array that is a valid single-root tree."""
    try:
        arr = np.ascontiguousarray(heads, dtype=np.int64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"heads must be an integer array: {err}") from None
    if arr.shape != (size,):
        raise ValueError(f"heads must have shape ({size},), got {arr.shape}")
    problem = tree_problem(arr)
    if problem:
        raise ValueError(f"heads is not a valid tree: {problem}")
    return arr


def check_inputs(arc, sib=None, grand=None) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
    """Validate an (arc, sib, grand) triple; sib and grand may be ``None``."""
    arc = check_arc(arc)
    size = arc.shape[0]
    return arc, check_cube(sib, "sib", size), check_cube(grand, "grand", size)


def tree_problem(heads: np.ndarray) -> str:
    """Describe why ``heads`` is not a single-root tree, or return ``""`` when it is one.

    Convention: ``heads[0] == -1`` (the artificial root), ``heads[m]`` in ``1..n`` or ``0``,
    exactly one word attached to 0, and every word reaches 0 (no cycles).
    """
    n = len(heads) - 1
    if n < 0:
        return "empty heads array"
    code, value = _tree_problem_code(np.ascontiguousarray(heads, dtype=np.int64))
    if code == _BAD_ROOT_ENTRY:
        return f"heads[0] must be -1, got {value}"
    if code == _OUT_OF_RANGE:
        return f"head index out of range 0..{n}"
    if code == _SELF_HEAD:
        return "a word is its own head"
    if code == _ROOT_COUNT:
        return f"expected exactly one word attached to the root, got {value}"
    if code == _CYCLE:
        return f"cycle through word {value}"
    return ""


_OK, _BAD_ROOT_ENTRY, _OUT_OF_RANGE, _SELF_HEAD, _ROOT_COUNT, _CYCLE = range(6)


@njit(cache=True)
def _tree_problem_code(heads):
    """(code, value) of the first problem of a non-empty ``heads`` (see ``tree_problem``); the
    checks run in the order of the messages. Compiled: it runs on every decoder call."""
    size = heads.shape[0]
    if heads[0] != -1:
        return _BAD_ROOT_ENTRY, heads[0]
    roots = 0
    for m in range(1, size):
        if heads[m] < 0 or heads[m] >= size:
            return _OUT_OF_RANGE, 0
    for m in range(1, size):
        if heads[m] == m:
            return _SELF_HEAD, m
        if heads[m] == 0:
            roots += 1
    if size > 1 and roots != 1:
        return _ROOT_COUNT, roots
    state = np.zeros(size, dtype=np.int8)  # 0 unseen, 1 on the current path, 2 reaches root
    state[0] = 2
    path = np.empty(size, dtype=np.int64)
    for start in range(1, size):
        length = 0
        node = start
        while state[node] == 0:
            state[node] = 1
            path[length] = node
            length += 1
            node = heads[node]
        if state[node] == 1:
            return _CYCLE, node
        for i in range(length):
            state[path[i]] = 2
    return _OK, 0


def _as_float_array(scores, name: str) -> np.ndarray:
    try:
        arr = np.asarray(scores)
    except Exception as err:  # ragged lists and the like
        raise ValueError(f"{name} must be a numeric array: {err}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real-valued, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def check_counts(**counts) -> None:
    """Each keyword ``name=(value, minimum)``: ``value`` must be an integer >= ``minimum``."""
    for name, (value, minimum) in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def zero_unused(arc: np.ndarray) -> np.ndarray:
    """A copy of ``arc`` with the entries no tree uses (column 0, the diagonal) set to 0."""
    view = arc.copy()
    view[:, 0] = 0.0
    np.fill_diagonal(view, 0.0)
    return view


@njit(cache=True)
def _all_finite(flat) -> bool:
    for i in range(flat.shape[0]):
        if not np.isfinite(flat[i]):
            return False
    return True


@njit(cache=True)
def _arc_finite(arc) -> bool:
    """Whether every entry a tree can use (not column 0, not the diagonal) is finite or -inf."""
    for h in range(arc.shape[0]):
        for m in range(1, arc.shape[0]):
            if m != h and not np.isfinite(arc[h, m]) and arc[h, m] != -np.inf:
                return False
    return True


def _check_finite(arr: np.ndarray, name: str) -> None:
    # A compiled pass without temporaries: the (n+1)^3 cubes are checked on every decode.
    if not _all_finite(arr.ravel()):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or inf (first at index {tuple(int(i) for i in bad)})")
