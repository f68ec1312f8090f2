"""Build the two wheels that ship a trained pipeline with hc_parser (the raw-text pipeline: tok2vec,
morphologizer and hc_parser; or hc_parser alone), install them into a clean venv from local wheels
only, and parse a sentence there.

    python scripts/package_check.py MODEL OUTPUT_DIR --name NAME [--version 0.1.0] [--source .]

1. ``OUTPUT_DIR/dist/spacy_hcparse-*.whl``: ``pip wheel --no-deps`` of the spacy-hcparse source
   tree (``--source``: the project directory, a clone of the repository, by default). It is built
   from a copy of the packaging files and ``spacy_hcparse/``, so that a stale ``build/`` directory
   in the clone cannot leak into the wheel.
2. ``OUTPUT_DIR/dist/<lang>_<name>-<version>-*.whl``: ``spacy package --build none`` (the package
   directory, ``OUTPUT_DIR/<lang>_<name>-<version>/``), then ``pip wheel --no-deps`` of it, which
   needs no ``build`` package. Its meta.json requires ``spacy-hcparse`` (``spacy package`` finds
   it through the pipeline's registered functions); the check fails if it does not.
3. In a temporary directory: a wheelhouse with the two wheels and ``pip wheel`` of their
   dependencies (spaCy, thinc, numpy, numba, ...: from pip's index or cache), and a venv
   WITHOUT system site packages into which ``pip install --no-index --find-links WHEELHOUSE
   <lang>_<name>==<version>`` installs the pipeline and, through its requirement, spacy-hcparse.
   pip and the check run from the temporary directory with a clean environment (no PYTHONPATH,
   no pip configuration), so neither the checkout nor the calling environment is on the path.
4. There: ``spacy.load`` of the package, which finds ``hc_parser`` through spacy-hcparse's
   ``spacy_factories`` entry point (the package code never imports spacy_hcparse), parses a
   sentence; the check asserts that spaCy and spacy_hcparse were imported from the venv and that
   no other site-packages directory is on its ``sys.path``. A pipeline saved with the trained UD
   tokenizer (``[nlp.tokenizer] @tokenizers = "spacy_hcparse.UDTokenizer.v1"``, as the workflow's
   ``hc_pipeline_ud``) must load with a ``UDTokenizer`` as ``nlp.tokenizer`` (found through the
   ``spacy_tokenizers`` entry point) and segment the text with it (``tokenizer`` and
   ``multiword_tokens`` in check.json).

Writes ``OUTPUT_DIR/check.json`` (the parse, the entry points, the requirements, where each module
was imported from). The temporary directory is removed at the end.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from typing import Dict, List, Optional

import srsly
from spacy.util import load_config
from wasabi import msg

SENTENCE = "The small dog chased a red ball in the garden."
UD_TOKENIZER = ("spacy_hcparse.UDTokenizer.v1", "spacy_hcparse.tokenizer.tokenizer.UDTokenizer")  # config name, class
# What a wheel of spacy-hcparse is built from (the rest of a clone is not needed).
SOURCE_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "README.md", "LICENSE", "MANIFEST.in")
SOURCE_PACKAGE = "spacy_hcparse"
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc", "*.egg-info")

CHECK = """
import json, site, sys
from importlib.metadata import entry_points, version
import spacy
nlp = spacy.load(sys.argv[1])
doc = nlp(sys.argv[2])
hcparse = sys.modules.get("spacy_hcparse")  # imported by spacy.load through the entry point
factories = sorted(e.name for e in entry_points(group="spacy_factories") if e.name.startswith("hc_"))
print(json.dumps({"python": sys.executable, "package": sys.argv[1], "pipeline": nlp.pipe_names,
                  "entry_points": factories, "module": type(nlp.get_pipe(nlp.pipe_names[-1])).__module__,
                  "parse": [[t.text, t.dep_, t.head.i] for t in doc], "pos": [t.pos_ for t in doc],
                  "tokenizer": type(nlp.tokenizer).__module__ + "." + type(nlp.tokenizer).__name__,
                  "multiword_tokens": doc._.hc_multiword_tokens if doc.has_extension("hc_multiword_tokens") else None,
                  "sentences": [s.text for s in doc.sents] if doc.has_annotation("DEP") else [],
                  "prefix": sys.prefix, "sys_path": sys.path, "user_site": site.ENABLE_USER_SITE,
                  "spacy_file": spacy.__file__, "spacy_hcparse_file": hcparse.__file__ if hcparse else None,
                  "spacy_hcparse_version": version("spacy-hcparse")}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--name", required=True)
    parser.add_argument("--version", default="0.1.0")
    parser.add_argument("--source", type=Path, default=Path("."),
                        help="the spacy-hcparse source tree (setup.cfg, pyproject.toml, spacy_hcparse/)")
    args = parser.parse_args()
    if not (args.model / "config.cfg").exists():
        msg.fail(f"no trained pipeline at {args.model}", exits=1)
    source = args.source.resolve()
    if not ((source / "setup.cfg").is_file() and (source / SOURCE_PACKAGE / "__init__.py").is_file()):
        msg.fail(f"no spacy-hcparse source tree at {source} (setup.cfg and {SOURCE_PACKAGE}/ are needed "
                 "to build its wheel): run from a clone of the repository or pass --source", exits=1)
    output = args.output.resolve()
    if output.exists():
        shutil.rmtree(output)
    dist = output / "dist"
    dist.mkdir(parents=True)
    package = f"{srsly.read_json(args.model / 'meta.json')['lang']}_{args.name}"
    with tempfile.TemporaryDirectory(prefix="hcparse-package-") as tmp:
        work = Path(tmp)
        hcparse_wheel = build_source_wheel(source, work / "src", dist)
        requirements = build_pipeline_wheel(args.model, output, dist, args.name, args.version, package)
        result = install_and_parse(work, dist, package, args.version, source)
    result.update({"requirements": requirements, "wheels": sorted(p.name for p in dist.glob("*.whl")),
                   "config_tokenizer": config_tokenizer(args.model)})
    problems = check_result(result, source)
    if problems:
        msg.fail("the package check failed:\n" + "\n".join(f"- {p}" for p in problems) + f"\n{json.dumps(result, indent=2)}",
                 exits=1)
    (output / "check.json").write_text(json.dumps(result, indent=2) + "\n")
    msg.good(f"{package} and {hcparse_wheel.name} installed in a clean venv parse: "
             + " ".join(f"{t}/{d}" for t, d, _ in result["parse"]))
    msg.info(f"the wheels to ship: {dist}")


def config_tokenizer(model: Path) -> str:
    """The registered name of the saved pipeline's ``[nlp.tokenizer]`` (e.g. ``spacy.Tokenizer.v1``)."""
    return load_config(model / "config.cfg", interpolate=False)["nlp"]["tokenizer"].get("@tokenizers", "")


def build_source_wheel(source: Path, copy: Path, dist: Path) -> Path:
    """``pip wheel --no-deps`` of a copy of the spacy-hcparse source tree; returns the wheel."""
    copy.mkdir(parents=True)
    for name in SOURCE_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, copy / name)
    shutil.copytree(source / SOURCE_PACKAGE, copy / SOURCE_PACKAGE, ignore=IGNORE)
    msg.info(f"building the spacy-hcparse wheel from {source}")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(dist), str(copy)], capture=True)
    return only(dist.glob("spacy_hcparse-*.whl"), "spacy-hcparse wheel")


