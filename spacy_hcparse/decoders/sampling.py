"""Random single-root trees for starting local search: uniform, and weighted by first-order scores.

Conventions: index 0 is the artificial root, words are ``1..n``; ``arc[h, m]`` scores head ``h`` ->
modifier ``m``; a tree is an int64 ``heads`` array of shape (n+1,) with ``heads[0] == -1`` and
exactly one word attached to 0.

Both samplers use Wilson's algorithm (loop-erased random walks) over the words, rooted at the one
word attached to 0:

* uniform: the root child ``r`` is uniform over ``1..n``, then the words form a uniform spanning
  arborescence rooted at ``r``. Every ``r`` has the same number of such arborescences (``n^(n-2)``),
  so the result is exactly uniform over single-root trees.
* weighted: ``r`` is drawn with probability ``softmax(arc[0, :] / T)``, then the arborescence rooted
  at ``r`` is drawn with probability proportional to ``prod exp(arc[h, m] / T)`` (exact, by
  Wilson's algorithm with per-word head distributions ``softmax(arc[:, m] / T)`` over words). This
  is the first-order distribution *conditioned* on the root child, with the root child drawn from
  its own arc scores (not from its exact marginal). A walk that runs longer than ``10 * n * n``
  steps in total (scores favouring a cycle strongly) finishes with uniform steps, so sampling time
  stays bounded; the distribution is then no longer exact.

The ``@njit`` kernels use numba's own generator, which the callers seed inside compiled code
(``hill_climb``, ``batch_search``).
"""
import numpy as np

from ..compiling import njit


def _probe():
    return 0


def _no_refcount_options() -> dict:
    """``{"_nrt": False}`` (compile without numba reference counting: faster calls to small
    kernels with array arguments) when this numba accepts that internal, undocumented option,
    else ``{}`` (correct, slower). Used by the kernels here and in ``hill_climb.py``."""
    try:
        njit(cache=True, _nrt=False)(_probe)()
        return {"_nrt": False}
    except Exception:  # the option was renamed or removed
        return {}


NO_REFCOUNT = _no_refcount_options()


@njit(cache=True)
def head_tables(arc, temperature):
    """Cumulative head distributions: ``head_cdf[m, h]`` over words ``h`` (``h != m``) and
    ``root_cdf[r]`` over root children, both from ``exp(score / temperature)``."""
    size = arc.shape[0]
    head_cdf = np.zeros((size, size))
    root_cdf = np.zeros(size)
    for m in range(1, size):
        top = -np.inf
        for h in range(1, size):
            if h != m and arc[h, m] > top:
                top = arc[h, m]
        total = 0.0
        for h in range(1, size):
            if h != m:
                total += np.exp((arc[h, m] - top) / temperature)
            head_cdf[m, h] = total
        if total > 0:
            for h in range(1, size):
                head_cdf[m, h] /= total
            last = size - 1 if m != size - 1 else size - 2
            head_cdf[m, last:] = 1.0  # no rounding gap at the top
    top = -np.inf
    for r in range(1, size):
        if arc[0, r] > top:
            top = arc[0, r]
    total = 0.0
    for r in range(1, size):
        total += np.exp((arc[0, r] - top) / temperature)
        root_cdf[r] = total
    for r in range(1, size):
        root_cdf[r] /= total
    root_cdf[size - 1] = 1.0
    return head_cdf, root_cdf


@njit(cache=True, **NO_REFCOUNT)
def _draw(cdf_row):
    """Index ``i >= 1`` with ``cdf_row[i - 1] <= u < cdf_row[i]`` (binary search)."""
    u = np.random.random()
    lo, hi = 1, cdf_row.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cdf_row[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, **NO_REFCOUNT)
def _other_word(n, u):
    """A uniform word in ``1..n`` other than ``u`` (needs ``n >= 2``)."""
    v = np.random.randint(1, n)
    return v + 1 if v >= u else v


@njit(cache=True, **NO_REFCOUNT)
def uniform_tree(heads, in_tree, nxt):
    """Fill ``heads`` (size n+1) with a uniform single-root tree (``in_tree``, ``nxt``: scratch)."""
    n = heads.shape[0] - 1
    heads[0] = -1
    if n == 0:
        return
    r = np.random.randint(1, n + 1)
    in_tree[:] = False
    in_tree[r] = True
    heads[r] = 0
    for start in range(1, n + 1):
        u = start
        while not in_tree[u]:
            nxt[u] = _other_word(n, u)
            u = nxt[u]
        _commit_walk(start, heads, in_tree, nxt)


@njit(cache=True, **NO_REFCOUNT)
def weighted_tree(heads, in_tree, nxt, head_cdf, root_cdf):
    """Fill ``heads`` with a tree drawn from the tables of ``head_tables`` (see module doc)."""
    n = heads.shape[0] - 1
    heads[0] = -1
    if n == 0:
        return
    r = _draw(root_cdf)
    in_tree[:] = False
    in_tree[r] = True
    heads[r] = 0
    budget = 10 * n * n
    for start in range(1, n + 1):
        u = start
        while not in_tree[u]:
            if budget > 0:
                nxt[u] = _draw(head_cdf[u])
                budget -= 1
            else:
                nxt[u] = _other_word(n, u)
            u = nxt[u]
        _commit_walk(start, heads, in_tree, nxt)


@njit(cache=True, **NO_REFCOUNT)
def is_below(heads, v, m):
    """Whether ``v`` lies in the subtree of ``m`` (``v == m`` included; ``heads`` a tree)."""
    while v > 0:
        if v == m:
            return True
        v = heads[v]
    return False


@njit(cache=True, **NO_REFCOUNT)
def _commit_walk(start, heads, in_tree, nxt):
    """Add the loop-erased walk from ``start`` (the last ``nxt`` pointers) to the tree."""
    u = start
    while not in_tree[u]:
        heads[u] = nxt[u]
        in_tree[u] = True
        u = nxt[u]
