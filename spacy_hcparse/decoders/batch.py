"""Batched host work: a decoder over every span of a batch in one compiled call.

The per-span functions (``decode_eisner`` with ``tree_score``, the argmax, ``tree_probabilities``,
first-order head margins) run here over all the spans of a batch at once, with results identical
to theirs: each span goes through the same compiled kernels, so what goes away is the Python loop
around them (its checks, copies and calls). With ``threads > 1`` the spans are spread over numba's
threads (``prange``, one span at a time per thread); ``threads=1`` runs a serial loop. What numpy
does as fast over the whole batch (input checks, labels, absent-arc ranges) is numpy, and the spans
that need a kernel few batches need (first-order spans, clashing labels) go to a kernel of its own,
so that a first parse compiles only what it uses (docs/speed.md, "Cold start").

Layout (B spans; span ``i`` has ``n_i`` words and ``size_i = n_i + 1`` rows, index 0 the root):

- ``sizes`` (B,) int64: the ``size_i``;
- square arrays (arc scores ``arc[h, m]``) end to end, each row-major, in one flat float64 array:
  span ``i``'s block starts at ``sum(size_j ** 2 for j < i)`` (``pack`` builds it);
- ``heads`` (sum size_i,) int64 end to end, ``heads[0] == -1`` in each span's block: span ``i``
  starts at ``sum(size_j for j < i)``;
- per-word arrays (label scores (N, L), labels, head probabilities, margins) end to end: word ``m``
  (1-based) of span ``i`` at row ``sum(n_j for j < i) + m - 1``;
- sibling factors, per span ``sib_counts[i]`` triples ``(h, s, m)`` (``s == h`` for the closest
  modifier) in ``sib_triples`` (T, 3) with their scores in ``sib_values`` (T,), end to end in span
  order; ``sib_counts[i] == -1``: span ``i`` has no sibling factors (first-order decoding; a span
  with a cube of zeros is decoded by the second-order kernel, which breaks ties its own way).

Probabilities and margins: ``batch_marginals.py``.
"""
from contextlib import contextmanager
from typing import List, NamedTuple, Optional, Sequence

import numba
import numpy as np
from numba import prange

from ..compiling import njit
from ._checks import MAX_WORDS, _tree_problem_code
from .eisner import eisner2_kernel, eisner_kernel
from .labels import _assign_groups
from .scoring import arc_part, sib_part


class Layout(NamedTuple):
    """Where each span's blocks start: ``squares`` (B,) in the flat square arrays, ``rows`` (B,)
    in ``heads``, ``words`` (B,) in the per-word arrays, ``triples`` (B,) in the sibling triples."""

    squares: np.ndarray
    rows: np.ndarray
    words: np.ndarray
    triples: np.ndarray


def pack(arrays: Sequence[np.ndarray]) -> tuple:
    """``(flat, sizes)``: square (size_i, size_i) arrays laid end to end as float64, and their
    sizes (int64 (B,))."""
    sizes = np.array([len(a) for a in arrays], dtype=np.int64)
    if not len(arrays):
        return np.zeros(0), sizes
    return np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays]), sizes


def cut(flat, lengths) -> list:
    """``flat`` cut along its first axis into consecutive pieces of ``lengths`` rows (views): what
    ``np.split`` at their cumulative sums gives, by plain slices (``np.split`` costs a few
    microseconds per piece, and a batch has thousands), so on any device's arrays (the offsets
    stay on the host)."""
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64)).tolist()
    return [flat[start:end] for start, end in zip([0] + ends[:-1], ends)]


def split_words(flat: np.ndarray, sizes: np.ndarray) -> List[np.ndarray]:
    """Per span its rows of a per-word array (views)."""
    return cut(flat, np.asarray(sizes) - 1)


