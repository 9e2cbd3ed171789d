"""Every design shape at a million ratings (issue 32): ``adjust -m MML`` and ``-m MFRM`` against
``adjust -m NO`` on the same file, and the file pass against a columnar peer.

    .venv/bin/python benchmarks/bench_shapes.py [--ratings 1000000] [--shapes "3 of 200,21 of 200"]
                                                [--no-peer] [--only MML,MFRM] [--repeat 3]

Shapes (:mod:`shapes`): 2 and 3 of 200 raters a paper, a complete panel of 21, 21 of 200, and the
rubric of 84 ratings a paper (21 raters x 4 domains, ``--facet-col criterion``), 0-5.  For each, a
CSV file of about ``--ratings`` ratings is made in a temporary folder and each command runs in a
fresh process with one BLAS thread (as :mod:`bench_large_files`): the targets are ratios of CPU
seconds in the same run - MML and MFRM within MARGINAL_RATIO x NO and under MARGINAL_GIB.  Each
command runs ``--repeat`` times (3), NO, MML and MFRM in turn, and each keeps its least CPU seconds
(and its largest memory): what the other work on the shared machine added to a run is noise, not
the command's cost (on one 1M-rating file, one run each, MML's ratio to NO moved 2.4-3.8x within
half an hour), and taking turns lets a slow spell fall on every command alike.

The file pass: ``adjust -m NO`` (read, check, adjust, write back with the added columns) against
the columnar peer reading the same file, adding one column and writing it back, in its own process
(``polars``, installed on first use into ``benchmarks/.bench/peer-venv``, git-ignored; not a
ratercal dependency; without it the line says so and is not a failure): NO within FILE_RATIO x
the peer's CPU seconds.  ``check`` with its Rasch fits beside ``check --no-rasch`` on each shape is
printed for information (``--no-check`` leaves it out).  Exits 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_large_files import GIB, RATERCAL, measure, report  # noqa: E402
from shapes import SHAPES, write_shape  # noqa: E402

import bench_mirt  # noqa: E402

MARGINAL_RATIO = 2.5
MARGINAL_GIB = 1.5
FILE_RATIO = 3.0
PEER = "polars"
PEER_ENV = HERE / ".bench" / "peer-venv"

#: the peer's file pass: read the CSV, add a column, write it back (CPU seconds of the process)
_PEER = r"""
import sys, polars as pl
df = pl.read_csv(sys.argv[1], infer_schema_length=10000)
df.with_columns((pl.col("score") * 1.0).alias("NO")).write_csv(sys.argv[2])
"""


def peer_python():
    """The peer's interpreter (installing polars into its own environment on first use), or None."""
    return bench_mirt.peer_python(PEER, PEER_ENV, "polars", "file pass: ", "the peer line is skipped")


