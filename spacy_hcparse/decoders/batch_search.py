"""Batched non-projective decoding: the MST and randomized hill climbing over every span of a
batch in one compiled call (the structured hinge's cost-augmented decoding in training, and
``graph.decoding.HillClimb``'s trees at test time).

Layout as ``decoders.batch`` (``pack``: square arc arrays end to end, ``sizes`` (B,); heads end
to end, ``heads[0] == -1`` per span), with the grandparent factors laid out as the sibling ones:
per span ``grand_counts[i]`` triples ``(g, h, m)`` in ``grand_triples`` with their scores in
``grand_values`` (``-1``: the span has none), each span's dense cube zero except at its triples.

Per span the result is the per-span decoder's (same kernels, same random stream):

- ``decode_mst_batch``: ``decode_mst(arc)``;
- ``hill_climb_batch``: ``decode_hill_climb(arc, sib, grand, init=decode_mst(arc), ...)`` without
  a time limit (the restart caps bound the work; a fixed ``seed`` gives every span the stream the
  per-span call with that seed gives it), i.e. ``graph.decoding.HillClimb`` whose time
  limit does not cut; a span without sibling and grandparent factors gets the MST tree, as there.
  Absent (``-inf``) arcs are floored as ``absent.with_floor`` floors them for each decoder.
"""
from typing import NamedTuple, Optional

import numpy as np
from numba import prange

from ..compiling import njit
from .absent import _any_absent, _fill_absent, usable_mask, uses_absent
from .batch import _checked_siblings, _checked_squares, _threads, _usable_range, layout
from .hill_climb import _arc_abs_max, _check_settings, _search, default_caps, start_trees
from .mst import mst_kernel
from .sampling import head_tables
from .scoring import arc_part, full_score


class BatchSearch(NamedTuple):
    """Hill climbing's result for every span of a batch: ``heads`` (int64, end to end), per span
    the tree's ``scores`` (float64; ``-inf`` where it uses an absent arc), ``restarts`` (int64)
    and ``searched`` (bool; False: the span has no sibling or grandparent factors and got the
    exact first-order MST tree, scored by its arcs)."""

    heads: np.ndarray
    scores: np.ndarray
    restarts: np.ndarray
    searched: np.ndarray


def decode_mst_batch(arcs, sizes, *, threads: int = 1) -> np.ndarray:
    """Per span the heads of ``decode_mst(arc)`` (int64, end to end). Raises ``ValueError`` on
    bad input, naming the span."""
    sizes, arcs, where = _checked_squares(arcs, sizes, "arcs")
    heads = np.full(int(sizes.sum()), -1, dtype=np.int64)
    with _threads(threads) as parallel:
        (_mst_parallel if parallel else _mst_serial)(arcs, sizes, where.squares, where.rows, heads)
    return heads


def hill_climb_batch(
    arcs, sizes, sib_counts=None, sib_triples=None, sib_values=None,
    grand_counts=None, grand_triples=None, grand_values=None, *,
    seed: int = 0, max_restarts: Optional[int] = None, min_restarts: int = 5, converge: int = 10,
    uniform_share: float = 0.5, temperature: float = 2.0, pair_moves: bool = True,
    projective_start: bool = True, threads: int = 1,
) -> BatchSearch:
    """Hill climbing from each span's MST tree over its arcs, sibling and grandparent factors
    (see the module docstring; the options are ``decode_hill_climb``'s, ``max_restarts`` None:
    ``default_max_restarts(n)`` per span). Raises ``ValueError`` on bad input, naming the span."""
    sizes, arcs, where = _checked_squares(arcs, sizes, "arcs")
    s_counts, s_triples, s_values = _checked_siblings(sizes, sib_counts, sib_triples, sib_values)
    g_counts, g_triples, g_values = _checked_siblings(sizes, grand_counts, grand_triples, grand_values)
    _check_settings(max_restarts, min_restarts, converge, None, uniform_share, temperature)
    s_first, g_first = layout(sizes, s_counts).triples, layout(sizes, g_counts).triples
    found = BatchSearch(np.full(int(sizes.sum()), -1, dtype=np.int64), np.zeros(len(sizes)),
                        np.zeros(len(sizes), dtype=np.int64), np.zeros(len(sizes), dtype=np.bool_))
    cap = -1 if max_restarts is None else int(max_restarts)
    settings = (int(seed) % (2**32), cap, int(min_restarts), int(converge), float(uniform_share),
                float(temperature), bool(pair_moves), bool(projective_start))
    with _threads(threads) as parallel:
        kernel = _climb_parallel if parallel else _climb_serial
        kernel(arcs, sizes, where.squares, where.rows, s_counts, s_triples, s_values, s_first,
               g_counts, g_triples, g_values, g_first, *settings, *found)
    return found


