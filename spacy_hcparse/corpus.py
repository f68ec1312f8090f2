"""Parsing a corpus: many input files, one output file per input, resumable, in parallel.

``plan_files`` maps inputs (files, or directories searched recursively with glob patterns) to
outputs at the mirrored relative path under an output directory, the suffix replaced by the
output format's (``a/b.txt`` -> ``OUT/a/b.conllu``). ``parse_task`` parses one file: it skips a
file whose output exists (unless ``overwrite``), writes the output atomically (a temporary
``.NAME.*.partial`` file beside it, renamed when complete, so a killed run leaves no half-written
output and a re-run redoes exactly the files without one), and reports a failing file (not UTF-8,
malformed CoNLL-U, ...) as a ``FileResult`` instead of raising. ``parse_corpus`` runs the tasks in
this process, in a pool of processes over files, or with ``nlp.pipe(n_process=N)`` within each
file; ``spacy_hcparse.distributed`` runs the same ``parse_task`` on a Dask cluster.

Memory bound: a file is streamed line by line through ``nlp.pipe``, whose components take
``batch_size`` docs at a time, and every parsed doc is written to the temporary output at once.
A process therefore holds the pipeline, its current line, and at most a few batches of docs
(``batch_size`` per pipeline component; with ``nlp.pipe(n_process=N)`` about ``2 * N`` batches
in flight), whatever the size of the file or of the corpus; a pool of N processes over files holds
N pipelines. The list of input paths is the only thing that grows with the corpus.

Input formats as in ``python -m spacy_hcparse parse``: text, one paragraph a line (blank lines
skipped; the pipeline tokenizes and splits sentences), or CoNLL-U (gold words, sentences,
comments, MISC and multiword-token lines kept; LEMMA, UPOS, XPOS and FEATS are the pipeline's unless
``ParseOptions.keep_columns``). Format ``auto`` takes CoNLL-U for a ``.conllu``/``.conll``/
``.conllx`` suffix or a first word line of 10 tab-separated columns.
"""
import glob
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, TextIO, Tuple, Union

from .conllu import ConlluError, iter_lines, parse_conllu, parsed_conllu
from .evaluation import doc_rows, input_doc
from .evaluation.raw_text import tokenized

CONLLU_SUFFIXES = (".conllu", ".conll", ".conllx")
OUTPUT_SUFFIXES = {"conllu": ".conllu", "json": ".json"}
PARTIAL_SUFFIX = ".partial"
SNIFF_LINES = 1000  # lines read at most to tell CoNLL-U from text

WordsCallback = Optional[Callable[[int], None]]


@dataclass(frozen=True)
class ParseOptions:
    """How to read, parse and write one file. ``n_process > 1`` parses the file's docs with
    ``nlp.pipe(n_process=...)`` (parallel within the file). ``keep_columns``: CoNLL-U output
    copies LEMMA, UPOS, XPOS and FEATS from CoNLL-U input instead of writing the pipeline's."""

    input_format: str = "auto"  # auto | text | conllu
    output_format: str = "conllu"  # conllu | json
    batch_size: int = 64
    n_process: int = 1
    keep_columns: bool = False

    def __post_init__(self):
        if self.input_format not in ("auto", "text", "conllu"):
            raise ValueError(f"input format {self.input_format!r}: expected auto, text or conllu")
        if self.output_format not in OUTPUT_SUFFIXES:
            raise ValueError(f"output format {self.output_format!r}: expected conllu or json")
        if self.batch_size < 1 or self.n_process < 1:
            raise ValueError(f"batch_size and n_process must be >= 1, got {self.batch_size} and {self.n_process}")


@dataclass(frozen=True)
class FileTask:
    """One input file and the output file it is parsed to."""

    source: Path
    target: Path


@dataclass
class FileResult:
    """What became of one file: ``status`` is parsed, skipped (output already there) or failed."""

    source: str
    target: str
    status: str
    words: int = 0
    seconds: float = 0.0
    error: str = ""