def split_squares(flat: np.ndarray, sizes: np.ndarray) -> List[np.ndarray]:
    """Per span its (size, size) square of ``flat`` (views): what ``pack`` laid end to end."""
    sizes = np.asarray(sizes)
    return [block.reshape(size, size) for block, size in zip(cut(flat, sizes * sizes), sizes.tolist())]


def layout(sizes: np.ndarray, sib_counts: Optional[np.ndarray] = None) -> Layout:
    """The offsets of every span's blocks (see the module docstring)."""
    start = lambda counts: np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)  # noqa: E731
    triples = np.zeros(len(sizes), np.int64) if sib_counts is None else start(np.maximum(sib_counts, 0))
    return Layout(start(sizes * sizes), start(sizes), start(sizes - 1), triples)


def decode_eisner_batch(arcs, sizes, sib_counts=None, sib_triples=None, sib_values=None, *, threads: int = 1):
    """``(heads, scores)``: per span the heads of ``decode_eisner(arc, sib)`` (int64, laid out as
    the module docstring says) and the tree's ``tree_score(heads, arc, sib)`` (float64 (B,)).

    ``arcs``: the spans' arc scores ``arc[h, m]`` (``-inf``: an absent arc, used only where no
    projective tree avoids it); ``sib_counts``/``sib_triples``/``sib_values``: the spans' sibling
    factors (None: none anywhere), the dense cube of span ``i`` being zero except at its triples.
    Raises ``ValueError`` on bad input, naming the span.
    """
    sizes, arcs, where = _checked_squares(arcs, sizes, "arcs")
    counts, triples, values = _checked_siblings(sizes, sib_counts, sib_triples, sib_values)
    where = layout(sizes, counts)
    heads = np.full(int(sizes.sum()), -1, dtype=np.int64)
    scores = np.zeros(len(sizes))
    second = counts >= 0
    ranges = _usable_ranges(arcs, sizes, where.squares)
    with _threads(threads) as parallel:
        if second.any():
            kernel = _eisner2_parallel if parallel else _eisner2_serial
            kernel(np.flatnonzero(second), arcs, sizes, where.squares, where.rows, counts, triples, values,
                   where.triples, ranges, heads, scores)
        if not second.all():
            kernel = _eisner1_parallel if parallel else _eisner1_serial
            kernel(np.flatnonzero(~second), arcs, sizes, where.squares, where.rows, ranges, heads, scores)
    return heads, scores


def _usable_ranges(arcs, sizes, squares) -> np.ndarray:
    """Per span (float64 (B, 2)) the lowest and highest score of its usable arcs (finite,
    ``h != m``, ``m >= 1``; ``lo > hi``: none), or NaN where none of its arcs is absent (``-inf``):
    what ``absent.absent_floor`` starts from. Numpy over the batch."""
    ranges = np.full((len(sizes), 2), np.nan)
    if not len(sizes):
        return ranges
    cells = sizes * sizes
    span = np.repeat(np.arange(len(sizes)), cells)
    h, m = np.divmod(np.arange(len(arcs)) - np.repeat(squares, cells), np.repeat(sizes, cells))
    tree_cell = (m >= 1) & (h != m)
    finite = np.isfinite(arcs)
    absent = np.bincount(span[tree_cell & ~finite], minlength=len(sizes)) > 0
    if absent.any():
        usable = tree_cell & finite
        ranges[absent, 0] = np.minimum.reduceat(np.where(usable, arcs, np.inf), squares)[absent]
        ranges[absent, 1] = np.maximum.reduceat(np.where(usable, arcs, -np.inf), squares)[absent]
    return ranges


