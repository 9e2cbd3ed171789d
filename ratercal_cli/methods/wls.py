"""Weighted (generalised) least squares for the additive rater model (Wilson 1988).

Model: ``x[v, j] = mu[v] + b[j] + e[v, j]``, ``Var(e[v, j]) = sigma[j]**2``: each rater has
an additive severity/leniency ``b[j]`` (sum 0 over the raters who rated) and an error
variance of its own.  With known variances the best linear unbiased estimates minimise

    sum (x - mu[v] - b[j])**2 / sigma[j]**2            (papers' mu absorbed, raters' b solved)

The variances come by default from within-paper differences (:func:`pairwise_variances`,
Grubbs' estimator generalised to incomplete designs), or, with ``variance="reml"``, are
re-estimated from the residuals with the leverages of the weighted fit:
``E[e_i^2] = sigma_j^2 (1 - h_ii)`` exactly when the weights are right (REML-type moment
equation), so

    sigma[j]**2 = sum_{i in j} r_i**2 / sum_{i in j} (1 - h_ii)

alternating until the variances settle (feasible GLS).  Starting from equal weights the
first pass is ordinary least squares on the additive model (the corrected OLS of de
Gruijter's design, fitted to the ratings rather than to pair means).

Adjusted rating ``x - b[j]``; paper score the precision-weighted mean
``sum_j w_j (x - b_j) / sum_j w_j`` (``w = 1 / sigma**2``), which is the WLS estimate of
``mu[v]``; ``weighted=False`` gives the plain mean of the adjusted ratings instead.
"""

from __future__ import annotations

import numpy as np

from ..network import require_connected
from ..ratings import Ratings
from ..vocabulary import DEFAULT_VARIANT
from .base import RaterAdjuster, clip_to_scale

__all__ = ["WeightedLeastSquares", "PrecisionWeightedMean", "fit_additive", "pairwise_variances"]


def _solve_additive(ratings: Ratings, w_rater):
    """Weighted LS of the additive model with rater weights; returns b, mu, leverages.

    Papers are absorbed: with ``s_v = sum_{i in v} w_i`` and ``M[j, v] = sum_{i in v, j} w_i``,
    the rater equations are ``(diag(sum w by rater) - M diag(1/s) M') b = c``; the sum-zero
    constraint on the raters who rated is added as ``+ 1 1' / J`` (the system is otherwise
    singular along 1).  Leverage ``h_i = w_i / s_v + w_i rt_i' A^-1 rt_i`` with
    ``rt_i = e_j(i) - M[:, v] / s_v`` (the rater indicator with the paper's weighted mean of
    indicators removed).
    """
    J, N = ratings.n_raters, ratings.n_papers
    if J * N > DENSE_CELLS:
        return _solve_additive_sparse(ratings, w_rater)
    paper, rater = ratings.paper, ratings.rater
    x = ratings.score.astype(np.float64)
    w = w_rater[rater]
    s = np.bincount(paper, weights=w, minlength=N)
    M = np.zeros((J, N))
    np.add.at(M, (rater, paper), w)
    active = np.bincount(rater, minlength=J) > 0
    ones = active.astype(float)
    A = np.diag(np.bincount(rater, weights=w, minlength=J)) - (M / np.where(s > 0, s, 1.0)) @ M.T
    A += np.outer(ones, ones) * (np.trace(A) / max(ones.sum(), 1) ** 2)  # any positive multiple works
    A[~active, ~active] = 1.0
    xs = np.bincount(paper, weights=w * x, minlength=N)  # Z'Wx
    c = np.bincount(rater, weights=w * x, minlength=J) - M @ (xs / np.where(s > 0, s, 1.0))
    Ainv = np.linalg.inv(A)
    b = Ainv @ c
    b[~active] = 0.0
    mu = np.bincount(paper, weights=w * (x - b[rater]), minlength=N) / np.where(s > 0, s, 1.0)
    mu[s == 0] = np.nan
    rt = -(M[:, paper] / s[paper]).T  # (n, J)
    rt[np.arange(rater.size), rater] += 1.0
    h = w / s[paper] + w * np.einsum("ij,jk,ik->i", rt, Ainv, rt)
    return b, mu, h


