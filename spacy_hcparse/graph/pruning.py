"""First-order pruning and the higher-order factors it allows: the graph parser's search space.

Each word keeps its ``top_k`` best heads by first-order score, the root always among them, and
the kept arcs always hold a projective tree with one root child, so that every decoder's tree is
one of kept arcs (finite scores, k-best lists of k trees): where ``top_k`` alone leaves none, the
best such tree by first-order score, using as few other arcs as it can, is kept as well. The
sibling and grandparent scorers then score only the triples of kept arcs. Conventions as in
``spacy_hcparse.decoders``: ``mask[h, m]``, index 0 the root; triples ``(h, s, m)`` with
``s == h`` for the closest modifier, and ``(g, h, m)``.
"""
from typing import List, NamedTuple, Optional, Sequence

import numpy as np

from ..compiling import njit
from ..decoders.batch import cut
from ..decoders.eisner import eisner_kernel


@njit(cache=True)
def _fill_top_heads(arc, top_k, mask):
    size = arc.shape[0]
    k = min(top_k, size - 1)
    heads = np.empty(max(k, 1), dtype=np.int64)
    values = np.empty(max(k, 1))
    for m in range(1, size):
        # The k first heads of a stable descending argsort of the column (``m`` itself at
        # ``-inf``, NaN last, ties to the lower index): one pass over the heads keeping the k
        # best so far in that order (no sort to compile).
        count = 0
        for h in range(size if k > 0 else 0):
            value = -np.inf if h == m else float(arc[h, m])
            if count == k and not _ranks_before(value, values[k - 1]):
                continue
            at = min(count, k - 1)  # the k-th, if taken, drops out
            while at > 0 and _ranks_before(value, values[at - 1]):
                heads[at], values[at] = heads[at - 1], values[at - 1]
                at -= 1
            heads[at], values[at] = h, value
            count = min(count + 1, k)
        for i in range(count):
            mask[heads[i], m] = True
        mask[0, m] = True
        mask[m, m] = False


@njit(cache=True, inline="always")
def _ranks_before(value, other):
    """Whether a head scored ``value`` ranks strictly before one scored ``other`` (NaN last)."""
    if np.isnan(other):
        return not np.isnan(value)
    return value > other


@njit(cache=True)
def keep_a_tree(arc, mask):
    """Make ``mask`` (bool (n+1, n+1), changed in place) hold a projective tree with one root
    child: if none of its arcs alone forms one (``holds_projective_tree``), add the arcs of the
    best such tree by ``arc`` (finite first-order scores, any float dtype) among the trees with
    the fewest arcs outside ``mask``. Returns whether arcs were added.

    That tree is Eisner's first-order best over the scores with every arc outside ``mask`` at one
    floor low enough that each such arc costs more than any difference among kept arcs (as
    ``decoders.absent.absent_floor``).
    """
    size = mask.shape[0]
    if holds_projective_tree(mask):
        return False
    lo, hi = np.inf, -np.inf
    for h in range(size):
        for m in range(1, size):
            if h != m and mask[h, m]:
                lo = min(lo, float(arc[h, m]))
                hi = max(hi, float(arc[h, m]))
    floor = lo - 2.0 * (size - 1) * (hi - lo) - 1.0 if lo <= hi else -1.0
    scores = np.empty((size, size), dtype=np.float64)
    for h in range(size):
        for m in range(size):
            scores[h, m] = arc[h, m] if mask[h, m] else floor
    heads = eisner_kernel(scores)
    for m in range(1, size):
        mask[heads[m], m] = True
    return True


