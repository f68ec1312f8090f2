"""Loading saved parsers: a format stamp in cfg, and clear errors naming the file for missing,
corrupt or foreign files and for weights that do not fit the label set (both components)."""
import shutil

import pytest
import spacy
import srsly

from spacy_hcparse import __version__
from spacy_hcparse.components.base import MODEL_FORMAT
from tests.components.test_graph_parser import TINY_MODEL
from tests.treebank import make_doc_with_sentences, make_examples

CONFIGS = {
    "hc_parser": {"model": TINY_MODEL},
    "hc_transition_parser": {"model": {"n_buckets": 2**12, "tag_buckets": 2**10}},
}


def make(component):
    nlp = spacy.blank("en")
    nlp.add_pipe(component, config=CONFIGS[component])
    return nlp


@pytest.fixture(scope="module", params=list(CONFIGS))
def saved(request, tmp_path_factory):
    """(component name, path of an initialized pipeline saved to disk)."""
    spacy.util.fix_random_seed(0)
    nlp = make(request.param)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    path = tmp_path_factory.mktemp(request.param) / "model"
    nlp.to_disk(path)
    return request.param, path


@pytest.fixture
def copy(saved, tmp_path):
    component, path = saved
    shutil.copytree(path, tmp_path / "model")
    return component, tmp_path / "model"


def test_saved_cfg_carries_version_and_format(saved):
    component, path = saved
    cfg = srsly.read_json(path / component / "cfg")
    assert cfg["hcparse_version"] == __version__ and cfg["model_format"] == MODEL_FORMAT
    nlp = spacy.load(path)
    assert len(nlp(make_doc_with_sentences(nlp))) > 0


def test_model_without_stamp_is_read_as_format_1(copy):
    """Models saved before the stamp existed are format 1, which this version no longer reads:
    the error says so instead of failing inside the weights."""
    component, path = copy
    cfg = srsly.read_json(path / component / "cfg")
    del cfg["hcparse_version"], cfg["model_format"]
    srsly.write_json(path / component / "cfg", cfg)
    with pytest.raises(ValueError, match=r"an unknown version with model format 1"):
        spacy.load(path)


def test_other_format_is_refused_naming_the_file(copy):
    component, path = copy
    cfg = srsly.read_json(path / component / "cfg")
    cfg["model_format"], cfg["hcparse_version"] = MODEL_FORMAT + 1, "9.9.9"
    srsly.write_json(path / component / "cfg", cfg)
    with pytest.raises(ValueError, match=rf"{component}/cfg was saved by spacy-hcparse 9\.9\.9 with model format"):
        spacy.load(path)


@pytest.mark.parametrize("name", ["cfg", "model"])
def test_missing_file_is_named(copy, name):
    component, path = copy
    (path / component / name).unlink()
    with pytest.raises(ValueError, match=rf"missing file .*{component}/{name}"):
        spacy.load(path)


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("cfg", b"{not json", r"corrupt file .*/cfg: not valid JSON"),
        ("cfg", b"[1, 2]", r"corrupt file .*/cfg: expected an object"),
        ("model", b"not a model", r"could not load the weights in .*/model"),
        ("model", b"", r"could not load the weights in .*/model"),
    ],
)
def test_corrupt_file_is_named(copy, name, content, message):
    component, path = copy
    (path / component / name).write_bytes(content)
    with pytest.raises(ValueError, match=rf"\[{component}\] {message}"):
        spacy.load(path)


def test_truncated_model_file_is_named(copy):
    component, path = copy
    data = (path / component / "model").read_bytes()
    (path / component / "model").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=rf"\[{component}\] could not load the weights in .*{component}/model"):
        spacy.load(path)


def test_label_set_that_does_not_match_the_weights_is_refused(copy):
    component, path = copy
    cfg = srsly.read_json(path / component / "cfg")
    cfg["labels"] = cfg["labels"] + ["extra_label"]
    srsly.write_json(path / component / "cfg", cfg)
    with pytest.raises(ValueError, match="do not belong together"):
        spacy.load(path)


def test_bytes_checks(saved):
    component, path = saved
    nlp = spacy.load(path)
    pipe = nlp.get_pipe(component)
    data = pipe.to_bytes()
    make(component).get_pipe(component).from_bytes(data)  # round trip
    with pytest.raises(ValueError, match=rf"\[{component}\] could not read the serialized component"):
        make(component).get_pipe(component).from_bytes(b"\x00garbage")
    msg = srsly.msgpack_loads(data)
    cfg = srsly.json_loads(msg["cfg"])
    cfg["model_format"] = MODEL_FORMAT + 1
    msg["cfg"] = srsly.json_dumps(cfg)
    with pytest.raises(ValueError, match="bytes was saved by spacy-hcparse .* with model format"):
        make(component).get_pipe(component).from_bytes(srsly.msgpack_dumps(msg))
