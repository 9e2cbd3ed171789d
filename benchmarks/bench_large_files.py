"""Practitioners' files at a million ratings and more (issue 13): memory and time per command.

    .venv/bin/python benchmarks/bench_large_files.py [--ratings 1000000] [--big] [--only PCM,CML]

Generates a ratings file (two of 200 raters per paper, scale 0-5; raters with their own
severity, papers with their own quality) into a temporary folder and runs, each as a user
would in a fresh process, measuring wall time and peak memory (max RSS of the process):

* ``ratercal adjust FILE -m CODE`` for every registered method (target: < 2 GiB and
  < 60 s at 1M ratings);
* ``adjust -m all`` and ``compare`` (the same targets);
* ``check --no-rasch`` on a file with 800 raters (target: <= 10 s at 1M ratings) and
  ``check`` with the Rasch fit (reported);
* with ``--big``: every method, ``adjust -m all`` and ``compare`` at 5M ratings
  (target: < 8 GiB).

Exits 1 if a target is missed.  Runs take a while: about 10 minutes at 1M, an hour with
``--big`` on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RATERCAL = str(Path(sys.executable).with_name("ratercal"))
GIB = 1 << 30


def simulate(n_ratings: int, n_raters: int, seed: int = 1, top: int = 5):
    """Two ratings per paper by two different raters; score = rounded quality + severity + noise.
    Returns (paper, rater, score) int arrays, a paper's two ratings next to each other."""
    rng = np.random.default_rng(seed)
    n_papers = n_ratings // 2
    severity = rng.normal(0.0, 0.5, n_raters)
    out = []
    for start in range(0, n_papers, 200_000):
        p = np.arange(start, min(n_papers, start + 200_000))
        quality = rng.normal(2.5, 1.0, p.size)
        r1 = rng.integers(0, n_raters, p.size)
        r2 = (r1 + 1 + rng.integers(0, n_raters - 1, p.size)) % n_raters
        s = [np.clip(np.rint(quality + severity[r] + rng.normal(0, 0.7, p.size)), 0, top).astype(np.int64)
             for r in (r1, r2)]
        out.append((np.repeat(p, 2), np.column_stack([r1, r2]).ravel(), np.column_stack(s).ravel()))
    return tuple(np.concatenate(x) for x in zip(*out))


def generate(path: Path, n_ratings: int, n_raters: int, seed: int = 1, top: int = 5) -> None:
    """The ratings of :func:`simulate` as a CSV file (paper, rater, score)."""
    paper, rater, score = simulate(n_ratings, n_raters, seed, top)
    with open(path, "w") as fh:
        fh.write("paper,rater,score\n")
        for a in range(0, paper.size, 400_000):
            fh.write("".join(f"P{p},R{r + 1},{s}\n" for p, r, s in zip(paper[a:a + 400_000].tolist(),
                                                                    rater[a:a + 400_000].tolist(),
                                                                    score[a:a + 400_000].tolist())))


def measure(args):
    """(seconds, peak RSS bytes, return code) of one command in a fresh process."""
    t = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace").strip().splitlines()
    return seconds, usage.ru_maxrss * 1024, proc.returncode, (err[-1] if err else "")


def report(name, seconds, rss, code, err, max_s=None, max_gib=None):
    ok = code == 0 and (max_s is None or seconds < max_s) and (max_gib is None or rss < max_gib * GIB)
    target = ", ".join(t for t in ((f"< {max_s} s" if max_s else ""), (f"< {max_gib} GiB" if max_gib else "")) if t)
    print(f"{name:<44} {seconds:8.1f} s {rss / GIB:7.2f} GiB   (target {target or '-'})  "
          f"{'ok' if ok else 'FAILED'}{'' if code == 0 else f' exit {code}: {err}'}", flush=True)
    return ok


def main():
    from ratercal_cli.methods import method_codes

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ratings", type=int, default=1_000_000)
    ap.add_argument("--big", action="store_true", help="also every method at 5M ratings (< 8 GiB)")
    ap.add_argument("--only", default=None, help="comma-separated method codes (default: all)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()
    codes = args.only.upper().split(",") if args.only else list(method_codes())
    tmp = Path(tempfile.mkdtemp(prefix="ratercal-large-"))
    ok = True
    try:
        sizes = [(args.ratings, 2.0, 60.0)] + ([(5_000_000, 8.0, None)] if args.big else [])
        for n, max_gib, max_s in sizes:
            data = tmp / f"ratings_{n}.csv"
            t = time.perf_counter()
            generate(data, n, 200)
            print(f"== {n:,} ratings, {n // 2:,} papers, 200 raters, 2 per paper, 0-5 "
                  f"({data.stat().st_size / 2**20:.0f} MiB, made in {time.perf_counter() - t:.0f} s)", flush=True)
            out = tmp / "out.csv"
            for code in codes:
                ok &= report(f"adjust -m {code}", *measure([RATERCAL, "adjust", str(data), "--scale", "0-5", "-m",
                                                            code, "-o", str(out), "-q"]), max_s, max_gib)
            if not args.only:
                ok &= report("adjust -m all", *measure([RATERCAL, "adjust", str(data), "--scale", "0-5", "-m",
                                                        "all", "-o", str(out), "-q"]), None, max_gib)
                ok &= report("compare", *measure([RATERCAL, "compare", str(data), "--scale", "0-5", "-q"]),
                             None, max_gib)
            data.unlink()
        if not args.only:
            data = tmp / "ratings_800.csv"
            generate(data, args.ratings, 800)
            print(f"== {args.ratings:,} ratings, 800 raters: check", flush=True)
            ok &= report("check --no-rasch", *measure([RATERCAL, "check", str(data), "--scale", "0-5", "-q",
                                                       "--no-rasch"]), 10.0, None)
            ok &= report("check (with the Rasch fit)", *measure([RATERCAL, "check", str(data), "--scale", "0-5",
                                                                 "-q"]), None, None)
    finally:
        if args.keep:
            print(f"files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
