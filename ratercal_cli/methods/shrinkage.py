"""Shrinkage of paper scores toward the mean: the study's second dimension beside the variant.

RMSE rewards shrinkage: an estimator pulled toward the mean by as much as its error leaves
uncertain beats an unshrunk one of the same quality.  The model-based MML and MFRM shrink
when they score a paper at its EAP quality; every other method's paper score is unshrunk.  To
compare calibration with calibration, the study scores every method at both levels
(:data:`ratercal_cli.vocabulary.SHRINKAGES`):

* ``none``: the method's own paper scores; the Rasch fits (the corrected PCM, CML, RSM, MML,
  MFRM) at Warm's WLE (unshrunk) quality;
* ``kelley``: the same scores shrunk by Kelley's regressed-score formula; the Rasch fits at their
  EAP quality, the posterior mean under a normal distribution of quality: MML and MFRM under the
  one they fit, the corrected PCM (PAIR) and CML/RSM under one fitted by marginal ML with their
  rater parameters held (:func:`.quality.eap_normal`).  Kelley's formula is the linear form of
  that posterior mean for a score whose error is measured in the raw points of the ratings; a
  Rasch fair average is a non-linear function of its quality, whose error it does not measure
  (on cell 2551, Kelley's formula made the PCM's WLE fair averages worse, 0.460 against 0.452
  unshrunk; the EAP 0.426).  The faithful PCM (PCM.BAS) is shrunk by Kelley's formula.

Kelley's formula (Kelley 1947, *Fundamental Statistics*, ch. 15; Lord & Novick 1968, eq. 3.7.2),
one data set at a time, paper ``i`` with ``n_i`` ratings and score ``X_i`` (the method's)::

    T_i = mean(X) + rho_i * (X_i - mean(X)),   rho_i = s2_T / (s2_T + s2_E / n_i)

The reliability is estimated from the data by one-way analysis of variance (method of moments,
as for ICC(1); Shrout & Fleiss 1979; Brennan 2001, *Generalizability Theory*, sec. 3.4):

* ``s2_E``, the error variance of one rating, is the pooled within-paper variance of the ratings
  after each rater's mean is removed: ``y = score - mean of the rater's scores``,
  ``s2_E = sum_i sum_r (y_ir - mean_i y)**2 / sum_i (n_i - 1)``, the residual of the additive
  paper + rater model, i.e. the error no rater-level calibration removes.  The same for every
  method, so the shrinkage does not reward a method for its own spread;
* ``s2_T``, the true-score variance, is the variance of the method's paper scores (``ddof=1``)
  less their mean error variance ``mean_i(s2_E / n_i)``, at least 0.

Papers without ratings keep nan.  A data set where no paper has two ratings (one rater per
paper) has no within-paper variance and so no estimate: :func:`kelley` raises.  A data set's
numbers depend only on its own ratings, added in rating order, so the replications of a Monte
Carlo chunk shrunk in one call (:func:`kelley_batch`) get the same numbers to the bit as each one
alone.
"""

from __future__ import annotations

import numpy as np

from ..errors import MethodError
from ..vocabulary import SHRINKAGES

#: why a one-rater data set has no Kelley estimate
NO_RELIABILITY = "needs papers with two or more ratings to estimate the error variance"