# ----- MST -------------------------------------------------------------------------------------
@njit(cache=True)
def _mst_serial(arcs, sizes, squares, rows, heads):
    for i in range(sizes.shape[0]):
        _mst_span(i, arcs, sizes, squares, rows, heads)


@njit(cache=True, parallel=True)
def _mst_parallel(arcs, sizes, squares, rows, heads):
    for i in prange(sizes.shape[0]):
        _mst_span(i, arcs, sizes, squares, rows, heads)


@njit(cache=True)
def _mst_span(i, arcs, sizes, squares, rows, heads):
    size = sizes[i]
    arc = arcs[squares[i]: squares[i] + size * size].reshape((size, size))
    heads[rows[i]: rows[i] + size] = mst_kernel(_floored_copy(arc, 0.0))


@njit(cache=True)
def _floored_copy(arc, extra):
    """``absent.with_floor(arc, ...).arc`` as a copy: absent arcs at ``absent_floor`` with
    ``extra`` the higher-order part of the spread (``n`` times each cube's range)."""
    out = arc.copy()
    mask = usable_mask(arc)
    if not _any_absent(arc, mask):
        return out
    size = arc.shape[0]
    lo, hi = _usable_range(arc, mask)
    floor = -1.0 if lo > hi else lo - 2.0 * ((size - 1) * (hi - lo) + extra) - 1.0
    _fill_absent(out, mask, floor)
    return out


# ----- hill climbing ---------------------------------------------------------------------------
@njit(cache=True)
def _climb_serial(arcs, sizes, squares, rows, s_counts, s_triples, s_values, s_first, g_counts, g_triples,
                  g_values, g_first, seed, cap, min_restarts, converge, share, temperature, pairs, projective,
                  heads, scores, restarts, searched):
    largest = 1
    for i in range(sizes.shape[0]):
        largest = max(largest, sizes[i])
    cubes = np.zeros((2, largest * largest * largest))
    for i in range(sizes.shape[0]):
        _climb_span(i, arcs, sizes, squares, rows, s_counts, s_triples, s_values, s_first, g_counts, g_triples,
                    g_values, g_first, seed, cap, min_restarts, converge, share, temperature, pairs, projective,
                    heads, scores, restarts, searched, cubes)


@njit(cache=True, parallel=True)
def _climb_parallel(arcs, sizes, squares, rows, s_counts, s_triples, s_values, s_first, g_counts, g_triples,
                    g_values, g_first, seed, cap, min_restarts, converge, share, temperature, pairs, projective,
                    heads, scores, restarts, searched):
    for i in prange(sizes.shape[0]):
        size = sizes[i]
        cubes = np.zeros((2, size * size * size))
        _climb_span(i, arcs, sizes, squares, rows, s_counts, s_triples, s_values, s_first, g_counts, g_triples,
                    g_values, g_first, seed, cap, min_restarts, converge, share, temperature, pairs, projective,
                    heads, scores, restarts, searched, cubes)


