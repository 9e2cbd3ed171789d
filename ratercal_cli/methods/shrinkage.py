"""Shrinkage of paper scores toward the mean: the study's second dimension beside the variant.

RMSE rewards shrinkage: an estimator pulled toward the mean by as much as its error leaves
uncertain beats an unshrunk one of the same quality.  The model-based MML and MFRM shrink
when they score a paper at its EAP quality; every other method's paper score is unshrunk.  To
compare calibration with calibration, the study scores every method at each level
(:data:`ratercal_cli.vocabulary.STUDY_SHRINKAGES`):

* ``none``: the method's own paper scores; the Rasch fits (the corrected PCM, CML, RSM, MML,
  MFRM) at Warm's WLE (unshrunk) quality;
* ``kelley``: the same scores shrunk by Kelley's regressed-score formula; the Rasch fits at their
  EAP quality, the posterior mean under a normal distribution of quality: MML and MFRM under the
  one they fit, the corrected PCM (PAIR) and CML/RSM under one fitted by marginal ML with their
  rater parameters held (:func:`.quality.eap_normal`).  Kelley's formula is the linear form of
  that posterior mean for a score whose error is measured in the raw points of the ratings; a
  Rasch fair average is a non-linear function of its quality, whose error it does not measure
  (on cell 2551, Kelley's formula made the PCM's WLE fair averages worse, 0.460 against 0.452
  unshrunk; the EAP 0.426).  The faithful PCM (PCM.BAS) is shrunk by Kelley's formula;
* ``linear_eb``: every method's ``none`` scores shrunk by one linear empirical-Bayes operator
  whose error variance is each method's own (below).

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

``linear_eb`` (issue 29) is the like-for-like level: one operator, the same for every method and
applied to every method's unshrunk scores (the Rasch fits' WLE fair averages too; their EAP stays
their own ``kelley``).  Kelley's level is not like for like: it gives every method the raw
ratings' error ``s2_E / n_i``, right for a mean of adjusted ratings (TLI) but not for a Rasch fair
average, whose error is not measured in raw points (Kelley's formula made the PCM's WLE fair
averages worse on cell 2551, 0.4595 against 0.4521), and the EAP is a non-linear posterior mean
under a fitted prior.  ``linear_eb`` is the linear empirical-Bayes (best linear) predictor of a
score ``X_i = T_i + e_i`` with error uncorrelated with the truth (Morris 1983, "Parametric
empirical Bayes inference", JASA 78, sec. 2-3; Lord & Novick 1968, sec. 3.7)::

    T_i = mean(X) + rho_i * (X_i - mean(X)),   rho_i = s2_T / (s2_T + s2_X / n_i)

with both variances estimated from the data the method sees, the same way for every method:

* ``s2_T``, the papers' true-score variance, is a property of the papers, not of the method: one
  number a data set, the one-way ANOVA's (as above) ``var_i(ybar_i) - mean_i(s2_E / n_i)`` (at least
  0), ``ybar_i`` paper ``i``'s mean rater-centred rating;
* ``s2_X``, the method's own error variance of one rating's worth, by moments from its scores'
  excess variance: ``var(X) - s2_T = s2_X mean_i(1 / n_i)``, so ``s2_X = max(var(X) - s2_T, 0) /
  mean_i(1 / n_i)`` (``rho_i = 1``, no shrinkage, where a method's scores vary less than ``s2_T``).

On the rater-centred paper means themselves the two levels are the same numbers; a method whose
scores carry more error than the raw ratings' (or less) is shrunk more (or less).  The assumption
is that a method's score is on the scale of the true score (``cov(X, T) = var(T)``): on cell 2551
(40 replications) ``cov(X, T) / var(T)`` was 1.02 for TLI and 0.94 for the corrected PCM, and the
ANOVA's ``s2_T`` 1.233 against the true scores' 1.275; the best linear map fitted to the true
scores (an oracle) beat ``linear_eb`` by 0.007 (PCM: 0.4345 against 0.4413) and 0.006 (TLI: 0.4382
against 0.4441) there.

``s2_T`` from rater-centred ratings assumes raters read papers of the same quality on average
(random assignment).  Where who reads what follows quality (``assignment: by_quality``) centring
each rater removes the quality differences between the raters' papers with their severity, and
``s2_T`` is far too small: on cell 2551 with that assignment 0.37 against the true scores' 1.29
(20 replications), so ``linear_eb`` shrinks every method nearly to the mean (the PCM 0.45 -> 0.87;
in ``configs/rater_effects.yaml`` every method ends near 0.61).  The one-way ANOVA of the raw
ratings is no cure (0.85 there; and on cell 2+191, whose kept pairs agree by construction, 5.95
against 4.73, where the rater-centred estimate is 4.85).  ``linear_eb`` is the like-for-like comparison under random assignment only.

Papers without ratings keep nan.  A data set where no paper has two ratings (one rater per
paper) has no within-paper variance and so no estimate: :func:`kelley` raises.  A data set's
numbers depend only on its own ratings, added in rating order, so the replications of a Monte
Carlo chunk shrunk in one call (:func:`kelley_batch`) get the same numbers to the bit as each one
alone.
"""

