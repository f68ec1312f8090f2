"""The numba kernels' compiling: the ``njit`` every kernel is made with, and a notice on stderr
when compiling is slow.

spacy_hcparse's kernels are ``@njit(cache=True)`` functions compiled lazily: each on its first
call, for the argument types of that call, then saved to numba's cache (``__pycache__`` beside
the module, or ``NUMBA_CACHE_DIR``), which later processes load instead of compiling. So only
the first process of an install (a new container, a CI job) compiles, and only what it calls.

``njit`` is numba's, but for one thing: when a kernel calls another, the callee compiles for the
arguments' plain types (``int64``, ``bool``), where numba's own dispatcher compiles one
specialization per constant value passed (``f(x, 0)`` and ``f(x, 1)`` are two compiles of ``f``
and of everything it calls). The compiled code computes the same; it is compiled once.

Every kernel is compiled without the C-callable wrapper numba adds for ``cfunc`` use (none here
calls a kernel from C): less code to generate for each.

Several processes may compile into one cache at once (``graph.ahead`` compiles in a
second process; ``nlp.pipe(n_process=2)`` runs two parsers). numba's own cache writes each
file atomically, but a function's index (its signatures -> data files) is read, changed and
written back, and written before the data file it names: two processes saving two signatures
of one function can pick the same data file, and a reader between the two writes can load a
stale one. ``LockedCache`` writes the data file first, then the index, while holding an
exclusive lock (``fcntl.flock``) on ``CACHE_LOCK`` in the cache folder. A process compiling
kernels for others claims them (``claimed``: a lock on a ``.claim`` file beside each one's
index); a process about to compile a claimed kernel waits for the claim to end and loads it.

Time limits read ``clock()``, which leaves out the time spent getting kernels ready (compiling,
loading from the cache, waiting for another process's claim): a decoder's first call in a fresh
process searches as long as later calls do, so a cold start gives the same trees as a warm one.

``watch_compiling()`` (every parser component calls it) prints ``NOTICE`` on stderr when this
package's kernels have been compiling for ``NOTICE_AFTER`` seconds, while they are, so a first
parse does not look hung, then ``STILL`` after each further ``STILL_AFTER`` seconds of compiling
(a later first use, such as certified decoding's, compiles for as long again);
``spacy_hcparse.warmup`` compiles a pipeline's kernels ahead.
"""
import itertools
import os
import sys
import threading
import time
from contextlib import contextmanager
from functools import partial
from typing import Callable, Iterable, Iterator, Optional, Set, TextIO

from numba.core import event, types
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.registry import CPUDispatcher

try:
    import fcntl
except ImportError:  # not POSIX: saves are not locked (and nothing compiles ahead: ``graph.ahead``)
    fcntl = None

CACHE_LOCK = "spacy_hcparse-cache.lock"
CLAIM_WAIT = 120.0  # seconds a compile waits at most for another process's claim
CLAIM_POLL = 0.05
NOTICE_AFTER = 2.0
NOTICE = ("spacy_hcparse: compiling hc_parser's numba kernels, once per install (cached afterwards; "
          "`python -m spacy_hcparse warmup` does it ahead of time)")
STILL_AFTER = 10.0
SLACK = 0.05  # seconds a notice's timer may wake before the line is due
STILL = "spacy_hcparse: still compiling hc_parser's numba kernels ({:.0f} s so far)"
PACKAGE = __name__.split(".")[0]


class KernelDispatcher(CPUDispatcher):
    """numba's CPU dispatcher, compiling calls from other kernels for their arguments' plain
    types (``types.unliteral``): one compile per kernel and argument types, not per constant;
    a kernel's first compile waits for another process that claims it (``claimed``)."""

    def get_call_template(self, args, kws):
        args = tuple(types.unliteral(a) for a in args)
        kws = {key: types.unliteral(value) for key, value in kws.items()}
        return super().get_call_template(args, kws)

    def compile(self, sig):
        with _compile_time():
            if not self.overloads and isinstance(self._cache, LockedCache):
                wait_for_claim(self._cache.claim_path)
            return super().compile(sig)


_COMPILING = threading.local()  # depth: compiles under way in this thread (a kernel's callees nest)
_compile_seconds = 0.0  # this process's seconds in outermost compiles, all threads


