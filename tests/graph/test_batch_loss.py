"""graph.batch_loss and GraphLoss: the batch's tree terms in one compiled call, and the whole
loss, against their per-span definitions (each word's softmax over heads written out here,
``structured_hinge`` here, ``losses.label_xent``) span by span.

Random batches: spans of 0-7 words with random arc scores, gold trees (some with unknown heads,
some spans without gold), cost-augmented trees (some equal to the gold), sibling and grandparent
values on the triples pruning allows (some spans first-order, some factor types not read).
"""
from typing import Callable, Optional, Tuple

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import arc_marginals, log_partition
from spacy_hcparse.graph.decoding import MST, Eisner, HillClimb
from spacy_hcparse.graph import pruning
from spacy_hcparse.graph.scores import TrainingScores
from spacy_hcparse.graph.batch_loss import tree_losses
from spacy_hcparse.graph.graph_loss import GraphLoss
from spacy_hcparse.graph.batch_hinge import hamming_augmented
from spacy_hcparse.learning.losses import label_xent
from tests.decoders.brute import all_trees, reference_score, sibling_factors
from tests.graph.test_pruning import mask_triples


def head_xent(arc, gold):
    """Head-selection cross-entropy by its definition (Dozat & Manning 2017): per word with a
    known gold head, ``-log softmax_h(arc[h, m])[gold[m]]`` over the heads ``h != m``, and its
    gradient ``softmax - one_hot(gold)`` in column ``m``."""
    size = len(arc)
    loss, d_arc = 0.0, np.zeros((size, size))
    for m in range(1, size):
        if gold[m] < 0:
            continue
        heads = [h for h in range(size) if h != m]
        logits = np.array([arc[h, m] for h in heads], dtype=np.float64)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        loss -= np.log(max(probs[heads.index(gold[m])], 1e-30))
        d_arc[heads, m] = probs
        d_arc[gold[m], m] -= 1.0
    return float(loss), d_arc


def structured_hinge(
    arc: np.ndarray,
    pruned: np.ndarray,
    sib: Optional[np.ndarray],
    grand: Optional[np.ndarray],
    gold: np.ndarray,
    sib_triples: np.ndarray,
    grand_triples: np.ndarray,
    decoder: Callable,
) -> Tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """``max(0, s(y) + cost(y) - s(gold))`` at the tree ``y`` the decoder finds on the
    Hamming-augmented ``pruned`` arcs, and its gradients: (loss, d arc (n+1, n+1), d values at
    ``sib_triples``, d values at ``grand_triples``). Trees are scored with ``arc`` (unpruned)
    and the factor cubes given (None: that factor type is not part of the model here)."""
    zeros = (0.0, np.zeros_like(arc), np.zeros(len(sib_triples)), np.zeros(len(grand_triples)))
    pred = decoder(hamming_augmented(pruned, gold), sib, grand).heads
    if np.array_equal(pred, gold):
        return zeros
    size = len(gold)
    words = np.arange(1, size)
    gold_score = float(arc[gold[1:], words].sum())
    pred_score = float(arc[pred[1:], words].sum()) + float(np.sum(pred[1:] != gold[1:]))
    d_sib, d_grand = zeros[2], zeros[3]
    if sib is not None:
        ps, gs = sibling_factors(pred), sibling_factors(gold)
        pred_score += float(sib[tuple(ps.T)].sum()) if len(ps) else 0.0
        gold_score += float(sib[tuple(gs.T)].sum()) if len(gs) else 0.0
        d_sib = factor_gradient(sib_triples, ps, gs, size)
    if grand is not None:
        pg, gg = tree_grand_factors(pred), tree_grand_factors(gold)
        pred_score += float(grand[tuple(pg.T)].sum()) if len(pg) else 0.0
        gold_score += float(grand[tuple(gg.T)].sum()) if len(gg) else 0.0
        d_grand = factor_gradient(grand_triples, pg, gg, size)
    loss = pred_score - gold_score
    if loss <= 0:
        return zeros
    return loss, arc_gradient(pred, gold), d_sib, d_grand


