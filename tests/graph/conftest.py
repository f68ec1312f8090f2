"""Shared fixtures of the graph parser's tests."""
import pytest

from spacy_hcparse.graph.decoding import HillClimb
from spacy_hcparse.graph.scores import GraphInput

from ..components.test_graph_parser import train_tiny
from ..treebank import make_examples


@pytest.fixture(scope="module")
def training_scores():
    """(numpy training scores with sibling and grandparent factors, gold) of the tiny treebank
    under a parser trained for a few epochs."""
    nlp = train_tiny(decoder="eisner", epochs=5)
    pipe = nlp.get_pipe("hc_parser")
    examples = make_examples(nlp)
    batch = pipe.batch_gold(examples)
    keep = [None if g is None else g[0] for g in batch.gold.spans]
    docs = [eg.predicted for eg in examples]
    scores, _ = pipe.model.begin_update(GraphInput(docs, batch.spans, keep, HillClimb.factors))
    return scores.to_numpy(pipe.model.ops), batch.gold
