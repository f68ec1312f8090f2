"""hc_parser: learning a tiny treebank with every decoder, odd docs, round trips, processes."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.decoders import tree_problem
from spacy_hcparse.graph.decoding import make_certified, make_dual, make_eisner, make_hill_climb, make_mst
from tests.decoders.brute import is_projective
from tests.treebank import SENTENCES, make_doc_with_sentences, make_examples

NAMES = {"hill_climb": "HillClimb", "dual": "Dual", "mst": "MST", "eisner": "Eisner"}
DECODERS = {"hill_climb": make_hill_climb, "dual": make_dual, "mst": make_mst, "eisner": make_eisner}
# the tiny treebank has a non-projective sentence: tests that expect it parsed back name a
# non-projective decoder (the factory's default, Eisner, is projective)
NONPROJECTIVE = {"@misc": "spacy_hcparse.HillClimb.v2"}
TINY_MODEL = {
    "tok2vec": {"width": 32, "depth": 2, "embed_size": 500},
    "arc_scorer": {"width": 32},
    "label_scorer": {"width": 16},
    "sibling_scorer": {"rank": 8},
    "grand_scorer": {"rank": 8},
}
# GraphParserModel.v5's sizes for the same model (the factory's default but for its sizes)
TINY_V5 = {"@architectures": "spacy_hcparse.GraphParserModel.v5", "lstm_width": 128, "arc_width": 32,
           "label_width": 16, "label_rank": 128, "sibling_rank": 8, "grand_rank": 8, "dropout": 0.1}
FULL_LABELS = {"label_scorer": {"@architectures": "spacy_hcparse.FullLabelScorer.v1", "width": 16}, "context": None}


def train_tiny(decoder="hill_climb", epochs=60, seed=0, architecture=None, make=make_examples, **settings):
    """A parser trained on the tiny treebank; ``settings`` go into the model's config
    (``architecture``: a whole other model block, such as ``TINY_V5``)."""
    spacy.util.fix_random_seed(seed)
    nlp = spacy.blank("en")
    model = {**TINY_MODEL, **settings}
    if architecture:  # a new "@architectures" block needs its tok2vec spelled out in full
        tok2vec = {"@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None, "window_size": 1,
                   "maxout_pieces": 3, "subword_features": True, **TINY_MODEL["tok2vec"]}
        model = {**architecture, "tok2vec": tok2vec}
    nlp.add_pipe("hc_parser", config={"model": model, "decoder": {"@misc": f"spacy_hcparse.{NAMES[decoder]}.v1"}})
    examples = make(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(epochs):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    return nlp


@pytest.mark.parametrize("version", ["v5", "full_labels"])
def test_other_models_learn_tiny_treebank(version):
    """``GraphParserModel.v5`` and ``.v8`` with full-rank labels and no context."""
    nlp = train_tiny(architecture=TINY_V5) if version == "v5" else train_tiny(**FULL_LABELS)
    for words, heads, deps in SENTENCES:
        assert parse_of(nlp(Doc(nlp.vocab, words=words))) == (heads, deps), (version, words)


@pytest.fixture(scope="module")
def trained():
    return train_tiny()


def parse_of(doc):
    return [t.head.i - doc[0].sent.start + 1 if t.head.i != t.i else 0 for t in doc], [t.dep_ for t in doc]


def span_heads(doc, start, end):
    heads = [-1]
    for t in doc[start:end]:
        heads.append(0 if t.head.i == t.i else t.head.i - start + 1)
    return np.array(heads)


def assert_valid(doc):
    """One root per sentence, heads inside the sentence, no cycles, len unchanged."""
    for sent in doc.sents:
        heads = span_heads(doc, sent.start, sent.end)
        assert not tree_problem(heads), tree_problem(heads)
        assert all(sent.start <= t.head.i < sent.end for t in sent)
        assert sum(t.dep_ == "ROOT" for t in sent) == 1


@pytest.mark.parametrize("decoder", ["hill_climb", "dual", "mst", "eisner"])
def test_learns_tiny_treebank(decoder):
    nlp = train_tiny(decoder if decoder != "eisner" else "hill_climb")
    nlp.get_pipe("hc_parser").decoder = DECODERS[decoder]()
    for words, heads, deps in SENTENCES:
        doc = nlp(Doc(nlp.vocab, words=words))
        got_heads, got_deps = parse_of(doc)
        if decoder == "eisner" and not is_projective([-1] + heads):
            assert_valid(doc)
            continue
        assert got_heads == heads, (decoder, words)
        assert got_deps == deps, (decoder, words)


def test_preset_sentences_are_kept(trained):
    doc = trained(make_doc_with_sentences(trained))
    starts = [i == 0 for s in SENTENCES for i in range(len(s[0]))]
    assert [t.is_sent_start for t in doc] == starts
    assert_valid(doc)
    # The CNN sees across sentence boundaries here, unlike in training: most arcs still right.
    got = [h for sent in doc.sents for h in span_heads(doc, sent.start, sent.end)[1:]]
    gold = [h for _, heads, _ in SENTENCES for h in heads]
    assert np.mean(np.array(got) == np.array(gold)) >= 0.8


def test_extensions(trained):
    parser = trained.get_pipe("hc_parser")
    decoder, parser.decoder = parser.decoder, make_dual()
    try:
        doc = trained(Doc(trained.vocab, words=SENTENCES[3][0]))
    finally:
        parser.decoder = decoder
    assert isinstance(doc._.hc_parse_score, float)
    sent = next(doc.sents)
    assert sent._.hc_certified in (True, False)
    assert sent._.hc_upper_bound is None or sent._.hc_upper_bound >= doc._.hc_parse_score - 1e-6
    assert sent._.hc_score == doc._.hc_parse_score
    assert sent._.hc_gap is None or sent._.hc_gap >= 0.0
    assert all(isinstance(t._.hc_head_margin, float) for t in doc)
    assert all(0.0 <= t._.hc_head_prob <= 1.0 for t in doc)
    assert 0.0 < sent._.hc_parse_prob <= min(t._.hc_head_prob for t in doc) + 1e-9
    data = doc.to_json(underscore=["hc_head_margin", "hc_head_prob"])
    assert [v["value"] for v in data["underscore_token"]["hc_head_prob"]] == [t._.hc_head_prob for t in doc]


def test_certified_decoder_proves_its_trees(trained):
    parser = trained.get_pipe("hc_parser")
    decoder, parser.decoder = parser.decoder, make_certified()
    try:
        docs = [trained(Doc(trained.vocab, words=words)) for words, _, _ in SENTENCES]
    finally:
        parser.decoder = decoder
    for doc in docs:
        sent = next(doc.sents)
        assert sent._.hc_certified and sent._.hc_gap == 0.0
        assert sent._.hc_upper_bound >= sent._.hc_score - 1e-9


ODD_TEXTS = [
    [],
    ["Hello"],
    [" ", "  ", "\n"],
    ["Hi", " ", "there", "\t", "!"],
    ["🙂", "日本語", "Привет", "مرحبا", "ok", "."],
]


@pytest.mark.parametrize("words", ODD_TEXTS)
def test_odd_docs(trained, words):
    doc = trained(Doc(trained.vocab, words=words))
    assert len(doc) == len(words)
    if words:
        assert_valid(doc)


def test_long_doc_without_boundaries(trained):
    rng = np.random.default_rng(0)
    vocab = [w for s in SENTENCES for w in s[0]]
    words = [str(w) for w in rng.choice(vocab, size=1000)]
    doc = trained(Doc(trained.vocab, words=words))
    assert len(doc) == 1000
    assert_valid(doc)
    # parsed in spans of at most max_length words, each a sentence of its own
    pipe = trained.get_pipe("hc_parser")
    spans = pipe.predict([Doc(trained.vocab, words=words)])[0].spans
    assert spans[0][0] == 0 and spans[-1][1] == 1000
    assert max(end - start for start, end in spans) <= pipe.max_length
    assert [(s.start, s.end) for s in doc.sents] == spans


def test_long_unbroken_text_gets_sentences_with_their_extensions(trained):
    """3,000 words without punctuation or sentence boundaries: sentences of at most max_length
    words, each with its tree's extensions."""
    parser = trained.get_pipe("hc_parser")
    words = [w for s in SENTENCES for w in s[0] if w not in {".", ",", "!", "?"}]
    words = (words * (3000 // len(words) + 1))[:3000]
    decoder, parser.decoder = parser.decoder, make_mst()  # the extensions, not the search, under test
    try:
        doc = trained(Doc(trained.vocab, words=words))
    finally:
        parser.decoder = decoder
    sents = list(doc.sents)
    assert len(sents) >= 3000 // parser.max_length
    assert max(len(s) for s in sents) <= parser.max_length
    for sent in sents:
        assert sent._.hc_certified is True and sent._.hc_gap == 0.0
        assert 0.0 < sent._.hc_parse_prob <= 1.0 and isinstance(sent._.hc_score, float)
    assert doc._.hc_parse_score == pytest.approx(sum(s._.hc_score for s in sents))


def test_preset_sentence_longer_than_max_length_gets_its_extensions(trained):
    """A sentence the doc gives, longer than max_length: parsed in chunks joined into one tree,
    and its extensions combine the chunks' (scores added, probabilities multiplied)."""
    parser = trained.get_pipe("hc_parser")
    words = [w for s in SENTENCES for w in s[0]]
    words = (words * (250 // len(words) + 1))[:250]
    one_sentence = [True] + [False] * (len(words) - 1)
    decoder, parser.decoder = parser.decoder, make_mst()
    try:
        doc = trained(Doc(trained.vocab, words=words, sent_starts=one_sentence))
        spans = parser.predict([Doc(trained.vocab, words=words, sent_starts=one_sentence)])[0].spans
    finally:
        parser.decoder = decoder
    assert_valid(doc)
    (sent,) = doc.sents
    assert len(sent) == 250 and len(spans) >= 3
    chunks = [doc[start:end] for start, end in spans]
    assert sent._.hc_certified is True and sent._.hc_score == pytest.approx(doc._.hc_parse_score)
    assert sent._.hc_parse_prob == pytest.approx(np.prod([c._.hc_parse_prob for c in chunks]))


def test_doc_with_heads_is_overwritten(trained):
    words, heads, deps = SENTENCES[0]
    doc = Doc(trained.vocab, words=words, heads=[0, 0, 0, 0, 0], deps=["dep"] * 5)
    doc = trained(doc)
    assert parse_of(doc) == (heads, deps)


def test_empty_and_mixed_batches(trained):
    docs = [Doc(trained.vocab, words=w) for w in ODD_TEXTS] + [make_doc_with_sentences(trained)]
    out = list(trained.pipe(docs, batch_size=3))
    assert [len(d) for d in out] == [len(d) for d in docs]
    for doc in out:
        if len(doc):
            assert_valid(doc)


def test_to_bytes_round_trip(trained):
    doc1 = trained(make_doc_with_sentences(trained))
    nlp2 = spacy.blank("en")
    config = {k: v for k, v in trained.config["components"]["hc_parser"].items() if k != "factory"}
    nlp2.add_pipe("hc_parser", config=config)
    nlp2.from_bytes(trained.to_bytes())
    doc2 = nlp2(make_doc_with_sentences(nlp2))
    assert [t.head.i for t in doc1] == [t.head.i for t in doc2]
    assert [t.dep_ for t in doc1] == [t.dep_ for t in doc2]


def test_to_disk_round_trip(trained, tmp_path):
    trained.to_disk(tmp_path / "model")
    nlp2 = spacy.load(tmp_path / "model")
    doc1 = trained(make_doc_with_sentences(trained))
    doc2 = nlp2(make_doc_with_sentences(nlp2))
    assert [t.head.i for t in doc1] == [t.head.i for t in doc2]
    assert [t.dep_ for t in doc1] == [t.dep_ for t in doc2]


def test_search_settings_come_from_the_load_config(trained, tmp_path):
    """The saved cfg holds the labels; decoder and search options are the pipeline config's."""
    trained.to_disk(tmp_path / "model")
    options = {"max_restarts": 3, "min_restarts": 1, "converge": 1}
    decoder = {"@misc": "spacy_hcparse.Eisner.v1"}
    loss_decoder = {"@misc": "spacy_hcparse.HillClimb.v1", **options}
    config = {"components": {"hc_parser": {"decoder": decoder, "loss": {"decoder": loss_decoder}}}}
    nlp = spacy.load(tmp_path / "model", config=config)
    pipe = nlp.get_pipe("hc_parser")
    assert type(pipe.decoder).__name__ == "Eisner"
    assert {k: pipe.loss.decoder.options[k] for k in options} == options
    assert pipe.labels == trained.get_pipe("hc_parser").labels
    doc = nlp(make_doc_with_sentences(nlp))
    assert all(not tree_problem(np.array([-1] + [0 if t.head == t else t.head.i - s.start + 1 for t in s]))
               for s in doc.sents)


def test_corrupt_model_file_is_a_clear_error(trained, tmp_path):
    trained.to_disk(tmp_path / "model")
    (tmp_path / "model" / "hc_parser" / "model").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="hc_parser"):
        spacy.load(tmp_path / "model")


def test_label_mismatch_is_refused(trained, tmp_path):
    import srsly

    trained.to_disk(tmp_path / "model")
    cfg_path = tmp_path / "model" / "hc_parser" / "cfg"
    cfg = srsly.read_json(cfg_path)
    cfg["labels"] = cfg["labels"][:-1]
    srsly.write_json(cfg_path, cfg)
    with pytest.raises(ValueError, match="label"):
        spacy.load(tmp_path / "model")


def test_deterministic_training():
    a = train_tiny(epochs=5, seed=1)
    b = train_tiny(epochs=5, seed=1)
    doc_a = a(make_doc_with_sentences(a))
    doc_b = b(make_doc_with_sentences(b))
    assert [t.head.i for t in doc_a] == [t.head.i for t in doc_b]
    assert doc_a._.hc_parse_score == doc_b._.hc_parse_score


def test_multiprocess_gives_same_parses(trained, tmp_path):
    trained.to_disk(tmp_path / "model")
    nlp = spacy.load(tmp_path / "model")
    texts = [" ".join(w for w, _, _ in [(x, 0, 0) for x in s[0]]) for s in SENTENCES] * 3
    one = [[(t.head.i, t.dep_) for t in d] for d in nlp.pipe(texts)]
    two = [[(t.head.i, t.dep_) for t in d] for d in nlp.pipe(texts, n_process=2, batch_size=4)]
    assert one == two


def test_init_from_doc_uses_existing_parse(trained):
    parser = trained.get_pipe("hc_parser")
    parser.init_from_doc = True
    try:
        words, heads, deps = SENTENCES[4]
        doc = Doc(trained.vocab, words=words, heads=[h - 1 if h else i for i, h in enumerate(heads)], deps=deps)
        doc = trained(doc)
    finally:
        parser.init_from_doc = False
    assert_valid(doc)
    assert parse_of(doc)[0] == heads


@pytest.mark.parametrize("decoder", ["hill_climb", "eisner", "mst"])
def test_doc_arc_bonus_follows_a_strong_prior_and_keeps_its_labels(trained, decoder):
    parser = trained.get_pipe("hc_parser")
    words = SENTENCES[0][0]
    chain = [i - 1 if i else i for i in range(len(words))]  # a right-branching chain, root first
    labels = ["ROOT"] + ["obj"] * (len(words) - 1)
    saved = parser.doc_arc_bonus, parser.labeler.keep_doc_labels, parser.decoder
    parser.doc_arc_bonus, parser.labeler.keep_doc_labels, parser.decoder = 1000.0, True, DECODERS[decoder]()
    try:
        doc = trained(Doc(trained.vocab, words=words, heads=chain, deps=labels))
    finally:
        parser.doc_arc_bonus, parser.labeler.keep_doc_labels, parser.decoder = saved
    assert_valid(doc)
    assert [t.head.i for t in doc] == chain
    assert [t.dep_ for t in doc] == labels


def test_doc_arc_bonus_is_off_without_an_existing_parse(trained):
    parser = trained.get_pipe("hc_parser")
    words, heads, deps = SENTENCES[1]
    parser.doc_arc_bonus = 1000.0
    try:
        doc = trained(Doc(trained.vocab, words=words))
    finally:
        parser.doc_arc_bonus = 0.0
    assert parse_of(doc) == (heads, deps)


# a UPOS per dependency label of the tiny treebank, for a tagged copy of it
UPOS_OF = {"nsubj": "PRON", "ROOT": "VERB", "amod": "ADJ", "obj": "NOUN", "punct": "PUNCT", "det": "DET",
           "case": "ADP", "obl": "NOUN", "aux": "AUX", "nmod": "NOUN", "mark": "SCONJ", "ccomp": "VERB",
           "cop": "AUX", "acl": "ADJ", "advmod": "ADV", "cc": "CCONJ", "conj": "VERB"}


def tagged_examples(nlp):
    examples = make_examples(nlp)
    for eg in examples:
        eg.reference.from_array(["POS"], np.array([nlp.vocab.strings[UPOS_OF[t.dep_]] for t in eg.reference],
                                                  dtype=np.uint64).reshape(-1, 1))
    return examples


@pytest.fixture(scope="module")
def tagging():
    """A parser trained with the POS objective (the factory's default ``tag_attrs``) on a tagged
    copy of the tiny treebank."""
    return train_tiny(epochs=40, make=tagged_examples)


def test_writes_its_tags_where_the_doc_has_none(tagging):
    parser = tagging.get_pipe("hc_parser")
    assert parser.cfg["tags"]["POS"] and "token.pos" in tagging.get_pipe_meta("hc_parser").assigns
    for words, _, deps in SENTENCES:
        doc = tagging(Doc(tagging.vocab, words=words))
        assert [t.pos_ for t in doc] == [UPOS_OF[d] for d in deps], words
    preset = Doc(tagging.vocab, words=["Dogs", "bark", "."], pos=["PROPN", "", ""])
    assert [t.pos_ for t in tagging(preset)] == ["PROPN", "VERB", "PUNCT"]  # a tagger's tags are kept
    spaced = tagging(Doc(tagging.vocab, words=["Dogs", "bark", ".", "\n\n"], spaces=[True, False, False, False]))
    assert spaced[3].pos_ == "SPACE"
    scores = tagging.evaluate([Example(Doc(tagging.vocab, words=eg.reference.text.split()), eg.reference)
                               for eg in tagged_examples(tagging)])
    assert scores["pos_acc"] == 1.0 and "dep_uas" in scores
    parser.set_tags = False
    try:
        assert [t.pos_ for t in tagging(Doc(tagging.vocab, words=["Dogs", "bark", "."]))] == ["", "", ""]
    finally:
        parser.set_tags = True


def test_label_objective_trains_the_encoder_only():
    """``DEP`` among ``tag_attrs``: each word's own label is learnt as a tag (an auxiliary
    objective for the encoder), never written: labels come from the parse, and the scores hold
    no ``dep_acc``."""
    nlp = train_tiny(epochs=40, make=tagged_examples, tags={"attrs": ["POS", "DEP"]})
    parser = nlp.get_pipe("hc_parser")
    assert {"nsubj", "ROOT", "punct"} <= set(parser.cfg["tags"]["DEP"])
    for words, _, deps in SENTENCES:
        doc = nlp(Doc(nlp.vocab, words=words))
        assert [t.pos_ for t in doc] == [UPOS_OF[d] for d in deps], words
    scores = nlp.evaluate([Example(Doc(nlp.vocab, words=eg.reference.text.split()), eg.reference)
                           for eg in tagged_examples(nlp)])
    assert scores["pos_acc"] == 1.0 and scores["dep_las"] > 0.9 and "dep_acc" not in scores


@pytest.mark.parametrize("decoder", ["hill_climb", "mst", "eisner"])
def test_whitespace_is_a_leaf_of_the_word_before_it(trained, decoder):
    """Whatever the scores, a whitespace token heads nothing and hangs from the nearest word
    before it (after it at a sentence's start), labelled ``dep``, and the trees stay valid."""
    nlp = trained
    nlp.get_pipe("hc_parser").decoder = DECODERS[decoder]()
    try:
        words = ["\n", "I", "like", "\n\n", " ", "green", "eggs", ".", "\t"]
        spaces = [False] * len(words)
        doc = nlp(Doc(nlp.vocab, words=words, spaces=spaces, sent_starts=[True] + [False] * (len(words) - 1)))
    finally:
        nlp.get_pipe("hc_parser").decoder = DECODERS["hill_climb"]()
    assert_valid(doc)
    assert [doc[i].head.i for i in (0, 3, 4, 8)] == [1, 2, 2, 7]
    assert all(t.head.i == t.i or not t.head.is_space for t in doc)
    assert all(doc[i].dep_ == "dep" for i in (0, 3, 4, 8)) or "dep" not in nlp.get_pipe("hc_parser").labels


def test_whitespace_leaves_keep_whitespace_only_spans():
    from spacy_hcparse.graph.graph_batch import whitespace_leaves

    arc = np.zeros((3, 3))
    assert whitespace_leaves(arc, np.array([True, True])) is arc
    assert whitespace_leaves(arc, np.array([False, False])) is arc


def test_label_valency_gives_one_child_per_class(trained):
    parser = trained.get_pipe("hc_parser")
    labels = parser.labels
    heads = np.array([-1, 3, 3, 0])
    scores = np.zeros((3, len(labels)))
    nsubj = labels.index("nsubj")
    scores[0, nsubj], scores[1, nsubj] = 5.0, 4.0
    scores[1, labels.index("obj")] = 3.0
    saved = parser.cfg.get("label_classes"), parser.labeler.valency

    def best(heads, scores):  # one tree, no whitespace tokens, no doc labels
        return parser.label_trees([heads], [scores], [np.zeros(len(heads) - 1, bool)])[0][0]

    try:
        parser.cfg["label_classes"] = [["nsubj"]]
        assert [labels[i] for i in best(heads, scores)] == ["nsubj", "obj", "ROOT"]
        parser.labeler.valency = False
        assert [labels[i] for i in best(heads, scores)] == ["nsubj", "nsubj", "ROOT"]
    finally:
        parser.cfg["label_classes"], parser.labeler.valency = saved


def test_initialize_learns_label_classes(trained):
    # the tiny treebank has too few heads per label for evidence: no class, no constraint
    assert trained.get_pipe("hc_parser").cfg["label_classes"] == []
