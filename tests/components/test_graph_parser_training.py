"""hc_parser's training beyond the first run: labels added to a trained parser, rehearsal
(fine-tuning without forgetting), training on partial gold."""
import logging

import numpy as np
import pytest
import spacy
import srsly
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.graph.graph_model import tree_label_scores
from spacy_hcparse.learning.gold import partial_sentences

from spacy_hcparse.segment import sentence_spans
from tests.components.test_graph_parser import FULL_LABELS, NONPROJECTIVE, TINY_MODEL, TINY_V5, parse_of, train_tiny
from tests.treebank import (SENTENCES, make_doc_examples, make_doc_with_sentences, make_examples,
                            update_with_annotating_senter)

# sentences with a label the tiny treebank lacks
XCOMP = [
    (["She", "wants", "to", "sleep", "."], [2, 0, 4, 2, 2], ["nsubj", "ROOT", "mark", "xcomp", "punct"]),
    (["Dogs", "like", "to", "bark", "."], [2, 0, 4, 2, 2], ["nsubj", "ROOT", "mark", "xcomp", "punct"]),
    (["We", "tried", "to", "sing", "loudly", "."], [2, 0, 4, 2, 4, 2],
     ["nsubj", "ROOT", "mark", "xcomp", "advmod", "punct"]),
]


@pytest.fixture(scope="module", params=[{}, FULL_LABELS], ids=["low_rank_labels", "full_rank_labels"])
def trained_bytes(request):
    """(model settings, a trained pipeline's bytes): each test loads its own copy. ``{}``: the
    factory's default model (low-rank labels, BiLSTM); ``FULL_LABELS``: full-rank labels, no
    BiLSTM."""
    return request.param, train_tiny(**request.param).to_bytes()


def load(trained_bytes):
    settings, data = trained_bytes
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser", config={"model": {**TINY_MODEL, **settings}, "decoder": NONPROJECTIVE})
    return nlp.from_bytes(data)


def label_scores(nlp):
    """Label scores of each sentence of a doc on the tree where each word heads the next."""
    parser = nlp.get_pipe("hc_parser")
    doc = make_doc_with_sentences(nlp)
    scores = parser.score_spans([doc], [sentence_spans(doc, parser.max_length)])
    return tree_label_scores(parser.model, scores, [np.arange(-1, end - start) for start, end in scores.spans[0]])


def parses(nlp, sentences=SENTENCES):
    return [parse_of(nlp(Doc(nlp.vocab, words=words))) for words, _, _ in sentences]


def test_pipeline_saved_with_v5_loads_and_parses_as_before(tmp_path):
    """A pipeline trained and saved with ``GraphParserModel.v5`` loads as it was saved, and its
    weights load into the ``.v8`` of the same parts (the factory's default with TINY_MODEL's
    sizes) with the same parses, labels, sentences and probabilities."""
    trained = train_tiny(architecture=TINY_V5, epochs=15)
    trained.to_disk(tmp_path / "v5")
    loaded = spacy.load(tmp_path / "v5")
    assert loaded.config["components"]["hc_parser"]["model"]["@architectures"] == "spacy_hcparse.GraphParserModel.v5"
    v8 = spacy.blank("en")
    v8.add_pipe("hc_parser", config={"model": TINY_MODEL, "decoder": {"@misc": "spacy_hcparse.HillClimb.v1"}})
    v8.from_disk(tmp_path / "v5", exclude=["config"])
    texts = [" ".join(words) for words, _, _ in SENTENCES] + [" ".join(w for s in SENTENCES for w in s[0])]

    def parsed(nlp):
        return [([t.head.i for t in doc], [t.dep_ for t in doc], [t.pos_ for t in doc], [s.start for s in doc.sents],
                 [t._.hc_head_prob for t in doc]) for doc in nlp.pipe(texts)]

    a, b, c = parsed(trained), parsed(loaded), parsed(v8)
    assert a == b, "loaded"
    assert a == c, "v8"


def test_added_label_keeps_old_scores_and_parses(trained_bytes):
    nlp = load(trained_bytes)
    parser = nlp.get_pipe("hc_parser")
    before_scores, before_parses = label_scores(nlp), parses(nlp)
    assert parser.add_label("xcomp") == 1 and parser.add_label("xcomp") == 0
    assert parser.labels[-1] == "xcomp" and parser.model.get_dim("nO") == len(parser.labels)
    after = label_scores(nlp)
    for old, new in zip(before_scores, after):
        assert new.shape == (old.shape[0], old.shape[1] + 1)
        # the old labels' weights are untouched; a gemm with one more output column may round
        # the last bit differently
        assert np.allclose(new[:, :-1], old, rtol=1e-6, atol=1e-6)
        assert not new[:, -1].any()  # the new label's weights start at zero
    assert parses(nlp) == before_parses
    assert parser.cfg["unseen_labels"] == ["xcomp"]