@dataclass
class Summary:
    """Counts over a run; ``seconds`` is the wall time of parsing (the pipeline loaded before)."""

    parsed: int = 0
    skipped: int = 0
    failed: List[Tuple[str, str]] = field(default_factory=list)  # (source, error)
    empty: List[str] = field(default_factory=list)  # parsed sources that held no words
    words: int = 0
    seconds: float = 0.0
    workers: str = "1 process"

    def add(self, result: FileResult) -> None:
        if result.status == "parsed":
            self.parsed += 1
            self.words += result.words
            if not result.words:
                self.empty.append(result.source)
        elif result.status == "skipped":
            self.skipped += 1
        else:
            self.failed.append((result.source, result.error))

    @property
    def words_per_sec(self) -> float:
        return self.words / self.seconds if self.seconds > 0 else 0.0

    def report(self) -> str:
        lines = [
            f"files: {self.parsed} parsed, {self.skipped} skipped (output already there), {len(self.failed)} failed",
            f"words: {self.words:,} in {self.seconds:.1f} s, {self.words_per_sec:,.0f} words/sec ({self.workers})",
        ]
        lines += [f"failed: {error}" for _, error in self.failed]
        return "\n".join(lines)


# ---- planning -------------------------------------------------------------------------------


def plan_files(
    inputs: Sequence[Union[str, Path]],
    output_dir: Union[str, Path],
    patterns: Sequence[str] = ("*",),
    output_format: str = "conllu",
) -> List[FileTask]:
    """The tasks for ``inputs``: a file maps to ``output_dir / its name``, a directory's files
    matching any of ``patterns`` (recursively; hidden files and folders and anything under
    ``output_dir`` left out) to their path relative to it; the suffix becomes the output format's.
    Raises ``ValueError`` for a missing input, an input inside ``output_dir``, or two inputs that
    would write the same output."""
    out = Path(output_dir).resolve()
    suffix = OUTPUT_SUFFIXES[output_format]
    tasks: List[FileTask] = []
    owner: Dict[Path, Path] = {}
    for given in map(Path, inputs):
        if str(given) == "-":
            raise ValueError("'-' (stdin) is for one input without --output-dir")
        if not given.exists():
            raise ValueError(f"no such file or directory: {given}")
        root = given.resolve()
        if _inside(root, out):
            raise ValueError(f"input {given} is inside the output directory {output_dir}")
        pairs = [(given, Path(given.name))] if given.is_file() else _directory_files(given, root, out, patterns)
        for source, relative in pairs:
            target = out / relative.with_suffix(suffix)
            if target in owner:
                raise ValueError(f"{owner[target]} and {source} would both write {target}")
            owner[target] = source
            tasks.append(FileTask(source, target))
    return tasks


def _directory_files(given: Path, root: Path, out: Path, patterns: Sequence[str]) -> List[Tuple[Path, Path]]:
    found = set()
    for pattern in patterns:
        for path in given.rglob(pattern):
            relative = path.relative_to(given)
            if any(part.startswith(".") for part in relative.parts) or not path.is_file():
                continue
            if _inside(path.resolve(), out):
                continue
            found.add(relative)
    return [(given / relative, relative) for relative in sorted(found)]


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


# ---- one file -------------------------------------------------------------------------------


def parse_task(nlp, task: FileTask, options: ParseOptions = ParseOptions(), *, overwrite: bool = False,
               on_words: WordsCallback = None) -> FileResult:
    """Parse one file to its output unless the output exists (``overwrite`` redoes it). Never
    raises for a bad file: the error (naming file and line where the reader knows them) is in the
    result, and no output file is left."""
    source, target = str(task.source), str(task.target)
    if not overwrite and task.target.exists():
        return FileResult(source, target, "skipped")
    start = time.perf_counter()
    try:
        words = parse_file(nlp, task.source, task.target, options, on_words=on_words)
    except Exception as err:  # one bad file is reported; the corpus goes on
        return FileResult(source, target, "failed", seconds=time.perf_counter() - start, error=_describe(err, source))
    return FileResult(source, target, "parsed", words, time.perf_counter() - start)


