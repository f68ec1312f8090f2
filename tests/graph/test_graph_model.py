"""GraphParserModel on any device: forward and backward under ``StrictOps`` (a stand-in GPU whose
arrays refuse numpy, see ``tests/strict_ops.py``) give the scores and gradients of ``NumpyOps``."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from thinc.api import Model, NumpyOps, Ops, fix_random_seed, set_dropout_rate

from spacy_hcparse.graph.scores import GraphInput, PredictedScores, TrainingScores
from spacy_hcparse.graph import graph_parts as parts
from spacy_hcparse.graph.graph_model import (
    build_graph_parser_model, build_graph_parser_model_v5, resize_labels, tree_label_scores,
)
from spacy_hcparse.segment import segment_docs, sentence_spans
from tests.strict_ops import DeviceArray, DeviceLeak, StrictOps, strict_xp, teach_thinc, to_ops
from tests.treebank import SENTENCES, make_doc_with_sentences

N_LABELS = 5


@pytest.fixture(autouse=True)
def thinc_knows_the_device(monkeypatch):
    teach_thinc(monkeypatch)


def tiny_tok2vec(width: int = 12, rows: int = 97) -> Model:
    """Token vectors from a table row per word (its ``orth`` modulo ``rows``), on ``model.ops``."""

    def forward(model, docs, is_train):
        table = model.get_param("E")
        ids = [model.ops.asarray1i([t.orth % rows for t in doc]) for doc in docs]
        vecs = [table[i] for i in ids]

        def backprop(d_vecs):
            d_table = model.ops.alloc2f(*table.shape)
            for i, d in zip(ids, d_vecs):
                model.ops.scatter_add(d_table, i, model.ops.xp.ascontiguousarray(d))
            model.inc_grad("E", d_table)
            return []

        return vecs, backprop

    def init(model, X=None, Y=None):
        table = np.random.RandomState(1).normal(size=(rows, width)).astype("f")
        model.set_param("E", model.ops.asarray2f(table))

    return Model("tiny_tok2vec", forward, init=init, dims={"nO": width}, params={"E": None})


def build(kind: str = "full", *, lstm_width: int = 0, label_rank: int = 0, sentence_lstm_width: int = 0,
          label_lstm_width: int = 0, tags_from_context: bool = False) -> Model:
    """A tiny ``GraphParserModel.v8`` from its parts: ``"full"`` with sentence starts and a POS
    head (read from the tok2vec rows unless ``tags_from_context``), ``"plain"`` without either;
    low-rank labels with ``label_rank``, else full-rank; a BiLSTM context of ``lstm_width``, a
    doc BiLSTM for the start scorer of ``sentence_lstm_width``, the labels' own BiLSTM of
    ``label_lstm_width`` (0: none). ``"v5"``: the same from ``GraphParserModel.v5``'s sizes
    (tags from the context)."""
    fix_random_seed(0)
    if kind == "v5":
        model = build_graph_parser_model_v5(
            tiny_tok2vec(), lstm_width=lstm_width, arc_width=8, label_width=6, label_rank=label_rank, sibling_rank=4,
            grand_rank=4, dropout=0.0, top_k=3, sentence_width=5, tag_attrs=("POS",), nO=N_LABELS)
        model.set_dim("nT_POS", 4)
        return model
    labels = parts.low_rank_label_scorer(6, label_rank, 0.0) if label_rank else parts.full_label_scorer(6, 0.0)
    if label_lstm_width:
        labels = parts.encoded_label_scorer(parts.bilstm_context(label_lstm_width, 1, 0.0), labels)
    full = kind == "full"
    start_context = parts.bilstm_context(sentence_lstm_width, 1, 0.0) if sentence_lstm_width else None
    model = build_graph_parser_model(
        tiny_tok2vec(), parts.biaffine_arc_scorer(8, 0.0), parts.sibling_scorer(4, 0.0),
        parts.grandparent_scorer(4, 0.0), labels,
        context=parts.bilstm_context(lstm_width, 1, 0.0) if lstm_width else None,
        start_scorer=parts.sentence_start_scorer(5, 0.0, start_context) if full else None,
        tags=parts.tag_scorers(["POS"], from_context=tags_from_context) if full else None, top_k=3, nO=N_LABELS)
    if full:
        model.set_dim("nT_POS", 4)
    return model


def batch():
    """Three docs: one sentence, one of several given sentences, one the model segments itself."""
    nlp = spacy.blank("en")
    first = Doc(nlp.vocab, words=SENTENCES[3][0])
    several = make_doc_with_sentences(nlp, SENTENCES[:5])
    unsegmented = Doc(nlp.vocab, words=[w for s in SENTENCES[5:] for w in s[0]])
    docs = [first, several, unsegmented]
    spans = [sentence_spans(first, 100), sentence_spans(several, 100), None]
    return docs, spans


def keep_of(spans):
    """Gold-like trees to keep (``GraphInput.keep``): each word headed by its left neighbour."""
    keep = []
    for doc_spans in spans:
        for start, end in doc_spans or []:
            keep.append(np.array([-1] + list(range(end - start)), dtype=np.int64))
    return keep


def chain_labels(model, scores):
    """Label scores (on the host) of every span of ``scores`` on the tree where each word is
    headed by its left neighbour: at prediction the model scores them after decoding."""
    trees = [np.array([-1] + list(range(end - start)), dtype=np.int64)
             for doc_spans in scores.spans for start, end in doc_spans]
    return tree_label_scores(model, scores, trees)


def pair(version: str, reference=NumpyOps, **options):
    """The same initialized model on ``reference`` ops (numpy) and on the strict device, every
    parameter random (the zero-initialized ones too, so that every score depends on them)."""
    docs, spans = batch()
    cpu = build(version, **options)
    cpu.initialize(X=GraphInput(docs, spans))
    to_ops(cpu, reference())
    device = build(version, **options)
    device.initialize(X=GraphInput(docs, spans))
    rng = np.random.default_rng(0)
    for a, b in zip(cpu.walk(), device.walk()):
        for name in a.param_names:
            if a.has_param(name):
                value = (0.3 * rng.normal(size=a.get_param(name).shape)).astype("f")
                a.set_param(name, value)
                b.set_param(name, value.copy())
    to_ops(device, StrictOps())
    return cpu, device, docs, spans


def gradient_like(values, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=np.shape(v)).astype("f") for v in values]


def zeros_like(values):
    """Zero gradients shaped as ``values``."""
    return [np.zeros(np.shape(v), dtype="f") for v in values]


def close(a, b):
    return np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=1e-4, atol=1e-5)


# What a layer must not do with its ops' arrays, as code of the package (the strict device
# judges numpy calls by the calling module).
LEAKS = """
import numpy as np