def test_added_label_is_learned(trained_bytes):
    nlp = load(trained_bytes)
    parser = nlp.get_pipe("hc_parser")
    parser.add_label("xcomp")
    examples = make_examples(nlp) + make_examples(nlp, XCOMP)
    optimizer = nlp.resume_training()
    for _ in range(30):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    assert parser.cfg["unseen_labels"] == []
    assert parses(nlp, XCOMP) == [(heads, deps) for _, heads, deps in XCOMP]
    assert parses(nlp) == [(heads, deps) for _, heads, deps in SENTENCES]


def test_resized_parser_round_trips(trained_bytes, tmp_path):
    nlp = load(trained_bytes)
    nlp.get_pipe("hc_parser").add_label("xcomp")
    expected_scores, expected_parses = label_scores(nlp), parses(nlp)
    copy = load((trained_bytes[0], nlp.to_bytes()))
    assert copy.get_pipe("hc_parser").labels == nlp.get_pipe("hc_parser").labels
    assert all(np.array_equal(a, b) for a, b in zip(label_scores(copy), expected_scores))
    nlp.to_disk(tmp_path / "model")
    cfg = srsly.read_json(tmp_path / "model" / "hc_parser" / "cfg")
    assert cfg["labels"][-1] == "xcomp" and cfg["unseen_labels"] == ["xcomp"]
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("hc_parser").model.get_dim("nO") == len(cfg["labels"])
    assert all(np.array_equal(a, b) for a, b in zip(label_scores(loaded), expected_scores))
    assert parses(loaded) == expected_parses


def test_load_add_label_update(trained_bytes, tmp_path):
    load(trained_bytes).to_disk(tmp_path / "model")
    nlp = spacy.load(tmp_path / "model")
    nlp.get_pipe("hc_parser").add_label("xcomp")
    optimizer = nlp.resume_training()
    losses = {}
    for _ in range(3):
        nlp.update(make_examples(nlp, XCOMP), sgd=optimizer, losses=losses)
    assert np.isfinite(losses["hc_parser"]) and losses["hc_parser"] > 0
    nlp.to_disk(tmp_path / "again")
    again = spacy.load(tmp_path / "again")
    assert again.get_pipe("hc_parser").labels == nlp.get_pipe("hc_parser").labels
    assert parses(again, XCOMP) == parses(nlp, XCOMP)


def test_label_added_before_initialize_is_an_ordinary_label():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("hc_parser", config={"model": TINY_MODEL, "decoder": NONPROJECTIVE})
    parser.add_label("xcomp")
    nlp.initialize(lambda: make_examples(nlp))
    assert "xcomp" in parser.labels and parser.cfg["unseen_labels"] == []
    assert parser.model.get_dim("nO") == len(parser.labels)


# ----- rehearsal ------------------------------------------------------------------------------
def raw_examples(nlp, sentences=SENTENCES):
    """Examples without gold: what rehearsal reads."""
    return [Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words)) for words, _, _ in sentences]


def labelled_accuracy(nlp, sentences=SENTENCES):
    right = total = 0
    for words, heads, deps in sentences:
        got_heads, got_deps = parse_of(nlp(Doc(nlp.vocab, words=words)))
        right += sum(a == b and c == d for a, b, c, d in zip(got_heads, heads, got_deps, deps))
        total += len(heads)
    return right / total


def fine_tune(nlp, rehearse, epochs=30, seed=0):
    """Train on the new sentences only (a new label among them), with or without rehearsing the
    old sentences' text."""
    spacy.util.fix_random_seed(seed)  # the same run whatever ran before it
    nlp.get_pipe("hc_parser").add_label("xcomp")
    optimizer = nlp.resume_training()
    new, raw = make_examples(nlp, XCOMP), raw_examples(nlp)
    for _ in range(epochs):
        nlp.update(new, sgd=optimizer, drop=0.0)
        if rehearse:
            losses = nlp.rehearse(raw, sgd=optimizer)
            assert np.isfinite(losses["hc_parser"])
    return nlp


def test_rehearsal_keeps_what_was_learned(trained_bytes):
    """Fine-tuning alone forgets the old sentences (about 0.7 of their words right); with
    rehearsal they stay learned (median of three fine-tuning seeds: on this treebank one run can
    lose a few words by the luck of its dropout masks)."""
    forgetful = fine_tune(load(trained_bytes), rehearse=False)
    assert labelled_accuracy(forgetful) < 0.9
    xcomp = [(heads, deps) for _, heads, deps in XCOMP]
    accuracies = []
    for seed in range(3):
        rehearsed = fine_tune(load(trained_bytes), rehearse=True, seed=seed)
        assert parses(rehearsed, XCOMP) == xcomp
        accuracies.append(labelled_accuracy(rehearsed))
    assert parses(forgetful, XCOMP) == xcomp and np.median(accuracies) >= 0.95, accuracies


