"""spacy_hcparse.blas and hc_parser's ``cpu_blas`` / ``threads``: which BLAS the model multiplies
with on a CPU (the parses agree), and numpy's BLAS kept on the component's threads."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from thinc.api import Linear, NumpyOps, Relu, chain
from threadpoolctl import threadpool_info, threadpool_limits

from spacy_hcparse.blas import blas_threads, use_blas, uses_blis
from tests.components.test_graph_parser import TINY_MODEL, train_tiny
from tests.strict_ops import StrictOps
from tests.treebank import SENTENCES, make_examples


def blas_thread_counts():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_use_blas_switches_numpy_nodes_both_ways():
    model = chain(Relu(8, 4), Linear(3, 8))
    assert all(uses_blis(node.ops) for node in model.walk())
    use_blas(model, "numpy")
    assert not any(uses_blis(node.ops) for node in model.walk())
    X = np.random.default_rng(0).normal(size=(5, 4)).astype("f")
    model.initialize(X=X)
    with_numpy = model.predict(X)
    use_blas(model, "blis")
    assert all(uses_blis(node.ops) for node in model.walk())
    np.testing.assert_allclose(model.predict(X), with_numpy, rtol=1e-5, atol=1e-6)


def test_use_blas_leaves_other_ops_and_rejects_unknown_names():
    model = Linear(3, 4)
    model.ops = StrictOps()  # a stand-in GPU: never made a CPU's
    use_blas(model, "numpy")
    assert isinstance(model.ops, StrictOps)
    with pytest.raises(ValueError, match="unknown BLAS 'mkl'"):
        use_blas(model, "mkl")


def test_blas_threads_caps_and_restores():
    if not blas_thread_counts():
        pytest.skip("numpy's BLAS is not one threadpoolctl knows")
    with threadpool_limits(limits=2, user_api="blas"):
        with blas_threads(1):
            assert set(blas_thread_counts()) == {1}
        assert set(blas_thread_counts()) == {2}
    with pytest.raises(ValueError, match="at least 1"):
        with blas_threads(0):
            pass


@pytest.fixture(scope="module")
def trained_bytes():
    return train_tiny(epochs=40).to_bytes()


def load(data, **settings):
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser", config={"model": TINY_MODEL, "decoder": {"@misc": "spacy_hcparse.HillClimb.v1"},
                                      **settings})
    return nlp.from_bytes(data)


def test_hc_parser_multiplies_with_numpy_by_default_and_parses_alike_with_blis(trained_bytes):
    numpy_nlp, blis_nlp = load(trained_bytes), load(trained_bytes, cpu_blas="blis")
    assert not any(uses_blis(node.ops) for node in numpy_nlp.get_pipe("hc_parser").model.walk())
    assert all(uses_blis(node.ops) for node in blis_nlp.get_pipe("hc_parser").model.walk()
               if isinstance(node.ops, NumpyOps))
    for words, heads, deps in SENTENCES:
        a, b = numpy_nlp(Doc(numpy_nlp.vocab, words=words)), blis_nlp(Doc(blis_nlp.vocab, words=words))
        assert [(t.head.i, t.dep_) for t in a] == [(t.head.i, t.dep_) for t in b]
        assert [t._.hc_head_prob for t in a] == pytest.approx([t._.hc_head_prob for t in b], abs=1e-4)


def test_hc_parser_parses_and_trains_on_its_threads(trained_bytes):
    """numpy's BLAS takes one thread while the parser parses (the label scorer's call on the
    decoded trees, just before the labeler reads them) and learns (the loss after the forward pass), and is
    given back after."""
    nlp = load(trained_bytes, threads=1)
    pipe = nlp.get_pipe("hc_parser")
    seen = []
    for name in ("label_trees", "get_loss"):
        real = getattr(pipe, name)
        setattr(pipe, name, lambda *args, real=real, **kwargs: seen.append(blas_thread_counts()) or real(*args, **kwargs))
    with threadpool_limits(limits=2, user_api="blas"):  # what numpy's BLAS takes around the parser
        before = blas_thread_counts()
        nlp(Doc(nlp.vocab, words=SENTENCES[0][0]))
        nlp.update(make_examples(nlp)[:2], sgd=nlp.resume_training())
        assert blas_thread_counts() == before
    assert len(seen) == 2 and all(counts == [1] * len(counts) for counts in seen)


@pytest.mark.parametrize("settings,message", [({"threads": 0}, "threads must be"),
                                               ({"cpu_blas": "mkl"}, "unknown BLAS")])
def test_bad_settings_are_refused(settings, message):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=message):
        nlp.add_pipe("hc_parser", config=settings)
