"""Parsing a corpus on a Dask cluster (``pip install spacy-hcparse[distributed]``).

Each file is one Dask task running ``spacy_hcparse.corpus.parse_task``, the function the CLI runs
locally, so outputs, resume (a file whose output exists is skipped) and failures (reported, not
raised) are the same. Every worker process loads the pipeline once (per thread) and keeps it.
Workers read the inputs and write the outputs themselves: on several machines, the model, the
inputs and the output directory must be at the same paths on every worker (shared storage), and
``spacy_hcparse`` installed there. Start workers with one thread each
(``dask worker ADDRESS --nworkers N --nthreads 1``): a thread per core would load one pipeline
per thread and contend for the GIL. See docs/corpus.md for the recipe.
"""
import time
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Optional, Sequence, Union

from .corpus import FileResult, FileTask, ParseOptions, Progress, Summary, load_pipeline, parse_task, plan_files

IN_FLIGHT_PER_WORKER = 4  # tasks submitted ahead per worker: the scheduler holds a window, not the corpus


def parse_files_dask(model: Union[str, Path], inputs: Sequence[Union[str, Path]], output_dir: Union[str, Path],
                     client=None, *, patterns: Sequence[str] = ("*",), options: ParseOptions = ParseOptions(),
                     **run) -> Summary:
    """Parse ``inputs`` (files, or directories searched for ``patterns``) to ``output_dir`` on a
    Dask cluster, one task per file (see ``spacy_hcparse.corpus.plan_files`` for the output
    paths). ``client``: a ``distributed.Client``, a scheduler address, ``"local"`` (a local
    cluster of ``n_workers`` single-threaded worker processes, closed at the end), or None for
    the current default client; ``run``: ``run_tasks_dask``'s ``n_workers``, ``overwrite``,
    ``strict`` and ``progress``. Returns the run's ``Summary``."""
    tasks = plan_files(inputs, output_dir, patterns, options.output_format)
    return run_tasks_dask(model, tasks, client, options=options, **run)


def run_tasks_dask(
    model: Union[str, Path],
    tasks: Sequence[FileTask],
    client=None,
    *,
    options: ParseOptions = ParseOptions(),
    n_workers: int = 2,
    overwrite: bool = False,
    strict: bool = False,
    progress: Optional[bool] = None,
) -> Summary:
    """Run planned ``tasks`` on a Dask cluster (``client`` as in ``parse_files_dask``;
    ``n_workers`` is the size of a ``"local"`` cluster). Files whose output exists are skipped
    here, before any task is sent."""
    distributed = _import_distributed()
    own = None
    if client is None:
        try:
            client = distributed.get_client()
        except ValueError:
            raise ValueError("no Dask client: pass a distributed.Client or a scheduler address") from None
    elif client == "local":
        cluster = distributed.LocalCluster(n_workers=max(1, n_workers), threads_per_worker=1, processes=True)
        own = client = distributed.Client(cluster)
    elif isinstance(client, str):
        own = client = distributed.Client(client)
    try:
        return _run(distributed, client, str(model), tasks, options, overwrite, strict, progress)
    finally:
        if own is not None:
            cluster = own.cluster
            own.close()
            if cluster is not None:
                cluster.close()


def _run(distributed, client, model, tasks, options, overwrite, strict, progress) -> Summary:
    problems = {w: p for w, p in client.run(_model_problem, model).items() if p}
    if problems:
        worker, problem = next(iter(problems.items()))
        raise ValueError(f"{problem} on {len(problems)} Dask worker(s), e.g. {worker}")
    todo = [t for t in tasks if overwrite or not t.target.exists()]
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    summary = Summary(skipped=len(tasks) - len(todo), workers=f"Dask, {n_workers} workers")
    bar = Progress(len(tasks), progress, done=summary.skipped)
    run = partial(_parse_on_worker, model, options=options, overwrite=overwrite)
    waiting = iter(todo)
    submitted = {}
    start = time.perf_counter()
    try:
        ahead = distributed.as_completed()
        for task in islice(waiting, IN_FLIGHT_PER_WORKER * n_workers):
            submitted[_submit(client, run, task, ahead)] = task
        for future in ahead:
            task = submitted.pop(future)
            try:
                result = future.result()
            except Exception as err:  # the task could not run (worker killed, model not loadable, ...)
                result = FileResult(str(task.source), str(task.target), "failed",
                                    error=f"{task.source}: {type(err).__name__}: {err}")
            summary.add(result)
            bar.add_words(result.words)
            bar.file_done(result)
            if result.status == "failed" and strict:
                client.cancel(list(submitted))
                break
            for task in islice(waiting, 1):
                submitted[_submit(client, run, task, ahead)] = task
    finally:
        summary.seconds = time.perf_counter() - start
        bar.close()
    return summary


def _submit(client, run, task: FileTask, ahead):
    future = client.submit(run, task, pure=False)
    ahead.add(future)
    return future


def _parse_on_worker(model: str, task: FileTask, *, options: ParseOptions, overwrite: bool) -> FileResult:
    return parse_task(load_pipeline(model), task, options, overwrite=overwrite)


def _model_problem(model: str) -> Optional[str]:
    """Why ``model`` cannot be loaded on this worker (None when it is there)."""
    import spacy

    if spacy.util.is_package(model) or Path(model).is_dir():
        return None
    return f"model {model!r} is neither an installed package nor a directory"


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise ValueError("Dask is not installed: pip install 'spacy-hcparse[distributed]'") from None
    return distributed
