"""Put a UD treebank's CoNLL-U files under assets/ud/<treebank>/ (gitignored) and say where from.

    python scripts/fetch_treebank.py TREEBANK PREFIX [--dest assets/ud]

Sources, in order:
1. the local mirror ``$HCPARSE_UD_DIR/<treebank>/*.conllu`` when the variable is set (nothing is
   downloaded; a missing treebank there is an error);
2. the UniversalDependencies GitHub repository (the project's git assets), unless
   ``HCPARSE_OFFLINE=1`` or github.com cannot be reached;
3. the sample treebank in assets/sample/ (invented sentences), with a loud warning.

Writes ``<dest>/<treebank>/source.json``: the source, the split files found (``train`` may be
missing: the workflow then trains on dev and evaluates on test) and a note for the report.
"""
import argparse
import json
import os
import shutil
import socket
import sys
from pathlib import Path

from wasabi import msg

SPLITS = ("train", "dev", "test")
SAMPLE = Path("assets/sample")
UD_GITHUB = "https://github.com/UniversalDependencies/{treebank}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("treebank")
    parser.add_argument("prefix", help="file prefix, e.g. en_ewt")
    parser.add_argument("--dest", type=Path, default=Path("assets/ud"))
    parser.add_argument("--branch", default="master")
    args = parser.parse_args()
    dest = args.dest / args.treebank
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    mirror = os.environ.get("HCPARSE_UD_DIR", "").strip()
    if mirror:
        info = from_mirror(Path(mirror), args.treebank, args.prefix, dest)
    else:
        info = from_github(args.treebank, args.prefix, dest, args.branch) or from_sample(args.treebank, dest)
    info["treebank"] = args.treebank
    (dest / "source.json").write_text(json.dumps(info, indent=2) + "\n")
    found = ", ".join(f"{k}: {Path(v).name}" for k, v in info["files"].items() if v)
    msg.good(f"{args.treebank} from {info['source']} -> {dest} ({found})")


def from_mirror(mirror: Path, treebank: str, prefix: str, dest: Path) -> dict:
    src = mirror / treebank
    if not src.is_dir():
        available = sorted(p.name for p in mirror.glob("*/") if p.is_dir()) if mirror.is_dir() else []
        msg.fail(f"HCPARSE_UD_DIR={mirror}: no directory {treebank} (available: {', '.join(available) or 'none'})", exits=1)
    files = {}
    for split in SPLITS:
        found = sorted(src.glob(f"*-ud-{split}.conllu"))
        if found:
            shutil.copy(found[0], dest / found[0].name)
            files[split] = str(dest / found[0].name)
    _require_dev_test(files, str(src))
    return {"source": "mirror", "origin": str(src), "files": _complete(files), "note": _note(files)}


def from_github(treebank: str, prefix: str, dest: Path, branch: str) -> dict:
    if os.environ.get("HCPARSE_OFFLINE") == "1" or not _online("github.com"):
        msg.warn("No local mirror (HCPARSE_UD_DIR unset) and github.com is not reachable")
        return {}
    from weasel.util import git_checkout

    files = {}
    for split in SPLITS:
        name = f"{prefix}-ud-{split}.conllu"
        try:
            git_checkout(UD_GITHUB.format(treebank=treebank), name, dest / name, branch=branch)
            files[split] = str(dest / name)
        except (SystemExit, Exception) as err:  # git_checkout exits via wasabi on failure
            msg.warn(f"could not fetch {name} from {treebank}@{branch}: {err}")
    if "dev" not in files or "test" not in files:
        return {}
    return {"source": "github", "origin": UD_GITHUB.format(treebank=treebank), "files": _complete(files), "note": _note(files)}


def from_sample(treebank: str, dest: Path) -> dict:
    banner = "!" * 78
    print(f"\n{banner}\n!! NO UD DATA: using the SAMPLE treebank in {SAMPLE}/ (64 invented sentences)\n"
          f"!! instead of {treebank}. Scores on it only show that the workflow runs.\n"
          f"!! Set HCPARSE_UD_DIR to a local mirror or allow access to github.com.\n{banner}\n", file=sys.stderr)
    files = {}
    for split in SPLITS:
        src = SAMPLE / f"sample-ud-{split}.conllu"
        shutil.copy(src, dest / src.name)
        files[split] = str(dest / src.name)
    note = f"SAMPLE DATA: {SAMPLE}/ (invented sentences) stands in for {treebank}; the numbers only show that the workflow runs."
    return {"source": "sample", "origin": str(SAMPLE), "files": files, "note": note}


def _online(host: str, timeout: float = 5.0) -> bool:
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def _require_dev_test(files: dict, where: str) -> None:
    missing = [s for s in ("dev", "test") if s not in files]
    if missing:
        msg.fail(f"{where}: no {' or '.join(missing)} file (*-ud-{missing[0]}.conllu)", exits=1)


def _complete(files: dict) -> dict:
    return {split: files.get(split) for split in SPLITS}


def _note(files: dict) -> str:
    if files.get("train"):
        return ""
    return "No train file: trained on nine tenths of dev (the rest selects checkpoints), evaluated on test only."


if __name__ == "__main__":
    main()