def labels_batch(heads, sizes, scores, label_class=None, *, threads: int = 1) -> np.ndarray:
    """Label id per word (int64 (N,)) of each span's tree: the best labels with at most one child
    per head from each class of ``label_class`` (``labels``: a matching where the best labels
    clash), or each word's best label without ``label_class`` (or with no class in it).

    ``scores`` (N, L): per word its label scores (``-inf``: ruled out; a caller's rules, such as a
    root label on the root's child alone, go into them). Raises ``ValueError`` on bad input. Numpy
    over the whole batch, and one compiled call for the heads whose children's best labels clash
    (so ``threads`` changes nothing here).
    """
    sizes = _checked_sizes(sizes)
    heads = _checked_heads(heads, sizes, trees=False)
    n_words = int((sizes - 1).sum())
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] != n_words or (n_words and scores.shape[1] < 1):
        raise ValueError(f"scores must have shape ({n_words}, L) with L >= 1, got {scores.shape}")
    if np.isnan(scores).any() or (scores == np.inf).any():
        raise ValueError("scores must be finite or -inf (NaN or +inf found)")
    n_labels = scores.shape[1]
    label_class = np.full(n_labels, -1, np.int64) if label_class is None \
        else np.ascontiguousarray(label_class, dtype=np.int64)
    if label_class.shape != (n_labels,) or (n_labels and label_class.min() < -1):
        raise ValueError(f"label_class must have shape ({n_labels},) with entries >= -1, got {label_class.shape}")
    n_classes = int(label_class.max()) + 1 if n_labels else 0
    if not n_words:
        return np.zeros(0, np.int64)
    best = scores.argmax(axis=1) if n_labels else np.zeros(n_words, np.int64)
    if n_classes == 0:
        return best
    where = layout(sizes)
    # Numpy over the whole batch: each word's head as a row of ``heads`` (unique across spans).
    words_of = sizes - 1
    head_rows = np.repeat(where.rows - where.words + 1, words_of) + np.arange(n_words)
    head_rows = np.repeat(where.rows, words_of) + heads[head_rows]
    return _matched(best, head_rows, scores, label_class, n_classes)


