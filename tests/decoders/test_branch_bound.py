"""Branch and bound over dual decomposition: proven answers are optimal (brute force, n <= 6),
capped answers carry an upper bound >= the optimum, and it closes sentences the dual alone
leaves open."""
import numpy as np

from spacy_hcparse.decoders._checks import zero_unused
from spacy_hcparse.decoders.absent import with_floor
from spacy_hcparse.decoders.branch_bound import branch_and_bound
from spacy_hcparse.decoders.dual import DualEngine

from .brute import best_tree, random_scores


def _engine(arc, sib, grand, iters):
    allowed = with_floor(zero_unused(arc), sib, grand)
    engine = DualEngine.build(allowed, sib, grand)
    engine.run(iters)
    return engine


def test_proves_or_bounds_on_hard_random_scores():
    rng = np.random.default_rng(0)
    opened = proven = 0
    for _ in range(40):
        n = int(rng.integers(3, 7))
        arc, sib, grand = random_scores(rng, n, True, True)
        engine = _engine(arc, sib, grand, 5)
        best, argbest = best_tree(n, arc, sib, grand)
        if engine.certified:
            continue
        opened += 1
        result = branch_and_bound(engine, engine.best_heads, engine.score, max_nodes=400)
        assert result.upper_bound >= best - 1e-9
        assert result.score <= best + 1e-9
        if result.proven:
            proven += 1
            assert abs(result.score - best) <= 1e-9
            assert any(np.array_equal(result.heads, h) for h in argbest)
    assert opened >= 10 and proven >= 0.8 * opened


def test_caps_give_an_honest_gap():
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = 6
        arc, sib, grand = random_scores(rng, n, True, True)
        engine = _engine(arc, sib, grand, 2)
        if engine.certified:
            continue
        best, _ = best_tree(n, arc, sib, grand)
        result = branch_and_bound(engine, engine.best_heads, engine.score, max_nodes=1)
        assert result.nodes <= 2
        assert result.upper_bound >= best - 1e-9 and result.upper_bound >= result.score
        assert result.upper_bound <= max(engine.bound, result.score)  # never above the root's
        assert result.proven == (result.upper_bound <= result.score + 1e-9 * (1 + abs(result.score)))