def tree_grand_factors(heads: np.ndarray) -> np.ndarray:
    """(F, 3) array of the (g, h, m) grandparent factors the tree ``heads`` uses."""
    out = [(heads[heads[m]], heads[m], m) for m in range(1, len(heads)) if heads[m] > 0]
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def factor_gradient(
    triples: np.ndarray, predicted: np.ndarray, gold: np.ndarray, size: int
) -> np.ndarray:
    """d(score(predicted) - score(gold)) / d(values at ``triples``): +1/-1 per triple used.

    ``predicted`` and ``gold`` list each factor of their tree once (as trees do).
    """
    if not len(triples):
        return np.zeros(0, dtype=np.float64)
    keys = _keys(triples, size)
    grad = np.isin(keys, _keys(predicted, size)).astype(np.float64)
    grad -= np.isin(keys, _keys(gold, size))
    return grad


def _keys(triples: np.ndarray, size: int) -> np.ndarray:
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    return (triples[:, 0] * size + triples[:, 1]) * size + triples[:, 2]


def arc_gradient(predicted: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """d(score(predicted) - score(gold)) / d arc, an (n+1, n+1) array of +1/-1."""
    size = len(gold)
    d_arc = np.zeros((size, size), dtype=np.float64)
    words = np.arange(1, size)
    np.add.at(d_arc, (predicted[1:], words), 1.0)
    np.add.at(d_arc, (gold[1:], words), -1.0)
    return d_arc


def random_tree(rng, n):
    """Heads (n+1,) of a random single-root tree (not always projective)."""
    heads = np.full(n + 1, -1, dtype=np.int64)
    placed = [0]
    for k, m in enumerate(rng.permutation(np.arange(1, n + 1))):
        heads[m] = 0 if k == 0 else placed[1 + rng.integers(len(placed) - 1)]
        placed.append(m)
    return heads


def random_batch(rng, n_spans, factors):
    """A ``TrainingScores`` of random spans, their golds and cost-augmented trees."""
    arcs, masks, higher, golds, trees = [], [], [], [], []
    for _ in range(n_spans):
        n = int(rng.integers(0, 8))
        arc = rng.normal(size=(n + 1, n + 1)) * rng.choice([0.5, 3.0])
        gold = random_tree(rng, n)
        known = gold.copy()
        if n and rng.random() < 0.3:
            known[1 + rng.integers(n)] = -1
        mask = pruning.prune_batch([arc], int(rng.integers(1, 4)), [known], [False], [False]).masks[0]
        arcs.append(arc.astype("f"))
        masks.append(mask)
        higher.append(bool(n > 1 and rng.random() < 0.8))
        golds.append(None if rng.random() < 0.1 else (known, np.zeros(n, dtype=np.int64)))
        whole = golds[-1] is not None and n > 0 and (known[1:] >= 0).all()
        trees.append((gold.copy() if rng.random() < 0.2 else random_tree(rng, n)) if whole else None)
    none = np.zeros((0, 3), np.int32)
    triples = {kind: [mask_triples(m, kind == "sib") if h and kind in factors else none for m, h in zip(masks, higher)]
               for kind in ("sib", "grand")}
    scores = TrainingScores(arcs, masks, [], [], higher, frozenset(factors), triples=triples)
    scores.sib = [rng.normal(size=len(scores.sib_triples(i))).astype("f") for i in range(n_spans)]
    scores.grand = [rng.normal(size=len(scores.grand_triples(i))).astype("f") for i in range(n_spans)]
    return scores, golds, trees


def per_span(scores, golds, trees, factors, xent_weight, hinge_weight):
    """The tree terms span by span, from their definitions."""
    total, d_arcs, d_sib, d_grand = 0.0, [], [], []
    for i, (gold, tree) in enumerate(zip(golds, trees)):
        size = len(scores.masks[i])
        d_arc, ds, dg = np.zeros((size, size)), np.zeros(len(scores.sib[i])), np.zeros(len(scores.grand[i]))
        if gold is not None and size > 1:
            loss, d = head_xent(scores.arc(i), gold[0])
            total, d_arc = total + xent_weight * loss, d_arc + xent_weight * d
        if tree is not None:
            sib, grand = scores.cubes(i, factors)
            loss, da, dsi, dgi = structured_hinge(scores.arc(i), scores.pruned_arc(i), sib, grand, gold[0],
                                                  scores.sib_triples(i), scores.grand_triples(i),
                                                  lambda *_: Tree(tree))
            total += hinge_weight * loss
            d_arc, ds, dg = d_arc + hinge_weight * da, ds + hinge_weight * dsi, dg + hinge_weight * dgi
        d_arcs.append(d_arc)
        d_sib.append(ds)
        d_grand.append(dg)
    return total, d_arcs, d_sib, d_grand


class Tree:
    def __init__(self, heads):
        self.heads = heads


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_spans=st.integers(0, 6),
       factors=st.sampled_from([(), ("sib",), ("grand",), ("sib", "grand")]),
       weights=st.sampled_from([(1.0, 1.0), (0.5, 2.0), (1.0, 0.0), (0.0, 1.0)]))
