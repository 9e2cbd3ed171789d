"""The rater report of ``ratercal check``, as Facets prints it (Linacre, Facets manual, Tables 7
and 13-14), for any fitted rater model behind a small interface (:class:`RaterModel`).

Per rater: count, total and observed average, fair average (the rater's expected score for a
paper of average measure), measure (severity in logits, + = more severe) with its model S.E.,
infit and outfit mean squares with their Wilson-Hilferty ZSTD (:func:`fit_stats.fit_from_moments`).

Separation (Wright & Masters 1982, ch. 5; Facets' "Population" line) of raters and of papers,
from measures ``d`` with standard errors ``s``:

    RMSE = sqrt(mean s^2),  true var = max(var(d) - RMSE^2, 0)   (var with divisor n),
    separation G = sqrt(true var) / RMSE,  strata H = (4 G + 1) / 3,
    reliability = true var / var(d) = G^2 / (1 + G^2),
    fixed (all same) chi-square  Q = sum w (d - sum w d / sum w)^2,  w = 1 / s^2,  df = n - 1.

Rater x group bias/interaction (the question of Facets' Tables 13-14): each group fitted on its
own, the bias of rater j in group g is its severity there minus its mean over the groups it
scored in, with S.E., t, p and Holm's adjustment over cells (:func:`rater_group_bias`).

The interface: a model gives per rater ``severity`` and ``severity_se``; per paper ``measure``,
``measure_se`` and ``measured`` (papers whose measure is not at an extreme score); per rating
the expected score, variance and fourth central moment (:meth:`RaterModel.moments`) and ``usable`` (ratings that inform the fit); and a fair-average
function (the expected score of a paper of measure theta for an average rater).  :class:`TauModel`
implements it from per-rater cumulative category parameters ``tau`` (Rasch family);
:func:`fit_rater_model` builds it from the rating-scale model by conditional ML
(:mod:`methods.cml`) today, and :func:`from_estimator` from any fitted estimator that carries
``severity_``, ``severity_se_``, ``tau_``, ``quality_``, ``quality_se_`` and ``fair_scores`` (the
marginal ML / many-facet model), or a ``rater_model(ratings)`` method of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..errors import MethodError
from ..fit_stats import fit_from_moments
from ..methods.cml import ConditionalPCM, rsm_severity_se, rsm_severity_wald, too_costly
from ..methods.mml import MarginalRaterModel
from ..methods.quality import category_probabilities, expected_score, extreme_papers, moments
from ..ratings import Ratings, natural_key
from .multiplicity import holm
from .text import num, pvalue, text_table

__all__ = ["RaterModel", "TauModel", "fit_rater_model", "from_estimator", "separation", "rater_report",
           "RaterReport", "rater_group_bias", "format_bias", "wright_map"]


# -- the interface -------------------------------------------------------------------
class RaterModel:
    """What the report needs from a fitted rater model (attributes and methods below).

    name : str, how the report names the model.
    severity, severity_se : (J,) logits (+ = more severe), nan for raters not measured.
    measure, measure_se : (P,) paper measures (logits) and S.E.s; measured : (P,) bool.
    usable : (n,) bool, ratings that enter the fit statistics and the bias analysis.
    thresholds : (M,) or None, the common Rasch-Andrich thresholds (for the Wright map).
    notes : list of str.
    """

    name = "rater model"
    thresholds = None
    notes: list

    def moments(self):
        """Per rating ``(E, W, C)``: expected score, variance, fourth central moment."""
        raise NotImplementedError

    def fair_average(self, theta):
        """Expected score (0..M) of papers of measure ``theta`` for an average rater."""
        raise NotImplementedError

    def rater_expected(self, theta):
        """(J,) each rater's expected score (0..M) for a paper of measure ``theta``."""
        raise NotImplementedError


