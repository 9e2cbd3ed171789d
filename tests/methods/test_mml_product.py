"""Patterns of few ratings take their likelihoods at the nodes as products of a table of exps
(methods/mml_engine.py ``_shifted_exp``, up to PRODUCT_MAX ratings; issue 32: on a machine without
AVX-512 numpy's exp is ~6 ns an element, a 1M-rating fit of 3 of 200 raters a paper spent 1.4 s in it).
log L and the posterior means are a direct log-sum-exp over the nodes of each pattern's sum of log
probabilities (the log domain, made here), the gradient and the informations those of the exp form
(PRODUCT_MAX 0), to ~1e-12 relative: 1-8 ratings a paper, a rater scoring a paper twice (a cell
repeated), a rubric (items raters x criteria, the cells held dense), a quality sd so large that the
products are left for the exp form but at 1-2 ratings and patterns whose sums underflow, and windows
of the grid."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from ratercal_cli.methods import mml_engine
from ratercal_cli.methods.mml_engine import GridEngine
from ratercal_cli.methods.quality import log_category_probabilities


def pcm(rng, tau, theta, item):
    """Scores of ``item`` at qualities ``theta`` by the partial credit model (cumulative ``tau``)."""
    K = tau.shape[1]
    logit = np.arange(K)[None, :] * theta[:, None] - tau[item]
    prob = np.exp(logit - logit.max(axis=1, keepdims=True))
    cum = np.cumsum(prob / prob.sum(axis=1, keepdims=True), axis=1)
    return (rng.random(item.size)[:, None] > cum[:, :-1]).sum(axis=1)


def design(rng, case):
    """(paper, item, score), U, K, tau, sigma, nodes of each case."""
    if case == "rubric":   # 6 raters x 4 criteria, 2 raters a paper: 8 ratings, the engine's cells dense
        R, C, K, N, sigma = 6, 4, 5, 600, 1.3
        U = R * C
        raters = np.argsort(rng.random((N, R)), axis=1)[:, :2]
        item = (raters[:, :, None] * C + np.arange(C)).reshape(N, -1)
        paper = np.repeat(np.arange(N), item.shape[1])
        item = item.ravel()
    else:
        U, K, N = (30, 5, 2500) if case != "windows" else (30, 5, 1500)
        sigma = {"1-8 ratings": 1.3, "extreme sd": 6.0, "windows": 3.0}[case]
        lo, hi = (5, 8) if case == "windows" else (1, 8)
        n = rng.integers(lo, hi + 1, N)
        paper = np.repeat(np.arange(N), n)
        item = np.concatenate([rng.choice(U, k, replace=False) for k in n])
    steps = np.linspace(-1.5, 1.5, K - 1) + rng.normal(0, 0.3, (U, K - 1)) + rng.normal(0, 0.5, (U, 1))
    if case == "extreme sd":   # a third of the raters very lenient, a third very harsh
        steps += np.where(np.arange(U) % 3 == 0, -30.0, np.where(np.arange(U) % 3 == 1, 30.0, 0.0))[:, None]
    tau = np.c_[np.zeros(U), np.cumsum(steps, axis=1)]
    theta = rng.normal(0, sigma, N)
    score = pcm(rng, tau, theta[paper], item)
    if case == "extreme sd":   # papers 0-99: 0 from lenient raters and 4 from harsh ones (their sums underflow)
        bad = paper < 100
        score[bad] = np.where(item[bad] % 3 == 0, 0, np.where(item[bad] % 3 == 1, K - 1, score[bad]))
    # a rater scoring a paper twice: a fifth of the papers have one rating again (the same score)
    again = np.flatnonzero(np.r_[True, paper[1:] != paper[:-1]] & (rng.random(paper.size) < 0.2))
    paper, item, score = np.r_[paper, paper[again]], np.r_[item, item[again]], np.r_[score, score[again]]
    return (paper, item, score), U, K, tau, sigma, 201 if case == "windows" else 61


def log_domain(eng, tau, log_sigma, data):
    """log L and each paper's posterior mean of theta, as a log-sum-exp over the nodes of each paper's
    sum of its ratings' log probabilities (every paper, not its class)."""
    paper, item, score = data
    theta = np.exp(log_sigma) * eng.z
    logP = log_category_probabilities(theta[None, :], tau[:, None, :])   # (U, Q, K)
    papers, at = np.unique(paper, return_inverse=True)
    T = np.zeros((papers.size, eng.Q))
    np.add.at(T, at, logP[item, :, score])
    T += eng.logw
    ll = logsumexp(T, axis=1)
    return ll.sum(), np.exp(T - ll[:, None]) @ theta, T, logP


