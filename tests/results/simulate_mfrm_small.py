"""Simulate the many-facet reference data set: 120 papers, 6 raters (2 per paper), 3 criteria and
2 scoring sessions, scale 0-3 (720 ratings).

Writes ``mfrm_120x6_3crit_2sess_0-3.csv`` (paper,rater,criterion,session,score) next to this script;
it is the fixture of ``make_mfrm_reference.R`` and tests/methods/test_mml.py (tests never call this):

    .venv/bin/python tests/results/simulate_mfrm_small.py

Each paper is read by 2 of the 6 raters, each reading in session 1 or 2 and scoring all three
criteria.  Rating scale model: P(x) ~ exp(x (theta - severity - criterion - session) - sum_k kappa_k),
theta ~ N(0.3, 1.2^2), severities -0.9 .. 0.9, criteria (-0.5, 0.1, 0.4), sessions (-0.2, 0.2),
thresholds kappa (-1.3, 0, 1.3); scores from ``ratercal_cli.models.pcm.sample_scores``.
"""

import csv
from pathlib import Path

import numpy as np

from ratercal_cli.models.pcm import sample_scores

SEED = 20261204
SEVERITY = np.linspace(-0.9, 0.9, 6)
CRITERION = np.array([-0.5, 0.1, 0.4])
SESSION = np.array([-0.2, 0.2])
KAPPA = np.array([-1.3, 0.0, 1.3])


def simulate(seed=SEED, n=120):
    rng = np.random.default_rng(seed)
    theta = 0.3 + 1.2 * rng.standard_normal(n)
    rows = []
    for p in range(n):
        for j in rng.permutation(6)[:2]:
            s = rng.integers(0, 2)
            loc = SEVERITY[j] + CRITERION + SESSION[s]                 # (3,) one per criterion
            scores = sample_scores(rng, np.full(3, theta[p]), loc[:, None] + KAPPA[None, :])
            rows += [(p + 1, int(j) + 1, c + 1, int(s) + 1, int(x)) for c, x in enumerate(scores)]
    return rows


if __name__ == "__main__":
    out = Path(__file__).with_name("mfrm_120x6_3crit_2sess_0-3.csv")
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["paper", "rater", "criterion", "session", "score"])
        w.writerows(simulate())
    print(f"wrote {out}")
