"""Calibrating ``hc_parser``'s head probabilities: a temperature, and how well they are calibrated.

``token._.hc_head_prob`` is the marginal probability of the chosen head under the first-order
tree distribution of the arc scores divided by a temperature ``T`` (``prob_temperature``).
Trained scores are sharper than the evidence (a head scored 0.95 is right less often than 95% of
the time), so ``T`` is fitted on held-out gold data (temperature scaling, Guo et al. 2017), a one-parameter
fit that does not change which head is best, chosen to minimize the ECE of the chosen heads'
probabilities (not the gold heads' likelihood: a decoder with sibling factors picks heads that are
right more often than their first-order marginals say, which a fit over all heads does not see).

Calibration is reported as a reliability table over ``bins`` equal-width probability bins and
the expected calibration error ``ECE = sum_b (n_b / N) |accuracy_b - confidence_b|`` over words,
where confidence is the probability of the head the parser chose and accuracy whether that head
is the gold one.

Calibrated by default (``fit_calibration``, what ``hc_parser`` runs on the dev data at each
evaluation of ``spacy train`` and stores in its ``cfg["calibration"]``): a temperature does not
suffice (a decoder with sibling factors is right more often than the first-order marginals of its
heads say where they are low, less often where they are high), so a monotone map follows it: the
isotonic regression (pool-adjacent-violators) of correctness on the chosen heads' marginals at the
fitted temperature, read between its blocks' centres by linear interpolation (``knots``). The map
changes no ranking. A tree's probability is ``P(tree)`` under the tempered distribution, at most
the lowest of its calibrated head probabilities (a tree is never more probable than one of its
arcs); with siblings, it has a temperature of its own (``tree_temperature``), fitted on the dev
sentences against exact match (all heads right) with that cap applied
(``graph.graph_batch.span_parses`` writes them).

With a projective decoder that reads sibling factors (``Eisner.v1``, ``MBR.v1``), the distribution
is over the arc and sibling scores together (projective trees, inside-outside over the
second-order chart; ``"siblings": true`` in the calibration): the probabilities then come from the
model the decoder maximizes, and need a smaller correction. A span without sibling scores, or a
non-projective tree, falls back to the first-order matrix-tree distribution.

The held-out spans come as arrays laid out as a batch (``HeldOut``, ``decoders.batch``'s layout),
and every probability is computed by the batch kernels (``decoders.batch_marginals``) over all of
them in one call.
"""
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import srsly

from ..decoders import tree_problem
from ..decoders.batch import layout, pack, split_words
from ..decoders.batch_marginals import sibling_probabilities_batch, tree_probabilities_batch
from ..names import Span
from .decoding import MBR, Eisner

# Fewer dev words than this: the temperature alone (an isotonic map would follow the noise).
MIN_MAP_WORDS = 2000
# Fewer dev sentences than this: the tree probability keeps the heads' temperature.
MIN_TREE_SPANS = 200


class HeldOut(NamedTuple):
    """Held-out spans, laid out as a batch (``decoders.batch``): ``arcs`` the spans' first-order
    arc scores ``arc[h, m]`` end to end (float64), ``sizes`` (B,) their ``n + 1``, ``heads`` the
    parser's trees end to end (``heads[0] == -1`` per span), ``correct`` (N,) per word 1 / 0 / -1
    (its head is the gold one / is not / unknown), ``sib`` the spans' sibling factors as
    ``(counts, triples, values)`` (``graph.scores.Factors``; None: first order throughout)."""

    arcs: np.ndarray
    sizes: np.ndarray
    heads: np.ndarray
    correct: np.ndarray
    sib: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = None


