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


#: Seconds to wait for a Dask scheduler to answer (``Client``'s own timeout covers the TCP connect,
#: not a peer that accepts and never speaks Dask's protocol: an HTTP port hung ratercal for good).
CONNECT_SECONDS = 20.0


def connect(Client, scheduler, seconds: float = CONNECT_SECONDS):
    """``Client(scheduler)`` within ``seconds``, made in a daemon thread so that a port answered by
    something else (silent, or an HTTP server whose reply Dask reads as a 3 EiB frame: MemoryError)
    is a one-line :class:`ArgumentError` instead of a hang or a traceback."""
    import threading

    box = {}

    def make():
        try:
            box["client"] = Client(scheduler, timeout=f"{seconds:g}s")
        except BaseException as exc:   # anything the connection raises is reported below
            box["error"] = exc

    t = threading.Thread(target=make, name="ratercal-dask-connect", daemon=True)
    t.start()
    t.join(seconds * 1.5 + 1)   # Client gives up first where it can, with its own message
    where = f"cannot reach the Dask scheduler at {scheduler!r}"
    if t.is_alive():
        raise ArgumentError("scheduler", f"{where}: no Dask answer within {seconds:g} s (is it a Dask "
                            "scheduler's address, e.g. tcp://HOST:8786?)")
    exc = box.get("error")
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise exc
    if isinstance(exc, MemoryError):
        raise ArgumentError("scheduler", f"{where}: what answered is not a Dask scheduler (it sent a reply Dask "
                            "cannot read)")
    if exc is not None:   # unreachable; not an address ("garbage"); a peer speaking another protocol
        msg = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ArgumentError("scheduler", f"{where}: {msg}")
    return box["client"]


def dask(fn, shared, tasks, scheduler, key=None):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ArgumentError("scheduler", "needs the 'distributed' package (pip install 'ratercal[dask]')") from None
    client = scheduler if hasattr(scheduler, "submit") else None
    own = client is None
    if own:
        client = connect(Client, scheduler)
    try:
        remote = client.scatter(shared, broadcast=True)
        futures = {}
        for task in tasks:
            name = {} if key is None else {"key": key(task)}
            futures[client.submit(fn, remote, task, pure=False, **name)] = task
        for fut, body in as_completed(list(futures), with_results=True):
            if isinstance(body, BaseException) or fut.status != "finished":
                # a cancelled future comes back as its exception (the scheduler killed mid-run): it was
                # taken for the chunk's text ('can only concatenate str (not "FutureCancelledError")')
                raise ArgumentError("scheduler", f"the Dask cluster at {scheduler!r} lost a task ({fut.status}: "
                                    f"{type(body).__name__}; the scheduler or its workers stopped?); the chunks "
                                    "done are kept: run again to resume")
            yield futures[fut], body
    finally:
        if own:
            client.close()