#: Largest raters x papers for the dense ``M`` of :func:`_solve_additive` (the data sets of
#: the study); above it the same equations are solved with a sparse ``M``.
DENSE_CELLS = 1 << 22


def _solve_additive_sparse(ratings: Ratings, w_rater):
    """:func:`_solve_additive` with ``M`` sparse (raters x papers, one entry per rating) and
    the leverages from the ratings of each paper instead of an (n, J) array:
    ``rt' A^-1 rt = A^-1[j, j] - 2 c_i / s_v + q_v / s_v**2`` with
    ``c_i = sum_{k in v} w_k A^-1[j_i, j_k]`` and ``q_v = sum_{i in v} w_i c_i``.
    Memory grows with the ratings, not with raters x papers (equal to rounding)."""
    from scipy.sparse import csr_matrix

    J, N = ratings.n_raters, ratings.n_papers
    paper, rater = ratings.paper, ratings.rater
    x = ratings.score.astype(np.float64)
    w = w_rater[rater]
    s = np.bincount(paper, weights=w, minlength=N)
    s1 = np.where(s > 0, s, 1.0)
    M = csr_matrix((w, (rater, paper)), shape=(J, N))   # duplicates summed, as np.add.at
    active = np.bincount(rater, minlength=J) > 0
    ones = active.astype(float)
    A = np.diag(np.bincount(rater, weights=w, minlength=J)) - (M.multiply(1.0 / s1[None, :]) @ M.T).toarray()
    A += np.outer(ones, ones) * (np.trace(A) / max(ones.sum(), 1) ** 2)
    A[~active, ~active] = 1.0
    xs = np.bincount(paper, weights=w * x, minlength=N)
    c = np.bincount(rater, weights=w * x, minlength=J) - M @ (xs / s1)
    Ainv = np.linalg.inv(A)
    b = Ainv @ c
    b[~active] = 0.0
    mu = np.bincount(paper, weights=w * (x - b[rater]), minlength=N) / s1
    mu[s == 0] = np.nan
    ii, kk = _same_paper_pairs(paper)
    cross = np.bincount(ii, weights=w[kk] * Ainv[rater[ii], rater[kk]], minlength=rater.size)
    q = np.bincount(paper, weights=w * cross, minlength=N)
    sp = s[paper]
    h = w / sp + w * (Ainv[rater, rater] - 2.0 * cross / sp + q[paper] / (sp * sp))
    return b, mu, h


def _same_paper_pairs(paper):
    """Every ordered pair ``(i, k)`` of ratings of the same paper, ``i == k`` included."""
    order = np.argsort(paper, kind="stable")
    ps = paper[order]
    starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]]) if ps.size else np.zeros(0, dtype=np.int64)
    sizes = np.diff(np.r_[starts, ps.size])
    ii, kk = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for n in np.unique(sizes):
        base = starts[sizes == n]
        a, b = np.divmod(np.arange(n * n), n)
        ii.append(order[(base[:, None] + a[None, :]).ravel()])
        kk.append(order[(base[:, None] + b[None, :]).ravel()])
    return np.concatenate(ii), np.concatenate(kk)


#: Rater pairs above which :func:`pairwise_variances` solves its NNLS through a QR
#: reduction (hundreds of raters: tens of thousands of pairs); the study's nine raters
#: have at most 36 pairs and are solved as they were.
TALL_ROWS = 2000


def _nnls_least_squares(nnls, A, y, tall):
    """``min ||A x - y||, x >= 0``; for a tall ``A`` through ``A = QR``: the same minimiser
    from ``min ||R x - Q'y||`` (square, as many rows as raters)."""
    if not tall:
        return nnls(A, y)
    q, r = np.linalg.qr(A, mode="reduced")
    return nnls(r, q.T @ y)


