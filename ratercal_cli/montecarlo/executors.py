"""Where tasks are computed: in this process, in ``--jobs N`` processes (forked workers, or a
pool when this process runs threads: the policy of :mod:`ratercal_cli.parallel`) or on a Dask
cluster (``--scheduler ADDR``).

A task is ``fn(shared, task)``: ``shared`` what every task needs (a study's spec, a file's fitted
design), sent to each worker once (forked workers have it already; Dask gets it scattered),
``task`` what one task does (a chunk of replications).  :func:`run_tasks` yields
``(task, result)`` as tasks finish; the caller orders them, so what it writes never depends on
where or in which order they were computed.  The Monte Carlo study (:mod:`.run`: a chunk of
replications of one cell) and ``check --simulate`` (:mod:`ratercal_cli.practice.simulate`: a
chunk of replications of a file's design) run on it."""

from __future__ import annotations

import functools

from ..errors import ArgumentError
from ..parallel import forked_map, process_pool, start_method


def run_tasks(fn, shared, tasks, jobs=1, scheduler=None, key=None):
    """Yield ``(task, fn(shared, task))`` for every task, as they finish: in this process
    (``jobs`` 1), in ``jobs`` processes, or on the Dask cluster at ``scheduler`` (an address, or
    a ``distributed.Client``), each task under the name ``key(task)`` there.  The largest
    tasks should come first (the last to finish is then small)."""
    tasks = list(tasks)
    if scheduler is not None:
        return dask(fn, shared, tasks, scheduler, key)
    if jobs and jobs > 1 and len(tasks) > 1:
        return processes(fn, shared, tasks, min(jobs, len(tasks)))
    return serial(fn, shared, tasks)


def serial(fn, shared, tasks):
    for task in tasks:
        yield task, fn(shared, task)


def processes(fn, shared, tasks, jobs):
    if start_method() == "fork":   # forked workers have the tasks and what they share already
        for i, body in forked_map(functools.partial(fn, shared), tasks, jobs):
            yield tasks[i], body
        return
    from concurrent.futures import as_completed

    pool = process_pool(jobs)
    futures = {pool.submit(fn, shared, task): task for task in tasks}
    with pool:
        try:
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        finally:
            for fut in futures:
                fut.cancel()


def dask(fn, shared, tasks, scheduler, key=None):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ArgumentError("scheduler", "needs the 'distributed' package (pip install 'ratercal[dask]')") from None
    client = scheduler if hasattr(scheduler, "submit") else None
    own = client is None
    if own:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, ValueError, TypeError) as exc:   # unreachable; not an address ("garbage")
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ArgumentError("scheduler", f"cannot reach the Dask scheduler at {scheduler!r}: {msg}") from None
    try:
        remote = client.scatter(shared, broadcast=True)
        futures = {}
        for task in tasks:
            name = {} if key is None else {"key": key(task)}
            futures[client.submit(fn, remote, task, pure=False, **name)] = task
        for fut, body in as_completed(list(futures), with_results=True):
            yield futures[fut], body
    finally:
        if own:
            client.close()
