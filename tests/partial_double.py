"""The most common operational design (issue 28, item 1): most papers read once, a sample read
twice for reliability.  400 papers on 0-5, 8 raters of different severity, ``share`` of the papers
read by two raters drawn at random, the rest by one; scores drawn from the partial credit model."""

from __future__ import annotations

import csv

import numpy as np

from ratercal_cli.models.pcm import sample_scores

SEVERITY = (-1.0, -0.7, -0.4, -0.1, 0.1, 0.4, 0.7, 1.0)


def partial_double(path, n_papers=400, share=0.3, seed=28, high=5):
    """Write ``paper,rater,score`` to ``path``; returns the number of papers read twice."""
    rng = np.random.default_rng(seed)
    sev = np.asarray(SEVERITY)
    steps = np.linspace(-2.0, 2.0, high)
    twice = set(rng.choice(n_papers, int(round(share * n_papers)), replace=False).tolist())
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["paper", "rater", "score"])
        for p in range(n_papers):
            who = rng.choice(len(sev), 2 if p in twice else 1, replace=False)
            theta = rng.normal(0.0, 1.2)
            s = sample_scores(rng, np.full(len(who), theta), steps[None, :] + sev[who][:, None])
            for j, sc in zip(who, s):
                w.writerow([f"P{p + 1:03d}", f"R{j + 1}", int(sc)])
    return len(twice)
