"""The one policy for running work in several processes (study stages, report figures, Monte
Carlo chunks).

Workers are forked when this process runs a single thread — fast, and nothing can be held by
a thread that the child would not have — and spawned otherwise (a Dask client or a BLAS pool may
be running), so no worker is ever forked from a threaded process.  Forked workers need no pool
(:class:`ForkedMap`: they have the work already, only results travel); spawned ones come from a
:func:`process_pool`.  Each spawned worker uses one BLAS thread:
``jobs`` workers already fill ``jobs`` cores.  The numbers are the same whichever way the
workers start; callers write results in their own order, so the files never depend on the
number of workers either.
"""

from __future__ import annotations

import functools
import os
import struct
import sys
import threading

BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread(fn):
    """``fn`` run with the BLAS library on one thread (threadpoolctl; numpy and scipy have no thread
    control): the fits' linear algebra is small or medium matrices, where OpenBLAS's threads gain
    little and, on a machine busy with other work, spin on the cores the work needs (issue 21: CML
    at 200,000 ratings and 800 raters, load 4 on 2 cores, the RSM fit 16.0 s with two threads, 3.4 s
    with one; MML at 1M ratings, 21 of 200 raters a paper, load 4: 4.7 s of CPU with two threads,
    3.1 s with one, 0.6 s of it spinning in the information's Cholesky factor)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return run


def cpu_count() -> int:
    """Cores this process may use (its CPU affinity), at least 1."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_jobs(n_items: int, at_least: int = 4) -> int:
    """The processes for ``n_items`` pieces of work when the user names none: one per core, at
    most 2, when there are at least ``at_least`` (below that, forking costs more than it saves)."""
    return min(2, cpu_count()) if n_items >= at_least else 1


def start_method() -> str:
    """``fork`` where available and this process has one thread, else ``spawn``."""
    import multiprocessing   # here, not at the top: a command that runs in one process never needs it

    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


