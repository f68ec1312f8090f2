"""UD validity of a parser's CoNLL-U output, two ways.

``ud_problems``: the UD level-2 rules a parser's output must keep, checked here with no download:
per sentence a unique ``# sent_id`` and a ``# text`` equal to the forms joined with a space except
after ``SpaceAfter=No``; word ids 1..n in order (multiword ranges and empty nodes well placed); ten
columns, no empty field, no space at a form's edges; heads within the sentence forming one tree
with exactly one word on 0, labelled ``root`` exactly there. The file must also load in udapi
(``udapi.core.document``).

``ud_validator``: UD's own ``validate.py`` (UniversalDependencies/tools), from the checkout named by
``HCPARSE_UD_TOOLS``, else cloned once into ``~/.cache/spacy_hcparse/ud-tools``; ``None`` where
neither works (no network), and the slow test that uses it skips and says why."""
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from udapi.core.document import Document


def ud_problems(path: Path) -> List[str]:
    """Every rule broken in the CoNLL-U file ``path``, as ``line N: what`` (empty: valid)."""
    problems: List[str] = []
    seen_ids = set()
    block: List[tuple] = []
    lines = Path(path).read_text(encoding="utf8").split("\n")
    if lines[-1] != "" or (len(lines) > 1 and lines[-2] != ""):
        problems.append("the file does not end in a blank line")
    for number, line in enumerate(lines, start=1):
        if line:
            block.append((number, line))
        elif block:
            problems += _sentence_problems(block, seen_ids)
            block = []
    try:
        Document(str(path))
    except Exception as err:  # noqa: BLE001 - any failure to load is a problem to report
        problems.append(f"udapi cannot read it: {err}")
    return problems


def _sentence_problems(block, seen_ids) -> List[str]:
    first = block[0][0]
    comments = {}
    for _, line in block:
        if line.startswith("#") and "=" in line:
            key, value = line[1:].split("=", 1)
            comments.setdefault(key.strip(), value.strip())
    out = []
    if "sent_id" not in comments:
        out.append(f"line {first}: no sent_id")
    elif comments["sent_id"] in seen_ids:
        out.append(f"line {first}: sent_id {comments['sent_id']} used before")
    seen_ids.add(comments.get("sent_id"))
    words, heads, text, skip_until = [], [], "", 0
    for number, line in block:
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 10 or any(c == "" for c in cols):
            out.append(f"line {number}: not 10 non-empty columns")
            continue
        if cols[1] != cols[1].strip():
            out.append(f"line {number}: space at the edge of the form {cols[1]!r}")
        if "." in cols[0]:
            continue
        space = "SpaceAfter=No" not in cols[9].split("|")
        if "-" in cols[0]:
            lo, hi = map(int, cols[0].split("-"))
            if lo != len(words) + 1:
                out.append(f"line {number}: range {cols[0]} after word {len(words)}")
            text += cols[1] + (" " if space else "")
            skip_until = hi
            continue
        if cols[0] != str(len(words) + 1):
            out.append(f"line {number}: id {cols[0]}, expected {len(words) + 1}")
        words.append((number, cols))
        if int(cols[0]) > skip_until:
            text += cols[1] + (" " if space else "")
    if "text" not in comments:
        out.append(f"line {first}: no text")
    elif comments["text"] != text.rstrip(" "):
        out.append(f"line {first}: text {comments['text']!r} but the forms give {text.rstrip(' ')!r}")
    n = len(words)
    heads = [int(cols[6]) if cols[6].isdigit() else -1 for _, cols in words]
    for (number, cols), head in zip(words, heads):
        if not 0 <= head <= n or head == int(cols[0]):
            out.append(f"line {number}: head {cols[6]}")
        if (head == 0) != (cols[7] == "root"):
            out.append(f"line {number}: head {head} with label {cols[7]}")
    if sum(h == 0 for h in heads) != 1:
        out.append(f"line {first}: {sum(h == 0 for h in heads)} words on the root")
    for m in range(1, n + 1):  # every word reaches the root
        seen, h = set(), m
        while 0 < h <= n and h not in seen:
            seen.add(h)
            h = heads[h - 1]
        if h != 0:
            out.append(f"line {words[m - 1][0]}: word {m} is on a cycle")
            break
    return out


UD_TOOLS_REPO = "https://github.com/UniversalDependencies/tools"
UD_TOOLS_CACHE = Path.home() / ".cache" / "spacy_hcparse" / "ud-tools"


def ud_validator() -> Optional[Path]:
    """``validate.py`` of UD's tools (``HCPARSE_UD_TOOLS``, else a shallow clone into
    ``UD_TOOLS_CACHE``), or ``None`` where it cannot be had."""
    folder = Path(os.environ.get("HCPARSE_UD_TOOLS") or UD_TOOLS_CACHE)
    if not (folder / "validate.py").exists() and "HCPARSE_UD_TOOLS" not in os.environ:
        try:
            subprocess.run(["git", "clone", "-q", "--depth", "1", UD_TOOLS_REPO, str(folder)],
                           check=True, timeout=120, capture_output=True)
        except (OSError, subprocess.SubprocessError):
            return None
    return folder / "validate.py" if (folder / "validate.py").exists() else None


def validator_report(validator: Path, path: Path, lang: str, level: int = 2, exclude: Sequence[str] = ()) -> str:
    """UD's ``validate.py --level LEVEL --lang LANG`` on ``path`` (``exclude``: ids of its tests
    to leave out): its output, which ends in ``*** PASSED ***`` where the file is valid."""
    command = [sys.executable, str(validator), "--level", str(level), "--lang", lang, str(path)]
    run = subprocess.run(command + (["--exclude", *exclude] if exclude else []),
                         capture_output=True, text=True, cwd=validator.parent)
    return (run.stdout + run.stderr).strip() + ("" if run.returncode == 0 else f"\n(exit status {run.returncode})")
