"""The README's Quickstart, run as a user would paste it, and what it must leave behind: a trained
parser that scores UAS >= 50 on the sample's test file and splits the example text into its two
sentences. The Usage section's Python blocks then run against that model.

The blocks are extracted from README.md (fenced ``bash`` and ``python`` blocks, in order) and run
in a scratch directory holding copies of ``configs/`` and ``assets/sample/``; ``python`` at the
start of a command line becomes this interpreter."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
MODEL = "training/quickstart/model-best"
TEST_FILE = "assets/sample/sample-ud-test.conllu"


def section(markdown: str, title: str, level: int = 2) -> str:
    """The text under the heading ``title`` (of ``level`` hashes) up to the next heading of that
    level or above; lines inside fenced blocks are never headings."""
    out, inside, fenced = [], False, False
    for line in markdown.splitlines(keepends=True):
        heading = re.match(r"(#+) (.*)", line) if not fenced else None
        if heading and len(heading.group(1)) <= level:
            if inside:
                break
            inside = len(heading.group(1)) == level and heading.group(2).strip() == title
            continue
        if line.startswith("```"):
            fenced = not fenced
        if inside:
            out.append(line)
    if not out:
        raise AssertionError(f"README has no '{'#' * level} {title}' section")
    return "".join(out)


def code_blocks(text: str) -> List[Tuple[str, str]]:
    """(language, code) of each fenced block, in order."""
    return [(lang, code) for lang, code in FENCE.findall(text)]


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf8")


def quickstart_blocks() -> List[Tuple[str, str]]:
    return code_blocks(section(readme(), "Quickstart"))


def python_api_blocks() -> List[Tuple[str, str]]:
    return code_blocks(section(readme(), "Python API", level=3))


def example_text() -> str:
    """The text the Quickstart's Python block parses."""
    (code,) = [code for lang, code in quickstart_blocks() if lang == "python"]
    match = re.search(r'nlp\("([^"]+)"\)', code)
    assert match, f"no nlp(\"...\") call in the quickstart:\n{code}"
    return match.group(1)


def test_quickstart_blocks_are_complete():
    blocks = quickstart_blocks()
    langs = [lang for lang, _ in blocks]
    assert "bash" in langs and "python" in langs and set(langs) <= {"bash", "python"}, langs
    for _, code in blocks + python_api_blocks():
        assert "..." not in code, f"placeholder in a README block:\n{code}"
    train = next(code for lang, code in blocks if "spacy train" in code)
    assert "--training.eval_frequency" in train  # else model-best is the untrained step-0 model
    assert any(MODEL in code and TEST_FILE in code for _, code in blocks)


def test_code_blocks_parses_fences():
    text = "x\n```bash\npython -m a \\\n  b\n```\ny\n```python\nprint(1)\n```\n"
    assert code_blocks(text) == [("bash", "python -m a \\\n  b\n"), ("python", "print(1)\n")]
    assert section("## A\none\n## B\ntwo\n", "A") == "one\n"
    assert section("## A\n### B\ntwo\n#### C\nthree\n### D\n", "B", level=3) == "two\n#### C\nthree\n"
    assert section("## A\n```bash\n# a comment\n```\n## B\n", "A") == "```bash\n# a comment\n```\n"


def test_example_text_has_two_sentences():
    assert example_text().count(". ") == 1 and example_text().endswith(".")


def with_interpreter(script: str) -> str:
    """``python`` at the start of a command line -> this interpreter (the one with the package)."""
    return re.sub(r"(?m)^(\s*)python(?= )", lambda m: f'{m.group(1)}"{sys.executable}"', script)


def run_blocks(blocks: List[Tuple[str, str]], where: Path, prefix: str) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    for k, (lang, code) in enumerate(blocks):
        if lang == "bash":
            command = ["bash", "-euo", "pipefail", "-c", with_interpreter(code)]
        else:
            script = where / f"{prefix}_{k}.py"
            script.write_text(code, encoding="utf8")
            command = [sys.executable, str(script)]
        result = subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, (f"{prefix} block {k} ({lang}) failed:\n{code}\n--- stdout\n"
                                        f"{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}")


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory) -> Path:
    """A scratch directory where the Quickstart's blocks have run, in order."""
    where = tmp_path_factory.mktemp("quickstart")
    shutil.copytree(ROOT / "configs", where / "configs")
    shutil.copytree(ROOT / "assets" / "sample", where / "assets" / "sample")
    run_blocks(quickstart_blocks(), where, "quickstart")
    return where


def test_quickstart_leaves_a_trained_parser(quickstart):
    from spacy_hcparse.evaluation import score_conllu

    assert (quickstart / MODEL / "config.cfg").exists()
    scores = score_conllu(quickstart / TEST_FILE, quickstart / "parsed.conllu")
    assert scores["ud_uas"] >= 0.5, f"UAS {scores['ud_uas']:.3f} on the sample's test file"
    parsed = (quickstart / "parsed.conllu").read_text(encoding="utf8")
    assert "2-3\tcan't\t" in parsed  # the multiword token kept


def test_quickstart_example_has_its_two_sentences(quickstart):
    import spacy

    nlp = spacy.load(quickstart / MODEL)
    doc = nlp(example_text())
    assert [s.text for s in doc.sents] == [s.strip() + "." for s in example_text().rstrip(".").split(". ")]


def test_python_api_blocks_run_on_the_quickstart_model(quickstart):
    blocks = python_api_blocks()
    assert blocks and all(lang == "python" and MODEL in code for lang, code in blocks)
    # each block stands alone (its own imports); one interpreter runs them all, to save its start-up
    run_blocks([("python", "\n".join(code for _, code in blocks))], quickstart, "python_api")
