"""The multi-group MML (``MarginalRaterModel(clusters=)``, issue 29): a mean quality per cluster,
checked against an independent fit (Gauss-Hermite quadrature + scipy.optimize, written here), and
against the single-group fit on a school-confounded file."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize
from scipy.special import logsumexp

from ratercal_cli.methods import make_method
from ratercal_cli.methods.mml import fit_mml
from ratercal_cli.ratings import Ratings


def _data(seed=3, n=300, J=5, M=3):
    rng = np.random.default_rng(seed)
    means = np.array([-1.0, 0.2, 1.2])
    cl = np.arange(n) % 3
    theta = means[cl] + 0.9 * rng.standard_normal(n)
    delta = np.linspace(-1.2, 1.2, M)[None, :] + 0.4 * rng.standard_normal((J, M))
    paper, rater, score = [], [], []
    for p in range(n):
        # cluster c is read mostly by raters c and c + 1 (a confounded design, linked)
        own = [cl[p], cl[p] + 1] if rng.random() < 0.8 else list(rng.choice(J, 2, replace=False))
        for j in own:
            tau = np.r_[0.0, np.cumsum(delta[j])]
            logit = np.arange(M + 1) * theta[p] - tau
            pr = np.exp(logit - logsumexp(logit))
            paper.append(p), rater.append(j), score.append(rng.choice(M + 1, p=pr))
    r = Ratings(np.array(paper), np.array(rater), np.array(score), M, n, J)
    return r, cl


def _independent_fit(r: Ratings, cl, M):
    """Maximise sum_p log int prod_i P(x_i | t) N(t; mu_c(p), sigma^2) dt over the raters' steps,
    the clusters' means (the first held at 0) and log sigma; 61 Gauss-Hermite nodes."""
    z, w = np.polynomial.hermite_e.hermegauss(61)
    logw = np.log(w / w.sum())
    J, C = r.n_raters, int(cl.max()) + 1
    A = np.zeros((r.n_papers, r.n_ratings))
    A[r.paper, np.arange(r.n_ratings)] = 1.0

    def unpack(v):
        delta = v[:J * M].reshape(J, M)
        mu = np.r_[0.0, v[J * M:J * M + C - 1]]
        return delta, mu, np.exp(v[-1])

    def loglik_nodes(v):
        delta, mu, sigma = unpack(v)
        tau = np.concatenate([np.zeros((J, 1)), np.cumsum(delta, axis=1)], axis=1)
        theta = mu[cl][:, None] + sigma * z[None, :]                          # (P, Q)
        t = theta[r.paper]                                                    # (n, Q)
        logit = np.arange(M + 1)[None, None, :] * t[:, :, None] - tau[r.rater][:, None, :]
        lse = logsumexp(logit, axis=2)
        lp = logit[np.arange(r.n_ratings), :, r.score] - lse
        return A @ lp + logw[None, :], theta, np.exp(logit - lse[:, :, None])

    def nll(v):
        """-log L and its gradient (Fisher's identity: the posterior mean of the complete-data score)."""
        lpn, _, P = loglik_nodes(v)
        ll = logsumexp(lpn, axis=1)
        post = np.exp(lpn - ll[:, None])[r.paper]                            # (n, Q) each rating's paper's
        sigma = np.exp(v[-1])
        onehot = np.zeros((r.n_ratings, M + 1))
        onehot[np.arange(r.n_ratings), r.score] = 1.0
        d_tau = np.einsum("nq,nqk->nk", post, P) - onehot                    # d log L / d tau[j, k]
        g_tau = np.zeros((J, M + 1))
        np.add.at(g_tau, r.rater, d_tau)
        g_delta = np.cumsum(g_tau[:, :0:-1], axis=1)[:, ::-1]                # tau[k] = sum_{h<=k} delta[h]
        resid = post * (r.score[:, None] - (P * np.arange(M + 1)).sum(axis=2))   # (x - E) weighted
        g_mu = np.bincount(cl[r.paper], weights=resid.sum(axis=1), minlength=C)[1:]
        g_ls = float((resid * sigma * z[None, :]).sum())
        return -ll.sum(), -np.r_[g_delta.ravel(), g_mu, g_ls]

    v0 = np.r_[np.tile(np.linspace(-1, 1, M), J), np.zeros(C - 1), 0.0]
    assert optimize.check_grad(lambda v: nll(v)[0], lambda v: nll(v)[1], v0) < 1e-4 * np.abs(nll(v0)[1]).max()
    res = optimize.minimize(nll, v0, jac=True, method="BFGS", options={"gtol": 1e-8, "maxiter": 2000})
    lpn, theta, _ = loglik_nodes(res.x)
    post = np.exp(lpn - logsumexp(lpn, axis=1, keepdims=True))
    delta, mu, sigma = unpack(res.x)
    tau = np.concatenate([np.zeros((J, 1)), np.cumsum(delta, axis=1)], axis=1)
    eap = (post * theta).sum(axis=1)
    return -res.fun, mu, sigma, tau, eap


