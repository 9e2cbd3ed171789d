"""One results object for every Rasch fit (MML, MFRM, CML, RSM, PCM), in the statsmodels manner.

:class:`FitResults` holds the estimates of a fitted Rasch estimator as one long table, ``params``
(facet, element, parameter, estimate, se), with ``cov_params()``, ``conf_int()``, ``llf``, ``aic``,
``bic``, ``nobs``, ``converged``, ``notes``, ``summary()``, and ``to_frame()`` / ``to_dict()`` as every
results object has them.  The rows:

==========  ==================  =====================  =========================================
facet       element             parameter              models
==========  ==================  =====================  =========================================
rater       the rater's label   ``severity``           MML, MFRM, RSM (logits, raters' mean 0)
rater       the rater's label   ``step k``             MML, CML, PCM (the step into category k)
scale       ''                  ``threshold k``        MFRM, RSM (shared thresholds, sum 0)
a facet     the level's label   ``threshold k``        MFRM with thresholds per level of a facet
a facet     the level's label   ``measure``            MML, MFRM with further facets (sum 0)
paper       ''                  ``sigma``, ``mean``    MML, MFRM (the papers' normal distribution)
==========  ==================  =====================  =========================================

``k`` is the category on the file's scale (1-6: ``step 2`` is the step from 1 to 2).  The numbers are
the estimator's own (``severity_``, ``steps_``, ``thresholds_``, ``facet_``, ``sigma_`` with their
``*_se_``): this object lays them out, it estimates nothing.

``llf`` is the maximised log-likelihood: marginal for MML/MFRM (without the weak priors, which move
estimates by a small fraction of an SE), conditional on the papers' totals for CML/RSM (so the two
kinds are not comparable), none for the PAIR PCM (nan).  ``df_model`` (k) counts the free
coordinates the fit estimated (MML: those of the layout, the papers' sigma among them; CML: the rank
of the information), ``nobs`` the papers whose ratings enter the likelihood (the independent units;
``n_ratings`` the ratings); ``aic = 2k - 2 llf`` and ``bic = k log(nobs) - 2 llf``.
"""

from __future__ import annotations

import math

import numpy as np

from ..arguments import check_alpha
from ..errors import ArgumentError, NotFittedError

__all__ = ["FitResults", "fit_results", "MODELS"]

#: rc.fit's models: code -> what it is
MODELS = {
    "MML": "partial credit model by marginal ML",
    "MFRM": "many-facet rating scale model by marginal ML",
    "CML": "partial credit model by conditional ML",
    "RSM": "rating scale model by conditional ML",
    "PCM": "partial credit model by PAIR (pairwise)",
}

#: the equating methods whose rater parameters are a linear map of the score (:func:`_linear_results`)
LINEAR = {"MN": "mean equating", "TMN": "truncated mean equating", "LI": "linear equating",
          "TLI": "truncated linear equating"}

_KEYS = ["facet", "element", "parameter"]


