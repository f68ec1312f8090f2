"""The registered decoders' default settings keep the properties they were chosen for.

Conventions as in ``spacy_hcparse.decoders``: index 0 is the root; ``arc[h, m]``,
``sib[h, s, m]``, ``grand[g, h, m]``.
"""
import numpy as np
import pytest

from spacy_hcparse.decoders import decode_dual
from spacy_hcparse.decoders.batch import pack
from spacy_hcparse.graph.decoding import HillClimb, make_dual
from tests.decoders.brute import best_tree, random_scores


def test_dual_v1_finishes_with_branch_and_bound():
    # Random N(0, 1) scores over 5 words: 200 subgradient iterations alone (Dual.v1 without
    # branch and bound) leave this sentence uncertified; Dual.v1's defaults prove the optimum.
    rng = np.random.default_rng(1)
    n = 5
    arc, sib, grand = random_scores(rng, n, True, True)
    decoder = make_dual()
    alone = decode_dual(arc, sib, grand, max_iter=decoder.options["max_iter"])
    assert not alone.certified
    result = decoder(arc, sib, grand)
    best, _ = best_tree(n, arc, sib, grand)
    assert result.certified and result.score == pytest.approx(best, abs=1e-9)
    assert result.upper_bound == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("chunk", [1, 2, 64])
def test_hill_climb_batch_is_each_span_alone(training_scores, chunk):
    """``HillClimb.decode_batch`` (its first span alone, then compiled calls of ``CHUNK`` spans)
    gives every span the tree, score and restarts of ``__call__`` on that span alone (no time
    limit to cut either)."""
    scores, _ = training_scores
    decoder = HillClimb(time_limit=None, max_restarts=4, min_restarts=1, converge=2, uniform_share=0.5, seed=3)
    decoder.CHUNK = chunk
    arcs, sizes = pack([scores.pruned_arc(i) for i in range(len(scores))])
    got = decoder.decode_batch(scores, arcs, sizes, [None] * len(sizes))
    assert len(got) == len(scores) > 2
    for i, result in enumerate(got):
        alone = decoder(scores.pruned_arc(i), *scores.cubes(i, decoder.factors))
        assert (result.heads.tolist(), result.score, result.restarts) == (alone.heads.tolist(), alone.score,
                                                                          alone.restarts)
