"""Arc probabilities of first-order models: the log partition function and arc marginals.

Conventions: index 0 is the root, words are ``1..n``; ``arc[h, m]`` is the log-potential of head
``h`` -> modifier ``m`` (``-inf``: absent arc; column 0 and the diagonal are ignored). The
distribution is ``P(tree) = exp(sum of its arc scores - log Z)`` over single-root trees (exactly one
word on the root), non-projective by default, projective with ``projective=True``.
``marginals[h, m] = P(h -> m)``: column ``m >= 1`` sums to 1; column 0 and the diagonal are 0.

Non-projective: the matrix-tree theorem with Koo et al.'s (2007) single-root Laplacian. With
``A[h, m] = exp(arc[h, m])`` over words, ``L[m, m] = sum_h A[h, m]``, ``L[h, m] = -A[h, m]``, and
the first row (word 1) replaced by the root potentials ``exp(arc[0, m])``, ``Z = det(L)`` and
``P(h -> m) = A[h, m] ([m != 1] Linv[m, m] - [h != 1] Linv[m, h])``, ``P(0 -> m) = exp(arc[0, m])
Linv[m, 1]``. Each column is scaled by its largest potential first (a shift of ``arc[:, m]`` by a
constant changes ``log Z`` by that constant and no marginal), and the determinant and inverse come
from Gauss-Jordan elimination with partial pivoting, so ``log Z`` never overflows (scores that
favour cycles over every tree by dozens of nats make the determinant cancel, and lose digits).

Projective: the inside-outside algorithm over Eisner's first-order chart (the same chart as
``eisner.py``: spans over words, then the root takes one child), in log space. With sibling
factors ``sib[h, s, m]`` (``s == h`` for the closest modifier on a side; projective only), the
distribution is over the arc and sibling scores together, ``P(tree) ~ exp(arc part + sibling
part)``, and inside-outside runs over McDonald & Pereira's second-order chart (``eisner.py``'s
``sb`` spans), still O(n^3).
"""
from typing import Optional, Tuple

import numpy as np

from ..compiling import njit
from ._checks import check_arc, check_cube, check_heads
from .absent import has_single_root_tree, usable_mask
from .scoring import sib_part


def log_partition(arc, projective: bool = False, sib: Optional[np.ndarray] = None) -> float:
    """``log Z``: the log of the summed ``exp(score)`` of all single-root trees (projective ones
    with ``projective=True``; ``sib``: sibling factors too, projective only, then without the
    outside pass); ``-inf`` when no tree avoids absent (``-inf``) arcs. n = 0: 0."""
    return _partition(*_checked(arc), projective, _checked_sib(sib, arc, projective), marginals=False)[0]


def arc_marginals(arc, projective: bool = False, sib: Optional[np.ndarray] = None) -> np.ndarray:
    """``P(h -> m)`` under the single-root tree distribution of ``arc`` (and ``sib``, projective
    only) (float64 (n+1, n+1); see the module docstring). Raises ``ValueError`` on bad input or
    when no tree avoids absent arcs."""
    return _marginals(*_partition(*_checked(arc), projective, _checked_sib(sib, arc, projective)))


def tree_log_prob(heads, arc, projective: bool = False) -> float:
    """``log P(heads) = score(heads) - log Z`` under the first-order distribution of ``arc``
    (``-inf`` for a tree using an absent arc, or a non-projective tree with ``projective``)."""
    clean, mask = _checked(arc)
    score = _tree_score(check_heads(heads, clean.shape[0]), clean, mask, projective)
    return score if score == -np.inf else score - _partition(clean, mask, projective)[0]


def tree_probabilities(heads, arc, projective: bool = False, sib: Optional[np.ndarray] = None
                       ) -> Tuple[np.ndarray, float]:
    """``(P(heads[m] -> m) for m = 1..n, log P(heads))``: ``arc_marginals`` at the tree's arcs
    and ``tree_log_prob``, from one computation of the partition function (what a parser reports
    per word and per tree); ``sib``: sibling factors too (projective only). Raises ``ValueError``
    as ``arc_marginals``."""
    clean, mask = _checked(arc)
    sib = _checked_sib(sib, arc, projective)
    heads = check_heads(heads, clean.shape[0])
    log_z, marg = _partition(clean, mask, projective, sib)
    probs = _marginals(log_z, marg)[heads[1:], np.arange(1, len(heads))]
    score = _tree_score(heads, clean, mask, projective)
    if sib is not None and score != -np.inf:
        score += sib_part(heads, sib)
    return probs, score if score == -np.inf else score - log_z


