"""Criteria comparing adjusted scores with true scores (Denny 1990, ch. 3-4).

Pure functions on arrays.  Paper-level criteria take one adjusted score and one
true score per paper (``Adjusted.paper`` and the true-score file); per-rater RMSE
takes the per-rating adjusted scores.  The published tables (7, 12, 14) print
values rounded half-up to two decimals from values already rounded to three:
:func:`table_round`.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np

#: Table 5's cut: the district passes an average rating of 3.5, and "because of
#: rounding, any student with an average adjusted score of 3.25 or greater is
#: considered to have passed" (p. 71-72).  Scores compared with ``>= cut``.
PASS_CUT = 3.25


def _pair(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"arrays differ in shape: {a.shape} and {b.shape}")
    return a, b


def rater_rmse(ratings, adjusted_rating_scores, true_paper_scores) -> np.ndarray:
    """Per-rater RMSE: each rater's adjusted ratings against the rated papers'
    true scores, ``sqrt(mean over rater j's ratings of (adj - true[paper])**2)``;
    nan for raters without ratings (Tables 9, 10 average these by rater type).
    ``true_paper_scores`` (papers, C) with a rubric's criteria (the facet ``criterion``): each
    rating against its paper's true score on its criterion.
    """
    adj = np.asarray(adjusted_rating_scores, dtype=np.float64)
    true = np.asarray(true_paper_scores, dtype=np.float64)
    if adj.shape != ratings.score.shape:
        raise ValueError("one adjusted score per rating is needed")
    if true.ndim == 2 and "criterion" in ratings.facets and true.shape[0] == ratings.n_papers:
        true_of_rating = true[ratings.paper, ratings.facets["criterion"][0]]
    elif true.shape == (ratings.n_papers,):
        true_of_rating = true[ratings.paper]
    else:
        raise ValueError("one true score per paper (and criterion) is needed")
    sq = (adj - true_of_rating) ** 2
    n = np.bincount(ratings.rater, minlength=ratings.n_raters)
    s = np.bincount(ratings.rater, weights=sq, minlength=ratings.n_raters)
    out = np.full(ratings.n_raters, np.nan)
    np.sqrt(s / np.maximum(n, 1), out=out, where=n > 0)
    return out


def fisher_z_mean(rs, weights=None) -> float:
    """Average correlations through Fisher's z: ``tanh(sum w atanh(r) / sum w)``
    (Table 11).  nan correlations (and their weights) are left out; ``r = 1``
    gives ``z = inf`` and so a mean of 1.
    """
    r = np.asarray(rs, dtype=np.float64).ravel()
    w = np.ones_like(r) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != r.shape:
        raise ValueError("weights must match rs")
    keep = ~np.isnan(r)
    if not keep.any() or w[keep].sum() == 0:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.arctanh(r[keep])
        zbar = np.sum(w[keep] * z) / np.sum(w[keep])
    return float(np.tanh(zbar))


# -- rounding ----------------------------------------------------------------------

def _decimal(v) -> Decimal | None:
    v = float(v)
    if not np.isfinite(v):
        return None
    # repr gives the shortest decimal that reads back as the same double, so
    # 2.675 (stored as 2.67499999...) is treated as the 2.675 it was meant to be
    return Decimal(repr(v))


def _quantize(d: Decimal, digits: int) -> Decimal:
    return d.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


def _apply(x, fn):
    arr = np.asarray(x, dtype=np.float64)
    out = np.array([fn(v) for v in arr.ravel()], dtype=np.float64).reshape(arr.shape)
    return float(out) if out.ndim == 0 else out


def round_half_up(x, digits: int = 2):
    """Round half away from zero to ``digits`` decimals, in decimal arithmetic
    (``round_half_up(2.675, 2) == 2.68``, where ``round`` gives 2.67).
    Scalars give a float, arrays an array; nan and inf pass through."""
    def one(v):
        d = _decimal(v)
        return float(v) if d is None else float(_quantize(d, digits))
    return _apply(x, one)


def table_round(x):
    """The tables' rounding: half-up to 3 decimals, then half-up to 2
    (2.3846 -> 2.385 -> 2.39, where a single rounding gives 2.38)."""
    def one(v):
        d = _decimal(v)
        return float(v) if d is None else float(_quantize(_quantize(d, 3), 2))
    return _apply(x, one)


# -- pass/fail decisions (Table 5) -------------------------------------------------

#: A score this far below the cut still passes: a mean of ratings that is the cut in
#: exact arithmetic (e.g. 3.25) must not fail on a rounding error in its last bit.
CUT_TOLERANCE = 1e-9


def passes(scores, cut: float = PASS_CUT) -> np.ndarray:
    """Pass/fail of each paper: ``score >= cut`` (within :data:`CUT_TOLERANCE`).
    With the default 3.25 this is the district rule "an average of 3.5 passes"
    applied after rounding averages to the nearest half point (3.25 rounds up to
    3.5).  NaN (no score) fails."""
    return np.asarray(scores, dtype=np.float64) >= cut - CUT_TOLERANCE


# -- one method on one data set: the one scoring service ------------------------------

#: Every criterion of :func:`score_set`, in the order the Monte Carlo rows carry them.
SET_CRITERIA = ("rmse", "r", "maxdiff", "bias", "accuracy", "pass_adjusted", "pass_true", "cbias_worst",
                "rmse_bottom", "rmse_top") + tuple(f"cbias_d{d}" for d in range(1, 11))
_CUT_CRITERIA = ("accuracy", "pass_adjusted", "pass_true")
#: Deciles of the true score for the conditional criteria.
DECILES = 10
#: The config's cut is on the 0..5 scale (the district's rule); a 0..M scale uses the same
#: fraction of its top: ``cut * M / CUT_SCALE``.
CUT_SCALE = 5


def cut_for_scale(cut: float, max_score: int) -> float:
    """The pass/fail cut on a 0..M scale: ``cut * M / 5`` (3.25 on 0..5, 5.85 on 0..9)."""
    return float(cut) * int(max_score) / CUT_SCALE


def score_sets(adjusted, true, cut: float | None = None) -> dict:
    """The criteria of one method's paper scores on ``B`` data sets at once (``(B, n)`` arrays), as
    :func:`ratercal_cli.montecarlo.replicate.chunk_rows` needs them: per data set the RMSE, r,
    maximum |difference|, bias ``mean(adjusted - true)`` and, with a ``cut`` (on the data's scale),
    the decision accuracy (the share of papers whose pass/fail on the adjusted score is the one on
    the true score) and the shares passing on the adjusted and on the true scores.  RMSE
    ``sqrt(mean((adjusted - true)**2))`` (Tables 7, 14), maximum |difference| (Table 12), Pearson's
    r (nan when either side is constant; Table 11); and the conditional bias by decile of the true
    score, its worst decile and the RMSE of the lowest and highest deciles (:func:`conditional_bias`)."""
    P = np.asarray(adjusted, dtype=np.float64)
    T = np.asarray(true, dtype=np.float64)
    if P.shape != T.shape:
        raise ValueError(f"arrays differ in shape: {P.shape} and {T.shape}")
    D = P - T
    out = {"rmse": np.sqrt(np.mean(D ** 2, axis=1)), "r": np.full(P.shape[0], np.nan),
           "maxdiff": np.max(np.abs(D), axis=1), "bias": np.mean(D, axis=1)}
    if P.shape[1] >= 2:
        da = P - P.mean(axis=1, keepdims=True)
        db = T - T.mean(axis=1, keepdims=True)
        num, sq = np.empty(P.shape[0]), np.empty(P.shape[0])
        for b in range(P.shape[0]):     # BLAS dot products on 1-d vectors: each row as on its own
            num[b] = da[b] @ db[b]
            sq[b] = (da[b] @ da[b]) * (db[b] @ db[b])
        denom = np.sqrt(sq)
        ok = denom != 0
        out["r"][ok] = np.clip(num[ok] / denom[ok], -1.0, 1.0)
    out.update(conditional_bias(P, T))
    if cut is not None:
        pp, pt = passes(P, cut), passes(T, cut)
        out.update(accuracy=np.mean(pp == pt, axis=1), pass_adjusted=np.mean(pp, axis=1),
                   pass_true=np.mean(pt, axis=1))
    return out


def conditional_bias(adjusted, true) -> dict:
    """What shrinkage costs, per data set (rows of ``(B, n)`` arrays): the papers are put in deciles
    of their true score (paper of rank ``q`` among ``n``, ties in paper order, in decile
    ``floor(10 q / n) + 1``); ``cbias_d1`` .. ``cbias_d10`` are the mean ``adjusted - true`` in each
    decile (the conditional bias: a shrunk score is too high at the bottom, too low at the top),
    ``cbias_worst`` the largest of their absolute values, and ``rmse_bottom`` / ``rmse_top`` the
    RMSE over the papers of the lowest and of the highest decile (nan: an empty decile)."""
    P = np.asarray(adjusted, dtype=np.float64)
    T = np.asarray(true, dtype=np.float64)
    B, n = T.shape
    rank = np.empty((B, n), dtype=np.int64)
    np.put_along_axis(rank, np.argsort(T, axis=1, kind="stable"), np.arange(n)[None, :].repeat(B, 0), axis=1)
    dec = (rank * DECILES) // max(n, 1)
    key = (np.arange(B)[:, None] * DECILES + dec).ravel()
    D = (P - T).ravel()
    cnt = np.bincount(key, minlength=B * DECILES).reshape(B, DECILES)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(key, weights=D, minlength=B * DECILES).reshape(B, DECILES) / cnt
        msq = np.bincount(key, weights=D * D, minlength=B * DECILES).reshape(B, DECILES) / cnt
    out = {f"cbias_d{d + 1}": mean[:, d] for d in range(DECILES)}
    absmean = np.abs(mean)
    worst = np.where(np.isnan(absmean).all(axis=1), np.nan, np.nanmax(np.where(np.isnan(absmean), -np.inf, absmean),
                                                                       axis=1))
    out.update(cbias_worst=worst, rmse_bottom=np.sqrt(msq[:, 0]), rmse_top=np.sqrt(msq[:, -1]))
    return out


def score_set(adjusted, true, cut: float | None = None) -> dict:
    """:func:`score_sets` of one data set: the criteria of one method's paper scores, as the study
    files (``ratercal score``) and the Monte Carlo rows report them (numbers, nan when empty)."""
    a, t = _pair(adjusted, true)
    if not a.size:
        return {k: float("nan") for k in SET_CRITERIA if cut is not None or k not in _CUT_CRITERIA}
    return {k: float(v[0]) for k, v in score_sets(a[None], t[None], cut).items()}
