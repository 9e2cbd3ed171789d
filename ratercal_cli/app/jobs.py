"""The app's long work in a worker process: its stage and progress for the page, and a Cancel that stops
it at once, inside one long fit.

A job runs ``fn(job, *args)`` in a process of its own (``multiprocessing``'s forkserver where the system
has one, else spawn: never a fork of the server's threads); ``fn`` is a module-level function, its
arguments and its result are pickled across.  In the worker ``fn`` names its stages (:meth:`Worker.stage`)
and the library's progress bars (``check --simulate``'s replications) report into the job
(:func:`ratercal_cli.progress.observed`); both travel to the server over a pipe, where a thread keeps the
job's ``stage_text``, ``done`` and ``total`` for the page.  A Cancel terminates the process (SIGTERM, then
SIGKILL after a second): a Rasch fit in the middle of its optimiser stops as quickly as a loop between
replications, and the job's scratch folder (where the worker writes its files before the server moves
them into place) is removed.  A user's error (:class:`~ratercal_cli.errors.RatercalError`) is kept as
its one line; any other exception is a bug and is kept with its type; a worker that dies says so.
"""

from __future__ import annotations

import multiprocessing
import shutil
import threading
import time
from pathlib import Path

from ..errors import RatercalError
from ..progress import Cancelled, observed

__all__ = ["Job", "Cancelled", "Worker", "context"]

#: What the forkserver imports once, so that each job's process starts without importing numpy,
#: scipy and the library again (about 1.5 s a job with spawn).
PRELOAD = ["ratercal_cli.app.work", "ratercal_cli.practice.check", "ratercal_cli.practice.adjust",
           "ratercal_cli.practice.html_report", "ratercal_cli.practice.memo", "ratercal_cli.practice.output",
           "ratercal_cli.practice.anchors", "ratercal_cli.practice.simulate"]
#: Seconds a terminated worker has before it is killed.
GRACE = 1.0

_CONTEXT = None


def context():
    """The multiprocessing context of the jobs: forkserver (preloading :data:`PRELOAD`) where
    available, else spawn."""
    global _CONTEXT
    if _CONTEXT is None:
        methods = multiprocessing.get_all_start_methods()
        if "forkserver" in methods:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(PRELOAD)
        else:   # Windows, and macOS builds without it
            ctx = multiprocessing.get_context("spawn")
        _CONTEXT = ctx
    return _CONTEXT


class Worker:
    """What ``fn`` sees of its job in the worker process: :meth:`stage`, and its progress bars sent on."""

    def __init__(self, conn):
        self._conn = conn
        self._last = 0.0

    def stage(self, text: str) -> None:
        """Start a stage (its steps unknown)."""
        self._conn.send(("stage", text))

    def progress(self, desc, done, total) -> None:
        now = time.monotonic()   # at most 20 messages a second, and always the last step
        if done in (0, total) or now - self._last > 0.05:
            self._last = now
            self._conn.send(("progress", desc, done, total))


def _work(conn, fn, args):
    """The worker process: run ``fn`` and send its result (or its error) back."""
    worker = Worker(conn)
    try:
        with observed(worker.progress):
            result = fn(worker, *args)
        conn.send(("done", result))
    except RatercalError as exc:
        conn.send(("error", str(exc)))
    except Exception as exc:   # a bug: say what it was
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


class Job:
    """One piece of work in a worker process (module docstring): ``state`` running / done / error /
    cancelled, ``stage_text`` (what it is doing), ``done`` and ``total`` (its steps, when known),
    ``error`` (one line) and ``result``.  ``on_done(result)`` runs in the server (before ``state``
    becomes done) to keep the result; ``scratch``: a folder of the worker's files, removed on a Cancel
    or an error."""

    def __init__(self, fn, title: str, args=(), on_done=None, scratch: Path | None = None):
        self.title = title
        self.state = "running"
        self.stage_text = "starting"
        self.done = 0
        self.total = None
        self.error = None
        self.result = None
        self.scratch = scratch
        self.started = time.monotonic()
        self.ended = None
        self.pid = None
        self._cancel = threading.Event()
        self._on_done = on_done
        ctx = context()
        self._conn, child = ctx.Pipe(duplex=False)
        self._process = ctx.Process(target=_work, args=(child, fn, tuple(args)), daemon=True,
                                    name=f"ratercal-app {title}")
        self._process.start()
        child.close()
        self.pid = self._process.pid
        self._thread = threading.Thread(target=self._watch, daemon=True, name=f"ratercal-app {title}")
        self._thread.start()

    def _watch(self):
        p, conn = self._process, self._conn
        outcome = None
        try:
            while outcome is None:
                if self._cancel.is_set():
                    break
                if conn.poll(0.1):
                    try:
                        msg = conn.recv()
                    except (EOFError, OSError):   # the worker died without a word
                        break
                    if msg[0] == "stage":
                        self.stage_text, self.done, self.total = msg[1], 0, None
                    elif msg[0] == "progress":
                        if msg[1]:
                            self.stage_text = msg[1]
                        self.done, self.total = msg[2], msg[3]
                    else:
                        outcome = msg
                elif not p.is_alive() and not conn.poll(0):
                    break
        finally:
            if outcome is None or self._cancel.is_set():
                self._stop()
            else:
                p.join(GRACE)
                if p.is_alive():
                    self._stop()
            conn.close()
        self.ended = time.monotonic()
        if self._cancel.is_set():
            self._clean()
            self.state = "cancelled"
        elif outcome is None:
            self._clean()
            self.error, self.state = f"the worker stopped (exit code {p.exitcode})", "error"
        elif outcome[0] == "error":
            self._clean()
            self.error, self.state = outcome[1], "error"
        else:
            try:
                self.result = outcome[1]
                if self._on_done is not None:
                    self._on_done(self.result)
                self.state = "done"
            except RatercalError as exc:
                self.error, self.state = str(exc), "error"
            except Exception as exc:   # a bug in keeping the result
                self.error, self.state = f"{type(exc).__name__}: {exc}", "error"

    def _stop(self):
        p = self._process
        if p.is_alive():
            p.terminate()
            p.join(GRACE)
        if p.is_alive():
            p.kill()
        p.join(GRACE)

    def _clean(self):
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def cancel(self) -> None:
        """Stop the work: the worker process is terminated within about a second."""
        self._cancel.set()

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def wait(self, timeout=None) -> bool:
        """Wait for the work to end (tests); True when it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