def split(X):
    return np.split(X, [2])

def index(X):
    return X[np.array([0, 1])]

def operand(X):
    return X + np.ones(X.shape, dtype="f")

def to_host(X):
    return np.asarray(X, dtype=np.float64)
"""


@pytest.mark.parametrize("leak", ["split", "index", "operand", "to_host"])
def test_strict_ops_catch_numpy_in_device_code(leak):
    layer = {"__name__": "spacy_hcparse.layers.leaky"}
    exec(LEAKS, layer)
    X = StrictOps().alloc2f(6, 3)
    with pytest.raises(DeviceLeak):
        layer[leak](X)


def test_strict_ops_arrays_flow_through_xp():
    ops = StrictOps()
    X = ops.alloc2f(6, 3)
    assert isinstance(X, DeviceArray) and isinstance(ops.xp.vstack([X, X]), DeviceArray)
    assert isinstance(X[ops.xp.asarray(np.array([0, 1]))], DeviceArray)  # moved first: fine
    with pytest.raises(DeviceLeak):
        strict_xp.concatenate([X, np.ones((1, 3), dtype="f")])
    assert type(ops.to_numpy(X)) is np.ndarray


@pytest.mark.parametrize("version,reference,options", [
    ("full", NumpyOps, {}),  # full-rank labels, sentence starts, tag scorers
    ("plain", NumpyOps, {"label_rank": 4}),  # low-rank labels, no sentence starts or tags
    # A BiLSTM context: NumpyOps' compiled forward on the host, layers.lstm's array code on the
    # device, one backward pass on both.
    ("full", NumpyOps, {"label_rank": 4, "lstm_width": 6}),
    ("full", NumpyOps, {"label_rank": 4, "lstm_width": 6, "tags_from_context": True}),  # tags read the BiLSTM
    ("v5", NumpyOps, {"label_rank": 4, "lstm_width": 6}),
    ("full", NumpyOps, {"label_rank": 4, "lstm_width": 6, "sentence_lstm_width": 4}),  # starts read a doc BiLSTM
    ("full", NumpyOps, {"label_rank": 4, "lstm_width": 6, "label_lstm_width": 4}),  # labels' own BiLSTM
])
def test_training_forward_and_backward_stay_on_the_device(version, reference, options):
    cpu, device, docs, spans = pair(version, reference, **options)
    X = GraphInput(docs, spans, keep=keep_of(spans))
    expected, bp_cpu = cpu.begin_update(X)
    scores, bp_device = device.begin_update(X)
    assert all(isinstance(a, DeviceArray) for a in scores.arcs + scores.sib + scores.grand + scores.labels)
    host = scores.to_numpy(device.ops)
    assert all(type(a) is np.ndarray for a in host.arcs + host.sib + host.grand + host.labels)
    assert sum(len(s) for s in host.sib) > 0 and sum(len(g) for g in host.grand) > 0
    for field in ("arcs", "sib", "grand", "labels", "starts"):
        assert all(close(a, b) for a, b in zip(getattr(host, field), getattr(expected, field))), field
    assert all(close(a, b) for a, b in zip(host.tags.get("POS", []), expected.tags.get("POS", [])))
    assert [m.tolist() for m in host.masks] == [m.tolist() for m in expected.masks]

    # the loss's gradients come from the host (numpy), as the component hands them over
    grads = expected.like(*(gradient_like(getattr(expected, f), seed) for seed, f in
                            enumerate(("arcs", "sib", "grand", "labels", "starts"))),
                          tags={attr: gradient_like(v, 9) for attr, v in expected.tags.items()})
    bp_cpu(grads)
    bp_device(grads)
    for a, b in zip(cpu.walk(), device.walk()):
        for name in a.param_names:
            if a.has_grad(name):
                d_device = device.ops.to_numpy(b.get_grad(name))
                assert close(d_device, a.get_grad(name)), (a.name, name)


def test_a_factor_type_nobody_reads_is_not_scored_in_training():
    """Given only sibling factors (a loss whose decoder reads no grandparents), training does not
    run the grandparent scorer: its scores are empty, its parameters get no gradient, and every
    other gradient is the one of all factors with zero grandparent gradients."""
    def run(factors, zero_grand):
        model = pair("full", label_rank=4, lstm_width=6)[0]
        for node in model.walk():
            if "rate" in node.attrs:
                node.attrs["rate"] = 0.0
        set_dropout_rate(model, 0.0)
        docs, spans = batch()
        scores, backprop = model.begin_update(GraphInput(docs, spans, keep_of(spans), frozenset(factors)))
        grads = scores.like(*(gradient_like(getattr(scores, f), seed) for seed, f in
                              enumerate(("arcs", "sib", "grand", "labels", "starts"))),
                            tags={attr: gradient_like(v, 9) for attr, v in scores.tags.items()})
        if zero_grand:
            grads.grand = zeros_like(scores.grand)
        backprop(grads)
        return model, scores

    sib_only, scores = run({"sib"}, False)
    both, _ = run({"sib", "grand"}, True)
    assert all(len(g) == 0 for g in scores.grand) and sum(len(s) for s in scores.sib) > 0
    grand_scorer = sib_only.get_ref("grand_scorer")
    assert not any(node.has_grad(name) for node in grand_scorer.walk() for name in node.param_names)
    grand_nodes = {node.id for node in grand_scorer.walk()}
    for a, b in zip(sib_only.walk(), both.walk()):
        for name in a.param_names:
            if a.id not in grand_nodes and b.has_grad(name):
                assert close(a.get_grad(name), b.get_grad(name)), (a.name, name)


@pytest.mark.parametrize("version,options", [("full", {}), ("plain", {"label_rank": 4})])
def test_prediction_stays_on_the_device(version, options):
    cpu, device, docs, spans = pair(version, **options)
    X = GraphInput(docs, spans)
    expected = cpu.predict(X)  # the numba fast path for the triples on the CPU
    host = device.predict(X).to_numpy(device.ops)
    for field in ("arcs", "sib", "grand"):
        assert all(close(a, b) for a, b in zip(getattr(host, field), getattr(expected, field))), field
    assert host.spans == expected.spans and host.sentences == expected.sentences
    assert all(close(a, b) for a, b in zip(chain_labels(device, host), chain_labels(cpu, expected)))


def test_labels_on_demand_are_the_training_scores():
    """At prediction no label scores are computed in advance; those ``tree_labels`` asks for
    equal the scores training computes on the same (kept) arcs."""
    cpu, _, docs, spans = pair("full")
    predicted = cpu.predict(GraphInput(docs[:2], spans[:2]))
    assert isinstance(predicted, PredictedScores) and len(predicted.blocks) == len(predicted)
    trained, _ = cpu.begin_update(GraphInput(docs[:2], spans[:2], keep_of(spans[:2])))
    assert isinstance(trained, TrainingScores) and not isinstance(trained, PredictedScores)
    on_demand = chain_labels(cpu, predicted)
    assert len(on_demand) == len(trained.labels) == 1 + len(spans[1])
    assert all(close(a, b) for a, b in zip(on_demand, trained.labels))
    one = tree_label_scores(cpu, predicted, [keep_of(spans[:2])[1]], [1])[0]
    assert close(one, on_demand[1])


def test_numpy_ops_results_are_numpy():
    cpu, _, docs, spans = pair("full")
    assert isinstance(cpu.ops, NumpyOps)
    scores = cpu.predict(GraphInput(docs, spans))
    assert all(type(a) is np.ndarray for a in scores.arcs + chain_labels(cpu, scores))


@pytest.mark.parametrize("version,options", [("plain", {"label_rank": 4}), ("full", {}), ("full", {"label_rank": 4}),
                                             ("full", {"label_rank": 4, "label_lstm_width": 4})])
def test_resize_labels_keeps_every_other_score(version, options):
    model = build(version, **options)
    docs, spans = batch()
    X = GraphInput(docs, spans)
    model.initialize(X=X)
    rng = np.random.default_rng(0)
    scorer = model.get_ref("label_scorer")
    for name in scorer.param_names:  # trained-like weights: zero-initialized ones too
        scorer.set_param(name, (0.3 * rng.normal(size=scorer.get_param(name).shape)).astype("f"))
    before = model.predict(X)
    before_labels = chain_labels(model, before)  # now: labels are scored on demand, by the model as it is
    assert resize_labels(model, N_LABELS + 2) is model
    assert model.get_dim("nO") == model.get_ref("label_scorer").get_dim("nO") == N_LABELS + 2
    assert model.get_ref("label_scorer") is not scorer and model.get_ref("label_scorer") in list(model.walk())
    after = model.predict(X)
    for field in ("arcs", "sib", "grand"):
        assert all(np.array_equal(a, b) for a, b in zip(getattr(before, field), getattr(after, field))), field
    for old, new in zip(before_labels, chain_labels(model, after)):
        assert np.array_equal(new[:, :N_LABELS], old) and not new[:, N_LABELS:].any()
    with pytest.raises(ValueError, match="shrink"):
        resize_labels(model, N_LABELS)


def test_resize_labels_before_initialization_sets_the_dimension():
    model = build("full")
    resize_labels(model, N_LABELS + 1)
    docs, spans = batch()
    model.initialize(X=GraphInput(docs, spans))
    assert all(s.shape[1] == N_LABELS + 1 for s in chain_labels(model, model.predict(GraphInput(docs, spans))))


def test_resize_labels_on_the_device():
    cpu, device, docs, spans = pair("full")
    X = GraphInput(docs, spans)
    resize_labels(cpu, N_LABELS + 1)
    resize_labels(device, N_LABELS + 1)
    assert isinstance(device.get_ref("label_scorer").get_param("U"), DeviceArray)
    host = device.predict(X).to_numpy(device.ops)
    assert all(close(a, b) for a, b in zip(chain_labels(device, host), chain_labels(cpu, cpu.predict(X))))


def test_sentence_starts_are_scored_where_read():
    """At prediction the start scorer runs only for a batch with a doc to segment, or when asked
    (a rehearsal teacher); the parses of given sentences do not change either way."""
    cpu, _, docs, spans = pair("full")
    given = cpu.predict(GraphInput(docs[:2], spans[:2]))
    assert [len(s) for s in given.starts] == [0, 0]
    asked = cpu.predict(GraphInput(docs[:2], spans[:2], starts=True))
    assert [len(s) for s in asked.starts] == [len(d) for d in docs[:2]]
    assert all(close(a, b) for a, b in zip(given.arcs, asked.arcs))
    mixed = cpu.predict(GraphInput(docs, spans))
    assert [len(s) for s in mixed.starts] == [len(d) for d in docs]


def test_segmentation_follows_the_start_scorer_and_blank_lines():
    """A doc to segment is cut where the start logit is positive and after every blank line
    (``segment.segment_docs``), never on whitespace."""
    cpu, _, _, _ = pair("full")
    nlp = spacy.blank("en")
    doc = nlp("I saw it .\n\nThen I left the house . She reads old books .")
    scores = cpu.predict(GraphInput([doc], [None]))
    begins = np.asarray(scores.starts[0]) > 0
    expected_spans, expected_sentences = segment_docs([doc], [None], [begins], 100)
    assert scores.spans == expected_spans and scores.sentences == expected_sentences
    assert 5 in scores.sentences[0] and 4 not in scores.sentences[0]  # "Then", after the "\n\n" token


@pytest.mark.parametrize("version,from_context", [("full", False), ("full", True), ("v5", True)])
def test_tag_objective_reaches_the_bilstm_from_the_context_only(version, from_context):
    """Tag heads reading the encoder's rows (``TagScorers.v1`` ``from_context``, ``.v5``'s): a tag
    gradient alone trains the BiLSTM; reading the tok2vec's, it does not."""
    options = {"tags_from_context": from_context} if version == "full" else {}
    cpu, _, docs, spans = pair(version, lstm_width=6, **options)
    scores, backprop = cpu.begin_update(GraphInput(docs, spans, keep=keep_of(spans)))
    grads = scores.like(*(zeros_like(getattr(scores, f)) for f in ("arcs", "sib", "grand", "labels", "starts")),
                        tags={attr: gradient_like(v, 3) for attr, v in scores.tags.items()})
    backprop(grads)
    lstm = [node for node in cpu.walk() if node.name == "lstm"]
    assert lstm
    moved = any(node.has_grad(name) and np.abs(node.get_grad(name)).sum() > 0
                for node in lstm for name in node.param_names)
    assert moved == from_context


