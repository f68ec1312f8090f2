"""Compiling ahead in a second process (``graph.ahead``): which steps, when it is off, that the
helper runs once and ends with its parent."""
import os
import subprocess
import sys
import textwrap
import time

import pytest
from numba.core import config

from spacy_hcparse.graph import ahead


@pytest.fixture
def on(monkeypatch):
    monkeypatch.setenv(ahead.ENV, "1")


def test_plan_runs_the_first_parse_from_its_end_then_what_comes_later():
    assert ahead.plan("Eisner") == ("sibling_probs", "margins", "eisner", "prune", "kbest_eisner")
    assert ahead.plan("Certified", head_probs=False) == ("margins", "certificate", "hill_climb", "mst", "prune",
                                                         "kbest_mst")
    assert ahead.plan("SomeoneElses") == ()
    assert all(step in ahead.STEPS for decoder in ("Eisner", "MST", "HillClimb", "Certified", "Dual")
               for step in ahead.plan(decoder))


@pytest.mark.parametrize("value", ["0", "off", "False", "no"])
def test_the_environment_variable_turns_it_off(monkeypatch, value):
    monkeypatch.setenv(ahead.ENV, value)
    assert ahead.why_not() == f"{ahead.ENV} is off"
    assert ahead.compile_ahead("Eisner") is None


def test_off_without_jit_spare_cores_or_a_writable_cache(on, monkeypatch, tmp_path):
    monkeypatch.setattr(ahead, "BUSY", 0.0)
    assert "every core is busy" in ahead.why_not(str(tmp_path))
    monkeypatch.setattr(ahead, "BUSY", float("inf"))
    monkeypatch.setattr(config, "DISABLE_JIT", True)
    assert "JIT" in ahead.why_not()
    monkeypatch.setattr(config, "DISABLE_JIT", False)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert "cannot create" in ahead.why_not(str(blocker / "cache"))
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert "not writable" in ahead.why_not(str(tmp_path))


def test_nothing_starts_when_the_cache_holds_every_step(on, monkeypatch):
    def no_process(*args, **kwargs):
        raise AssertionError("a helper was started")

    monkeypatch.setattr(ahead, "why_not", lambda folder=None: "")
    monkeypatch.setattr(ahead, "is_cached", lambda kernel: True)
    monkeypatch.setattr(ahead.subprocess, "Popen", no_process)
    assert ahead.compile_ahead("Eisner") is None


def test_nothing_starts_without_an_idle_second_core(on, monkeypatch):
    """A cold cache on a machine whose second core is busy (another job): the helper would only
    share the parser's core, so none starts."""
    def no_process(*args, **kwargs):
        raise AssertionError("a helper was started")

    monkeypatch.setattr(ahead, "why_not", lambda folder=None: "")
    monkeypatch.setattr(ahead, "is_cached", lambda kernel: False)
    monkeypatch.setattr(ahead, "spare_cores", lambda: 1.0)
    monkeypatch.setattr(ahead.subprocess, "Popen", no_process)
    assert ahead.compile_ahead("Eisner") is None


def test_a_second_plan_takes_over_the_core_of_this_process_s_running_helper(on, monkeypatch):
    """Certified decoding loaded while the first pipeline's helper still compiles: the busy second
    core is that helper's, and the new helper waits for its turn, so one starts."""
    class Running:
        def poll(self):
            return None

    started = []
    monkeypatch.setattr(ahead, "why_not", lambda folder=None: "")
    monkeypatch.setattr(ahead, "is_cached", lambda kernel: False)
    monkeypatch.setattr(ahead, "spare_cores", lambda: 1.0)
    monkeypatch.setattr(ahead, "_STARTED", {("eisner",): Running()})
    monkeypatch.setattr(ahead.subprocess, "Popen", lambda *args, **kwargs: started.append(args[0]) or Running())
    monkeypatch.setattr(ahead.atexit, "register", lambda *args: None)
    assert ahead.compile_ahead("Certified") is not None
    assert started and started[0][-len(ahead.plan("Certified")):] == list(ahead.plan("Certified"))
    monkeypatch.setattr(ahead, "_STARTED", {("eisner",): Running()})
    monkeypatch.setattr(Running, "poll", lambda self: 0)  # that helper has finished: the core is someone else's
    assert ahead.compile_ahead("Certified") is None


def test_spare_cores_counts_idle_usable_cores():
    assert 0.0 <= ahead.spare_cores(0.05) <= ahead.usable_cores()


def test_a_failing_step_is_reported_not_raised(monkeypatch):
    def broken():
        raise ValueError("no")

    monkeypatch.setitem(ahead.STEPS, "broken", (broken, ()))
    assert ahead.run_steps(["broken", "margins"]) == ["broken"]


PARENT = textwrap.dedent("""
    import subprocess, sys
    from spacy_hcparse.graph import ahead
    ahead.BUSY, ahead.SPARE = float("inf"), 0.0  # whatever else the machine runs
    helper = ahead.compile_ahead("Eisner")
    again = ahead.compile_ahead("Eisner")
    other = subprocess.run([sys.executable, "-c", "from spacy_hcparse.graph import ahead; ahead.BUSY, ahead.SPARE = 1e9, 0; "
                            "print(ahead.compile_ahead('Eisner'))"], capture_output=True, text=True).stdout.strip()
    print(helper.pid if helper else None, again, other, flush=True)
""")


@pytest.mark.skipif(ahead.fcntl is None or (os.cpu_count() or 1) < 2, reason="this machine compiles nothing ahead")
def test_one_helper_per_cache_and_it_ends_with_its_parent(tmp_path):
    """A fresh cache: the first ``compile_ahead`` starts the helper; a second call, and another
    process (``nlp.pipe(n_process=2)``'s workers), start none while it runs; it is gone once the
    parent has exited."""
    env = {**os.environ, ahead.ENV: "1", "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", PARENT], env=env, capture_output=True, text=True, check=True)
    pid, again, other = out.stdout.split()
    assert pid != "None" and again == "None" and other == "None", out.stderr
    for _ in range(50):
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the helper outlived its parent")
    assert not list((tmp_path / "cache").rglob("*.tmp.*"))
