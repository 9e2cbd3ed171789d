"""Does a rater of few papers, each read by raters of many too, still stop the adjustment of the rest?
(README, "The line `CHAPTER 5 RULE`".)

Files of a generator written here, sharing no code with ratercal's: 150 papers of quality N(0, 1.2), each
read by 2 of 8 raters drawn at random; a graded response model on 0-5 (thresholds -2..2) with severities
N(0, 0.6) and, by kind, ``plain`` (slope 1), ``grm_slopes`` (slopes 0.5, 1 or 2) or ``central`` (three raters
draw quality 60% toward the middle); then a ninth rater, of severity N(0, 0.6), reading 3 or 6 of the papers
third.  A paper's true score is a neutral rater's expected score at its quality (severity 0, slope 1).

For each file, the RMSE against the truth of: the one recommendation (:func:`ratercal_cli.adjust`'s
``"recommended"``, the ninth rater's readings kept), the recommendation with those readings left out (as
``--leave-out``), and NO.  Before the change, Chapter 5's rule (a rater of fewer than 8 papers: NO) decided
every one of these files.  Run: ``.venv/bin/python tests/results/few_paper_raters.py`` (about 15 seconds);
its output is few_paper_raters.txt."""

import warnings

import numpy as np
import pandas as pd

import ratercal_cli as rc

THRESHOLDS = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
PAPERS, RATERS, SEEDS = 150, 8, 10


def expected(theta, slope=1.0, severity=0.0):
    """A rater's expected score at quality ``theta`` (graded response: P(X >= k) logistic)."""
    t = np.asarray(theta, dtype=float)[..., None]
    return (1.0 / (1.0 + np.exp(-slope * (t - severity - THRESHOLDS)))).sum(-1)


def draw(rng, theta, slope, severity):
    cum = 1.0 / (1.0 + np.exp(-np.asarray(slope)[:, None] * (theta[:, None] - np.asarray(severity)[:, None] - THRESHOLDS)))
    return (rng.random(theta.size)[:, None] < cum).sum(-1)


def make(kind, seed, n_few):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.2, PAPERS)
    severity = rng.normal(0.0, 0.6, RATERS + 1)
    slope = rng.choice([0.5, 1.0, 2.0], RATERS + 1) if kind == "grm_slopes" else np.ones(RATERS + 1)
    slope[RATERS] = 1.0
    central = np.zeros(RATERS + 1)
    if kind == "central":
        central[:3] = 0.6
    paper = np.repeat(np.arange(PAPERS), 2)
    rater = np.concatenate([rng.choice(RATERS, 2, replace=False) for _ in range(PAPERS)])
    few = rng.choice(PAPERS, n_few, replace=False)
    paper, rater = np.r_[paper, few], np.r_[rater, np.full(n_few, RATERS)]
    score = draw(rng, theta[paper] * (1.0 - central[rater]), slope[rater], severity[rater])
    names = [f"R{j + 1}" for j in range(RATERS)] + ["X9"]
    df = pd.DataFrame({"paper": [f"P{p:03d}" for p in paper], "rater": [names[j] for j in rater], "score": score})
    return df, dict(zip([f"P{p:03d}" for p in range(PAPERS)], expected(theta)))


def rmse(res, truth, column="recommended"):
    pf = res.paper_frame()
    return float(np.sqrt(np.mean([(s - truth[p]) ** 2 for p, s in zip(pf["paper"], pf[column])])))


def main():
    warnings.simplefilter("ignore")
    print(f"{'kind':<11} {'ninth':>5}  {'recommended':>11}  {'left out':>8}  {'NO':>6}  worse than NO (of {SEEDS})")
    for kind in ("plain", "grm_slopes", "central"):
        for n_few in (3, 6):
            rows = []
            for seed in range(SEEDS):
                df, truth = make(kind, seed, n_few)
                res = rc.adjust(rc.Ratings.from_frame(df, scale="0-5"), "recommended")
                out = rc.adjust(rc.Ratings.from_frame(df[df.rater != "X9"], scale="0-5"), "recommended")
                rows.append((rmse(res, truth), rmse(out, truth), rmse(res, truth, "mean")))
            a = np.array(rows)
            print(f"{kind:<11} {n_few:>5}  {a[:, 0].mean():11.4f}  {a[:, 1].mean():8.4f}  {a[:, 2].mean():6.4f}  "
                  f"{int((a[:, 0] > a[:, 2] + 1e-9).sum())}", flush=True)


if __name__ == "__main__":
    main()