def _describe(err: Exception, source: str) -> str:
    if isinstance(err, ConlluError) or (isinstance(err, OSError) and err.filename):
        return str(err)  # names the file (and line)
    return f"{source}: {type(err).__name__}: {err}"


def parse_file(nlp, source: Union[str, Path], target: Union[str, Path], options: ParseOptions = ParseOptions(), *,
               on_words: WordsCallback = None) -> int:
    """Parse ``source`` to ``target`` (written atomically, folders made); the number of words."""
    with atomic_output(Path(target)) as out:
        return parse_stream(nlp, iter_lines(source), out, name=str(source), options=options, on_words=on_words)


@contextmanager
def atomic_output(target: Path) -> Iterator[TextIO]:
    """A text handle on a temporary file beside ``target``, renamed to ``target`` once the block
    ends without an exception (flushed and fsynced first), removed otherwise. Leftover temporary
    files of ``target`` from killed runs are removed after the rename. One run per output
    directory at a time: a second run's temporary file of the same target would be removed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}{PARTIAL_SUFFIX}")
    try:
        with partial.open("x", encoding="utf8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*{PARTIAL_SUFFIX}"):
        leftover.unlink(missing_ok=True)


def parse_stream(nlp, lines: Iterable[str], out: TextIO, *, name: str = "<input>",
                 options: ParseOptions = ParseOptions(), on_words: WordsCallback = None) -> int:
    """Parse text or CoNLL-U ``lines`` (see the module docstring) and write each doc to ``out``
    as soon as it is parsed; the number of words. ``name`` is used in error messages and, with
    ``input_format="auto"``, its suffix tells CoNLL-U."""
    lines = iter(lines)
    head = _take_head(lines)
    lines = chain(head, lines)
    fmt = options.input_format
    if fmt == "auto":
        fmt = "conllu" if Path(name).suffix.lower() in CONLLU_SUFFIXES or _looks_like_conllu(head) else "text"
    writer = _DocWriter(out, options.output_format, options.keep_columns, Path(name).stem)
    counter = _WordCounter(on_words)
    if fmt == "conllu":
        sentences = parse_conllu(lines, name, words_only=True)  # heads, if any, are replaced
        pairs = ((input_doc(nlp, s), s) for s in sentences)
        for doc, sentence in nlp.pipe(pairs, as_tuples=True, batch_size=options.batch_size, n_process=options.n_process):
            writer.write(doc, sentence)
            counter.add(len(doc))
    else:
        texts = (" ".join(line.split()) for line in lines if line.strip())  # no whitespace tokens
        if options.n_process == 1:  # the tokenizer reads batches (a UDTokenizer runs its model per batch)
            texts = tokenized(nlp, texts, options.batch_size)
        for doc in nlp.pipe(texts, batch_size=options.batch_size, n_process=options.n_process):
            writer.write(doc, None)
            counter.add(len(doc))
    writer.close()
    return counter.close()


def _take_head(lines: Iterator[str]) -> List[str]:
    """Lines up to the first that is neither blank nor a comment (at most ``SNIFF_LINES``)."""
    head = []
    for line in lines:
        head.append(line)
        if (line.strip() and not line.startswith("#")) or len(head) >= SNIFF_LINES:
            break
    return head


def _looks_like_conllu(head: Sequence[str]) -> bool:
    for line in head:
        if line.strip() and not line.startswith("#"):
            return len(line.rstrip("\r\n").split("\t")) == 10
    return False


class _DocWriter:
    """CoNLL-U blocks, or one JSON array whose records are written one at a time. A CoNLL-U
    sentence without ``# sent_id`` gets ``<prefix>-<n>`` (n counts the sentences written)."""

    def __init__(self, out: TextIO, fmt: str, keep_columns: bool = False, prefix: str = "s"):
        self.out, self.fmt, self.keep_columns, self.records = out, fmt, keep_columns, 0
        self.prefix, self.sentences = prefix or "s", 0

    def write(self, doc, sentence) -> None:
        if self.fmt == "conllu":
            for sent in [doc] if sentence is not None else doc.sents:
                self.sentences += 1
                self.out.write(parsed_conllu(sent, sentence, keep_columns=self.keep_columns,
                                             sent_id=f"{self.prefix}-{self.sentences}"))
            return
        record = {
            "text": doc.text,
            "sentences": [
                [{"id": i, "form": f, "upos": t.pos_ or "_", "xpos": t.tag_ or "_", "head": h, "deprel": d}
                 for i, ((f, h, d), t) in enumerate(zip(doc_rows(s.as_doc()), s), 1)]
                for s in doc.sents
            ],
        }
        self.out.write("[\n" if self.records == 0 else ",\n")
        self.out.write(json.dumps(record, ensure_ascii=False, indent=1))
        self.records += 1

    def close(self) -> None:
        if self.fmt == "json":
            self.out.write("[]\n" if self.records == 0 else "\n]\n")