def kelley_batch(P, rep, paper, rater, score, n_raters):
    """Kelley-shrunk paper scores of ``B`` data sets at once.

    ``P``: ``(B, n)`` paper scores (nan: no score); ``rep``, ``paper``, ``rater``, ``score``: the
    ratings of all data sets as flat arrays (``rep`` the data set of each, ``paper`` in
    ``0..n-1``, ``rater`` in ``0..n_raters-1``).  Returns ``(T, rho)``, both ``(B, n)``; rows of a
    data set without within-paper variance (one rating per paper) are nan.
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    B, n = P.shape
    rep = np.asarray(rep, dtype=np.int64)
    x = np.asarray(score, dtype=np.float64)
    kr = rep * n_raters + np.asarray(rater, dtype=np.int64)
    cr = np.bincount(kr, minlength=B * n_raters)
    mr = np.bincount(kr, weights=x, minlength=B * n_raters) / np.maximum(cr, 1)
    y = x - mr[kr]
    kp = rep * n + np.asarray(paper, dtype=np.int64)
    ni = np.bincount(kp, minlength=B * n)
    ybar = np.bincount(kp, weights=y, minlength=B * n) / np.maximum(ni, 1)
    ss = np.bincount(rep, weights=(y - ybar[kp]) ** 2, minlength=B)
    ni = ni.reshape(B, n)
    df = np.maximum(ni - 1, 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s2e = np.where(df > 0, ss / df, np.nan)
        err = np.where(ni > 0, s2e[:, None] / ni, np.nan)                  # (B, n) error variance of X_i
        ok = np.isfinite(P) & (ni > 0)
        m = ok.sum(axis=1)
        mean = np.where(ok, P, 0.0).sum(axis=1) / m
        dev = np.where(ok, P - mean[:, None], 0.0)
        var_x = (dev * dev).sum(axis=1) / (m - 1)
        s2t = np.maximum(var_x - np.where(ok, err, 0.0).sum(axis=1) / m, 0.0)
        rho = np.where(ok, s2t[:, None] / (s2t[:, None] + err), np.nan)
        T = np.where(ok, mean[:, None] + rho * dev, np.nan)
    bad = ~(df > 0) | (m < 2)
    T[bad] = np.nan
    rho[bad] = np.nan
    return T, rho


def kelley(paper_scores, ratings):
    """Kelley-shrunk paper scores of one data set (:class:`~ratercal_cli.ratings.Ratings`):
    ``(T, rho)``.  Raises :class:`~ratercal_cli.errors.MethodError` where no paper has two
    ratings."""
    if ratings.max_raters_per_paper() < 2:
        raise MethodError(f"kelley shrinkage {NO_RELIABILITY}")
    T, rho = kelley_batch(np.asarray(paper_scores, dtype=np.float64)[None], np.zeros(ratings.n_ratings, np.int64),
                          ratings.paper, ratings.rater, ratings.score, ratings.n_raters)
    return T[0], rho[0]


def own_shrinkage(estimator) -> bool:
    """Whether a fitted estimator scores papers at some levels itself (the Rasch fits: WLE and EAP)."""
    return callable(getattr(estimator, "paper_scores_by_shrinkage", None))


def own_levels(estimator, ratings) -> dict:
    """``{shrinkage: paper scores}`` an estimator gives itself (:func:`own_shrinkage`; else ``{}``),
    its thin raters' ratings counted as in its adjusted scores (one unadjusted rating each,
    :meth:`~.base.RaterAdjuster.with_thin_ratings`): each level is the estimator's score of the
    ratings its fit used, the thin ones joined after.  MML's and MFRM's levels were their fair scores
    alone, so with a rater of one rating their ``kelley`` level (the EAP) was not their own adjusted
    score (the EAP too), and a paper rated only by such raters got the fair score of no rating."""
    if not own_shrinkage(estimator):
        return {}
    rest = estimator.without_thin_ratings(ratings)
    if rest.n_ratings == 0 or getattr(estimator, "all_thin_", False):   # nothing fitted: every rating raw
        levels = {s: np.full(ratings.n_papers, np.nan) for s in SHRINKAGES}
    else:
        levels = estimator.paper_scores_by_shrinkage(rest)
    return {s: estimator.with_thin_ratings(ratings, p) for s, p in levels.items()}


def shrunk_papers(estimator, ratings, paper_scores, shrinkages=SHRINKAGES) -> dict:
    """``{shrinkage: paper scores}`` of a fitted method on its own data: ``none`` is the method's
    unshrunk score, ``kelley`` the shrunk one (the estimator's own where it has them,
    :func:`own_levels`, else :func:`kelley` of ``paper_scores``).  A level that cannot be computed
    raises :class:`MethodError`."""
    own = own_levels(estimator, ratings)
    out = {}
    for s in shrinkages:
        if s in own:
            out[s] = np.asarray(own[s], dtype=np.float64)
        elif s == "none":
            out[s] = np.asarray(paper_scores, dtype=np.float64)
        elif s == "kelley":
            out[s] = kelley(paper_scores, ratings)[0]
        else:
            raise ValueError(f"shrinkage must be one of {', '.join(SHRINKAGES)}, not {s!r}")
    return out