def test_tree_losses_are_the_per_span_terms(seed, n_spans, factors, weights):
    rng = np.random.default_rng(seed)
    scores, golds, trees = random_batch(rng, n_spans, ("sib", "grand"))
    sib, grand = scores.factors_of("sib", read=frozenset(factors)), scores.factors_of("grand", read=frozenset(factors))
    trees = trees if weights[1] else [None] * n_spans
    got = tree_losses(scores, golds, trees, sib, grand, *weights)
    expected = per_span(scores, golds, trees, frozenset(factors), *weights)
    assert got[0] == pytest.approx(expected[0], rel=1e-12, abs=1e-12)
    for name, a, b in zip(("arcs", "sib", "grand"), got[1:], expected[1:]):
        assert len(a) == len(b) == n_spans
        for x, y in zip(a, b):
            assert x.shape == y.shape and np.allclose(x, y, rtol=0, atol=1e-12), name


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_spans=st.integers(0, 6), weight=st.sampled_from([1.0, 0.5]))
def test_tree_weight_adds_the_matrix_tree_negative_log_likelihood(seed, n_spans, weight):
    """``tree_weight``: per span with a whole gold tree, ``log Z - score(gold)`` under the
    single-root first-order distribution of the unpruned arcs, gradient marginals minus gold arcs;
    the other terms unchanged."""
    rng = np.random.default_rng(seed)
    scores, golds, trees = random_batch(rng, n_spans, ("sib",))
    sib, grand = scores.factors_of("sib"), scores.factors_of("grand")
    base = tree_losses(scores, golds, trees, sib, grand, 1.0, 1.0)
    got = tree_losses(scores, golds, trees, sib, grand, 1.0, 1.0, weight)
    total = base[0]
    for i, gold in enumerate(golds):
        d = got[1][i] - base[1][i]
        size = len(scores.masks[i])
        if gold is None or size < 2 or (gold[0][1:] < 0).any():
            assert not d.any()
            continue
        arc = scores.arc(i)
        words = np.arange(1, size)
        total += weight * (log_partition(arc) - arc[gold[0][1:], words].sum())
        want = weight * arc_marginals(arc)
        want[gold[0][1:], words] -= weight
        assert np.allclose(d, want, rtol=0, atol=1e-9)
    assert got[0] == pytest.approx(total, rel=1e-9, abs=1e-9)
    assert all(np.array_equal(a, b) for a, b in zip(got[2] + got[3], base[2] + base[3]))


