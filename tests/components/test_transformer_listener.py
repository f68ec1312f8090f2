"""hc_parser listening to a spacy-transformers ``transformer`` component (CPU).

The transformer is a tiny BERT with random weights, written with its tokenizer into tmp_path:
nothing is downloaded. Needs the ``transformers`` extra (spacy-transformers, torch).
"""
import pytest
import spacy
from spacy.tokens import Doc

from tests import pretrained
from tests.treebank import SENTENCES, make_examples

pytestmark = pytest.mark.slow

CONFIG = """
[nlp]
lang = "en"
pipeline = ["transformer", "hc_parser"]

[components]

[components.transformer]
factory = "transformer"
max_batch_items = 4096

[components.transformer.model]
@architectures = "spacy-transformers.TransformerModel.v3"
name = "{name}"
mixed_precision = false

[components.transformer.model.get_spans]
@span_getters = "spacy-transformers.strided_spans.v1"
window = 128
stride = 96

[components.transformer.model.tokenizer_config]
use_fast = true

[components.transformer.model.transformer_config]

[components.hc_parser]
factory = "hc_parser"

[components.hc_parser.model]
@architectures = "spacy_hcparse.GraphParserModel.v8"
context = null

[components.hc_parser.model.arc_scorer]
@architectures = "spacy_hcparse.BiaffineArcScorer.v1"
width = 32
dropout = 0.1

[components.hc_parser.model.sibling_scorer]
@architectures = "spacy_hcparse.SiblingScorer.v1"
rank = 8
dropout = 0.1

[components.hc_parser.model.grand_scorer]
@architectures = "spacy_hcparse.GrandparentScorer.v1"
rank = 8
dropout = 0.1

[components.hc_parser.model.label_scorer]
@architectures = "spacy_hcparse.FullLabelScorer.v1"
width = 16
dropout = 0.1

[components.hc_parser.model.start_scorer]
@architectures = "spacy_hcparse.SentenceStartScorer.v1"
width = 8
dropout = 0.1

[components.hc_parser.model.tags]
@architectures = "spacy_hcparse.TagScorers.v1"
attrs = ["POS"]
from_context = false

[components.hc_parser.model.tok2vec]
@architectures = "spacy-transformers.TransformerListener.v1"
grad_factor = 1.0
upstream = "*"

[components.hc_parser.model.tok2vec.pooling]
@layers = "reduce_mean.v1"
"""


def tiny_bert(path, monkeypatch) -> str:
    """``tests.pretrained.tiny_bert`` over the test treebank's words."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return pretrained.tiny_bert(path, [w for s in SENTENCES for w in s[0]])


def parses(docs):
    return [[(t.head.i, t.dep_) for t in doc] for doc in docs]


def assert_valid_trees(doc):
    for sent in doc.sents:
        roots = [t for t in sent if t.head.i == t.i]
        assert len(roots) == 1, sent.text
        for t in sent:
            assert sent.start <= t.head.i < sent.end
            seen, node = set(), t
            while node.head.i != node.i:  # every word reaches the root: no cycle
                assert node.i not in seen
                seen.add(node.i)
                node = node.head


def test_hc_parser_trains_on_a_transformer_listener(tmp_path, monkeypatch):
    pytest.importorskip("spacy_transformers")
    name = tiny_bert(tmp_path / "tiny-bert", monkeypatch)
    spacy.util.fix_random_seed(0)
    config = spacy.util.load_config_from_str(CONFIG.replace("{name}", name))
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    history = []
    for _ in range(20):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        history.append(losses["hc_parser"])
    assert history[-1] < 0.8 * history[0], history

    texts = [Doc(nlp.vocab, words=words) for words, _, _ in SENTENCES]
    texts.append(Doc(nlp.vocab, words=[w for s in SENTENCES[:3] for w in s[0]]))  # segmented by the model
    docs = list(nlp.pipe(texts))
    for doc in docs:
        assert doc.has_annotation("DEP")
        assert_valid_trees(doc)

    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["transformer", "hc_parser"]
    assert parses(loaded.pipe(Doc(loaded.vocab, words=[t.text for t in doc]) for doc in texts)) == parses(docs)
