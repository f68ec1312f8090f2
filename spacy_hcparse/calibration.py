"""Calibrating ``hc_parser``'s head probabilities: a temperature, and how well they are calibrated.

``token._.hc_head_prob`` is the marginal probability of the chosen head under the first-order
tree distribution of the arc scores divided by a temperature ``T`` (``prob_temperature``).
Trained scores are sharper than the evidence (a head scored 0.95 is right less often than 95% of
the time), so ``T`` is fitted on held-out gold data (temperature scaling, Guo et al. 2017), a one-parameter
fit that does not change which head is best: by maximizing the gold heads' marginal
log-likelihood (``fit_temperature``), or by minimizing the ECE of the chosen heads' probabilities
(``fit_temperature_ece``). The two differ when the decoder is not the first-order model: a
decoder with sibling factors picks heads that are right more often than their first-order
marginals say, which the likelihood fit (over all heads) does not see.

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
changes no ranking. ``calibrated_probabilities`` gives a tree's calibrated head probabilities and
its probability: ``P(tree)`` under the tempered distribution, at most the lowest of its
calibrated head probabilities (a tree is never more probable than one of its arcs); with
siblings, the tree probability has a temperature of its own (``tree_temperature``), fitted on the
dev sentences against exact match (all heads right) with that cap applied.

With a projective decoder that reads sibling factors (``Eisner.v1``, ``MBR.v1``), the distribution
is over the arc and sibling scores together (projective trees, inside-outside over the
second-order chart: ``decoders.arc_marginals(arc, True, sib)``; ``"siblings": true`` in the
calibration): the probabilities then come from the model the decoder maximizes, and need a
smaller correction. A span without sibling scores, or a non-projective tree, falls back to the
first-order matrix-tree distribution.
"""
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import srsly

from .decoders import arc_marginals, log_partition, tree_log_prob, tree_probabilities, tree_score
from .decoders._checks import check_arc
from .decoders.absent import with_floor
from .decoders.marginals import is_projective

# Fewer dev words than this: the temperature alone (an isotonic map would follow the noise).
MIN_MAP_WORDS = 2000
# Fewer dev sentences than this: the tree probability keeps the heads' temperature.
MIN_TREE_SPANS = 200


def head_nll(arcs: Sequence[np.ndarray], golds: Sequence[np.ndarray], temperature: float) -> float:
    """Mean negative log marginal probability of the gold heads (``golds[i]``: (n+1,), ``-1`` at
    index 0 and for unknown heads) under ``arcs[i] / temperature``."""
    total, count = 0.0, 0
    for arc, gold in zip(arcs, golds):
        if len(arc) < 2:
            continue
        probs = arc_marginals(np.asarray(arc, dtype=np.float64) / temperature)
        words = np.flatnonzero(gold[1:] >= 0) + 1
        total -= float(np.log(np.maximum(probs[gold[words], words], 1e-300)).sum())
        count += len(words)
    return total / max(count, 1)