class TauModel(RaterModel):
    """A Rasch-family model given by cumulative category parameters ``tau`` (J, M+1) per rater
    (severity included; +inf for categories a rater cannot give):
    ``P(x | theta) = exp(x theta - tau[j, x]) / sum_h exp(h theta - tau[j, h])``."""

    def __init__(self, ratings: Ratings, tau, severity, severity_se, measure, measure_se, measured,
                 usable, fair, name="rater model", thresholds=None, notes=(), moments=None, severity_wald=None):
        self.ratings = ratings
        self.severity_wald = severity_wald   # (W, df) of the severities all equal, their covariance counted, or None
        self.tau = np.asarray(tau, dtype=np.float64)
        self._moments = moments   # a model's own per-rating (E, W, C), when tau alone does not give them
        self.severity = np.asarray(severity, dtype=np.float64)
        self.severity_se = np.asarray(severity_se, dtype=np.float64)
        self.measure = np.asarray(measure, dtype=np.float64)
        self.measure_se = np.asarray(measure_se, dtype=np.float64)
        self.measured = np.asarray(measured, dtype=bool)
        self.usable = np.asarray(usable, dtype=bool)
        self._fair = fair
        self.name = name
        self.thresholds = thresholds
        self.notes = list(notes)

    def moments(self):
        if self._moments is not None:
            return self._moments(self.ratings)
        r = self.ratings
        m, w, _, c = moments(category_probabilities(self.measure[r.paper], self.tau[r.rater]))
        return m, w, c

    def fair_average(self, theta):
        return self._fair(np.asarray(theta, dtype=np.float64))

    def rater_expected(self, theta):
        ok = np.isfinite(self.tau).any(axis=1)
        out = np.full(self.tau.shape[0], np.nan)
        out[ok] = expected_score(np.full(ok.sum(), float(theta)), self.tau[ok])
        return out


def fit_rater_model(ratings: Ratings, work=None) -> RaterModel:
    """The rating-scale model (Andrich 1978; Facets' default ``?,?,R`` model) by conditional ML:
    severities ``beta_j`` (sum 0) with S.E.s from the conditional information, paper measures
    by Warm's WLE, fair average for the rater with ``beta = 0``.  By marginal ML (:func:`_marginal_rater_model`)
    where conditional ML cannot be fitted or would cost too much (:func:`.cml.too_costly`: every paper its own
    set of many raters, 21 of 200 raters a paper, where a conditional fit of 1M ratings would take ~20 CPU
    minutes and one by marginal ML takes seconds; ``work``: :func:`.cml.conditional_work` of ``ratings`` where
    the caller has it).  Raises MethodError where neither can be fitted (one rater per paper, unlinked raters,
    nothing estimable)."""
    if ratings.max_raters_per_paper() < 2:
        raise MethodError("needs two or more raters per paper")
    heavy = too_costly(ratings, parameters=ratings.n_raters + ratings.max_score, work=work)   # (the RSM's)
    if heavy:
        return _marginal_rater_model(ratings, heavy)
    try:
        est = ConditionalPCM(model="rsm", fair="average-rater").fit(ratings)
    except MethodError as exc:
        return _marginal_rater_model(ratings, f"conditional ML could not be fitted ({str(exc).splitlines()[0]})")
    if est.all_thin_:   # every rater has one rating: nothing was fitted (found by tests/property)
        raise MethodError("every rater has only one rating: there is nothing to estimate")
    res = est.result_
    has = np.isfinite(est.tau_).any(axis=1)
    usable = res.informative[ratings.paper] & has[ratings.rater]
    return TauModel(ratings, est.tau_, res.beta, rsm_severity_se(res), est.quality_, est.quality_se_,
                    res.informative, usable, est.fair_scores,
                    name="rating scale model by conditional ML (CML), paper measures by Warm WLE",
                    thresholds=res.kappa, notes=est.notes_, severity_wald=rsm_severity_wald(res))


def _marginal_rater_model(ratings: Ratings, why: str) -> RaterModel:
    """The same rating scale model by marginal ML (``MFRM``), where conditional ML cannot be fitted
    (e.g. 2+ designs whose remaining pairs never differ by more than a point: no paper informs the
    conditional likelihood) or would cost too much; ``why`` says which, in the model's first note.  MML
    always returns estimates for linked raters; unlinked raters raise :class:`MethodError` naming them."""
    est = MarginalRaterModel(model="rsm", fair="average-rater").fit(ratings)
    model = from_estimator(est, ratings)
    model.severity_wald = est.result_.severity_wald()
    model.name = "rating scale model by marginal ML (MFRM), paper measures by EAP"
    model.notes = [f"{why}; the model is fitted by marginal ML instead", *model.notes]
    return model