def _matched(best, head_rows, scores, label_class, n_classes: int) -> np.ndarray:
    """The class constraints over a batch, given each word's best label and its head's row:
    the children of heads where two take a label of one class are labelled again by
    ``labels._assign`` (one compiled call for them all), the others keep their best label."""
    classes = label_class[best]
    constrained = classes >= 0
    keys, counts = np.unique(head_rows[constrained] * n_classes + classes[constrained], return_counts=True)
    clashing = np.unique(keys[counts > 1] // n_classes)
    out = best.astype(np.int64)
    if not len(clashing):
        return out
    kids = np.flatnonzero(np.isin(head_rows, clashing))
    kids = kids[np.argsort(head_rows[kids], kind="stable")]  # grouped by head, in word order
    starts = np.flatnonzero(np.diff(head_rows[kids], prepend=-1) != 0)
    _assign_groups(kids, np.append(starts, len(kids)).astype(np.int64), scores, label_class, n_classes,
                   best.astype(np.int64), out)
    return out


# ----- checks ----------------------------------------------------------------------------------
def _checked_sizes(sizes) -> np.ndarray:
    try:
        sizes = np.ascontiguousarray(sizes, dtype=np.int64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"sizes must be an integer array: {err}") from None
    if sizes.ndim != 1:
        raise ValueError(f"sizes must be a (B,) array, got shape {sizes.shape}")
    if len(sizes) and sizes.min() < 1:
        raise ValueError(f"every size (n + 1) must be at least 1, got {sizes.min()} at span {int(sizes.argmin())}")
    if len(sizes) and sizes.max() - 1 > MAX_WORDS:
        raise ValueError(f"span {int(sizes.argmax())} of {sizes.max() - 1} words exceeds MAX_WORDS={MAX_WORDS}")
    return sizes


def _checked_squares(squares, sizes, name: str):
    """``(sizes, squares, layout)`` as int64 / C-contiguous float64, or ``ValueError``: the flat
    length must match the sizes, and the cells a tree can use (off the diagonal, columns
    ``1..n``) must be finite or ``-inf``."""
    sizes = _checked_sizes(sizes)
    try:
        squares = np.ascontiguousarray(squares, dtype=np.float64).ravel()
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a numeric array: {err}") from None
    expected = int((sizes * sizes).sum())
    if squares.shape != (expected,):
        raise ValueError(f"{name} must hold sum(size ** 2) = {expected} values end to end, got {squares.shape}")
    where = layout(sizes)
    bad = _first_bad_square(squares, sizes, where.squares) if not _finite_or_absent(squares) else -1
    if bad >= 0:
        raise ValueError(f"{name} of span {bad} contain NaN or +inf where a tree can use them")
    return sizes, squares, where


def _checked_heads(heads, sizes: np.ndarray, trees: bool) -> np.ndarray:
    """``heads`` as int64 laid out by ``sizes``; each span's block must have ``heads[0] == -1``
    and heads in ``0..n`` (``trees``: and be a single-root tree), or ``ValueError``."""
    try:
        heads = np.ascontiguousarray(heads, dtype=np.int64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"heads must be an integer array: {err}") from None
    if heads.shape != (int(sizes.sum()),):
        raise ValueError(f"heads must hold sum(sizes) = {int(sizes.sum())} entries, got {heads.shape}")
    rows = layout(sizes).rows
    span, code = (-1, 0) if _heads_hold(heads, sizes, rows, trees) else _first_bad_heads(heads, sizes, rows, trees)
    if span >= 0:
        what = "a single-root tree" if trees else "a heads array (heads[0] == -1, heads in 0..n)"
        raise ValueError(f"heads of span {span} is not {what} (problem code {code})")
    return heads


def _checked_siblings(sizes: np.ndarray, counts, triples, values):
    """Sibling factors as int64 counts (B,), int64 triples (T, 3), float64 values (T,); every
    span ``-1`` (no factors) when ``counts`` is None."""
    if counts is None:
        return np.full(len(sizes), -1, np.int64), np.zeros((0, 3), np.int64), np.zeros(0)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    triples = np.ascontiguousarray(np.asarray(triples).reshape(-1, 3), dtype=np.int64)
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    if counts.shape != sizes.shape or (len(counts) and counts.min() < -1):
        raise ValueError(f"sib_counts must have shape {sizes.shape} with entries >= -1, got {counts.shape}")
    total = int(np.maximum(counts, 0).sum())
    if triples.shape != (total, 3) or values.shape != (total,):
        raise ValueError(f"sib_triples (T, 3) and sib_values (T,) must hold T = {total} factors, got "
                         f"{triples.shape} and {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("sib_values contain NaN or inf")
    bound = np.repeat(sizes, np.maximum(counts, 0))
    if total and (triples.min() < 0 or (triples >= bound[:, None]).any()):
        raise ValueError("sib_triples hold an index outside its span")
    return counts, triples, values


def _finite_or_absent(squares: np.ndarray) -> bool:
    """Whether no value is NaN or ``+inf`` (numpy; ``_first_bad_square`` finds the span where
    one is where a tree can use it)."""
    return not (np.isnan(squares).any() or (squares == np.inf).any())


def _heads_hold(heads: np.ndarray, sizes: np.ndarray, rows: np.ndarray, trees: bool) -> bool:
    """Whether every span's block of ``heads`` is a heads array (``heads[0] == -1``, heads in
    ``0..n``) and, with ``trees``, a single-root tree (no self-loop, one word on the root, every
    word reaching it): numpy over the batch, pointer jumping for the cycles. ``_first_bad_heads``
    names the span and the problem where this is False."""
    if not len(sizes):
        return True
    if (heads[rows] != -1).any():
        return False
    span_rows = np.repeat(rows, sizes)
    words = np.ones(len(heads), dtype=np.bool_)
    words[rows] = False
    local = heads[words]
    if (local < 0).any() or (local >= np.repeat(sizes, sizes)[words]).any():
        return False
    if not trees:
        return True
    parent = span_rows + np.maximum(heads, 0)  # each root row is its own parent
    if (parent[words] == np.flatnonzero(words)).any():
        return False
    on_root = np.bincount(np.repeat(np.arange(len(sizes)), sizes)[words][local == 0], minlength=len(sizes))
    if (on_root[sizes > 1] != 1).any():
        return False
    for _ in range(int(sizes.max()).bit_length()):  # 2 ** steps >= the longest path
        parent = parent[parent]
    return bool((parent == span_rows).all())


@njit(cache=True)
def _first_bad_square(squares, sizes, starts):
    for i in range(sizes.shape[0]):
        size = sizes[i]
        block = squares[starts[i]: starts[i] + size * size]
        for h in range(size):
            for m in range(1, size):
                value = block[h * size + m]
                if m != h and not np.isfinite(value) and value != -np.inf:
                    return i
    return -1


@njit(cache=True)
def _first_bad_heads(heads, sizes, starts, trees):
    for i in range(sizes.shape[0]):
        block = heads[starts[i]: starts[i] + sizes[i]]
        if trees:
            code, _ = _tree_problem_code(block)
            if code != 0:
                return i, code
            continue
        if block[0] != -1:
            return i, 1
        for m in range(1, block.shape[0]):
            if block[m] < 0 or block[m] >= block.shape[0]:
                return i, 2
    return -1, 0


# ----- threads ---------------------------------------------------------------------------------
@contextmanager
def _threads(threads: int):
    """Yields whether to run the parallel kernel: with ``threads`` > 1 (capped at numba's
    ``NUMBA_NUM_THREADS``), numba's thread count set to it for the call, one span per task."""
    count = min(int(threads), numba.config.NUMBA_NUM_THREADS)
    if count <= 1:
        yield False
        return
    previous, chunk = numba.get_num_threads(), numba.get_parallel_chunksize()
    numba.set_num_threads(count)
    numba.set_parallel_chunksize(1)
    try:
        yield True
    finally:
        numba.set_parallel_chunksize(chunk)
        numba.set_num_threads(previous)


# ----- Eisner ----------------------------------------------------------------------------------
# First- and second-order spans go to kernels of their own, so that a batch compiles only the
# Eisner kernel its spans use (one whose spans all have sibling factors: not the first-order one).
@njit(cache=True, inline="always")  # one body in each loop below: no compile of its own
def _eisner2_span(i, arcs, sizes, squares, rows, counts, triples, values, first, ranges, heads, scores, buffer):
    """Span ``i`` (with sibling factors): ``decode_eisner``'s steps (absent arcs floored as
    ``absent.with_floor`` does, from the usable range ``ranges[i]``, the second-order kernel) and
    ``tree_score`` of the tree. The
    dense sibling cube is zero but at the span's triples; it lives in ``buffer`` where that is
    large enough (the serial loop: one allocation for the batch, its cells zeroed again after
    use), else in an array of its own."""
    size = sizes[i]
    arc = arcs[squares[i]: squares[i] + size * size].reshape((size, size))
    shared = buffer.shape[0] >= size * size * size
    if shared:
        cube = buffer[: size * size * size].reshape((size, size, size))
    else:
        cube = np.zeros((size, size, size))
    for k in range(first[i], first[i] + counts[i]):
        cube[triples[k, 0], triples[k, 1], triples[k, 2]] = values[k]
    floor = np.nan
    if not np.isnan(ranges[i, 0]):
        floor = _floor(ranges[i, 0], ranges[i, 1], size - 1, _cube_spread(cube, triples, first[i], counts[i]))
    tree = eisner2_kernel(_floored(arc, floor), cube)
    for m in range(size):
        heads[rows[i] + m] = tree[m]
    scores[i] = arc_part(tree, arc) + sib_part(tree, cube)
    if shared:
        for k in range(first[i], first[i] + counts[i]):
            cube[triples[k, 0], triples[k, 1], triples[k, 2]] = 0.0


@njit(cache=True, inline="always")  # one body in each loop below: no compile of its own
def _eisner1_span(i, arcs, sizes, squares, rows, ranges, heads, scores):
    """Span ``i`` (no sibling factors): ``decode_eisner``'s steps with the first-order kernel
    and ``tree_score`` of the tree."""
    size = sizes[i]
    arc = arcs[squares[i]: squares[i] + size * size].reshape((size, size))
    floor = np.nan if np.isnan(ranges[i, 0]) else _floor(ranges[i, 0], ranges[i, 1], size - 1, 0.0)
    tree = eisner_kernel(_floored(arc, floor))
    for m in range(size):
        heads[rows[i] + m] = tree[m]
    scores[i] = arc_part(tree, arc)


@njit(cache=True, inline="always")
def _floor(lo, hi, n, cube_spread):
    """``absent.absent_floor`` from the usable arcs' range ``lo``, ``hi`` and the sibling cube's
    ``high - low`` (0: none)."""
    if lo > hi:  # no usable arc at all
        return -1.0
    spread = n * (hi - lo)
    if cube_spread != 0.0:
        spread += n * cube_spread
    return lo - 2.0 * spread - 1.0


@njit(cache=True, inline="always")
def _cube_spread(cube, triples, start, count):
    """``high - low`` of the dense cube (``absent.cube_range``): with fewer triples than cells,
    some cell is 0, so 0 and the triples' cells are all it takes; else every cell."""
    low, high = 0.0, 0.0
    if count >= cube.size:
        flat = cube.ravel()
        low, high = flat[0], flat[0]
        for k in range(flat.shape[0]):
            low = min(low, flat[k])
            high = max(high, flat[k])
        return high - low
    for k in range(start, start + count):
        value = cube[triples[k, 0], triples[k, 1], triples[k, 2]]
        low = min(low, value)
        high = max(high, value)
    return high - low


@njit(cache=True, inline="always")
def _floored(arc, floor):
    """``arc`` with its absent arcs at ``floor`` (a copy; ``arc`` itself where ``floor`` is NaN:
    none is absent)."""
    if np.isnan(floor):
        return arc
    out = arc.copy()
    for h in range(arc.shape[0]):
        for m in range(1, arc.shape[0]):
            if h != m and not np.isfinite(arc[h, m]):
                out[h, m] = floor
    return out


@njit(cache=True)
def _usable_range(arc, mask):
    """``(lo, hi)``: the lowest and highest score of the arcs in ``mask`` (``lo > hi``: none)."""
    lo, hi = np.inf, -np.inf
    for h in range(arc.shape[0]):
        for m in range(arc.shape[0]):
            if mask[h, m]:
                lo = min(lo, arc[h, m])
                hi = max(hi, arc[h, m])
    return lo, hi


@njit(cache=True)
def _eisner2_serial(spans, arcs, sizes, squares, rows, counts, triples, values, first, ranges, heads, scores):
    largest = 0
    for i in spans:
        largest = max(largest, sizes[i])
    buffer = np.zeros(largest * largest * largest)
    for i in spans:
        _eisner2_span(i, arcs, sizes, squares, rows, counts, triples, values, first, ranges, heads, scores, buffer)


@njit(cache=True, parallel=True)
def _eisner2_parallel(spans, arcs, sizes, squares, rows, counts, triples, values, first, ranges, heads, scores):
    none = np.zeros(0)
    for k in prange(spans.shape[0]):
        _eisner2_span(spans[k], arcs, sizes, squares, rows, counts, triples, values, first, ranges, heads, scores,
                      none)


@njit(cache=True)
def _eisner1_serial(spans, arcs, sizes, squares, rows, ranges, heads, scores):
    for i in spans:
        _eisner1_span(i, arcs, sizes, squares, rows, ranges, heads, scores)


@njit(cache=True, parallel=True)
def _eisner1_parallel(spans, arcs, sizes, squares, rows, ranges, heads, scores):
    for k in prange(spans.shape[0]):
        _eisner1_span(spans[k], arcs, sizes, squares, rows, ranges, heads, scores)