def _fair(theta, tau):
    """Mean over the raters of their expected score at each quality."""
    M = tau.shape[1] - 1
    logit = np.arange(M + 1)[None, None, :] * theta[:, None, None] - tau[None, :, :]
    p = np.exp(logit - logsumexp(logit, axis=2, keepdims=True))
    return (p * np.arange(M + 1)).sum(axis=2).mean(axis=1)


@pytest.mark.slow   # the independent fit takes a few seconds of BFGS with numerical gradients
def test_multigroup_mml_matches_an_independent_fit():
    r, cl = _data()
    est = make_method("MML", clusters=cl).fit(r)
    ll, mu, sigma, tau, eap = _independent_fit(r, cl, r.max_score)
    # without the weak priors (flat: sd 1e4) the same maximum to 1e-6: log L, sigma, cluster means
    flat = fit_mml(r, facet=cl[r.paper], step_sd=1e4, location_sd=1e4)
    gam = flat.effects["facet0"][0]
    assert flat.loglik == pytest.approx(ll, abs=1e-6)
    assert flat.sigma == pytest.approx(sigma, abs=1e-6)
    assert np.allclose(gam[0] - gam, mu, atol=1e-6)
    # with them (steps N(0, 5^2), locations N(0, 10^2)) within 0.01 logits (measured: 0.006 - 0.016)
    assert est.loglik_ == pytest.approx(ll, abs=0.05)
    assert est.sigma_ == pytest.approx(sigma, abs=0.02)
    got = est.cluster_mean_ - est.cluster_mean_[0]
    assert np.allclose(got, mu, atol=0.02), (got, mu)
    # the papers' fair scores at their EAP: the same on both scales (location-free)
    ours = est.fair_scores(est.quality_eap_)
    theirs = _fair(eap, tau)
    assert np.max(np.abs(ours - theirs)) < 0.01
    # and the cluster means are where the data put them (true -1.0, 0.2, 1.2: differences 1.2, 2.2)
    assert abs(got[1] - 1.2) < 0.3 and abs(got[2] - 2.2) < 0.3


def test_one_cluster_is_the_single_group_fit():
    r, _ = _data(n=120)
    one = make_method("MML", clusters=np.zeros(r.n_papers, dtype=np.int64)).fit(r)
    plain = make_method("MML").fit(r)
    assert one.loglik_ == pytest.approx(plain.loglik_, abs=1e-6)
    assert np.allclose(one.quality_eap_, plain.quality_eap_, atol=1e-4)   # (within the fits' tolerance)
    assert one.cluster_mean_ == pytest.approx([plain.theta_mean_], abs=1e-4)


def test_clusters_must_be_per_paper():
    r, cl = _data(n=60)
    with pytest.raises(ValueError, match="cluster per paper"):
        make_method("MML", clusters=cl[:-1]).fit(r)