def from_estimator(est, ratings: Ratings) -> RaterModel:
    """Wrap a fitted estimator (the many-facet / marginal ML model) for the report.

    Uses its own ``rater_model(ratings)`` if it has one.  Else it needs ``severity_`` (logits,
    + = more severe), ``severity_se_`` (or ``se_``), ``quality_``/``quality_se_`` (paper measures),
    ``fair_scores(theta)`` (fair average), ``tau_`` (J, M+1) per-rater cumulative category
    parameters on the papers' scale (severity included), and optionally
    ``rating_moments(ratings) -> (E, W, C)`` (expected score, variance and fourth central moment of
    each rating, used instead of ``tau_``'s when the model has further facets), ``extreme_``
    (papers at an extreme score), ``thresholds_`` and ``notes_``."""
    if hasattr(est, "rater_model"):
        return est.rater_model(ratings)
    se = getattr(est, "severity_se_", None)
    if se is None:
        se = est.se_
    extreme = vars(est).get("extreme_")   # (where computed already: not the WLE of every paper only for this)
    if extreme is None:
        extreme = extreme_papers(ratings.paper, ratings.rater, ratings.score, ratings.n_papers, est.tau_)
    measured = (np.asarray(extreme) == 0) & (ratings.ratings_per_paper() > 0)
    has = np.isfinite(est.tau_).any(axis=1)
    return TauModel(ratings, est.tau_, est.severity_, se, est.quality_, est.quality_se_, measured,
                    measured[ratings.paper] & has[ratings.rater], est.fair_scores,
                    name=getattr(est, "code", type(est).__name__), thresholds=getattr(est, "thresholds_", None),
                    notes=getattr(est, "notes_", ()), moments=getattr(est, "rating_moments", None))


# -- summaries -------------------------------------------------------------------------
def separation(measure, se) -> dict:
    """Separation, strata, reliability and the fixed (all same) chi-square of measures with
    S.E.s (module docstring); elements with a non-finite measure or S.E. are left out."""
    d = np.asarray(measure, dtype=np.float64)
    s = np.asarray(se, dtype=np.float64)
    ok = np.isfinite(d) & np.isfinite(s) & (s > 0)
    d, s = d[ok], s[ok]
    n = int(d.size)
    nan = math.nan
    out = dict(n=n, mean=nan, sd=nan, rmse=nan, adj_sd=nan, separation=nan, strata=nan, reliability=nan,
               chi2=nan, chi2_df=max(n - 1, 0), chi2_p=nan)
    if n < 2:
        return out
    var = float(d.var())
    rmse = float(np.sqrt(np.mean(s ** 2)))
    true = max(var - rmse ** 2, 0.0)
    G = math.sqrt(true) / rmse
    w = 1.0 / s ** 2
    q = float(np.sum(w * (d - np.sum(w * d) / np.sum(w)) ** 2))
    out.update(mean=float(d.mean()), sd=math.sqrt(var), rmse=rmse, adj_sd=math.sqrt(true), separation=G,
               strata=(4 * G + 1) / 3, reliability=true / var if var > 0 else nan, chi2=q,
               chi2_p=float(stats.chi2.sf(q, n - 1)))
    return out


@dataclass
class RaterReport:
    """The rater report of one group (see the module docstring); ``fitted`` False with
    ``reason`` when the model could not be fitted."""

    model: str
    fitted: bool
    reason: str = ""
    raters: list = field(default_factory=list)
    rater_separation: dict = field(default_factory=dict)
    paper_separation: dict = field(default_factory=dict)
    papers: dict = field(default_factory=dict)
    thresholds: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def to_dict(self):
        return {k: getattr(self, k) for k in ("model", "fitted", "reason", "raters", "rater_separation",
                                              "paper_separation", "papers", "thresholds", "notes")}

    def format_text(self) -> list:
        return format_rater_report(self.to_dict())


#: The columns an anchored analysis adds to a measurement report (:func:`attach_displacement`).
DISPLACEMENT_HEADERS = ["anchor", "displ", "displ S.E.", "displ t", "drift"]


