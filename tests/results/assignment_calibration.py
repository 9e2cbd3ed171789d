"""How often ``check``'s by-rater assignment test calls a random design non-random (README, "How papers
were assigned"; practice/assignment.py, 2): 12 random files each of seven designs, papers measured from
their other ratings (the test) and from all their ratings (before), the share of files at p < .05 and at
p < .01 (the decision's level, :data:`ratercal_cli.practice.assignment.ALPHA`).

The files come from a generalized rating scale model written here (rater severities ~N(0, 0.5), slopes
exp(N(0, 0.3)), which the test's CML does not assume; quality ~N(0, sd); scores 1-4), each paper's raters
drawn at random.  Run: ``.venv/bin/python tests/results/assignment_calibration.py`` (about 3 minutes);
its output is assignment_calibration.txt."""

from types import SimpleNamespace

import numpy as np

from ratercal_cli.practice.assignment import _by_rater
from ratercal_cli.practice.rater_report import fit_rater_model
from ratercal_cli.ratings import Ratings

#: (raters, papers, raters a paper, sd of quality)
DESIGNS = ((12, 600, 2, 1.0), (30, 1500, 3, 1.5), (100, 1500, 3, 0.7), (60, 400, 5, 1.0), (200, 2000, 2, 1.2),
           (10, 120, 2, 1.5), (40, 400, 2, 1.0))
FILES = 12


def random_design(J, P, r, sd, seed, K=4):
    rng = np.random.default_rng(seed)
    sev, slope = rng.normal(0, 0.5, J), np.exp(rng.normal(0, 0.3, J))
    raters = np.argsort(rng.random((P, J)), axis=1)[:, :r]
    theta = rng.normal(0, sd, P)
    eta = slope[raters][:, :, None] * (theta[:, None, None] - sev[raters][:, :, None] - np.linspace(-1.5, 1.5, K - 1))
    logits = np.concatenate([np.zeros((P, r, 1)), np.cumsum(eta, axis=2)], axis=2)
    prob = np.exp(logits - logits.max(axis=2, keepdims=True))
    prob /= prob.sum(axis=2, keepdims=True)
    score = 1 + (rng.random((P, r, 1)) > np.cumsum(prob, axis=2)).sum(axis=2)
    return Ratings(np.repeat(np.arange(P), r), raters.ravel(), score.ravel(), K, P, J, scale_low=1)


def main():
    print("raters  papers  a paper  sd   share of files at p < .05 (.01): rest measures (the test)  all ratings (before)")
    for J, P, r, sd in DESIGNS:
        rest, whole = [], []
        for seed in range(FILES):
            ratings = random_design(J, P, r, sd, 1000 + seed)
            model = fit_rater_model(ratings)
            rest.append(_by_rater(ratings, model)["p"])
            whole.append(_by_rater(ratings, SimpleNamespace(measure=model.measure, measured=model.measured))["p"])
        rest, whole = np.array(rest), np.array(whole)
        print(f"{J:6d}  {P:6d}  {r:7d}  {sd:.1f}  {np.mean(rest < 0.05):48.0%} ({np.mean(rest < 0.01):3.0%})  "
              f"{np.mean(whole < 0.05):14.0%} ({np.mean(whole < 0.01):3.0%})", flush=True)


if __name__ == "__main__":
    main()