def process_pool(jobs: int):
    """A :class:`~concurrent.futures.ProcessPoolExecutor` of ``jobs`` worker processes started by
    :func:`start_method`; a spawned worker starts its BLAS library with one thread, and ends
    when this process dies (:func:`die_with_parent`)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    saved = {k: os.environ.get(k) for k in BLAS_THREADS}
    os.environ.update({k: "1" for k in BLAS_THREADS})   # read by spawned workers as they start
    try:
        return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(start_method()),
                                   initializer=die_with_parent, initargs=(os.getpid(),))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def ordered_map(fn, items, jobs: int, progress=None):
    """``[fn(x) for x in items]`` in ``jobs`` processes (in this one when ``jobs`` is 1 or there is one
    item), results in the order of ``items``; ``progress(iterable, total)`` wraps the results as
    they come.  Forked workers (:func:`forked_map`) where :func:`start_method` allows, else a
    :func:`process_pool`."""
    items = list(items)
    wrap = progress or (lambda it, total: it)
    if jobs <= 1 or len(items) <= 1:
        return list(wrap(map(fn, items), len(items)))
    jobs = min(jobs, len(items))
    if start_method() == "fork":
        results = [None] * len(items)
        for i, value in wrap(forked_map(fn, items, jobs), len(items)):
            results[i] = value
        return results
    with process_pool(jobs) as pool:
        return list(wrap(pool.map(fn, items), len(items)))


_INDEX = struct.Struct("<I")
_FRAME = struct.Struct("<IQ")


def forked_map(fn, items, jobs: int):
    """Yield ``(i, fn(items[i]))`` for every item, as ``jobs`` forked workers finish them
    (:class:`ForkedMap`, started at the first result asked for)."""
    work = ForkedMap(fn, items, jobs)
    try:
        yield from work
    finally:
        work.close()


class ForkedMap:
    """``fn`` on every item in ``jobs`` worker processes forked now; iterate for ``(i, fn(items[i]))``
    as they are done, meanwhile this process is free for other work.

    A pool without the pool: the workers are forked from this process, so they have ``fn``
    and ``items`` already (nothing is pickled but the results); they take the items' numbers
    one at a time from a pipe (whoever is free takes the next, so a long item does not hold
    up the rest) and send each result back on their own pipe.  Starting and stopping two
    workers this way costs about 4 ms, a :class:`~concurrent.futures.ProcessPoolExecutor`
    20-45 ms.  An exception in a worker (``KeyboardInterrupt`` included) is raised here and
    :meth:`close` (always called: ``with`` or ``finally``) stops the others (SIGTERM: an atomic
    write in progress removes its temporary file); the workers end with ``os._exit``, running
    none of this process's exit handlers, and when this process dies (:func:`die_with_parent`).

    A worker that dies (killed, out of memory) is replaced at once, as Dask replaces one, and
    the items it took without sending their results back are done again by fresh workers once
    the others are through; after :data:`RETRIES` deaths the map stops with one line,
    :class:`~ratercal_cli.errors.RatercalError`.
    """

    #: Worker deaths a map survives (a worker that dies on every try of an item stops it).
    RETRIES = 3

    def __init__(self, fn, items, jobs: int, deaths=None):
        self.fn, self.items, self.jobs = fn, items, jobs
        self.n = len(items)
        self.workers = {}                 # result pipe's read end -> pid
        self.deaths = deaths if deaths is not None else []   # how each dead worker ended
        self._parent = os.getpid()
        self._pending = b"".join(_INDEX.pack(i) for i in range(self.n))
        self._tasks_r, self._tasks_w = os.pipe()
        _parent_death_signal()            # looked up here, once, not in each worker
        try:
            for _ in range(jobs):
                self._fork()
            os.set_blocking(self._tasks_w, False)
            self._pending = self._pending[self._write_tasks():]
            if not self._pending:   # all handed out: closed now, so a process forked later holds no copy
                os.close(self._tasks_w)
                self._tasks_w = None
        except BaseException:
            self.close()
            raise

    def _fork(self) -> int:
        """Start one worker; returns its result pipe's read end.  The read end of the item
        numbers stays open here, so that a worker started later (a replacement) can take them."""
        for stream in (sys.stdout, sys.stderr):
            stream.flush()                # else the worker would write this process's buffered text again
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:   # the worker
            if self._tasks_w is not None:
                os.close(self._tasks_w)
            os.close(read_end)
            for other in self.workers:
                os.close(other)
            _work(self.fn, self.items, self._tasks_r, write_end, self._parent)
        os.close(write_end)
        self.workers[read_end] = pid
        return read_end

    def _write_tasks(self) -> int:
        try:
            return os.write(self._tasks_w, self._pending) if self._pending else 0
        except BlockingIOError:
            return 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __iter__(self):
        import selectors

        sel = selectors.DefaultSelector()
        if self._pending:
            sel.register(self._tasks_w, selectors.EVENT_WRITE)
        for fd in self.workers:
            sel.register(fd, selectors.EVENT_READ)
        try:
            received = yield from self._results(sel)
        finally:
            sel.close()
        yield from self._redo([i for i in range(self.n) if i not in received])

    def _results(self, sel):
        """Yield the results as they come; returns the numbers of the items received."""
        import pickle
        import selectors

        buffers = {fd: bytearray() for fd in self.workers}
        open_fds, received = set(self.workers), set()
        while open_fds:
            for key, _ in sel.select():
                fd = key.fd
                if fd == self._tasks_w:
                    self._pending = self._pending[self._write_tasks():]
                    if not self._pending:
                        sel.unregister(fd)
                        os.close(fd)
                        self._tasks_w = None
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    sel.unregister(fd)
                    open_fds.discard(fd)
                    if self._ended(fd) and len(received) < self.n:   # died: a replacement takes its place
                        new = self._fork()
                        sel.register(new, selectors.EVENT_READ)
                        open_fds.add(new)
                        buffers[new] = bytearray()
                    continue
                buf = buffers[fd]
                buf += chunk
                while len(buf) >= _FRAME.size:
                    i, size = _FRAME.unpack_from(buf)
                    if len(buf) < _FRAME.size + size:
                        break
                    ok, value = pickle.loads(bytes(buf[_FRAME.size:_FRAME.size + size]))
                    del buf[:_FRAME.size + size]
                    if not ok:
                        raise value
                    received.add(i)
                    yield i, value
        return received

    def _ended(self, fd) -> bool:
        """Reap the worker whose result pipe ``fd`` closed; True if it died rather than ended
        (recorded in :attr:`deaths`, and stopping the map after :data:`RETRIES`)."""
        pid = self.workers.pop(fd)
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            return False
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"status {os.WEXITSTATUS(status)}"
        self.deaths.append(how)
        if len(self.deaths) > self.RETRIES:
            from .errors import RatercalError

            raise RatercalError(f"worker processes died {len(self.deaths)} times ({', '.join(self.deaths)}); "
                                "stopped (out of memory? see the system log)")
        return True

    def _redo(self, missing):
        """The items taken by workers that died, done again in fresh workers."""
        if not missing:
            return
        if not self.deaths:   # pragma: no cover - every worker ended cleanly, yet items are missing
            raise RuntimeError(f"a worker process ended with {len(missing)} of {self.n} items not done")
        again = ForkedMap(self.fn, [self.items[i] for i in missing], min(self.jobs, len(missing)), self.deaths)
        with again:
            for j, value in again:
                yield missing[j], value

    def close(self) -> None:
        """Stop the workers still busy (a worker that is done has ended) and reap them all."""
        import signal

        for fd in (self._tasks_r, self._tasks_w):
            if fd is not None:
                os.close(fd)
        self._tasks_r = self._tasks_w = None
        workers, self.workers = self.workers, {}
        for fd, pid in workers.items():
            try:
                os.close(fd)
            except OSError:
                pass
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid in workers.values():
            os.waitpid(pid, 0)


_PRCTL = []   # [prctl function, or None where there is none]


def _parent_death_signal():
    """libc's ``prctl`` (Linux), looked up once per process; None elsewhere."""
    if not _PRCTL:
        try:
            import ctypes

            prctl = ctypes.CDLL(None, use_errno=True).prctl
            prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        except (ImportError, OSError, AttributeError):   # pragma: no cover - not Linux
            prctl = None
        _PRCTL.append(prctl)
    return _PRCTL[0]


