"""Simulate the MML reference data set: 150 papers, scale 0-3, two or three of five raters each.

Writes ``mml_150x5_0-3.csv`` (paper,rater,score; 1-based) next to this script; the CSV is the
fixture of ``make_mml_reference.R`` and tests/methods/test_mml.py (tests never call this):

    .venv/bin/python tests/results/simulate_mml_small.py

Quality theta ~ N(0.4, 1.3^2); rater j's steps are (-1.2, 0, 1.2) + severity (-0.8 .. 0.8) plus
N(0, 0.3^2) noise; scores from the PCM (``ratercal_cli.models.pcm.sample_scores``).  Small enough
for R's ``integrate`` to compute the marginal likelihood paper by paper inside ``optim``.
"""

import csv
from pathlib import Path

import numpy as np

from ratercal_cli.models.pcm import sample_scores

SEED = 20261203


def simulate(seed=SEED, n=150):
    rng = np.random.default_rng(seed)
    steps = np.linspace(-0.8, 0.8, 5)[:, None] + np.array([-1.2, 0.0, 1.2]) + rng.normal(0, 0.3, (5, 3))
    theta = 0.4 + 1.3 * rng.standard_normal(n)
    k = np.where(rng.random(n) < 0.3, 3, 2)
    rows = []
    for p in range(n):
        raters = rng.permutation(5)[:k[p]]
        scores = sample_scores(rng, np.full(k[p], theta[p]), steps[raters])
        rows += [(p + 1, int(j) + 1, int(x)) for j, x in zip(raters, scores)]
    return rows


if __name__ == "__main__":
    out = Path(__file__).with_name("mml_150x5_0-3.csv")
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["paper", "rater", "score"])
        w.writerows(simulate())
    print(f"wrote {out}")