def build_pipeline_wheel(model: Path, output: Path, dist: Path, name: str, version: str, package: str) -> List[str]:
    """``spacy package`` the pipeline and ``pip wheel`` the package directory; returns the
    requirements of its meta.json."""
    run([sys.executable, "-m", "spacy", "package", str(model), str(output), "--name", name,
         "--version", version, "--build", "none", "--force"])
    package_dir = output / f"{package}-{version}"
    msg.info(f"building the {package} wheel")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(dist), str(package_dir)], capture=True)
    only(dist.glob(f"{package}-*.whl"), f"{package} wheel")
    return srsly.read_json(package_dir / package / "meta.json")["requirements"]


def install_and_parse(work: Path, dist: Path, package: str, version: str, source: Path) -> Dict:
    """Fill a wheelhouse, install the pipeline into a clean venv from it, run CHECK there."""
    wheelhouse = work / "wheelhouse"
    msg.info("collecting the dependencies' wheels (pip wheel, from pip's index or cache)")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(wheelhouse), *map(str, dist.glob("*.whl"))],
        capture=True, cwd=work)
    env_dir = work / "venv"
    msg.info(f"clean venv {env_dir} (no system site packages), local wheels only")
    venv.EnvBuilder(system_site_packages=False, with_pip=True, clear=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    env = clean_env()
    run([python, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheelhouse), f"{package}=={version}"],
        capture=True, cwd=work, env=env)
    out = run([python, "-c", CHECK, package, SENTENCE], capture=True, cwd=work, env=env)
    result = json.loads(out.strip().splitlines()[-1])
    result["system_site_packages"] = read_pyvenv_cfg(env_dir).get("include-system-site-packages", "false") == "true"
    result["spacy_hcparse_from_venv"] = is_within(result["spacy_hcparse_file"], result["prefix"]) and not is_within(
        result["spacy_hcparse_file"], str(source))
    return result