def _partition(clean, mask, projective: bool, sib: Optional[np.ndarray] = None,
               marginals: bool = True) -> Tuple[float, Optional[np.ndarray]]:
    """``(log Z, marginals)`` of checked scores (``_checked``, ``_checked_sib``); ``(-inf,
    None)`` when no single-root tree avoids the absent arcs; n = 0: ``(0, zeros((1, 1)))``.
    ``marginals`` False: with siblings, zeros instead of the marginals (no outside pass)."""
    if clean.shape[0] == 1:
        return 0.0, np.zeros((1, 1))
    if projective and sib is not None:
        log_z, marg = _inside_sib(clean, sib, marginals)
    elif projective:
        log_z, marg = _inside(clean)
    elif has_single_root_tree(mask):
        log_z, marg = _matrix_tree(clean, mask)
    else:
        return -np.inf, None
    return float(log_z), marg


def _marginals(log_z: float, marg: Optional[np.ndarray]) -> np.ndarray:
    """The marginals of ``_partition``'s result, or ``ValueError`` when there is no tree."""
    if marg is None or not np.isfinite(log_z):
        raise ValueError("no single-root tree avoids the absent (-inf) arcs")
    return marg


def _tree_score(heads: np.ndarray, clean, mask, projective: bool) -> float:
    """The summed scores of the tree's arcs; ``-inf`` for a tree using an absent arc, or a
    non-projective tree with ``projective``."""
    words = np.arange(1, len(heads))
    if not mask[heads[1:], words].all() or (projective and not _is_projective(heads)):
        return -np.inf
    return float(clean[heads[1:], words].sum())


def _checked_sib(sib, arc, projective: bool) -> Optional[np.ndarray]:
    """``sib`` as a checked float64 cube matching ``arc`` (None passes through)."""
    if sib is None:
        return None
    if not projective:
        raise ValueError("sibling factors need projective=True (non-projective sibling marginals are intractable)")
    return check_cube(sib, "sib", np.shape(arc)[0])


def _checked(arc):
    arc = check_arc(arc)
    mask = usable_mask(arc)
    clean = np.where(mask, arc, -np.inf)  # column 0 and the diagonal: never used
    return clean, mask


@njit(cache=True)
def _matrix_tree(arc, mask):
    """(log Z, marginals) by the single-root matrix-tree theorem (module docstring)."""
    size = arc.shape[0]
    n = size - 1
    shift = np.full(size, -np.inf)
    for m in range(1, size):
        for h in range(size):
            if mask[h, m] and arc[h, m] > shift[m]:
                shift[m] = arc[h, m]
    pot = np.zeros((size, size))  # scaled potentials exp(arc - shift)
    for h in range(size):
        for m in range(1, size):
            if mask[h, m]:
                pot[h, m] = np.exp(arc[h, m] - shift[m])
    lap = np.zeros((n, n))  # rows: heads 1..n, columns: modifiers 1..n (0-based)
    for m in range(1, size):
        for h in range(1, size):
            if h != m:
                lap[h - 1, m - 1] = -pot[h, m]
                lap[m - 1, m - 1] += pot[h, m]
    for m in range(1, size):
        lap[0, m - 1] = pot[0, m]
    inv, log_det, sign = _inverse(lap)
    log_z = log_det
    for m in range(1, size):
        log_z += shift[m]
    marg = np.zeros((size, size))
    if sign <= 0.0:
        return -np.inf, marg
    # A marginal is a difference of inverse entries: where the Laplacian is ill-conditioned (scores
    # far apart) rounding can leave it a little outside [0, 1], which no probability is: clipped.
    for m in range(1, size):
        marg[0, m] = min(max(pot[0, m] * inv[m - 1, 0], 0.0), 1.0)
        for h in range(1, size):
            if h == m or pot[h, m] == 0.0:
                continue
            value = 0.0
            if m != 1:
                value += inv[m - 1, m - 1]
            if h != 1:
                value -= inv[m - 1, h - 1]
            marg[h, m] = min(max(pot[h, m] * value, 0.0), 1.0)
    return log_z, marg