@pytest.mark.parametrize("far", [False, True])
def test_start_scorer_with_a_context_reads_the_whole_doc(far):
    """Start logits reading a BiLSTM over the doc (``SentenceStartScorer.v1`` ``context``, what
    ``.v6`` added): a word far away changes them. Without it they read a token and the one before
    it only (here the tok2vec is a lookup table)."""
    model = build("full", sentence_lstm_width=4 if far else 0)
    nlp = spacy.blank("en")
    words = [w for s in SENTENCES[:3] for w in s[0]]
    docs = [Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words[:-1] + ["elsewhere"])]
    model.initialize(X=GraphInput(docs, [None, None]))
    starts = model.predict(GraphInput(docs, [None, None], starts=True)).starts
    assert not close(starts[0][-1:], starts[1][-1:])
    assert np.array_equal(starts[0][:3], starts[1][:3]) != far


def test_start_context_round_trips_through_bytes():
    """The start scorer's BiLSTM is saved and loaded with the model."""
    nlp = spacy.blank("en")
    docs = [Doc(nlp.vocab, words=[w for s in SENTENCES[:3] for w in s[0]])]
    model = build("full", sentence_lstm_width=4)
    model.initialize(X=GraphInput(docs, [None]))
    copy = build("full", sentence_lstm_width=4)
    copy.initialize(X=GraphInput(docs, [None]))
    for node in copy.walk():  # nothing left of the copy's own initialization
        for name in node.param_names:
            if node.has_param(name):
                node.set_param(name, np.zeros_like(node.get_param(name)))
    copy.from_bytes(model.to_bytes())
    expected = model.predict(GraphInput(docs, [None], starts=True)).starts
    assert np.array_equal(copy.predict(GraphInput(docs, [None], starts=True)).starts[0], expected[0])