CASES = ["1-8 ratings", "rubric", "extreme sd", "windows"]


@pytest.mark.parametrize("case", CASES)
def test_products_of_exps_give_the_log_domain_s_numbers(monkeypatch, case):
    rng = np.random.default_rng([17, len(case)])
    data, U, K, tau, sigma, Q = design(rng, case)
    ls = np.log(sigma)
    tau1 = tau + np.arange(K)[None, :] * rng.normal(0, 0.05, U)[:, None]   # (a step from the first evaluation)
    ls1 = ls + 0.02
    if case == "windows":
        monkeypatch.setattr(mml_engine, "WINDOW_CHUNK", 64)
        monkeypatch.setattr(mml_engine, "INFO_WINDOWS_FROM", 0)
    taken = []
    gathered = mml_engine._gathered
    monkeypatch.setattr(mml_engine, "_gathered", lambda A, Rt, out, buf, op: taken.append(
        (Rt.shape[0], op is np.multiply)) or gathered(A, Rt, out, buf, op))

    def run(product_max):
        monkeypatch.setattr(mml_engine, "PRODUCT_MAX", product_max)
        eng = GridEngine(*data, U, K, Q)
        eng.evaluate(tau, ls)   # (the windows' places)
        return eng, [eng.evaluate(tau1, ls1, level=1, moments=True), eng.evaluate(tau1, ls1, level=2)]
    eng, (ev, info) = run(mml_engine.PRODUCT_MAX)
    products = {n for n, prod in taken if prod}
    taken.clear()
    ref_eng, (ref, ref_info) = run(0)
    assert not taken   # (the exp form throughout)
    n_rat = set(np.bincount(data[0]).tolist())
    if case == "extreme sd":   # the products where no factor is below exp(FLOOR / n): 1 and 2 ratings here
        assert products == {1, 2}
    else:
        assert products == n_rat if case != "windows" else products >= {5, 6, 7}
    assert (eng._windows() is not None) == (case == "windows")
    assert isinstance(eng.cells_op, np.ndarray) == (case == "rubric")
    # log L and the posterior means: the log domain's
    ll, eap, T, logP = log_domain(eng, tau1, ls1, data)
    assert ev.ll == pytest.approx(ll, rel=1e-12)
    assert info.ll == pytest.approx(ll, rel=1e-12)
    papers = np.unique(data[0])
    np.testing.assert_allclose(ev.eap[eng.pattern], eap, rtol=0, atol=1e-12 * sigma)
    if case == "extreme sd":   # (some papers' sums lie 460 (1e-200) below their bound: shifted by their own largest)
        cell_max = logP.max(axis=1)   # (U, K)
        paper, item, score = data
        bound = np.bincount(np.searchsorted(papers, paper), weights=cell_max[item, score]) + eng.logw.max()
        assert (logsumexp(T, axis=1) < bound - 460).sum() >= 20
    # the gradient, the informations and the posterior sds: the exp form's
    g = ref.g
    np.testing.assert_allclose(ev.g, g, rtol=0, atol=1e-12 * np.abs(g).max())
    np.testing.assert_allclose(ev.eap_sd, ref.eap_sd, rtol=1e-12)
    H = ref_info.H.dense()
    assert np.abs(H).max() > 10.0   # (a real information)
    np.testing.assert_allclose(info.H.dense(), H, rtol=0, atol=1e-12 * np.abs(H).max())
    np.testing.assert_allclose(info.H_em.dense(), ref_info.H_em.dense(), rtol=0, atol=1e-12 * np.abs(H).max())
    np.testing.assert_allclose(info.g, ref_info.g, rtol=0, atol=1e-12 * np.abs(g).max())
