"""Batched head probabilities and margins: every span of a batch in one compiled call.

Layout, threads and checks as in ``batch.py`` (square arc scores end to end, ``heads`` end to end
with ``heads[0] == -1`` per span, per-word outputs end to end). Results are identical to the
per-span functions: ``marginals.tree_probabilities`` (the same kernels; the tree's score summed in
numpy's pairwise order), with sibling factors too (``sibling_probabilities_batch``: what
``hc_parser``'s calibration reads before its isotonic map), and the first-order margin of each
word's head (``hc_parser``'s ``hc_head_margin``).
"""
from typing import Optional

import numpy as np
from numba import prange

from ..compiling import njit
from .absent import has_single_root_tree, usable_mask
from .batch import _checked_heads, _checked_siblings, _checked_squares, _threads, layout
from .marginals import _inside_sib, _inside_sib_linear, _is_projective, _matrix_tree
from .scoring import arc_part, sib_part


def tree_probabilities_batch(heads, sizes, arcs, *, threads: int = 1):
    """``(probs, log_probs)``: per word ``P(heads[m] -> m)`` (float64 (N,)) and per span
    ``log P(heads)`` (float64 (B,)) under the first-order (non-projective) single-root tree
    distribution of its ``arc`` (``-inf``: absent arc), as ``tree_probabilities(heads, arc)``
    gives them span by span. Where the matrix-tree determinant is lost to rounding (scores many
    hundreds apart), each word's own head distribution (the softmax of its column) stands in.
    Raises ``ValueError`` on bad input, or naming the first span where no single-root tree avoids
    the absent arcs."""
    sizes, arcs, where = _checked_squares(arcs, sizes, "arcs")
    heads = _checked_heads(heads, sizes, trees=True)
    probs = np.zeros(int((sizes - 1).sum()))
    log_probs = np.zeros(len(sizes))
    failed = np.zeros(len(sizes), dtype=np.bool_)
    with _threads(threads) as parallel:
        kernel = _probabilities_parallel if parallel else _probabilities_serial
        kernel(heads, sizes, arcs, where.squares, where.rows, where.words, probs, log_probs, failed)
    if failed.any():
        raise ValueError(f"span {int(np.argmax(failed))}: no single-root tree avoids the absent (-inf) arcs")
    return probs, log_probs


def sibling_probabilities_batch(heads, sizes, arcs, sib_counts, sib_triples, sib_values, temperature: float,
                                tree_temperature: Optional[float] = None, *, threads: int = 1):
    """``(probs, log_probs, done)`` under the projective distribution of the arc and sibling
    scores divided by ``temperature``, for each span ``i`` with sibling factors
    (``sib_counts[i] >= 0``, layout as ``batch.decode_eisner_batch``'s), at least one word and a
    projective tree in ``heads`` (``done[i]``; other spans are left 0 for the caller):

    - per word ``P(heads[m] -> m)`` (float64 (N,)), as ``tree_probabilities(heads, arc / T, True,
      cube / T)`` (``cube``: the span's dense sibling cube, 0 where no factor was scored);
    - per span ``log P(heads)`` at ``T``, or with ``tree_temperature`` at that temperature as
      ``tree_score(heads, a', cube / T') - log_partition(arc / T', True, cube / T')`` with ``T'``
      the tree temperature and ``a'`` the scores ``arc / T'`` with ``-inf`` as ``-1e300``.

    Identical to those per-span functions (the same kernels, the same sums). Raises
    ``ValueError`` naming the first span where no tree avoids the absent arcs."""
    sizes, arcs, where = _checked_squares(arcs, sizes, "arcs")
    heads = _checked_heads(heads, sizes, trees=True)
    counts, triples, values = _checked_siblings(sizes, sib_counts, sib_triples, sib_values)
    first = layout(sizes, counts).triples
    if not temperature > 0 or not (tree_temperature is None or tree_temperature > 0):
        raise ValueError(f"temperatures must be positive, got {temperature} and {tree_temperature}")
    tree_t = np.nan if tree_temperature is None else float(tree_temperature)
    probs = np.zeros(int((sizes - 1).sum()))
    log_probs = np.zeros(len(sizes))
    done = np.zeros(len(sizes), dtype=np.bool_)
    failed = np.zeros(len(sizes), dtype=np.bool_)
    retry = np.zeros(len(sizes), dtype=np.bool_)
    with _threads(threads) as parallel:
        kernel = _sibling_parallel if parallel else _sibling_serial
        kernel(heads, sizes, arcs, where.squares, where.rows, where.words, counts, triples, values, first,
               float(temperature), tree_t, probs, log_probs, done, retry)
        if retry.any():  # linear-space values out of range: those spans again, with log space where needed
            kernel = _sibling_log_parallel if parallel else _sibling_log_serial
            kernel(np.flatnonzero(retry), heads, sizes, arcs, where.squares, where.rows, where.words, counts, triples,
                   values, first, float(temperature), tree_t, probs, log_probs, done, failed)
    if failed.any():
        raise ValueError(f"span {int(np.argmax(failed))}: no single-root tree avoids the absent (-inf) arcs")
    return probs, log_probs, done


