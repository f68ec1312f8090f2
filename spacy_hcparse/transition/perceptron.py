"""Averaged perceptron training of the hashed transition parser, online, with the static oracle
(or error exploration with the dynamic oracle, or beam search with early update).

Weights are one flat array: a feature with bucket ``b`` holds the weights of classes
``0..n_classes-1`` at ``W[b : b + n_classes]`` (so ``len(W) == n_buckets + n_classes``); the
kernels that score them are ``transition.hashed_scoring``'s, the ones the parser predicts with.

Update (ultraconservative, Crammer & Singer 2003): in each configuration, ``Psi`` is the set of
valid classes other than the gold one that score at least as high as gold. If it is not empty,
the features are added to the gold class's weights and ``1/|Psi|`` of them subtracted from each
class in ``Psi``; the parser then follows the gold move (static oracle).

Partial gold (heads or labels ``-1``: heads the reference leaves missing, tokens that do not align
with it, arcs that leave a chunk of a long sentence) cannot be walked by the static oracle; such spans are trained with
the dynamic oracle from their first move on (``transition.dynamic_oracle``): every move that keeps
the known arcs reachable is correct, so nothing is learned about the unknown ones.

Averaging is lazy (Daume 2006): with ``c`` counting configurations, an update ``d`` at time ``c``
also adds ``c * d`` to ``U``; the average of all weight vectors seen so far is ``W - U / c``.

``AveragedPerceptron`` holds that training state (never serialized); ``average()`` gives the
weights a model keeps (``transition.transition_model.set_perceptron_weights`` writes them into it).
"""
import numpy as np

from ..compiling import njit
from .dynamic_oracle import optimal_classes, zero_cost_path
from .hashed_scoring import beam_buffers, best_allowed, best_candidates, move_buffers, score
from .moves import LAYOUT, apply, valid_mask
from .oracle import gold_child_counts, oracle_class, oracle_sequence
from .state import initial_state, is_final
from .templates import fill_context, hash_features


@njit(cache=True)
def _update(W, U, c, feats, target, scores, rivals, n_cls) -> bool:
    """Ultraconservative update in one configuration toward class ``target``, against ``Psi``:
    the ``rivals`` (valid classes that are not correct) scoring at least as high as ``target``.
    True if ``Psi`` was not empty."""
    size = 0
    for k in range(n_cls):
        if rivals[k] and scores[k] >= scores[target]:
            size += 1
    if size == 0:
        return False
    share = 1.0 / size
    for f in range(feats.shape[0]):
        b = feats[f]
        W[b + target] += 1.0
        U[b + target] += c
        for k in range(n_cls):
            if rivals[k] and scores[k] >= scores[target]:
                W[b + k] -= share
                U[b + k] -= c * share
    return True


