"""A method of your own in the Monte Carlo study: truncated *median* equating.

Named in a config as ``user_method:MedianEquating`` (``examples/user_method.yaml``; the config's
folder is searched first, so this file is found beside it).  Any class with ``fit(ratings)``
returning itself and ``transform(ratings)`` giving per-rating and per-paper scores will do; see
``ratercal_cli/methods/user.py``.

Each rater's scores are shifted by the grand median minus the rater's median, then truncated to
the scale (as TMN does with means); a paper's score is the mean of its adjusted ratings.  A rater
with fewer than ``min_ratings`` ratings is left alone.
"""

import numpy as np

from ratercal_cli.ratings import Adjusted


class MedianEquating:
    needs_multiple_raters = False
    min_ratings = 2

    def fit(self, ratings):
        grand = float(np.median(ratings.score))
        self.shift_ = np.zeros(ratings.n_raters)
        for j in range(ratings.n_raters):
            mine = ratings.score[ratings.rater == j]
            if mine.size >= self.min_ratings:
                self.shift_[j] = grand - float(np.median(mine))
        return self

    def transform(self, ratings):
        rating = np.clip(ratings.score + self.shift_[ratings.rater], 0, ratings.max_score)
        return Adjusted(rating=rating, paper=ratings.paper_mean(rating))