def test_rehearsal_loss_starts_at_zero(trained_bytes):
    nlp = load(trained_bytes)
    for node in nlp.get_pipe("hc_parser").model.walk():  # no dropout: the student is the teacher
        if node.name == "fixed_dropout":
            node.attrs["rate"] = 0.0
    optimizer = nlp.resume_training()
    raw = raw_examples(nlp)
    first = nlp.rehearse(raw, sgd=optimizer)["hc_parser"]
    assert first == pytest.approx(0.0, abs=1e-6)
    for _ in range(5):
        nlp.update(make_examples(nlp, XCOMP[:1]), sgd=optimizer)
    assert nlp.rehearse(raw, sgd=optimizer)["hc_parser"] > max(first, 1e-3)


def test_label_added_after_resume_training_is_learned_while_rehearsing(trained_bytes):
    """add_label after the teacher was taken (as hc_transition_parser allows too): the teacher
    keeps its labels, rehearsal reads only those, and the student learns the new one."""
    nlp = load(trained_bytes)
    optimizer = nlp.resume_training()
    parser = nlp.get_pipe("hc_parser")
    teacher_outputs = parser._rehearsal_model.get_dim("nO")
    assert parser.add_label("xcomp") == 1 and parser.add_label("xcomp") == 0
    assert parser.model.get_dim("nO") == teacher_outputs + 1 == len(parser.labels)
    spacy.util.fix_random_seed(0)
    for _ in range(30):
        nlp.update(make_examples(nlp, XCOMP), sgd=optimizer, drop=0.0)
        assert np.isfinite(nlp.rehearse(raw_examples(nlp), sgd=optimizer)["hc_parser"])
    assert parser._rehearsal_model.get_dim("nO") == teacher_outputs
    assert parses(nlp, XCOMP) == [(heads, deps) for _, heads, deps in XCOMP]


def test_rehearse_without_resume_training_takes_the_model_as_it_is(trained_bytes, caplog):
    nlp = load(trained_bytes)
    caplog.set_level(logging.WARNING, logger="spacy_hcparse")
    losses = nlp.get_pipe("hc_parser").rehearse(raw_examples(nlp), sgd=nlp.create_optimizer())
    assert "hc_parser" in losses and np.isfinite(losses["hc_parser"])
    assert any("resume_training" in r.getMessage() for r in caplog.records)


# ----- partial gold ---------------------------------------------------------------------------
def partial_doc(nlp, sentences, share, rng):
    """(reference doc with a ``share`` of its heads and labels missing, the full heads
    (absolute), the true sentence starts)."""
    words, heads, deps, starts = [], [], [], []
    for sent_words, sent_heads, sent_deps in sentences:
        offset = len(words)
        heads += [offset + h - 1 if h else offset + i for i, h in enumerate(sent_heads)]
        deps += list(sent_deps)
        starts += [int(i == 0) for i in range(len(sent_words))]
        words += sent_words
    given_heads, given_deps = list(heads), list(deps)
    for i in np.flatnonzero(rng.random(len(words)) < share):
        given_heads[i] = given_deps[i] = None
    return Doc(nlp.vocab, words=words, heads=given_heads, deps=given_deps), heads, np.array(starts)


def partial_examples(nlp, share=0.3, seed=0):
    rng = np.random.default_rng(seed)
    docs = [partial_doc(nlp, [sentence], share, rng)[0] for sentence in SENTENCES]
    return [Example(Doc(nlp.vocab, words=[t.text for t in doc]), doc) for doc in docs]


def test_missing_heads_are_unknown_in_the_gold():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("hc_parser", config={"model": TINY_MODEL, "decoder": NONPROJECTIVE})
    words, heads, deps = SENTENCES[7]  # "Birds sing loudly and fly ."
    ref = Doc(nlp.vocab, words=words, heads=[None, 1, None, 4, 1, 1], deps=[None, "ROOT", None, "cc", "conj", "punct"])
    eg = Example(Doc(nlp.vocab, words=words), ref)
    assert eg.get_aligned_parse(projectivize=False)[0][0] == 0  # spaCy: a missing head heads itself
    nlp.initialize(lambda: make_examples(nlp))
    spans, gold, _, _ = parser.batch_gold([eg])
    assert spans == [[(0, 6)]]  # one sentence, though spaCy starts one at "sing"
    local, labels = gold.spans[0]
    assert local.tolist() == [-1, -1, 0, -1, 5, 2, 2]
    assert labels.tolist()[0] == labels.tolist()[2] == -1
    assert gold.starts[0].tolist() == [1, -1, 0, 0, 0, 0]  # "Birds" could be a sentence of its own


