"""Independent pieces of work spread over forked processes that inherit them.

The children are forked after the work is set aside here, so they inherit the function and
its items (closures, stages and figures' data alike): only an index goes to a child and only
the result comes back.  Used for the sets of ``adjust`` and ``simulate`` and the report's
figures; the Monte Carlo runner has its own scheduler (spawn or Dask).
"""

from __future__ import annotations

_WORK = None


def can_fork() -> bool:
    import multiprocessing  # here: a command that runs nothing in parallel never needs it

    return "fork" in multiprocessing.get_all_start_methods()


def forked_imap(fn, items, jobs):
    """Yield ``fn(item)`` for each of ``items``, in order, computed in ``jobs`` forked
    processes (each takes the next item when it is free).  One such loop at a time."""
    import multiprocessing

    global _WORK
    items = list(items)
    _WORK = (fn, items)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            yield from pool.imap(_call, range(len(items)), chunksize=1)
    finally:
        _WORK = None


def _call(i):
    fn, items = _WORK
    return fn(items[i])
