"""Compile ahead: on a fresh install, a second process compiles the kernels a loaded pipeline is
about to need while the first process loads it and parses.

numba compiles a kernel on its first call and saves it to its cache (``compiling``); a process
that calls a kernel the cache holds loads it instead. So when ``hc_parser`` is created
(``spacy.load``, ``add_pipe``) and the cache lacks its kernels, ``compile_ahead`` starts a helper,
``python -m spacy_hcparse.graph.ahead PARENT STEP...``, that runs the kernels of each step
(``STEPS``) on tiny inputs of the argument types the parser passes, and exits. The steps are the
decoder's (``plan``): its first parse's from the end (the parser starts at the front, so the
two processes meet in the middle), then those of its later outputs (k-best trees). The kernels a
batch calls only where it needs them (``compile_fallbacks``) are left to ``python -m
spacy_hcparse warmup``, which also fills the cache ahead of time for an image or a CI cache.

The helper uses a second core, at the parent's priority (its work is the parent's, done sooner;
at a lower one it stayed idle on a busy machine while the parent compiled everything itself).
It is off where it cannot help:

- ``SPACY_HCPARSE_COMPILE_AHEAD=0`` (or ``false``, ``no``, ``off``) in the environment;
- fewer than two usable cores, or no second core idle (a 1-minute load average of ``BUSY`` per
  core, or fewer than ``SPARE`` cores idle over ``SAMPLE`` seconds when the cache is cold, the
  cores of this process's running helpers counted as idle: a helper sharing a core with another
  job only took CPU from the parser, which then waited for it), numba's JIT disabled
  (``NUMBA_DISABLE_JIT``), a cache folder that cannot be written (nothing would be kept), no
  ``fcntl`` (not POSIX), ``threads`` > 1 (its parallel kernels: ``warmup``);
- a warm cache: every step's kernels (``STEPS``) have a fresh index;
- the same plan already running: started by this process (forked workers inherit that), or by
  another (its lock file in the cache folder is held: ``nlp.pipe(n_process=2)``'s spawned
  workers start none). Helpers of different plans (two decoders) take turns.

It never writes to the terminal, ends at its parent's exit (the parent stops it; it also checks
for its parent every ``PARENT_POLL`` seconds), and stops between two cache saves
(``compiling.exit_between_saves``). Saves are locked and write the data file first
(``compiling.LockedCache``): two processes compiling into one cache cannot corrupt it. While a
step runs, the helper claims the step's kernels (``compiling.claimed``): a parser that reaches one
waits for it and loads it rather than compile it a second time.
"""
import atexit
import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from numba.core import config

from ..compiling import LockedCache, claimed, exit_between_saves, fcntl
from ..decoders import decode_dual, decode_hill_climb, decode_mst, kbest_eisner, kbest_mst
from ..decoders import (absent, batch, batch_marginals, batch_search, dominance, dual, enumeration, hill_climb, kbest,
                        mst, scoring)
from ..decoders.batch import decode_eisner_batch
from ..decoders.batch_marginals import head_margins_batch, sibling_probabilities_batch, tree_probabilities_batch
from . import pruning
from .pruning import prune_batch

ENV = "SPACY_HCPARSE_COMPILE_AHEAD"
OFF = ("0", "false", "no", "off")
LOCK = "spacy_hcparse-ahead-{}.lock"  # held by the helper running that plan
TURN = "spacy_hcparse-ahead.lock"  # held by the helper compiling now: one at a time
PARENT_POLL = 0.2
BUSY = 1.0  # a 1-minute load average of this per usable core: no core to spare, nothing starts
SPARE = 1.5  # idle cores a cold start needs (the parser's and the helper's), sampled over SAMPLE seconds
SAMPLE = 0.1
STOP_WAIT = 2.0  # seconds the parent waits at exit for the helper to stop (LLVM's work is not interrupted)

