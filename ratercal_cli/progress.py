"""Progress bars: tqdm on a terminal, nothing when piped or with ``--quiet``."""

from __future__ import annotations

import sys


class _Off:
    """What ``progress`` gives when no bar is shown: the iterable itself, ``update`` and
    ``close`` doing nothing (tqdm, and the importlib.metadata it pulls in, is not imported:
    20 ms of every quiet or piped command's start-up)."""

    def __init__(self, iterable=None):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def update(self, n=1):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def progress(iterable=None, total=None, desc=None, quiet=False, unit="it"):
    if quiet or not sys.stderr.isatty():
        return _Off(iterable)
    from tqdm import tqdm

    # no monitor thread: a process with one thread forks its workers (ratercal_cli.parallel)
    # instead of spawning them, which would import numpy again in each
    tqdm.monitor_interval = 0
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=False, dynamic_ncols=True)
