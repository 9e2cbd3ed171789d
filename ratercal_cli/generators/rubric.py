"""Analytic-rubric ratings: each paper read by a few raters, each reading scoring every criterion,
from the many-facet rating scale model with rater x criterion interactions.

    P(x | theta_p) ~ exp(x (theta_p - severity[j] - difficulty[c] - bias[j, c]) - sum_{k<=x} kappa[k])

``theta_p ~ N(0, quality_sd^2)``; the raters of a paper are drawn without replacement; scores from
:func:`ratercal_cli.models.pcm.sample_scores`.  One row per reading, a column per criterion (the
wide export of most scoring systems): ``paper, rater, <criterion>...``; scores on ``low..low+M``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..models.pcm import sample_scores


@dataclass
class Rubric:
    """What a generated rubric administration holds."""

    header: list
    rows: list
    severity: np.ndarray
    difficulty: np.ndarray
    thresholds: np.ndarray
    bias: np.ndarray
    quality: np.ndarray
    raters: list = field(default_factory=list)
    criteria: list = field(default_factory=list)


def simulate_rubric(seed, n_papers=500, n_raters=12, per_paper=2, criteria=("style", "org", "conv", "sent_form"),
                    low=1, thresholds=(-2.4, -1.2, 0.0, 1.2, 2.4), severity=None, difficulty=None, bias=None,
                    quality_sd=1.3, paper_prefix="P", rater_prefix="R") -> Rubric:
    """A rubric file's rows (module docstring).  ``severity`` (J,) defaults to -0.6..0.6 evenly,
    ``difficulty`` (C,) to -0.3..0.3, ``bias`` (J, C) to zeros: all in logits, + = lower scores."""
    rng = np.random.default_rng(seed)
    C = len(criteria)
    kappa = np.asarray(thresholds, dtype=float)
    sev = np.linspace(-0.6, 0.6, n_raters) if severity is None else np.asarray(severity, float)
    dif = np.linspace(-0.3, 0.3, C) if difficulty is None else np.asarray(difficulty, float)
    b = np.zeros((n_raters, C)) if bias is None else np.asarray(bias, float)
    theta = rng.normal(0.0, quality_sd, n_papers)
    raters = [f"{rater_prefix}{j + 1}" for j in range(n_raters)]
    rows = []
    width = len(str(n_papers))
    for p in range(n_papers):
        for j in rng.permutation(n_raters)[:per_paper]:
            loc = sev[j] + dif + b[j]
            s = sample_scores(rng, np.full(C, theta[p]), loc[:, None] + kappa[None, :])
            rows.append([f"{paper_prefix}{p + 1:0{width}d}", raters[j]] + [str(int(x) + low) for x in s])
    return Rubric(header=["paper", "rater", *criteria], rows=rows, severity=sev, difficulty=dif, thresholds=kappa,
                  bias=b, quality=theta, raters=raters, criteria=list(criteria))
