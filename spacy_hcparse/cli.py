"""Command line: ``python -m spacy_hcparse parse|evaluate|warmup|train-tokenizer``.

    python -m spacy_hcparse parse MODEL INPUT [--format conllu|json] [--output FILE] [--keep-columns]
    python -m spacy_hcparse parse MODEL INPUTS... --output-dir DIR [--pattern GLOB] [--n-process N]
        [--overwrite] [--strict] [--scheduler ADDRESS]
    python -m spacy_hcparse evaluate GOLD SYSTEM [--json FILE] [--per-label]
    python -m spacy_hcparse warmup [MODEL]      (compile its numba kernels ahead: ``spacy_hcparse.warmup``)
    python -m spacy_hcparse train-tokenizer TRAIN DEV OUTPUT [--lang LANG] [--width N] ...

``parse`` reads plain text (one sentence or paragraph per line; the pipeline tokenizes and the
parser splits) or CoNLL-U (its words and sentences are kept: one Doc per sentence with its start
preset; comments, MISC and multiword-token lines are copied through) and writes CoNLL-U or JSON
with the pipeline's heads, labels and tags (UPOS, XPOS; LEMMA and FEATS when a component sets
them). ``--keep-columns`` copies LEMMA, UPOS, XPOS and FEATS from CoNLL-U input instead: without
it, a gold file's tags never reach the output, so ``evaluate`` scores the pipeline's own. One input
goes to stdout or ``--output``; with ``--output-dir``, files and directories (searched recursively
for ``--pattern``) are parsed to one output file each at the mirrored path, resumably and in
parallel (see ``spacy_hcparse.corpus`` and docs/corpus.md). ``evaluate`` prints the CoNLL 2018
shared task scores (``spacy_hcparse.evaluation.conll18``: any tokenization, character alignment)
and, when both files hold the same words, the UD-style details of ``spacy_hcparse.evaluation.ud``.
``train-tokenizer`` trains the ``UDTokenizer`` (``spacy_hcparse.tokenizer``) on a treebank's raw
text and writes ``OUTPUT/tokenizer`` (load it with ``[initialize.tokenizer] path``) and
``OUTPUT/scores.json``; its table goes to stdout.

Messages go to stderr, each starting ``error:``, ``warning:`` or ``done:``; progress bars too (when
stderr is a terminal, unless ``--quiet``). The output of ``parse`` without ``--output`` and the
tables of ``evaluate`` go to stdout.

Exit status of ``parse``: 0 done; 1 an error (bad arguments, model, input, or a failing file with
``--strict``); 3 done, but some files failed (each named in an ``error:`` line).
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import List, Optional

import spacy

from .conllu import ConlluError, iter_lines
from .corpus import ParseOptions, Progress, Summary, atomic_output, parse_corpus, parse_stream, plan_files
from .distributed import run_tasks_dask
from .evaluation import score_conllu
from .evaluation.conll18 import METRICS, evaluate_files, format_table
from .warmup import warmup
from .tokenizer.tokenizer import TokenizerDefaults
from .tokenizer.train import TrainSettings, train_files

EXIT_SOME_FAILED = 3
DESCRIPTION = "Parse text or CoNLL-U with a trained spaCy pipeline, and score CoNLL-U output against gold."
PARSE_DESCRIPTION = """Parse text (one sentence or paragraph a line) or CoNLL-U (its words and sentences kept) with
a trained pipeline and write CoNLL-U or JSON with the pipeline's heads, labels and tags.

examples:
  python -m spacy_hcparse parse MODEL input.txt --output parsed.conllu
  python -m spacy_hcparse parse MODEL gold.conllu --output parsed.conllu
  python -m spacy_hcparse parse MODEL corpus/ --output-dir parsed/ --pattern '*.txt' --n-process 2

