"""hc_parser's ``projectivize`` setting: pseudo-projective training for a projective decoder
(crossing arcs lifted and their labels decorated in the gold, lowered again after decoding), the
fair projective baseline where trees cross."""
import spacy
from spacy.tokens import Doc

from spacy_hcparse.graph.graph_gold import batch_gold
from tests.decoders.brute import is_projective
from tests.treebank import SENTENCES, make_examples

from .test_graph_parser import TINY_MODEL, parse_of


def train_projectivized(epochs=60, seed=0):
    spacy.util.fix_random_seed(seed)
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser", config={"model": TINY_MODEL, "decoder": {"@misc": "spacy_hcparse.Eisner.v1"},
                                      "loss": {"decoder": {"@misc": "spacy_hcparse.Eisner.v1"}},
                                      "projectivize": True, "label_freq_cutoff": 1})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(epochs):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    return nlp, examples


def test_projectivized_gold_is_projective_with_decorated_labels():
    nlp = spacy.blank("en")
    examples = make_examples(nlp)
    labels = ["ROOT", "aux", "case", "det", "nmod", "nmod||nsubj", "nsubj", "obj", "obl", "punct", "mark", "ccomp",
              "obj||ccomp", "cop", "acl", "advmod", "cc", "conj", "amod"]
    plain = batch_gold(examples, labels, {}, 100)
    lifted = batch_gold(examples, labels, {}, 100, projectivize=True)
    crossing = [i for i, g in enumerate(plain.gold.spans) if not is_projective(g[0])]
    assert crossing
    assert all(is_projective(g[0]) for g in lifted.gold.spans)
    assert any(labels[label] == "nmod||nsubj" for i in crossing for label in lifted.gold.spans[i][1])
    uncrossed = [i for i in range(len(plain.gold.spans)) if i not in crossing]
    assert all((plain.gold.spans[i][0] == lifted.gold.spans[i][0]).all() for i in uncrossed)


def test_projectivized_eisner_parses_crossing_trees_back():
    """Trained with lifted gold, Eisner's projective trees are lowered into the treebank's
    non-projective ones (which plain Eisner cannot write)."""
    nlp, _ = train_projectivized()
    pipe = nlp.get_pipe("hc_parser")
    assert any("||" in label for label in pipe.labels)
    for words, heads, deps in SENTENCES:
        doc = nlp(Doc(nlp.vocab, words=words))
        assert parse_of(doc) == (heads, deps), words
        assert all("||" not in tok.dep_ for tok in doc)
