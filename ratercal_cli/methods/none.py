"""NO: no equating (EZEQ.BAS, first block).

Each rating keeps its raw score; the paper's score is the mean of its ratings,
``adj = adj + x%(i, j)`` ... ``PRINT #2, adj / mj``.
"""

from __future__ import annotations

import numpy as np

from ..vocabulary import DEFAULT_VARIANT
from .base import RaterAdjuster


class NoEquating(RaterAdjuster):
    """No adjustment: ``adj = x``; paper score ``sum(x) / mj``.

    The faithful variant divides in single precision like the BASIC; the
    corrected one in double.  (The two differ only in the 8th digit.)
    """

    code = "NO"

    def __init__(self, variant: str = DEFAULT_VARIANT):
        self.variant = variant

    def _fit(self, ratings):
        self.n_ratings_ = np.bincount(ratings.rater, minlength=ratings.n_raters)

    def _adjust_ratings(self, ratings):
        return ratings.score.astype(np.float64)
