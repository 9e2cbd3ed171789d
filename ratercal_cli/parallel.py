"""The one policy for running work in several processes (study stages, report figures, Monte
Carlo chunks).

Workers are forked when this process runs a single thread — fast, and nothing can be held by
a thread that the child would not have — and spawned otherwise (a progress bar's monitor, a
Dask client or a BLAS pool may be running), so no worker is ever forked from a threaded
process.  Each worker uses one BLAS thread: ``jobs`` workers already fill ``jobs`` cores.  The
numbers are the same whichever way the workers start; callers write results in their own order,
so the files never depend on the number of workers either.
"""

from __future__ import annotations

import os
import threading

BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_count() -> int:
    """Cores this process may use (its CPU affinity), at least 1."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def start_method() -> str:
    """``fork`` where available and this process has one thread, else ``spawn``."""
    import multiprocessing   # here, not at the top: a command that runs in one process never needs it

    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


def process_pool(jobs: int):
    """A :class:`~concurrent.futures.ProcessPoolExecutor` of ``jobs`` worker processes started by
    :func:`start_method`; a spawned worker starts its BLAS library with one thread."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    saved = {k: os.environ.get(k) for k in BLAS_THREADS}
    os.environ.update({k: "1" for k in BLAS_THREADS})   # read by spawned workers as they start
    try:
        return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(start_method()))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def ordered_map(fn, items, jobs: int, progress=None):
    """``[fn(x) for x in items]`` in ``jobs`` processes (in this one when ``jobs`` is 1 or there is one
    item), results in the order of ``items``; ``progress(iterable, total)`` wraps the results."""
    items = list(items)
    wrap = progress or (lambda it, total: it)
    if jobs <= 1 or len(items) <= 1:
        return list(wrap(map(fn, items), len(items)))
    with process_pool(min(jobs, len(items))) as pool:
        return list(wrap(pool.map(fn, items), len(items)))