def held_out(arcs: Sequence[np.ndarray], chosen: Sequence[np.ndarray], correct: Sequence[np.ndarray],
             sib: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = None) -> HeldOut:
    """``HeldOut`` from per-span arrays: ``arcs[i]`` (n+1, n+1), ``chosen[i]`` (n+1,) the
    parser's tree, ``correct[i]`` (n,); ``sib`` as ``HeldOut.sib``."""
    flat, sizes = pack(arcs)
    heads = np.concatenate([np.asarray(c, dtype=np.int64) for c in chosen]) if len(chosen) else np.zeros(0, np.int64)
    flags = np.concatenate([np.asarray(c, dtype=np.int64) for c in correct]) if len(correct) else np.zeros(0, np.int64)
    return HeldOut(flat, sizes, heads, flags, sib)


def calibration_factors(decoder) -> FrozenSet[str]:
    """The factors the head probabilities of ``decoder`` (a ``graph.decoding`` object) are fitted
    with: siblings where it maximizes a projective model with them (``Eisner.v1``, projective
    ``MBR.v1``), else none (first-order)."""
    siblings = "sib" in decoder.factors and (isinstance(decoder, Eisner) or
                                             (isinstance(decoder, MBR) and decoder.projective))
    return frozenset({"sib"}) if siblings else frozenset()


def joined_factors(parts: Sequence) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``HeldOut.sib`` from the batches' sibling factors (``GraphScores.factors_of("sib")``, in
    span order), or None without any."""
    if not parts:
        return None
    return tuple(np.concatenate([getattr(f, name) for f in parts]) for name in ("counts", "triples", "values"))


def written_heads(examples: Sequence, spans: Sequence[Sequence[Span]]) -> Tuple[List[np.ndarray], List[np.ndarray]]:
    """Per span of each example's predicted doc (``spans[j]``: example ``j``'s, in order) its
    written heads and whether each is the aligned gold head (``span_heads``)."""
    chosen, correct = [], []
    for eg, doc_spans in zip(examples, spans):
        gold, _ = eg.get_aligned_parse(projectivize=False)
        written = [tok.head.i for tok in eg.predicted]
        for start, end in doc_spans:
            heads, right = span_heads(written, gold, start, end)
            chosen.append(heads)
            correct.append(right)
    return chosen, correct


def reliability(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10) -> Tuple[List[Dict], float]:
    """The reliability table (per bin: its range, word count, mean confidence, accuracy) and the
    expected calibration error of ``confidence`` against ``correct``."""
    confidence = np.asarray(confidence, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    rows, ece = [], 0.0
    for b in range(bins):
        inside = which == b
        n = int(inside.sum())
        row = {"low": b / bins, "high": (b + 1) / bins, "words": n,
               "confidence": float(confidence[inside].mean()) if n else None,
               "accuracy": float(correct[inside].mean()) if n else None}
        if n:
            ece += n / len(confidence) * abs(row["accuracy"] - row["confidence"])
        rows.append(row)
    return rows, float(ece)


def head_probabilities(heads: np.ndarray, sizes: np.ndarray, arcs: np.ndarray,
                       sib: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]], temperature: float,
                       tree_temperature: Optional[float] = None, threads: int = 1) -> Tuple[np.ndarray, np.ndarray]:
    """``(probs, log_probs)`` before the isotonic map, for spans laid out as a batch (``HeldOut``'s
    ``heads``, ``sizes``, ``arcs`` and ``sib``, or a parsed batch): per word the marginal
    probability of its head in ``heads`` and per span its tree's log probability, under the arc
    scores divided by ``temperature``: with ``sib`` (``(counts, triples, values)``), for a span
    that has sibling factors and a projective tree, the projective distribution of the arc and
    sibling scores, the tree at ``tree_temperature`` where given; else the first-order
    (matrix-tree) distribution. ``threads`` > 1 spreads the spans over numba's threads."""
    probs, log_probs = np.zeros(int((sizes - 1).sum())), np.zeros(len(sizes))
    done = np.zeros(len(sizes), dtype=bool)
    if sib is not None:
        probs, log_probs, done = sibling_probabilities_batch(heads, sizes, arcs, *sib, temperature, tree_temperature,
                                                             threads=threads)
    rest = np.flatnonzero(~done)
    if len(rest):
        where = layout(sizes)
        part_arcs = np.concatenate([arcs[where.squares[i]: where.squares[i] + sizes[i] ** 2] for i in rest])
        part_heads = np.concatenate([heads[where.rows[i]: where.rows[i] + sizes[i]] for i in rest])
        part_probs, part_logs = tree_probabilities_batch(part_heads, sizes[rest], part_arcs / temperature,
                                                         threads=threads)
        for i, row in zip(rest.tolist(), split_words(part_probs, sizes[rest])):
            probs[where.words[i]: where.words[i] + sizes[i] - 1] = row
        log_probs[rest] = part_logs
    return probs, log_probs