def attach_displacement(rows, anchored, facet: str = "rater", key: str = "rater") -> None:
    """Give each row of a measurement report (``rows``, the element's label under ``key``) whose element of
    ``facet`` is anchored its displacement, as Facets' measurement reports show Displacement beside the
    measure: ``anchor``, ``displacement`` (the free estimate moved onto the anchors' scale minus the
    anchor), ``displacement_se``, ``displacement_t`` and ``drift`` from :func:`.anchors.displacement`'s
    rows (``anchored``).  Rows of elements not anchored are left as they are."""
    by = {str(a["element"]): a for a in anchored or () if a["facet"] == facet and not a.get("level")}
    for r in rows:
        a = by.get(str(r[key]))
        if a is not None:
            r.update(anchor=a["anchor"], displacement=a["displacement"], displacement_se=a["se"],
                     displacement_t=a["t"], drift=a["drift"], freed=bool(a.get("freed")))


def displacement_cells(rows) -> list | None:
    """The :data:`DISPLACEMENT_HEADERS` cells of each row (blank where not anchored), or None when no
    row is anchored (the report keeps its plain columns)."""
    if not any("displacement" in r for r in rows):
        return None
    return [[num(r["anchor"], 2), num(r["displacement"], 2), num(r["displacement_se"], 2),
             num(r["displacement_t"], 2), " ".join(w for w, on in (("DRIFT", r["drift"]), ("freed", r.get("freed")))
                                                  if on)] if "displacement" in r else [""] * 5
            for r in rows]


def format_rater_report(d: dict) -> list:
    """Text lines of a :meth:`RaterReport.to_dict` (Facets' Table 7 layout)."""

    if not d["fitted"]:
        return [f"Rater measurement report: not available: the rating scale model cannot be fitted "
                f"({d['reason']})", ""]
    L = [f"Rater measurement report ({d['model']}; logits, + = more severe):"]
    rows = [[str(r["rater"]), str(r["count"]), str(r["total"]), num(r["observed_average"], 2),
             num(r["fair_average"], 2), num(r["measure"], 2), num(r["se"], 2), num(r["infit"], 2),
             num(r["infit_zstd"], 1), num(r["outfit"], 2), num(r["outfit_zstd"], 1)] for r in d["raters"]]
    head = ["rater", "count", "total", "obs avg", "fair avg", "measure", "S.E.", "infit", "zstd", "outfit", "zstd"]
    if (disp := displacement_cells(d["raters"])) is not None:
        rows, head = [r + c for r, c in zip(rows, disp)], head + DISPLACEMENT_HEADERS
    L += text_table(head, rows)
    for label, s in (("raters", d["rater_separation"]), ("papers", d["paper_separation"])):
        L.append(f"  {label} ({s['n']}): RMSE {num(s['rmse'], 2)}, adj. S.D. {num(s['adj_sd'], 2)}, "
                 f"separation {num(s['separation'], 2)}, strata {num(s['strata'], 2)}, "
                 f"reliability {num(s['reliability'], 2)}; fixed (all same) chi-square "
                 f"{num(s['chi2'], 1)}, df {s['chi2_df']}, p {pvalue(s['chi2_p'])}")
        if np.isfinite(s.get("wald", math.nan)):   # (the raters' only)
            L.append(f"  raters' severities all equal, their covariances counted (Wald): chi-square {num(s['wald'], 1)}, "
                     f"df {s['wald_df']}, p {pvalue(s['wald_p'])} (the test check counts: the fixed chi-square takes "
                     "the raters' estimates as independent)")
    p = d["papers"]
    L.append(f"  papers: {p['measured']} measured, {p['extreme']} at an extreme score (left out of "
             f"separation and fit); fair average of the papers: mean {num(p['fair_mean'], 2)}, "
             f"S.D. {num(p['fair_sd'], 2)}")
    if "fit_expected" in p:
        L.append(f"  infit/outfit: with {num(p['ratings_per_paper'], 1)} ratings per paper on average, each "
                 f"paper's measure fitted to its own ratings, data that fit give mean squares near "
                 f"{num(p['fit_expected'], 2)} (1 - papers/ratings); compare raters with each other")
    L += [f"  {n}" for n in d["notes"]]
    L.append("")
    return L


def rater_report(ratings: Ratings, model: RaterModel | None = None, scale_low: int = 0) -> RaterReport:
    """Facets' rater measurement report of ``ratings`` under ``model`` (default:
    :func:`fit_rater_model`; when it cannot be fitted, a report saying why)."""
    return report_and_model(ratings, model, scale_low)[0]


#: The model the rater report fits.
RATER_MODEL = "rating scale model by conditional ML (CML)"


