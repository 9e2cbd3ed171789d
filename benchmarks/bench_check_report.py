"""``check``'s agreement table and rater report: time per rating at two sizes (linear in ratings).

    .venv/bin/python benchmarks/bench_check_report.py [--papers N] [--raters J]

Simulates PCM ratings, two of J raters per paper on 0-5, with N and 4N papers, and times
:func:`agreement.agreement` (pairs of ratings, tables of rater pairs, kappa, Krippendorff's alpha,
ICC) and :func:`rater_report.report_and_model` (CML rating scale model, severity S.E.s, WLE paper
measures, fit), best of 3 in CPU seconds.  Exits 1 if four times the ratings take more than six times as long (either part),
i.e. if a part stopped being linear in ratings (an O(raters^2 x ratings) loop would show here).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from ratercal_cli.practice.agreement import agreement  # noqa: E402
from ratercal_cli.models.pcm import sample_scores  # noqa: E402
from ratercal_cli.practice.rater_report import report_and_model  # noqa: E402
from ratercal_cli.ratings import Ratings  # noqa: E402


def simulate(papers, raters, M=5, seed=1):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.5, papers)
    delta = np.linspace(-2.5, 2.5, M)[None, :] + np.linspace(-1, 1, raters)[:, None]
    pick = np.argsort(rng.random((papers, raters)), axis=1)[:, :2]
    paper = np.repeat(np.arange(papers), 2)
    rater = pick.ravel()
    return Ratings(paper, rater, sample_scores(rng, theta[paper], delta[rater]), M, papers, raters)


def best(fn, arg, repeat=3):
    """The best CPU seconds of ``repeat`` calls (one BLAS thread: the work, where the wall time on a
    shared machine is mostly what else runs)."""
    out = []
    for _ in range(repeat):
        t = time.process_time()
        fn(arg)
        out.append(time.process_time() - t)
    return min(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=25_000)
    ap.add_argument("--raters", type=int, default=30)
    a = ap.parse_args()
    times = {}
    for n in (a.papers, 4 * a.papers):
        r = simulate(n, a.raters)
        times[n] = (best(agreement, r), best(report_and_model, r))
        print(f"{r.n_ratings:>9,} ratings, {a.raters} raters: agreement {times[n][0]:.3f} s CPU "
              f"({1e6 * times[n][0] / r.n_ratings:.2f} us/rating), rater report {times[n][1]:.3f} s CPU "
              f"({1e6 * times[n][1] / r.n_ratings:.2f} us/rating)")
    ratio = [times[4 * a.papers][k] / times[a.papers][k] for k in (0, 1)]
    print(f"4x the ratings: agreement x{ratio[0]:.1f}, rater report x{ratio[1]:.1f} in CPU seconds (linear: about 4; "
          f"limit 6)  {'ok' if max(ratio) <= 6 else 'FAILED'}")
    return 0 if max(ratio) <= 6 else 1


if __name__ == "__main__":
    sys.exit(main())