@njit(cache=True)
def _inverse(a):
    """(inverse, log |det|, sign of det) by Gauss-Jordan elimination with partial pivoting."""
    n = a.shape[0]
    work = a.copy()
    inv = np.eye(n)
    log_det = 0.0
    sign = 1.0
    for col in range(n):
        piv = col
        for r in range(col + 1, n):
            if abs(work[r, col]) > abs(work[piv, col]):
                piv = r
        if work[piv, col] == 0.0:
            return inv, -np.inf, 0.0
        if piv != col:
            for k in range(n):
                work[col, k], work[piv, k] = work[piv, k], work[col, k]
                inv[col, k], inv[piv, k] = inv[piv, k], inv[col, k]
            sign = -sign
        p = work[col, col]
        if p < 0.0:
            sign = -sign
        log_det += np.log(abs(p))
        for k in range(n):
            work[col, k] /= p
            inv[col, k] /= p
        for r in range(n):
            if r != col and work[r, col] != 0.0:
                f = work[r, col]
                for k in range(n):
                    work[r, k] -= f * work[col, k]
                    inv[r, k] -= f * inv[col, k]
    return inv, log_det, sign


@njit(cache=True)
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(cache=True)
def _inside(arc):
    """(log Z, marginals) over projective single-root trees: inside, then outside (the gradient
    of log Z pushed back through the chart, widest spans first)."""
    size = arc.shape[0]
    n = size - 1
    neg = -np.inf
    cr = np.full((size, size), neg)  # complete span [s, t] headed at s
    cl = np.full((size, size), neg)  # complete span [s, t] headed at t
    ir = np.full((size, size), neg)  # incomplete s -> t
    il = np.full((size, size), neg)  # incomplete t -> s
    split = np.full((size, size), neg)  # logsumexp_u cr[s, u] + cl[u + 1, t]
    for s in range(1, size):
        cr[s, s] = 0.0
        cl[s, s] = 0.0
    for width in range(1, n):
        for s in range(1, size - width):
            t = s + width
            acc = neg
            for u in range(s, t):
                acc = _logaddexp(acc, cr[s, u] + cl[u + 1, t])
            split[s, t] = acc
            ir[s, t] = arc[s, t] + acc
            il[s, t] = arc[t, s] + acc
            acc = neg
            for u in range(s + 1, t + 1):
                acc = _logaddexp(acc, ir[s, u] + cr[u, t])
            cr[s, t] = acc
            acc = neg
            for u in range(s, t):
                acc = _logaddexp(acc, cl[s, u] + il[u, t])
            cl[s, t] = acc
    log_z = _log_root(arc[0], cl, cr)
    marg = np.zeros((size, size))
    if log_z == neg:
        return log_z, marg
    gcr, gcl, gir, gil, _ = _chart(size, 0.0, 0.0)  # each item's share of the trees' mass
    _root_outside(arc[0], cl, cr, log_z, marg, gcl, gcr)
    weights = np.empty((1, 1, 1, 1))  # none kept: the shares are taken from the chart
    for width in range(n - 1, 0, -1):
        for s in range(1, size - width):
            t = s + width
            _complete_outside(s, t, gcr, gcl, gir, gil, ir, il, cr, cl, weights, False, marg)
            _split_outside(gir[s, t] + gil[s, t], s, t, gcr, gcl, cr, cl, split[s, t], weights, False)
    return log_z, marg


@njit(cache=True, inline="always")
def _log_root(root, cl, cr):
    """``log Z`` from the chart: the root takes one child ``m`` (``root[m]``: that arc's score,
    with its sibling factor at second order)."""
    n = root.shape[0] - 1
    log_z = -np.inf
    for m in range(1, n + 1):
        log_z = _logaddexp(log_z, root[m] + cl[1, m] + cr[m, n])
    return log_z


@njit(cache=True, inline="always")
def _root_outside(root, cl, cr, log_z, marg, gcl, gcr):
    """The outside pass's start: each root child's share of the trees' mass (``root`` as in
    ``_log_root``), to the root arc's marginal and the child's two complete spans."""
    n = root.shape[0] - 1
    for m in range(1, n + 1):
        g = _weight(root[m] + cl[1, m] + cr[m, n], log_z)
        marg[0, m] = g
        gcl[1, m] += g
        gcr[m, n] += g


