"""Exhaustive search over the arcs that survive dominance pruning: from any start tree it ends
at the optimum (brute force, n <= 6), and a node cap stops it unfinished."""
import numpy as np

from spacy_hcparse.decoders.absent import usable_mask
from spacy_hcparse.decoders.dominance import prune_dominated
from spacy_hcparse.decoders.enumeration import search_candidates
from spacy_hcparse.decoders.scoring import full_score

from .brute import all_trees, best_tree, random_scores


def test_finds_the_optimum_from_any_start():
    rng = np.random.default_rng(0)
    for _ in range(150):
        n = int(rng.integers(2, 7))
        arc, sib, grand = random_scores(rng, n, True, True)
        if rng.random() < 0.5:  # peaked, like trained scores
            gold = all_trees(n)[rng.integers(len(all_trees(n)))]
            arc[gold[1:], np.arange(1, n + 1)] += 3.0
            sib *= 0.3
            grand *= 0.3
        if rng.random() < 0.3:
            arc[rng.random(arc.shape) < 0.2] = -np.inf
        trees = [t for t in all_trees(n) if np.isfinite(arc[t[1:], np.arange(1, n + 1)]).all()]
        if not trees:
            continue
        start = trees[rng.integers(len(trees))]
        score = full_score(start, arc, sib, grand, True, True)
        cand = prune_dominated(arc, usable_mask(arc), sib, grand, True, True, score)
        finished, heads, value, _ = search_candidates(arc, cand, sib, grand, True, True, start,
                                                      score, 10**6)
        best, argbest = best_tree(n, arc, sib, grand)
        assert finished
        assert abs(value - best) <= 1e-9
        assert abs(full_score(heads, arc, sib, grand, True, True) - value) <= 1e-9


def test_node_cap():
    rng = np.random.default_rng(1)
    arc, sib, grand = random_scores(rng, 12, True, True)
    start = np.array([-1, 0] + list(range(1, 12)))  # a chain
    score = full_score(start, arc, sib, grand, True, True)
    cand = usable_mask(arc)
    finished, heads, value, nodes = search_candidates(arc, cand, sib, grand, True, True, start,
                                                      score, 50)
    assert not finished and nodes == 51
    assert value >= score and abs(full_score(heads, arc, sib, grand, True, True) - value) <= 1e-9