def pairwise_variances(ratings: Ratings, min_variance_ratio: float = 1e-4, values=None):
    """Rater error variances from within-paper differences (Grubbs 1948, generalised).

    For raters j, k who share papers, ``d = x_j - x_k`` has mean ``b_j - b_k`` and variance
    ``sigma_j^2 + sigma_k^2`` under the additive model, whatever the papers' levels.  With
    ``V_jk`` the variance of ``d`` over their shared papers (divisor n_jk - 1), solve

        min sum_{pairs} (n_jk - 1) (V_jk - sigma_j^2 - sigma_k^2)^2 / F_jk^2,   sigma^2 >= 0

    by non-negative least squares, ``F_jk`` the fitted ``sigma_j^2 + sigma_k^2`` of the previous
    round (first round: ``V_jk``; three rounds), since ``Var(V_jk) = 2 F_jk^2 / (n_jk - 1)``
    for normal errors.  With all papers scored by the same three raters this is
    Grubbs' estimator ``sigma_1^2 = (V_12 + V_13 - V_23) / 2``.  The variances are identified
    only if the graph of rater pairs has an odd cycle (three raters who pairwise share
    papers); otherwise every rater gets the pooled value and ``identified`` is False.
    ``values`` (per rating, default the scores) lets the same estimator measure the
    precision of any method's adjusted ratings.  Returns ``(sigma2, identified)``.
    """
    from scipy.optimize import nnls

    J = ratings.n_raters
    order = np.lexsort((ratings.rater, ratings.paper))
    paper, rater = ratings.paper[order], ratings.rater[order]
    x = np.asarray(ratings.score if values is None else values, dtype=np.float64)[order]
    # every within-paper pair of ratings (lower rater first)
    starts = np.flatnonzero(np.r_[True, paper[1:] != paper[:-1]])
    sizes = np.diff(np.r_[starts, paper.size])
    ii, kk = [], []
    for s in np.unique(sizes[sizes >= 2]):
        base = starts[sizes == s]
        a, b = np.triu_indices(s, 1)
        ii.append((base[:, None] + a[None, :]).ravel())
        kk.append((base[:, None] + b[None, :]).ravel())
    if not ii:
        return np.ones(J), False
    ii, kk = np.concatenate(ii), np.concatenate(kk)
    rj, rk, d = rater[ii], rater[kk], x[ii] - x[kk]
    same = rj == rk
    rj, rk, d = rj[~same], rk[~same], d[~same]
    key = rj * J + rk
    n = np.bincount(key, minlength=J * J)
    s1 = np.bincount(key, weights=d, minlength=J * J)
    s2 = np.bincount(key, weights=d * d, minlength=J * J)
    use = np.flatnonzero(n >= 2)
    V = (s2[use] - s1[use] ** 2 / n[use]) / (n[use] - 1)
    D = np.zeros((use.size, J))
    D[np.arange(use.size), use // J] = 1.0
    D[np.arange(use.size), use % J] = 1.0
    active = D.any(axis=0)
    pooled = float(np.sum((n[use] - 1) * V) / np.sum(n[use] - 1) / 2) if use.size else 1.0
    if not pooled > 0:
        pooled = 1.0
    Da = D[:, active]
    tall = Da.shape[0] > TALL_ROWS and Da.shape[0] > 4 * Da.shape[1]
    if tall:   # many raters: the rank of the square R of D = QR, with D's own tolerance
        sv = np.linalg.svd(np.linalg.qr(Da, mode="r"), compute_uv=False)
        rank = int((sv > sv.max(initial=0.0) * max(Da.shape) * np.finfo(float).eps).sum())
    else:
        rank = np.linalg.matrix_rank(Da)
    identified = use.size > 0 and rank == active.sum()
    sigma2 = np.full(J, pooled)
    if identified:
        # Var(V_jk) = 2 (sigma_j^2 + sigma_k^2)^2 / (n_jk - 1) under normal errors: weight by its
        # inverse, from the previous solution (start: the observed V_jk), twice
        fitted = np.maximum(V, 1e-3 * pooled)
        for _ in range(3):
            wt = np.sqrt(n[use] - 1.0) / fitted
            sol, _ = _nnls_least_squares(nnls, Da * wt[:, None], V * wt, tall)
            fitted = np.maximum(D[:, active] @ sol, 1e-3 * pooled)
        sigma2[active] = sol
    floor = max(min_variance_ratio * pooled, 1e-10 * (np.var(x) + 1.0))
    return np.maximum(sigma2, floor), bool(identified)


def fit_additive(ratings: Ratings, max_iter: int = 200, tol: float = 1e-9, weighted: bool = True,
                 min_variance_ratio: float = 1e-4):
    """Feasible GLS of the additive model, variances by REML; returns ``(b, sigma2, mu, n_iter)``.

    Caution: with two raters per paper a rater's REML variance can run to the boundary 0 (a
    paper's level then follows that rater exactly, its residuals vanish and the estimate
    stays there); :func:`pairwise_variances` does not have this problem and is the default
    of :class:`WeightedLeastSquares`.

    The variance update above is a fixed-point map of ``log sigma2``; it converges
    linearly, often slowly, so it is accelerated by SQUAREM (Varadhan & Roland 2008, scheme
    S3) with a plain step as fallback.  ``n_iter`` counts evaluations of the map.
    ``weighted=False`` stops after the equal-weight (OLS) fit but still estimates the error
    variances.  A rater's variance is floored at ``min_variance_ratio`` times the pooled
    residual variance (a rater who agrees exactly with the fitted paper means would
    otherwise get infinite weight); a rater with no residual degrees of freedom gets the
    pooled variance.
    """
    J = ratings.n_raters
    rater = ratings.rater
    nfev = 0
    floor = 1e-10 * (np.var(ratings.score) + 1.0)  # exact data: tiny, not 0, variances

    def update(log_s2):
        nonlocal nfev
        nfev += 1
        b, mu, h = _solve_additive(ratings, np.exp(-log_s2))
        resid = ratings.score - mu[ratings.paper] - b[rater]
        df = np.bincount(rater, weights=1.0 - h, minlength=J)
        rss = np.bincount(rater, weights=resid * resid, minlength=J)
        pooled = rss.sum() / df.sum() if df.sum() > 1e-9 else 1.0
        if not pooled > 0:
            pooled = 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            new = np.where(df > 1e-6, rss / df, pooled)
        return np.log(np.maximum(new, max(min_variance_ratio * pooled, floor)))

    x = update(np.zeros(J))
    if weighted:
        while nfev < max_iter:
            x1 = update(x)
            r = x1 - x
            if np.max(np.abs(r)) < tol:
                x = x1
                break
            x2 = update(x1)
            v = x2 - x1 - r
            nv = np.sqrt(np.sum(v * v))
            alpha = -np.sqrt(np.sum(r * r)) / nv if nv > 0 else -1.0
            alpha = min(alpha, -1.0)
            xs = x - 2 * alpha * r + alpha * alpha * v
            x_new = update(xs) if np.all(np.isfinite(xs)) else x2
            if not np.all(np.isfinite(x_new)):
                x_new = x2
            x = x_new
    sigma2 = np.exp(x)
    b, mu, _ = _solve_additive(ratings, 1.0 / sigma2 if weighted else np.ones(J))
    return b, sigma2, mu, nfev


class WeightedLeastSquares(RaterAdjuster):
    """Additive rater model by feasible GLS (Wilson 1988): ``adj = x - b_j``.

    Parameters: ``weighted`` (True: weight each rater by its inverse error variance; False:
    equal weights, i.e. OLS on the additive model), ``variance`` ("pairs": the moment
    estimator of :func:`pairwise_variances`, then one WLS solve; "reml": the iterated REML
    fixed point of :func:`fit_additive`), ``truncate`` (clip each adjusted rating to 0..M),
    ``paper_score`` ("weighted": precision-weighted mean of the paper's adjusted ratings,
    the WLS estimate of the paper's level; "mean": plain mean).

    Fitted: ``b_`` (J, sum 0 over raters who rated; positive = lenient, adds to scores),
    ``sigma2_`` (J, error variances), ``weights_`` (1 / sigma2_; ones if not weighted),
    ``identified_`` (False when the design cannot separate the raters' variances and the
    pooled variance was used), ``n_iter_``.
    One version: no ``variant`` parameter.
    """

    code = "WLS"
    needs_multiple_raters = True

    def __init__(self, weighted: bool = True, truncate: bool = False, paper_score: str = "weighted",
                 variance: str = "pairs"):
        self.weighted = weighted
        self.truncate = truncate
        self.paper_score = paper_score
        self.variance = variance

    def _fit(self, ratings: Ratings) -> None:
        if self.paper_score not in ("weighted", "mean"):
            raise ValueError(f"paper_score must be 'weighted' or 'mean', not {self.paper_score!r}")
        if self.variance not in ("pairs", "reml"):
            raise ValueError(f"variance must be 'pairs' or 'reml', not {self.variance!r}")
        require_connected(ratings, "WLS", note="; their severities cannot be compared")
        self.identified_ = True
        if self.variance == "reml":
            b, sigma2, _mu, it = fit_additive(ratings, weighted=self.weighted)
        else:
            sigma2, self.identified_ = pairwise_variances(ratings)
            w = 1.0 / sigma2 if self.weighted else np.ones(ratings.n_raters)
            b, _mu, _h = _solve_additive(ratings, w)
            it = 1
        self.b_, self.sigma2_, self.n_iter_ = b, sigma2, it
        self.weights_ = 1.0 / sigma2 if self.weighted else np.ones(ratings.n_raters)

    def _adjust_ratings(self, ratings: Ratings) -> np.ndarray:
        adj = ratings.score - self.b_[ratings.rater]
        return clip_to_scale(adj, ratings.max_score) if self.truncate else adj

    def _paper_scores(self, ratings: Ratings, adjusted: np.ndarray) -> np.ndarray:
        if self.paper_score == "mean":
            return ratings.paper_mean(adjusted)
        w = self.weights_[ratings.rater]
        s = np.bincount(ratings.paper, weights=w, minlength=ratings.n_papers)
        num = np.bincount(ratings.paper, weights=w * adjusted, minlength=ratings.n_papers)
        return num / np.where(s > 0, s, 1.0)


class PrecisionWeightedMean(RaterAdjuster):
    """Any method's adjusted ratings, averaged per paper with precision weights.

    ``base`` is a registered method code (e.g. "MN", "LI", "EQP"): its adjusted ratings are
    kept; each rater's error variance is estimated from them by :func:`pairwise_variances`
    (differences of adjusted ratings within papers) and the paper score is
    ``sum_j w_j adj_j / sum_j w_j`` with ``w = 1 / sigma^2``.  With ``base="MN"`` this is the
    additive model with mean-equating severities and precision weights.

    Fitted: ``base_`` (the fitted base estimator), ``sigma2_``, ``weights_``, ``identified_``.
    """

    @property
    def code(self):
        return "PW" + str(self.base).upper()
    needs_multiple_raters = True

    def __init__(self, variant: str = DEFAULT_VARIANT, base: str = "MN"):
        self.variant = variant
        self.base = base

    def _fit(self, ratings: Ratings) -> None:
        from . import make_method

        self.base_ = make_method(self.base, self.variant).fit(ratings)
        adj = self.base_.transform(ratings).rating
        self.sigma2_, self.identified_ = pairwise_variances(ratings, values=adj)
        self.weights_ = 1.0 / self.sigma2_

    def _adjust_ratings(self, ratings: Ratings) -> np.ndarray:
        return self.base_.transform(ratings).rating

    def _paper_scores(self, ratings: Ratings, adjusted: np.ndarray) -> np.ndarray:
        w = self.weights_[ratings.rater]
        s = np.bincount(ratings.paper, weights=w, minlength=ratings.n_papers)
        num = np.bincount(ratings.paper, weights=w * adjusted, minlength=ratings.n_papers)
        return num / np.where(s > 0, s, 1.0)