@njit(cache=True, inline="always")
def _complete_outside(s, t, gcr, gcl, gir, gil, ir, il, cr, cl, weights, kept, marg):
    """The complete spans [s, t] pass their mass to their splits (by the split weights
    ``weights[CR]``/``weights[CL]`` where ``kept``, else ``exp(split - cell)`` from the chart);
    then the incomplete spans [s, t] hold their arcs' marginals."""
    g = gcr[s, t]
    if g != 0.0:
        for u in range(s + 1, t + 1):
            p = g * (weights[3, s, t, u - s - 1] if kept else _weight(ir[s, u] + cr[u, t], cr[s, t]))
            gir[s, u] += p
            gcr[u, t] += p
    g = gcl[s, t]
    if g != 0.0:
        for u in range(s, t):
            p = g * (weights[4, s, t, u - s] if kept else _weight(cl[s, u] + il[u, t], cl[s, t]))
            gcl[s, u] += p
            gil[u, t] += p
    marg[s, t] = gir[s, t]
    marg[t, s] = gil[s, t]


@njit(cache=True, inline="always")
def _split_outside(g, s, t, gcr, gcl, cr, cl, total, weights, kept):
    """Mass ``g`` of the adjacent spans [s, t] (``cr[s, u] + cl[u + 1, t]``, log sum ``total``)
    to each split ``u`` (by ``weights[SB]`` where ``kept``, else from the chart)."""
    if g != 0.0:
        for u in range(s, t):
            p = g * (weights[0, s, t, u - s] if kept else _weight(cr[s, u] + cl[u + 1, t], total))
            gcr[s, u] += p
            gcl[u + 1, t] += p


@njit(cache=True)
def _weight(value, total):
    """``exp(value - total)``, 0 for an impossible item."""
    if value == -np.inf or total == -np.inf:
        return 0.0
    return np.exp(value - total)


@njit(cache=True)
def _is_projective(heads):
    size = heads.shape[0]
    for m in range(1, size):
        h = heads[m]
        lo, hi = min(h, m), max(h, m)
        for k in range(lo + 1, hi):
            a = k
            while a != h and a > 0:
                a = heads[a]
            if a != h:
                return False
    return True


@njit(cache=True, inline="always")  # a two-way switch: inlined where a kernel calls it
def _inside_sib(arc, sib, outside):
    """(log Z, marginals) over projective single-root trees with arc and sibling factors
    (``outside`` False: marginals zeros): ``_inside_sib_linear`` where its values stay in range,
    else ``_inside_sib_log``."""
    log_z, marg, ok = _inside_sib_linear(arc, sib, outside)
    if ok:
        return log_z, marg
    return _inside_sib_log(arc, sib, outside)


@njit(cache=True)
def _chart(size, fill, diagonal):
    """The second-order chart's five item arrays ``(cr, cl, ir, il, sb)``, (size, size) each:
    ``fill`` everywhere, ``diagonal`` at the one-word complete items ``cr[s, s]``, ``cl[s, s]``."""
    cr = np.full((size, size), fill)
    cl = np.full((size, size), fill)
    for s in range(1, size):
        cr[s, s] = diagonal
        cl[s, s] = diagonal
    return cr, cl, np.full((size, size), fill), np.full((size, size), fill), np.full((size, size), fill)


@njit(cache=True)
def _sib_factor(value):
    """``exp(value)`` of a sibling factor; 1 for the zeros of a sparse cube without an ``exp``."""
    return 1.0 if value == 0.0 else np.exp(value)


@njit(cache=True)
def _modifier_offsets(arc, sib):
    """Per word ``m`` the largest ``arc[h, m] + sib[h, s, m]`` over its heads and sibling
    positions (``-inf`` where it has no head): every tree takes exactly one such pair per word, so
    shifting each word's factors by it keeps them at most 1 and shifts ``log Z`` by the sum."""
    size = arc.shape[0]
    offsets = np.full(size, -np.inf)
    for m in range(1, size):
        for h in range(size):
            if h == m or arc[h, m] == -np.inf:
                continue
            top = sib[h, h, m]
            lo, hi = (h + 1, m) if h < m else (m + 1, h)
            for s in range(lo, hi):
                top = max(top, sib[h, s, m])
            offsets[m] = max(offsets[m], arc[h, m] + top)
    return offsets


