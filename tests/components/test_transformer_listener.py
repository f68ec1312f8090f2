"""hc_parser listening to a spacy-transformers ``transformer`` component (CPU).

The transformer is a tiny BERT with random weights, written with its tokenizer into tmp_path:
nothing is downloaded. Needs the ``transformers`` extra (spacy-transformers, torch).
"""
import numpy as np
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


def frozen_concat_config(name: str, mix: bool = False) -> str:
    """CONFIG with the configs/ewt_trf.cfg recipe: hc_parser's own embeddings followed by the
    transformer's rows (ConcatTok2Vec), a BiLSTM over them; ``mix``: the rows are a learned mix of
    the transformer's hidden layers (TransformerLayersListener.v1)."""
    listener = CONFIG[CONFIG.index("[components.hc_parser.model.tok2vec]"):]
    own = """[components.hc_parser.model.tok2vec]
@architectures = "spacy_hcparse.ConcatTok2Vec.v1"

[components.hc_parser.model.tok2vec.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[components.hc_parser.model.tok2vec.tok2vec.embed]
@architectures = "spacy.MultiHashEmbed.v2"
width = 16
attrs = ["NORM", "SHAPE"]
rows = [100, 20]
include_static_vectors = false

[components.hc_parser.model.tok2vec.tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 16
depth = 1
window_size = 1
maxout_pieces = 2

"""
    features = listener.replace("[components.hc_parser.model.tok2vec]", "[components.hc_parser.model.tok2vec.features]")
    features = features.replace("[components.hc_parser.model.tok2vec.pooling]",
                                "[components.hc_parser.model.tok2vec.features.pooling]")
    context = """
[components.hc_parser.model.context]
@architectures = "spacy_hcparse.BiLSTMContext.v1"
width = 16
depth = 1
dropout = 0.0
"""
    if mix:
        features = features.replace('@architectures = "spacy-transformers.TransformerListener.v1"',
                                    '@architectures = "spacy_hcparse.TransformerLayersListener.v1"\nlayers = [0, 1, 2]')
    text = CONFIG[:CONFIG.index("[components.hc_parser.model.tok2vec]")] + own + features + context
    if mix:
        text = text.replace("[components.transformer.model.transformer_config]\n",
                            "[components.transformer.model.transformer_config]\noutput_hidden_states = true\n")
    return text.replace("context = null\n", "").replace("{name}", name)


@pytest.mark.parametrize("mix", [False, True], ids=["last_layer", "layer_mix"])
def test_a_frozen_cached_transformer_runs_once_per_doc_and_hc_parser_trains_on_it(tmp_path, monkeypatch, mix):
    """configs/ewt_trf.cfg's training: the transformer frozen and annotating, initialized by
    initialize_frozen.v1 with cache_outputs; each doc goes through the transformer once, with the
    output the uncached component gives; hc_parser learns over ConcatTok2Vec."""
    pytest.importorskip("spacy_transformers")
    name = tiny_bert(tmp_path / "tiny-bert", monkeypatch)
    spacy.util.fix_random_seed(0)
    config = spacy.util.load_config_from_str(frozen_concat_config(name, mix))
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = make_examples(nlp)
    callback = spacy.util.registry.callbacks.get("spacy_hcparse.initialize_frozen.v1")
    callback(components=["transformer"], cache_outputs=True)(nlp)
    transformer = nlp.get_pipe("transformer")
    plain = [data.model_output.last_hidden_state.copy()
             for data in transformer.model.predict([eg.predicted for eg in examples]).doc_data]
    calls = []
    predict = transformer.model.predict
    transformer.model.predict = lambda docs: calls.append(len(docs)) or predict(docs)
    with nlp.select_pipes(disable=["transformer"]):
        optimizer = nlp.initialize(lambda: examples)
    history = []
    for _ in range(15):
        losses = {}
        fresh = [eg.__class__(Doc(nlp.vocab, words=[t.text for t in eg.predicted]), eg.reference) for eg in examples]
        nlp.update(fresh, sgd=optimizer, losses=losses, exclude=["transformer"], annotates=["transformer"])
        history.append(losses["hc_parser"])
    assert sum(calls) == len(examples), calls  # every doc once, over 15 updates
    assert history[-1] < 0.8 * history[0], history
    for doc, expected in zip(transformer.pipe([eg.predicted for eg in fresh]), plain):
        assert np.allclose(doc._.trf_data.model_output.last_hidden_state, expected)
    assert sum(calls) == len(examples)
    if mix:  # the layer weights learned, and travel with the pipeline
        weights = next(n for n in nlp.get_pipe("hc_parser").model.walk() if n.name == "layer_mix").get_param("w")
        assert np.abs(weights).max() > 0
        texts = [Doc(nlp.vocab, words=words) for words, _, _ in SENTENCES]
        nlp.to_disk(tmp_path / "pipeline")
        loaded = spacy.load(tmp_path / "pipeline")
        assert parses(loaded.pipe(texts)) == parses(nlp.pipe(Doc(nlp.vocab, words=[t.text for t in d]) for d in texts))