from __future__ import annotations

import numpy as np

from ..errors import MethodError
from ..vocabulary import SHRINKAGES, STUDY_SHRINKAGES

#: why a one-rater data set has no Kelley estimate
NO_RELIABILITY = "needs papers with two or more ratings to estimate the error variance"


def _one_way(rep, paper, rater, score, B, n, n_raters, effects=None):
    """The one-way ANOVA both operators take from a batch's ratings: ``(ni (B, n) ratings a paper,
    s2e (B,) the pooled within-paper variance of the rater-centred ratings (nan without
    within-paper variance), ybar (B, n) each paper's mean rater-centred rating)``; each rater centred
    by its mean, or by ``effects`` ((B, n_raters): the additive fit's, :func:`kelley`)."""
    rep = np.asarray(rep, dtype=np.int64)
    x = np.asarray(score, dtype=np.float64)
    kr = rep * n_raters + np.asarray(rater, dtype=np.int64)
    if effects is None:
        cr = np.bincount(kr, minlength=B * n_raters)
        mr = np.bincount(kr, weights=x, minlength=B * n_raters) / np.maximum(cr, 1)
    else:
        mr = np.asarray(effects, dtype=np.float64).ravel()
    y = x - mr[kr]
    kp = rep * n + np.asarray(paper, dtype=np.int64)
    ni = np.bincount(kp, minlength=B * n)
    ybar = np.bincount(kp, weights=y, minlength=B * n) / np.maximum(ni, 1)
    ss = np.bincount(rep, weights=(y - ybar[kp]) ** 2, minlength=B)
    ni = ni.reshape(B, n)
    df = np.maximum(ni - 1, 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s2e = np.where(df > 0, ss / df, np.nan)
    return ni, s2e, ybar.reshape(B, n)


def _mean_and_deviations(P, ok):
    """``(m, mean (B,), dev (B, n))`` of the scores ``P`` where ``ok``: their count, mean and
    deviations from it (0 elsewhere)."""
    m = ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, P, 0.0).sum(axis=1) / m
    return m, mean, np.where(ok, P - mean[:, None], 0.0)


