"""The one service that applies adjustment methods to a set of ratings.

Used by all three products: the study's ``equate`` stage, the Monte Carlo replications and the
practitioners' ``adjust``/``compare``.  Each method is made for the variant, fitted and
applied; a method that needs two raters per paper is not run on one-rater data (as OLS.BAS
chained straight to MORE.BAS when MJ = 1), and a method whose fit fails on these data
(:data:`FIT_FAILURES`) is skipped with its reason, or, with ``strict``, stops everything with a
one-line :class:`~ratercal_cli.errors.MethodError`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import MethodError, RatercalError
from ..ratings import Adjusted, Ratings
from ..vocabulary import DEFAULT_VARIANT, NEEDS_TWO_RATERS
from . import make_method
from .base import FIT_FAILURES


@dataclass
class Applied:
    """What :func:`apply_methods` made: per method code, in the order asked for."""

    adjusted: dict = field(default_factory=dict)     # code -> Adjusted
    estimators: dict = field(default_factory=dict)   # code -> the fitted estimator
    skipped: dict = field(default_factory=dict)      # code -> reason (one line)
    errors: dict = field(default_factory=dict)       # code -> the exception of a failed fit
    #: the codes skipped because the data have one rater per paper (a subset of ``skipped``)
    not_applicable: tuple = ()


def failure_reason(exc: BaseException) -> str:
    """One line naming what went wrong: ``LinAlgError: Singular matrix`` (a study's record of a failed fit)."""
    return f"{type(exc).__name__}: {exc}".replace("\r", " ").replace("\n", " ")


def apply_methods(ratings: Ratings, methods, variant: str = DEFAULT_VARIANT, strict: bool = False,
                  timings: dict | None = None) -> Applied:
    """Fit and transform every method of ``methods`` on ``ratings``.

    ``strict``: a method that cannot run raises :class:`MethodError` (``"OLS: ..."``) instead of
    being skipped.  ``timings``: a dict to which each method's seconds are added under
    ``(variant, code)`` (the benchmark's profile).
    """
    out = Applied()
    one_rater = ratings.max_raters_per_paper() < 2
    na = []
    for code in methods:
        est = make_method(code, variant)
        if est.needs_multiple_raters and one_rater:
            if strict:
                raise MethodError(f"{code} {NEEDS_TWO_RATERS}; these data have one rater per paper")
            out.skipped[code] = NEEDS_TWO_RATERS
            na.append(code)
            continue
        t0 = time.perf_counter()
        try:
            adj = est.fit_transform(ratings)
            if np.shape(adj.paper) != (ratings.n_papers,):
                raise MethodError(f"{np.size(adj.paper)} paper scores for {ratings.n_papers} papers")
        except FIT_FAILURES as exc:
            if strict:   # (a method's own error by its message, not "MML: MethodError: MML (PCM): ...")
                why = failure_reason(exc).removeprefix("MethodError: ") if str(exc) else failure_reason(exc)
                raise MethodError(why if why.startswith((f"{code} ", f"{code}:")) else f"{code}: {why}") from exc
            out.skipped[code] = failure_reason(exc)
            out.errors[code] = exc
            continue
        finally:
            if timings is not None:
                timings[(variant, code)] = timings.get((variant, code), 0.0) + time.perf_counter() - t0
        out.adjusted[code] = adj
        out.estimators[code] = est
    out.not_applicable = tuple(na)
    return out


def non_finite_count(adj: Adjusted) -> int:
    """Adjusted scores that are not finite (e.g. linear equating of a rater whose scores do not vary)."""
    return int((~np.isfinite(adj.rating)).sum() + (~np.isfinite(adj.paper)).sum())


@dataclass
class CellApplied:
    """:func:`apply_methods` on one cell of facet levels: its ``labels``, which ratings (``mask``),
    those ratings (``ratings``: every paper and rater of the whole, scored in this cell only) and
    what the methods made of them."""

    labels: tuple
    mask: np.ndarray
    ratings: Ratings
    applied: Applied


def apply_within_cells(ratings: Ratings, methods, variant: str = DEFAULT_VARIANT, strict: bool = False,
                       timings: dict | None = None) -> list:
    """Every method within each cell of facet levels on its own (:meth:`Ratings.facet_cells`: an
    analytic rubric's criteria), as the dissertation applies a method to one data set: a
    :class:`CellApplied` per cell, in the cells' order.  ``strict``: the one-line error names the
    cell (``c2: OLS: ...``)."""
    cell, labels = ratings.facet_cells()
    out = []
    for c, lab in enumerate(labels):
        mask = cell == c
        sub = ratings.subset(mask)
        try:
            applied = apply_methods(sub, methods, variant, strict=strict, timings=timings)
        except RatercalError as exc:
            raise RatercalError(f"{' x '.join(map(str, lab))}: {exc}") from None
        out.append(CellApplied(lab, mask, sub, applied))
    return out


def mean_over_cells(scores):
    """Each paper's mean over the cells (the last axis of ``scores``) it has a finite score in; nan
    for a paper with none (a rubric's total over its criteria, divided by their number)."""
    scores = np.asarray(scores, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        n = np.isfinite(scores).sum(axis=-1)
        return np.where(n > 0, np.nansum(scores, axis=-1) / np.maximum(n, 1), np.nan)


def combined_scores(parts, code, n_ratings):
    """``(Adjusted, paper score of each rating)``: method ``code``'s scores over the cells of
    :func:`apply_within_cells` (it ran in every one): each rating's adjusted score, each paper's
    mean over its cells (:func:`mean_over_cells`) and each rating's paper score in its cell."""
    rating, of_rating = np.full(n_ratings, np.nan), np.full(n_ratings, np.nan)
    for p in parts:
        adj = p.applied.adjusted[code]
        rating[p.mask], of_rating[p.mask] = adj.rating, np.asarray(adj.paper)[p.ratings.paper]
    paper = mean_over_cells(np.stack([p.applied.adjusted[code].paper for p in parts], axis=-1))
    return Adjusted(rating=rating, paper=paper), of_rating
