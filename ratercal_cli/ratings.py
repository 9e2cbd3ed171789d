"""The container every method and criterion accepts: one data set of ratings.

A rating is (paper, rater, score).  Papers and raters are held as dense integer
indices ``0..n_papers-1`` and ``0..n_raters-1``; the labels they came with are kept
in ``paper_ids`` and ``rater_ids`` so that outputs can name them again.

Ratings are kept in the order they were written (for simulated data: the order of
the BASIC .OBS file, paper by paper); the faithful methods depend on nothing else.
In Denny's simulated sets rater index ``j`` is BASIC rater ``j + 1``, so the last
rater (index 8) is the one the BASIC pairwise programs use as reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Ratings:
    """One data set: per-rating arrays of equal length plus the scale.

    Attributes
    ----------
    paper, rater : int arrays, dense indices of each rating's paper and rater.
    score : int array, the observed score, 0..max_score.
    max_score : int, M, the top of the scale (scores are 0..M).
    n_papers, n_raters : sizes; a rater may have no ratings (``n_raters`` is the
        design's number of raters, e.g. 9 in the simulation).
    paper_ids, rater_ids : labels of the indices (default: 1-based numbers).
    """

    paper: np.ndarray
    rater: np.ndarray
    score: np.ndarray
    max_score: int
    n_papers: int
    n_raters: int
    paper_ids: tuple = field(default=())
    rater_ids: tuple = field(default=())

    def __post_init__(self):
        paper = np.ascontiguousarray(self.paper, dtype=np.int64)
        rater = np.ascontiguousarray(self.rater, dtype=np.int64)
        score = np.ascontiguousarray(self.score, dtype=np.int64)
        if not (paper.shape == rater.shape == score.shape) or paper.ndim != 1:
            raise ValueError("paper, rater and score must be 1-d arrays of equal length")
        if paper.size and (paper.min() < 0 or paper.max() >= self.n_papers):
            raise ValueError("paper index out of range")
        if rater.size and (rater.min() < 0 or rater.max() >= self.n_raters):
            raise ValueError("rater index out of range")
        if score.size and (score.min() < 0 or score.max() > self.max_score):
            raise ValueError(f"score outside 0..{self.max_score}")
        object.__setattr__(self, "paper", paper)
        object.__setattr__(self, "rater", rater)
        object.__setattr__(self, "score", score)
        if not self.paper_ids:
            object.__setattr__(self, "paper_ids", tuple(range(1, self.n_papers + 1)))
        if not self.rater_ids:
            object.__setattr__(self, "rater_ids", tuple(range(1, self.n_raters + 1)))

    # -- construction -------------------------------------------------------------
    @classmethod
    def from_labels(cls, papers, raters, scores, max_score, rater_ids=None):
        """Build from label sequences; papers keep first-seen order, raters sort.

        ``rater_ids`` fixes the rater set and order (e.g. ``range(1, 10)`` for the
        nine simulated raters, some of whom may have rated nothing).
        """
        papers = list(papers)
        raters = list(raters)
        paper_ids = tuple(dict.fromkeys(papers))
        if rater_ids is None:
            rater_ids = tuple(sorted(set(raters)))
        rater_ids = tuple(rater_ids)
        pidx = {p: i for i, p in enumerate(paper_ids)}
        ridx = {r: i for i, r in enumerate(rater_ids)}
        return cls(
            paper=np.array([pidx[p] for p in papers], dtype=np.int64),
            rater=np.array([ridx[r] for r in raters], dtype=np.int64),
            score=np.asarray(scores, dtype=np.int64),
            max_score=int(max_score),
            n_papers=len(paper_ids),
            n_raters=len(rater_ids),
            paper_ids=paper_ids,
            rater_ids=rater_ids,
        )

    # -- views --------------------------------------------------------------------
    @property
    def n_ratings(self) -> int:
        return int(self.score.size)

    def ratings_per_paper(self) -> np.ndarray:
        return np.bincount(self.paper, minlength=self.n_papers)

    def ratings_per_rater(self) -> np.ndarray:
        return np.bincount(self.rater, minlength=self.n_raters)

    def paper_mean(self, values=None) -> np.ndarray:
        """Mean per paper of ``values`` (default: the raw scores), float64."""
        v = self.score if values is None else values
        sums = np.bincount(self.paper, weights=np.asarray(v, dtype=np.float64), minlength=self.n_papers)
        return sums / np.maximum(self.ratings_per_paper(), 1)

    def max_raters_per_paper(self) -> int:
        counts = self.ratings_per_paper()
        return int(counts.max()) if counts.size else 0

    def subset(self, mask) -> "Ratings":
        """The ratings where ``mask`` is true, with the same papers and raters."""
        mask = np.asarray(mask, dtype=bool)
        return Ratings(self.paper[mask], self.rater[mask], self.score[mask], self.max_score,
                       self.n_papers, self.n_raters, self.paper_ids, self.rater_ids)


@dataclass(frozen=True)
class Adjusted:
    """What a method's ``transform`` returns.

    rating : float array, one adjusted score per rating (same order as the input).
    paper : float array, one adjusted score per paper (usually the mean of its
        adjusted ratings; the PCM gives the mean expected score over all raters).
    """

    rating: np.ndarray
    paper: np.ndarray
