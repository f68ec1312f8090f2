"""The kernels' ``njit`` (one compile per argument types, not per constant), their cache's locked
saves, the notice of a slow compile, the clock of time limits (compiling left out) and ``python -m
spacy_hcparse warmup``."""
import fcntl
import glob
import io
import json
import os
import subprocess
import sys
import threading
import time
from types import SimpleNamespace
from typing import Optional

import numpy as np
import pytest
from numba import float64
from numba.core import config as numba_config
from numba.core import event

from spacy_hcparse import compiling
from spacy_hcparse.cli import main
from spacy_hcparse.compiling import CompileNotice, njit
from spacy_hcparse.decoders import batch, batch_marginals, labels
from spacy_hcparse.graph import pruning
from spacy_hcparse.warmup import compile_fallbacks


@njit
def _scaled(values, factor):
    return values * factor


@njit
def _both_scales(values):
    return _scaled(values, 2)[0] + _scaled(values, 3)[0] + _scaled(values, True)[0]


def test_a_kernel_called_with_constants_compiles_once_per_argument_types():
    assert _both_scales(np.ones(3)) == 6.0
    assert len(_scaled.signatures) == 2  # (float64[:], int64) and (float64[:], bool)


def test_njit_keeps_numba_options():
    @njit(cache=False, fastmath=True, locals={"total": float64})
    def total_of(values):
        total = 0
        for v in values:
            total += v
        return total

    assert total_of(np.arange(4.0)) == 6.0
    assert total_of.targetoptions["fastmath"]


def _compile_fresh(module: str):
    """A new kernel whose function claims to live in ``module``, compiled once."""
    def bump(x):
        return x + 1

    bump.__module__ = module
    return njit(bump)(1)


def _noticed(after: float, module: str, compiles: int = 2, again: Optional[float] = None) -> str:
    stream = io.StringIO()
    listener = CompileNotice(after=after, notice="compiling!", stream=stream, package="mine", again=again,
                             still="still compiling ({:.0f} s)")
    with event.install_listener("numba:compile", listener):
        for _ in range(compiles):
            _compile_fresh(module)
    return stream.getvalue()


def test_slow_compiling_is_said_once():
    assert _noticed(0.0, "mine.kernels") == "compiling!\n"


def test_long_compiling_is_said_again_after_each_further_stretch():
    """After the notice, each further ``again`` seconds of compiling (a later first use, such as
    certified decoding's) gets a line of its own; quick compiling after the notice gets none."""
    lines = _noticed(0.0, "mine.kernels", compiles=3, again=0.005).splitlines()
    assert lines[0] == "compiling!" and len(lines) >= 2
    assert all(line.startswith("still compiling (") and line.endswith(" s)") for line in lines[1:])
    assert _noticed(0.0, "mine.kernels", compiles=3, again=60.0) == "compiling!\n"


def test_one_long_compile_is_said_again_while_it_lasts():
    """A single outermost compile (a kernel and all its callees, such as hill climbing's first
    call) gets a line after each further ``again`` seconds while it goes on, not only at its end."""
    def kernel():
        pass

    kernel.__module__ = "mine.kernels"
    compile_event = SimpleNamespace(data={"dispatcher": SimpleNamespace(py_func=kernel)})
    stream = io.StringIO()
    listener = CompileNotice(after=0.05, notice="compiling!", stream=stream, package="mine", again=0.1,
                             still="still compiling ({:.1f} s)")
    listener.on_start(compile_event)
    time.sleep(1.0)
    during = stream.getvalue().splitlines()
    listener.on_end(compile_event)
    assert during[0] == "compiling!" and len(during) >= 3
    assert all(line.startswith("still compiling (") for line in during[1:])


def test_quick_or_foreign_compiling_is_not_said():
    assert _noticed(60.0, "mine.kernels") == ""
    assert _noticed(0.0, "someone_else.kernels") == ""


def test_warmup_verb_compiles_the_default_pipeline(capsys):
    assert main(["warmup"]) == 0
    assert "done: the kernels of the default hc_parser (hc_parser) are in numba's cache" in capsys.readouterr().err


def test_warmup_reaches_the_kernels_a_batch_calls_only_when_needed():
    """``compile_fallbacks`` runs each kernel that the README's text may not reach (first-order
    spans, the log-space sibling chart, pruning's added tree, clashing labels): a warmed image
    compiles none of them later."""
    compile_fallbacks()
    for kernel in (batch._eisner1_serial, batch._eisner2_serial, batch_marginals._sibling_log_serial,
                   pruning._keep_trees_batch, labels._assign_groups):
        assert kernel.signatures, kernel.py_func.__name__


def _cached_kernel(folder, monkeypatch):
    """A new ``njit(cache=True)`` kernel caching into ``folder``."""
    monkeypatch.setattr(numba_config, "CACHE_DIR", str(folder))

    def doubled(x):
        return x * 2

    return njit(cache=True)(doubled)