# the tiny inputs: one span of N words (N + 1 rows with the root), float64 unless the model's float32
N = 5
_RNG = np.random.default_rng(0)
_ARC = _RNG.normal(size=(N + 1, N + 1))
_SIB = np.zeros((N + 1,) * 3)
_GRAND = np.zeros((N + 1,) * 3)
_TRIPLES = np.array([[h, s, m] for h in range(N + 1) for s in range(N + 1) for m in range(1, N + 1)
                     if h != m and s != m and (s == h or (h < s < m) or (m < s < h))], dtype=np.int64)
_SIB[tuple(_TRIPLES.T)] = _RNG.normal(size=len(_TRIPLES)) * 0.1
_SIZES = np.array([N + 1], dtype=np.int64)
_COUNTS = np.array([len(_TRIPLES)], dtype=np.int64)
_VALUES = _SIB[tuple(_TRIPLES.T)].copy()
_HEADS = np.array([-1, 2, 0, 2, 3, 3], dtype=np.int64)  # a projective tree over N words


def _prune() -> None:
    prune_batch([_ARC.astype(np.float32)], 2, [None], [True], [True])


def _eisner() -> None:
    decode_eisner_batch(_ARC.ravel(), _SIZES, _COUNTS, _TRIPLES, _VALUES)


def _margins() -> None:
    head_margins_batch(_HEADS, _SIZES, _ARC.ravel())


def _sibling_probs() -> None:
    sibling_probabilities_batch(_HEADS, _SIZES, _ARC.ravel(), _COUNTS, _TRIPLES, _VALUES, 1.0, None)


def _tree_probs() -> None:
    tree_probabilities_batch(_HEADS, _SIZES, _ARC.ravel())


def _mst() -> None:
    decode_mst(_ARC)


def _hill_climb() -> None:
    decode_hill_climb(_ARC, _SIB, _GRAND)


def _hill_climb_batch() -> None:
    batch_search.hill_climb_batch(_ARC.ravel(), _SIZES, _COUNTS, _TRIPLES, _VALUES, _COUNTS, _TRIPLES, _VALUES)


def _certificate() -> None:
    """``decode_certified``'s proof steps after hill climbing: dominance pruning, the exhaustive
    search (its other kernels come with hill climbing's and the MST's steps)."""
    mask = np.ones_like(_ARC, dtype=np.bool_)
    absent.uses_absent(_HEADS, mask)
    cand = dominance.prune_dominated(_ARC, mask, _SIB, _GRAND, True, True, -np.inf)
    dominance.fixed_tree(cand)
    enumeration.search_candidates(_ARC, cand, _SIB, _GRAND, True, True, _HEADS, -np.inf, 10)


def _dual() -> None:
    decode_dual(_ARC, _SIB, _GRAND, max_iter=3, max_nodes=2)


def _kbest_eisner() -> None:
    kbest_eisner(_ARC, 3, _SIB)


def _kbest_mst() -> None:
    kbest_mst(_ARC, 3)


def compile_fallbacks() -> None:
    """Run, on tiny inputs with the argument types the parser passes, the batch kernels that
    compile only where a batch needs them: first-order Eisner (spans without sibling factors:
    one word, or past ``higher_order_max_length``), the log-space sibling chart (scores out of
    the linear chart's range), the matrix-tree probabilities (spans without a sibling chart),
    the tree that pruning adds (top-k heads that hold none), and the labels of children whose
    classes clash."""
    decode_eisner_batch(_ARC.ravel(), _SIZES)
    wide = _VALUES * 1000.0
    sibling_probabilities_batch(_HEADS, _SIZES, _ARC.ravel() * 1000.0, _COUNTS, _TRIPLES, wide, 1.0, None)
    _tree_probs()
    apart = np.full((7, 7), -5.0, np.float32)  # two blocks whose words prefer heads inside them
    for block in ((1, 2, 3), (4, 5, 6)):
        for h in block:
            apart[h, list(block)] = 1.0 if h == block[1] else 0.0
    prune_batch([apart], 1, [None], [True], [False])
    batch.labels_batch([-1, 0, 1, 1], [4], np.array([[0.0, 1.0], [5.0, 0.0], [5.0, 0.0]]), np.array([0, -1]))


