"""scripts/stress.py: its doc check catches what it must, and a short run passes (slow)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import stress  # noqa: E402


def test_check_catches_broken_parses():
    nlp = spacy.blank("en")
    good = Doc(nlp.vocab, words=["a", "b", "c"], heads=[1, 1, 1], deps=["x", "ROOT", "y"])
    assert stress.check(good, 3) is None
    assert "len changed" in stress.check(good, 4)
    assert stress.check(Doc(nlp.vocab, words=[]), 0) is None
    assert stress.check(Doc(nlp.vocab, words=["a"]), 1) == "no parse"
    mislabelled = Doc(nlp.vocab, words=["a", "b"], heads=[1, 1], deps=["x", "nsubj"])
    assert "roots" in stress.check(mislabelled, 2)
    two_roots_labelled = Doc(nlp.vocab, words=["a", "b"], heads=[1, 1], deps=["ROOT", "ROOT"])
    assert "roots" in stress.check(two_roots_labelled, 2)


def test_every_shape_is_made_with_its_length():
    import random

    from spacy_hcparse.conllu import read_conllu

    nlp = spacy.blank("en")
    sentences = list(read_conllu(ROOT / "assets/sample/sample-ud-train.conllu"))
    it = iter(sentences * 100)
    rng = random.Random(0)
    for shape in stress.SHAPES:
        doc, context = stress.make_input(nlp, shape, lambda: next(it), rng)
        assert context["shape"] == shape and context["n"] == len(doc)
        if shape == "long":
            assert len(doc) >= 500 and len(list(doc.sents)) == 1


@pytest.mark.slow
def test_short_stress_run(tmp_path):
    out = tmp_path / "stress.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts/stress.py"), "--corpus",
                             str(ROOT / "assets/sample/sample-ud-train.conllu"), "--seconds", "10", "--json", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    reports = json.loads(out.read_text())["reports"]
    assert [r["n_failures"] for r in reports] == [0, 0]
    assert all(r["inputs"] >= len(stress.SHAPES) for r in reports)