@pytest.mark.parametrize("decoder", [Eisner(), MST(), HillClimb(seed=0)], ids=["eisner", "mst", "hill_climb"])
def test_graph_loss_is_the_sum_of_its_per_span_terms(training_scores, decoder):
    """The whole loss on a trained model's scores: tree terms with the decoder's own trees, label
    cross-entropy on the gold arcs (tags and sentence starts as before)."""
    scores, gold = training_scores
    loss = GraphLoss(decoder, hinge_weight=1.0, xent_weight=1.0, label_weight=0.5)
    total, grads = loss(scores, gold)
    trees = [None if g is None or len(scores.masks[i]) < 2 or (g[0][1:] < 0).any() else
             decoder(*_augmented(scores, i, g[0], decoder)).heads for i, g in enumerate(gold.spans)]
    expected, d_arcs, d_sib, d_grand = per_span(scores, gold.spans, trees, decoder.factors, 1.0, 1.0)
    label_total = 0.0
    for i, g in enumerate(gold.spans):
        if g is None or not len(scores.label_arcs[i]):
            assert not grads.labels[i].any()
            continue
        lab, d = label_xent(np.asarray(scores.labels[i], np.float64), g[1][scores.label_arcs[i][:, 1] - 1])
        label_total += 0.5 * lab
        assert np.allclose(grads.labels[i], 0.5 * d, atol=1e-6)
    assert total > expected + label_total > 0  # the start and tag losses come on top
    assert any(t is not None for t in trees)
    assert any(len(d) and d.any() for d in d_sib) == ("sib" in decoder.factors)
    for got, want in ((grads.arcs, d_arcs), (grads.sib, d_sib), (grads.grand, d_grand)):
        assert all(a.dtype == np.float32 and np.allclose(a, b, atol=1e-6) for a, b in zip(got, want))


def _augmented(scores, i, heads, decoder):

    return (hamming_augmented(scores.pruned_arc(i), heads), *scores.cubes(i, decoder.factors))


def test_tree_losses_reject_golds_and_trees_of_other_lengths():
    rng = np.random.default_rng(0)
    scores, golds, trees = random_batch(rng, 3, ("sib",))
    sib, grand = scores.factors_of("sib"), scores.factors_of("grand")
    longer = list(golds)
    longer[0] = (np.zeros(len(scores.masks[0]) + 1, np.int64), np.zeros(0, np.int64))
    for bad_golds, bad_trees in ((longer, trees), (golds, trees[:2]), (golds[:2], trees)):
        with pytest.raises(ValueError, match="one gold"):
            tree_losses(scores, bad_golds, bad_trees, sib, grand, 1.0, 1.0)


def test_tree_factors_score_like_reference():
    rng = np.random.default_rng(0)
    arc, sib, grand = rng.normal(size=(6, 6)), rng.normal(size=(6, 6, 6)), rng.normal(size=(6, 6, 6))
    for heads in all_trees(5)[::37]:
        s = sibling_factors(heads)
        g = tree_grand_factors(heads)
        total = arc[heads[1:], np.arange(1, 6)].sum() + sib[tuple(s.T)].sum() + grand[tuple(g.T)].sum()
        assert total == pytest.approx(reference_score(heads, arc, sib, grand))


def test_factor_gradient_counts():
    mask = np.ones((5, 5), dtype=bool)
    mask[:, 0] = False
    np.fill_diagonal(mask, False)
    triples = mask_triples(mask, True)
    pred = np.array([-1, 0, 1, 1, 1])
    gold = np.array([-1, 0, 1, 2, 1])
    grad = factor_gradient(triples, sibling_factors(pred), sibling_factors(gold), 5)
    got = {tuple(t): g for t, g in zip(triples, grad) if g}
    assert got == {(1, 2, 3): 1.0, (1, 3, 4): 1.0, (1, 2, 4): -1.0, (2, 2, 3): -1.0}