# name -> (what runs it, the kernels whose cached index says the step is done)
STEPS: Dict[str, Tuple[Callable[[], None], Tuple]] = {
    "prune": (_prune, (pruning._top_heads_batch, pruning._batch_triples)),
    "eisner": (_eisner, (batch._eisner2_serial,)),
    "margins": (_margins, (batch_marginals._margins_serial,)),
    "sibling_probs": (_sibling_probs, (batch_marginals._sibling_serial,)),
    "tree_probs": (_tree_probs, (batch_marginals._probabilities_serial,)),
    "mst": (_mst, (mst.mst_kernel,)),
    "hill_climb": (_hill_climb, (hill_climb._search,)),
    "hill_climb_batch": (_hill_climb_batch, (batch_search._climb_serial,)),
    "certificate": (_certificate, (enumeration.search_candidates, dominance.prune_dominated)),
    "dual": (_dual, (dual._run,)),
    "kbest_eisner": (_kbest_eisner, (kbest.kbest_eisner_kernel,)),
    "kbest_mst": (_kbest_mst, (scoring.arc_part,)),
}

# per decoder (its class name, ``graph.decoding``) the helper's steps in its order: the first
# parse's steps from its end (head probabilities, margins, the decoder, pruning: the parser starts
# at the front, so the two meet in the middle; the parser waits only for a kernel the helper
# started first), then the later outputs (k-best). Certified decoding's dual decomposition and
# branch and bound (sentences the search leaves open) compile when used. The model's own kernels
# (``layers``: a fraction of a second) are left to the parser: importing them takes thinc and
# torch, seconds of the helper's.
_PLANS = {
    "Eisner": ("sibling_probs", "margins", "eisner", "prune", "kbest_eisner"),
    "MST": ("tree_probs", "margins", "mst", "prune", "kbest_mst"),
    "HillClimb": ("tree_probs", "margins", "hill_climb_batch", "hill_climb", "mst", "prune", "kbest_mst"),
    "Certified": ("tree_probs", "margins", "certificate", "hill_climb", "mst", "prune", "kbest_mst"),
    "Dual": ("tree_probs", "margins", "dual", "mst", "prune", "kbest_mst"),
}
_PROBABILITIES = ("sibling_probs", "tree_probs")  # steps only with ``head_probs``
_STARTED: Dict[Tuple[str, ...], subprocess.Popen] = {}


def plan(decoder: str, head_probs: bool = True) -> Tuple[str, ...]:
    """The steps ``compile_ahead`` runs, in order, for an ``hc_parser`` with the decoder class
    ``decoder`` (``"Eisner"``, ``"Certified"``...; others: none) and ``head_probs``."""
    return tuple(step for step in _PLANS.get(decoder, ()) if head_probs or step not in _PROBABILITIES)


def cache_folder() -> str:
    """The folder numba caches this package's decoder kernels in (``NUMBA_CACHE_DIR`` or
    ``__pycache__`` beside the modules, as numba's locator finds a writable one)."""
    return batch._eisner2_serial._cache.cache_path


def is_cached(kernel) -> bool:
    """Whether numba's cache holds a fresh (same source) compile of ``kernel``, any signature."""
    return bool(kernel._cache._cache_file._load_index())


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def spare_cores(seconds: float = SAMPLE) -> float:
    """Usable cores that stood idle over the next ``seconds`` (Linux's ``/proc/stat``; elsewhere
    the usable cores less the 1-minute load average)."""
    cores = usable_cores()
    try:
        before = _cpu_times()
        time.sleep(seconds)
        after = _cpu_times()
    except (OSError, ValueError):
        return cores - (os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0)
    total = sum(after) - sum(before)
    idle = (after[3] + after[4]) - (before[3] + before[4])  # idle and iowait
    return min(cores, idle / total * (os.cpu_count() or 1)) if total > 0 else float(cores)


def _cpu_times() -> List[int]:
    """The machine's CPU times (user, nice, system, idle, iowait, irq, softirq, steal) in ticks."""
    with open("/proc/stat") as stat:
        return [int(value) for value in stat.readline().split()[1:9]]