@njit(cache=True)
def _climb_span(i, arcs, sizes, squares, rows, s_counts, s_triples, s_values, s_first, g_counts, g_triples,
                g_values, g_first, seed, cap, min_restarts, converge, share, temperature, pairs, projective,
                heads, scores, restarts, searched, cubes):
    """Span ``i``: ``graph.decoding.HillClimb``'s steps (the MST tree, then ``_search`` from it),
    its tree written to ``heads`` and its score, restarts and ``searched`` flag at ``i``.
    ``cubes`` (2, >= size^3): zeroed scratch for the dense sibling and grandparent cubes, zeroed
    again after use."""
    size = sizes[i]
    arc = arcs[squares[i]: squares[i] + size * size].reshape((size, size))
    out = heads[rows[i]: rows[i] + size]
    use_sib, use_grand = s_counts[i] >= 0, g_counts[i] >= 0
    mst = mst_kernel(_floored_copy(arc, 0.0))
    if not use_sib and not use_grand:
        for j in range(out.shape[0]):  # element by element: no shape-error formatting to compile
            out[j] = mst[j]
        scores[i] = arc_part(mst, arc)
        return
    searched[i] = True
    n = size - 1
    sib = cubes[0, : size * size * size].reshape((size, size, size))
    grand = cubes[1, : size * size * size].reshape((size, size, size))
    s_lo, s_hi, s_top = _fill_cube(sib, use_sib, s_triples, s_values, s_first[i], s_counts[i])
    g_lo, g_hi, g_top = _fill_cube(grand, use_grand, g_triples, g_values, g_first[i], g_counts[i])
    floored = _floored_copy(arc, n * (s_hi - s_lo) + n * (g_hi - g_lo))
    best, done = mst, 0
    if size > 2:  # else one tree: no search
        max_restarts, low = cap, min_restarts
        if cap < 0:
            max_restarts, low = default_caps(n, min_restarts)
        top = max(1.0, _arc_abs_max(floored))
        if use_sib:
            top = max(top, s_top)
        if use_grand:
            top = max(top, g_top)
        head_cdf, root_cdf = head_tables(floored, temperature)
        best = np.empty(size, dtype=np.int64)
        stats = np.array([-np.inf, 0.0, 0.0])
        starts = start_trees(mst, True, floored, sib, use_sib, projective)
        _search(floored, sib, grand, use_sib, use_grand, starts, head_cdf, root_cdf, share, seed, 1e-11 * top,
                max_restarts, low, converge, pairs, True, best, stats)
        done = int(stats[2])
    _write_tree(i, best, floored, arc, sib, grand, use_sib, use_grand, out, scores)
    restarts[i] = done
    _clear_cube(sib, use_sib, s_triples, s_first[i], s_counts[i])
    _clear_cube(grand, use_grand, g_triples, g_first[i], g_counts[i])


@njit(cache=True)
def _write_tree(i, tree, floored, arc, sib, grand, use_sib, use_grand, out, scores):
    """``tree`` into ``out`` and its score at ``i``: over the floored arcs and the cubes, as
    ``decode_hill_climb`` scores it, ``-inf`` where it uses an absent arc of ``arc``."""
    for j in range(out.shape[0]):
        out[j] = tree[j]
    if uses_absent(tree, usable_mask(arc)):
        scores[i] = -np.inf
    else:
        scores[i] = full_score(tree, floored, sib, grand, use_sib, use_grand)


@njit(cache=True)
def _fill_cube(cube, used, triples, values, start, count):
    """Write the span's values into its dense cube; ``(min, max, abs max)`` of the cube (the
    cells off the triples are 0); (0, 0, 0) when the span has none of these factors."""
    lo, hi, top = 0.0, 0.0, 0.0
    if not used:
        return lo, hi, top
    size = cube.shape[0]
    for k in range(start, start + count):
        value = values[k]
        cube[triples[k, 0], triples[k, 1], triples[k, 2]] = value
    if count >= size * size * size:  # every cell may be a triple: no zero guaranteed
        lo, hi = np.inf, -np.inf
    for k in range(start, start + count):
        value = cube[triples[k, 0], triples[k, 1], triples[k, 2]]
        lo = min(lo, value)
        hi = max(hi, value)
        top = max(top, abs(value))
    return lo, hi, top


@njit(cache=True)
def _clear_cube(cube, used, triples, start, count):
    if used:
        for k in range(start, start + count):
            cube[triples[k, 0], triples[k, 1], triples[k, 2]] = 0.0
