"""`spacy debug config` and `spacy debug data` pass on every config in configs/ (found by glob, so a
new config is checked too), against the sample treebank (assets/sample) converted to .spacy.

Assembly configs (a component sourced from a trained pipeline, such as ewt_accurate.cfg, which
`spacy assemble` builds and `spacy train` never runs on) get `debug config` only: `debug data`
checks training data against the pipeline that would be trained on it, and an assembly config
trains nothing. Their `paths.*` name the trained pipelines they are assembled from; the test
builds an initialized (untrained) pipeline of each from the training config named in SOURCES.
Configs that read pretrained inputs get tiny ones the test builds (tests/pretrained.py): a vectors
table for `paths.vectors`, a random BERT for `paths.transformer`.
"""
from pathlib import Path
from typing import Dict

import pytest
from spacy.cli.debug_config import debug_config
from spacy.cli.debug_data import debug_data
from spacy.tokens import DocBin
from spacy.training import Corpus
from spacy.training.converters import conllu_to_docs
from spacy.util import load_config, load_model_from_config

from tests import pretrained as tiny

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs").glob("*.cfg"))
SAMPLE = ROOT / "assets" / "sample"
# Assembly config -> {path variable: the training config of the pipeline it names}.
SOURCES = {"ewt_accurate.cfg": {"graph": "ewt_fast.cfg", "transition": "ewt_transition_neural.cfg"}}
# `spacy debug data` fails below 100 training examples; the sample has 40 training sentences.
TRAIN_REPEATS = 3


def is_assembly(config: Path) -> bool:
    components = load_config(config, interpolate=False).get("components", {})
    return any("source" in component for component in components.values())


TRAINING = [c for c in CONFIGS if not is_assembly(c)]
ASSEMBLY = [c for c in CONFIGS if is_assembly(c)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Dict[str, str]:
    """paths.train and paths.dev: the sample's train split (repeated) and dev split, one sentence
    per Doc, as `spacy convert --converter conllu` writes them."""
    out = tmp_path_factory.mktemp("sample-corpus")
    paths = {}
    for split, repeats in (("train", TRAIN_REPEATS), ("dev", 1)):
        text = (SAMPLE / f"sample-ud-{split}.conllu").read_text(encoding="utf8")
        docs = list(conllu_to_docs(text, n_sents=1, no_print=True))
        DocBin(docs=docs * repeats).to_disk(out / f"{split}.spacy")
        paths[f"paths.{split}"] = str(out / f"{split}.spacy")
    return paths


def pretrained_paths(config: Path, tmp_path_factory) -> Dict[str, str]:
    """Overrides for the pretrained inputs ``config`` reads: ``paths.vectors`` where its embed
    includes static vectors, ``paths.transformer`` where it has a transformer component."""
    text = config.read_text(encoding="utf8")
    words = [line.split("\t")[1] for split in ("train", "dev")
             for line in (SAMPLE / f"sample-ud-{split}.conllu").read_text(encoding="utf8").splitlines()
             if line and line[0].isdigit()]
    paths = {}
    if "include_static_vectors = true" in text:
        paths["paths.vectors"] = tiny.tiny_vectors(tmp_path_factory.mktemp("vectors") / "t", words)
    if 'factory = "transformer"' in text:
        pytest.importorskip("spacy_transformers")
        # six layers, as all-MiniLM-L6-v2 has: the configs may name them (TransformerLayersListener.v1)
        paths["paths.transformer"] = tiny.tiny_bert(tmp_path_factory.mktemp("bert") / "t", words, layers=6)
    return paths


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory, corpus) -> Dict[str, str]:
    """config name -> an initialized pipeline of that training config (for the assembly configs)."""
    out = tmp_path_factory.mktemp("pipelines")
    built = {}
    for name in sorted({n for paths in SOURCES.values() for n in paths.values()}):
        config = load_config(ROOT / "configs" / name, overrides=corpus, interpolate=True)
        nlp = load_model_from_config(config, auto_fill=True)
        nlp.initialize(lambda: Corpus(corpus["paths.train"], gold_preproc=True)(nlp))
        nlp.to_disk(out / name)
        built[name] = str(out / name)
    return built


def run_debug(command, capsys, config: Path, **kwargs) -> None:
    """Run a spaCy debug command in-process; fail with its output when it exits with an error."""
    try:
        command(config, **kwargs)
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            pytest.fail(f"{command.__name__} {config.name} exited {exit_.code}:\n{capsys.readouterr().out[-4000:]}")


def test_configs_are_found():
    assert ROOT / "configs" / "ewt_fast.cfg" in TRAINING and ROOT / "configs" / "ewt_accurate.cfg" in ASSEMBLY
    missing = [c.name for c in ASSEMBLY if c.name not in SOURCES]
    assert not missing, f"assembly configs without an entry in SOURCES (the pipelines they assemble): {missing}"


@pytest.mark.parametrize("config", TRAINING, ids=lambda c: c.name)
def test_debug_config(config, corpus, capsys, tmp_path_factory):
    run_debug(debug_config, capsys, config, overrides={**corpus, **pretrained_paths(config, tmp_path_factory)})


@pytest.mark.parametrize("config", ASSEMBLY, ids=lambda c: c.name)
def test_debug_config_of_assembly(config, corpus, pipelines, capsys):
    paths = {f"paths.{var}": pipelines[name] for var, name in SOURCES.get(config.name, {}).items()}
    run_debug(debug_config, capsys, config, overrides={**corpus, **paths})


@pytest.mark.parametrize("config", TRAINING, ids=lambda c: c.name)
def test_debug_data(config, corpus, capsys, tmp_path_factory):
    overrides = {**corpus, **pretrained_paths(config, tmp_path_factory)}
    run_debug(debug_data, capsys, config, config_overrides=overrides, silent=False, no_format=True)
