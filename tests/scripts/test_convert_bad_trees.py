"""convert.py on a treebank with a cycle, several roots and a malformed line: bad sentences are
reported by sent_id and dropped (never converted into wrong trees), a bad line stops the step."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def row(i, head, form=None, label="dep"):
    return f"{i}\t{form or f'w{i}'}\t_\t_\t_\t_\t{head}\t{label}\t_\t_\n"


def sentence(sent_id, rows):
    return f"# sent_id = {sent_id}\n# text = x\n" + "".join(rows) + "\n"


def make_treebank(base: Path, train: str) -> Path:
    assets = base / "assets"
    assets.mkdir(parents=True)
    good = sentence("good-1", [row(1, 2), row(2, 0, label="root")])
    (assets / "train.conllu").write_text(train, encoding="utf8")
    for split in ("dev", "test"):
        (assets / f"{split}.conllu").write_text(good, encoding="utf8")
    files = {s: str(assets / f"{s}.conllu") for s in ("train", "dev", "test")}
    (assets / "source.json").write_text(json.dumps({"treebank": "UD_Bad", "source": "mirror", "files": files}))
    return assets


def convert(base, assets):
    env = {k: v for k, v in os.environ.items() if k != "HCPARSE_UD_DIR"}
    return subprocess.run([sys.executable, str(ROOT / "scripts/convert.py"), str(assets), str(base / "corpus")],
                          cwd=base, env=env, capture_output=True, text=True)


def test_cycles_and_several_roots_are_reported_by_sent_id_and_dropped(tmp_path):
    train = (
        sentence("ok-1", [row(1, 2), row(2, 0, label="root"), row(3, 2)])
        + sentence("cycle-7", [row(1, 0, label="root"), row(2, 3), row(3, 2)])
        + sentence("roots-9", [row(1, 0, label="root"), row(2, 0, label="root")])
        + sentence("ok-2", [row(1, 0, label="root"), row(2, 1)])
    )
    assets = make_treebank(tmp_path, train)
    result = convert(tmp_path, assets)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout + result.stderr
    assert "sentence cycle-7 is not a tree: cycle" in out
    assert "sentence roots-9 is not a tree: expected exactly one word attached to the root, got 2" in out
    data = json.loads((tmp_path / "corpus/data.json").read_text())
    assert data["counts"]["train"]["sentences"] == 2 and data["dropped_not_trees"]["train"] == 2
    assert [m.split(": sentence ")[1].split()[0] for m in data["dropped_sentences"]["train"]] == ["cycle-7", "roots-9"]
    assert "train.conllu:7:" in data["dropped_sentences"]["train"][0]  # file and first line
    kept = (tmp_path / "corpus/train.conllu").read_text()
    assert "ok-1" in kept and "ok-2" in kept and "cycle-7" not in kept and "roots-9" not in kept


def test_malformed_line_stops_with_file_and_line(tmp_path):
    train = sentence("ok-1", [row(1, 0, label="root")]) + sentence("bad", [row(1, 0), "2\tw2\t_\t_\tx\n"])
    assets = make_treebank(tmp_path, train)
    result = convert(tmp_path, assets)
    assert result.returncode != 0
    assert f"{assets / 'train.conllu'}:8: expected 10 tab-separated columns, got 5" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
