"""How often ``check``'s assignment advice calls a random design non-random, and how often it finds a
confounded one (README, "How papers were assigned"; practice/assignment.py).

Part 1, the by-rater test (practice/assignment.py, 2): 12 random files each of seven designs, the share
of files at p < .05 and at p < .01 (the decision's level, :data:`ratercal_cli.practice.assignment.ALPHA`):
each of a rater's papers read from its other ratings, their total against its expectation given who gave
them (the test), its other ratings' Warm measure (before), all its ratings' Warm measure (earlier).

Part 2, the whole decision (:func:`~ratercal_cli.practice.assignment.decide_assignment`, the rater
network's clusters and both tests at .01, as ``check`` makes it): the share of files whose network was
split into clusters and the share called non-random, on the seven random designs, a sparse random
design (2 readers a paper among 150 raters, ten ratings a rater: 16 files), and school designs (each
school's papers read mostly by its own raters): confounded (schools of different mean quality) and
not (equal means).

The files come from a generalized rating scale model written here (rater severities ~N(0, 0.5), slopes
exp(N(0, 0.3)), which the test's CML does not assume; quality ~N(0, sd) or about a school's mean; scores
1-4), each paper's raters drawn at random (a school's: each reader of its own raters with probability
``own``, else any rater).  Run: ``.venv/bin/python tests/results/assignment_calibration.py`` (about 6
minutes; ``--part 2`` the second part alone); its output is assignment_calibration.txt."""

import sys
from functools import partial
from types import SimpleNamespace

import numpy as np

from ratercal_cli.practice.assignment import _by_rater, decide_assignment
from ratercal_cli.practice.rater_report import fit_rater_model
from ratercal_cli.ratings import Ratings

#: (raters, papers, raters a paper, sd of quality)
DESIGNS = ((12, 600, 2, 1.0), (30, 1500, 3, 1.5), (100, 1500, 3, 0.7), (60, 400, 5, 1.0), (200, 2000, 2, 1.2),
           (10, 120, 2, 1.5), (40, 400, 2, 1.0))
FILES = 12
#: the sparse random design of part 2: (raters, papers, raters a paper, sd), files
SPARSE = ((150, 750, 2, 1.0), 16)
#: part 2's school designs: (name, schools, raters a school, papers, raters a paper, own, school means' spread)
SCHOOLS = (("6 schools, own pairs, means -0.5..0.5", 6, 2, 600, 2, 0.9, 0.5),
           ("6 schools, own pairs, equal means", 6, 2, 600, 2, 0.9, 0.0),
           ("15 schools of 10 raters (sparse), means -0.5..0.5", 15, 10, 750, 2, 0.9, 0.5),
           ("15 schools of 10 raters (sparse), equal means", 15, 10, 750, 2, 0.9, 0.0))


def _scores(rng, raters, theta, sev, slope, K):
    P, r = raters.shape
    eta = slope[raters][:, :, None] * (theta[:, None, None] - sev[raters][:, :, None] - np.linspace(-1.5, 1.5, K - 1))
    logits = np.concatenate([np.zeros((P, r, 1)), np.cumsum(eta, axis=2)], axis=2)
    prob = np.exp(logits - logits.max(axis=2, keepdims=True))
    prob /= prob.sum(axis=2, keepdims=True)
    return 1 + (rng.random((P, r, 1)) > np.cumsum(prob, axis=2)).sum(axis=2)


def random_design(J, P, r, sd, seed, K=4):
    rng = np.random.default_rng(seed)
    sev, slope = rng.normal(0, 0.5, J), np.exp(rng.normal(0, 0.3, J))
    raters = np.argsort(rng.random((P, J)), axis=1)[:, :r]
    theta = rng.normal(0, sd, P)
    score = _scores(rng, raters, theta, sev, slope, K)
    return Ratings(np.repeat(np.arange(P), r), raters.ravel(), score.ravel(), K, P, J, scale_low=1)


def school_design(S, per, P, r, own, spread, seed, K=4):
    """``S`` schools, ``per`` raters of each; school ``s``'s papers of mean quality on ``linspace(-spread,
    spread)``, sd 1; each of a paper's ``r`` readers one of its school's raters with probability ``own``,
    else any rater (no rater twice)."""
    rng = np.random.default_rng(seed)
    J = S * per
    sev, slope = rng.normal(0, 0.5, J), np.exp(rng.normal(0, 0.3, J))
    school = np.arange(P) % S
    theta = np.linspace(-spread, spread, S)[school] + rng.normal(0, 1.0, P)
    raters = np.empty((P, r), dtype=np.int64)
    for p in range(P):
        who = []
        while len(who) < r:
            j = int(school[p] * per + rng.integers(per)) if rng.random() < own else int(rng.integers(J))
            if j not in who:
                who.append(j)
        raters[p] = who
    score = _scores(rng, raters, theta, sev, slope, K)
    return Ratings(np.repeat(np.arange(P), r), raters.ravel(), score.ravel(), K, P, J, scale_low=1)


def part1():
    print("raters  papers  a paper  sd   share of files at p < .05 (.01): rest scores (the test)  rest measures  "
          "all ratings")
    for J, P, r, sd in DESIGNS:
        rest, measures, whole = [], [], []
        for seed in range(FILES):
            ratings = random_design(J, P, r, sd, 1000 + seed)
            model = fit_rater_model(ratings)
            rest.append(_by_rater(ratings, model)["p"])
            measures.append(_by_rater(ratings, model, residuals=False)["p"])
            whole.append(_by_rater(ratings, SimpleNamespace(measure=model.measure, measured=model.measured))["p"])
        cells = [f"{np.mean(np.array(x) < 0.05):.0%} ({np.mean(np.array(x) < 0.01):.0%})" for x in (rest, measures, whole)]
        print(f"{J:6d}  {P:6d}  {r:7d}  {sd:.1f}  {cells[0]:>44s}  {cells[1]:>13s}  {cells[2]:>11s}", flush=True)


def _decisions(files):
    clustered, nonrandom, by_rater, by_cluster = [], [], [], []
    for ratings in files:
        a = decide_assignment(ratings, severities=False)
        clustered.append(a.clusters is not None)
        nonrandom.append(a.assignment == "nonrandom")
        by_rater.append(bool(a.by_rater) and a.by_rater["p"] < a.alpha)
        by_cluster.append(bool(a.by_cluster) and a.by_cluster["p"] < a.alpha)
    return [f"{np.mean(x):.0%}" for x in (clustered, nonrandom, by_rater, by_cluster)]


def part2():
    print("design (files)                                         clusters kept  called non-random  (by rater, by cluster)")
    rows = [(f"random {J} raters, {P} papers, {r} a paper", FILES, partial(random_design, J, P, r, sd), 1000)
            for J, P, r, sd in DESIGNS]
    (J, P, r, sd), n = SPARSE
    rows.append((f"random {J} raters, {P} papers, {r} a paper (sparse)", n, partial(random_design, J, P, r, sd), 2000))
    rows += [(name, FILES, partial(school_design, S, per, P, r, own, spread), 3000)
             for name, S, per, P, r, own, spread in SCHOOLS]
    for name, n, make, seed in rows:
        c, nr, br, bc = _decisions(make(seed + k) for k in range(n))
        print(f"{name + f' ({n})':54s} {c:>13s}  {nr:>17s}  ({br}, {bc})", flush=True)


if __name__ == "__main__":
    if "--part" not in sys.argv or sys.argv[sys.argv.index("--part") + 1] == "1":
        part1()
        print()
    if "--part" not in sys.argv or sys.argv[sys.argv.index("--part") + 1] == "2":
        part2()