class _WordCounter:
    """Counts words; reports them to ``on_words`` in steps of about ``every`` words."""

    def __init__(self, on_words: WordsCallback, every: int = 2000):
        self.on_words, self.every, self.total, self.pending = on_words, every, 0, 0

    def add(self, n: int) -> None:
        self.total += n
        self.pending += n
        if self.on_words is not None and self.pending >= self.every:
            self.on_words(self.pending)
            self.pending = 0

    def close(self) -> int:
        if self.on_words is not None and self.pending:
            self.on_words(self.pending)
        self.pending = 0
        return self.total


# ---- pipelines in workers -------------------------------------------------------------------

_LOCAL = threading.local()


def load_pipeline(model: Union[str, Path]):
    """``spacy.load(model)``, loaded once per process and thread (workers reuse it)."""
    pipelines = getattr(_LOCAL, "pipelines", None)
    if pipelines is None:
        pipelines = _LOCAL.pipelines = {}
    key = str(model)
    if key not in pipelines:
        import spacy

        pipelines[key] = spacy.load(model)
    return pipelines[key]


# ---- many files -----------------------------------------------------------------------------


def parse_corpus(
    model: Union[str, Path],
    tasks: Sequence[FileTask],
    options: ParseOptions = ParseOptions(),
    *,
    n_process: int = 1,
    parallel: str = "auto",
    overwrite: bool = False,
    strict: bool = False,
    progress: Optional[bool] = None,
    nlp=None,
) -> Summary:
    """Run ``tasks`` on this machine. With ``n_process > 1``, ``parallel="files"`` gives each of
    ``n_process`` worker processes (spawned; each loads ``model`` once and writes its outputs)
    whole files; ``parallel="docs"`` parses one file at a time with ``nlp.pipe(n_process=...)``,
    which sends every parsed Doc back to this process as bytes (its cost: docs/corpus.md), so
    ``"auto"`` takes files
    when there are at least 2 files to parse and otherwise parses in this process alone.
    ``strict`` stops at the first failing file (files under way still finish). ``progress``:
    bars on stderr (None: when it is a terminal). ``nlp``: the pipeline already loaded from
    ``model`` in this process, if any."""
    if parallel not in ("auto", "files", "docs"):
        raise ValueError(f"parallel {parallel!r}: expected auto, files or docs")
    todo = [t for t in tasks if overwrite or not t.target.exists()]
    summary = Summary(skipped=len(tasks) - len(todo))
    if parallel == "auto":
        parallel = "files" if len(todo) >= 2 else "none"
    pool = n_process > 1 and parallel == "files" and len(todo) > 1
    if not pool and nlp is None:
        nlp = load_pipeline(model)
    bar = Progress(len(tasks), progress, done=summary.skipped)
    start = time.perf_counter()
    try:
        if pool:
            n_process = min(n_process, len(todo))
            summary.workers = f"{n_process} processes over files"
            _run_pool(model, todo, options, n_process, overwrite, strict, summary, bar)
        else:
            if n_process > 1 and parallel == "docs":
                options = replace(options, n_process=n_process)
                summary.workers = f"nlp.pipe(n_process={n_process}) within each file"
            elif n_process > 1:
                summary.workers = "1 process: fewer than 2 files to parse"
            for task in todo:
                result = parse_task(nlp, task, options, overwrite=overwrite, on_words=bar.add_words)
                if _record(result, summary, bar) and strict:
                    break
    finally:
        summary.seconds = time.perf_counter() - start
        bar.close()
    return summary


