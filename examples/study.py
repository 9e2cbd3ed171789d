"""A simulation study of your own from Python, SimDesign's way: generate, analyse, summarise.

Two cells (raters who differ little, raters who differ much), your own generator, the study's
TLI and NO beside a method of your own (each paper's median rating), and a criterion of your own
(the share of papers within half a point of their true score) beside the study's RMSE.  The run
folder is the cache: run it again and nothing is computed twice.

Run it from the repository's folder: ``.venv/bin/python examples/study.py`` (a test runs it too).
"""

import numpy as np
import pandas as pd

import ratercal_cli as rc
from ratercal_cli.ratings import Ratings

pd.set_option("display.width", 120)


# generate: one data set of a cell, drawn with the Generator it is given
def generate(cell, rng):
    n, k = cell["papers"], cell["raters"]
    quality = rng.normal(0.0, 1.0, n)
    severity = rng.normal(0.0, cell["spread"], k)
    raters = np.array([rng.choice(k, 3, replace=False) for _ in range(n)])   # three raters a paper
    paper, rater = np.repeat(np.arange(n), 3), raters.ravel()
    latent = 2.5 + quality[paper] - severity[rater] + rng.normal(0.0, 0.5, 3 * n)
    score = np.clip(np.rint(latent), 0, 5).astype(int)
    true = np.clip(2.5 + quality, 0, 5)                                       # an average rater's score
    return Ratings(paper, rater, score, max_score=5, n_papers=n, n_raters=k), true


# analyse: a method of your own, with the estimator interface (fit, then transform -> rating, paper)
class MedianRating:
    def fit(self, ratings):
        return self

    def transform(self, ratings):
        paper = np.array([np.median(ratings.score[ratings.paper == p]) for p in range(ratings.n_papers)])
        return paper[ratings.paper], paper


# summarise: a criterion of your own, (true scores, a method's paper scores) -> a number
def within_half_point(true, scores):
    return float(np.mean(np.abs(scores - true) <= 0.5))


spec = rc.study.Spec(
    cells=[{"name": "similar raters", "papers": 80, "raters": 6, "spread": 0.2},
           {"name": "raters differ", "papers": 80, "raters": 6, "spread": 1.0}],
    generate=generate,
    methods=["NO", "TLI", MedianRating],
    criteria={"rmse": "rmse", "within_half": within_half_point},
    replications=20, seed=19900601)

if __name__ == "__main__":
    import sys

    out = sys.argv[1] if len(sys.argv) > 1 else "runs/example_study"
    results = rc.study.run(spec, out=out, jobs=2)
    print(results.summary.round(4).to_string(index=False))
    print()
    print(results.paired.round(4).to_string(index=False))