def head_margins_batch(heads, sizes, arcs, *, threads: int = 1) -> np.ndarray:
    """Per word (float64 (N,)) the first-order score gap between its head in ``heads`` and its
    best other head (not itself), ``arc[heads[m], m] - max(arc[h, m] for h not in {m,
    heads[m]})``; 0 where no other head has a finite score."""
    sizes, arcs, where = _checked_squares(arcs, sizes, "arcs")
    heads = _checked_heads(heads, sizes, trees=False)
    out = np.zeros(int((sizes - 1).sum()))
    with _threads(threads) as parallel:
        kernel = _margins_parallel if parallel else _margins_serial
        kernel(heads, sizes, arcs, where.squares, where.rows, where.words, out)
    return out


# ----- probabilities ---------------------------------------------------------------------------
@njit(cache=True, inline="always")  # one body in each loop below: no compile of its own
def _probabilities_span(i, heads, sizes, arcs, squares, rows, words, probs, log_probs, failed):
    """Span ``i``: ``tree_probabilities``'s steps (``_checked``, ``_partition``, ``_tree_score``)."""
    size = sizes[i]
    n = size - 1
    arc = arcs[squares[i]: squares[i] + size * size].reshape((size, size))
    tree = heads[rows[i]: rows[i] + size]
    mask = usable_mask(arc)
    clean = np.full((size, size), -np.inf)
    for h in range(size):
        for m in range(size):
            if mask[h, m]:
                clean[h, m] = arc[h, m]
    if n == 0:
        log_probs[i] = 0.0
        return
    if not has_single_root_tree(mask):
        failed[i] = True
        return
    log_z, marg = _matrix_tree(clean, mask)
    if not np.isfinite(log_z):  # the determinant lost to rounding (scores far apart)
        log_probs[i] = _write_own_heads(tree, clean, probs, words[i])
        return
    score = _write_chosen(tree, marg, clean, mask, probs, words[i])
    log_probs[i] = -np.inf if score == -np.inf else score - log_z


@njit(cache=True)
def _write_own_heads(tree, clean, probs, start):
    """Where the matrix-tree determinant is lost to rounding: writes each word's own head
    distribution (the softmax of its column of ``clean`` over heads ``h != m``) at its chosen head
    to ``probs[start + m - 1]``, and returns the tree's log probability under those independent
    distributions (``-inf`` where the tree uses an absent arc)."""
    n = tree.shape[0] - 1
    total = 0.0
    for m in range(1, n + 1):
        top = -np.inf
        for h in range(n + 1):
            if h != m and clean[h, m] > top:
                top = clean[h, m]
        norm = 0.0
        for h in range(n + 1):
            if h != m and clean[h, m] > -np.inf:
                norm += np.exp(clean[h, m] - top)
        log_p = clean[tree[m], m] - top - np.log(norm)
        probs[start + m - 1] = np.exp(log_p)
        total += log_p
    return total


@njit(cache=True)
def _write_chosen(tree, marg, clean, mask, probs, start):
    """Writes the chosen heads' marginals ``marg[tree[m], m]`` to ``probs[start + m - 1]``; returns
    the tree's score in ``clean`` summed as numpy sums (``-inf`` when an arc is not in ``mask``)."""
    n = tree.shape[0] - 1
    picked = np.empty(n)
    allowed = True
    for m in range(1, n + 1):
        probs[start + m - 1] = marg[tree[m], m]
        picked[m - 1] = clean[tree[m], m]
        allowed = allowed and mask[tree[m], m]
    return 0.0 + _pairwise_sum(picked, n) if allowed else -np.inf


@njit(cache=True)
def _pairwise_sum(a, n):
    """``a[:n].sum()`` as numpy sums float64 (pairwise: halves, rounded to 8, down to blocks of at
    most 128 summed by 8 accumulators), so that the tree's log probability is the per-span
    function's to the last bit. Without recursion: numba's cache reloads recursive functions
    badly (a segfault)."""
    if n <= 128:
        return _block_sum(a, 0, n)
    lo_of = np.empty(64, np.int64)  # the halves still to sum, depth first (at most ~2 log2 n)
    n_of = np.empty(64, np.int64)
    step = np.empty(64, np.int64)  # 0: left half next, 1: right half next, 2: both summed
    sums = np.empty(64)
    lo_of[0], n_of[0], step[0] = 0, n, 0
    top, done = 1, 0
    while top > 0:
        lo, size = lo_of[top - 1], n_of[top - 1]
        half = size // 2
        half -= half % 8
        if size <= 128:
            sums[done] = _block_sum(a, lo, size)
            done += 1
            top -= 1
        elif step[top - 1] == 0:
            step[top - 1] = 1
            lo_of[top], n_of[top], step[top] = lo, half, 0
            top += 1
        elif step[top - 1] == 1:
            step[top - 1] = 2
            lo_of[top], n_of[top], step[top] = lo + half, size - half, 0
            top += 1
        else:
            sums[done - 2] = sums[done - 2] + sums[done - 1]
            done -= 1
            top -= 1
    return sums[0]


