"""``rc.fit``: one Rasch model fitted to one analysis's ratings, as a :class:`~.methods.results.FitResults`."""

from __future__ import annotations

from ..errors import ArgumentError, arg
from ..methods.results import MODELS, FitResults, fit_results
from .coerce import as_ratings, split_read

__all__ = ["fit", "FitResults", "MODELS"]


def fit(ratings, model: str = "MFRM", steps_by: str | None = None, **params) -> FitResults:
    """Fit a Rasch model of the raters to ``ratings`` and return its estimates, statsmodels-style.

    Parameters
    ----------
    ratings : Ratings, path or pandas.DataFrame
        One analysis's ratings (a file or DataFrame is read as :func:`read_ratings` or
        :meth:`Ratings.from_frame` read it; with groups, fit one: ``dict(r.by_group())["5"]``).
        Their facets (``facet_cols``) enter MML and MFRM as main effects.
    model : {"MML", "MFRM", "CML", "RSM", "PCM"}
        MML: partial credit model by marginal ML; MFRM: many-facet rating scale model by marginal ML;
        CML / RSM: partial credit / rating scale model by conditional ML; PCM: partial credit model
        by PAIR.
    steps_by : str, optional
        MFRM only: thresholds per level of this facet.
    **params
        The estimator's parameters (:func:`make_method`), e.g. ``quality="wle"``; MML/MFRM also
        ``step_sd`` and ``location_sd`` (the weak priors' sds; 1e6 turns them off).
        Where ``ratings`` is a path or a DataFrame, the keywords of :func:`read_ratings` among them
        (``scale="0-5"``, ``paper_col=``, ...) are what it is read with.

    Returns
    -------
    FitResults
        ``params`` (facet, element, parameter, estimate, se), ``cov_params()``, ``conf_int()``,
        ``llf``, ``aic``, ``bic``, ``nobs``, ``converged``, ``notes``, ``summary()``; the fitted
        estimator is ``.estimator``.

    Examples
    --------
    >>> import ratercal_cli as rc
    >>> r = rc.read_ratings("examples/ratings.csv", scale="0-5", group_col="grade")   # doctest: +SKIP
    >>> res = rc.fit(dict(r.by_group())["11"], model="MFRM")                          # doctest: +SKIP
    >>> res.conf_int().head()                                                          # doctest: +SKIP
    """
    from ..methods import make_method

    code = str(model).upper()
    if code not in MODELS:
        raise ArgumentError("model", f"expected one of {', '.join(MODELS)}, not {model!r}")
    read, params = split_read(params)   # a path or DataFrame's read_ratings keywords (scale=, ...)
    ratings = as_ratings(ratings, **read)
    if ratings.group is not None and len(ratings.group_ids) > 1:
        raise ArgumentError("ratings", f"these ratings are in {len(ratings.group_ids)} groups "
                                       f"({ratings.group_name}); fit one: dict(ratings.by_group())[...]")
    names = list(ratings.facets)
    if names and code not in ("MML", "MFRM"):
        raise ArgumentError("model", f"{code} takes no further facets ({', '.join(names)}); give "
                                     f"{arg('model', 'MFRM')} or MML")
    if steps_by is not None:
        if code != "MFRM" or steps_by not in names:
            raise ArgumentError("steps_by", f"a facet of the ratings ({', '.join(names) or 'none'}) with "
                                            f"{arg('model', 'MFRM')}, not {steps_by!r}")
        params["threshold_facet"] = names.index(steps_by)
    est = make_method(code, **params)
    if names:
        est.fit(ratings, facet=ratings.facet_levels())
    else:
        est.fit(ratings)
    return fit_results(est, scale_low=ratings.scale_low, facet_names=names,
                       facet_labels=[ratings.facets[f][1] for f in names])