def chosen_confidence(data: HeldOut, temperature: float) -> Tuple[np.ndarray, np.ndarray]:
    """Per word whose ``data.correct`` is 0 or 1 (``-1``: unknown, skipped): the marginal
    probability of its chosen head at ``temperature`` (``head_probabilities``), and the flag."""
    known = data.correct >= 0
    probs = head_probabilities(data.heads, data.sizes, data.arcs, data.sib, temperature)[0]
    return probs[known], data.correct[known] == 1


def isotonic_knots(confidence: np.ndarray, correct: np.ndarray) -> List[List[float]]:
    """``[xs, ys]``: the isotonic regression of ``correct`` on ``confidence`` (pool adjacent
    violators), one knot per block at its mean confidence and accuracy, non-decreasing in both."""
    order = np.argsort(confidence, kind="stable")
    x, y = np.asarray(confidence, dtype=np.float64)[order], np.asarray(correct, dtype=np.float64)[order]
    sums_x, sums_y, counts = [], [], []
    for xi, yi in zip(x.tolist(), y.tolist()):
        sums_x.append(xi)
        sums_y.append(yi)
        counts.append(1)
        while len(counts) > 1 and sums_y[-2] * counts[-1] >= sums_y[-1] * counts[-2]:
            last_x, last_y, last_count = sums_x.pop(), sums_y.pop(), counts.pop()
            sums_x[-1] += last_x
            sums_y[-1] += last_y
            counts[-1] += last_count
    counts_arr = np.array(counts, dtype=np.float64)
    return [(np.array(sums_x) / counts_arr).tolist(), (np.array(sums_y) / counts_arr).tolist()]


def apply_knots(probs: np.ndarray, knots: Optional[Sequence[Sequence[float]]]) -> np.ndarray:
    """``probs`` through the monotone map ``knots`` (``isotonic_knots``; linear between knots,
    constant beyond them); unchanged when ``knots`` is None."""
    probs = np.asarray(probs, dtype=np.float64)
    if knots is None:
        return probs
    return np.clip(np.interp(probs, knots[0], knots[1]), 0.0, 1.0)


def fit_calibration(data: HeldOut, min_map_words: int = MIN_MAP_WORDS) -> Dict:
    """The calibration of the module docstring, fitted on held-out spans (``HeldOut``; with
    ``data.sib``, a projective decoder's siblings). The temperature minimizes the ECE of the
    chosen heads' marginals (``_ece_grid_search``), then the isotonic map is fitted when there are
    ``min_map_words`` words or more. Returns ``{"temperature", "knots" (None: no map), "siblings",
    "words", "ece"}`` (``ece``: on the fitting words, after calibration) and, with siblings and
    enough whole sentences, ``"tree_temperature"``; JSON-serializable (it is stored in ``cfg``)."""
    siblings = data.sib is not None and bool((np.asarray(data.sib[0]) >= 0).any())
    data = data if siblings else data._replace(sib=None)
    temperature = _ece_grid_search(lambda t: reliability(*chosen_confidence(data, t))[1])
    confidence, flags = chosen_confidence(data, temperature)
    knots = isotonic_knots(confidence, flags) if len(confidence) >= min_map_words else None
    fitted = {"temperature": temperature, "knots": knots, "siblings": siblings, "words": int(len(confidence))}
    fitted = srsly.json_loads(srsly.json_dumps(fitted))  # as the saved cfg keeps it (10 decimals)
    fitted["ece"] = srsly.json_loads(srsly.json_dumps(
        reliability(apply_knots(confidence, fitted["knots"]), flags)[1] if len(confidence) else 0.0))
    if siblings:
        tree_temperature = _fit_tree_temperature(data, fitted)
        if tree_temperature is not None:
            fitted["tree_temperature"] = srsly.json_loads(srsly.json_dumps(tree_temperature))
    return fitted