@njit(cache=True)
def _inside_sib_linear(arc, sib, outside):
    """``_inside_sib_log``'s chart in linear space: each word's arc and sibling factors divided by
    ``exp`` of its offset (``_modifier_offsets``), so sums of products replace sums of ``exp``
    (one ``exp`` per arc and per non-zero sibling factor), and the outside pass splits each cell's
    mass by its terms' shares. Returns ``(log Z, marginals, ok)``; not ``ok`` where a value
    leaves the range where this is exact to rounding (a word without a head, ``Z`` under 1e-250
    times its offsets): the caller then takes the log-space kernel."""
    size = arc.shape[0]
    n = size - 1
    marg = np.zeros((size, size))
    offsets = _modifier_offsets(arc, sib)
    for m in range(1, size):
        if offsets[m] == -np.inf:
            return -np.inf, marg, False
    a = np.zeros((size, size))  # exp(arc[h, m] - offsets[m])
    for h in range(size):
        for m in range(1, size):
            if h != m and arc[h, m] != -np.inf:
                a[h, m] = np.exp(arc[h, m] - offsets[m])
    cr, cl, ir, il, sb = _chart(size, 0.0, 1.0)
    for width in range(1, n):
        for s in range(1, size - width):
            t = s + width
            total = 0.0
            for u in range(s, t):
                total += cr[s, u] * cl[u + 1, t]
            sb[s, t] = total
            total = _sib_factor(sib[s, s, t]) * cl[s + 1, t]
            for r in range(s + 1, t):
                total += ir[s, r] * sb[r, t] * _sib_factor(sib[s, r, t])
            ir[s, t] = a[s, t] * total
            total = _sib_factor(sib[t, t, s]) * cr[s, t - 1]
            for r in range(s + 1, t):
                total += sb[s, r] * il[r, t] * _sib_factor(sib[t, r, s])
            il[s, t] = a[t, s] * total
            total = 0.0
            for u in range(s + 1, t + 1):
                total += ir[s, u] * cr[u, t]
            cr[s, t] = total
            total = 0.0
            for u in range(s, t):
                total += cl[s, u] * il[u, t]
            cl[s, t] = total
    z = 0.0
    for m in range(1, size):
        z += a[0, m] * _sib_factor(sib[0, 0, m]) * cl[1, m] * cr[m, n]
    if not (z > 1e-250 and z < 1e300):
        return -np.inf, marg, False
    log_z = np.log(z)
    for m in range(1, size):
        log_z += offsets[m]
    if not outside:
        return log_z, marg, True
    gcr, gcl, gir, gil, gsb = _chart(size, 0.0, 0.0)  # each item's share of the trees' mass
    for m in range(1, size):
        g = a[0, m] * _sib_factor(sib[0, 0, m]) * cl[1, m] * cr[m, n] / z
        marg[0, m] = g
        gcl[1, m] += g
        gcr[m, n] += g
    for width in range(n - 1, 0, -1):
        for s in range(1, size - width):
            t = s + width
            if gcr[s, t] != 0.0 and cr[s, t] > 0.0:
                share = gcr[s, t] / cr[s, t]
                for u in range(s + 1, t + 1):
                    p = share * ir[s, u] * cr[u, t]
                    gir[s, u] += p
                    gcr[u, t] += p
            if gcl[s, t] != 0.0 and cl[s, t] > 0.0:
                share = gcl[s, t] / cl[s, t]
                for u in range(s, t):
                    p = share * cl[s, u] * il[u, t]
                    gcl[s, u] += p
                    gil[u, t] += p
            marg[s, t] = gir[s, t]
            marg[t, s] = gil[s, t]
            if gir[s, t] != 0.0 and ir[s, t] > 0.0:
                share = gir[s, t] / ir[s, t] * a[s, t]
                gcl[s + 1, t] += share * _sib_factor(sib[s, s, t]) * cl[s + 1, t]
                for r in range(s + 1, t):
                    p = share * ir[s, r] * sb[r, t] * _sib_factor(sib[s, r, t])
                    gir[s, r] += p
                    gsb[r, t] += p
            if gil[s, t] != 0.0 and il[s, t] > 0.0:
                share = gil[s, t] / il[s, t] * a[t, s]
                gcr[s, t - 1] += share * _sib_factor(sib[t, t, s]) * cr[s, t - 1]
                for r in range(s + 1, t):
                    p = share * sb[s, r] * il[r, t] * _sib_factor(sib[t, r, s])
                    gsb[s, r] += p
                    gil[r, t] += p
            if gsb[s, t] != 0.0 and sb[s, t] > 0.0:
                share = gsb[s, t] / sb[s, t]
                for u in range(s, t):
                    p = share * cr[s, u] * cl[u + 1, t]
                    gcr[s, u] += p
                    gcl[u + 1, t] += p
    return log_z, marg, True


