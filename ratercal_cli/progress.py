"""Progress bars: tqdm on a terminal, nothing when piped or with ``--quiet``; inside :func:`observed`
(the local web app's worker thread) each step is reported to a callback instead, which may stop the
work by raising (:class:`Cancelled`)."""

from __future__ import annotations

import contextlib
import sys
import threading

_OBSERVER = threading.local()


class Cancelled(Exception):
    """Raised by an observer to stop the work it watches (the app's Cancel button)."""


@contextlib.contextmanager
def observed(callback):
    """Within this block, in this thread, every :func:`progress` reports ``callback(desc, done, total)``
    at its start and after each step, bar or no bar; an exception the callback raises stops the work."""
    before = getattr(_OBSERVER, "callback", None)
    _OBSERVER.callback = callback
    try:
        yield
    finally:
        _OBSERVER.callback = before


class _Observed:
    """A progress bar that reports to an observer (:func:`observed`)."""

    def __init__(self, iterable, total, desc, callback):
        self.iterable, self.desc, self.callback, self.n = iterable, desc, callback, 0
        self.total = total if total is not None else (len(iterable) if hasattr(iterable, "__len__") else None)
        callback(desc, 0, self.total)

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.update()

    def update(self, n=1):
        self.n += n
        self.callback(self.desc, self.n, self.total)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


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
    callback = getattr(_OBSERVER, "callback", None)
    if callback is not None:
        return _Observed(iterable, total, desc, callback)
    if quiet or not sys.stderr.isatty():
        return _Off(iterable)
    from tqdm import tqdm

    # no monitor thread: a process with one thread forks its workers (ratercal_cli.parallel)
    # instead of spawning them, which would import numpy again in each
    tqdm.monitor_interval = 0
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=False, dynamic_ncols=True)
