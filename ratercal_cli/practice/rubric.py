"""Adjusting ratings that carry further facets (an analytic rubric's criteria, tasks, sessions).

A rating is (paper, rater, score) at one combination of facet levels (``Ratings.facets``); a paper
has one score per combination (a *cell*: criterion "org", or criterion "org" x task 2) and a rubric
total over its cells.

* The model-based methods (``MFRM``, ``MML``) fit all the ratings at once with the facets as
  additive main effects (Facets' ``?,?,?,R``); a paper's score in a cell is the fair score at its
  measure for the cell: the mean over the raters of their expected scores with the cell's facet
  effects added (``fair="mean-rater"``), i.e. ``fair_scores(theta - effect of the cell)``.
* Every other method is applied within each cell on its own (each criterion equated on its own
  raters' scores there), as the dissertation applies a method to one data set; or, with
  ``shared_raters=True`` (``--shared-raters``), once over all the cells with one parameter set per
  rater (:func:`apply_shared_raters`): each paper x cell is then a "paper" of its own, so a rater's
  mean, spread, percentiles or least-squares effect come from all its ratings over the criteria and
  adjust each of them alike (Facets' model with a rater's severity shared across criteria, carried
  to the classical methods).  The model-based methods share a rater's severity across the cells
  always.

A paper's total (:func:`paper_total`) is the sum over the cells it was scored in (``total="sum"``,
a rubric's total score) or their mean (``"mean"``), on the file's scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import MethodError, RatercalError
from ..methods.apply import mean_over_cells
from ..ratings import Adjusted, Ratings

MODEL_BASED = ("MFRM", "MML")
TOTALS = ("sum", "mean")


def cells(ratings: Ratings):
    """``(cell, labels)``: :meth:`Ratings.facet_cells`."""
    return ratings.facet_cells()


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
    """The facets' levels as the MML engine takes them (:meth:`Ratings.facet_levels`)."""
    return ratings.facet_levels()


def _cell_effects(est, ratings: Ratings, cell, n_cells):
    """Each cell's summed facet effect (logits) from a fitted marginal model."""
    names = list(ratings.facets)
    eff = np.zeros(n_cells)
    res = est.result_
    estimates = getattr(res, "estimates", None) or {}   # (not ``effects``: their SEs cost an information)
    first = np.unique(cell, return_index=True)[1]
    for k, f in enumerate(names):
        est_f = estimates.get(f"facet{k}") if estimates else (est.facet_ if k == 0 else None)
        if est_f is None:
            raise MethodError(f"{est.code}: the fit has no effects of facet {f}")
        eff += np.asarray(est_f)[ratings.facets[f][0][first]]
    return eff


def fit_model_based(code, ratings: Ratings, variant=None, est=None):
    """``MFRM``/``MML`` on all the ratings with the facets as main effects: FacetAdjustment (``est``: an
    estimator already fitted to them, e.g. anchored)."""
    from ..methods import make_method

    cell, labels = cells(ratings)
    if est is None:
        est = make_method(code) if variant is None else make_method(code, variant)
        est.fit(ratings, facet=facet_levels_matrix(ratings))
    scores = model_cell_scores(est, ratings, est.quality_)
    rating = scores[ratings.paper, cell]
    paper = mean_over_cells(scores)
    return FacetAdjustment(Adjusted(rating=rating, paper=paper), scores, labels, [est], list(est.warnings_))


def model_cell_scores(est, ratings: Ratings, theta):
    """Papers x cells: a fitted many-facet model's fair score of each paper in each cell it was
    scored in, at qualities ``theta`` (nan elsewhere): ``fair_scores(theta - effect of the cell)``."""
    cell, labels = cells(ratings)
    eff = _cell_effects(est, ratings, cell, len(labels))
    scores = np.column_stack([est.fair_scores(theta - e) for e in eff])
    has = np.zeros((ratings.n_papers, len(labels)), dtype=bool)
    has[ratings.paper, cell] = True
    scores[~has] = np.nan
    return scores


def cell_effects(est, ratings: Ratings):
    """Each cell's (:func:`cells`) summed facet effect, in logits, of a fitted many-facet model."""
    cell, labels = cells(ratings)
    return _cell_effects(est, ratings, cell, len(labels))


def apply_within_cells(code, ratings: Ratings, variant, strict=True, prefix=""):
    """A classical method within each cell on its own (:func:`ratercal_cli.methods.apply.apply_within_cells`):
    FacetAdjustment (``warnings``: cells skipped)."""
    from ..methods.apply import apply_within_cells as by_cell, mean_over_cells

    rating = np.full(ratings.n_ratings, np.nan)
    try:
        parts = by_cell(ratings, [code], variant, strict=strict)
    except RatercalError as exc:
        raise RatercalError(f"{prefix}{exc}") from None
    labels = [p.labels for p in parts]
    scores = np.full((ratings.n_papers, len(labels)), np.nan)
    ests, warnings = [], []
    for c, part in enumerate(parts):
        if code not in part.applied.adjusted:
            warnings.append(f"{prefix}{code} skipped in {cell_name(part.labels)}: {part.applied.skipped.get(code, '')}")
            continue
        adj = part.applied.adjusted[code]
        rating[part.mask] = adj.rating
        got = part.ratings.ratings_per_paper() > 0
        scores[got, c] = adj.paper[got]
        ests.append(part.applied.estimators[code])
    return FacetAdjustment(Adjusted(rating=rating, paper=mean_over_cells(scores)), scores, labels, ests, warnings)


