"""Both parser components on odd inputs (tests/components/odd_docs.py): nothing raises, every
sentence gets exactly one root, ``len(doc)`` never changes, docs that already carry heads are
overwritten consistently, memory stays bounded on long sentences, two processes agree."""
import tracemalloc

import pytest
import spacy
from spacy.tokens import Doc

from spacy_hcparse.graph.decoding import make_dual, make_hill_climb
from tests.components import test_graph_parser, test_transition_parser
from tests.components.odd_docs import (
    assert_parsed, odd_docs, parse_of, same_boundaries, words_without_boundaries,
)

COMPONENTS = ["hc_parser", "hc_transition_parser"]


@pytest.fixture(scope="module")
def pipelines():
    graph = test_graph_parser.train_tiny(epochs=30)
    # Fewer restarts than the default keep the 5,000-word docs quick; the search is the same.
    graph.get_pipe("hc_parser").decoder = make_hill_climb(max_restarts=4, min_restarts=2, converge=2)
    return {"hc_parser": graph, "hc_transition_parser": test_transition_parser.train_tiny(epochs=10)}


def fresh(nlp, doc):
    return Doc(nlp.vocab).from_bytes(doc.to_bytes())


@pytest.mark.parametrize("component", COMPONENTS)
def test_every_odd_doc_alone(pipelines, component):
    nlp = pipelines[component]
    for name, doc in odd_docs(nlp).items():
        n = len(doc)
        out = nlp(doc)
        assert_parsed(out, n), name


@pytest.mark.parametrize("component", COMPONENTS)
def test_long_inputs_are_cut_to_max_length(pipelines, component):
    """A doc without boundaries is parsed in spans of at most max_length words that cover it (a
    predicted sentence longer than that is parsed in chunks joined into one tree)."""
    nlp = pipelines[component]
    pipe = nlp.get_pipe(component)
    doc = odd_docs(nlp)["5000-words-no-boundaries"]
    spans = pipe.predict([fresh(nlp, doc)])[0].spans
    assert [start for start, _ in spans[1:]] == [end for _, end in spans[:-1]]
    assert spans[0][0] == 0 and spans[-1][1] == len(doc)
    assert max(end - start for start, end in spans) <= pipe.max_length
    assert_parsed(nlp(doc), len(doc))


