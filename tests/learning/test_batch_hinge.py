"""learning.batch_hinge: the hinge's cost-augmented trees of a whole batch in one call give the same
loss and gradients as decoding them span by span."""
import numpy as np
import pytest

import spacy_hcparse.learning.graph_loss as graph_loss
from spacy_hcparse.graph.decoding import MST, Eisner
from spacy_hcparse.graph.scores import GraphInput
from spacy_hcparse.learning.batch_hinge import hinge_spans, hinge_trees
from spacy_hcparse.learning.graph_loss import GraphLoss

from ..components.test_graph_parser import train_tiny
from ..treebank import make_examples


@pytest.fixture(scope="module")
def training_scores():
    nlp = train_tiny(decoder="eisner", epochs=5)
    pipe = nlp.get_pipe("hc_parser")
    examples = make_examples(nlp)
    batch = pipe.batch_gold(examples)
    keep = [None if g is None else g[0] for g in batch.gold.spans]
    docs = [eg.predicted for eg in examples]
    scores, _ = pipe.model.begin_update(GraphInput(docs, batch.spans, keep, Eisner.factors))
    return scores.to_numpy(pipe.model.ops), batch.gold


def test_batched_trees_give_the_per_span_loss_and_gradients(training_scores, monkeypatch):
    scores, gold = training_scores
    loss = GraphLoss(Eisner(), hinge_weight=1.0, xent_weight=1.0)
    batched_loss, batched = loss(scores, gold)
    monkeypatch.setattr(graph_loss, "hinge_trees", lambda *args, **kwargs: None)
    per_span_loss, per_span = loss(scores, gold)
    assert batched_loss == per_span_loss and batched_loss > 0
    for name in ("arcs", "sib", "grand", "labels"):
        assert all(np.array_equal(a, b) for a, b in zip(getattr(batched, name), getattr(per_span, name)))


def test_trees_are_the_decoders(training_scores):
    scores, gold = training_scores
    trees = hinge_trees(scores, gold.spans, Eisner())
    todo = hinge_spans(scores, gold.spans)
    assert todo and all((trees[i] is None) == (i not in todo) for i in range(len(trees)))
    from spacy_hcparse.learning.hinge import hamming_augmented

    for i in todo:
        sib, grand = scores.cubes(i, Eisner.factors)
        expected = Eisner()(hamming_augmented(scores.pruned_arc(i), gold.spans[i][0]), sib, grand).heads
        assert trees[i].heads.tolist() == expected.tolist()
    assert hinge_trees(scores, gold.spans, MST()) is None
