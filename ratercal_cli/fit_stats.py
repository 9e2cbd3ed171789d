"""Model fit per rater: infit and outfit mean squares (Wright & Masters 1982, ch. 5).

For each rating with model category probabilities ``p[x]`` (given the paper's estimated
quality) and observed score ``x_obs``:

    E = sum_x x p[x],  W = sum_x (x - E)^2 p[x],  C = sum_x (x - E)^4 p[x],
    y = x_obs - E,     z^2 = y^2 / W.

Per rater over its n ratings:

    outfit  u = sum z^2 / n                 q_u^2 = sum (C / W^2) / n^2 - 1 / n
    infit   v = sum y^2 / sum W              q_v^2 = sum (C - W^2) / (sum W)^2

and the standardised values (Wilson-Hilferty cube root) ``t = (MS^(1/3) - 1) (3 / q) + q / 3``.
Mean squares near 1 fit; above 1 (noisy, erratic rater) or below 1 (too predictable, e.g.
a rater who avoids extreme categories, "muted") are misfit.  Common rules of thumb flag
mean squares outside 0.5-1.5 or |t| > 2.  When each paper's quality is estimated from
only k ratings, the residuals use up part of the variance: with k = 2 (two raters per
paper) mean squares of data that fit the model exactly are near 0.5 (0.45-0.7 on the
simulated 500x2 PCM set), so compare raters with each other rather than with 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RaterFit", "rater_fit", "fit_from_moments", "fit_rows"]


@dataclass(frozen=True)
class RaterFit:
    """Per-rater fit statistics, arrays of length n_raters (nan for raters with no ratings)."""

    n: np.ndarray
    infit: np.ndarray
    outfit: np.ndarray
    infit_z: np.ndarray
    outfit_z: np.ndarray


def _wilson_hilferty(ms, q):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.cbrt(ms) - 1.0) * (3.0 / q) + q / 3.0


def rater_fit(probabilities, score, rater, n_raters, mask=None) -> RaterFit:
    """Infit/outfit per rater from each rating's model probabilities.

    probabilities : (n, K) model category probabilities of each rating (rows sum to 1).
    score, rater : (n,) observed score and rater index.  mask : optional (n,) bool, ratings
    to use (e.g. leave out papers at an extreme total, whose residuals are uninformative).
    Ratings with zero model variance (W = 0) are skipped.
    """
    p = np.asarray(probabilities, dtype=np.float64)
    x = np.arange(p.shape[-1], dtype=np.float64)
    E = p @ x
    d = x[None, :] - E[:, None]
    W = np.sum(p * d * d, axis=1)
    C = np.sum(p * d ** 4, axis=1)
    return fit_from_moments(score, E, W, C, rater, n_raters, mask)


def fit_from_moments(score, E, W, C, rater, n_raters, mask=None) -> RaterFit:
    """Infit/outfit per rater (or per any element: ``rater`` is its index) from each rating's
    model expectation ``E``, variance ``W`` and fourth central moment ``C`` (the module's
    formulas); what :func:`rater_fit` computes after taking the moments of the probabilities,
    and what a model that gives moments directly (``rater_report.RaterModel``) uses."""
    score = np.asarray(score, dtype=np.float64)
    rater = np.asarray(rater, dtype=np.int64)
    E, W, C = (np.asarray(a, dtype=np.float64) for a in (E, W, C))
    use = W > 1e-12
    if mask is not None:
        use &= np.asarray(mask, dtype=bool)
    y2 = (score - E) ** 2
    rj = rater[use]
    n = np.bincount(rj, minlength=n_raters).astype(float)
    Wu = W[use]
    z2 = y2[use] / Wu
    sum_z2 = np.bincount(rj, weights=z2, minlength=n_raters)
    sum_y2 = np.bincount(rj, weights=y2[use], minlength=n_raters)
    sum_W = np.bincount(rj, weights=Wu, minlength=n_raters)
    sum_CW2 = np.bincount(rj, weights=C[use] / Wu ** 2, minlength=n_raters)
    sum_CmW2 = np.bincount(rj, weights=C[use] - Wu ** 2, minlength=n_raters)
    with np.errstate(divide="ignore", invalid="ignore"):
        outfit = np.where(n > 0, sum_z2 / n, np.nan)
        infit = np.where(n > 0, sum_y2 / sum_W, np.nan)
        q_out = np.sqrt(np.maximum(sum_CW2 / n ** 2 - 1.0 / n, 0.0))
        q_in = np.sqrt(np.maximum(sum_CmW2 / sum_W ** 2, 0.0))
    return RaterFit(n=n, infit=infit, outfit=outfit,
                    infit_z=np.where(n > 0, _wilson_hilferty(infit, q_in), np.nan),
                    outfit_z=np.where(n > 0, _wilson_hilferty(outfit, q_out), np.nan))


def fit_rows(fit: RaterFit, rater_ids, flag_low=0.5, flag_high=1.5):
    """Rows for a table (``ratercal check``): rater, n, infit, infit_z, outfit, outfit_z, flag.

    ``flag`` is "noisy" when either mean square is above ``flag_high``, "muted" when below
    ``flag_low``, else "".
    """
    rows = []
    for j, rid in enumerate(rater_ids):
        if not fit.n[j]:
            continue
        ms = (fit.infit[j], fit.outfit[j])
        flag = "noisy" if max(ms) > flag_high else "muted" if min(ms) < flag_low else ""
        rows.append(dict(rater=rid, n=int(fit.n[j]), infit=float(fit.infit[j]), infit_z=float(fit.infit_z[j]),
                         outfit=float(fit.outfit[j]), outfit_z=float(fit.outfit_z[j]), flag=flag))
    return rows


#: The Wald tests of equal severities (:func:`.methods.cml.rsm_severity_wald`, :meth:`.methods.mml.MMLFit.severity_wald`)
#: past this many raters are not made (a raters x raters eigendecomposition, a raters x parameters array; the
#: decision then counts Facets' fixed chi-square, whose bias toward "differ" is ~1/(raters - 1) of its statistic).
WALD_MAX_RATERS = 1000


def wald_all_equal(estimates, cov) -> tuple[float, int]:
    """``(W, df)``: the Wald test that ``estimates`` (k,) are all equal, ``W = b' (P cov P)^+ b`` over the centred
    ``b = P estimates`` (``P = I - 11'/k``), ``df`` the rank of ``P cov P`` (k - 1 where every contrast is estimated)."""
    k = estimates.size
    P = np.eye(k) - 1.0 / k
    w, V = np.linalg.eigh(P @ cov @ P)
    keep = w > w.max(initial=0.0) * 1e-10
    z = V[:, keep].T @ (P @ estimates)
    return float(np.sum(z ** 2 / w[keep])), int(keep.sum())