def kelley_batch(P, rep, paper, rater, score, n_raters, effects=None):
    """Kelley-shrunk paper scores of ``B`` data sets at once.

    ``P``: ``(B, n)`` paper scores (nan: no score); ``rep``, ``paper``, ``rater``, ``score``: the
    ratings of all data sets as flat arrays (``rep`` the data set of each, ``paper`` in
    ``0..n-1``, ``rater`` in ``0..n_raters-1``); ``effects``: the raters' to centre by (:func:`_one_way`).
    Returns ``(T, rho)``, both ``(B, n)``; rows of a data set without within-paper variance (one rating
    per paper) are nan.
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    B, n = P.shape
    ni, s2e, _ = _one_way(rep, paper, rater, score, B, n, n_raters, effects)
    with np.errstate(invalid="ignore", divide="ignore"):
        err = np.where(ni > 0, s2e[:, None] / ni, np.nan)                  # (B, n) error variance of X_i
        ok = np.isfinite(P) & (ni > 0)
        m, mean, dev = _mean_and_deviations(P, ok)
        var_x = (dev * dev).sum(axis=1) / (m - 1)
        s2t = np.maximum(var_x - np.where(ok, err, 0.0).sum(axis=1) / m, 0.0)
        rho = np.where(ok, s2t[:, None] / (s2t[:, None] + err), np.nan)
        T = np.where(ok, mean[:, None] + rho * dev, np.nan)
    bad = ~np.isfinite(s2e) | (m < 2)
    T[bad] = np.nan
    rho[bad] = np.nan
    return T, rho


def linear_eb_batch(P, rep, paper, rater, score, n_raters, effects=None):
    """Like-for-like linear empirical-Bayes shrinkage (``linear_eb``, module docstring) of ``B``
    data sets at once; arguments and result as :func:`kelley_batch`."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    B, n = P.shape
    ni, s2e, ybar = _one_way(rep, paper, rater, score, B, n, n_raters, effects)
    with np.errstate(invalid="ignore", divide="ignore"):
        rated = ni > 0
        inv_n = np.where(rated, 1.0 / np.maximum(ni, 1), 0.0)
        # the papers' true-score variance: one number a data set, the same for every method
        k, _, ydev = _mean_and_deviations(ybar, rated)
        s2t = np.maximum((ydev * ydev).sum(axis=1) / (k - 1) - s2e * inv_n.sum(axis=1) / k, 0.0)
        # the method's own error variance of one rating's worth, from its scores' excess variance
        ok = np.isfinite(P) & rated
        m, mean, dev = _mean_and_deviations(P, ok)
        var_x = (dev * dev).sum(axis=1) / (m - 1)
        s2x = np.maximum(var_x - s2t, 0.0) / (np.where(ok, inv_n, 0.0).sum(axis=1) / m)
        err = s2x[:, None] * inv_n
        rho = np.where(ok, np.where(err > 0, s2t[:, None] / (s2t[:, None] + err), 1.0), np.nan)
        T = np.where(ok, mean[:, None] + rho * dev, np.nan)
    bad = ~np.isfinite(s2e) | (m < 2) | (k < 2)
    T[bad] = np.nan
    rho[bad] = np.nan
    return T, rho


#: how the ratings are centred for the error variance of one rating (:func:`_one_way`): by each rater's mean
#: (``means``: the Monte Carlo study's, whose data sets draw papers to raters at random, where a rater's mean is
#: its effect to within noise; its batches and single replications the same to the bit, and its published
#: numbers), or by the additive fit's effects (``additive``, :func:`.additive.two_way`: a file's, and its
#: simulation's, whose papers may have gone to raters by school or by a pre-score).  On a file of schools each
#: read first by its own rater, 15% read again by another (tests/practice/test_single_read.py), the raters'
#: means are the schools' and the second readings' spread took in the schools' differences: Kelley's factor
#: 0.35 for a paper read once where the oracle's linear factor was 0.85, NO shrunk 1.119 RMSE against unshrunk
#: 0.671; by the additive fit 0.617
CENTRINGS = ("means", "additive")


def file_effects(ratings):
    """The raters' effects a file's ratings are centred by (:func:`kelley`, :func:`linear_eb`): the additive
    fit's (:func:`.additive.two_way`), None (their means) above its :data:`.additive.MAX_RATERS` raters."""
    from .additive import MAX_RATERS, two_way

    if ratings.n_raters > MAX_RATERS:
        return None

    return two_way(np.asarray(ratings.paper, dtype=np.int64), np.asarray(ratings.rater, dtype=np.int64),
                   np.asarray(ratings.score, dtype=np.float64), ratings.n_papers, ratings.n_raters).effect[None]