def report_and_model(ratings: Ratings, model: RaterModel | None = None, scale_low: int = 0, work=None):
    """``(RaterReport, model)``; model None when it could not be fitted (for reuse by the bias
    analysis and the Wright map without a second fit); ``work``: as :func:`fit_rater_model` takes it."""
    if model is None:
        try:
            model = fit_rater_model(ratings, work)
        except MethodError as exc:
            return RaterReport(model=RATER_MODEL, fitted=False,
                               reason=str(exc).splitlines()[0]), None
    E, W, C = model.moments()
    x = ratings.score
    use = model.usable & np.isfinite(E)
    fit = fit_from_moments(np.where(use, x, 0), np.where(use, E, 0.0), np.where(use, W, 0.0),
                           np.where(use, C, 0.0), ratings.rater, ratings.n_raters, mask=use)
    n = ratings.ratings_per_rater()
    total = np.bincount(ratings.rater, weights=x, minlength=ratings.n_raters)
    measured = model.measured & np.isfinite(model.measure)
    theta_bar = float(model.measure[measured].mean()) if measured.any() else 0.0
    fair_rater = model.rater_expected(theta_bar)
    rows = []
    for j in np.flatnonzero(n > 0):
        rows.append(dict(rater=ratings.rater_ids[j], count=int(n[j]), total=int(total[j]) + scale_low * int(n[j]),
                         observed_average=float(total[j] / n[j]) + scale_low,
                         fair_average=float(fair_rater[j]) + scale_low, measure=float(model.severity[j]),
                         se=float(model.severity_se[j]), infit=float(fit.infit[j]), infit_zstd=float(fit.infit_z[j]),
                         outfit=float(fit.outfit[j]), outfit_zstd=float(fit.outfit_z[j]), fit_count=int(fit.n[j])))
    rated = ratings.ratings_per_paper() > 0
    fair = model.fair_average(model.measure[rated]) + scale_low
    # each paper's measure is fitted to its own n ratings, which leaves n - 1 of them free: data that fit
    # give residual mean squares near the mean of (n - 1)/n over the ratings, 1 - papers/ratings (2 ratings
    # a paper: 0.5; 21: 0.95; 0.53 and 0.96 on data drawn from the model)
    n_fit = int(use.sum())
    p_fit = int(np.unique(ratings.paper[use]).size)
    papers = dict(measured=int((measured & rated).sum()), extreme=int((rated & ~measured).sum()),
                  fair_mean=float(np.nanmean(fair)) if fair.size else math.nan,
                  fair_sd=float(np.nanstd(fair)) if fair.size else math.nan, mean_measure=theta_bar,
                  ratings_per_paper=n_fit / p_fit if p_fit else math.nan,
                  fit_expected=1.0 - p_fit / n_fit if n_fit else math.nan)
    thr = [] if model.thresholds is None else [float(t) for t in np.asarray(model.thresholds)]
    raters = separation(model.severity[n > 0], model.severity_se[n > 0])
    wald = getattr(model, "severity_wald", None)
    raters.update(wald=math.nan, wald_df=0, wald_p=math.nan) if wald is None else \
        raters.update(wald=wald[0], wald_df=wald[1], wald_p=float(stats.chi2.sf(*wald)))
    return RaterReport(model=model.name, fitted=True, raters=rows,
                       rater_separation=raters,
                       paper_separation=separation(model.measure[measured], model.measure_se[measured]),
                       papers=papers, thresholds=thr, notes=list(model.notes)), model


