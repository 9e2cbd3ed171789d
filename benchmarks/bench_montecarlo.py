"""Benchmark: data sets per second of the corrected Monte Carlo study with all ten methods.

    .venv/bin/python benchmarks/bench_montecarlo.py [--replications 10] [--jobs N] [--profile]

Runs ``configs/corrected.yaml`` (32 cells) with the corrected variant only, R
replications per cell, into a temporary folder, then prints the data sets per
second (generation + ten methods + criteria + chunk files + summaries) and the
peak resident memory (``ru_maxrss`` of this process plus that of its largest
child).  The target on a 2-core machine: 50 data sets per second, under 1 GiB.
``--profile`` also times each method per data set, in this process.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ratercal_cli.config import load_config  # noqa: E402
from ratercal_cli.parallel import cpu_count  # noqa: E402
from ratercal_cli.runner import MonteCarloRun, StudySpec, replicate  # noqa: E402

TARGET_RATE = 50.0
TARGET_MIB = 1024.0


def peak_mib() -> float:
    """Peak RSS of this process plus its largest child, MiB (Linux reports KiB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + kids) / 1024.0


def profile(cfg, replications):
    """Seconds per data set of each method (corrected), over the cells and replications: the
    runner's own :func:`replicate` (generation, the skip of one-rater sets, criteria), timed."""
    spec = StudySpec.from_config(cfg, variants=("corrected",))
    spent, counts = {}, {}
    for rep in range(replications):
        for cell in cfg.cells:
            before = dict(spent)
            replicate(spec, cell, rep, timings=spent)
            for key in spent:
                if spent[key] != before.get(key):
                    counts[key] = counts.get(key, 0) + 1
    n = replications * len(cfg.cells)
    print(f"  generate: {spent['generate'] / n * 1e3:7.2f} ms per data set")
    for code in spec.methods:
        key = ("corrected", code)
        if key in spent:
            print(f"  {code:>8}: {spent[key] / counts[key] * 1e3:7.2f} ms per fit ({counts[key]} fits)")
    return spent


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "corrected.yaml"))
    ap.add_argument("--replications", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=cpu_count())
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)

    cfg = load_config(args.config)
    with tempfile.TemporaryDirectory(prefix="ratercal-bench-") as tmp:
        run = MonteCarloRun(cfg, tmp, replications=args.replications, variants=("corrected",))
        t0 = time.perf_counter()
        run.run(jobs=args.jobs, quiet=True)
        t1 = time.perf_counter()
        run.summarise()
        t2 = time.perf_counter()
    n = args.replications * len(cfg.cells)
    rate = n / (t2 - t0)
    mib = peak_mib()
    print(f"montecarlo: {n} data sets ({args.replications} replications x {len(cfg.cells)} cells), "
          f"corrected, {len(run.spec.methods)} methods, {args.jobs} job(s)")
    print(f"montecarlo: {t1 - t0:.2f} s replications + {t2 - t1:.2f} s summaries = {rate:.1f} data sets/s "
          f"(target >= {TARGET_RATE:.0f})")
    print(f"montecarlo: peak memory {mib:.0f} MiB (target < {TARGET_MIB:.0f})")
    if args.profile:
        profile(cfg, max(1, min(args.replications, 3)))
    return 0 if rate >= TARGET_RATE and mib < TARGET_MIB else 1


if __name__ == "__main__":
    sys.exit(main())