Text input gets CoNLL-U with '# sent_id' (the file's name and a count), '# text' and SpaceAfter=No;
runs of spaces in a line are read as one space. CoNLL-U input keeps its comments (those missing
added).

exit status:
  0  done (a warning on stderr for each input that held no words)
  1  error: bad arguments, model or input, or a failing file with --strict
  3  done, but some files failed (each named in an 'error:' line; see docs/corpus.md)"""
TRAIN_TOKENIZER_DESCRIPTION = """Train the UD tokenizer (tokens, multiword tokens, sentence ends from raw text) on a
treebank, choosing the best weights on a development treebank by the CoNLL 2018 evaluation.

example:
  python -m spacy_hcparse train-tokenizer train.conllu dev.conllu training/tokenizer --lang en
  python -m spacy train config.cfg --paths.train ... --initialize.tokenizer.path training/tokenizer/tokenizer"""
EVALUATE_DESCRIPTION = """CoNLL 2018 shared task scores of a system CoNLL-U file against a gold one (any tokenization);
when both hold the same words, also UD-style scores (punctuation counted, label subtypes dropped)."""

WARMUP_DESCRIPTION = """Compile the numba kernels a pipeline uses (default: those of hc_parser's default settings) into
numba's cache by parsing a short text once, so that the first parse of a new install, image or CI
job does not wait for them."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m spacy_hcparse``."""
    parser = argparse.ArgumentParser(prog="python -m spacy_hcparse", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{parse,evaluate,warmup,train-tokenizer}")
    raw = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("parse", help="parse text or CoNLL-U with a trained pipeline",
                       description=PARSE_DESCRIPTION, formatter_class=raw)
    p.add_argument("model", help="pipeline directory or installed package name")
    p.add_argument("inputs", type=Path, nargs="+", metavar="INPUT",
                   help="text file (one sentence or paragraph a line) or CoNLL-U file; '-' for stdin; "
                        "with --output-dir also several files and directories")
    p.add_argument("--format", choices=("conllu", "json"), default="conllu", help="output format (default: conllu)")
    p.add_argument("--input-format", choices=("auto", "text", "conllu"), default="auto",
                   help="input format (default: auto, CoNLL-U for a .conllu/.conll/.conllx file or "
                        "lines of 10 tab-separated columns, else text)")
    p.add_argument("--keep-columns", action="store_true",
                   help="copy LEMMA, UPOS, XPOS and FEATS from CoNLL-U input instead of writing the "
                        "pipeline's (default: the pipeline's, '_' where it sets none)")
    p.add_argument("--output", type=Path, default=None, help="output file of one input (default: stdout)")
    p.add_argument("--output-dir", type=Path, default=None,
                   help="one output file per input file, at its path relative to the input directory")
    p.add_argument("--pattern", action="append", default=None,
                   help="glob of the files to parse in input directories, repeatable (default: '*')")
    p.add_argument("--batch-size", type=int, default=64, help="docs per nlp.pipe batch (default: 64)")
    p.add_argument("--n-process", type=int, default=1, help="worker processes (default: 1)")
    p.add_argument("--parallel", choices=("auto", "files", "docs"), default="auto",
                   help="with --n-process > 1: a pool of processes over files; nlp.pipe(n_process) within "
                        "each file (costly: every Doc comes back as bytes); auto: files when there are "
                        "at least 2 to parse, else one process")
    p.add_argument("--overwrite", action="store_true", help="parse again files whose output exists")
    p.add_argument("--strict", action="store_true", help="stop at the first file that fails")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on a Dask cluster (tcp://HOST:8786, or 'local' for a local cluster of "
                        "--n-process workers); needs the 'distributed' extra")
    p.add_argument("--quiet", action="store_true", help="no progress bars (messages still go to stderr)")
    e = sub.add_parser("evaluate", help="score a system CoNLL-U file against gold (CoNLL 2018, UD-style)",
                       description=EVALUATE_DESCRIPTION)
    e.add_argument("gold", type=Path, help="gold CoNLL-U file")
    e.add_argument("system", type=Path, help="system CoNLL-U file (e.g. the output of parse)")
    e.add_argument("--json", type=Path, default=None, help="also write the metrics as JSON to this file")
    e.add_argument("--per-label", action="store_true", help="print the per-label table")
    w = sub.add_parser("warmup", help="compile a pipeline's numba kernels into the cache (images, CI)",
                       description=WARMUP_DESCRIPTION)
    w.add_argument("model", nargs="?", default=None,
                   help="pipeline directory or package name (default: an untrained default hc_parser)")
    t = sub.add_parser("train-tokenizer", help="train the UD tokenizer (tokens, multiword tokens, sentences)",
                       description=TRAIN_TOKENIZER_DESCRIPTION, formatter_class=raw)
    t.add_argument("train", type=Path, help="CoNLL-U file to train on (its # text lines and SpaceAfter=No)")
    t.add_argument("dev", type=Path, help="CoNLL-U file to choose the best weights on")
    t.add_argument("output", type=Path, help="directory for the tokenizer and scores.json")
    t.add_argument("--lang", default="xx", help="spaCy language code of the vocab (default: xx)")
    defaults, settings = TokenizerDefaults(), TrainSettings()
    t.add_argument("--width", type=int, default=defaults.width, help=f"width of the piece vectors (default: {defaults.width})")
    t.add_argument("--dilations", default=",".join(map(str, defaults.dilations)),
                   help="dilation of each convolution block, comma-separated (default: %(default)s)")
    t.add_argument("--embed-rows", type=int, default=defaults.embed_rows,
                   help=f"rows of the hashed piece embedding (default: {defaults.embed_rows})")
    t.add_argument("--max-epochs", type=int, default=settings.max_epochs, help="0: the default (%(default)s)")
    t.add_argument("--eval-every", type=int, default=settings.eval_every,
                   help="steps between evaluations (default: %(default)s, about a dozen over the run, 25-100 steps apart)")
    t.add_argument("--patience", type=int, default=settings.patience,
                   help="evaluations without a better score before stopping (default: %(default)s)")
    t.add_argument("--learn-rate", type=float, default=settings.learn_rate, help="default: %(default)s")
    t.add_argument("--seed", type=int, default=settings.seed, help="default: %(default)s")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "parse":
            return _parse(args)
        if args.command == "warmup":
            warmup(args.model, say=lambda message: print(message, file=sys.stderr, flush=True))
            return 0
        if args.command == "train-tokenizer":
            return _train_tokenizer(args)
        return _evaluate(args)
    except BrokenPipeError:  # stdout closed early (`... | head`): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 1
    except (ConlluError, ValueError, OSError) as err:
        _say("error", str(err))
        return 1


def _say(kind: str, message: str) -> None:
    """One message on stderr, ``kind: message`` (kind: error, warning or done)."""
    print(f"{kind}: {message}", file=sys.stderr, flush=True)


def _parse(args) -> int:
    options = ParseOptions(args.input_format, args.format, args.batch_size, keep_columns=args.keep_columns)
    if args.n_process < 1:
        raise ValueError(f"--n-process must be >= 1, got {args.n_process}")
    if args.output_dir is None:
        return _parse_one(args, options)
    if args.output is not None:
        raise ValueError("--output is for one input; with --output-dir each input gets its own file")
    tasks = plan_files(args.inputs, args.output_dir, args.pattern or ["*"], args.format)
    if not tasks:
        _say("warning", f"no files to parse in {', '.join(map(str, args.inputs))} "
                        f"(patterns: {', '.join(args.pattern or ['*'])})")
    progress = False if args.quiet else None
    if args.scheduler:
        summary = run_tasks_dask(args.model, tasks, args.scheduler, options=options, n_workers=args.n_process,
                                 overwrite=args.overwrite, strict=args.strict, progress=progress)
    else:
        nlp = spacy.load(args.model)  # errors here are reported before any work starts
        summary = parse_corpus(args.model, tasks, options, n_process=args.n_process, parallel=args.parallel,
                               overwrite=args.overwrite, strict=args.strict, progress=progress, nlp=nlp)
    for source in summary.empty:
        _say("warning", f"{source} holds no words to parse; its output is empty")
    _say("done", _summary_line(summary))
    if summary.failed:
        return 1 if args.strict else EXIT_SOME_FAILED
    return 0


def _summary_line(summary: Summary) -> str:
    return (f"files: {summary.parsed} parsed, {summary.skipped} skipped (output already there), "
            f"{len(summary.failed)} failed; {summary.words:,} words in {summary.seconds:.1f} s, "
            f"{summary.words_per_sec:,.0f} words/sec ({summary.workers})")


def _parse_one(args, options: ParseOptions) -> int:
    """One input (a file or stdin) to stdout or ``--output`` (written atomically); progress (words)
    and a one-line summary on stderr."""
    if len(args.inputs) != 1 or args.inputs[0].is_dir():
        raise ValueError("several inputs or a directory: give --output-dir DIR")
    if args.scheduler:
        raise ValueError("--scheduler needs --output-dir")
    nlp = spacy.load(args.model)
    source = args.inputs[0]
    name = "<stdin>" if str(source) == "-" else str(source)
    lines = iter_lines(source)
    parallel = ParseOptions(options.input_format, options.output_format, options.batch_size, args.n_process,
                            options.keep_columns)
    bar = Progress(1, False if args.quiet else None)
    start = time.perf_counter()
    try:
        if args.output is None:
            words = parse_stream(nlp, lines, sys.stdout, name=name, options=parallel, on_words=bar.add_words)
            sys.stdout.flush()
        else:
            with atomic_output(args.output) as out:
                words = parse_stream(nlp, lines, out, name=name, options=parallel, on_words=bar.add_words)
        bar.files.update(1)
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    if not words:
        _say("warning", f"{name} holds no words to parse; the output is empty")
    target = "<stdout>" if args.output is None else str(args.output)
    rate = words / seconds if seconds > 0 else 0.0
    _say("done", f"{name} -> {target}: {words:,} words in {seconds:.1f} s, {rate:,.0f} words/sec")
    return 0


def _evaluate(args) -> int:
    """The CoNLL 2018 evaluation (any tokenization); when both files hold the same words, also the
    UD-style details of ``evaluation.ud`` (exact match, non-projective arcs, per label)."""
    scores = evaluate_files(args.gold, args.system)
    print(f"{args.system} against {args.gold}: CoNLL 2018 shared task evaluation (F1 of LAS: labels without subtypes)")
    print(format_table(scores))
    result = {"conll18": {m: scores[m].as_dict() for m in METRICS}}
    try:
        ud = score_conllu(args.gold, args.system)
    except ValueError:  # another tokenization or sentence split: CoNLL 2018 scores only
        ud = None
    if ud is not None:
        result.update(ud)
        print("Same words in both files; UD-style (punctuation counted, label subtypes dropped):")
        for key in ("ud_uas", "ud_las", "exact_uas", "exact_las"):
            print(f"  {key:<10} {_pct(ud[key])}")
        np_ = ud["nonprojective"]
        print(f"  non-projective arcs: gold {np_['gold_arcs']}, system {np_['system_arcs']}, "
              f"precision {_pct(np_['precision'])}, recall {_pct(np_['recall'])}")
        if args.per_label:
            print(f"  {'label':<12} {'gold':>6} {'P':>7} {'R':>7} {'F':>7}")
            for label, s in ud["ud_las_per_label"].items():
                print(f"  {label:<12} {s['gold']:>6} {_pct(s['p']):>7} {_pct(s['r']):>7} {_pct(s['f']):>7}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


def _train_tokenizer(args) -> int:
    dilations = [int(d) for d in args.dilations.split(",") if d.strip()]
    cfg = {"width": args.width, "dilations": dilations, "embed_rows": args.embed_rows}
    settings = TrainSettings(max_epochs=args.max_epochs or TrainSettings.max_epochs, eval_every=args.eval_every, patience=args.patience,
                             learn_rate=args.learn_rate, seed=args.seed)
    result = train_files(args.train, args.dev, args.output, lang=args.lang, cfg=cfg, settings=settings,
                         log=lambda line: print(line, flush=True))
    if result.best is None:
        _say("warning", "no evaluation ran: the tokenizer was not trained")
        return 1
    _say("done", f"{args.output / 'tokenizer'}")
    return 0


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"