def _one_set(batch_fn, name, paper_scores, ratings, centring):
    if ratings.max_raters_per_paper() < 2:
        raise MethodError(f"{name} shrinkage {NO_RELIABILITY}")
    if centring not in CENTRINGS:
        raise ValueError(f"centring must be one of {', '.join(CENTRINGS)}, not {centring!r}")
    effects = file_effects(ratings) if centring == "additive" else None
    T, rho = batch_fn(np.asarray(paper_scores, dtype=np.float64)[None], np.zeros(ratings.n_ratings, np.int64),
                      ratings.paper, ratings.rater, ratings.score, ratings.n_raters, effects)
    return T[0], rho[0]


def kelley(paper_scores, ratings, centring: str = "means"):
    """Kelley-shrunk paper scores of one data set (:class:`~ratercal_cli.ratings.Ratings`):
    ``(T, rho)``; ``centring`` (:data:`CENTRINGS`): the raters' effects its error variance takes out.
    Raises :class:`~ratercal_cli.errors.MethodError` where no paper has two ratings."""
    return _one_set(kelley_batch, "kelley", paper_scores, ratings, centring)


def linear_eb(paper_scores, ratings, centring: str = "means"):
    """``linear_eb``-shrunk paper scores of one data set: ``(T, rho)`` (:func:`linear_eb_batch`; ``centring``
    as :func:`kelley`); raises :class:`~ratercal_cli.errors.MethodError` where no paper has two ratings."""
    return _one_set(linear_eb_batch, "linear_eb", paper_scores, ratings, centring)


#: each level's operator on a batch of unshrunk paper scores (where a method does not score the
#: level itself: an estimator's own ``kelley``, the EAP, takes precedence; ``linear_eb`` never has one)
OPERATORS_BATCH = {"kelley": kelley_batch, "linear_eb": linear_eb_batch}


#: the level at which a method's own adjusted scores are, where it is not ``none``: MML's and MFRM's are the
#: fair scores of the EAP quality (their default), their ``kelley`` level (:meth:`.mml.MarginalRaterModel.paper_scores_by_shrinkage`)
DEFAULT_LEVELS = {"MML": "kelley", "MFRM": "kelley"}


def default_level(code: str) -> str:
    """The shrinkage level of ``code``'s adjusted scores as the method gives them (``-m MML`` is MML (shrunk))."""
    return DEFAULT_LEVELS.get(code, "none")


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


def shrunk_papers(estimator, ratings, paper_scores, shrinkages=SHRINKAGES, centring: str = "means") -> dict:
    """``{shrinkage: paper scores}`` of a fitted method on its own data: ``none`` is the method's
    unshrunk score, ``kelley`` the shrunk one (the estimator's own where it has them,
    :func:`own_levels`, else :func:`kelley` of ``paper_scores``), ``linear_eb`` :func:`linear_eb`
    of the unshrunk score (the estimator's own ``none`` where it has one); ``centring`` as :func:`kelley`.
    A level that cannot be computed raises :class:`MethodError`."""
    own = own_levels(estimator, ratings)
    unshrunk = np.asarray(own.get("none", paper_scores), dtype=np.float64)
    out = {}
    for s in shrinkages:
        if s in own:
            out[s] = np.asarray(own[s], dtype=np.float64)
        elif s == "none":
            out[s] = unshrunk
        elif s == "kelley":
            out[s] = kelley(paper_scores, ratings, centring)[0]
        elif s == "linear_eb":   # the same operator for every method, on its unshrunk scores
            out[s] = linear_eb(unshrunk, ratings, centring)[0]
        else:
            raise ValueError(f"shrinkage must be one of {', '.join(STUDY_SHRINKAGES)}, not {s!r}")
    return out