@njit(cache=True)
def _inside_sib_log(arc, sib, outside):
    """(log Z, marginals) over projective single-root trees with arc and sibling factors: inside
    over the second-order chart (``eisner.py``'s ``eisner2_kernel`` with logsumexp for max), then
    (``outside``; else the marginals are zeros) outside, widest spans first; within a span complete
    items first, then incomplete, then ``sb`` (each feeds only the later ones or narrower spans).
    With ``outside`` the inside keeps each cell's split weights (``P(split | cell)``, in the order
    of its terms), so the outside pass multiplies instead of taking exponentials again."""
    size = arc.shape[0]
    n = size - 1
    neg = -np.inf
    cr, cl, ir, il, sb = _chart(size, neg, 0.0)
    kept = size if outside else 1  # split weights per cell: [kind, s, t, split]
    w = np.empty((5, kept, kept, kept))  # only the cells' first k entries are written and read
    SB, IR, IL, CR, CL = 0, 1, 2, 3, 4
    terms = np.empty(size + 1)  # one cell's terms, summed by _log_sum (one exp each)
    for width in range(1, n):
        for s in range(1, size - width):
            t = s + width
            k = 0
            for u in range(s, t):
                terms[k] = cr[s, u] + cl[u + 1, t]
                k += 1
            sb[s, t] = _log_sum(terms, k, w[SB, s, t] if outside else terms, outside)
            terms[0] = sib[s, s, t] + cl[s + 1, t]
            k = 1
            for r in range(s + 1, t):
                terms[k] = ir[s, r] + sb[r, t] + sib[s, r, t]
                k += 1
            ir[s, t] = arc[s, t] + _log_sum(terms, k, w[IR, s, t] if outside else terms, outside)
            terms[0] = sib[t, t, s] + cr[s, t - 1]
            k = 1
            for r in range(s + 1, t):
                terms[k] = sb[s, r] + il[r, t] + sib[t, r, s]
                k += 1
            il[s, t] = arc[t, s] + _log_sum(terms, k, w[IL, s, t] if outside else terms, outside)
            k = 0
            for u in range(s + 1, t + 1):
                terms[k] = ir[s, u] + cr[u, t]
                k += 1
            cr[s, t] = _log_sum(terms, k, w[CR, s, t] if outside else terms, outside)
            k = 0
            for u in range(s, t):
                terms[k] = cl[s, u] + il[u, t]
                k += 1
            cl[s, t] = _log_sum(terms, k, w[CL, s, t] if outside else terms, outside)
    root = arc[0] + sib[0, 0]
    log_z = _log_root(root, cl, cr)
    marg = np.zeros((size, size))
    if log_z == neg or not outside:
        return log_z, marg
    gcr, gcl, gir, gil, gsb = _chart(size, 0.0, 0.0)  # each item's share of the trees' mass
    _root_outside(root, cl, cr, log_z, marg, gcl, gcr)
    for width in range(n - 1, 0, -1):
        for s in range(1, size - width):
            t = s + width
            _complete_outside(s, t, gcr, gcl, gir, gil, ir, il, cr, cl, w, True, marg)
            g = gir[s, t]
            if g != 0.0:
                gcl[s + 1, t] += g * w[IR, s, t, 0]
                for r in range(s + 1, t):
                    p = g * w[IR, s, t, r - s]
                    gir[s, r] += p
                    gsb[r, t] += p
            g = gil[s, t]
            if g != 0.0:
                gcr[s, t - 1] += g * w[IL, s, t, 0]
                for r in range(s + 1, t):
                    p = g * w[IL, s, t, r - s]
                    gsb[s, r] += p
                    gil[r, t] += p
            _split_outside(gsb[s, t], s, t, gcr, gcl, cr, cl, 0.0, w, True)
    return log_z, marg


@njit(cache=True)
def _log_sum(terms, k, weights, keep):
    """``log(sum(exp(terms[:k])))``, shifted by the largest term (``-inf`` when all are); with
    ``keep``, each term's share ``exp(terms[j] - result)`` in ``weights[:k]`` (0 when all are
    ``-inf``)."""
    top = -np.inf
    for i in range(k):
        if terms[i] > top:
            top = terms[i]
    if top == -np.inf:
        if keep:
            weights[:k] = 0.0
        return top
    acc = 0.0
    if not keep:
        for i in range(k):
            acc += np.exp(terms[i] - top)
        return top + np.log(acc)
    for i in range(k):
        weights[i] = np.exp(terms[i] - top)
        acc += weights[i]
    for i in range(k):
        weights[i] /= acc
    return top + np.log(acc)
