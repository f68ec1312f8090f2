"""Which BLAS a model's matrix products use on a CPU, and how many threads that BLAS may take.

thinc's ``NumpyOps`` multiplies matrices with blis, single-threaded. blis's kernels are several
times slower than numpy's own BLAS (OpenBLAS, in numpy's wheels) on some CPUs (figures in
docs/speed.md). ``use_blas(model, "numpy")`` gives the model's CPU nodes thinc's
``NumpyOps(use_blis=False)``, whose ``gemm`` is numpy's (and ``layers.lstm`` then runs its array
code, whose products are numpy's too); ``"blis"`` gives them thinc's default back. Ops of other
kinds (a GPU's ``CupyOps``, ``AppleOps``) are never touched.

numpy's BLAS starts as many threads as the machine has cores. ``blas_threads(n)`` caps it at ``n``
while a model runs (threadpoolctl), so a component stays on the threads it is given, as spaCy's
CPU models do: with ``nlp.pipe(n_process=2)`` two processes do not each take every core.
"""
import os
from contextlib import contextmanager
from typing import Iterator, Optional

from thinc.api import Model, NumpyOps

BLAS_CHOICES = ("numpy", "blis")


def use_blas(model: Model, blas: str) -> None:
    """Make the CPU nodes of ``model`` multiply with ``blas`` (one of ``BLAS_CHOICES``)."""
    if blas not in BLAS_CHOICES:
        raise ValueError(f"unknown BLAS {blas!r}: expected one of {', '.join(BLAS_CHOICES)}")
    use_blis = blas == "blis"
    ops: Optional[NumpyOps] = None
    for node in model.walk():
        if type(node.ops) is NumpyOps and node.ops.use_blis != use_blis:
            ops = ops or NumpyOps(use_blis=use_blis)
            node.ops = ops


def uses_blis(ops) -> bool:
    """Whether ``ops`` multiplies with blis (thinc's ``NumpyOps`` as it comes)."""
    return isinstance(ops, NumpyOps) and getattr(ops, "use_blis", True)


_CONTROLLER = {}  # per process: threadpoolctl's view of the BLAS libraries loaded


@contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """numpy's BLAS runs on at most ``n`` threads inside the block (as it did before, after)."""
    if n < 1:
        raise ValueError(f"threads must be at least 1, got {n}")
    pid = os.getpid()
    if pid not in _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.clear()
        _CONTROLLER[pid] = ThreadpoolController()
    with _CONTROLLER[pid].limit(limits=n, user_api="blas"):
        yield


@contextmanager
def model_blas(model: Model, blas: str, threads: int) -> Iterator[None]:
    """Inside: ``model``'s CPU nodes multiply with ``blas`` (``use_blas``; nodes added since, such
    as a resized output layer, included) and numpy's BLAS takes at most ``threads`` threads."""
    use_blas(model, blas)
    with blas_threads(threads):
        yield
