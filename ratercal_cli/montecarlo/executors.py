"""Where chunks are computed: in this process, in ``--jobs N`` processes (forked workers, or a
pool when this process runs threads: the policy of :mod:`ratercal_cli.parallel`) or on a Dask
cluster (``--scheduler ADDR``).  Each yields
``(chunk, rows)`` as chunks finish; the caller writes them, so the files never depend on where
or in which order they were computed."""

from __future__ import annotations

import functools

from ..errors import RatercalError
from ..parallel import forked_map, process_pool, start_method
from .chunks import run_chunk


def serial(tasks, spec):
    for ch in tasks:
        yield ch, run_chunk(spec, ch.cell, ch.start, ch.stop)


def processes(tasks, spec, jobs):
    if start_method() == "fork":   # forked workers have the tasks and the spec already
        for i, body in forked_map(functools.partial(_run_task, spec), tasks, jobs):
            yield tasks[i], body
        return
    from concurrent.futures import as_completed

    pool = process_pool(jobs)
    futures = {pool.submit(run_chunk, spec, ch.cell, ch.start, ch.stop): ch for ch in tasks}
    with pool:
        try:
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        finally:
            for fut in futures:
                fut.cancel()


def _run_task(spec, ch):
    return run_chunk(spec, ch.cell, ch.start, ch.stop)


def dask(tasks, spec, scheduler):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise RatercalError("--scheduler needs the 'distributed' package (pip install 'ratercal[dask]')") from None
    client = scheduler if hasattr(scheduler, "submit") else None
    own = client is None
    if own:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, ValueError, TypeError) as exc:   # unreachable; not an address ("garbage")
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RatercalError(f"--scheduler: cannot reach the Dask scheduler at {scheduler!r}: {msg}") from None
    try:
        remote_spec = client.scatter(spec, broadcast=True)
        futures = {}
        for ch in tasks:
            key = f"ratercal-chunk-{spec.digest()}-{ch.cell.code}-{ch.start}-{ch.stop}"
            futures[client.submit(run_chunk, remote_spec, ch.cell, ch.start, ch.stop, key=key, pure=False)] = ch
        for fut, body in as_completed(list(futures), with_results=True):
            yield futures[fut], body
    finally:
        if own:
            client.close()