#: ``prctl``'s option: the signal a process gets when its parent dies.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """End this worker when its parent ``parent`` dies: the kernel sends it SIGTERM (Linux
    ``PR_SET_PDEATHSIG``; an atomic write in progress removes its temporary file), so a killed
    command leaves no worker writing beside the run that resumes it.  A parent already gone
    ends it now.  Elsewhere, the parent's end of its result pipe, closed, stops it at its next
    result."""
    import signal

    prctl = _parent_death_signal()
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _work(fn, items, tasks_r, out, parent):
    """A forked worker's life: take item numbers until there are none, send each result."""
    import pickle

    code = 0
    try:
        die_with_parent(parent)
        while True:
            raw = os.read(tasks_r, _INDEX.size)
            if len(raw) < _INDEX.size:
                break
            (i,) = _INDEX.unpack(raw)
            try:
                payload = pickle.dumps((True, fn(items[i])), protocol=pickle.HIGHEST_PROTOCOL)
                failed = False
            except BaseException as exc:   # noqa: BLE001 - sent to the parent, which raises it
                try:
                    payload = pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:   # an exception that does not pickle
                    payload = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
                failed = True
            frame = _FRAME.pack(i, len(payload)) + payload
            view = memoryview(frame)
            while view:
                view = view[os.write(out, view):]
            if failed:
                break
    except BaseException:   # noqa: BLE001 - e.g. the parent gone (broken pipe): just end
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:   # noqa: BLE001
                pass
        os._exit(code)