class FitResults:
    """The results of one Rasch fit (module docstring); made by :func:`ratercal_cli.fit` or
    :func:`fit_results`.

    Attributes
    ----------
    model : str
        ``"MML"``, ``"MFRM"``, ``"CML"``, ``"RSM"`` or ``"PCM"``.
    estimator : RaterAdjuster
        The fitted estimator (its arrays: ``severity_``, ``quality_``, ...).
    llf, aic, bic : float
        Log-likelihood and information criteria (nan where the fit has no likelihood).
    df_model, nobs, n_ratings : int
        Free parameters, papers in the likelihood, ratings.
    converged : bool
    notes : list of str
        What the fit says of itself (categories no rater used, steps that cannot be estimated).

    Examples
    --------
    >>> import ratercal_cli as rc
    >>> r = rc.read_ratings("examples/ratings.csv", scale="0-5", group_col="grade")  # doctest: +SKIP
    >>> res = rc.fit(dict(r.by_group())["11"], model="MFRM")                          # doctest: +SKIP
    >>> res.params.head()                                                             # doctest: +SKIP
    """

    def __init__(self, model, estimator, rows, llf, df_model, nobs, n_ratings, converged, notes,
                 cov=None, llf_kind="marginal"):
        self.model = model
        self.estimator = estimator
        self._keys = [tuple(r[:3]) for r in rows]
        self._estimate = np.array([r[3] for r in rows], dtype=np.float64)
        self._se = np.array([r[4] for r in rows], dtype=np.float64)
        self._cov = cov          # None, or a function giving the covariance of the rows
        self.llf = float(llf)
        self.llf_kind = llf_kind
        self.df_model = int(df_model)
        self.nobs = int(nobs)
        self.n_ratings = int(n_ratings)
        self.converged = bool(converged)
        self.notes = list(notes)

    # -- the statsmodels attributes ---------------------------------------------------
    @property
    def aic(self) -> float:
        """Akaike's criterion, ``2 k - 2 llf``."""
        return 2.0 * self.df_model - 2.0 * self.llf

    @property
    def bic(self) -> float:
        """Schwarz's criterion, ``k log(nobs) - 2 llf``."""
        return self.df_model * math.log(max(self.nobs, 1)) - 2.0 * self.llf

    @property
    def params(self):
        """The estimates, one row each: facet, element, parameter, estimate, se (a DataFrame)."""
        import pandas as pd

        df = pd.DataFrame(self._keys, columns=_KEYS)
        df["estimate"] = self._estimate
        df["se"] = self._se
        return df

    @property
    def bse(self):
        """The standard errors as a Series indexed by (facet, element, parameter)."""
        import pandas as pd

        return pd.Series(self._se, index=self._index(), name="se")

    def _index(self):
        import pandas as pd

        return pd.MultiIndex.from_tuples(self._keys, names=_KEYS)

    def cov_params(self):
        """The covariance of the estimates (a DataFrame indexed both ways by (facet, element,
        parameter)).  MML/MFRM: the full matrix, by the delta method from the inverse information
        the SEs are from; CML/RSM/PCM: the squared SEs on the diagonal and nan elsewhere (the
        covariances are not kept)."""
        import pandas as pd

        if self._cov is not None:
            cov = self._cov()
        else:
            cov = np.full((self._se.size, self._se.size), np.nan)
            np.fill_diagonal(cov, self._se ** 2)
        idx = self._index()
        return pd.DataFrame(cov, index=idx, columns=idx)

    def conf_int(self, alpha: float = 0.05):
        """Normal ``1 - alpha`` intervals ``estimate -+ z se``: facet, element, parameter, lower, upper."""
        from scipy import stats

        alpha = check_alpha(alpha)
        q = stats.norm.ppf(1 - alpha / 2)
        df = self.params[_KEYS].copy()
        df["lower"] = self._estimate - q * self._se
        df["upper"] = self._estimate + q * self._se
        return df

    @property
    def tvalues(self):
        """``estimate / se`` per row (a Series indexed as :attr:`bse`; z statistics, as statsmodels calls them
        tvalues, a property as there)."""
        import pandas as pd

        return pd.Series(self._z(), index=self._index(), name="z")

    @property
    def pvalues(self):
        """The two-sided p of each z (:attr:`tvalues`) against 0, a Series indexed as :attr:`bse` (nan where
        the SE is missing)."""
        import pandas as pd

        return pd.Series(self._p(), index=self._index(), name="p")

    def _z(self):
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._estimate / self._se

    def _p(self):
        from scipy import stats

        return 2 * stats.norm.sf(np.abs(self._z()))

    def table(self, alpha: float = 0.05):
        """``params`` with z, its two-sided p (of 0) and the ``1 - alpha`` interval."""

        df = self.params
        df["z"] = self._z()
        df["p"] = self._p()
        ci = self.conf_int(alpha)
        df[f"{alpha / 2:g}"] = ci["lower"]
        df[f"{1 - alpha / 2:g}"] = ci["upper"]
        return df

    # -- views ------------------------------------------------------------------------
    def frame(self, facet: str):
        """The rows of one facet laid out wide: an index of elements (in the fit's order) and a column
        per parameter with ``<parameter>_se`` beside it (``frame("rater")``: severities and steps)."""
        df = self.params
        part = df[df["facet"] == facet]
        if part.empty:
            raise ArgumentError("facet", f"no parameters of facet {facet!r} (facets: "
                                         f"{', '.join(dict.fromkeys(df['facet']))})")
        wide = part.pivot(index="element", columns="parameter", values=["estimate", "se"])
        order = list(dict.fromkeys(part["element"]))
        params = list(dict.fromkeys(part["parameter"]))
        cols = {}
        for p in params:
            cols[p] = wide[("estimate", p)]
            cols[f"{p}_se"] = wide[("se", p)]
        import pandas as pd

        out = pd.DataFrame(cols).loc[order]
        out.index.name = facet
        return out

    def to_frame(self, alpha: float = 0.05):
        """The parameters as a DataFrame, as every results object has it: :meth:`table` (``params`` with
        z, p and the ``1 - alpha`` interval)."""
        return self.table(alpha)

    def to_dict(self) -> dict:
        """The fit as JSON-ready values: model, llf (and its kind), aic, bic, df_model, nobs, n_ratings,
        converged, notes and ``params`` (a list of facet, element, parameter, estimate, se); nan is None."""
        def clean(x):
            x = float(x)
            return x if math.isfinite(x) else None

        return {"model": self.model, "llf": clean(self.llf), "llf_kind": self.llf_kind, "aic": clean(self.aic),
                "bic": clean(self.bic), "df_model": self.df_model, "nobs": self.nobs, "n_ratings": self.n_ratings,
                "converged": self.converged, "notes": list(self.notes),
                "params": [{"facet": f, "element": str(e), "parameter": p, "estimate": clean(est), "se": clean(se)}
                           for (f, e, p), est, se in zip(self._keys, self._estimate, self._se)]}

    # -- text ---------------------------------------------------------------------------
    def _header(self) -> list:
        fmt = (lambda x: "nan" if not np.isfinite(x) else f"{x:.4f}")
        kind = "Equating" if self.model in LINEAR else "Rasch fit"
        return [f"{kind}: {self.model} ({MODELS.get(self.model) or LINEAR.get(self.model, '')})",
                f"papers in the likelihood: {self.nobs}   ratings: {self.n_ratings}   parameters: {self.df_model}",
                f"log-likelihood ({self.llf_kind}): {fmt(self.llf)}   AIC: {fmt(self.aic)}   BIC: {fmt(self.bic)}",
                f"converged: {'yes' if self.converged else 'NO'}"]

    def summary(self, alpha: float = 0.05) -> str:
        """The fit as text: the header (model, sizes, llf, AIC, BIC, convergence), the parameters
        with SE, z, p and interval, and the notes."""
        t = self.table(alpha)
        lines = self._header() + [""]
        with _display():
            lines += t.to_string(index=False, float_format=lambda x: f"{x:.4f}").splitlines()
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        state = "converged" if self.converged else "NOT converged"
        return (f"<FitResults {self.model}: {self.df_model} parameters ({len(self._keys)} rows), {self.nobs} papers, "
                f"{self.n_ratings} ratings; llf {self.llf:.4f}, {state}; .params, .summary(), .conf_int()>")

    def _repr_html_(self) -> str:
        import html

        t = self.table()
        shown = t if len(t) <= 60 else t.head(60)
        more = "" if len(t) <= 60 else f"<p>first 60 of {len(t)} rows: see .params</p>"
        head = "<br>".join(html.escape(line) for line in self._header())
        notes = "".join(f"<p>note: {html.escape(n)}</p>" for n in self.notes)
        return f"<div><p>{head}</p>{shown.to_html(index=False, float_format=lambda x: f'{x:.4f}')}{more}{notes}</div>"