def test_partial_sentences_agree_with_the_truth():
    """Over random docs of several sentences with heads missing: every gold start (1) or
    non-start (0) is true, no known arc crosses a cut, no span holds two known roots."""
    nlp = spacy.blank("en")
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(300):
        picked = [SENTENCES[i] for i in rng.choice(len(SENTENCES), size=rng.integers(1, 5))]
        ref, heads, truth = partial_doc(nlp, picked, rng.choice([0.1, 0.3, 0.6]), rng)
        known = np.array([t.head.i if t.has_head() else -1 for t in ref])
        if (known < 0).all() or (known >= 0).all():
            continue
        cuts, gold = partial_sentences(known, ref.to_array("SENT_START").astype(np.int64))
        assert ((gold == truth) | (gold == -1)).all(), (known.tolist(), gold.tolist(), truth.tolist())
        bounds = [0, *cuts, len(ref)]
        for start, end in zip(bounds[:-1], bounds[1:]):
            span = known[start:end]
            assert ((span < 0) | ((span >= start) & (span < end))).all()
            assert (span == np.arange(start, end)).sum() <= 1
        checked += 1
    assert checked > 200


def test_partial_gold_is_learned(caplog):
    """The tiny treebank with 30% of its heads and labels missing: no sentence is skipped, the
    known arcs are learned and most of the unseen ones too (the hinge decoded with Eisner, the
    setting the thresholds were measured with: on 12 sentences they move with the training path)."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    loss = {"@misc": "spacy_hcparse.GraphLoss.v1", "decoder": {"@misc": "spacy_hcparse.Eisner.v1"}}
    parser = nlp.add_pipe("hc_parser", config={"model": TINY_MODEL, "decoder": NONPROJECTIVE, "loss": loss})
    examples = partial_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    caplog.set_level(logging.INFO, logger="spacy_hcparse")
    for _ in range(60):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    assert parser.reported_gold == 0 and not caplog.records
    known = right = total = correct = 0
    for eg, (words, heads, _) in zip(examples, SENTENCES):
        got, _ = parse_of(nlp(Doc(nlp.vocab, words=words)))
        for token, guess, gold in zip(eg.reference, got, heads):
            known += token.has_head()
            right += token.has_head() and guess == gold
        correct += sum(g == h for g, h in zip(got, heads))
        total += len(heads)
    assert right / known >= 0.95
    assert correct / total >= 0.85
    assert total - known >= 10  # a fair share of the arcs was never seen


def test_cycle_among_known_heads_is_reported_and_skipped(caplog):
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("hc_parser", config={"model": TINY_MODEL, "decoder": NONPROJECTIVE})
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    # gamma and delta head each other; beta's and epsilon's heads are missing
    ref = Doc(nlp.vocab, words=words, heads=[3, None, 3, 2, None], deps=["dep", None, "dep", "dep", None])
    cyclic = Example(Doc(nlp.vocab, words=words), ref)
    nlp.initialize(lambda: make_examples(nlp))
    caplog.set_level(logging.INFO, logger="spacy_hcparse")
    spans, gold, _, _ = parser.batch_gold([cyclic] + partial_examples(nlp))
    assert gold.spans[0] is None and all(g is not None for g in gold.spans[1:])
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cycle" in warnings[0] and "alpha beta gamma delta epsilon" in warnings[0], warnings


# ----- sentences on raw text ------------------------------------------------------------------
def test_sentences_found_in_raw_text():
    """Trained on docs of three sentences (words only on the predicted side), the default model
    segments an unseen ordering of treebank sentences into those sentences, one root each."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser", config={"model": TINY_MODEL})
    examples = make_doc_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(40):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    chosen = [SENTENCES[i] for i in (0, len(SENTENCES) - 2, 2)]  # never in this order in training
    doc = nlp(Doc(nlp.vocab, words=[w for words, _, _ in chosen for w in words]))
    assert [len(sent) for sent in doc.sents] == [len(words) for words, _, _ in chosen]
    for sent in doc.sents:
        assert sum(t.head.i == t.i for t in sent) == 1


def test_annotating_senter_skips_no_gold_sentence(caplog):
    """An annotating senter gives the predicted docs other boundaries than the reference's: every
    reference sentence is still learned, with no warning."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("senter")
    parser = nlp.add_pipe("hc_parser", config={"model": TINY_MODEL})
    examples = make_doc_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    caplog.set_level(logging.INFO, logger="spacy_hcparse")
    differ = update_with_annotating_senter(nlp, examples, optimizer)
    assert differ
    assert parser.reported_gold == 0, [r.getMessage() for r in caplog.records]