# -- rater x group bias ----------------------------------------------------------------
def rater_group_bias(groups, group_label="group", models=None, alpha=0.05, scale_low: int = 0) -> dict:
    """Rater x group bias/interaction: how much more severe each rater is in one group than
    over the groups it scored in, relative to that group's raters.

    Each group is fitted on its own (``models``: one :class:`RaterModel` per group, or None to
    fit :func:`fit_rater_model`), its severities centred on its raters; the bias of rater j in
    group g is ``b = s_jg - mean_g' s_jg'`` over the G_j groups j scored in, with
    ``var b = (1 - 1/G_j)^2 v_jg + sum_{g' != g} v_jg' / G_j^2`` (groups are independent
    samples, ``v = S.E.^2``), t = b / S.E. with count - 1 df (as Facets), p two-sided, Holm over
    cells.  Facets instead estimates each cell with every other estimate held fixed; with two
    ratings per paper the paper's measure then absorbs a large part of a bias (a planted 1.2
    logits came back as 0.47); conditional ML leaves the papers out.  A bias shared by all of a
    group's raters is no interaction (it is the group's papers).

    ``groups``: [(name, Ratings)].  Returns a dict: ``rows`` (rater, group, count, observed
    average (+ ``scale_low``), severity in the group, bias, S.E., t, df, p, Holm p) of raters who
    scored in two or more groups fitted, ``notes``, ``significant``.
    """

    names = [n for n, _ in groups]
    sev, var, cnt, obs, failed = {}, {}, {}, {}, []
    for k, (name, r) in enumerate(groups):
        model = models[k] if models is not None else None
        if model is None:
            try:
                model = fit_rater_model(r)
            except MethodError as exc:
                failed.append(f"{name} ({str(exc).splitlines()[0]})")
                continue
        n = r.ratings_per_rater()
        tot = np.bincount(r.rater, weights=r.score, minlength=r.n_raters)
        for j in np.flatnonzero((n > 0) & np.isfinite(model.severity) & np.isfinite(model.severity_se)):
            key = (r.rater_ids[j], k)
            sev[key], var[key] = float(model.severity[j]), float(model.severity_se[j]) ** 2
            cnt[key], obs[key] = int(n[j]), float(tot[j] / n[j]) + scale_low
    by_rater = {}
    for (rid, k) in sev:
        by_rater.setdefault(rid, []).append(k)
    rows = []
    for rid, ks in by_rater.items():
        if len(ks) < 2:
            continue
        m = np.mean([sev[(rid, k)] for k in ks])
        G = len(ks)
        for k in ks:
            v = (1 - 1 / G) ** 2 * var[(rid, k)] + sum(var[(rid, o)] for o in ks if o != k) / G ** 2
            b, se, n = sev[(rid, k)] - m, math.sqrt(v), cnt[(rid, k)]
            t = b / se
            rows.append(dict(rater=rid, group=names[k], count=n, observed_average=obs[(rid, k)],
                             severity=sev[(rid, k)], bias=b, se=se, t=t, df=n - 1,
                             p=float(2 * stats.t.sf(abs(t), n - 1)) if n > 1 else math.nan))
    order = {n: i for i, n in enumerate(names)}
    rows.sort(key=lambda r: (natural_key(r["rater"]), order[r["group"]]))   # R1, R2, R10
    for r, v in zip(rows, holm([r["p"] for r in rows])):
        r["p_holm"] = float(v)
    notes = []
    if failed:
        notes.append(f"the rater model could not be fitted in {group_label} " + "; ".join(failed))
    single = sorted((str(rid) for rid, ks in by_rater.items() if len(ks) < 2), key=natural_key)
    if single:
        notes.append(f"rater(s) measured in one {group_label} only (no interaction to estimate): {', '.join(single)}")
    if not rows:
        return dict(fitted=False, group_column=group_label, reason=f"no rater was measured in two or more "
                    f"{group_label}s", rows=[], notes=notes)
    sig = sum(1 for r in rows if math.isfinite(r["p_holm"]) and r["p_holm"] < alpha)
    given = next((m.name for m in models or () if m is not None), None)   # a group's may be None: not fitted
    return dict(fitted=True, model="each group by " + (given or "the rating scale model by conditional ML (CML)"),
                group_column=group_label, rows=rows, significant=sig, alpha=alpha, notes=notes)


def format_bias(bias: dict) -> list:
    """Text lines of :func:`rater_group_bias`'s result."""

    lab = bias.get("group_column", "group")
    if not bias.get("fitted"):
        return [f"Rater x {lab} bias: not available ({bias.get('reason', '')})"] + [f"  {n}" for n in bias["notes"]]
    L = [f"Rater x {lab} bias/interaction ({bias['model']}; severity relative to the {lab}'s raters; bias = "
         f"severity in the {lab} minus the rater's mean over {lab}s, logits, + = more severe there; "
         "p Holm-adjusted over cells):"]
    rows = [[str(r["rater"]), str(r["group"]), str(r["count"]), num(r["observed_average"], 2), num(r["severity"], 2),
             num(r["bias"], 2), num(r["se"], 2), num(r["t"], 2), str(r["df"]), pvalue(r["p"]),
             pvalue(r["p_holm"]) + (" *" if math.isfinite(r["p_holm"]) and r["p_holm"] < bias["alpha"] else "")]
            for r in bias["rows"]]
    L += text_table(["rater", lab, "count", "obs avg", "severity", "bias", "S.E.", "t", "df", "p", "Holm p"], rows)
    L.append(f"  {bias['significant']} of {len(bias['rows'])} cells significant at {bias['alpha']:g} after Holm")
    L += [f"  {n}" for n in bias["notes"]]
    return L