class _display:
    """pandas' display options wide enough for a table printed whole (restored after)."""

    def __enter__(self):
        import pandas as pd

        self._ctx = pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 10_000)
        self._ctx.__enter__()

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)


# ---------------------------------------------------------------------------------------
# from a fitted estimator
# ---------------------------------------------------------------------------------------
def fit_results(est, scale_low: int = 0, facet_names=None, facet_labels=None) -> FitResults:
    """The :class:`FitResults` of a fitted Rasch estimator (MML, MFRM, CML, RSM or PCM).

    Parameters
    ----------
    est : RaterAdjuster
        A fitted :class:`~ratercal_cli.methods.mml.MarginalRaterModel`,
        :class:`~ratercal_cli.methods.cml.ConditionalPCM` or
        :class:`~ratercal_cli.methods.pcm.PartialCreditModel`.
    scale_low : int
        The bottom of the file's scale (categories are named on it: ``step 2`` of a 1-6 scale).
    facet_names, facet_labels : sequence, optional
        The further facets' names and each one's level labels (default ``facet1`` ... and 0, 1, ...).

    Returns
    -------
    FitResults

    Examples
    --------
    >>> from ratercal_cli import make_method                               # doctest: +SKIP
    >>> fit_results(make_method("MFRM").fit(ratings)).params               # doctest: +SKIP
    """
    if not hasattr(est, "n_raters_"):
        raise NotFittedError(f"{type(est).__name__} is not fitted; call fit first")
    code = est.code
    if code in ("MML", "MFRM"):
        return _mml_results(est, scale_low, facet_names, facet_labels)
    if code in ("CML", "RSM"):
        return _cml_results(est, scale_low)
    if code == "PCM":
        return _pcm_results(est, scale_low)
    if code in LINEAR:
        return _linear_results(est, scale_low)
    raise ArgumentError("model", f"{code} has no FitResults (the Rasch models {', '.join(MODELS)} and the "
                                 f"linear equatings {', '.join(LINEAR)} have)")


