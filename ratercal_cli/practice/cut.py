"""The pass/fail cut a practitioner gives (``--cut`` of check, adjust and compare)."""

from __future__ import annotations

from ..errors import ArgumentError
from ..ratings import Ratings


def check_cut(cut, ratings: Ratings, total: str | None = None):
    """``cut`` as a float, or None; an :class:`InputError` naming ``--cut`` unless it is a finite
    number on the ratings' scale (a cut of 40 on a 1-6 scale passes nobody, silently), or with
    ``total="sum"`` on facetted ratings on the rubric total's range (:func:`score_range`)."""
    if cut is None:
        return None
    try:
        cut = float(cut)
    except (TypeError, ValueError):
        raise ArgumentError("cut", f"must be a number (a score on the scale), not {cut!r}") from None
    low, high = score_range(ratings, total)
    if not (low <= cut <= high):   # also NaN and infinities
        what = "the rubric total's range" if ratings.facets and total == "sum" else "the scale"
        raise ArgumentError("cut", f"the cut {cut:g} is not a score on {what} {low:g}-{high:g}")
    return cut


def score_range(ratings, total: str | None = "sum") -> tuple:
    """The lowest and highest score a cut can be on: the scale, or on facetted ratings the rubric
    total's range (``total="sum"``: the number of cells times the scale's ends; None: the scale)."""
    low, high = ratings.scale_low, ratings.scale_low + ratings.max_score
    if ratings.facets and total == "sum":
        n = len(ratings.facet_cells()[1])
        return n * low, n * high
    return low, high
