"""LI and TLI: linear equating (EZEQ.BAS, third block).

``sd(j) = SQR((ss(j) - s(j) ^ 2 / n(j)) / n(j))`` (the SD divides by n) and
``sc = (x%(i, j) - mn(aj)) / sd(aj) * sd(0) + mn(0)``: a rating keeps its z-score
within its rater's ratings, re-expressed on the overall mean and SD (Denny 1990,
p. 11).  TLI clips to ``[0, M]``.  The paper's score is the mean of its adjusted
ratings.
"""

from __future__ import annotations

import numpy as np

from ..arguments import check_count
from ..errors import MethodError
from ..vocabulary import DEFAULT_VARIANT
from ._single import F32, at_rater, sums_by, rater_sums
from .base import RaterAdjuster, clip_to_scale

#: What to do with a rater whose SD is 0 (all ratings equal).
ZERO_SD_RULES = ("mean", "shift", "raw", "error")


class LinearEquating(RaterAdjuster):
    """Linear equating: ``adj = (x - mean_j) / sd_j * sd + mean``.

    Parameters
    ----------
    variant : ``"faithful"`` follows EZEQ.BAS step by step in single precision
        (SDs dividing by n); ``"corrected"`` computes in double with ``ddof``.
    truncate : clip adjusted ratings to ``[0, M]`` (TLI).
    ddof : SD divisor ``n - ddof``.  Default 0 (the BASIC) for faithful, 1 (the
        sample SD) for corrected; applied to the rater SDs and the overall SD.
    zero_sd : a rater whose ratings are all equal has SD 0 and the BASIC divides
        by zero (set 1151, rater 1).  ``"mean"``: take the z-score as 0, so every
        rating of that rater becomes the overall mean (what a 0/0 read as 0
        gives; the faithful default); ``"shift"``: mean-equate that rater,
        ``x - mean_j + mean`` (the corrected default: with no spread there is
        no slope to estimate, only a level); ``"raw"``: leave the ratings
        unadjusted; ``"error"``: raise :class:`MethodError`; a number: every
        rating of that rater becomes that number (to try guesses at what the
        BASIC printed after 0/0).  On the data fitted, ``"mean"`` and
        ``"shift"`` agree (all the rater's ratings equal the rater's mean); they
        differ only when transforming other ratings.
    min_ratings : raters with fewer ratings than this are left unadjusted.
        Default 1 for faithful, 2 for corrected (a single rating has no SD; with
        ``min_ratings=1`` such a rater falls under ``zero_sd``).

    Fitted attributes
    -----------------
    n_, mean_, sd_ : per rater (nan without ratings); ``grand_mean_``,
    ``grand_sd_`` : over all ratings; ``slope_``, ``intercept_`` : the per-rater
    line ``adj = intercept_ + slope_ * x`` (corrected arithmetic; the faithful
    transform recomputes the BASIC expression in single precision);
    ``zero_sd_`` : raters handled by the ``zero_sd`` rule.
    """

    @property
    def code(self):
        return "TLI" if self.truncate else "LI"

    def __init__(self, variant: str = DEFAULT_VARIANT, truncate: bool = False, ddof=None,
                 zero_sd=None, min_ratings=None):
        self.variant = variant
        self.truncate = truncate
        self.ddof = ddof
        self.zero_sd = zero_sd
        self.min_ratings = min_ratings

    # -- resolved defaults -----------------------------------------------------------
    def _ddof(self):
        if self.ddof is None:
            return 0 if self.variant == "faithful" else 1
        return check_count(self.ddof, "ddof", 0)

    def _zero_sd(self):
        rule = self.zero_sd if self.zero_sd is not None else ("mean" if self.variant == "faithful" else "shift")
        if isinstance(rule, (int, float, np.number)) and not isinstance(rule, bool):
            return float(rule)
        if rule not in ZERO_SD_RULES:
            from ..errors import ArgumentError

            raise ArgumentError("zero_sd", f"must be one of {ZERO_SD_RULES} or a number, not {rule!r}")
        return rule

    def _min_ratings(self):
        if self.min_ratings is not None:   # (-1 was taken as 1 without a word)
            return max(check_count(self.min_ratings, "min_ratings", 0), 1)
        return 1 if self.variant == "faithful" else 2

    handles_thin_raters = True   # min_ratings: the target mean (and SD) still count every rating

    def min_ratings_used(self):
        return self._min_ratings()

    # -- fit -----------------------------------------------------------------------
    def _fit(self, ratings):
        zero = self._fit_arrays(ratings.rater, ratings.score, ratings.n_raters, ratings.max_score)
        self.zero_sd_ = np.flatnonzero(zero)
        if self._zero_sd() == "error" and self.zero_sd_.size:
            ids = [ratings.rater_ids[i] for i in self.zero_sd_]
            raise MethodError(f"{self.code}: rater(s) {ids} have SD 0; linear equating divides by it")

    def _adjust_ratings(self, ratings):
        return self._adjust_arrays(ratings.rater, ratings.score, ratings.max_score)

    # -- the arithmetic, on one data set (L,) or a stack of replications (B, L) ---------
    def _fit_arrays(self, rater, score, n_raters, max_score=None):
        """The fitted attributes from per-rating arrays (with ``(B, L)`` arrays, the Monte Carlo
        fast path, each gets the leading replication axis); returns the mask of raters under
        the ``zero_sd`` rule."""
        rule = self._zero_sd()
        ddof = self._ddof()
        if self.variant == "faithful":
            n, s, ss, n0, s0, ss0 = rater_sums(rater, score, n_raters, F32)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = (s / n).astype(F32)
                grand_mean = F32(s0 / n0)
                sd = _sd_single(n, s, ss, ddof)
                grand_sd = _sd_single(*(np.asarray(t) for t in (n0, s0, ss0)), ddof)
            dtype = F32
        else:
            x = score.astype(np.float64)
            n, s, _, n0, s0, _ = rater_sums(rater, score, n_raters, np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = s / n
                sd = np.sqrt(sums_by(rater, n_raters, (x - at_rater(mean, rater)) ** 2) / (n - ddof))
                grand_mean = s0 / n0
                grand_sd = np.sqrt(((x - grand_mean[..., None]) ** 2).sum(axis=-1) / (n0 - ddof))
            dtype = np.float64
        n_int = n.astype(np.int64)
        sd = np.where(n_int > ddof, sd, 0).astype(dtype)
        mean[n_int == 0] = np.nan
        sd[n_int == 0] = np.nan
        self.n_, self.mean_, self.sd_ = n_int, mean, sd
        self.grand_mean_, self.grand_sd_ = dtype(grand_mean), dtype(grand_sd)

        used = n_int >= self._min_ratings()
        zero = used & (sd == 0)
        if rule == "error" and zero.any():
            return zero
        with np.errstate(invalid="ignore", divide="ignore"):
            slope = np.float64(self.grand_sd_)[..., None] / sd.astype(np.float64)
        slope = np.where(used, slope, 1.0)
        slope[zero] = {"mean": 0.0, "shift": 1.0, "raw": 1.0}.get(rule, 0.0)
        intercept = np.float64(self.grand_mean_)[..., None] - slope * mean.astype(np.float64)
        intercept[~used] = 0.0
        if rule == "raw":
            intercept[zero] = 0.0
        elif isinstance(rule, float):
            intercept[zero] = rule
        intercept[n_int == 0] = np.nan
        slope[n_int == 0] = np.nan
        self.slope_, self.intercept_ = slope, intercept
        return zero

    # -- transform -----------------------------------------------------------------
    def _adjust_arrays(self, rater, score, max_score):
        if self.variant == "faithful":
            x = score.astype(F32)
            sd = at_rater(self.sd_, rater)
            with np.errstate(invalid="ignore", divide="ignore"):
                z = ((x - at_rater(self.mean_, rater)).astype(F32) / sd).astype(F32)
            adj = ((z * self.grand_sd_[..., None]).astype(F32) + self.grand_mean_[..., None]).astype(F32)
            # raters under the zero-SD rule or below min_ratings: the fitted line
            special = (sd == 0) | (at_rater(self.n_, rater) < self._min_ratings())
            if special.any():
                line = (at_rater(self.intercept_, rater) + at_rater(self.slope_, rater) * score).astype(F32)
                adj = np.where(special, line, adj)
        else:
            adj = at_rater(self.intercept_, rater) + at_rater(self.slope_, rater) * score
        if self.truncate:
            adj = clip_to_scale(adj, max_score)
        return adj


def _sd_single(n, s, ss, ddof):
    """EZEQ.BAS's ``SQR((ss - s ^ 2 / n) / (n - ddof))``, every step rounded to single."""
    q = ((s * s).astype(F32) / n).astype(F32)
    v = ((ss - q).astype(F32) / (n - F32(ddof))).astype(F32)
    return np.sqrt(np.maximum(v, F32(0))).astype(F32)
