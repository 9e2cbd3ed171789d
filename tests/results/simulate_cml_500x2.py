"""Simulate the CML reference data set: 500 papers, scale 0-9, two raters per paper.

Writes ``cml_500x2_0-9.csv`` (paper,rater,score; raters 1..9 are Table 3's) next to
this script.  Run once; the CSV is the fixture (tests never call this script):

    .venv/bin/python tests/results/simulate_cml_500x2.py

Papers: quality theta = 3 z + 2 (PARGEN's normal shape), z ~ N(0, 1).  Each paper gets
two distinct raters drawn uniformly from the nine; each score is drawn from the PCM
(``ratercal_cli.models.pcm.sample_scores``) with the rater's Table 3 steps for M = 9.
"""

from pathlib import Path

import numpy as np

from ratercal_cli.design import table3_steps
from ratercal_cli.models.pcm import sample_scores

N_PAPERS, N_RATERS_PER_PAPER, MAX_SCORE, SEED = 500, 2, 9, 19900500


def simulate(seed=SEED):
    rng = np.random.default_rng(seed)
    delta = table3_steps(MAX_SCORE)
    theta = 3.0 * rng.standard_normal(N_PAPERS) + 2.0
    raters = np.argsort(rng.random((N_PAPERS, 9)), axis=1)[:, :N_RATERS_PER_PAPER]
    paper = np.repeat(np.arange(N_PAPERS), N_RATERS_PER_PAPER)
    rater = raters.ravel()
    score = sample_scores(rng, theta[paper], delta[rater])
    return paper + 1, rater + 1, score, theta


if __name__ == "__main__":
    paper, rater, score, _ = simulate()
    out = Path(__file__).with_name("cml_500x2_0-9.csv")
    with out.open("w") as f:
        f.write("paper,rater,score\n")
        for p, r, s in zip(paper, rater, score):
            f.write(f"{p},{r},{s}\n")
    print(f"wrote {out}: {len(score)} ratings")
