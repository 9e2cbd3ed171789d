"""ratercal_cli.parallel: forked workers give [fn(x) for x in items], in order, or the first error.

The tests call the forked machinery directly: ``ordered_map`` itself spawns a pool instead when
threads run in the test process (another test's Dask client, say)."""

from __future__ import annotations

import os
import time

import pytest

from ratercal_cli.parallel import ForkedMap, forked_map

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers need fork")


def _in_order(fn, items, jobs=2, progress=None):
    """``ordered_map``'s forked path."""
    items = list(items)
    out = [None] * len(items)
    results = forked_map(fn, items, jobs)
    for i, value in (progress(results, len(items)) if progress else results):
        out[i] = value
    return out


def _square_and_pid(x):
    time.sleep(0.002 * (x % 3))   # uneven items: the free worker takes the next
    return x * x, os.getpid()


def test_results_come_in_the_items_order_from_both_workers():
    out = _in_order(_square_and_pid, range(60))
    assert [v for v, _ in out] == [x * x for x in range(60)]
    pids = {pid for _, pid in out}
    assert len(pids) == 2 and os.getpid() not in pids


def test_large_results_and_more_items_than_a_pipe_holds():
    """Results over a pipe's 64 KiB, and 20,000 item numbers (80 KB): nothing blocks."""
    big = _in_order(lambda x: bytes([x % 256]) * 200_000, range(12))
    assert [len(b) for b in big] == [200_000] * 12 and big[7][:1] == b"\x07"
    assert _in_order(lambda x: x + 1, range(20_000)) == list(range(1, 20_001))


def test_progress_sees_each_result_once():
    seen = []

    def progress(it, total):
        for item in it:
            seen.append(item[0])
            yield item

    assert _in_order(lambda x: -x, range(9), progress=progress) == [-x for x in range(9)]
    assert sorted(seen) == list(range(9))


def _fails_on_five(x):
    if x == 5:
        raise ValueError(f"item {x} is bad")
    time.sleep(0.05)
    return x


def test_an_error_in_a_worker_is_raised_here_and_stops_the_others():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="item 5 is bad"):
        _in_order(_fails_on_five, range(200))
    assert time.perf_counter() - t0 < 5   # 200 items of 0.05 s in two workers would take 5 s


def test_an_exception_that_does_not_pickle_arrives_as_its_text():
    class Local(Exception):   # a class pickle cannot find by name
        pass

    def fail(x):
        raise Local("cannot travel")

    with pytest.raises(RuntimeError, match="Local: cannot travel"):
        list(forked_map(fail, [1, 2], 2))


def test_no_worker_is_left_behind():
    """Done, or stopped half-way (busy workers get SIGTERM), every worker is reaped."""
    t0 = time.perf_counter()
    for items, stop_after in (([0.001] * 10, None), ([0.01] + [30.0] * 3, 0)):
        work = ForkedMap(time.sleep, items, 2)
        pids = list(work.workers.values())
        with work:
            for k, _ in enumerate(work):
                if k == stop_after:
                    break
        for pid in pids:
            with pytest.raises(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
    assert time.perf_counter() - t0 < 10   # the 30 s sleeps were stopped


def test_workers_forked_later_do_not_hold_up_an_earlier_map():
    """A map started in the background (the report's model figures) finishes while a later
    map's workers are still busy: they hold no copy of its pipe of item numbers."""
    background = ForkedMap(abs, [-1, -2, -3], 1)
    later = ForkedMap(time.sleep, [30.0, 30.0], 2)
    t0 = time.perf_counter()
    with later, background:
        assert sorted(background) == [(0, 1), (1, 2), (2, 3)]
        assert time.perf_counter() - t0 < 10


def _dies_once_on(marker_dir, doomed):
    """``fn`` whose worker is SIGKILLed the first time it takes an item of ``doomed`` (a marker
    file says it happened), as ``kill -9`` of one worker does."""
    import signal

    def fn(x):
        marker = marker_dir / f"killed-{x}"
        if x in doomed and not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.001)
        return x * x, os.getpid()

    return fn


def test_a_killed_worker_is_replaced_and_its_item_done_again(tmp_path):
    """kill -9 of one worker: its item used to be lost (a traceback, exit 1, after the other
    worker did the rest); now a new worker takes its place and the item is done again."""
    work = ForkedMap(_dies_once_on(tmp_path, {3, 40}), list(range(60)), 2)
    first = set(work.workers.values())
    with work:
        out = dict(work)
    assert sorted(out) == list(range(60)) and all(out[x][0] == x * x for x in out)
    assert len(work.deaths) == 2 and work.deaths[0] == "signal 9"
    assert {pid for _, pid in out.values()} - first            # replacements did some of the work
    assert _in_order(lambda x: x + 1, range(5)) == [1, 2, 3, 4, 5]


def test_a_worker_that_dies_on_every_try_stops_the_map_with_one_line(tmp_path):
    from ratercal_cli.errors import RatercalError

    def always(x):
        if x == 2:
            os.kill(os.getpid(), 9)
        return x

    t0 = time.perf_counter()
    with pytest.raises(RatercalError, match=r"^worker processes died 4 times \(signal 9, signal 9, signal 9, "
                                            r"signal 9\); stopped"):
        list(forked_map(always, list(range(6)), 2))
    assert time.perf_counter() - t0 < 5


def test_workers_die_with_their_parent(tmp_path):
    """SIGKILL of the process that forked them: its workers end at once (PR_SET_PDEATHSIG), instead
    of living on for seconds and writing beside the run that resumes it."""
    import signal
    import subprocess
    import sys

    code = ("import sys, time; from ratercal_cli.parallel import ForkedMap; "
            "w = ForkedMap(time.sleep, [30.0] * 4, 2); print(*w.workers.values(), flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_running(p) for p in pids):
        time.sleep(0.02)
    assert not any(_running(p) for p in pids)


def _running(pid) -> bool:
    """Alive and not a zombie (a worker whose new parent has not reaped it yet has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
