"""graph.batch_hinge and HillClimb.decode_batch: the trees of a whole batch (the hinge's
cost-augmented ones, a prediction's) are the decoder's trees span by span."""
import pytest

from spacy_hcparse.decoders._checks import tree_problem
from spacy_hcparse.decoders.batch import pack
from spacy_hcparse.graph.decoding import MST, Dual, Eisner, HillClimb
from spacy_hcparse.graph.batch_hinge import hinge_spans, hinge_trees
from spacy_hcparse.graph.batch_hinge import hamming_augmented


@pytest.mark.parametrize("decoder", [
    Eisner(), MST(), HillClimb(time_limit=None, max_restarts=None, min_restarts=5, converge=10, uniform_share=0.5),
    HillClimb(time_limit=None, max_restarts=4, min_restarts=1, converge=2, uniform_share=0.0, seed=3),
    Dual(time_limit=None, max_iter=20),
], ids=["eisner", "mst", "hill_climb", "hill_climb_few_restarts", "dual"])
def test_trees_are_the_decoders(training_scores, decoder):
    """Eisner's, the MST's and hill climbing's trees of the whole batch in one call, other
    decoders' span by span: each the tree the decoder finds on the span's Hamming-augmented
    pruned arcs and cubes (hill climbing's when its time limit does not cut), a valid tree."""
    scores, gold = training_scores
    trees = hinge_trees(scores, gold.spans, decoder)
    todo = hinge_spans(scores, gold.spans)
    assert todo and all((trees[i] is None) == (i not in todo) for i in range(len(trees)))
    for i in todo:
        sib, grand = scores.cubes(i, decoder.factors)
        expected = decoder(hamming_augmented(scores.pruned_arc(i), gold.spans[i][0]), sib, grand).heads
        assert tree_problem(trees[i]) == ""
        assert trees[i].tolist() == expected.tolist()


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
