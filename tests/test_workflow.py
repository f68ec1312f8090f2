"""`spacy project run smoke` end to end in a copy of the project, on the sample treebank (slow)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_smoke_workflow_on_sample(tmp_path):
    # What a clone holds: the project, and the source the package step builds the wheel from.
    for name in ("project.yml", "setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("scripts", "configs", "assets/sample", "spacy_hcparse"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    env = {k: v for k, v in os.environ.items() if k != "HCPARSE_UD_DIR"}
    env["HCPARSE_OFFLINE"] = "1"
    result = subprocess.run([sys.executable, "-m", "spacy", "project", "run", "smoke"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    run = "UD_English-EWT-smoke"
    for parser in ("hc_parser", "spacy_parser"):
        metrics = json.loads((tmp_path / f"metrics/{run}/{parser}.json").read_text())
        assert metrics["parser"] == parser and metrics["data_source"] == "sample"
        assert 0.0 <= metrics["splits"]["test"]["ud_las"] <= 1.0
    assert "search" in json.loads((tmp_path / f"metrics/{run}/hc_parser.json").read_text())["splits"]["test"]
    report = (tmp_path / f"reports/{run}.md").read_text()
    assert "SAMPLE DATA, NOT A UD TREEBANK" in report and "| spacy_parser |" in report
    assert (tmp_path / f"reports/{run}.png").stat().st_size > 1000
    check = json.loads((tmp_path / f"packages/{run}/check.json").read_text())
    assert "hc_parser" in check["entry_points"] and check["parse"]
    assert not check["system_site_packages"] and check["spacy_hcparse_from_venv"]
    wheels = sorted(p.name for p in (tmp_path / f"packages/{run}/dist").glob("*.whl"))
    assert [w.split("-")[0] for w in wheels] == ["en_hcparse", "spacy_hcparse"]
