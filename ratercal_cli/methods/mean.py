"""MN and TMN: mean equating (EZEQ.BAS, second block).

``sc = x%(i, j) - mn(r%(i, j)) + mn(0)``: each rating moves by the difference
between the overall mean of all ratings, ``mn(0) = s(0) / n(0)``, and its rater's
mean, ``mn(j) = s(j) / n(j)``.  TMN then clips: ``IF tsc > mp THEN tsc = mp ELSE
IF tsc < 0 THEN tsc = 0``.  The paper's score is the mean of its adjusted ratings.
"""

from __future__ import annotations

import numpy as np

from ..arguments import check_count
from ..vocabulary import DEFAULT_VARIANT
from ._single import F32, at_rater, rater_sums
from .base import RaterAdjuster, clip_to_scale


class MeanEquating(RaterAdjuster):
    """Mean equating: ``adj = x - mean_j + mean`` (Denny 1990, p. 11; EZEQ.BAS).

    Parameters
    ----------
    variant : ``"faithful"`` computes in single precision, step by step, as
        EZEQ.BAS does; ``"corrected"`` in double.
    truncate : clip adjusted ratings to ``[0, M]`` (TMN).
    min_ratings : raters with fewer ratings than this are left unadjusted
        (shift 0).  Default: 1 for faithful (the BASIC adjusts every rater, so a
        rater with one rating has it replaced by the overall mean), 2 for
        corrected (one rating says nothing about a rater's level apart from the
        paper's quality).

    Fitted attributes
    -----------------
    n_ : ratings per rater; ``mean_`` : rater means (nan for raters without
    ratings); ``grand_mean_`` : mean of all ratings; ``shift_`` : what is added
    to each of a rater's ratings (``grand_mean_ - mean_``, 0 for raters below
    ``min_ratings``).
    """

    @property
    def code(self):
        return "TMN" if self.truncate else "MN"

    def __init__(self, variant: str = DEFAULT_VARIANT, truncate: bool = False, min_ratings=None):
        self.variant = variant
        self.truncate = truncate
        self.min_ratings = min_ratings

    def _min_ratings(self):
        if self.min_ratings is not None:   # (-1, 0 and 1.5 were taken without a word, 'x' int()'s error)
            return max(check_count(self.min_ratings, "min_ratings", 0), 1)
        return 1 if self.variant == "faithful" else 2

    handles_thin_raters = True   # min_ratings: the target mean (and SD) still count every rating

    def min_ratings_used(self):
        return self._min_ratings()

    def _fit(self, ratings):
        self._fit_arrays(ratings.rater, ratings.score, ratings.n_raters, ratings.max_score)

    def _adjust_ratings(self, ratings):
        return self._adjust_arrays(ratings.rater, ratings.score, ratings.max_score)

    # -- the arithmetic, on one data set (L,) or a stack of replications (B, L) ---------
    def _fit_arrays(self, rater, score, n_raters, max_score=None):
        """The fitted attributes from per-rating arrays; with ``(B, L)`` arrays (the Monte Carlo
        fast path) every attribute gets the leading replication axis."""
        dtype = F32 if self.variant == "faithful" else np.float64
        n, s, _, n0, s0, _ = rater_sums(rater, score, n_raters, dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.mean_ = (s / n).astype(dtype)  # mn(j) = s(j) / n(j)
            self.grand_mean_ = dtype(s0 / n0)  # mn(0) (nan without ratings)
        self.mean_[n == 0] = np.nan
        self.n_ = n.astype(np.int64)
        use = self.n_ >= max(self._min_ratings(), 1)
        self.shift_ = np.where(use, self.grand_mean_[..., None] - self.mean_, 0).astype(dtype)
        self.shift_[self.n_ == 0] = np.nan

    def _adjust_arrays(self, rater, score, max_score):
        if self.variant == "faithful":
            x = score.astype(F32)
            adj = (x - at_rater(self.mean_, rater)).astype(F32) + self.grand_mean_[..., None]
            adj = adj.astype(F32)
            if self._min_ratings() > 1:
                adj = np.where(at_rater(self.n_, rater) >= self._min_ratings(), adj, x)
        else:
            adj = score + at_rater(self.shift_, rater)
        if self.truncate:
            adj = clip_to_scale(adj, max_score)
        return adj