@contextmanager
def _compile_time() -> Iterator[None]:
    """Add the time of an outermost compile (callees' compiles nested in it counted once) to
    ``_compile_seconds``."""
    global _compile_seconds
    depth = getattr(_COMPILING, "depth", 0)
    _COMPILING.depth = depth + 1
    began = time.perf_counter()
    try:
        yield
    finally:
        _COMPILING.depth = depth
        if depth == 0:
            _compile_seconds += time.perf_counter() - began


def clock() -> float:
    """Seconds (``time.perf_counter``'s) less those this process spent getting kernels ready
    (compiling, loading them from the cache, waiting for a claim): what time limits measure."""
    return time.perf_counter() - _compile_seconds


class _DataFirstFile(IndexDataCacheFile):
    """numba's index and data files of one function, the data file written before the index
    entry that names it (a reader never finds an entry whose data is not there yet)."""

    def save(self, key, data) -> None:
        overloads = self._load_index()
        name = overloads.get(key)
        if name is None:
            taken = set(overloads.values())
            name = next(self._data_name(i) for i in itertools.count(1) if self._data_name(i) not in taken)
        self._save_data(name, data)
        if overloads.get(key) != name:
            overloads[key] = name
            self._save_index(overloads)


class LockedCache(FunctionCache):
    """numba's cache of one function, saving under an exclusive lock on the cache folder's
    ``CACHE_LOCK`` file, data file first (see the module docstring)."""

    def __init__(self, py_func) -> None:
        super().__init__(py_func)
        self._cache_file = _DataFirstFile(cache_path=self._cache_path, filename_base=self._impl.filename_base,
                                          source_stamp=self._impl.locator.get_source_stamp())

    def save_overload(self, sig, data) -> None:
        self._impl.locator.ensure_cache_path()
        with cache_lock(self._cache_path):
            super().save_overload(sig, data)

    @property
    def claim_path(self) -> str:
        """The file a process compiling this function for others locks (``claimed``)."""
        return os.path.splitext(self._cache_file._index_path)[0] + ".claim"


_saving = False  # a save is under way (``exit_between_saves`` waits for it)
_exit_after_save = False


