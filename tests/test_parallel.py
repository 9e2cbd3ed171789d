"""ratercal_cli.parallel: forked workers give [fn(x) for x in items], in order, or the first error."""

from __future__ import annotations

import os
import time

import pytest

from ratercal_cli.parallel import forked_map, ordered_map, start_method

pytestmark = pytest.mark.skipif(start_method() != "fork", reason="forked workers need fork")


def _square_and_pid(x):
    time.sleep(0.002 * (x % 3))   # uneven items: the free worker takes the next
    return x * x, os.getpid()


def test_results_come_in_the_items_order_from_both_workers():
    out = ordered_map(_square_and_pid, range(60), 2)
    assert [v for v, _ in out] == [x * x for x in range(60)]
    pids = {pid for _, pid in out}
    assert len(pids) == 2 and os.getpid() not in pids


def test_large_results_and_more_items_than_a_pipe_holds():
    """Results over a pipe's 64 KiB, and 20,000 item numbers (80 KB): nothing blocks."""
    big = ordered_map(lambda x: bytes([x % 256]) * 200_000, range(12), 2)
    assert [len(b) for b in big] == [200_000] * 12 and big[7][:1] == b"\x07"
    assert ordered_map(lambda x: x + 1, range(20_000), 2) == list(range(1, 20_001))


def test_progress_sees_each_result_once():
    seen = []

    def progress(it, total):
        for item in it:
            seen.append(item[0])
            yield item

    assert ordered_map(lambda x: -x, range(9), 2, progress) == [-x for x in range(9)]
    assert sorted(seen) == list(range(9))


def _fails_on_five(x):
    if x == 5:
        raise ValueError(f"item {x} is bad")
    time.sleep(0.05)
    return x


def test_an_error_in_a_worker_is_raised_here_and_stops_the_others():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="item 5 is bad"):
        ordered_map(_fails_on_five, range(200), 2)
    assert time.perf_counter() - t0 < 5   # 200 items of 0.05 s in two workers would take 5 s


def test_an_exception_that_does_not_pickle_arrives_as_its_text():
    class Local(Exception):   # a class pickle cannot find by name
        pass

    def fail(x):
        raise Local("cannot travel")

    with pytest.raises(RuntimeError, match="Local: cannot travel"):
        list(forked_map(fail, [1, 2], 2))


def test_no_worker_is_left_behind():
    list(forked_map(abs, range(10), 2))
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)   # every worker was reaped