def test_cache_saves_wait_for_the_lock_and_write_data_before_the_index(tmp_path, monkeypatch):
    """Another process holding the cache folder's lock delays a save; when it comes, the data
    file is there before the index names it (no reader finds an entry without its data)."""
    kernel = _cached_kernel(tmp_path, monkeypatch)
    folder = kernel._cache.cache_path
    os.makedirs(folder, exist_ok=True)
    seen = []
    save_index = compiling._DataFirstFile._save_index

    def checked(self, overloads):
        seen.append(all(os.path.exists(self._data_path(name)) for name in overloads.values()))
        save_index(self, overloads)

    monkeypatch.setattr(compiling._DataFirstFile, "_save_index", checked)
    with compiling.cache_lock(folder):
        worker = threading.Thread(target=lambda: (kernel(1.0), kernel(1)))
        worker.start()
        time.sleep(1.0)
        assert not glob.glob(os.path.join(folder, "*.nbi")), "saved while the lock was held"
    worker.join()
    assert seen == [True, True]
    assert len(kernel._cache._cache_file._load_index()) == 2  # both signatures, two data files
    assert len(glob.glob(os.path.join(folder, "*.nbc"))) == 2


def test_a_claimed_kernel_waits_for_the_claim_and_its_claimer_does_not(tmp_path, monkeypatch):
    """A kernel another process claims (``claimed``: it compiles it for others) compiles only
    after the claim ends; the process holding the claim compiles it at once."""
    kernel = _cached_kernel(tmp_path, monkeypatch)
    path = kernel._cache.claim_path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as other:  # as another process would hold it
        fcntl.flock(other, fcntl.LOCK_EX)
        worker = threading.Thread(target=kernel, args=(1.0,))
        worker.start()
        time.sleep(0.5)
        assert worker.is_alive() and not kernel.signatures
    worker.join(60)
    assert kernel.signatures
    mine = _cached_kernel(tmp_path / "mine", monkeypatch)
    with compiling.claimed([mine]):
        assert mine(2) == 4


def test_the_clock_of_time_limits_leaves_out_getting_kernels_ready(tmp_path, monkeypatch):
    """``compiling.clock()`` (what decoders' time limits read) stands still while a kernel waits
    for another process's claim and compiles, in whichever thread, and otherwise keeps time."""
    kernel = _cached_kernel(tmp_path, monkeypatch)
    path = kernel._cache.claim_path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    began, clock_began = time.perf_counter(), compiling.clock()
    with open(path, "a") as other:  # another process compiling the kernel
        fcntl.flock(other, fcntl.LOCK_EX)
        worker = threading.Thread(target=kernel, args=(1.0,))
        worker.start()
        time.sleep(0.5)
    worker.join(60)
    waited = (time.perf_counter() - began) - (compiling.clock() - clock_began)
    assert waited >= 0.5
    began, clock_began = time.perf_counter(), compiling.clock()
    time.sleep(0.2)
    assert compiling.clock() - clock_began == pytest.approx(time.perf_counter() - began, abs=0.01)


COLD_SEARCH = """
import json
import numpy as np
from spacy_hcparse.decoders import decode_certified, decode_hill_climb
rng = np.random.default_rng(0)
arc, sib, grand = rng.normal(size=(15, 15)), rng.normal(size=(15,) * 3), rng.normal(size=(15,) * 3)
out = {}
for name, decode, limit in (("hill_climb", decode_hill_climb, 0.5), ("certified", decode_certified, 1.0)):
    first, again = (decode(arc, sib, grand, time_limit=limit) for _ in range(2))
    out[name] = [first.heads.tolist(), again.heads.tolist(), bool(first.time_capped)]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_fresh_install_searches_its_first_sentence_as_every_later_one(tmp_path):
    """With an empty numba cache the first time-limited search compiles its kernels for
    seconds; it still searches as long as a warm call (no time cap) and finds the same tree."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", COLD_SEARCH], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    for name, (first, again, capped) in json.loads(done.stdout).items():
        assert first == again and not capped, name


def test_a_numba_whose_cache_internals_differ_still_caches_unlocked(tmp_path, monkeypatch):
    """Where ``LockedCache`` cannot be built on this numba's cache classes, kernels keep numba's
    own cache (import and parsing work, saved to disk) and nothing compiles ahead."""
    def incompatible(self, *args, **kwargs):
        raise TypeError("another signature in this numba")

    monkeypatch.setattr(compiling._DataFirstFile, "__init__", incompatible)
    kernel = _cached_kernel(tmp_path, monkeypatch)
    assert kernel(2.0) == 4.0
    assert kernel._cache.cache_path.startswith(str(tmp_path))
    assert glob.glob(os.path.join(kernel._cache.cache_path, "*.nbi"))