@njit(cache=True)
def holds_projective_tree(mask):
    """Whether some projective tree with one root child uses only arcs of ``mask`` (bool
    (n+1, n+1), ``mask[h, m]``): Eisner's chart over booleans, each cell true when some split
    makes it; a cell whose arc is not in the mask is false without a split, and a complete
    cell tries only the mask's arcs as its last arc, so a sparse mask costs far less than the
    O(n^3) of a full one."""
    size = mask.shape[0]
    n = size - 1
    if n <= 1:
        return n == 0 or mask[0, 1]
    cr = np.zeros((size, size), dtype=np.bool_)  # complete, headed s, covering s..t
    cl = np.zeros((size, size), dtype=np.bool_)  # complete, headed t
    ir = np.zeros((size, size), dtype=np.bool_)  # incomplete s -> t
    il = np.zeros((size, size), dtype=np.bool_)  # incomplete t -> s
    # each word's candidate modifiers in index order, right of it (rights[h, :n_rights[h]])
    # and left of it (lefts[h, :n_lefts[h]])
    rights, lefts = np.empty((size, size), dtype=np.int64), np.empty((size, size), dtype=np.int64)
    n_rights, n_lefts = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
    for h in range(1, size):
        for m in range(1, size):
            if mask[h, m] and m > h:
                rights[h, n_rights[h]] = m
                n_rights[h] += 1
            elif mask[h, m] and m < h:
                lefts[h, n_lefts[h]] = m
                n_lefts[h] += 1
    for s in range(1, size):
        cr[s, s] = cl[s, s] = True
    for width in range(1, n):
        for s in range(1, size - width):
            t = s + width
            if mask[s, t] or mask[t, s]:
                split = False
                for u in range(s, t):
                    if cr[s, u] and cl[u + 1, t]:
                        split = True
                        break
                ir[s, t] = split and mask[s, t]
                il[s, t] = split and mask[t, s]
            for i in range(n_rights[s]):  # s -> r the last arc, r in s+1..t
                r = rights[s, i]
                if r > t:
                    break
                if ir[s, r] and cr[r, t]:
                    cr[s, t] = True
                    break
            for i in range(n_lefts[t]):  # t -> r the last arc, r in s..t-1
                r = lefts[t, i]
                if r >= s and cl[s, r] and il[r, t]:
                    cl[s, t] = True
                    break
    for m in range(1, size):
        if mask[0, m] and cl[1, m] and cr[m, n]:
            return True
    return False


@njit(cache=True, inline="always")
def _fill_triples(mask, out, sibling):
    return _fill_sibling(mask, out) if sibling else _fill_grandparent(mask, out)


@njit(cache=True)
def _fill_sibling(mask, out):
    """Writes the sibling triples ``(h, s, m)`` of ``mask`` into ``out`` (``m`` a candidate
    modifier of ``h``; ``s == h`` for the closest, else ``s`` a candidate modifier of ``h``
    strictly between them); returns their count. An empty ``out`` only counts them."""
    size = mask.shape[0]
    counting = out.shape[0] == 0
    mods = np.empty(size, dtype=np.int64)
    k = 0
    for h in range(size):
        for step in (1, -1):
            count = 0
            m = h + step
            while 0 < m < size:
                if mask[h, m]:
                    if counting:
                        k += count + 1
                    else:
                        k = _put(out, k, h, h, m)
                        for i in range(count):  # h itself above, then every closer candidate
                            k = _put(out, k, h, mods[i], m)
                    mods[count] = m
                    count += 1
                m += step
    return k


@njit(cache=True)
def _fill_grandparent(mask, out):
    """As ``_fill_sibling``, for the grandparent triples ``(g, h, m)``: ``g -> h`` and ``h -> m``
    candidates, ``g != m``."""
    size = mask.shape[0]
    counting = out.shape[0] == 0
    # the candidate heads of each word h, in index order: heads[starts[h]:starts[h + 1]]
    starts = np.zeros(size + 1, dtype=np.int64)
    heads = np.empty(size * size, dtype=np.int64)
    for h in range(size):
        at = starts[h]
        for g in range(size):
            if mask[g, h]:
                heads[at] = g
                at += 1
        starts[h + 1] = at
    k = 0
    for m in range(1, size):
        for h in range(1, size):
            if mask[h, m]:
                if counting:
                    k += starts[h + 1] - starts[h] - (1 if mask[m, h] else 0)
                    continue
                for i in range(starts[h], starts[h + 1]):
                    if heads[i] != m:
                        k = _put(out, k, heads[i], h, m)
    return k


@njit(cache=True, inline="always")
def _put(out, k, a, b, c):
    """Row ``k`` of ``out`` is ``(a, b, c)`` where ``out`` has it; returns ``k + 1``."""
    if k < out.shape[0]:
        out[k, 0], out[k, 1], out[k, 2] = a, b, c
    return k + 1


# ----- a whole batch in a few compiled calls ---------------------------------------------------
class Pruned(NamedTuple):
    """A batch's pruning (``prune_batch``): per span its candidate heads' mask and its sibling and
    grandparent triples (``_fill_sibling``, ``_fill_grandparent``; ``NO_TRIPLES`` where that type
    is not scored), views into one array each."""

    masks: List[np.ndarray]
    sib: List[np.ndarray]
    grand: List[np.ndarray]


NO_TRIPLES = np.zeros((0, 3), dtype=np.int32)