@pytest.mark.parametrize("component", COMPONENTS)
def test_long_preset_sentence_stays_one_tree(pipelines, component):
    """A preset sentence longer than max_length is parsed in chunks but stays one sentence."""
    nlp = pipelines[component]
    doc = nlp(odd_docs(nlp)["600-word-sentence"])
    assert len(doc) == 600 and len(list(doc.sents)) == 1
    assert sum(t.head == t for t in doc) == 1 and doc[:].root.dep_ == "ROOT"
    limit = nlp.get_pipe(component).max_length
    chunks = -(-600 // limit)
    assert sum(t.dep_ == "dep" for t in doc if t.head.dep_ == "ROOT" and t.head != t) >= chunks - 1


@pytest.mark.parametrize("component", COMPONENTS)
def test_existing_heads_are_overwritten_consistently(pipelines, component):
    """A doc's old heads only fix its sentence boundaries: the new parse equals the parse of a
    doc with those boundaries preset, and none of the old heads or labels survive by accident."""
    nlp = pipelines[component]
    for name, doc in odd_docs(nlp).items():
        if not name.startswith("heads-"):
            continue
        expected = parse_of(nlp(same_boundaries(nlp, doc)))
        got = nlp(doc)
        assert_parsed(got, len(doc))
        assert parse_of(got) == expected, name
    flat = nlp(odd_docs(nlp)["heads-flat"])
    assert {t.dep_ for t in flat} != {"ROOT", "dep"}  # the placeholder labels are gone


@pytest.mark.parametrize("component", COMPONENTS)
def test_mixed_batch_equals_one_by_one(pipelines, component):
    nlp = pipelines[component]
    docs = list(odd_docs(nlp).values())
    alone = [parse_of(nlp(fresh(nlp, d))) for d in docs]
    batched = list(nlp.pipe([fresh(nlp, d) for d in docs], batch_size=4))
    for doc, out in zip(docs, batched):
        assert_parsed(out, len(doc))
    assert [parse_of(d) for d in batched] == alone


@pytest.mark.parametrize("component", COMPONENTS)
def test_two_processes_on_the_mixed_batch(pipelines, component):
    nlp = pipelines[component]
    docs = list(odd_docs(nlp).values())
    one = [parse_of(d) for d in nlp.pipe([fresh(nlp, d) for d in docs], batch_size=3)]
    two = list(nlp.pipe([fresh(nlp, d) for d in docs], batch_size=3, n_process=2))
    for doc, out in zip(docs, two):
        assert_parsed(out, len(doc))
    assert [parse_of(d) for d in two] == one


@pytest.mark.parametrize("component", COMPONENTS)
def test_peak_memory_of_a_1000_word_sentence_is_bounded(pipelines, component):
    """Long sentences are cut to ``max_length`` spans, and hc_parser's higher-order scores stop at
    ``higher_order_max_length``: a 1,000-word sentence costs tens of MB, not the (n+1)^3 cubes
    (8 GB each at n = 1,000) an uncut sentence would."""
    nlp = pipelines[component]
    words = words_without_boundaries(1000, seed=2)
    nlp(Doc(nlp.vocab, words=words[:50]))  # warm up (compilation, caches)
    doc = Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * 999)
    tracemalloc.start()
    try:
        out = nlp(doc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_parsed(out, 1000)
    assert peak < 200 * 2**20, f"peak {peak / 2**20:.0f} MB"


def test_text_input_with_odd_characters(pipelines):
    for component in COMPONENTS:
        nlp = pipelines[component]
        for text in ["", " ", "\n\n\t", "🙂🙂🙂", "I ❤️ 東京 and Москва 🙂", "a" * 300, "word " * 700]:
            doc = nlp(text)
            assert_parsed(doc, len(nlp.make_doc(text)))


def test_hc_parser_memory_does_not_grow_with_doc_length(pipelines):
    """Higher-order cubes ((n+1)^3 floats per span, 4 MB at 100 words: 40 KB a word) are built a
    few spans at a time: from 1,000 to 5,000 words without boundaries the peak grows only by what
    is linear in the doc, a few KB a word (measured about 3.3 KB for token vectors over the whole
    doc, which the sentence-start scorer reads, and 0.7 KB for the sibling triples batched decoding
    reads), not by a cube per span. A warm-up parse first, so that compiling or caching on first
    use does not land in one of the two peaks."""
    nlp = pipelines["hc_parser"]
    nlp(Doc(nlp.vocab, words=words_without_boundaries(1000, seed=4)))
    peaks = {}
    for n in (1000, 5000):
        doc = Doc(nlp.vocab, words=words_without_boundaries(n, seed=3))
        tracemalloc.start()
        try:
            out = nlp(doc)
            peaks[n] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert_parsed(out, n)
    per_word = (peaks[5000] - peaks[1000]) / 4000
    assert per_word < 8192, {n: f"{p / 2**20:.0f} MB" for n, p in peaks.items()}


@pytest.mark.parametrize("decoder", ["hill_climb", "dual"])
def test_time_capped_search_still_gives_valid_trees_and_is_counted(pipelines, decoder):
    nlp = pipelines["hc_parser"]
    parser = nlp.get_pipe("hc_parser")
    saved = parser.decoder
    if decoder == "hill_climb":
        parser.decoder = make_hill_climb(time_limit=1e-6, max_restarts=1000, min_restarts=1000, converge=1000)
    else:
        parser.decoder = make_dual(time_limit=1e-6, max_iter=100000)
    try:
        words = words_without_boundaries(300, seed=4)
        doc = nlp(Doc(nlp.vocab, words=words, sent_starts=[i % 60 == 0 for i in range(300)]))
    finally:
        parser.decoder = saved
    assert_parsed(doc, 300)
    assert doc.user_data["hc_time_capped"] == 5  # every 60-word sentence hit the cap