def _fit_tree_temperature(data: HeldOut, calibration: Dict) -> Optional[float]:
    """The temperature of the tree probability that minimizes the ECE of the written tree
    probabilities against exact match (every head right), over the spans whose words all have a
    known gold head; None with fewer than ``MIN_TREE_SPANS`` of them."""
    words = split_words(data.correct, data.sizes)
    whole = np.array([len(right) > 0 and bool((right >= 0).all()) for right in words], dtype=bool)
    if whole.sum() < MIN_TREE_SPANS:
        return None
    exact = np.array([bool((right == 1).all()) for right, w in zip(words, whole) if w])
    probs = apply_knots(head_probabilities(data.heads, data.sizes, data.arcs, data.sib, calibration["temperature"])[0],
                        calibration.get("knots"))
    lowest = np.array([p.min() for p, w in zip(split_words(probs, data.sizes), whole) if w])

    def ece(t: float) -> float:
        logs = head_probabilities(data.heads, data.sizes, data.arcs, data.sib, t, t)[1]
        return reliability(np.minimum(np.exp(logs[whole]), lowest), exact)[1]

    return _ece_grid_search(ece)


def _ece_grid_search(ece, low: float = 0.25, high: float = 8.0, points: int = 11) -> float:
    """The temperature in ``[low, high]`` with the lowest ``ece(t)``: ``points`` log-spaced values,
    then 4 between the best one and each neighbour (the ECE is not unimodal in ``t``, but smooth
    at this scale; 19 evaluations, finer near the best than a 41-point grid)."""
    grid = np.exp(np.linspace(np.log(low), np.log(high), points))
    values = [ece(t) for t in grid]
    best = int(np.argmin(values))
    candidates = [(values[best], float(grid[best]))]
    for side in (-1, 1):  # 4 values between the best and each neighbour
        if 0 <= best + side < points:
            steps = np.linspace(np.log(grid[best]), np.log(grid[best + side]), 6)[1:-1]
            candidates.extend((ece(t), float(t)) for t in np.exp(steps))
    return min(candidates)[1]


def span_heads(written: List[int], gold: List[Optional[int]], start: int, end: int) -> Tuple[np.ndarray, np.ndarray]:
    """Span-local written heads (n+1,) (index 0 the root, ``-1`` at 0; a head outside the span
    becomes 0 and its word unknown) and correctness flags (n,) against the absolute ``gold``
    (``gold[i]``: token ``i``'s gold head, None unknown); where the written heads are not one tree
    within the span (joined chunks), a chain with every word unknown."""
    n = end - start
    heads = np.full(n + 1, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    for m, i in enumerate(range(start, end), 1):
        h = written[i]
        heads[m] = 0 if h == i else h - start + 1
        if not start <= h < end:
            heads[m] = 0
            continue
        if gold[i] is not None:
            right[m - 1] = int(gold[i] == h)
    if (heads[1:] == 0).sum() != 1 or tree_problem(heads):
        right[:] = -1
        heads[1:] = 0
        heads[2:] = 1
    return heads, right


def written_head_ece(examples: Iterable, bins: int = 10) -> Optional[float]:
    """The ECE of the written ``token._.hc_head_prob`` against the aligned gold heads of
    ``examples`` (None when no word has both)."""
    confidence, correct = [], []
    for eg in examples:
        gold, _ = eg.get_aligned_parse(projectivize=False)
        for tok, g in zip(eg.predicted, gold):
            prob = tok._.hc_head_prob if tok.has_extension("hc_head_prob") else None
            if prob is not None and g is not None:
                confidence.append(prob)
                correct.append(tok.head.i == g)
    return reliability(confidence, correct, bins)[1] if confidence else None