def test_encoded_labels_read_their_own_bilstm():
    """``EncodedLabelScorer.v1``'s label scores (``.v7``'s) read a BiLSTM of their own: the label
    gradient alone trains it, and the model (label encoder included) round-trips through bytes."""
    cpu, _, docs, spans = pair("full", label_rank=4, lstm_width=6, label_lstm_width=4)
    X = GraphInput(docs, spans, keep=keep_of(spans))
    scores, backprop = cpu.begin_update(X)
    backprop(scores.like(*(zeros_like(getattr(scores, f)) for f in ("arcs", "sib", "grand")),
                         gradient_like(scores.labels, 4), zeros_like(scores.starts),
                         tags={attr: zeros_like(v) for attr, v in scores.tags.items()}))
    encoder = cpu.get_ref("label_encoder")
    assert cpu.get_ref("label_scorer") in encoder.layers
    assert np.abs(encoder.layers[0].layers[0].get_grad("LSTM")).sum() > 0
    copy = build("full", label_rank=4, lstm_width=6, label_lstm_width=4)
    copy.initialize(X=GraphInput(docs, spans))
    copy.from_bytes(cpu.to_bytes())
    expected = chain_labels(cpu, cpu.predict(GraphInput(docs, spans)))
    assert all(np.array_equal(a, b)
               for a, b in zip(chain_labels(copy, copy.predict(GraphInput(docs, spans))), expected))


