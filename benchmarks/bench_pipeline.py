"""Wall-clock benchmarks of the 1990 pipeline (issues 2, 3 and 11).

Prints one line per measurement with its target; each command is timed as a
user runs it (a fresh process, through the ``ratercal`` script), best of a few repeats.
The faithful study (issue 11): ``simulate`` + ``adjust`` + ``score`` of
configs/denny1990.yaml into a fresh folder under 1 s of wall time together, and
``report`` of that run into a fresh folder, figures included, under 2 s.  The machine's
load average is printed beside them: other work on a 2-core machine slows every line.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import os
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RATERCAL = [str(Path(sys.executable).with_name("ratercal"))]
# Python's bytecode cache on, as a user has it (a PYTHONDONTWRITEBYTECODE=1 environment would
# make every command compile ratercal's modules again, ~0.05 s each)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def wall(cmd, repeat=3, setup=None):
    best = float("inf")
    for _ in range(repeat):
        if setup:
            setup()
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t)
    return best


def report(name, seconds, target, unit="s"):
    ok = "ok" if seconds < target else "SLOW"
    print(f"{name:<62} {seconds:8.3f} {unit}   (target < {target} {unit})  {ok}")


def faithful_study(tmp, repeat=5):
    """Issue 11: the three commands of the faithful study, then its report, each into a
    fresh folder, as `make reproduce` runs them; best of ``repeat`` (wall seconds)."""
    run, out = tmp / "faithful", tmp / "faithful-report"
    steps = [RATERCAL + ["simulate", str(ROOT / "configs/denny1990.yaml"), "--out", str(run), "--quiet"],
             RATERCAL + ["adjust", str(run), "--quiet"],
             RATERCAL + ["score", str(run), "--quiet"]]
    best_three, best_each, best_report = float("inf"), [float("inf")] * 3, float("inf")
    for _ in range(repeat):
        shutil.rmtree(run, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        each = []
        for cmd in steps:
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            each.append(time.perf_counter() - t0)
        best_three = min(best_three, sum(each))
        best_each = [min(a, b) for a, b in zip(best_each, each)]
        t0 = time.perf_counter()
        subprocess.run(RATERCAL + ["report", str(run), "--out", str(out), "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        best_report = min(best_report, time.perf_counter() - t0)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; faithful study, best of {repeat}:")
    report("faithful study: simulate + adjust + score, fresh run", best_three, 1.0)
    print("    (best of each: simulate {:.3f} s, adjust {:.3f} s, score {:.3f} s)".format(*best_each))
    report("faithful study: report --out DIR (tables and 8 figures)", best_report, 2.0)


def main():
    tmp = Path(tempfile.mkdtemp(prefix="ratercal-bench-"))
    run = tmp / "run"
    try:
        def fresh():
            shutil.rmtree(run, ignore_errors=True)

        t = wall(RATERCAL + ["simulate", str(ROOT / "configs/denny1990.yaml"), "--out", str(run), "--quiet"],
                 setup=fresh)
        report("ratercal simulate configs/denny1990.yaml (32 sets, files)", t, 2.0)

        def no_equate():
            for p in run.glob("*/equate"):
                shutil.rmtree(p)
            shutil.rmtree(run / "score", ignore_errors=True)

        def adjust_and_score():
            subprocess.run(RATERCAL + ["adjust", str(run), "--quiet"], check=True, stdout=subprocess.DEVNULL)
            subprocess.run(RATERCAL + ["score", str(run), "--quiet"], check=True, stdout=subprocess.DEVNULL)

        best = float("inf")
        for _ in range(3):
            no_equate()
            t0 = time.perf_counter()
            adjust_and_score()
            best = min(best, time.perf_counter() - t0)
        report("ratercal adjust + score, ten faithful methods, 32 sets", best, 3.0)

        faithful_study(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    from ratercal_cli.design import Cell, table3_steps
    from ratercal_cli.generators.modern import generate_set
    from ratercal_cli.methods import make_method
    from ratercal_cli.ratings import Ratings

    cell, steps = Cell("2", 500, 5, "normal"), table3_steps(5)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for r in range(1000):
            generate_set(cell, "pcm", 1, r, steps=steps)
        best = min(best, time.perf_counter() - t0)
    report("modern PCM generator: 1,000 data sets of 500 papers x 2 raters", best, 2.0)

    cell9 = Cell("2", 500, 9, "normal")
    g = generate_set(cell9, "pcm", 2, 0, steps=table3_steps(9))
    o = g.observed
    ratings = Ratings(o.paper[o.kept], o.rater[o.kept], o.score[o.kept], 9, 500, 9)
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        make_method("PCM", "corrected").fit_transform(ratings)
        times.append(time.perf_counter() - t0)
    report("corrected PCM fit + transform, 500 papers x 2 raters, 0-9", float(np.median(times)) * 1000, 50, "ms")


if __name__ == "__main__":
    main()