def check_result(result: Dict, source: Path) -> List[str]:
    """What is wrong with a CHECK result (nothing, for a package that ships)."""
    problems = []
    if not any(r.startswith("spacy-hcparse") for r in result["requirements"]):
        problems.append(f"the package does not require spacy-hcparse: {result['requirements']}")
    if "hc_parser" not in result["entry_points"]:
        problems.append("no hc_parser entry point in group spacy_factories")
    if "hc_parser" not in result["pipeline"]:
        problems.append(f"the pipeline has no hc_parser: {result['pipeline']}")
    if not result["module"].startswith("spacy_hcparse."):
        problems.append(f"the last pipe comes from {result['module']}, not spacy_hcparse")
    if not result["parse"]:
        problems.append("empty parse")
    if result.get("config_tokenizer") == UD_TOKENIZER[0] and result.get("tokenizer") != UD_TOKENIZER[1]:
        problems.append(f"the pipeline is saved with {UD_TOKENIZER[0]} but loads with {result.get('tokenizer')}")
    if result["system_site_packages"] or result["user_site"]:
        problems.append("the venv sees the system or user site packages")
    foreign = [p for p in result["sys_path"] if p.rstrip("/").endswith("-packages") and not is_within(p, result["prefix"])]
    if foreign:
        problems.append(f"site-packages outside the venv on sys.path: {foreign}")
    if not result["spacy_hcparse_from_venv"]:
        problems.append(f"spacy_hcparse was imported from {result['spacy_hcparse_file']}, not from the venv "
                        f"{result['prefix']} (source: {source})")
    if not is_within(result["spacy_file"], result["prefix"]):
        problems.append(f"spacy was imported from {result['spacy_file']}, not from the venv")
    return problems


def clean_env() -> Dict[str, str]:
    """The environment for the venv's pip and python: no PYTHON*/PIP*/VIRTUAL_ENV variables and no
    pip configuration file (so no index or find-links other than the wheelhouse)."""
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV", "CONDA")) and k != "__PYVENV_LAUNCHER__"}
    keep.update({"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    return keep


def read_pyvenv_cfg(env_dir: Path) -> Dict[str, str]:
    lines = (env_dir / "pyvenv.cfg").read_text().splitlines()
    return {k.strip(): v.strip() for k, _, v in (line.partition("=") for line in lines) if v}


def is_within(path: Optional[str], parent: str) -> bool:
    return bool(path) and Path(path).resolve().is_relative_to(Path(parent).resolve())


def only(paths, what: str) -> Path:
    found = sorted(paths)
    if len(found) != 1:
        msg.fail(f"expected one {what}, found {[p.name for p in found]}", exits=1)
    return found[0]


def run(cmd, capture: bool = False, cwd: Optional[Path] = None, env: Optional[Dict[str, str]] = None) -> str:
    result = subprocess.run(cmd, capture_output=capture, text=True, cwd=cwd, env=env)
    if result.returncode != 0:
        msg.fail(f"command failed ({result.returncode}): {' '.join(cmd)}\n{result.stdout or ''}{result.stderr or ''}", exits=1)
    return result.stdout or ""


if __name__ == "__main__":
    main()
