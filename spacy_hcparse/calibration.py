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
"""
from typing import Dict, List, Sequence, Tuple

import numpy as np

from .decoders import arc_marginals


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