def why_not(folder: Optional[str] = None) -> str:
    """Why nothing may compile ahead in this process ("" when it may)."""
    if os.environ.get(ENV, "").strip().lower() in OFF:
        return f"{ENV} is off"
    if config.DISABLE_JIT:
        return "numba's JIT is disabled"
    if fcntl is None:
        return "no fcntl (not POSIX)"
    if not isinstance(batch._eisner2_serial._cache, LockedCache):
        return "this numba's cache cannot be locked (compiling.LockedCache)"
    cores = usable_cores()
    if cores < 2:
        return "one usable core"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if load >= BUSY * cores:
        return f"every core is busy (load average {load:.1f})"
    folder = folder or cache_folder()
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return f"cannot create numba's cache folder {folder}"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"numba's cache folder {folder} is not writable"
    return ""


def compile_ahead(decoder: str, head_probs: bool = True, threads: int = 1) -> Optional[subprocess.Popen]:
    """Start the helper process for the steps of ``plan(decoder, head_probs)`` that the cache
    lacks, unless ``why_not()``, or fewer than ``SPARE`` cores stand idle (``spare_cores``; the
    cores of this process's running helpers count as idle), or the plan is running already
    (started by this process, or by another one: the plan's lock file is held); return it (None:
    none started). Only for ``threads == 1`` (the serial kernels; ``warmup`` compiles a threaded
    pipeline's)."""
    full = plan(decoder, head_probs)
    if threads != 1 or not full or full in _STARTED or why_not():
        return None
    steps = tuple(step for step in full if not all(map(is_cached, STEPS[step][1])))
    if not steps or spare_cores() + len(running()) < SPARE:
        return None
    name = hashlib.sha1(" ".join(full).encode()).hexdigest()[:12]
    handle = open(os.path.join(cache_folder(), LOCK.format(name)), "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # another process's helper runs this plan
        handle.close()
        return None
    package = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, ENV: "0", "PYTHONPATH": path}
    try:
        helper = subprocess.Popen([sys.executable, "-m", __name__, str(os.getpid()), *steps], env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  pass_fds=(handle.fileno(),), close_fds=True)
    except OSError:
        return None
    finally:
        handle.close()  # the helper holds the lock from here on
    _STARTED[full] = helper
    atexit.register(_stop, helper)
    return helper


def running() -> List[subprocess.Popen]:
    """This process's helpers that still run: each holds a core that the next plan's helper takes
    over, as it waits for their turn (``TURN``)."""
    return [helper for helper in _STARTED.values() if helper.poll() is None]


def _stop(helper: subprocess.Popen) -> None:
    """End the helper (at the parent's exit; it stops between two cache saves): its remaining
    steps compile on first use instead."""
    if helper.poll() is None:
        helper.terminate()
        try:
            helper.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()


def _watch_parent(parent: int) -> None:
    """Exit (between two cache saves) once the parent has gone, however it ended."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    exit_between_saves()


def run_steps(steps: Sequence[str]) -> List[str]:
    """Run ``steps`` (names of ``STEPS``) in order, each claiming its kernels
    (``compiling.claimed``); return those that failed (a failing step only means its kernels
    compile on first use)."""
    failed = []
    for step in steps:
        run, kernels = STEPS[step]
        try:
            with claimed(kernels):  # the parser waits for these rather than compile them too
                run()
        except Exception:  # never the parser's problem: the kernel compiles when used
            failed.append(step)
    return failed


def main(argv: Sequence[str]) -> int:
    """``python -m spacy_hcparse.graph.ahead PARENT_PID STEP...`` (what ``compile_ahead`` runs):
    wait for the turn (another helper compiling into this cache, for another pipeline of the
    same process, finishes first), then run the steps."""
    parent, steps = int(argv[0]), list(argv[1:])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the terminal is the parent's to handle
    signal.signal(signal.SIGTERM, exit_between_saves)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    with open(os.path.join(cache_folder(), TURN), "a") as turn:
        fcntl.flock(turn, fcntl.LOCK_EX)
        return 1 if run_steps(steps) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
