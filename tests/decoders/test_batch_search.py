"""decoders.batch_search: the MST and hill climbing over a whole batch in one compiled call are the
per-span decoders' trees, span by span, with one thread and with two.

Random batches of spans (0-9 words; normal scores, or small integers for ties; pruned arcs
``-inf``; sibling and grandparent factors on the triples the candidates allow, on some spans,
some spans with one factor type only).
"""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import decode_hill_climb, decode_mst, tree_score
from spacy_hcparse.decoders._checks import tree_problem
from spacy_hcparse.decoders.batch import cut, pack
from spacy_hcparse.decoders.batch_search import decode_mst_batch, hill_climb_batch
from spacy_hcparse.graph.scores import dense_cube

from tests.graph.test_pruning import mask_triples

from .test_batch import candidates


def random_spans(seed, n_spans, ties):
    """(arcs, sib factors, grand factors) of random spans; factors per span ``(triples, values)``
    or None."""
    rng = np.random.default_rng(seed)
    arcs, sibs, grands = [], [], []
    for _ in range(n_spans):
        n = int(rng.integers(0, 10))
        arc = rng.integers(-2, 3, size=(n + 1, n + 1)).astype(float) if ties else rng.normal(size=(n + 1, n + 1))
        mask = candidates(arc, int(rng.integers(1, 5)))
        arc = np.where(mask, arc, -np.inf) if rng.random() < 0.7 else arc
        kinds = rng.integers(0, 4)  # 0: first order, 1: sib, 2: grand, 3: both
        factors = []
        for kind, sibling in ((1, True), (2, False)):
            if kinds & kind:
                triples = mask_triples(mask, sibling).astype(np.int64)
                factors.append((triples, rng.normal(size=len(triples))))
            else:
                factors.append(None)
        arcs.append(arc)
        sibs.append(factors[0])
        grands.append(factors[1])
    return arcs, sibs, grands


def flat_factors(factors):
    counts = np.array([-1 if f is None else len(f[0]) for f in factors], dtype=np.int64)
    triples = np.concatenate([f[0] for f in factors if f is not None] + [np.zeros((0, 3), np.int64)])
    values = np.concatenate([f[1] for f in factors if f is not None] + [np.zeros(0)])
    return counts, triples, values


def per_span_hill_climb(arc, sib, grand, **options):
    """``graph.decoding.HillClimb`` without a time limit: the MST tree, then hill climbing from it
    (first-order spans: the MST tree)."""
    mst = decode_mst(arc)
    if sib is None and grand is None:
        return mst
    size = len(arc)
    cubes = [None if f is None else dense_cube(size, f[0], f[1]) for f in (sib, grand)]
    return decode_hill_climb(arc, *cubes, init=mst, **options).heads


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n_spans=st.integers(0, 8), ties=st.booleans())
def test_mst_batch_is_per_span(seed, n_spans, ties):
    arcs, _, _ = random_spans(seed, n_spans, ties)
    flat, sizes = pack(arcs)
    for threads in (1, 2):
        heads = decode_mst_batch(flat, sizes, threads=threads)
        for arc, tree in zip(arcs, cut(heads, sizes)):
            assert tree.tolist() == decode_mst(arc).tolist()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n_spans=st.integers(0, 8), ties=st.booleans(),
       options=st.sampled_from([{}, {"max_restarts": 3, "min_restarts": 1, "converge": 2, "uniform_share": 0.0},
                                {"max_restarts": 7, "uniform_share": 1.0, "temperature": 0.5, "seed": 11},
                                {"pair_moves": False}, {"pair_moves": False, "projective_start": False}]))
def test_hill_climb_batch_is_per_span(seed, n_spans, ties, options):
    """Same trees as the per-span decoder, every one a valid single-root tree."""
    arcs, sibs, grands = random_spans(seed, n_spans, ties)
    flat, sizes = pack(arcs)
    for threads in (1, 2):
        heads = hill_climb_batch(flat, sizes, *flat_factors(sibs), *flat_factors(grands), threads=threads,
                                 **options).heads
        for arc, sib, grand, tree in zip(arcs, sibs, grands, cut(heads, sizes)):
            assert tree_problem(tree) == ""
            assert tree.tolist() == per_span_hill_climb(arc, sib, grand, **options).tolist()


def all_trees(n):
    """Every single-root tree over ``n`` words (heads arrays)."""
    for heads in itertools.product(range(n + 1), repeat=n):
        tree = np.array([-1, *heads], dtype=np.int64)
        if tree_problem(tree) == "":
            yield tree


@pytest.mark.parametrize("seed", range(6))
def test_hill_climb_batch_finds_the_best_tree_of_tiny_spans(seed):
    """Brute force over every tree of 4-word spans with arcs, siblings and grandparents: the
    default restarts find the optimum."""
    rng = np.random.default_rng(seed)
    arcs, sibs, grands = [], [], []
    for _ in range(4):
        arc = rng.normal(size=(5, 5))
        mask = candidates(arc, 4)
        arcs.append(arc)
        for out, sibling in ((sibs, True), (grands, False)):
            triples = mask_triples(mask, sibling).astype(np.int64)
            out.append((triples, rng.normal(size=len(triples))))
    flat, sizes = pack(arcs)
    heads = hill_climb_batch(flat, sizes, *flat_factors(sibs), *flat_factors(grands)).heads
    for arc, sib, grand, tree in zip(arcs, sibs, grands, cut(heads, sizes)):
        cubes = [dense_cube(5, *f) for f in (sib, grand)]
        best = max(tree_score(t, arc, *cubes) for t in all_trees(4))
        assert tree_score(tree, arc, *cubes) == pytest.approx(best)


def test_batch_search_rejects_bad_input():
    flat, sizes = pack([np.zeros((3, 3))])
    with pytest.raises(ValueError):
        decode_mst_batch(flat[:-1], sizes)
    bad = flat.copy()
    bad[1] = np.nan
    with pytest.raises(ValueError):
        hill_climb_batch(bad, sizes)
    with pytest.raises(ValueError):
        hill_climb_batch(flat, sizes, np.array([1]), np.array([[0, 0, 9]]), np.array([1.0]))
    with pytest.raises(ValueError):
        hill_climb_batch(flat, sizes, max_restarts=0)