def compile_package():
    """ratercal's modules compiled to bytecode beforehand, as installing it (pip) does and as the peer's
    are: where no bytecode is kept (``PYTHONDONTWRITEBYTECODE``, this machine's setting, or a fresh
    clone) each measured command would compile its ~50 modules again, 0.1 s CPU of ``adjust -m NO``'s
    0.7-0.9 s at 1M ratings, which no installed copy pays.  The copy compiled is the one the ``ratercal``
    command imports (``python -I``: not the current folder's), which is another checkout's where this
    one's scripts run with another's environment: compiling this one's left every command recompiling
    the modules changed since that copy was last compiled (0.2-0.4 s a command, unevenly by method)."""
    import compileall
    import subprocess

    where = subprocess.run([sys.executable, "-I", "-c", "import os, ratercal_cli; print(os.path.dirname(ratercal_cli.__file__))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    compileall.compile_dir(where, quiet=1)


def adjust(data, code, out, rubric):
    return measure([RATERCAL, "adjust", str(data), "--scale", "0-5", "-m", code, "-o", str(out), "-q",
                    *(["--facet-col", "criterion"] if rubric else [])])


def best_of(codes, run, repeat):
    """``{code: measurement}`` of ``run(code)`` (:func:`bench_large_files.measure`'s tuple) for each code,
    ``repeat`` rounds of every code in turn: the least CPU seconds (with that run's wall time), the
    largest peak memory, and a failing run's exit status and error where one failed."""
    best = {}
    for _ in range(max(1, repeat)):
        for code in codes:
            seconds, rss, status, err, wall = run(code)
            old = best.get(code)
            if old is None:
                best[code] = (seconds, rss, status, err, wall)
                continue
            fast = seconds < old[0]
            best[code] = (min(seconds, old[0]), max(rss, old[1]), old[2] or status, old[3] or err,
                          wall if fast else old[4])
    return best


def check_line(data, name, rubric):
    """``check`` with its Rasch fits beside ``check --no-rasch`` on the shape's file, for information
    (no target: where the conditional fits' work is past cml.CHECK_WORK, 21 of 200 raters a paper,
    check leaves them out and says so)."""
    opts = [RATERCAL, "check", str(data), "--scale", "0-5", *(["--facet-col", "criterion"] if rubric else [])]
    quick = measure([*opts, "--no-rasch"])
    full = measure(opts)
    print(f"check [{name}]: with the Rasch fits {full[0]:.1f} s CPU ({full[1] / GIB:.2f} GiB), --no-rasch "
          f"{quick[0]:.1f} s CPU: {full[0] / quick[0]:.1f} x (information){'' if full[2] == 0 else f'; exit {full[2]}: {full[3]}'}",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ratings", type=int, default=1_000_000)
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated names of benchmarks/shapes.py")
    ap.add_argument("--only", default="MML,MFRM")
    ap.add_argument("--no-peer", action="store_true", help="leave out the file pass against polars")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command, in turn; the least CPU seconds kept")
    ap.add_argument("--check", action=argparse.BooleanOptionalAction, default=True,
                    help="also time check with and without its Rasch fits on each shape (information, no target)")
    args = ap.parse_args()
    codes = [c for c in args.only.upper().split(",") if c]
    names = [s.strip() for s in args.shapes.split(",") if s.strip()]
    py = None if args.no_peer else peer_python()
    compile_package()
    tmp = Path(tempfile.mkdtemp(prefix="ratercal-shapes-"))
    ok = True
    try:
        for name in names:
            rubric = SHAPES[name][2] > 1
            data, out = tmp / "ratings.csv", tmp / "out.csv"
            t = time.perf_counter()
            write_shape(data, name, args.ratings)
            k, J, F = SHAPES[name]
            print(f"== {name}: {args.ratings:,} ratings, {k * F} a paper ({k} of {J} raters"
                  f"{f' x {F} domains, --facet-col criterion' if rubric else ''}), 0-5 "
                  f"({data.stat().st_size / 2**20:.0f} MiB, made in {time.perf_counter() - t:.0f} s; load "
                  f"{os.getloadavg()[0]:.1f}); CPU seconds, one BLAS thread, best of {max(1, args.repeat)}", flush=True)
            runs = best_of(["NO", *codes], lambda code: adjust(data, code, out, rubric), args.repeat)
            no = runs["NO"]
            ok &= report(f"adjust -m NO [{name}]", *no, max_gib=2.0)
            for code in codes:
                ok &= report(f"adjust -m {code} [{name}]", *runs[code], ref=no[0], ratio=MARGINAL_RATIO,
                             max_gib=MARGINAL_GIB)
            if args.check:
                check_line(data, name, rubric)
            if py is not None:
                seconds, rss, code, err, wall = measure([str(py), "-c", _PEER, str(data), str(out)])
                if code != 0:
                    print(f"file pass [{name}]: {PEER} failed ({err}); not ours", flush=True)
                else:
                    good = no[2] == 0 and no[0] <= FILE_RATIO * seconds
                    ok &= good
                    print(f"file pass [{name}]: {PEER} read + one column + write {seconds:.2f} s CPU "
                          f"({rss / GIB:.2f} GiB); adjust -m NO {no[0]:.2f} s = {no[0] / seconds:.2f} x "
                          f"(<= {FILE_RATIO:g})  {'ok' if good else 'FAILED'}", flush=True)
            data.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