@njit(cache=True)
def _block_sum(a, lo, n):
    """numpy's pairwise sum of ``a[lo:lo + n]``, ``n <= 128``."""
    if n < 8:
        total = -0.0
        for k in range(lo, lo + n):
            total += a[k]
        return total
    acc = a[lo: lo + 8].copy()
    k = 8
    while k < n - (n % 8):
        for j in range(8):
            acc[j] += a[lo + k + j]
        k += 8
    total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
    while k < n:
        total += a[lo + k]
        k += 1
    return total


@njit(cache=True)
def _probabilities_serial(heads, sizes, arcs, squares, rows, words, probs, log_probs, failed):
    for i in range(sizes.shape[0]):
        _probabilities_span(i, heads, sizes, arcs, squares, rows, words, probs, log_probs, failed)


@njit(cache=True, parallel=True)
def _probabilities_parallel(heads, sizes, arcs, squares, rows, words, probs, log_probs, failed):
    for i in prange(sizes.shape[0]):
        _probabilities_span(i, heads, sizes, arcs, squares, rows, words, probs, log_probs, failed)


# ----- probabilities with siblings ------------------------------------------------------------
# Two passes, so that a batch compiles the log-space chart only where the linear one runs out of
# range: ``_sibling_span`` with the linear chart alone (a span it cannot finish is marked for
# retry), then ``_sibling_log_span`` (``marginals._inside_sib``: linear, else log) on those.
@njit(cache=True, inline="always")  # one body in each loop below: no compile of its own
def _sibling_span(i, heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                  temperature, tree_temperature, probs, log_probs, done, retry):
    """Span ``i``: ``tree_probabilities(heads, arc / T, True, cube / T)``'s steps, then
    the tree's log probability at ``tree_temperature`` (NaN: none), with
    ``marginals._inside_sib_linear``; ``retry[i]`` where its values leave its range."""
    size = sizes[i]
    tree = heads[rows[i]: rows[i] + size]
    if counts[i] < 0 or size < 2 or not _is_projective(tree):
        return
    arc, mask, clean, sib = _sibling_scores(i, sizes, arcs, squares, counts, triples, values, first, temperature)
    log_z, marg, ok = _inside_sib_linear(clean, sib, True)
    if not ok or not np.isfinite(log_z):
        retry[i] = True
        return
    log_probs[i] = _chosen_log_prob(tree, marg, clean, mask, sib, log_z, probs, words[i])
    if not np.isnan(tree_temperature):
        score, clean, sib = _tree_terms(i, tree, arc, counts, triples, values, first, tree_temperature)
        log_z, _, ok = _inside_sib_linear(clean, sib, False)
        if not ok:
            retry[i] = True
            return
        log_probs[i] = score - log_z
    done[i] = True


@njit(cache=True, inline="always")  # one body in each loop below: no compile of its own
def _sibling_log_span(i, heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                      temperature, tree_temperature, probs, log_probs, done, failed):
    """Span ``i`` as ``_sibling_span``, with ``marginals._inside_sib`` (the log-space chart where
    the linear one leaves its range); ``failed[i]`` where no tree avoids the absent arcs."""
    tree = heads[rows[i]: rows[i] + sizes[i]]
    arc, mask, clean, sib = _sibling_scores(i, sizes, arcs, squares, counts, triples, values, first, temperature)
    log_z, marg = _inside_sib(clean, sib, True)
    if not np.isfinite(log_z):
        failed[i] = True
        return
    log_probs[i] = _chosen_log_prob(tree, marg, clean, mask, sib, log_z, probs, words[i])
    if not np.isnan(tree_temperature):
        score, clean, sib = _tree_terms(i, tree, arc, counts, triples, values, first, tree_temperature)
        log_probs[i] = score - _inside_sib(clean, sib, False)[0]
    done[i] = True


