"""Search over arc-standard moves: greedy or beam search with hashed linear weights (numba), and
a batched greedy loop for scorers outside numba (the neural model's step scorer).

Hashed search: spans are laid out as everywhere in the perceptron (``transition.perceptron``):
``attrs`` rows one span after another (row 0 of each the root), delimited by ``offsets``. Results
go to ``out_heads`` (span convention, ``-1`` at the root row) and ``out_labels`` (label id per
row, ``-1`` at the root). ``space`` (bool per row, like ``attrs``) marks whitespace words, which
the moves keep leaves (``state.mark_whitespace``).

Only valid moves are taken, so every span ends as a single-rooted tree. ``n_labels`` may be less
than the model's labels: the search then keeps to the first ``n_labels`` labels, whose classes
(``transition.moves``) are the first ``n_classes(n_labels)`` whatever labels follow. The hashed
searches take the weights' class layout last (``transition.moves``; ``LAYOUT`` where left out).
"""
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from ..compiling import njit
from .hashed_scoring import beam_buffers, best_allowed, best_candidates, move_buffers, score
from .moves import LAYOUT, apply, n_classes, valid_mask
from .state import HEAD, LABEL, N_ROWS, NONE, heads_of, initial_state, is_final, labels_of, mark_whitespace
from .templates import N_SLOTS, fill_context, hash_features, slot_words


@njit(cache=True)
def _write(st, lo, hi, out_heads, out_labels):
    n = hi - lo - 1
    out_heads[lo] = -1
    out_labels[lo] = -1
    for m in range(1, n + 1):
        out_heads[lo + m] = st[HEAD, m]
        out_labels[lo + m] = st[LABEL, m]


@njit(cache=True)
def greedy_parse(attrs, space, offsets, W, templates, mask, n_labels, root_label, out_heads, out_labels, layout=LAYOUT):
    ctx, feats, scores, valid = move_buffers(templates, n_labels)
    n_cls = scores.shape[0]
    for s in range(len(offsets) - 1):
        lo, hi = offsets[s], offsets[s + 1]
        span_attrs = attrs[lo:hi]
        st = initial_state(hi - lo - 1)
        mark_whitespace(st, space[lo + 1 : hi])
        while not is_final(st):
            fill_context(st, span_attrs, ctx)
            hash_features(ctx, templates, mask, feats)
            score(W, feats, n_cls, scores)
            valid_mask(st, n_labels, root_label, valid, layout)
            apply(st, best_allowed(scores, valid), n_labels, layout)
        _write(st, lo, hi, out_heads, out_labels)


@njit(cache=True)
def beam_parse(attrs, space, offsets, W, templates, mask, n_labels, root_label, width, out_heads, out_labels,
               layout=LAYOUT):
    """Beam search keeping the ``width`` best configurations by summed move scores. All
    configurations of a span finish after the same 2n moves, so their totals compare fairly."""
    ctx, feats, scores, valid = move_buffers(templates, n_labels)
    top_s, top_k, top_c = beam_buffers(width)
    for s in range(len(offsets) - 1):
        lo, hi = offsets[s], offsets[s + 1]
        n = hi - lo - 1
        span_attrs = attrs[lo:hi]
        first = initial_state(n)
        mark_whitespace(first, space[lo + 1 : hi])
        beam = np.empty((width, first.shape[0], first.shape[1]), dtype=np.int32)
        new_beam = np.empty_like(beam)
        beam[0] = first
        totals = np.zeros(width, dtype=np.float64)
        size = 1
        for _ in range(2 * n):
            size = best_candidates(
                beam, size, totals, span_attrs, W, templates, mask, n_labels, root_label,
                ctx, feats, scores, valid, top_s, top_k, top_c, layout,
            )
            for r in range(size):
                new_beam[r] = beam[top_k[r]]
                apply(new_beam[r], top_c[r], n_labels, layout)
            totals[:size] = top_s[:size]
            beam, new_beam = new_beam, beam
        _write(beam[0], lo, hi, out_heads, out_labels)


# ----- batched greedy steps, for scorers outside numba (the neural option) ---------------------
def greedy_batch(
    score_rows: Callable[[np.ndarray], np.ndarray],
    firsts: Sequence[int],
    null: int,
    sizes: Sequence[int],
    n_labels: int,
    root_label: int,
    spaces: Optional[Sequence[np.ndarray]] = None,
) -> List[Tuple[np.ndarray, np.ndarray]]:
    """Greedy parses of spans of ``sizes`` words, all configurations advanced together;
    ``spaces``: per span its whitespace words ((n,) bool, see ``state.mark_whitespace``), if any.

    ``score_rows(rows)`` maps ``(k, N_SLOTS)`` slot rows (word ``m`` of span ``i`` at row
    ``firsts[i] + m``, empty slots and the root at ``null``) to ``(k, n_classes)`` move scores.
    Returns per span its heads ``(n+1,)`` (``heads[0] == -1``) and label ids ``(n,)``."""
    states = initial_states(np.array(sizes, dtype=np.int64))
    for st, space in zip(states, spaces or ()):
        mark_whitespace(st, space)
    firsts = np.array(firsts, dtype=np.int64)
    active = np.array([i for i, n in enumerate(sizes) if n > 0], dtype=np.int64)
    rows = np.empty((len(active), N_SLOTS), dtype=np.int64)
    masks = np.empty((len(active), n_classes(n_labels)), dtype=np.bool_)
    k = len(active)
    while k:
        step_inputs(states, active[:k], firsts, null, n_labels, root_label, rows, masks)
        k = apply_best(states, active[:k], score_rows(rows[:k]), masks, n_labels)
    return [(heads_of(st), labels_of(st)) for st in states]


@njit(cache=True)
def initial_states(sizes: np.ndarray) -> np.ndarray:
    """The start configurations of spans of ``sizes`` words, stacked ``(len(sizes), N_ROWS,
    width)``; columns past a span's own width are padding that no move reads."""
    width = 3
    for n in sizes:
        width = max(width, n + 2)
    out = np.full((len(sizes), N_ROWS, width), NONE, dtype=np.int32)
    for i in range(len(sizes)):
        st = initial_state(sizes[i])
        out[i, :, : st.shape[1]] = st
    return out


@njit(cache=True)
def step_inputs(states, active, firsts, null, n_labels, root_label, rows, masks) -> None:
    """For the configurations ``states[active]``: their slot words as table rows (word ``m`` of
    span ``i`` at ``firsts[i] + m``, empty slots and the root at ``null``) into ``rows`` and
    their valid classes into ``masks``."""
    slots = np.empty(N_SLOTS, dtype=np.int64)
    for r in range(len(active)):
        i = active[r]
        slot_words(states[i], slots)
        for k in range(N_SLOTS):
            rows[r, k] = firsts[i] + slots[k] if slots[k] > 0 else null
        valid_mask(states[i], n_labels, root_label, masks[r])


@njit(cache=True)
def apply_best(states, active, scores, masks, n_labels) -> int:
    """Apply each of ``states[active]``'s best valid class and keep in ``active[:k]`` the
    configurations not final yet; returns ``k``."""
    kept = 0
    for r in range(len(active)):
        i = active[r]
        apply(states[i], best_allowed(scores[r], masks[r]), n_labels)
        if not is_final(states[i]):
            active[kept] = i
            kept += 1
    return kept
