"""``spacy package`` a trained pipeline, install it into a fresh venv and parse a sentence with it.

    python scripts/package_check.py MODEL OUTPUT_DIR --name NAME [--version 0.1.0]

The venv is made with ``--system-site-packages`` (spaCy and spacy-hcparse come from the current
environment, nothing is downloaded) and the package is installed with ``pip --no-deps
--no-index``. Loading it there finds ``hc_parser`` only through spacy-hcparse's
``spacy_factories`` entry point: the package code never imports spacy_hcparse. Writes
``OUTPUT_DIR/check.json`` with the parse.
"""
import argparse
import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import srsly
from wasabi import msg

CHECK = """
import json, sys
from importlib.metadata import entry_points
import spacy
nlp = spacy.load(sys.argv[1])
doc = nlp("The small dog chased a red ball in the garden.")
factories = sorted(e.name for e in entry_points(group="spacy_factories") if e.name.startswith("hc_"))
print(json.dumps({"python": sys.executable, "package": sys.argv[1], "pipeline": nlp.pipe_names,
                  "entry_points": factories, "module": type(nlp.get_pipe(nlp.pipe_names[-1])).__module__,
                  "parse": [[t.text, t.dep_, t.head.i] for t in doc]}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--name", required=True)
    parser.add_argument("--version", default="0.1.0")
    args = parser.parse_args()
    if not (args.model / "config.cfg").exists():
        msg.fail(f"no trained pipeline at {args.model}", exits=1)
    if args.output.exists():
        shutil.rmtree(args.output)
    args.output.mkdir(parents=True)
    run([sys.executable, "-m", "spacy", "package", str(args.model), str(args.output), "--name", args.name,
         "--version", args.version, "--build", "sdist", "--force"])
    meta = srsly.read_json(args.model / "meta.json")
    package = f"{meta['lang']}_{args.name}"
    sdist = next(args.output.glob(f"{package}-{args.version}/dist/*.tar.gz"))
    env_dir = args.output / "venv"
    msg.info(f"fresh venv {env_dir} (--system-site-packages)")
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    if subprocess.run([python, "-c", "import wheel"], capture_output=True).returncode != 0:
        # setuptools builds the sdist without build isolation only with `wheel` installed; it goes
        # into the throwaway venv, fetched by pip (nothing else is downloaded)
        msg.info("installing `wheel` into the fresh venv (needed to build the sdist)")
        run([python, "-m", "pip", "install", "-q", "wheel"])
    run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-build-isolation", str(sdist)])
    out = run([python, "-c", CHECK, package], capture=True)
    result = json.loads(out.strip().splitlines()[-1])
    requirements = srsly.read_json(next(args.output.glob(f"{package}-{args.version}/{package}/meta.json")))["requirements"]
    result["requirements"] = requirements
    if not result["entry_points"] or not any(r.startswith("spacy-hcparse") for r in requirements):
        msg.fail(f"package does not declare spacy-hcparse or the entry points are missing: {result}", exits=1)
    (args.output / "check.json").write_text(json.dumps(result, indent=2) + "\n")
    msg.good(f"{package} installed in {env_dir} parses: " + " ".join(f"{t}/{d}" for t, d, _ in result["parse"]))


def run(cmd, capture: bool = False) -> str:
    result = subprocess.run(cmd, capture_output=capture, text=True)
    if result.returncode != 0:
        msg.fail(f"command failed ({result.returncode}): {' '.join(cmd)}\n{result.stdout or ''}{result.stderr or ''}", exits=1)
    return result.stdout or ""


if __name__ == "__main__":
    main()
