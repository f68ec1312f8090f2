"""configs/ewt_accurate.cfg assembles trained pipelines of ewt_fast.cfg and
ewt_transition_neural.cfg into one that loads with spacy.load and reparses."""
from pathlib import Path

import numpy as np
import spacy
from spacy.util import load_config, load_model_from_config

from spacy_hcparse.decoders import tree_problem
from tests.treebank import SENTENCES, make_examples

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def train_briefly(config_name: str, out: Path) -> Path:
    """A pipeline of the config's architecture after one update on the tiny treebank."""
    nlp = load_model_from_config(load_config(CONFIGS / config_name, interpolate=True), auto_fill=True)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer)
    nlp.to_disk(out)
    return out


def test_assembles_and_reparses(tmp_path):
    graph = train_briefly("ewt_fast.cfg", tmp_path / "graph")
    transition = train_briefly("ewt_transition_neural.cfg", tmp_path / "transition")
    config = load_config(CONFIGS / "ewt_accurate.cfg",
                         overrides={"paths.graph": str(graph), "paths.transition": str(transition)})
    nlp = load_model_from_config(config, auto_fill=True)  # what `spacy assemble` does
    with nlp.select_pipes(disable=["hc_transition_parser"]):
        nlp.initialize()
    nlp.to_disk(tmp_path / "accurate")

    loaded = spacy.load(tmp_path / "accurate")
    assert loaded.pipe_names == ["hc_transition_parser", "hc_parser"]
    parser = loaded.get_pipe("hc_parser")
    bonus = config["components"]["hc_parser"]["doc_arc_bonus"]
    assert bonus > 0 and parser.doc_arc_bonus == bonus and parser.labeler.keep_doc_labels is True
    trained = spacy.load(graph).get_pipe("hc_parser")
    assert parser.labels == trained.labels
    assert parser.model.to_bytes() == trained.model.to_bytes()
    for words, _, _ in SENTENCES:
        doc = loaded(spacy.tokens.Doc(loaded.vocab, words=words))
        for sent in doc.sents:  # the briefly trained models may split the doc: a tree per sentence
            heads = np.array([-1] + [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent])
            assert not tree_problem(heads)