# -- the Wright map --------------------------------------------------------------------
def wright_map(path, report: RaterReport, measures, title="", scale_low=0):
    """Facets' vertical ruler: the papers' measures (histogram, left), the raters' severities
    (labels, middle) and the rating-scale thresholds (right) on one logit axis, each threshold
    named by the two scores it lies between (``1|2`` on a 1-6 scale: ``scale_low`` is its bottom)."""
    from ..report.figures import _draw

    measures = np.asarray(measures, dtype=np.float64)
    measures = measures[np.isfinite(measures)]
    sev = [(str(r["rater"]), r["measure"]) for r in report.raters if math.isfinite(r["measure"])]
    thr = [(k + 1, t) for k, t in enumerate(report.thresholds) if t is not None and math.isfinite(t)]
    allv = np.r_[measures, [s for _, s in sev], [t for _, t in thr], 0.0]
    lo, hi = float(np.floor(allv.min() - 0.5)), float(np.ceil(allv.max() + 0.5))

    def paint(fig):
        axs = fig.subplots(1, 3, sharey=True, gridspec_kw={"width_ratios": [2, 1.4, 1], "wspace": 0.05})
        bins = np.arange(lo, hi + 0.25, 0.25)
        axs[0].hist(measures, bins=bins, orientation="horizontal", color="#1f77b4")
        axs[0].invert_xaxis()
        axs[0].set_xlabel("papers")
        axs[0].set_ylabel("logits (papers: + = better; raters: + = more severe)")
        gap = 0.03 * (hi - lo)   # a label's height
        order = sorted(sev, key=lambda v: v[1])
        if len(order) * gap <= hi - lo:
            # each rater its own label, moved apart where raters lie close and tied to its dot by a
            # line (clusters joined into one label ran 11 names off the panel, dots unnamed)
            ys = [s for _, s in order]
            pos = list(ys)
            for i in range(1, len(pos)):
                pos[i] = max(pos[i], pos[i - 1] + gap)
            pos = np.array(pos) + (np.mean(ys) - np.mean(pos))   # centred on the raters
            pos += max(0.0, lo + gap / 2 - pos[0]) - max(0.0, pos[-1] - (hi - gap / 2))
            for (name, s), y in zip(order, pos):
                axs[1].plot([0.05], [s], "o", color="#d62728", ms=4)
                axs[1].annotate(name, (0.05, s), xytext=(0.22, float(y)), textcoords="data", fontsize=8,
                                va="center", arrowprops=dict(arrowstyle="-", color="#999999", lw=0.5))
        else:   # too many raters to name each: raters closer than a label's height share one label
            clusters = []
            for name, s in order:
                if clusters and s - clusters[-1][-1][1] < gap:
                    clusters[-1].append((name, s))
                else:
                    clusters.append([(name, s)])
            for c in clusters:
                ys = [s for _, s in c]
                axs[1].plot([0.05] * len(c), ys, "o", color="#d62728", ms=4)
                # joined by "; ", as names hold commas ("Smith, J.")
                axs[1].annotate("; ".join(n for n, _ in c), (0.05, float(np.mean(ys))), xytext=(6, -3),
                                textcoords="offset points", fontsize=8)
        axs[1].set_xlim(0, 1)
        axs[1].set_xticks([])
        axs[1].set_xlabel("raters")
        for k, t in thr:
            axs[2].axhline(t, xmin=0.1, xmax=0.6, color="grey", lw=1)
            axs[2].annotate(f"{scale_low + k - 1}|{scale_low + k}", (0.65, t), xycoords=("axes fraction", "data"), fontsize=8, va="center")
        axs[2].set_xticks([])
        axs[2].set_xlabel("thresholds")
        axs[0].set_ylim(lo, hi)
        for ax in axs:
            ax.grid(axis="y", color="#dddddd", lw=0.5)
        fig.suptitle(title or "Wright map", fontsize=10)

    return _draw(path, 6.0, 6.5, paint)