@njit(cache=True)
def train_spans(
    attrs, offsets, gold_heads, gold_labels, W, U, counter, templates, mask, n_labels, root_label, explore, max_length,
    layout=LAYOUT,
):
    """One online pass over the spans in order; returns the number of mistakes. Classes are in
    layout ``layout`` (``transition.moves``), the weights' own.

    ``attrs``/``gold_heads``/``gold_labels`` hold the spans one after another, ``n + 1`` rows
    each (row 0 the root), delimited by ``offsets``; ``counter[0]`` is the averaging clock.
    In each configuration the update goes toward the best-scoring correct class; the parser then
    follows that class, or with probability ``explore`` its own wrong prediction (error
    exploration, Goldberg & Nivre 2012; ``explore = 0`` is plain static-oracle training). While
    no mistake has been followed the static oracle's move is the one correct class; after one,
    the dynamic oracle's optimal classes are (``transition.dynamic_oracle``). Spans longer than
    ``max_length`` words are not explored (the dynamic oracle is cubic in the configuration's
    size), and spans whose gold tree the static oracle cannot reach end where it fails. Spans with
    partial gold (``is_partial``) follow the dynamic oracle from the start, whatever their
    length. The random draws are seeded from the averaging clock, so a run is reproducible."""
    np.random.seed(np.int64(counter[0]) % 2147483647)
    ctx, feats, scores, valid = move_buffers(templates, n_labels)
    n_cls = scores.shape[0]
    correct = np.empty(n_cls, dtype=np.bool_)
    rivals = np.empty(n_cls, dtype=np.bool_)
    mistakes = 0
    for s in range(len(offsets) - 1):
        lo, hi = offsets[s], offsets[s + 1]
        heads = gold_heads[lo:hi]
        labels = gold_labels[lo + 1 : hi]
        counts = gold_child_counts(heads)
        st = initial_state(hi - lo - 1)
        on_path = not is_partial(heads, labels)
        explore_here = hi - lo - 1 <= max_length
        while not is_final(st):
            valid_mask(st, n_labels, root_label, valid, layout)
            gold = -1
            if on_path:
                gold = oracle_class(st, heads, labels, counts, n_labels, layout)
                if gold < 0 or not valid[gold]:
                    break  # not projective: nothing more to learn here
                correct[:] = False
                correct[gold] = True
            else:
                optimal_classes(st, heads, labels, n_labels, root_label, valid, correct, layout)
            fill_context(st, attrs[lo:hi], ctx)
            hash_features(ctx, templates, mask, feats)
            score(W, feats, n_cls, scores)
            target = best_allowed(scores, correct)
            if target < 0:
                break
            predicted = best_allowed(scores, valid)
            for k in range(n_cls):
                rivals[k] = valid[k] and not correct[k]
            if _update(W, U, counter[0], feats, target, scores, rivals, n_cls):
                mistakes += 1
            counter[0] += 1
            move = target
            if explore_here and not correct[predicted] and explore > 0 and np.random.random() < explore:
                move = predicted
                on_path = False
            apply(st, move, n_labels, layout)
    return mistakes


@njit(cache=True)
def is_partial(gold_heads: np.ndarray, gold_labels: np.ndarray) -> bool:
    """Whether a span's gold leaves some head (after the root row) or label unknown (``-1``)."""
    for m in range(1, len(gold_heads)):
        if gold_heads[m] < 0:
            return True
    for m in range(len(gold_labels)):
        if gold_labels[m] < 0:
            return True
    return False


@njit(cache=True)
def averaged(W: np.ndarray, U: np.ndarray, c: float) -> np.ndarray:
    out = np.empty(W.shape[0], dtype=np.float32)
    for i in range(W.shape[0]):
        out[i] = W[i] - U[i] / c
    return out


class AveragedPerceptron:
    """Training state: current weights ``W``, averaging sums ``U`` and the clock ``c``.

    Not serialized: a loaded model keeps only the averaged weights, and resumes training from
    them (``from_weights``).
    """

    def __init__(self, size: int) -> None:
        self.W = np.zeros(size, dtype=np.float64)
        self.U = np.zeros(size, dtype=np.float64)
        self.counter = np.ones(1, dtype=np.float64)

    @classmethod
    def from_weights(cls, weights: np.ndarray) -> "AveragedPerceptron":
        out = cls(len(weights))
        out.W[:] = weights
        return out

    def grow(self, n_new: int) -> None:
        """``n_new`` more entries at the end, zero in ``W`` and ``U`` (classes added to the model)."""
        self.W = np.concatenate([self.W, np.zeros(n_new)])
        self.U = np.concatenate([self.U, np.zeros(n_new)])

    def train(
        self, attrs, offsets, gold_heads, gold_labels, templates, mask: int, n_labels: int, root_label: int,
        beam_width: int = 1, explore: float = 0.0, explore_max_length: int = 0, layout: int = LAYOUT,
    ) -> int:
        """One online pass over the spans (``mask``: the number of buckets minus one): greedy
        with the ultraconservative update (``beam_width == 1``; with error exploration when
        ``explore > 0``) or beam search with early update; ``layout``: the weights' class layout
        (``transition.moves``). Returns the number of updates."""
        args = (attrs, offsets, gold_heads, gold_labels, self.W, self.U, self.counter, templates,
                np.int64(mask), n_labels, root_label)
        if beam_width > 1:
            return int(train_spans_beam(*args, beam_width, int(layout)))
        return int(train_spans(*args, float(explore), int(explore_max_length), int(layout)))

    def average(self) -> np.ndarray:
        """The average of the weights after every configuration seen, as float32."""
        return averaged(self.W, self.U, float(self.counter[0]))