def prune_batch(arcs: Sequence[np.ndarray], top_k: int, keep: Sequence[Optional[np.ndarray]],
                sib: Sequence[bool], grand: Sequence[bool]) -> Pruned:
    """Every span's candidate heads (square arc scores on the host, ranked in their own precision:
    float32 to float64 keeps every order; ties at the k-th score keep the lower head), with the
    arcs of ``keep[i]`` (a heads array, ``-1`` where unknown: gold arcs stay scorable in training)
    and a kept tree where needed, and its sibling and grandparent triples where ``sib[i]`` /
    ``grand[i]``, in three compiled calls."""
    sizes = np.array([len(a) for a in arcs], dtype=np.int64)
    if len(keep) != len(sizes) or any(k is not None and len(k) != size for k, size in zip(keep, sizes)):
        raise ValueError(f"prune_batch: {len(keep)} heads arrays to keep for {len(sizes)} spans, each as long as its "
                         f"span's arc scores (n+1) or None")
    flat = np.concatenate([np.ravel(a) for a in arcs] + [np.zeros(0, np.float32)])  # float32 stays float32
    keep_flat = np.concatenate([np.full(size, -1, np.int64) if k is None else np.asarray(k, np.int64)
                                for k, size in zip(keep, sizes)] + [np.zeros(0, np.int64)])
    masks_flat = np.zeros(int((sizes * sizes).sum()), dtype=np.bool_)
    treeless = np.zeros(len(sizes), dtype=np.bool_)
    _top_heads_batch(flat, sizes, int(top_k), keep_flat, masks_flat, treeless)
    if treeless.any():  # compiled only where a batch needs it: the first-order Eisner kernel
        _keep_trees_batch(flat, sizes, np.flatnonzero(treeless), masks_flat)
    masks = [square.reshape(size, size) for square, size in zip(cut(masks_flat, sizes * sizes), sizes)]
    return Pruned(masks, _triples_batch(masks_flat, sizes, np.asarray(sib, np.bool_), True),
                  _triples_batch(masks_flat, sizes, np.asarray(grand, np.bool_), False))


@njit(cache=True)
def _top_heads_batch(arcs, sizes, top_k, keep, masks, treeless):
    """Each span's top heads and kept arcs in ``masks``; ``treeless[i]`` where they hold no
    projective tree (``_keep_trees_batch`` adds one)."""
    square = row = 0
    for i in range(sizes.shape[0]):
        size = sizes[i]
        mask = masks[square: square + size * size].reshape((size, size))
        _fill_top_heads(arcs[square: square + size * size].reshape((size, size)), top_k, mask)
        for m in range(1, size):
            if keep[row + m] >= 0:
                mask[keep[row + m], m] = True
        treeless[i] = not holds_projective_tree(mask)
        square += size * size
        row += size


@njit(cache=True)
def _keep_trees_batch(arcs, sizes, spans, masks):
    """``keep_a_tree`` on the masks of ``spans``."""
    starts = np.zeros(sizes.shape[0], np.int64)
    for i in range(1, sizes.shape[0]):
        starts[i] = starts[i - 1] + sizes[i - 1] * sizes[i - 1]
    for i in spans:
        size = sizes[i]
        square = starts[i]
        keep_a_tree(arcs[square: square + size * size].reshape((size, size)),
                    masks[square: square + size * size].reshape((size, size)))


def _triples_batch(masks_flat: np.ndarray, sizes: np.ndarray, scored: np.ndarray, sibling: bool) -> List[np.ndarray]:
    """Per span its sibling (or grandparent) triples where ``scored``, else none."""
    if not scored.any():
        return [NO_TRIPLES] * len(sizes)
    counts = np.zeros(len(sizes), dtype=np.int64)
    _batch_triples(masks_flat, sizes, scored, sibling, counts, NO_TRIPLES)
    out = np.empty((int(counts.sum()), 3), dtype=np.int32)
    _batch_triples(masks_flat, sizes, scored, sibling, counts, out)
    return cut(out, counts)


@njit(cache=True)
def _batch_triples(masks, sizes, scored, sibling, counts, out):
    """Each scored span's triples into ``out`` end to end, or with an empty ``out`` only their
    ``counts``."""
    square = at = 0
    for i in range(sizes.shape[0]):
        size = sizes[i]
        if scored[i]:
            mask = masks[square: square + size * size].reshape((size, size))
            part = out[at: at + counts[i]]
            counts[i] = _fill_triples(mask, part, sibling)
            at += counts[i]
        square += size * size
