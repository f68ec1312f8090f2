"""graph.batch_hinge: the hinge's cost-augmented trees of a whole batch are the decoder's trees
span by span."""
import pytest

from spacy_hcparse.decoders._checks import tree_problem
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

