"""Train one parser with ``spacy train`` on a run's corpus, or skip it with a clear message.

    python scripts/train.py FACTORY CONFIG OUTPUT --corpus corpus/RUN --lang en [--max-steps N]
        [--eval-frequency N] [-- extra spacy train overrides]

The parser is skipped (exit status 0, ``OUTPUT/SKIPPED.txt`` written, later steps leave it out)
when the config file does not exist or no installed package registers the factory yet (the
``hc_transition_parser`` is written in parallel with this workflow). ``--max-steps`` and
``--eval-frequency`` override the config when positive.
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from wasabi import msg


def factory_available(name: str) -> bool:
    """Whether ``name`` is a registered spaCy factory (entry points included)."""
    import spacy
    from spacy.language import Language

    spacy.blank("xx")  # loads the factories registered through entry points
    if Language.has_factory(name):
        return True
    try:  # registered on import, before its entry point is declared
        import importlib

        importlib.import_module("spacy_hcparse.components.transition_parser")
    except ImportError:
        return False
    return Language.has_factory(name)


def main() -> None:
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("factory")
    parser.add_argument("config", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--lang", required=True)
    parser.add_argument("--max-steps", type=int, default=0)
    parser.add_argument("--eval-frequency", type=int, default=0)
    args = parser.parse_args(argv)
    skip = None
    if not args.config.exists():
        skip = f"config {args.config} does not exist yet"
    elif not factory_available(args.factory):
        skip = f"no package registers the spaCy factory '{args.factory}' yet"
    marker = args.output / "SKIPPED.txt"
    if skip:
        msg.warn(f"SKIPPING {args.factory}: {skip}. The evaluation and report leave it out.")
        if args.output.exists():
            shutil.rmtree(args.output)
        args.output.mkdir(parents=True)
        marker.write_text(skip + "\n")
        return
    if marker.exists():
        marker.unlink()
    cmd = [
        sys.executable, "-m", "spacy", "train", str(args.config), "--output", str(args.output),
        "--paths.train", str(args.corpus / "train.spacy"), "--paths.dev", str(args.corpus / "dev.spacy"),
        "--nlp.lang", args.lang,
    ]
    if args.max_steps > 0:
        cmd += ["--training.max_steps", str(args.max_steps)]
    if args.eval_frequency > 0:
        cmd += ["--training.eval_frequency", str(args.eval_frequency)]
    cmd += extra
    msg.info(" ".join(cmd))
    sys.exit(subprocess.run(cmd).returncode)


if __name__ == "__main__":
    main()