@contextmanager
def cache_lock(folder: str) -> Iterator[None]:
    """Hold the exclusive lock on ``folder``'s ``CACHE_LOCK`` file (nothing where ``fcntl`` is
    missing) while saving."""
    global _saving
    if fcntl is None:
        yield
        return
    with open(os.path.join(folder, CACHE_LOCK), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        _saving = True
        try:
            yield
        finally:
            _saving = False
            fcntl.flock(handle, fcntl.LOCK_UN)
    if _exit_after_save:
        os._exit(0)


_held_claims: Set[str] = set()


@contextmanager
def claimed(kernels: Iterable) -> Iterator[None]:
    """Claim ``kernels`` (cached ``njit`` kernels) while compiling them for others: a process
    that needs one of them first waits for the claim to end (at most ``CLAIM_WAIT`` seconds),
    then loads it from the cache instead of compiling it too."""
    handles = []
    try:
        for kernel in kernels:
            if fcntl is None or not isinstance(kernel._cache, LockedCache):
                continue
            path = kernel._cache.claim_path
            kernel._cache._impl.locator.ensure_cache_path()
            handle = open(path, "a")
            handles.append(handle)
            fcntl.flock(handle, fcntl.LOCK_EX)
            _held_claims.add(path)
        yield
    finally:
        for handle in handles:
            _held_claims.discard(handle.name)
            handle.close()  # closing drops the lock


def wait_for_claim(path: str) -> None:
    """Wait while another process claims the kernel whose claim file is ``path`` (``claimed``)."""
    if fcntl is None or path in _held_claims or not os.path.exists(path):
        return
    deadline = time.monotonic() + CLAIM_WAIT
    with open(path, "a") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return  # closing the file drops the shared lock
            except OSError:
                if time.monotonic() >= deadline:
                    return
                time.sleep(CLAIM_POLL)


def exit_between_saves(signum=None, frame=None) -> None:
    """A signal handler that ends the process at once, or right after the cache save under way:
    a process compiling for others (``graph.ahead``) never leaves a half-written file."""
    global _exit_after_save
    if not _saving:
        os._exit(0)
    _exit_after_save = True


def njit(function: Optional[Callable] = None, *, cache: bool = False, **options) -> Callable:
    """``numba.njit`` (same options: ``cache``, ``parallel``, ``fastmath``...) making a
    ``KernelDispatcher`` without a ``cfunc`` wrapper, cached (``cache=True``) in a
    ``LockedCache``; used as ``@njit(cache=True)`` or ``@njit``."""
    if function is None:
        return partial(njit, cache=cache, **options)
    dispatcher = KernelDispatcher(py_func=function, locals=options.pop("locals", {}),
                                  targetoptions={"nopython": True, "no_cfunc_wrapper": True, **options})
    if cache:
        locked = _locked_cache(function)
        if locked is None:
            dispatcher.enable_caching()
        else:
            dispatcher._cache = locked
    return dispatcher


def _locked_cache(function: Callable) -> Optional["LockedCache"]:
    """``LockedCache(function)``, or None where this numba's cache internals differ from those
    ``LockedCache`` extends (numba's own cache then, unlocked; nothing compiles ahead)."""
    try:
        return LockedCache(function)
    except (AttributeError, TypeError):
        return None


class CompileNotice(event.Listener):
    """Numba ``numba:compile`` listener: ``notice`` on ``stream`` (default: stderr) when
    compiling ``package``'s kernels (outermost compiles of a function of that package, callees
    included) has taken ``after`` seconds in all, then ``still`` (formatted with the seconds so
    far) after each further ``again`` seconds (None: never); written from a timer thread while
    the compiling goes on, so a long call is explained before it ends."""

    def __init__(self, after: float = NOTICE_AFTER, notice: str = NOTICE, stream: Optional[TextIO] = None,
                 package: str = PACKAGE, again: Optional[float] = STILL_AFTER, still: str = STILL) -> None:
        self.after = after
        self.notice = notice
        self.stream = stream
        self.package = package
        self.again = again
        self.still = still
        self.spent = 0.0
        self.said = 0  # lines written
        self._depth = 0
        self._ours = False
        self._started = 0.0
        self._timer: Optional[threading.Timer] = None
        self._lock = threading.Lock()

    def on_start(self, ev: event.Event) -> None:
        self._depth += 1
        if self._depth > 1 or self._due() == float("inf"):
            return
        function = getattr(ev.data.get("dispatcher"), "py_func", None)
        self._ours = getattr(function, "__module__", "").split(".")[0] == self.package
        if self._ours:
            self._started = time.perf_counter()
            self._arm(self.spent)

    def on_end(self, ev: event.Event) -> None:
        self._depth -= 1
        if self._depth > 0 or not self._ours:
            return
        with self._lock:
            self._ours = False
            self.spent += time.perf_counter() - self._started
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if self.spent >= self._due():
            self.say()

    def _arm(self, spent: float) -> None:
        """Start the timer that writes the next line, due once this compile has gone on for the
        seconds ``_due()`` still lacks (``spent``: the compiling seconds so far); none when no
        line is due any more."""
        due = self._due()
        if due == float("inf"):
            return
        self._timer = threading.Timer(max(due - spent, 0.0), self.say)
        self._timer.daemon = True
        self._timer.start()

    def _due(self) -> float:
        """The compiling seconds at which the next line is due."""
        if not self.said:
            return self.after
        return float("inf") if self.again is None else self.after + self.said * self.again

    def say(self) -> None:
        """Write the line that is due: ``notice`` first, then ``still``."""
        with self._lock:
            spent = self.spent + (time.perf_counter() - self._started if self._ours else 0.0)
            if spent < self._due() - SLACK:  # a timer may wake a little early: wait for the rest
                if self._ours:
                    self._arm(spent)
                return
            first = not self.said
            self.said += 1
            if self._ours:  # one long compile (a kernel and all its callees) says so again as it goes on
                self._arm(spent)
        stream = self.stream or sys.stderr
        print(self.notice if first else self.still.format(spent), file=stream, flush=True)


_LISTENER: Optional[CompileNotice] = None


def watch_compiling() -> CompileNotice:
    """Install the process's ``CompileNotice`` (once; later calls return it)."""
    global _LISTENER
    if _LISTENER is None:
        _LISTENER = CompileNotice()
        event.register("numba:compile", _LISTENER)
    return _LISTENER
