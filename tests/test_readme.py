"""The README's Quickstart, run as a user would paste it (slow: it trains a pipeline)."""
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


def section(markdown: str, title: str) -> str:
    """The text under ``## title`` up to the next ``## `` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, re.MULTILINE | re.DOTALL)
    if match is None:
        raise AssertionError(f"README has no '## {title}' section")
    return match.group(1)


def code_blocks(text: str) -> List[Tuple[str, str]]:
    """(language, code) of each fenced block, in order."""
    return [(lang, code) for lang, code in FENCE.findall(text)]


def quickstart_blocks() -> List[Tuple[str, str]]:
    return code_blocks(section((ROOT / "README.md").read_text(encoding="utf8"), "Quickstart"))


def test_quickstart_blocks_are_complete():
    blocks = quickstart_blocks()
    langs = [lang for lang, _ in blocks]
    assert "bash" in langs and "python" in langs and set(langs) <= {"bash", "python"}, langs
    for _, code in blocks:
        assert "..." not in code, f"placeholder in a quickstart block:\n{code}"


def test_code_blocks_parses_fences():
    text = "x\n```bash\npython -m a \\\n  b\n```\ny\n```python\nprint(1)\n```\n"
    assert code_blocks(text) == [("bash", "python -m a \\\n  b\n"), ("python", "print(1)\n")]
    assert section("## A\none\n## B\ntwo\n", "A") == "one\n"


def with_interpreter(script: str) -> str:
    """``python`` at the start of a command line -> this interpreter (the one with the package)."""
    return re.sub(r"(?m)^(\s*)python(?= )", lambda m: f'{m.group(1)}"{sys.executable}"', script)


@pytest.mark.slow
def test_quickstart_runs(tmp_path):
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    shutil.copytree(ROOT / "assets" / "sample", tmp_path / "assets" / "sample")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    for k, (lang, code) in enumerate(quickstart_blocks()):
        if lang == "bash":
            command = ["bash", "-euo", "pipefail", "-c", with_interpreter(code)]
        else:
            script = tmp_path / f"quickstart_{k}.py"
            script.write_text(code, encoding="utf8")
            command = [sys.executable, str(script)]
        result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, (f"quickstart block {k} ({lang}) failed:\n{code}\n--- stdout\n"
                                        f"{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}")
    assert (tmp_path / "training/quickstart/model-best/config.cfg").exists()
    assert "<svg" in (tmp_path / "parse.html").read_text(encoding="utf8")
    assert (tmp_path / "parsed.conllu").stat().st_size > 0
