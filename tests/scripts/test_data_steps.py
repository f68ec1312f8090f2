"""The workflow's data steps on the sample treebank: fetch falls back loudly, convert keeps gold
words and handles treebanks without a train file; training skips unregistered factories."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(args, cwd, expect=0, **env):
    full_env = {k: v for k, v in os.environ.items() if k != "HCPARSE_UD_DIR"}
    full_env.update(env)
    result = subprocess.run([sys.executable, *args], cwd=cwd, env=full_env, capture_output=True, text=True)
    assert result.returncode == expect, result.stdout + result.stderr
    return result


@pytest.fixture
def project(tmp_path):
    for name in ("scripts", "assets/sample"):
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path


def test_fetch_falls_back_to_sample_and_says_so(project):
    result = run(["scripts/fetch_treebank.py", "UD_English-EWT", "en_ewt"], project, HCPARSE_OFFLINE="1")
    assert "NO UD DATA" in result.stderr and "SAMPLE" in result.stderr
    source = json.loads((project / "assets/ud/UD_English-EWT/source.json").read_text())
    assert source["source"] == "sample" and "SAMPLE DATA" in source["note"]


def test_mirror_without_train_trains_on_dev(project):
    mirror = project / "mirror" / "UD_Test-Tiny"
    mirror.mkdir(parents=True)
    for split in ("dev", "test"):
        shutil.copy(project / f"assets/sample/sample-ud-{split}.conllu", mirror / f"xx_tiny-ud-{split}.conllu")
    run(["scripts/fetch_treebank.py", "UD_Test-Tiny", "xx_tiny"], project, HCPARSE_UD_DIR=str(project / "mirror"))
    run(["scripts/convert.py", "assets/ud/UD_Test-Tiny", "corpus/tiny", "--eval-limit", "5"], project)
    data = json.loads((project / "corpus/tiny/data.json").read_text())
    assert data["source"] == "mirror" and data["train_on"] == "dev" and data["eval_splits"] == ["test"]
    # Every 10th dev sentence is held out for model selection, never trained on.
    assert data["counts"]["train"]["sentences"] == 11 and data["counts"]["dev"]["sentences"] == 1
    assert data["counts"]["test"]["sentences"] == 5
    ids = {s: {line for line in (project / f"corpus/tiny/{s}.conllu").read_text().splitlines()
               if line.startswith("# sent_id")} for s in ("train", "dev")}
    assert len(ids["dev"]) == 1 and not ids["train"] & ids["dev"]
    assert all((project / f"corpus/tiny/{s}.spacy").exists() for s in ("train", "dev", "test"))


def test_convert_keeps_gold_words(project):
    run(["scripts/fetch_treebank.py", "UD_English-EWT", "en_ewt"], project, HCPARSE_OFFLINE="1")
    run(["scripts/convert.py", "assets/ud/UD_English-EWT", "corpus/s"], project)
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    docs = list(DocBin().from_disk(project / "corpus/s/test.spacy").get_docs(nlp.vocab))
    words = [t.text for doc in docs for t in doc]
    assert "ca" in words and "n't" in words and "can't" not in words  # syntactic words, as evaluated
    assert sum(len(list(doc.sents)) for doc in docs) == 12
    assert "2-3\tcan't" in (project / "corpus/s/test.conllu").read_text()  # gold file kept whole


def test_training_fails_loudly_on_an_unregistered_factory(project, tmp_path):
    (project / "cfg.cfg").write_text("[nlp]\nlang = \"en\"\n")
    result = run(["scripts/train.py", "no_such_factory_xyz", "cfg.cfg", "out", "--corpus", "c", "--lang", "en"], project,
                 expect=1)
    assert "'no_such_factory_xyz'" in result.stdout + result.stderr and "registers the spaCy factory" in result.stdout
    assert not (project / "out").exists()
