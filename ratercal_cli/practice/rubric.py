"""Adjusting ratings that carry further facets (an analytic rubric's criteria, tasks, sessions).

A rating is (paper, rater, score) at one combination of facet levels (``Ratings.facets``); a paper
has one score per combination (a *cell*: criterion "org", or criterion "org" x task 2) and a rubric
total over its cells.

* The model-based methods (``MFRM``, ``MML``) fit all the ratings at once with the facets as
  additive main effects (Facets' ``?,?,?,R``); a paper's score in a cell is the fair score at its
  measure for the cell: the mean over the raters of their expected scores with the cell's facet
  effects added (``fair="mean-rater"``), i.e. ``fair_scores(theta - effect of the cell)``.
* Every other method is applied within each cell on its own (each criterion equated on its own
  raters' scores there), as the dissertation applies a method to one data set.

A paper's total (:func:`paper_total`) is the sum over the cells it was scored in (``total="sum"``,
a rubric's total score) or their mean (``"mean"``), on the file's scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import MethodError, RatercalError
from ..ratings import Adjusted, Ratings

MODEL_BASED = ("MFRM", "MML")
TOTALS = ("sum", "mean")


def cells(ratings: Ratings):
    """``(cell, labels)``: each rating's combination of facet levels (0..C-1) and each cell's labels
    (a tuple of level labels, one per facet in ``ratings.facets``' order)."""
    names = list(ratings.facets)
    if not names:
        return np.zeros(ratings.n_ratings, dtype=np.int64), [()]
    levels = np.column_stack([ratings.facets[f][0] for f in names])
    combos, cell = np.unique(levels, axis=0, return_inverse=True)
    labels = [tuple(ratings.facets[f][1][k] for f, k in zip(names, row)) for row in combos]
    return cell.ravel(), labels


def cell_name(labels) -> str:
    return " x ".join(str(x) for x in labels)


@dataclass
class FacetAdjustment:
    """One method's scores on facetted ratings: ``adjusted`` (per rating; ``paper`` the mean of the
    paper's cell scores, on 0..M), ``cell_scores`` (papers x cells, nan where a paper has no rating in
    a cell), the cells' ``labels`` and the fitted ``estimators`` (one per cell, or one for all)."""

    adjusted: Adjusted
    cell_scores: np.ndarray
    labels: list
    estimators: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


def facet_levels_matrix(ratings: Ratings):
    """The facets' levels as the MML engine takes them: a vector for one facet, (n, F) for several."""
    names = list(ratings.facets)
    if len(names) == 1:
        return ratings.facets[names[0]][0]
    return np.column_stack([ratings.facets[f][0] for f in names])


def _cell_effects(est, ratings: Ratings, cell, n_cells):
    """Each cell's summed facet effect (logits) from a fitted marginal model."""
    names = list(ratings.facets)
    eff = np.zeros(n_cells)
    res = est.result_
    effects = getattr(res, "effects", None) or {}
    first = np.unique(cell, return_index=True)[1]
    for k, f in enumerate(names):
        est_f = effects.get(f"facet{k}", (None,))[0] if effects else (est.facet_ if k == 0 else None)
        if est_f is None:
            raise MethodError(f"{est.code}: the fit has no effects of facet {f}")
        eff += np.asarray(est_f)[ratings.facets[f][0][first]]
    return eff


def fit_model_based(code, ratings: Ratings, variant=None):
    """``MFRM``/``MML`` on all the ratings with the facets as main effects: FacetAdjustment."""
    from ..methods import make_method

    cell, labels = cells(ratings)
    est = make_method(code) if variant is None else make_method(code, variant)
    facet = facet_levels_matrix(ratings)
    try:
        est.fit(ratings, facet=facet)
    except ValueError as exc:
        if np.ndim(facet) == 2:
            raise MethodError(f"{code}: this version's model takes one further facet, not {facet.shape[1]}") from exc
        raise
    eff = _cell_effects(est, ratings, cell, len(labels))
    theta = est.quality_
    scores = np.column_stack([est.fair_scores(theta - e) for e in eff])
    has = np.zeros((ratings.n_papers, len(labels)), dtype=bool)
    has[ratings.paper, cell] = True
    scores[~has] = np.nan
    rating = scores[ratings.paper, cell]
    paper = _mean_over_cells(scores)
    return FacetAdjustment(Adjusted(rating=rating, paper=paper), scores, labels, [est], list(est.warnings_))


def _mean_over_cells(scores):
    with np.errstate(invalid="ignore"):
        n = np.isfinite(scores).sum(axis=1)
        return np.where(n > 0, np.nansum(scores, axis=1) / np.maximum(n, 1), np.nan)


def apply_within_cells(code, ratings: Ratings, variant, strict=True, prefix=""):
    """A classical method within each cell on its own: FacetAdjustment (``warnings``: cells skipped)."""
    from ..methods.apply import apply_methods

    cell, labels = cells(ratings)
    rating = np.full(ratings.n_ratings, np.nan)
    scores = np.full((ratings.n_papers, len(labels)), np.nan)
    ests, warnings = [], []
    for c, lab in enumerate(labels):
        mask = cell == c
        sub = ratings.subset(mask)
        try:
            applied = apply_methods(sub, [code], variant, strict=strict)
        except RatercalError as exc:
            raise RatercalError(f"{prefix}{cell_name(lab)}: {exc}") from None
        if code not in applied.adjusted:
            warnings.append(f"{prefix}{code} skipped in {cell_name(lab)}: {applied.skipped.get(code, '')}")
            continue
        adj = applied.adjusted[code]
        rating[mask] = adj.rating
        got = sub.ratings_per_paper() > 0
        scores[got, c] = adj.paper[got]
        ests.append(applied.estimators[code])
    return FacetAdjustment(Adjusted(rating=rating, paper=_mean_over_cells(scores)), scores, labels, ests, warnings)


def adjust_facets(code, ratings: Ratings, variant, strict=True, prefix="") -> FacetAdjustment:
    """Method ``code`` on facetted ratings (module docstring)."""
    if code in MODEL_BASED:
        return fit_model_based(code, ratings)
    return apply_within_cells(code, ratings, variant, strict, prefix)


def paper_total(cell_scores, low: int, total: str = "sum"):
    """Each paper's rubric total on the file's scale from its cell scores (``0..M``): the sum over the
    cells it was scored in of ``score + low``, or their mean; nan for a paper with no cell score."""
    if total not in TOTALS:
        raise ValueError(f"total must be one of {TOTALS}, not {total!r}")
    s = np.asarray(cell_scores, dtype=float) + low
    n = np.isfinite(s).sum(axis=1)
    out = np.nansum(s, axis=1) if total == "sum" else np.nansum(s, axis=1) / np.maximum(n, 1)
    return np.where(n > 0, out, np.nan)
