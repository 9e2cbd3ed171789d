"""MN and TMN: mean equating (EZEQ.BAS, second block).

``sc = x%(i, j) - mn(r%(i, j)) + mn(0)``: each rating moves by the difference
between the overall mean of all ratings, ``mn(0) = s(0) / n(0)``, and its rater's
mean, ``mn(j) = s(j) / n(j)``.  TMN then clips: ``IF tsc > mp THEN tsc = mp ELSE
IF tsc < 0 THEN tsc = 0``.  The paper's score is the mean of its adjusted ratings.
"""

from __future__ import annotations

import numpy as np

from ..vocabulary import DEFAULT_VARIANT
from ._single import F32, rater_sums
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
        if self.min_ratings is not None:
            return int(self.min_ratings)
        return 1 if self.variant == "faithful" else 2

    handles_thin_raters = True   # min_ratings: the target mean (and SD) still count every rating

    def min_ratings_used(self):
        return self._min_ratings()

    def _fit(self, ratings):
        dtype = F32 if self.variant == "faithful" else np.float64
        n, s, _, n0, s0, _ = rater_sums(ratings, dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.mean_ = (s / n).astype(dtype)  # mn(j) = s(j) / n(j)
        self.mean_[n == 0] = np.nan
        self.grand_mean_ = dtype(s0 / n0) if n0 else dtype(np.nan)  # mn(0)
        self.n_ = n.astype(np.int64)
        use = self.n_ >= max(self._min_ratings(), 1)
        self.shift_ = np.where(use, self.grand_mean_ - self.mean_, 0).astype(dtype)
        self.shift_[self.n_ == 0] = np.nan

    def _adjust_ratings(self, ratings):
        r = ratings.rater
        if self.variant == "faithful":
            x = ratings.score.astype(F32)
            adj = (x - self.mean_[r]).astype(F32) + self.grand_mean_
            adj = adj.astype(F32)
            if self._min_ratings() > 1:
                adj = np.where(self.n_[r] >= self._min_ratings(), adj, x)
        else:
            adj = ratings.score + self.shift_[r]
        if self.truncate:
            adj = clip_to_scale(adj, ratings.max_score)
        return adj
