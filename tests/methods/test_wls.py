"""Additive model by feasible GLS (ratercal_cli/methods/wls.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ratercal_cli.errors import MethodError
from ratercal_cli.methods.wls import WeightedLeastSquares, fit_additive, pairwise_variances
from ratercal_cli.ratings import Ratings


def complete_three(n=400, seed=2):
    rng = np.random.default_rng(seed)
    mu = rng.normal(10, 2, n)
    x = mu[:, None] + np.array([1.0, 0.0, -1.0]) + rng.normal(size=(n, 3)) * np.array([0.6, 1.0, 2.0])
    xi = np.clip(np.rint(x), 0, 20).astype(int)
    return Ratings(np.repeat(np.arange(n), 3), np.tile(np.arange(3), n), xi.ravel(), 20, n, 3), xi


def test_complete_three_raters_equal_grubbs_estimators():
    """Every paper by all three raters: the REML fixed point is Grubbs' (1948) estimator
    sigma_1^2 = (V12 + V13 - V23) / 2 from the variances of the pairwise differences."""
    data, x = complete_three()
    d = x.astype(float)
    v = {(a, b): np.var(d[:, a] - d[:, b], ddof=1) for a, b in [(0, 1), (0, 2), (1, 2)]}
    grubbs = [(v[0, 1] + v[0, 2] - v[1, 2]) / 2, (v[0, 1] + v[1, 2] - v[0, 2]) / 2, (v[0, 2] + v[1, 2] - v[0, 1]) / 2]
    sigma2, identified = pairwise_variances(data)
    assert identified
    np.testing.assert_allclose(sigma2, grubbs, rtol=1e-9)
    _, sigma2_reml, _, _ = fit_additive(data)  # REML reaches the same point here
    np.testing.assert_allclose(sigma2_reml, grubbs, rtol=1e-6)


def dense_wls(data, w_rater):
    """Textbook WLS with paper and rater dummies and the row sum(b) = 0, by lstsq."""
    N, J, n = data.n_papers, data.n_raters, data.n_ratings
    X = np.zeros((n, N + J))
    X[np.arange(n), data.paper] = 1
    X[np.arange(n), N + data.rater] = 1
    sw = np.sqrt(w_rater[data.rater])
    Xa = np.vstack([X * sw[:, None], np.r_[np.zeros(N), np.ones(J)] * 1e3])
    ya = np.r_[data.score * sw, 0.0]
    coef = np.linalg.lstsq(Xa, ya, rcond=None)[0]
    W = np.diag(w_rater[data.rater])
    H = X @ np.linalg.pinv(X.T @ W @ X) @ X.T @ W
    return coef[N:], coef[:N], np.diag(H), data.score - X @ coef


def incomplete_data(seed=4, per_paper=2, N=150, scale=1.0, offset=0):
    rng = np.random.default_rng(seed)
    J = 5
    sig = np.array([0.5, 0.8, 1.0, 1.5, 2.5])
    b = np.array([1.0, -0.5, 0.0, 0.5, -1.0])
    mu = rng.normal(5, 1.5, N)
    raters = np.argsort(rng.random((N, J)), axis=1)[:, :per_paper]
    raters[::10, 1] = raters[::10, 0]  # some papers with one rater fewer
    paper, rater = [], []
    for v in range(N):
        for j in dict.fromkeys(raters[v]):
            paper.append(v)
            rater.append(j)
    paper, rater = np.array(paper), np.array(rater)
    x = np.rint(scale * (mu[paper] + b[rater] + rng.normal(size=paper.size) * sig[rater]) + offset)
    top = int(10 * scale) + 2 * offset
    return Ratings(paper, rater, np.clip(x, 0, top).astype(int), top, N, J)


def test_matches_dense_weighted_least_squares():
    data = incomplete_data(N=80)
    est = WeightedLeastSquares().fit(data)
    b, mu, _, _ = dense_wls(data, est.weights_)
    np.testing.assert_allclose(est.b_, b, atol=1e-8)
    adj = est.transform(data)
    np.testing.assert_allclose(adj.rating, data.score - b[data.rater], atol=1e-8)
    np.testing.assert_allclose(adj.paper, mu, atol=1e-8)  # precision-weighted mean = WLS paper level


def test_reml_variances_are_the_fixed_point_of_the_dense_fit():
    data = incomplete_data(per_paper=3, N=80)
    est = WeightedLeastSquares(variance="reml").fit(data)
    b, mu, h, resid = dense_wls(data, est.weights_)
    np.testing.assert_allclose(est.b_, b, atol=1e-8)
    # the variances solve sigma_j^2 = sum r^2 / sum (1 - h) with the dense hat matrix
    rss = np.bincount(data.rater, weights=resid ** 2)
    df = np.bincount(data.rater, weights=1 - h)
    np.testing.assert_allclose(est.sigma2_, rss / df, rtol=1e-6)


def test_unweighted_is_ordinary_least_squares():
    data = incomplete_data(N=80)
    est = WeightedLeastSquares(weighted=False, paper_score="mean").fit(data)
    b, _, _, _ = dense_wls(data, np.ones(5))
    np.testing.assert_allclose(est.b_, b, atol=1e-8)
    adj = est.transform(data)
    np.testing.assert_allclose(adj.paper, data.paper_mean(data.score - b[data.rater]), atol=1e-12)


def test_exact_additive_data_recovered():
    rng = np.random.default_rng(0)
    N = 60
    mu = rng.integers(2, 6, N)
    b = np.array([2, 0, -1, -1])
    raters = np.argsort(rng.random((N, 4)), axis=1)[:, :2]
    paper = np.repeat(np.arange(N), 2)
    rater = raters.ravel()
    data = Ratings(paper, rater, mu[paper] + b[rater], 9, N, 4)
    for variance in ("pairs", "reml"):
        est = WeightedLeastSquares(variance=variance).fit(data)
        np.testing.assert_allclose(est.b_, b, atol=1e-6)
        np.testing.assert_allclose(est.transform(data).paper, mu, atol=1e-6)


def test_truncate_clips_to_scale():
    data = incomplete_data()
    adj = WeightedLeastSquares(truncate=True).fit_transform(data)
    assert adj.rating.min() >= 0 and adj.rating.max() <= 10
    assert np.any(WeightedLeastSquares().fit_transform(data).rating > 10)


def test_disconnected_design_is_refused():
    p = np.repeat(np.arange(6), 2)
    r = np.array([0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3])
    s = np.array([1, 2, 2, 3, 0, 1, 1, 1, 2, 2, 3, 2])
    with pytest.raises(MethodError, match="WLS: raters 3, 4 not linked through shared papers to raters 1, 2"):
        WeightedLeastSquares().fit(Ratings(p, r, s, 3, 6, 4))


def test_pairwise_variances_recover_the_truth_in_a_two_rater_design():
    """2 of 5 raters per paper, 4000 papers, scores x10 (rounding adds 1/12 to each variance)."""
    data = incomplete_data(N=4000, scale=10.0, offset=100)  # no clipping at 0 or the top
    sigma2, identified = pairwise_variances(data)
    assert identified
    true = 100 * np.array([0.5, 0.8, 1.0, 1.5, 2.5]) ** 2 + 1 / 12
    # a small variance is the small difference of large pair variances: sd within 25 %
    np.testing.assert_allclose(np.sqrt(sigma2), np.sqrt(true), rtol=0.25)
    est = WeightedLeastSquares().fit(data)
    assert np.all(np.diff(est.weights_[1:]) < 0) and est.weights_[0] > est.weights_[2]  # precise raters weigh more
    np.testing.assert_allclose(est.b_ / 10, [1.0, -0.5, 0.0, 0.5, -1.0], atol=0.12)  # ~3 standard errors


def test_pairwise_variances_equal_a_direct_computation():
    """Pair variances by explicit loops over papers, then the same weighted NNLS by hand."""
    from scipy.optimize import nnls

    data = incomplete_data(per_paper=3, N=60)
    pairs = {}
    for v in range(data.n_papers):
        m = data.paper == v
        js, xs = data.rater[m], data.score[m]
        for a in range(len(js)):
            for c in range(len(js)):
                if js[a] < js[c]:
                    pairs.setdefault((js[a], js[c]), []).append(float(xs[a] - xs[c]))
    keys = sorted(k for k in pairs if len(pairs[k]) >= 2)
    V = np.array([np.var(pairs[k], ddof=1) for k in keys])
    n = np.array([len(pairs[k]) for k in keys])
    D = np.array([[1.0 if j in k else 0.0 for j in range(5)] for k in keys])
    fitted = V
    for _ in range(3):
        wt = np.sqrt(n - 1) / fitted
        sol = nnls(D * wt[:, None], V * wt)[0]
        fitted = D @ sol
    sigma2, identified = pairwise_variances(data)
    assert identified and np.all(sol > 0)
    np.testing.assert_allclose(sigma2, sol, rtol=1e-9)


def test_variances_not_identified_without_an_odd_cycle():
    # raters 0-1 and 1-2 share papers, 0-2 never: sigma_0^2 + sigma_1^2 and sigma_1^2 + sigma_2^2 only
    p = np.repeat(np.arange(8), 2)
    r = np.array([0, 1] * 4 + [1, 2] * 4)
    s = np.array([1, 2, 2, 2, 3, 1, 0, 1, 2, 2, 1, 3, 3, 3, 0, 2])
    est = WeightedLeastSquares().fit(Ratings(p, r, s, 3, 8, 3))
    assert not est.identified_ and np.ptp(est.sigma2_) == 0


def test_precision_weighted_mean_of_mean_equated_ratings():
    """MN shifts each rater by a constant, so within-paper differences keep their variances:
    the weights equal those of the raw scores; the paper score is the weighted mean by hand."""
    from ratercal_cli.methods.wls import PrecisionWeightedMean

    data = incomplete_data(per_paper=3, N=80)
    est = PrecisionWeightedMean(base="MN").fit(data)
    np.testing.assert_allclose(est.sigma2_, pairwise_variances(data)[0], rtol=1e-9)
    adj = est.transform(data)
    mean_all = data.score.mean()
    means = np.array([data.score[data.rater == j].mean() for j in range(5)])
    np.testing.assert_allclose(adj.rating, data.score - means[data.rater] + mean_all, atol=1e-12)
    for v in (0, 7, 33):
        m = data.paper == v
        w = 1 / est.sigma2_[data.rater[m]]
        assert adj.paper[v] == pytest.approx(np.sum(w * adj.rating[m]) / np.sum(w))