@pytest.mark.parametrize("label_rank", [0, 4])
def test_v5_is_v8_with_the_same_parameter_layout(label_rank):
    """``.v5`` is ``.v8`` assembled from its sizes: the same nodes in the same order with the same
    parameters, so weights saved from one load into the other and give the same scores."""
    docs, spans = batch()
    old, new = build("v5", lstm_width=6, label_rank=label_rank), build(
        "full", lstm_width=6, label_rank=label_rank, tags_from_context=True)
    for model in (old, new):
        model.initialize(X=GraphInput(docs, spans))
    layout = lambda m: [(n.name, sorted((p, n.get_param(p).shape) for p in n.param_names if n.has_param(p)))  # noqa: E731
                        for n in m.walk()]
    assert layout(old) == layout(new)
    new.from_bytes(old.to_bytes())
    X = GraphInput(docs, [spans[0], spans[1], None], tags=("POS",))
    a, b = old.predict(X), new.predict(X)
    for field in ("arcs", "sib", "grand", "starts"):
        assert all(np.array_equal(x, y) for x, y in zip(getattr(a, field), getattr(b, field))), field
    assert all(np.array_equal(x, y) for x, y in zip(a.tags["POS"], b.tags["POS"]))
    assert all(np.array_equal(x, y) for x, y in zip(chain_labels(old, a), chain_labels(new, b)))


@pytest.mark.parametrize("with_unsegmented", [False, True])
def test_prediction_copies_to_the_host_per_batch_not_per_doc(monkeypatch, with_unsegmented):
    """On a device every copy to the host is a synchronization: a batch of four times the docs
    makes as many copies as one of the docs (scores and sentence starts cross once per batch)."""
    _, device, docs, spans = pair("full", label_rank=4, lstm_width=6)
    if not with_unsegmented:
        docs, spans = docs[:2], spans[:2]
    copies = []
    real = StrictOps.to_numpy
    monkeypatch.setattr(StrictOps, "to_numpy", lambda self, data, **kw: copies.append(1) or real(self, data, **kw))

    def count(k):
        copies.clear()
        device.predict(GraphInput(docs * k, spans * k)).to_numpy(device.ops)
        return len(copies)

    assert count(4) == count(1)