def _seen(est) -> np.ndarray:
    return np.flatnonzero(est.raters_seen_)


def _mml_results(est, low, facet_names, facet_labels) -> FitResults:
    res, lay = est.result_, est.result_.layout
    reported_rows = type(est).reported_rows   # (mml.reported_rows: this module imports no estimator)
    seen = _seen(est)
    ids = [str(est.rater_ids_[j]) for j in seen]
    M = lay.M
    rows, rowspec = [], []   # (facet, element, parameter, estimate, se); the matching (rows key, index)
    F = lay.items.shape[1] - 1
    names = list(facet_names or ())
    labels = list(facet_labels or ())
    for f in range(len(names), F):   # unnamed facets; the last, with clusters=, the papers' clusters
        last = f == F - 1 and getattr(est, "clusters", None) is not None
        names.append("cluster" if last else f"facet{f + 1}")
        labels.append(list(range(lay.shapes[f"facet{f}"][0])))
    for k, j in enumerate(seen):
        rows.append(("rater", ids[k], "severity", res.severity[j], res.severity_se[j]))
        rowspec.append(("severity", k))
    if lay.model == "pcm":
        for k, j in enumerate(seen):
            for m in range(M):
                rows.append(("rater", ids[k], f"step {low + m + 1}", res.steps[j, m], res.steps_se[j, m]))
                rowspec.append(("steps", k * M + m))
    else:
        thr, thr_se = np.atleast_2d(res.thresholds), np.atleast_2d(res.thresholds_se)
        tf = lay.threshold_facet
        for g in range(thr.shape[0]):
            facet, element = ("scale", "") if tf is None else (names[tf], str(labels[tf][g]))
            for m in range(M):
                rows.append((facet, element, f"threshold {low + m + 1}", thr[g, m], thr_se[g, m]))
                rowspec.append(("thresholds", g * M + m))
    for f in range(F):
        d, se = res.effects[f"facet{f}"]
        for i in range(d.size):
            rows.append((names[f], str(labels[f][i]), "measure", d[i], se[i]))
            rowspec.append((f"facet{f}", i))
    rows.append(("paper", "", "sigma", res.sigma, res.sigma_se))
    rowspec.append(("log_sigma", 0))
    rows.append(("paper", "", "mean", res.theta_mean, np.nan))
    rowspec.append(("theta_mean", 0))

    def cov(spec=rowspec):
        RC = np.asarray(lay.free_map()[0].T @ _mml_rows(lay, reported_rows(lay), spec, res.sigma).T).T
        return RC @ res.cov @ RC.T

    out = FitResults(est.code, est, rows, res.loglik, res.cov.shape[0], len(res.patterns[0]), _n_ratings(est),
                     res.converged, res.notes, cov=cov, llf_kind="marginal")
    out._se[-1] = float(np.sqrt(max(float(cov([rowspec[-1]])[0, 0]), 0.0)))   # the mean's (the fit gives none)
    return out