def _record(result: FileResult, summary: Summary, bar: "Progress") -> bool:
    """Add a result; True when the file failed."""
    summary.add(result)
    bar.file_done(result)
    return result.status == "failed"


_WORKER: dict = {}


def _init_worker(model: str, counter) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    _WORKER["nlp"] = load_pipeline(model)
    _WORKER["counter"] = counter


def _worker_task(task: FileTask, options: ParseOptions, overwrite: bool) -> FileResult:
    counter = _WORKER["counter"]

    def on_words(n: int) -> None:
        with counter.get_lock():
            counter.value += n

    return parse_task(_WORKER["nlp"], task, options, overwrite=overwrite, on_words=on_words)


def _run_pool(model, todo, options, n_process, overwrite, strict, summary, bar) -> None:
    context = multiprocessing.get_context("spawn")  # no fork of a process with threads
    counter = context.Value("q", 0)
    with ProcessPoolExecutor(n_process, mp_context=context, initializer=_init_worker,
                             initargs=(str(model), counter)) as pool:
        pending = {pool.submit(_worker_task, t, options, overwrite): t for t in todo}
        try:
            _collect(pending, counter, strict, summary, bar)
        except BaseException:  # an interrupt: stop the files under way too (their outputs stay partial)
            _terminate(pool)
            raise
        finally:  # files not started are dropped (after a failure with strict: files under way finish)
            for future in pending:
                future.cancel()


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop the pool's workers now (no public way before Python 3.14's ``terminate_workers``)."""
    if hasattr(pool, "terminate_workers"):
        pool.terminate_workers()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def _collect(pending: dict, counter, strict: bool, summary: Summary, bar: "Progress") -> None:
    """Record the pool's results as they come (words as workers count them)."""
    while pending:
        done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
        bar.set_words(counter.value)
        failed = False
        for future in done:
            task = pending.pop(future)
            try:
                result = future.result()
            except BrokenProcessPool as err:
                result = FileResult(str(task.source), str(task.target), "failed",
                                    error=f"{task.source}: a worker process died ({err})")
            failed |= _record(result, summary, bar)
        if failed and strict:
            return


class Progress:
    """Two bars on stderr: files (of the total) and words (count and rate)."""

    def __init__(self, total_files: int, enabled: Optional[bool] = None, done: int = 0):
        from tqdm import tqdm

        disable = None if enabled is None else not enabled  # None: off unless stderr is a terminal
        self.files = tqdm(total=total_files, initial=done, unit="file", desc="files", position=0,
                          disable=disable, file=sys.stderr, mininterval=0.5)
        self.words = tqdm(unit="word", desc="words", position=1, unit_scale=True, disable=disable,
                          file=sys.stderr, mininterval=0.5)
        self.failed = 0

    def add_words(self, n: int) -> None:
        self.words.update(n)

    def set_words(self, total: int) -> None:
        if total > self.words.n:
            self.words.update(total - self.words.n)

    def file_done(self, result: FileResult) -> None:
        if result.status == "failed":
            self.failed += 1
            self.files.set_postfix(failed=self.failed, refresh=False)
            self.write(f"failed: {result.error}")
        self.files.update(1)

    def write(self, message: str) -> None:
        if self.files.disable:
            print(message, file=sys.stderr)
        else:
            self.files.write(message, file=sys.stderr)

    def close(self) -> None:
        self.files.close()  # in order of position: closing the lower bar first garbles the upper
        self.words.close()