@njit(cache=True, inline="always")
def _sibling_scores(i, sizes, arcs, squares, counts, triples, values, first, temperature):
    """Span ``i``'s (size, size) arc scores, and at ``temperature``: the mask of its usable arcs,
    its scaled arc scores (``-inf`` where unusable) and its dense sibling cube."""
    size = sizes[i]
    arc = arcs[squares[i]: squares[i] + size * size].reshape((size, size))
    scaled = arc / temperature
    mask = usable_mask(scaled)
    sib = _scaled_cube(size, triples, values, first[i], counts[i], temperature)
    return arc, mask, _where(mask, scaled, -np.inf), sib


@njit(cache=True, inline="always")
def _chosen_log_prob(tree, marg, clean, mask, sib, log_z, probs, start):
    """Writes each word's head marginal (``_write_chosen``); returns the tree's log probability."""
    score = _write_chosen(tree, marg, clean, mask, probs, start)
    return -np.inf if score == -np.inf else (score + sib_part(tree, sib)) - log_z


@njit(cache=True, inline="always")
def _tree_terms(i, tree, arc, counts, triples, values, first, tree_temperature):
    """At ``tree_temperature``: the tree's score (``-inf`` arcs as ``-1e300``), the usable arc
    scores and the sibling cube."""
    scaled = arc / tree_temperature
    sib = _scaled_cube(arc.shape[0], triples, values, first[i], counts[i], tree_temperature)
    score = arc_part(tree, _finite_or(scaled, -1e300)) + sib_part(tree, sib)
    return score, _where(usable_mask(scaled), scaled, -np.inf), sib


@njit(cache=True)
def _where(mask, values, fill):
    """``np.where(mask, values, fill)`` of a square array (a loop: numba's broadcasting machinery
    costs more to compile than it saves)."""
    out = np.empty_like(values)
    for h in range(values.shape[0]):
        for m in range(values.shape[1]):
            out[h, m] = values[h, m] if mask[h, m] else fill
    return out


@njit(cache=True)
def _finite_or(values, fill):
    """``np.where(np.isfinite(values), values, fill)`` of a square array."""
    out = np.empty_like(values)
    for h in range(values.shape[0]):
        for m in range(values.shape[1]):
            out[h, m] = values[h, m] if np.isfinite(values[h, m]) else fill
    return out


@njit(cache=True)
def _scaled_cube(size, triples, values, first, count, temperature):
    """The span's dense sibling cube divided by ``temperature`` (what ``dense_cube(...) / T``
    gives, without a pass over the whole cube)."""
    cube = np.zeros((size, size, size))
    for k in range(first, first + count):
        cube[triples[k, 0], triples[k, 1], triples[k, 2]] = values[k] / temperature
    return cube


@njit(cache=True)
def _sibling_serial(heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                    temperature, tree_temperature, probs, log_probs, done, retry):
    for i in range(sizes.shape[0]):
        _sibling_span(i, heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                      temperature, tree_temperature, probs, log_probs, done, retry)


@njit(cache=True, parallel=True)
def _sibling_parallel(heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                      temperature, tree_temperature, probs, log_probs, done, retry):
    for i in prange(sizes.shape[0]):
        _sibling_span(i, heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                      temperature, tree_temperature, probs, log_probs, done, retry)


@njit(cache=True)
def _sibling_log_serial(spans, heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                        temperature, tree_temperature, probs, log_probs, done, failed):
    for i in spans:
        _sibling_log_span(i, heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                          temperature, tree_temperature, probs, log_probs, done, failed)


@njit(cache=True, parallel=True)
def _sibling_log_parallel(spans, heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                          temperature, tree_temperature, probs, log_probs, done, failed):
    for k in prange(spans.shape[0]):
        _sibling_log_span(spans[k], heads, sizes, arcs, squares, rows, words, counts, triples, values, first,
                          temperature, tree_temperature, probs, log_probs, done, failed)


# ----- margins ---------------------------------------------------------------------------------
@njit(cache=True, inline="always")  # one body in each loop below: no compile of its own
def _margins_span(i, heads, sizes, arcs, squares, rows, words, out):
    size = sizes[i]
    arc = arcs[squares[i]: squares[i] + size * size].reshape((size, size))
    for m in range(1, size):
        head = heads[rows[i] + m]
        best = -np.inf
        for h in range(size):
            if h != m and h != head and arc[h, m] > best:
                best = arc[h, m]
        out[words[i] + m - 1] = arc[head, m] - best if np.isfinite(best) else 0.0


@njit(cache=True)
def _margins_serial(heads, sizes, arcs, squares, rows, words, out):
    for i in range(sizes.shape[0]):
        _margins_span(i, heads, sizes, arcs, squares, rows, words, out)


@njit(cache=True, parallel=True)
def _margins_parallel(heads, sizes, arcs, squares, rows, words, out):
    for i in prange(sizes.shape[0]):
        _margins_span(i, heads, sizes, arcs, squares, rows, words, out)