def _mml_rows(lay, rep, rowspec, sigma) -> np.ndarray:
    """The rows over the natural vector of ``rowspec``'s quantities (sigma by the delta method)."""
    R = np.zeros((len(rowspec), lay.n))
    for i, (name, k) in enumerate(rowspec):
        if name in ("severity", "steps", "thresholds", "theta_mean"):
            R[i] = rep[name][k]
        elif name == "log_sigma":
            R[i, lay.blocks["log_sigma"].start] = sigma   # d sigma = sigma d log sigma
        else:
            R[i, lay.index(name).ravel()[k]] = 1.0
    return R


def _cml_results(est, low) -> FitResults:
    res = est.result_
    seen = _seen(est)
    ids = {j: str(est.rater_ids_[j]) for j in seen}
    M = res.steps.shape[1]
    rows = []
    if est.model == "rsm":
        se = est.severity_se_
        for j in seen:
            rows.append(("rater", ids[j], "severity", res.beta[j], se[j]))
        for m in range(M):
            rows.append(("scale", "", f"threshold {low + m + 1}", res.kappa[m], np.nan))
    else:
        se = res.steps_se if res.steps_se is not None else np.full(res.steps.shape, np.nan)
        for j in seen:
            for m in range(M):
                if np.isfinite(res.steps[j, m]):
                    rows.append(("rater", ids[j], f"step {low + m + 1}", res.steps[j, m], se[j, m]))
    info = res.information
    if info is not None and info.size:
        w = np.linalg.eigvalsh(info)
        k = int((w > w.max() * 1e-11).sum())
    else:
        k = 0
    notes = list(res.notes)
    if est.model == "rsm":
        notes.append("RSM by CML: thresholds without standard errors (the steps' are in estimator.steps_se_)")
    return FitResults(est.code, est, rows, res.loglik, k, int(res.informative.sum()), _n_ratings(est),
                      res.converged, notes, llf_kind="conditional")


def _pcm_results(est, low) -> FitResults:
    seen = _seen(est)
    rows = []
    steps = est.steps_
    for j in seen:
        for m in range(steps.shape[1]):
            if np.isfinite(steps[j, m]):
                rows.append(("rater", str(est.rater_ids_[j]), f"step {low + m + 1}", steps[j, m], np.nan))
    fitted = getattr(est, "fitted_", est.estimable_)
    notes = ["PCM by PAIR: pairwise estimates without a likelihood or standard errors (llf, AIC, BIC nan)"]
    return FitResults("PCM", est, rows, np.nan, int(np.sum(fitted)), est.n_papers_rated_, _n_ratings(est),
                      bool(est.converged_), notes, llf_kind="none")


def _n_ratings(est) -> int:
    return int(est.n_ratings_fitted_)


def _linear_results(est, low) -> FitResults:
    """The equating methods' maps in the same long form: per rater ``intercept`` and ``slope`` of
    ``adjusted = intercept + slope * score`` on the file's scale (MN, TMN: slope 1, the intercept the
    rater's shift; TMN and TLI then keep the result inside the scale).  No likelihood, no SEs."""
    seen = _seen(est)
    slope = np.asarray(getattr(est, "slope_", np.ones(est.n_raters_)), dtype=np.float64)
    shift = getattr(est, "shift_", None)
    intercept = np.asarray(shift if shift is not None else est.intercept_, dtype=np.float64)
    rows = []
    for j in seen:
        a = intercept[j] + low * (1.0 - slope[j])   # from the 0-based scale to the file's
        rows.append(("rater", str(est.rater_ids_[j]), "intercept", a, np.nan))
        rows.append(("rater", str(est.rater_ids_[j]), "slope", slope[j], np.nan))
    k = len(seen) * (1 if shift is not None else 2)
    notes = [f"{est.code} ({LINEAR[est.code]}): adjusted = intercept + slope * score per rater"
             + (", kept inside the scale" if est.code.startswith("T") else "") + "; no likelihood or SEs"]
    return FitResults(est.code, est, rows, np.nan, k, est.n_papers_rated_, _n_ratings(est), True, notes,
                      llf_kind="none")
