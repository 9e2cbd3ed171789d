"""Does ``check --simulate 100``'s recommendation hold on school files from a model none of the methods
assumes?  (README, "Which method: the recommendation".)

Five files of a generator written here, sharing no code with ratercal's generators: eight schools of
unequal size (Dirichlet shares of 600 papers, at least 20 each), mean quality and spread (N(0, 0.8),
sd 0.6-1.4), each read mostly by its own two raters (each reading by one of them with probability
0.70-0.98 by school, else by one of the other 14 raters); a generalized partial credit model on 0-4 with
rater slopes (exp N(0, 0.35)), severities (N(0, 0.5)) and central raters (three in ten: steps 1.35 times
as far apart); a third reading, by any other rater, where the first two are 2 or more points apart.  A
paper's true score is the mean over the 16 raters of their expected score at its quality.

For each file: the recommendation of ``check`` with ``simulate=100`` (the library's
:func:`ratercal_cli.check`, as ``check --simulate 100``), applied by ``adjust(..., "recommended",
checked=...)`` (as ``adjust -m recommended --simulate 100``), its RMSE against the truth beside NO's
and the best of the thirteen methods NO ... MFRM (not the 1990 PCM, CML, RSM and SEQP) at both shrinkage
levels (``none``, ``kelley``).  Run: ``.venv/bin/python tests/results/schools_gpcm_validation.py`` (about 2
minutes); its output is schools_gpcm_validation.txt."""

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import ratercal_cli as rc

SCHOOLS, RATERS, PAPERS, TOP = 8, 16, 600, 4
BASE_STEPS = np.array([-1.8, -0.6, 0.6, 1.8])


def gpcm(theta: float, slope: float, steps: np.ndarray) -> np.ndarray:
    """P(score = 0..TOP) of one rater at quality ``theta``."""
    z = np.r_[0.0, np.cumsum(slope * (theta - steps))]
    p = np.exp(z - z.max())
    return p / p.sum()


def school_file(seed: int):
    """(ratings: school, paper, rater, score; truth: paper -> true score) of one file."""
    rng = np.random.default_rng([1990, seed])
    size = np.maximum((rng.dirichlet(np.full(SCHOOLS, 3.0)) * PAPERS).round().astype(int), 20)
    mean, spread = rng.normal(0, 0.8, SCHOOLS), rng.uniform(0.6, 1.4, SCHOOLS)
    own = rng.uniform(0.70, 0.98, SCHOOLS)
    slope, severity = np.exp(rng.normal(0, 0.35, RATERS)), rng.normal(0, 0.5, RATERS)
    central = rng.random(RATERS) < 0.3
    steps = [severity[j] + BASE_STEPS * (1.35 if central[j] else 1.0) for j in range(RATERS)]
    score = np.arange(TOP + 1)
    rows, truth, pid = [], {}, 0
    for s in range(SCHOOLS):
        pair = [2 * s, 2 * s + 1]
        for _ in range(size[s]):
            pid += 1
            paper, theta = f"S{s + 1}-{pid:04d}", rng.normal(mean[s], spread[s])
            truth[paper] = np.mean([gpcm(theta, slope[j], steps[j]) @ score for j in range(RATERS)])
            who: list[int] = []
            for _ in range(2):
                mine = rng.random() < own[s]
                who.append(int(rng.choice([r for r in (pair if mine else range(RATERS))
                                            if r not in who and (mine or r not in pair)])))
            got = [int(rng.choice(TOP + 1, p=gpcm(theta, slope[j], steps[j]))) for j in who]
            if abs(got[0] - got[1]) >= 2:
                who.append(int(rng.choice([r for r in range(RATERS) if r not in who])))
                got.append(int(rng.choice(TOP + 1, p=gpcm(theta, slope[who[2]], steps[who[2]]))))
            rows += [(f"school{s + 1}", paper, f"R{j + 1:02d}", x) for j, x in zip(who, got)]
    return pd.DataFrame(rows, columns=["school", "paper", "rater", "score"]), pd.Series(truth)


def main():
    warnings.simplefilter("ignore")
    codes = [c for c in rc.method_codes() if c not in ("PCM", "CML", "RSM", "SEQP")]
    print(f"file  recommendation                   RMSE     NO   best of {len(codes)} x 2 levels     - best")
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, 6):
            frame, truth = school_file(seed)
            path = Path(tmp) / f"schools{seed}.csv"
            frame.to_csv(path, index=False)
            r = rc.read_ratings(path, scale=f"0-{TOP}")
            true = truth.loc[list(r.paper_ids)].to_numpy()

            def rmse(scores):
                return float(np.sqrt(np.mean((np.asarray(scores) - true) ** 2)))

            checked = rc.check(r, simulate=100, discrepancy=1)
            adjusted = rc.adjust(r, "recommended", checked=checked)
            every = {(c, level): rmse(a.paper_scores(c)) for level in ("none", "kelley")
                     for a in [rc.adjust(r, codes, shrinkage=level, strict=False)] for c in codes}
            best = min(every, key=every.get)
            rec = rmse(adjusted.paper_scores("recommended"))
            print(f"{seed:4d}  {adjusted.groups[0].recommended:31s}  {rec:.3f}  {every[('NO', 'none')]:.3f}  "
                  f"{best[0]} ({best[1]}) {every[best]:.3f}{'':10s}{rec - every[best]:+.3f}", flush=True)


if __name__ == "__main__":
    main()