def fit_temperature(arcs: Sequence[np.ndarray], golds: Sequence[np.ndarray], low: float = 0.25,
                    high: float = 8.0, steps: int = 40) -> float:
    """The temperature in ``[low, high]`` minimizing ``head_nll`` (golden-section search on
    ``log T``; the likelihood is unimodal in ``T`` for the cases that matter)."""
    ratio = (5 ** 0.5 - 1) / 2
    a, b = np.log(low), np.log(high)
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = head_nll(arcs, golds, np.exp(c)), head_nll(arcs, golds, np.exp(d))
    for _ in range(steps):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = head_nll(arcs, golds, np.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = head_nll(arcs, golds, np.exp(d))
    return float(np.exp((a + b) / 2))


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


def head_confidence(arcs: Sequence[np.ndarray], golds: Sequence[np.ndarray], chosen: Sequence[np.ndarray],
                    temperature: float) -> Tuple[np.ndarray, np.ndarray]:
    """Per word with a known gold head: the marginal probability of the head the parser chose
    (``chosen[i]``: (n+1,) heads) under ``arcs[i] / temperature``, and whether it is the gold one."""
    confidence, correct = [], []
    for arc, gold, heads in zip(arcs, golds, chosen):
        if len(arc) < 2:
            continue
        probs = arc_marginals(np.asarray(arc, dtype=np.float64) / temperature)
        words = np.flatnonzero(gold[1:] >= 0) + 1
        confidence.append(probs[heads[words], words])
        correct.append(heads[words] == gold[words])
    empty = np.zeros(0)
    return np.concatenate(confidence or [empty]), np.concatenate(correct or [empty]).astype(bool)


def fit_temperature_ece(arcs, golds, chosen, low: float = 0.25, high: float = 8.0, points: int = 41,
                        bins: int = 10) -> float:
    """The temperature on a grid of ``points`` log-spaced values in ``[low, high]`` with the lowest
    ECE of the chosen heads' probabilities (a grid: the ECE is not unimodal in ``T``)."""
    grid = np.exp(np.linspace(np.log(low), np.log(high), points))
    eces = [reliability(*head_confidence(arcs, golds, chosen, t), bins)[1] for t in grid]
    return float(grid[int(np.argmin(eces))])


def calibration_report(arcs, golds, chosen, temperature: float, bins: int = 10) -> Dict:
    """The reliability table and ECE of the chosen heads' probabilities at ``temperature``."""
    confidence, correct = head_confidence(arcs, golds, chosen, temperature)
    rows, ece = reliability(confidence, correct, bins)
    return {"temperature": temperature, "words": int(len(confidence)), "ece": ece,
            "accuracy": float(correct.mean()) if len(correct) else None,
            "mean_confidence": float(confidence.mean()) if len(confidence) else None, "bins": rows}


def chosen_confidence(arcs: Sequence[np.ndarray], chosen: Sequence[np.ndarray], correct: Sequence[np.ndarray],
                      temperature: float, sibs: Optional[Sequence[Optional[np.ndarray]]] = None
                      ) -> Tuple[np.ndarray, np.ndarray]:
    """``head_confidence`` from correctness flags instead of gold heads: per word whose
    ``correct[i][m - 1]`` is 0 or 1 (``-1``: unknown, skipped), the marginal probability of the
    chosen head ``chosen[i][m]`` under ``arcs[i] / temperature`` (with ``sibs[i]``, when given and
    not None, the projective marginals with siblings: ``head_marginals``), and the flag."""
    confidence, flags = [], []
    sibs = sibs if sibs is not None else [None] * len(arcs)
    for arc, heads, right, sib in zip(arcs, chosen, correct, sibs):
        if len(arc) < 2:
            continue
        words = np.flatnonzero(right >= 0) + 1
        if not len(words):
            continue
        probs = head_marginals(heads, arc, temperature, sib)
        confidence.append(probs[heads[words], words])
        flags.append(right[words - 1] == 1)
    empty = np.zeros(0)
    return np.concatenate(confidence or [empty]), np.concatenate(flags or [empty]).astype(bool)


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


def fit_calibration(arcs: Sequence[np.ndarray], chosen: Sequence[np.ndarray], correct: Sequence[np.ndarray],
                    sibs: Optional[Sequence[Optional[np.ndarray]]] = None, min_map_words: int = MIN_MAP_WORDS) -> Dict:
    """The calibration of the module docstring, fitted on held-out spans: ``arcs[i]`` (n+1, n+1)
    first-order scores, ``chosen[i]`` (n+1,) the parser's heads, ``correct[i]`` (n,) 1 / 0 / -1
    (unknown); ``sibs[i]``: the span's sibling cube for a projective decoder with siblings (None:
    none; ``sibs`` None: first order throughout). The temperature minimizes the ECE of the chosen
    heads' marginals (a grid, as ``fit_temperature_ece``), then the isotonic map is fitted when
    there are ``min_map_words`` words or more. Returns ``{"temperature", "knots" (None: no map),
    "siblings", "words", "ece"}`` (``ece``: on the fitting words, after calibration),
    JSON-serializable (it is stored in ``cfg``)."""
    siblings = sibs is not None and any(sib is not None for sib in sibs)
    sibs = sibs if siblings else None
    temperature = _ece_grid_search(lambda t: reliability(*chosen_confidence(arcs, chosen, correct, t, sibs))[1])
    confidence, flags = chosen_confidence(arcs, chosen, correct, temperature, sibs)
    knots = isotonic_knots(confidence, flags) if len(confidence) >= min_map_words else None
    fitted = {"temperature": temperature, "knots": knots, "siblings": siblings, "words": int(len(confidence))}
    fitted = srsly.json_loads(srsly.json_dumps(fitted))  # as the saved cfg keeps it (10 decimals)
    fitted["ece"] = srsly.json_loads(srsly.json_dumps(
        reliability(apply_knots(confidence, fitted["knots"]), flags)[1] if len(confidence) else 0.0))
    if siblings:
        tree_temperature = _fit_tree_temperature(arcs, chosen, correct, sibs, fitted)
        if tree_temperature is not None:
            fitted["tree_temperature"] = srsly.json_loads(srsly.json_dumps(tree_temperature))
    return fitted


def _fit_tree_temperature(arcs, chosen, correct, sibs, calibration: Dict) -> Optional[float]:
    """The temperature of the tree probability (``calibrated_probabilities``) that minimizes the
    ECE of the written tree probabilities against exact match (every head right), over the spans
    whose words all have a known gold head; None with fewer than ``MIN_TREE_SPANS`` of them."""
    whole = [i for i, right in enumerate(correct) if len(right) and (right >= 0).all()]
    if len(whole) < MIN_TREE_SPANS:
        return None
    exact = np.array([bool((correct[i] == 1).all()) for i in whole])
    lowest = np.array([calibrated_probabilities(chosen[i], arcs[i], calibration, sibs[i])[0].min() for i in whole])

    def ece(t: float) -> float:
        probs = np.exp([tree_log_prob_at(chosen[i], arcs[i], t, sibs[i]) for i in whole])
        return reliability(np.minimum(probs, lowest), exact)[1]

    return _ece_grid_search(ece)


def tree_log_prob_at(heads: np.ndarray, arc: np.ndarray, temperature: float, sib: Optional[np.ndarray]) -> float:
    """``log P(heads)`` under ``arc / temperature`` (and ``sib / temperature``, projective, where
    ``sib`` is given and the tree is projective; else first order)."""
    arc = np.asarray(arc, dtype=np.float64) / temperature
    if sib is not None and is_projective(np.asarray(heads, dtype=np.int64)):
        sib = np.asarray(sib, dtype=np.float64) / temperature
        usable = np.where(np.isfinite(arc), arc, -1e300)  # a tree on a pruned arc: probability 0
        return float(tree_score(heads, usable, sib) - log_partition(arc, True, sib))
    return float(tree_log_prob(heads, arc))


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


def head_marginals(heads: np.ndarray, arc: np.ndarray, temperature: float, sib: Optional[np.ndarray] = None
                   ) -> np.ndarray:
    """``P(h -> m)`` (n+1, n+1) under ``arc / temperature``: with ``sib`` and a projective tree
    ``heads``, the projective distribution of the arc and sibling scores; else the first-order
    (matrix-tree) one, where absent (``-inf``) arcs that every single-root tree needs (pruning
    can leave none without them; a non-projective decoder then uses one) count at the decoders'
    floor (``absent.with_floor``) instead. Where the matrix-tree determinant is lost to rounding
    (scores many hundreds apart, as a small temperature in the calibration's grid makes them),
    each word's own head distribution (a softmax over its column) stands in."""
    arc = np.asarray(arc, dtype=np.float64) / temperature
    if sib is not None and is_projective(np.asarray(heads, dtype=np.int64)):
        return arc_marginals(arc, True, np.asarray(sib, dtype=np.float64) / temperature)
    allowed = with_floor(check_arc(arc))
    try:
        return arc_marginals(arc if allowed.feasible else allowed.arc)
    except ValueError:
        return column_softmax(allowed.arc)


def column_softmax(arc: np.ndarray) -> np.ndarray:
    """Per word ``m`` (column, ``m >= 1``) the softmax of ``arc[h, m]`` over its heads ``h != m``;
    column 0 and the diagonal 0."""
    size = arc.shape[0]
    scores = arc.copy()
    scores[np.eye(size, dtype=bool)] = -np.inf
    scores[:, 0] = -np.inf
    out = np.zeros((size, size))
    if size > 1:
        cols = scores[:, 1:]
        exp = np.exp(cols - cols.max(axis=0))
        out[:, 1:] = exp / exp.sum(axis=0)
    return out


def calibrated_probabilities(heads: np.ndarray, arc: np.ndarray, calibration: Dict, sib: Optional[np.ndarray] = None
                             ) -> Tuple[np.ndarray, float]:
    """``(P(heads[m] -> m) for m = 1..n, log P(tree))`` calibrated: the marginals under
    ``arc / temperature`` (and ``sib / temperature`` where the calibration was fitted with
    siblings, ``sib`` is given and the tree is projective) through the map ``knots``, and the
    tree's log probability under the same distribution (at ``tree_temperature`` where the
    calibration has one: siblings only), capped at the log of its lowest calibrated head
    probability."""
    temperature = calibration["temperature"]
    scaled = np.asarray(arc, dtype=np.float64) / temperature
    if calibration.get("siblings") and sib is not None and is_projective(np.asarray(heads, dtype=np.int64)):
        probs, log_prob = tree_probabilities(heads, scaled, True, np.asarray(sib, dtype=np.float64) / temperature)
        if calibration.get("tree_temperature") is not None:
            log_prob = tree_log_prob_at(heads, arc, calibration["tree_temperature"], sib)
    else:
        probs, log_prob = tree_probabilities(heads, scaled)
    probs = apply_knots(probs, calibration.get("knots"))
    if len(probs):
        log_prob = min(log_prob, float(np.log(max(probs.min(), 1e-300))))
    return probs, log_prob


def examples_calibration_data(pipe, examples: Iterable, batch_size: int = 256):
    """``(arcs, chosen, correct, sibs)`` for ``fit_calibration`` from parsed examples: per
    sentence span of each predicted doc (``segment.sentence_spans``, as the parser split it), the
    first-order arc scores ``pipe`` gives it now, the written heads, per word whether its head is
    the aligned gold one (``-1``: no aligned gold head, or a written head outside the span), and
    its sibling cube where ``pipe``'s decoder is projective and reads siblings (else None;
    ``sibs`` None for other decoders); ``batch_size`` docs per model call."""
    from .segment import sentence_spans

    siblings = projective_siblings(pipe.decoder)
    factors = frozenset({"sib"}) if siblings else frozenset()
    examples = [eg for eg in examples if len(eg.predicted)]
    arcs, chosen, correct, sibs = [], [], [], []
    for lo in range(0, len(examples), batch_size):
        batch = examples[lo: lo + batch_size]
        spans = [sentence_spans(eg.predicted, pipe.max_length) for eg in batch]
        scores = pipe.score_spans([eg.predicted for eg in batch], spans, factors=factors)
        arcs.extend(scores.arc(i) for i in range(len(scores)))
        sibs.extend(scores.cubes(i, factors)[0] if siblings else None for i in range(len(scores)))
        for eg, doc_spans in zip(batch, spans):
            gold, _ = eg.get_aligned_parse(projectivize=False)
            written = [tok.head.i for tok in eg.predicted]
            for start, end in doc_spans:
                heads, right = _span_heads(written, gold, start, end)
                chosen.append(heads)
                correct.append(right)
    return arcs, chosen, correct, (sibs if siblings else None)


def span_siblings(scores, i: int, calibration: Optional[Dict]) -> Optional[np.ndarray]:
    """Span ``i``'s sibling cube of ``scores`` (a ``graph.scores.GraphScores``) where
    ``calibration`` was fitted with siblings and the span has sibling scores, else None."""
    if not calibration or not calibration.get("siblings") or "sib" not in scores.factors:
        return None
    return scores.cubes(i, frozenset({"sib"}))[0]


def projective_siblings(decoder) -> bool:
    """Whether ``decoder`` (a ``graph.decoding`` object) maximizes a projective model with sibling
    factors (``Eisner.v1``, projective ``MBR.v1``): its calibration then reads them."""
    from .graph.decoding import MBR, Eisner

    return "sib" in decoder.factors and (isinstance(decoder, Eisner) or (isinstance(decoder, MBR) and decoder.projective))


def _span_heads(written: List[int], gold: List[Optional[int]], start: int, end: int) -> Tuple[np.ndarray, np.ndarray]:
    """Span-local written heads (n+1,) (index 0 the root, ``-1`` at 0; a head outside the span
    becomes 0 and its word unknown) and correctness flags (n,) against the absolute ``gold``."""
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
    if (heads[1:] == 0).sum() != 1:  # not one tree within the span (joined chunks): leave it out
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
