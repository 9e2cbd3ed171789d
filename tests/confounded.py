"""School-confounded district files from a model none of ratercal's methods assume (issue 29): the
acceptance test of ``check``'s one recommendation under non-random assignment.

Written here, independently of ``ratercal_cli.generators`` and of ``ratercal_cli.models`` (no
project code draws a score): six schools of different mean quality, each read mostly by its own
pair of raters, so that who read a paper says something about how good it is.

* **Quality**: school ``s`` has mean ``SCHOOL_MEANS[s]`` (logits, -1.5 to 1.5), within-school
  sd 1; ``papers`` papers shared out evenly among the schools.
* **Raters**: 12, pair ``s`` (raters ``2s`` and ``2s + 1``) reads school ``s``.  Each of a paper's
  first two readings is by one of its school's pair with probability ``own`` (the first by either,
  the second by the other one), else by a rater of another school drawn at random: "mostly its
  own pair" (with the default ``own=0.9`` 19% of papers have an outside reader, which links
  the pairs); ``own=None``: random assignment, any two raters.
* **Scores**: Samejima's graded response model on 1-6 with rater slopes and central raters:
  ``P(X >= k | theta) = logistic(a_j (theta - b_k - s_j) * c_jk)``, ``k = 2..6``, where ``a_j`` is
  the rater's slope (log-normal, sd 0.35), ``s_j`` its severity (N(0, 0.45^2)), ``b`` the base
  thresholds (-2.2, -1.1, 0, 1.1, 2.2) and a central rater (a third of them) has its outer
  thresholds pushed out by 0.8 logits (it avoids 1 and 6).  No rater is the Rasch model's.
* **Third readings** by the district's rule: when the first two differ by more than a point, a
  third rater (not one of the two, any school's) reads the paper.
* **Truth**: a paper's true score is the mean over the twelve raters of their expected score at
  its quality (the corrected study's definition, on the 1-6 scale), kept beside the file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

SCHOOL_MEANS = np.linspace(-1.5, 1.5, 6)
BASE_THRESHOLDS = np.array([-2.2, -1.1, 0.0, 1.1, 2.2])
LOW, HIGH = 1, 6
N_RATERS = 12
#: the raters' typical slope (logits per logit of quality)
SLOPE = 2.0


@dataclass
class DistrictFile:
    frame: pd.DataFrame      # school, paper, rater, score (one rating a line, in reading order)
    truth: pd.Series         # paper -> true score on 1-6
    school: pd.Series        # paper -> school
    quality: pd.Series       # paper -> theta


def _raters(rng):
    slope = SLOPE * np.exp(0.3 * rng.standard_normal(N_RATERS))
    severity = 0.45 * rng.standard_normal(N_RATERS)
    central = np.zeros(N_RATERS, dtype=bool)
    central[rng.choice(N_RATERS, N_RATERS // 3, replace=False)] = True
    thresholds = BASE_THRESHOLDS[None, :] + severity[:, None]
    push = np.array([-0.8, 0, 0, 0, 0.8])
    thresholds = thresholds + central[:, None] * push[None, :]
    return slope, thresholds


def _expected(theta, slope, thresholds):
    """Expected score (1-6) of each rater at each quality: (papers, raters)."""
    z = slope[None, :, None] * (theta[:, None, None] - thresholds[None, :, :])
    return LOW + (1.0 / (1.0 + np.exp(-z))).sum(axis=2)


def _draw(rng, theta, slope, thresholds):
    """One graded-response score per (theta, rater) pair given as arrays of equal length."""
    p_ge = 1.0 / (1.0 + np.exp(-slope[:, None] * (theta[:, None] - thresholds)))   # (n, 5) P(X >= k)
    u = rng.random(theta.size)
    return LOW + (u[:, None] < p_ge).sum(axis=1)


def _readings(rng, theta, who, slope, thresholds, discrepancy):
    """A paper's readings by raters ``who`` (two) at quality ``theta``, and a third by any other rater where
    the first two differ by more than ``discrepancy`` (the district's rule): ``(raters, scores)``."""
    sc = _draw(rng, np.full(2, theta), slope[who], thresholds[who])
    if abs(int(sc[0]) - int(sc[1])) > discrepancy:
        third = int(rng.choice([j for j in range(slope.size) if j not in who]))
        who = [*who, third]
        sc = np.r_[sc, _draw(rng, np.array([theta]), slope[[third]], thresholds[[third]])]
    return who, sc


def district(seed: int, papers: int = 600, own: float | None = 0.9, discrepancy: int = 1,
             school_means=SCHOOL_MEANS) -> DistrictFile:
    """One school-confounded district file (module docstring)."""
    rng = np.random.default_rng([29, seed])
    slope, thresholds = _raters(rng)
    n_s = len(school_means)
    school = np.arange(papers) % n_s
    theta = np.asarray(school_means)[school] + rng.standard_normal(papers)
    rows = []
    for p in range(papers):
        s = school[p]
        pair = [2 * s, 2 * s + 1] if rng.random() < 0.5 else [2 * s + 1, 2 * s]
        others = [j for j in range(N_RATERS) if j not in (2 * s, 2 * s + 1)]
        if own is None:   # random assignment: any two raters
            who = [int(j) for j in rng.choice(N_RATERS, 2, replace=False)]
        else:
            first = pair[0] if rng.random() < own else int(rng.choice(others))
            second = pair[1] if rng.random() < own else int(rng.choice([j for j in others if j != first]))
            who = [first, second]
        who, sc = _readings(rng, theta[p], who, slope, thresholds, discrepancy)
        for j, x in zip(who, sc):
            rows.append((f"S{s + 1}", f"P{p + 1:04d}", f"R{j + 1}", int(x)))
    frame = pd.DataFrame(rows, columns=["school", "paper", "rater", "score"])
    ids = [f"P{p + 1:04d}" for p in range(papers)]
    truth = pd.Series(_expected(theta, slope, thresholds).mean(axis=1), index=ids)
    return DistrictFile(frame, truth, pd.Series([f"S{s + 1}" for s in school], index=ids),
                        pd.Series(theta, index=ids))


def chain(seed: int, papers: int = 600, raters: int = 19, routing_noise: float = 1.5,
          discrepancy: int = 1, lenient_to_weak: bool = False, severity_sd: float = 0.45) -> DistrictFile:
    """Papers routed to raters by quality (a tester's design): a noisy pre-score
    (quality + N(0, ``routing_noise``^2)) ranks the papers into ``raters - 1`` bands, and band ``k`` is
    read by raters ``k`` and ``k + 1`` (either first): a chain of raters, each reading papers a little
    better than the one before, with no school, no cluster and no place to cut it.  Raters and scores as
    :func:`district` (the graded response model with rater slopes and central raters, third readings by
    the district's rule from any other rater); one file of school ``S1``.  ``lenient_to_weak``: the raters'
    severities sorted along the chain, the most lenient reading the weakest papers (a researcher tester's
    design: a confound of severity with quality that no cluster's mean meets)."""
    rng = np.random.default_rng([33, seed])
    slope = SLOPE * np.exp(0.3 * rng.standard_normal(raters))
    severity = severity_sd * rng.standard_normal(raters)
    if lenient_to_weak:
        severity = np.sort(severity)
    thresholds = BASE_THRESHOLDS[None, :] + severity[:, None]
    theta = rng.standard_normal(papers)
    band = np.argsort(np.argsort(theta + routing_noise * rng.standard_normal(papers))) * (raters - 1) // papers
    rows = []
    for p in range(papers):
        who = [int(band[p]), int(band[p]) + 1][::1 if rng.random() < 0.5 else -1]
        who, sc = _readings(rng, theta[p], who, slope, thresholds, discrepancy)
        for j, x in zip(who, sc):
            rows.append(("S1", f"P{p + 1:04d}", f"R{j + 1}", int(x)))
    frame = pd.DataFrame(rows, columns=["school", "paper", "rater", "score"])
    ids = [f"P{p + 1:04d}" for p in range(papers)]
    truth = pd.Series(_expected(theta, slope, thresholds).mean(axis=1), index=ids)
    return DistrictFile(frame, truth, pd.Series("S1", index=ids), pd.Series(theta, index=ids))


def rmse(paper_scores: pd.Series, truth: pd.Series) -> float:
    """RMSE of paper scores (1-6, indexed by paper) against the hidden truth."""
    d = paper_scores.reindex(truth.index).to_numpy(dtype=float) - truth.to_numpy()
    return float(np.sqrt(np.mean(d * d)))


#: a rubric's criteria: each shifts the quality a criterion asks for (logits; the first easiest)
CRITERIA_SHIFT = np.array([-0.6, 0.0, 0.6])


@dataclass
class RubricFile:
    frame: pd.DataFrame      # school, paper, rater, criterion, score (one rating a line, in reading order)
    truth: pd.DataFrame      # paper x criterion -> true score on 1-6
    school: pd.Series        # paper -> school
    quality: pd.Series       # paper -> theta


def rubric(seed: int, papers: int = 300, own: float | None = 0.9, discrepancy: int = 1,
           school_means=SCHOOL_MEANS, shifts=CRITERIA_SHIFT) -> RubricFile:
    """A school-confounded rubric file: :func:`district`'s schools, raters and assignment, each reader
    scoring every criterion of the papers it reads (the graded response model at the paper's quality
    less the criterion's shift); a third reader scores every criterion of a paper when its first two
    readers differ by more than ``discrepancy`` on any criterion.  Truth: per paper and criterion the
    mean over the twelve raters of their expected score at the quality less the criterion's shift."""
    rng = np.random.default_rng([29, 1, seed])
    slope, thresholds = _raters(rng)
    n_s, C = len(school_means), len(shifts)
    school = np.arange(papers) % n_s
    theta = np.asarray(school_means)[school] + rng.standard_normal(papers)
    names = [f"C{c + 1}" for c in range(C)]
    rows = []
    for p in range(papers):
        s = school[p]
        pair = [2 * s, 2 * s + 1] if rng.random() < 0.5 else [2 * s + 1, 2 * s]
        others = [j for j in range(N_RATERS) if j not in (2 * s, 2 * s + 1)]
        if own is None:
            who = [int(j) for j in rng.choice(N_RATERS, 2, replace=False)]
        else:
            first = pair[0] if rng.random() < own else int(rng.choice(others))
            second = pair[1] if rng.random() < own else int(rng.choice([j for j in others if j != first]))
            who = [first, second]
        q = theta[p] - np.asarray(shifts)
        sc = [_draw(rng, q, np.full(C, slope[j]), np.repeat(thresholds[[j]], C, axis=0)) for j in who]
        if np.any(np.abs(sc[0] - sc[1]) > discrepancy):
            third = int(rng.choice([j for j in range(N_RATERS) if j not in who]))
            who.append(third)
            sc.append(_draw(rng, q, np.full(C, slope[third]), np.repeat(thresholds[[third]], C, axis=0)))
        for j, x in zip(who, sc):
            for c in range(C):
                rows.append((f"S{s + 1}", f"P{p + 1:04d}", f"R{j + 1}", names[c], int(x[c])))
    frame = pd.DataFrame(rows, columns=["school", "paper", "rater", "criterion", "score"])
    ids = [f"P{p + 1:04d}" for p in range(papers)]
    truth = pd.DataFrame({names[c]: _expected(theta - shifts[c], slope, thresholds).mean(axis=1) for c in range(C)},
                         index=ids)
    return RubricFile(frame, truth, pd.Series([f"S{s + 1}" for s in school], index=ids), pd.Series(theta, index=ids))
