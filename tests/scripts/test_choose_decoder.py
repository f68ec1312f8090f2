"""scripts/choose_decoder.py: every candidate decoder parses dev with the same weights, the best
by LAS (then UAS, ties to the earlier candidate) is written into the pipeline's config, and the
pipeline loads and parses with it."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import spacy
from spacy.util import load_config

from tests.treebank import make_examples

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DEV = ROOT / "assets" / "sample" / "sample-ud-dev.conllu"


def load_script():
    spec = importlib.util.spec_from_file_location("scripts_choose_decoder", ROOT / "scripts" / "choose_decoder.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_choose_prefers_las_then_uas_then_order():
    choose = load_script().choose
    scores = {"eisner": {"dep_las": 0.8, "dep_uas": 0.9}, "mst": {"dep_las": 0.8, "dep_uas": 0.9},
              "hill_climb": {"dep_las": 0.8, "dep_uas": 0.91}}
    assert choose(scores, ["eisner", "mst"]) == "eisner"
    assert choose(scores, ["mst", "eisner"]) == "mst"
    assert choose(scores, ["eisner", "mst", "hill_climb"]) == "hill_climb"
    scores["mst"]["dep_las"] = 0.81
    assert choose(scores, ["eisner", "mst", "hill_climb"]) == "mst"


def test_choice_is_written_into_the_config(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser")
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    model = tmp_path / "model-best"
    nlp.to_disk(model)
    out = tmp_path / "choice.json"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "choose_decoder.py"), str(model), str(SAMPLE_DEV),
                    "--decoders", "mst,eisner", "--out", str(out)], check=True, capture_output=True, text=True)
    choice = json.loads(out.read_text())
    assert choice["chosen"] in ("mst", "eisner") and set(choice["per_decoder"]) == {"mst", "eisner"}
    written = load_config(model / "config.cfg", interpolate=False)["components"]["hc_parser"]["decoder"]
    assert written == choice["decoder"]
    parsed = spacy.load(model)("She reads old books .")
    assert sum(t.head == t for t in parsed) == 1