@njit(cache=True)
def _replay_update(W, U, c, attrs, seq, length, delta, templates, mask, n_labels, ctx, feats, layout):
    """Add ``delta`` to the weights of the first ``length`` moves of ``seq`` from the start."""
    st = initial_state(attrs.shape[0] - 1)
    for step in range(length):
        fill_context(st, attrs, ctx)
        hash_features(ctx, templates, mask, feats)
        cls = seq[step]
        for f in range(feats.shape[0]):
            W[feats[f] + cls] += delta
            U[feats[f] + cls] += c * delta
        apply(st, cls, n_labels, layout)


@njit(cache=True)
def train_spans_beam(
    attrs, offsets, gold_heads, gold_labels, W, U, counter, templates, mask, n_labels, root_label, width, layout=LAYOUT
):
    """Beam-search training with early update (Collins & Roark 2004; Zhang & Clark 2008): when
    the oracle's configuration falls out of the beam, or the best final configuration is not the
    oracle's, the features of the oracle's moves so far are added and those of the best beam
    item's moves subtracted. A span with partial gold takes the dynamic oracle's
    ``zero_cost_path`` as its oracle sequence (its guesses for the unknown arcs are trained as if
    they were gold). Classes are in layout ``layout``. Returns the number of updates."""
    ctx, feats, scores, valid = move_buffers(templates, n_labels)
    top_s, top_k, top_c = beam_buffers(width)
    updates = 0
    for s in range(len(offsets) - 1):
        lo, hi = offsets[s], offsets[s + 1]
        n = hi - lo - 1
        span = attrs[lo:hi]
        if is_partial(gold_heads[lo:hi], gold_labels[lo + 1 : hi]):
            gold_seq, _ = zero_cost_path(gold_heads[lo:hi], gold_labels[lo + 1 : hi], n_labels, root_label, layout)
        else:
            gold_seq = oracle_sequence(gold_heads[lo:hi], gold_labels[lo + 1 : hi], n_labels, root_label, layout)
        if len(gold_seq) != 2 * n or n == 0:
            continue
        first = initial_state(n)
        beam = np.empty((width, first.shape[0], first.shape[1]), dtype=np.int32)
        new_beam = np.empty_like(beam)
        beam[0] = first
        hist = np.zeros((width, 2 * n), dtype=np.int64)
        new_hist = np.zeros_like(hist)
        is_gold = np.zeros(width, dtype=np.bool_)
        new_gold = np.zeros(width, dtype=np.bool_)
        is_gold[0] = True
        totals = np.zeros(width, dtype=np.float64)
        size = 1
        for step in range(2 * n):
            size = best_candidates(
                beam, size, totals, span, W, templates, mask, n_labels, root_label, ctx, feats, scores, valid,
                top_s, top_k, top_c, layout,
            )
            gold_kept = False
            for r in range(size):
                k, c = top_k[r], top_c[r]
                new_beam[r] = beam[k]
                apply(new_beam[r], c, n_labels, layout)
                new_hist[r, :step] = hist[k, :step]
                new_hist[r, step] = c
                new_gold[r] = is_gold[k] and c == gold_seq[step]
                gold_kept = gold_kept or new_gold[r]
            totals[:size] = top_s[:size]
            beam, new_beam = new_beam, beam
            hist, new_hist = new_hist, hist
            is_gold, new_gold = new_gold, is_gold
            last = step == 2 * n - 1
            if not gold_kept or (last and not is_gold[0]):
                c = counter[0]
                _replay_update(W, U, c, span, gold_seq, step + 1, 1.0, templates, mask, n_labels, ctx, feats, layout)
                _replay_update(W, U, c, span, hist[0], step + 1, -1.0, templates, mask, n_labels, ctx, feats, layout)
                updates += 1
                break
        counter[0] += 1
    return updates
