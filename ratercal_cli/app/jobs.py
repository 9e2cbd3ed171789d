"""The app's long work in a worker thread: its stage and progress for the page, and a Cancel.

A job runs ``fn(job)``; ``fn`` names its stages (:meth:`Job.stage`), which is also where a Cancel takes
effect, and the library's progress bars (``check --simulate``'s replications) report into the job
(:func:`ratercal_cli.progress.observed`), where a Cancel stops the work at the next step.  A user's
error (:class:`~ratercal_cli.errors.RatercalError`) is kept as its one line; any other exception is a
bug and is kept with its type.
"""

from __future__ import annotations

import threading
import time

from ..errors import RatercalError
from ..progress import Cancelled, observed

__all__ = ["Job", "Cancelled"]


class Job:
    """One piece of work: ``state`` running / done / error / cancelled, ``stage`` (what it is doing),
    ``done`` and ``total`` (its steps, when known), ``error`` (one line) and ``result``."""

    def __init__(self, fn, title: str):
        self.title = title
        self.state = "running"
        self.stage_text = "starting"
        self.done = 0
        self.total = None
        self.error = None
        self.result = None
        self.started = time.monotonic()
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True, name=f"ratercal-app {title}")
        self._thread.start()

    def _run(self, fn):
        try:
            with observed(self._observe):
                self.result = fn(self)
            self.state = "done"
        except Cancelled:
            self.state = "cancelled"
        except RatercalError as exc:
            self.error, self.state = str(exc), "error"
        except Exception as exc:   # a bug: say what it was, keep the server up
            self.error, self.state = f"{type(exc).__name__}: {exc}", "error"

    def _observe(self, desc, done, total):
        if self._cancel.is_set():
            raise Cancelled()
        if desc:
            self.stage_text = desc
        self.done, self.total = done, total

    def stage(self, text: str) -> None:
        """Start a stage (its steps unknown); a Cancel asked for stops the work here."""
        if self._cancel.is_set():
            raise Cancelled()
        self.stage_text, self.done, self.total = text, 0, None

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    def wait(self, timeout=None) -> bool:
        """Wait for the work to end (tests); True when it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