def apply_shared_raters(code, ratings: Ratings, variant, strict=True, prefix=""):
    """A classical method once over all the cells with one parameter set per rater (module docstring):
    the method sees each paper x cell as a paper (its ratings in that cell), every rater with all its
    ratings; FacetAdjustment (``warnings``: the method skipped)."""
    from ..methods.apply import apply_methods

    cell, labels = cells(ratings)
    pc, pseudo = np.unique(ratings.paper * len(labels) + cell, return_inverse=True)
    pseudo = pseudo.ravel()
    flat = Ratings(pseudo, ratings.rater, ratings.score, ratings.max_score, pc.size, ratings.n_raters,
                   rater_ids=ratings.rater_ids, scale_low=ratings.scale_low, source=ratings.source)
    try:
        applied = apply_methods(flat, [code], variant, strict=strict)
    except RatercalError as exc:
        raise RatercalError(f"{prefix}{exc}") from None
    scores = np.full((ratings.n_papers, len(labels)), np.nan)
    if code not in applied.adjusted:
        return FacetAdjustment(Adjusted(rating=np.full(ratings.n_ratings, np.nan), paper=mean_over_cells(scores)),
                               scores, labels, [], [f"{prefix}{code} skipped: {applied.skipped.get(code, '')}"])
    adj = applied.adjusted[code]
    scores[pc // len(labels), pc % len(labels)] = adj.paper
    return FacetAdjustment(Adjusted(rating=np.asarray(adj.rating, float), paper=mean_over_cells(scores)), scores,
                           labels, [applied.estimators[code]], [])


def adjust_facets(code, ratings: Ratings, variant, strict=True, prefix="", est=None,
                  shared_raters: bool = False) -> FacetAdjustment:
    """Method ``code`` on facetted ratings (module docstring); ``est``: the model-based method already
    fitted (anchored, thresholds per level); ``shared_raters``: a classical method with one parameter
    set per rater over all the cells (:func:`apply_shared_raters`) rather than within each cell."""
    if code in MODEL_BASED:
        return fit_model_based(code, ratings, est=est)
    if shared_raters:
        return apply_shared_raters(code, ratings, variant, strict, prefix)
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


# -- check: the many-facet report ------------------------------------------------------------
@dataclass
class RubricReport:
    """``check`` on facetted ratings: the MFRM with the facets as main effects (raters' severities,
    each facet's level difficulties, with SEs and fit), the category statistics (Facets Table 8) and a
    rater x facet bias table (Tables 13/14) for each facet."""

    model: object
    raters: list
    facets: dict
    categories: list
    bias: dict
    scale_low: int = 0
    notes: list = field(default_factory=list)
    #: the facet whose levels have their own thresholds (``--steps-by``), or None: shared thresholds
    steps_by: str | None = None

    @property
    def thresholds_text(self) -> str:
        return "shared thresholds" if self.steps_by is None else f"thresholds per {self.steps_by}"

    def to_dict(self) -> dict:
        from .text import json_clean

        return json_clean({"model": "MFRM (" + " + ".join(["paper", "rater", *self.facets]) + ", "
                           + self.thresholds_text + "; marginal ML)", "steps_by": self.steps_by,
                           "raters": self.raters, "facets": self.facets,
                           "thresholds": np.asarray(self.model.thresholds_).tolist(),
                           "thresholds_se": np.asarray(self.model.thresholds_se_).tolist(),
                           "categories": [t.to_dict() for t in self.categories],
                           "bias": {f: b.to_dict() for f, b in self.bias.items()}, "notes": self.notes})

    def format_text(self) -> str:
        from .rater_report import DISPLACEMENT_HEADERS, displacement_cells
        from .text import num, text_table

        def with_displacement(head, cells, rows):   # anchored: Facets' Displacement beside the measure
            disp = displacement_cells(rows)
            return (head, cells) if disp is None else (head + DISPLACEMENT_HEADERS,
                                                       [c + d for c, d in zip(cells, disp)])

        L = ["Many-facet Rasch model (MFRM: " + " + ".join(["paper", "rater", *self.facets]) + ", "
             + self.thresholds_text + "; marginal ML; logits, + = lower scores)", ""]
        L += text_table(*with_displacement(
            ["rater", "count", "obs avg", "severity", "S.E.", "infit", "outfit"],
            [[str(r["rater"]), str(r["count"]), num(r["observed_average"], 2), num(r["severity"], 2),
              num(r["se"], 2), num(r["infit"], 2), num(r["outfit"], 2)] for r in self.raters], self.raters))
        for f, rows in self.facets.items():
            L += ["", f"{f}:"]
            L += text_table(*with_displacement(
                [f, "count", "obs avg", "difficulty", "S.E."],
                [[str(r["level"]), str(r["count"]), num(r["observed_average"], 2), num(r["difficulty"], 2),
                  num(r["se"], 2)] for r in rows], rows))
        for t in self.categories:
            L += [""] + t.format_text()
        for b in self.bias.values():
            L += [""] + b.format_text()
        L += [f"  {n}" for n in self.notes]
        return "\n".join(L)


def rubric_check(ratings: Ratings, alpha: float = 0.05, steps_by: str | None = None, est=None) -> RubricReport:
    """The many-facet part of ``check`` on one group's facetted ratings (:class:`RubricReport`);
    ``steps_by``: thresholds per level of that facet; ``est``: the MFRM already fitted."""
    from .anchors import fit_mfrm
    from .bias import bias_table
    from .categories import model_category_tables

    low = ratings.scale_low
    facet = facet_levels_matrix(ratings)
    if est is None:
        est = fit_mfrm(ratings, steps_by=steps_by)[0]
    n = ratings.ratings_per_rater()
    tot = np.bincount(ratings.rater, weights=ratings.score, minlength=ratings.n_raters)
    fit = est.rater_fit_
    raters = [dict(rater=ratings.rater_ids[j], count=int(n[j]), observed_average=float(tot[j] / n[j]) + low,
                   severity=float(est.severity_[j]), se=float(est.severity_se_[j]), infit=float(fit.infit[j]),
                   outfit=float(fit.outfit[j])) for j in np.flatnonzero(n > 0)]
    effects = getattr(est.result_, "effects", None) or {}
    facets = {}
    for k, (name, (lev, labels)) in enumerate(ratings.facets.items()):
        d, se = effects.get(f"facet{k}", (est.facet_, est.facet_se_) if k == 0 else (None, None))
        cnt = np.bincount(lev, minlength=len(labels))
        s = np.bincount(lev, weights=ratings.score, minlength=len(labels))
        # (a level with no rating here, as a group's criterion its papers were not scored on, has no estimate:
        # the fit's levels end at the last one rated, and the table's index ran past them, a traceback)
        fitted = [bool(cnt[i]) and i < len(d) for i in range(len(labels))]
        facets[name] = [dict(level=labels[i], count=int(cnt[i]), observed_average=float(s[i] / cnt[i]) + low
                             if cnt[i] else float("nan"), difficulty=float(d[i]) if fitted[i] else float("nan"),
                             se=float(se[i]) if fitted[i] else float("nan"))
                        for i in range(len(labels))]
    item = est._item_of(ratings, facet)
    by = None if steps_by is None else ratings.facets[steps_by]
    categories = model_category_tables(ratings.score, est.quality_wle_[ratings.paper], est.result_.item_tau[item],
                                       est.thresholds_, est.thresholds_se_, low=low,
                                       mask=est.extreme_[ratings.paper] == 0,
                                       groups=None if by is None else by[0],
                                       group_ids=() if by is None else [f"{steps_by} {x}" for x in by[1]])
    bias = {name: bias_table(ratings, lev, labels, name, main_expected=est.rating_expected_, alpha=alpha,
                             scale_low=low, threshold_levels=lev if name == steps_by else None)
            for name, (lev, labels) in ratings.facets.items()}
    notes = list(est.notes_)
    if steps_by is not None and len(ratings.facets) > 1:
        notes.append(f"the bias tables of facets other than {steps_by} are fitted with shared thresholds")
    return RubricReport(model=est, raters=raters, facets=facets, categories=categories, bias=bias, scale_low=low,
                        notes=notes, steps_by=steps_by)


def cell_parts(ratings: Ratings) -> list:
    """``[(labels, Ratings)]``: each cell's ratings as a data set of its own (its papers and raters
    only, in this one's order), for the checks that take one rating per paper and rater."""
    cell, labels = cells(ratings)
    out = []
    for c, lab in enumerate(labels):
        mask = cell == c
        papers, paper = np.unique(ratings.paper[mask], return_inverse=True)
        raters, rater = np.unique(ratings.rater[mask], return_inverse=True)
        out.append((lab, Ratings(paper=paper.ravel(), rater=rater.ravel(), score=ratings.score[mask],
                                 max_score=ratings.max_score, n_papers=papers.size, n_raters=raters.size,
                                 paper_ids=tuple(ratings.paper_ids[k] for k in papers),
                                 rater_ids=tuple(ratings.rater_ids[k] for k in raters), scale_low=ratings.scale_low,
                                 source=ratings.source,   # (the order of reading: the design readings' first two)
                                 reading_order=None if ratings.reading_order is None else ratings.reading_order[mask])))
    return out


def cell_tag(ratings: Ratings, labels) -> str:
    """``criterion=org`` (``criterion=org, task=2``) for messages."""
    return ", ".join(f"{f}={v}" for f, v in zip(ratings.facets, labels))
