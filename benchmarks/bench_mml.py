"""One MML fit (issue 12's speed target, as a ratio since issue 21): the PCM by marginal ML on the
500-paper 0-9 set with two of nine raters per paper, fit + EAP/WLE qualities + fair scores, within
RATIO times the CML fit of the same data in the same run (issue 12 asked 0.2 s when CML took 0.03-0.05 s).

    .venv/bin/python benchmarks/bench_mml.py [--repeat N]

Times ``MarginalRaterModel().fit_transform`` (``MML``; best of N in CPU seconds with one BLAS
thread, the machine is shared) beside
``fit_mml`` alone, the many-facet rating scale model (``MFRM``) and the CML fit on the same data in
the same run (ratios are what compare across machines).  Exits 1 if the MML fit + transform takes
more than RATIO x the CML fit (the absolute time is for information).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices: threads only add overhead
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from ratercal_cli.methods.cml import fit_cml  # noqa: E402
from ratercal_cli.methods.mml import MarginalRaterModel, fit_mml  # noqa: E402

from bench_cml import DATA, best_of, load  # noqa: E402  (the same data and timer as the CML benchmark)

TARGET = 0.2   # issue 12's seconds on a quiet machine: printed for information
RATIO = 6.0    # MML fit + transform / CML fit, same data, same run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    data = load()
    mml_best, mml_med = best_of(lambda: MarginalRaterModel(model="pcm").fit_transform(data), args.repeat)
    core_best, _ = best_of(lambda: fit_mml(data, model="pcm"), args.repeat)
    mfrm_best, _ = best_of(lambda: MarginalRaterModel(model="rsm").fit_transform(data), args.repeat)
    cml_best, _ = best_of(lambda: fit_cml(data, model="pcm"), args.repeat)
    fit = fit_mml(data)
    print(f"data: {DATA.relative_to(ROOT)} ({data.n_papers} papers, {data.n_ratings} ratings, scale 0-{data.max_score}); "
          "CPU seconds")
    print(f"MML fit+transform    best {mml_best:7.3f} s  median {mml_med:7.3f} s  (issue 12: {TARGET} s quiet)")
    print(f"  fit_mml alone      best {core_best:7.3f} s  ({fit.n_iter} iterations, {fit.n_nodes} grid nodes)")
    print(f"MFRM fit+transform   best {mfrm_best:7.3f} s")
    ratio = mml_best / cml_best
    print(f"CML fit_cml (PCM)    best {cml_best:7.3f} s  (MML fit+transform / CML: {ratio:.1f}x, target <= {RATIO:g}x; "
          f"fit alone {core_best / cml_best:.1f}x)  {'ok' if ratio <= RATIO else 'FAILED'}")
    return 0 if ratio <= RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
