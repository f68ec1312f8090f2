"""Corpus-parsing throughput: ``python -m spacy_hcparse parse --output-dir`` with 1 and N processes.

Run: ``python benchmarks/corpus_parse.py MODEL [--conllu corpus/UD_English-EWT/train.conllu]
[--files 20] [--n-process 2] [--work DIR] [--dask]``

The raw text of the CoNLL-U file (its ``# text =`` lines, one sentence a line, all of them) is
split into ``--files`` files of consecutive lines. Each configuration runs the CLI in a fresh
process with ``--overwrite`` into its own output folder, and prints the words/sec of its summary
(parsing only: from the first file to the last, worker start-up and pipeline loading in workers
included, the main process's pipeline load not), the command's whole wall time, and the CPU
seconds (user + system) of all its processes (Dask's included only as far as they are reaped). Configurations:
one process; a pool of N processes over files; ``nlp.pipe(n_process=N)`` within each file; with
``--dask``, a local Dask cluster of N single-threaded worker processes (its start-up counted in the
wall time only). Outputs are checked to be identical across configurations.
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def split_text(conllu: Path, folder: Path, n_files: int) -> int:
    """Write the ``# text`` lines of ``conllu`` to ``n_files`` files; the number of sentences."""
    texts = [line.split("=", 1)[1].strip() for line in conllu.open(encoding="utf8") if line.startswith("# text =")]
    folder.mkdir(parents=True, exist_ok=True)
    per_file = -(-len(texts) // n_files)
    for i in range(n_files):
        (folder / f"part{i:02d}.txt").write_text("\n".join(texts[i * per_file:(i + 1) * per_file]) + "\n")
    return len(texts)


def run(model: str, inputs: Path, out: Path, extra) -> dict:
    command = [sys.executable, "-m", "spacy_hcparse", "parse", model, str(inputs), "--output-dir", str(out),
               "--overwrite", "--quiet", *extra]
    # the caller's PYTHONPATH first (another checkout of the package, for a pipeline saved by it)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [os.environ.get("PYTHONPATH"), str(ROOT)] if p))
    start, cpu = time.perf_counter(), _children_cpu()
    # run outside the checkout: `python -m` puts the working directory first on sys.path
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=inputs.parent)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    words = re.search(r"words: ([\d,]+) in ([\d.]+) s, ([\d,]+) words/sec", done.stdout)
    return {"words": int(words.group(1).replace(",", "")), "seconds": float(words.group(2)),
            "wps": int(words.group(3).replace(",", "")), "wall": wall, "cpu": cpu, "command": " ".join(command[1:])}


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes (and theirs, when waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--conllu", type=Path, default=ROOT / "corpus" / "UD_English-EWT" / "train.conllu")
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--n-process", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="folder for inputs and outputs (default: a temp dir)")
    parser.add_argument("--dask", action="store_true", help="also a local Dask cluster (needs the 'distributed' extra)")
    args = parser.parse_args()
    work = (args.work or Path(tempfile.mkdtemp(prefix="corpus_parse_"))).resolve()
    model = str(Path(args.model).resolve()) if Path(args.model).exists() else args.model
    sentences = split_text(args.conllu, work / "in", args.files)
    n = str(args.n_process)
    configs = [("1 process", []),
               (f"{n} processes over files", ["--n-process", n, "--parallel", "files"]),
               (f"nlp.pipe(n_process={n}) within files", ["--n-process", n, "--parallel", "docs"])]
    if args.dask:
        configs.append((f"Dask LocalCluster, {n} workers", ["--n-process", n, "--scheduler", "local"]))
    print(f"{args.conllu}: {sentences} sentences in {args.files} files; model {args.model}; {os.cpu_count()} cores")
    print(f"{'configuration':<36} {'words':>8} {'parse s':>8} {'words/sec':>10} {'wall s':>7} {'CPU s':>7}")
    reference = None
    for i, (name, extra) in enumerate(configs):
        out = work / f"out{i}"
        r = run(model, work / "in", out, extra)
        print(f"{name:<36} {r['words']:>8,} {r['seconds']:>8.1f} {r['wps']:>10,} {r['wall']:>7.1f} {r['cpu']:>7.1f}", flush=True)
        texts = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*.conllu"))}
        if reference is None:
            reference = texts
        elif texts != reference:
            print(f"  outputs differ from the 1-process run ({r['command']})")


if __name__ == "__main__":
    main()
