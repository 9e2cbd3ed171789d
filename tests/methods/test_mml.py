"""Marginal ML PCM and many-facet rating scale model (ratercal_cli/methods/mml.py).

References: an independent fit in R (tests/results/make_mml_reference.R: integrate + optim +
optimHess), the marginal log-likelihood by scipy.integrate.quad, the analytic Louis Hessian
against a numerical one, the CML estimates (ratercal_cli/methods/cml.py, itself checked against
psychotools) on a complete design, and recovery of the generating parameters.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from ratercal_cli.config import load_config
from ratercal_cli.design import Cell, table3_steps
from ratercal_cli.errors import MethodError
from ratercal_cli.generators.modern import generate_set
from ratercal_cli.methods import make_method
from ratercal_cli.methods.cml import fit_cml
from ratercal_cli.methods.mml import fit_mml, marginal_loglik
from ratercal_cli.methods.mml_engine import GridEngine
from ratercal_cli.methods.quality import category_probabilities
from ratercal_cli.models import pcm as pcm_model
from ratercal_cli.ratings import Ratings
from support import ROOT


def small_set(n=12, k=3, M=3, seed=5):
    rng = np.random.default_rng(seed)
    steps = np.linspace(-1.5, 1.5, M)[None, :] + np.linspace(-1, 1, 5)[:, None]
    theta = rng.normal(0.3, 1.4, n)
    raters = np.argsort(rng.random((n, 5)), axis=1)[:, :k]
    score = pcm_model.sample_scores(rng, theta[:, None], steps[raters])
    return Ratings(np.repeat(np.arange(n), k), raters.ravel(), score.ravel(), M, n, 5)


def simulated(cell_code, M, n, seed=7, quality="normal"):
    """A data set of the modern PCM generator with Table 3's raters (quality 3z + 2)."""
    k = cell_code
    g = generate_set(Cell(k, n, M, quality), "pcm", seed, 0, steps=table3_steps(M))
    o = g.observed
    return g, Ratings(o.paper[o.kept], o.rater[o.kept], o.score[o.kept], M, n, 9)


def quad_loglik(r: Ratings, tau, sigma):
    """sum_p log integral prod_i P(x_i | t) N(t; 0, sigma^2) dt, by adaptive quadrature."""
    total = 0.0
    for p in range(r.n_papers):
        m = r.paper == p
        if not m.any():
            continue
        js, xs = r.rater[m], r.score[m]

        def f(t):
            pr = category_probabilities(t, tau[js])[np.arange(js.size), xs]
            return np.prod(pr) * np.exp(-0.5 * (t / sigma) ** 2) / (sigma * np.sqrt(2 * np.pi))

        val, _ = integrate.quad(f, -np.inf, np.inf, epsabs=0, epsrel=1e-12, limit=200)
        total += np.log(val)
    return total


# ---- the likelihood ---------------------------------------------------------------------------
def test_marginal_loglik_matches_scipy_quad():
    r = small_set()
    rng = np.random.default_rng(1)
    tau = np.zeros((5, 4))
    tau[:, 1:] = np.cumsum(rng.normal(0, 1, (5, 3)), axis=1)
    # the grid (spacing set by the papers' posterior sds) integrates to 1e-6 and better whether the
    # posteriors are near normal (small sigma: 5e-12) or normal tails cut sharply by the likelihood (an
    # all-top paper with sigma = 4: 2e-11, where 21 adaptive Gauss-Hermite nodes were off by 2e-3)
    for sigma, tol in ((0.5, 1e-10), (1.7, 1e-6), (4.0, 1e-10)):
        ref = quad_loglik(r, tau, sigma)
        assert marginal_loglik(r, tau, sigma) == pytest.approx(ref, abs=tol)
    # a grid too coarse for the posteriors is not: 9 nodes over +-7 sigma
    assert abs(marginal_loglik(r, tau, 4.0, n_nodes=9) - ref) > 1e-3


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_fitted_loglik_is_the_marginal_loglik_at_the_estimates():
    r = small_set(n=60)
    fit = fit_mml(r, model="pcm")
    # the centred scale has paper mean theta_mean: shift back to mean 0 for the likelihood
    tau = fit.tau - fit.theta_mean * np.arange(4)
    assert fit.converged
    assert fit.loglik == pytest.approx(quad_loglik(r, tau, fit.sigma), abs=1e-6)


def test_louis_hessian_is_the_numerical_hessian_of_log_l():
    r = small_set(n=40)
    # papers 40-42 repeat papers 0-2: patterns counted twice; papers with the same raters and total
    # score one class
    extra = r.paper < 3
    eng = GridEngine(np.r_[r.paper, r.paper[extra] + 40], np.r_[r.rater, r.rater[extra]],
                     np.r_[r.score, r.score[extra]], 5, 4, 25)
    distinct = {(tuple(sorted(r.rater[r.paper == p])), r.score[r.paper == p].sum()) for p in range(40)}
    assert eng.N == len(distinct) and eng.papers.size == 43
    rng = np.random.default_rng(0)
    tau = np.zeros((5, 4))
    tau[:, 1:] = rng.normal(size=(5, 3))
    ls = 0.3

    def ll(v):
        t = tau.copy()
        t[:, 1:] = v[:-1].reshape(5, 3)
        return eng.evaluate(t, v[-1]).ll

    v = np.r_[tau[:, 1:].ravel(), ls]
    ev = eng.evaluate(tau, ls, level=2)
    h = 1e-4
    E = np.eye(v.size) * h
    grad = np.array([(ll(v + e) - ll(v - e)) / (2 * h) for e in E])
    hess = np.array([[(ll(v + a + b) - ll(v + a - b) - ll(v - a + b) + ll(v - a - b)) / (4 * h * h) for b in E]
                     for a in E])
    np.testing.assert_allclose(ev.g, grad, atol=1e-6)
    np.testing.assert_allclose(ev.H.dense(), hess, atol=2e-5)


# ---- against CML --------------------------------------------------------------------------------
def complete_design(model, n=2000, seed=0):
    """Nine raters score every paper (0-5): CML loses little by conditioning on the total.

    The qualities are the N(0, 1.5^2) quantiles, so that the sample's distribution is the normal
    one MML assumes: with a random normal sample, its chance skewness and kurtosis move MML's
    steps (not CML's, which conditions the distribution away) by up to 0.07 (seeds 0-4)."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    sev = np.linspace(-1, 1, 9)
    steps = sev[:, None] + (np.linspace(-2, 2, 5) if model == "rsm" else
                            np.linspace(-2, 2, 5) + rng.normal(0, 0.3, (9, 5)))
    theta = 1.5 * stats.norm.ppf((np.arange(n) + 0.5) / n)
    s = pcm_model.sample_scores(rng, theta[:, None], steps[None, :, :])
    return Ratings(np.repeat(np.arange(n), 9), np.tile(np.arange(9), n), s.ravel(), 5, n, 9)


@pytest.mark.slow
def test_mml_steps_agree_with_cml_on_a_complete_design():
    # Both estimators are consistent; they differ by the information the conditioning on each
    # paper's total throws away, which with nine ratings per paper is little: on 2,000 papers the
    # steps' SEs are 0.05-0.18 and the estimates differ by 0.005-0.008 (RMS over the 45 steps,
    # seeds 0-5), single steps into a rare category by up to 0.04 (their SEs differ most).
    # Severities (mean steps) and the rating scale model's shared thresholds agree within 0.01.
    r = complete_design("pcm")
    c, m = fit_cml(r), fit_mml(r)
    a, b = c.steps - c.steps.mean(), m.steps - m.steps.mean()
    d = a - b
    print(f"PCM MML - CML steps: RMS {np.sqrt(np.mean(d ** 2)):.4f}, max {np.abs(d).max():.4f}")
    assert np.sqrt(np.mean(d ** 2)) < 0.02
    assert np.abs(d).max() < 0.05
    np.testing.assert_allclose(m.severity, a.mean(axis=1), atol=0.02)
    # the rating scale model on data from it: shared thresholds and severities within 0.02
    r = complete_design("rsm")
    c, m = fit_cml(r, model="rsm"), fit_mml(r, model="rsm")
    np.testing.assert_allclose(m.thresholds - m.thresholds.mean(), c.kappa - c.kappa.mean(), atol=0.02)
    np.testing.assert_allclose(m.severity, c.beta, atol=0.02)


# ---- recovery -----------------------------------------------------------------------------------
@pytest.mark.parametrize("M", [5, 9])
def test_recovers_the_generating_steps(M):
    # 2,000 papers, 2 of Table 3's 9 raters each, quality 3z + 2 (normal, as MML assumes).
    # Compared on the generating scale: the fit's centred steps moved by (mean quality - fitted
    # paper mean).  Steps into or out of a category given fewer than 20 times rest on the prior
    # and are left out (a category at P < 1e-4 for every paper is not recoverable).  Tolerances
    # from the model SEs: if the SEs are right the RMSE is about their RMS (with about 40-60
    # steps, RMSE / RMS(SE) has a sampling sd of about 1 / sqrt(2 * 45) = 0.1: allow 1.3); the
    # bias (mean error) has an sd of about RMS(SE) / sqrt(n_steps) plus the error of the paper
    # mean: allow 3 times that.
    g, r = simulated("2", M, 2000)
    fit = fit_mml(r, model="pcm")
    true = table3_steps(M)
    counts = np.zeros((9, M + 1))
    np.add.at(counts, (r.rater, r.score), 1)
    ok = np.minimum(counts[:, :-1], counts[:, 1:]) >= 20
    est = fit.steps + (g.quality.mean() - fit.theta_mean)
    err = (est - true)[ok]
    se = fit.steps_se[ok]
    bias, rmse, rms_se = err.mean(), np.sqrt(np.mean(err ** 2)), np.sqrt(np.mean(se ** 2))
    print(f"0-{M}: {ok.sum()} steps, bias {bias:+.4f}, RMSE {rmse:.4f}, RMS(SE) {rms_se:.4f}, "
          f"sigma {fit.sigma:.3f} (sample sd {g.quality.std():.3f})")
    assert rmse < 1.3 * rms_se
    assert abs(bias) < 3 * np.hypot(rms_se / np.sqrt(ok.sum()), fit.sigma / np.sqrt(r.n_papers))
    assert fit.sigma == pytest.approx(g.quality.std(), abs=3 * fit.sigma_se)
    # severity: the rater's part s_j of the least-squares additive fit true[j, k] = s_j + d_k over the steps
    # between the lowest and highest category it gave (a rater's mean step there, less the panel's mean
    # step in those categories: mml._panel_offsets), centred; here by lstsq on the dummies' design
    lo = np.argmax(counts > 0, axis=1)
    hi = M - np.argmax(counts[:, ::-1] > 0, axis=1)
    cells = [(j, k) for j in range(9) for k in range(lo[j], hi[j])]
    X = np.zeros((len(cells), 9 + M))
    for i, (j, k) in enumerate(cells):
        X[i, j] = X[i, 9 + k] = 1.0
    sol = np.linalg.lstsq(X, np.array([true[j, k] for j, k in cells]), rcond=None)[0]
    sev_true = sol[:9] - sol[:9].mean()
    z = (fit.severity - sev_true) / fit.severity_se
    print(f"   severity z: {np.round(z, 2)}")
    assert np.abs(z).max() < 3.5  # nine z-scores, each |z| > 3.5 with probability 5e-4


def test_mfrm_recovers_severity_and_shared_thresholds():
    # data from the many-facet rating scale model itself: severities -1..1, thresholds -2..2
    rng = np.random.default_rng(3)
    sev = np.linspace(-1, 1, 9)
    kappa = np.linspace(-2, 2, 5)
    theta = rng.normal(0.5, 1.5, 2000)
    raters = np.argsort(rng.random((2000, 9)), axis=1)[:, :2]
    s = pcm_model.sample_scores(rng, theta[:, None], sev[raters][:, :, None] + kappa)
    r = Ratings(np.repeat(np.arange(2000), 2), raters.ravel(), s.ravel(), 5, 2000, 9)
    fit = fit_mml(r, model="rsm")
    z_sev = (fit.severity - sev) / fit.severity_se
    z_thr = (fit.thresholds - kappa) / fit.thresholds_se
    print(f"MFRM: severity RMSE {np.sqrt(np.mean((fit.severity - sev) ** 2)):.4f}, "
          f"thresholds RMSE {np.sqrt(np.mean((fit.thresholds - kappa) ** 2)):.4f}")
    # z-scores of 14 parameters: all within 3.5 and their RMS near 1 if the SEs are right
    assert np.abs(np.r_[z_sev, z_thr]).max() < 3.5
    assert 0.5 < np.sqrt(np.mean(np.r_[z_sev, z_thr] ** 2)) < 1.6
    assert fit.theta_mean == pytest.approx(0.5, abs=0.15)


def test_further_facet_is_recovered():
    # a task facet with effects -0.6, 0, +0.6 added to every rater's steps
    rng = np.random.default_rng(11)
    n = 1500
    steps = np.linspace(-1, 1, 9)[:, None] + np.linspace(-2, 2, 5)
    gamma = np.array([-0.6, 0.0, 0.6])
    task = rng.integers(0, 3, n)
    theta = rng.normal(0, 1.5, n)
    raters = np.argsort(rng.random((n, 9)), axis=1)[:, :2]
    s = pcm_model.sample_scores(rng, theta[:, None], steps[raters] + gamma[task][:, None, None])
    r = Ratings(np.repeat(np.arange(n), 2), raters.ravel(), s.ravel(), 5, n, 9)
    facet = np.repeat(task, 2)
    for model in ("pcm", "rsm"):
        est = make_method("MML" if model == "pcm" else "MFRM").fit(r, facet=facet)
        assert np.all(np.abs(est.facet_ - gamma) < 3.5 * est.facet_se_), (model, est.facet_, est.facet_se_)
        assert est.facet_.sum() == pytest.approx(0.0, abs=1e-9)
        out = est.transform(r, facet=facet)
        assert np.isfinite(out.paper).all()
        with pytest.raises(MethodError, match="0 facets given, the fit had 1: give transform .* the facet= levels"):
            est.transform(r)   # (the facet is per rating, so transform needs it as fit did)


# ---- always estimates, and says why -------------------------------------------------------------
def test_unused_categories_and_extreme_papers_still_give_estimates_with_a_warning():
    rng = np.random.default_rng(0)
    p = np.repeat(np.arange(30), 2)
    r = np.tile([0, 1], 30)
    r[::6] = 2
    s = np.where(p < 10, 0, np.where(p < 20, 5, rng.integers(0, 6, 60)))  # 20 extreme papers
    s[r == 2] = np.where(s[r == 2] > 2, 4, 1)  # rater 3 never gives 0, 2, 3 or 5
    data = Ratings(p, r, s, 5, 30, 3)
    for code in ("MML", "MFRM"):
        est = make_method(code)
        out = est.fit_transform(data)
        assert est.converged_
        assert np.isfinite(out.paper).all() and np.isfinite(est.severity_se_).all()
        assert np.isfinite(est.quality_wle_).all() and np.isfinite(est.quality_eap_).all()
    est = make_method("MML").fit(data)
    assert est.warnings_ == ["categories never given by rater (1: 1; 2: 1; 3: 0,2,3,5): the thresholds next to "
                             "them rest on the weak prior N(0, 5^2) on adjacent threshold differences"]
    assert np.abs(est.steps_).max() < 40  # finite, held by the prior


def test_unused_categories_are_named_by_their_scores_on_the_files_scale():
    # a 1-6 file is held as 0..5 with scale_low 1: rater 3 never gives the scores 1, 3, 4 and 6 (held 0, 2, 3, 5),
    # raters 1 and 2 never the score 2; the warning named the held categories (0,2,3,5), not the scores
    rng = np.random.default_rng(0)
    p = np.repeat(np.arange(30), 2)
    r = np.tile([0, 1], 30)
    r[::6] = 2
    s = np.where(p < 10, 0, np.where(p < 20, 5, rng.integers(0, 6, 60)))
    s[r == 2] = np.where(s[r == 2] > 2, 4, 1)
    est = make_method("MML").fit(Ratings(p, r, s, 5, 30, 3, scale_low=1))
    assert est.warnings_ == ["categories never given by rater (1: 2; 2: 2; 3: 1,3,4,6): the thresholds next to "
                             "them rest on the weak prior N(0, 5^2) on adjacent threshold differences"]
    s = np.minimum(s, 4)   # the held 5, the score 6, given by nobody: the rating scale model's shared threshold
    est = make_method("MFRM").fit(Ratings(p, r, s, 5, 30, 3, scale_low=1))
    assert [w for w in est.warnings_ if "given by no rater" in w] == [
        "categories 6 given by no rater: the shared thresholds next to them rest on the weak prior N(0, 5^2) on "
        "adjacent threshold differences"]


def test_rater_links_join_the_raters_that_share_papers():
    # ratings in no order, 1-6 a paper (a rater twice on some), three groups of raters that share
    # no paper and a rater with none: the links' components are the shared papers'
    from ratercal_cli.network import consecutive_links as _rater_links
    from ratercal_cli.network import rater_components

    rng = np.random.default_rng(3)
    n = rng.integers(1, 7, 400)
    p = np.repeat(np.arange(n.size), n)
    group = np.array([0, 7, 12])[p % 3]
    r = group + rng.integers(0, np.array([7, 5, 8])[p % 3])
    order = rng.permutation(p.size)
    data = Ratings(p[order], r[order], rng.integers(0, 4, p.size), 3, n.size, 21)
    low, high = _rater_links(data.paper, data.rater, data.n_raters)
    assert (low <= high).all() and np.unique(low * 21 + high).size == low.size   # distinct pairs
    labels = rater_components(data, (low, high))
    assert np.array_equal(labels, rater_components(data))
    assert labels.tolist() == [0] * 7 + [1] * 5 + [2] * 8 + [-1]


def test_raters_linked_late_in_the_file_are_linked_and_unlinked_ones_refused_as_before():
    # raters 1-2 and 3-4 read papers apart; only the file's last paper, read by 2 and 3, links them: the
    # first 1/16 of the ratings leave two groups, all the ratings one
    from ratercal_cli.network import consecutive_links as _rater_links
    from ratercal_cli.network import disconnected_raters

    p = np.repeat(np.arange(41), 2)
    r = np.r_[np.where(np.arange(40) % 2 == 0, 0, 2)[:, None] + np.array([0, 1]), [[1, 2]]].ravel()
    data = Ratings(p, r, np.arange(82) % 4, 3, 41, 4)
    head = data.n_ratings // 16
    assert disconnected_raters(data, _rater_links(p[:head], r[:head], 4)).tolist() == [2, 3]
    assert not disconnected_raters(data, _rater_links(p, r, 4)).size   # (no error)
    assert make_method("MML").fit(data).converged_
    apart = data.subset(p < 40)
    with pytest.raises(MethodError, match=r"^MML \(PCM\): raters 3, 4 not linked through shared papers to raters 1, 2;"):
        make_method("MML").fit(apart)


def test_unlinked_raters_and_one_rater_designs_are_refused():
    rng = np.random.default_rng(0)
    p = np.repeat(np.arange(20), 2)
    r = np.where(p < 10, np.tile([0, 1], 20), np.tile([2, 3], 20))
    data = Ratings(p, r, rng.integers(0, 6, 40), 5, 20, 4)
    with pytest.raises(MethodError, match="raters 3, 4 not linked"):
        make_method("MML").fit(data)
    with pytest.raises(MethodError, match="at least two raters"):
        make_method("MFRM").fit(Ratings(np.arange(20), np.arange(20) % 4, rng.integers(0, 6, 20), 5, 20, 4))


def test_transform_of_new_data_scores_papers_as_the_fit_did():
    _, r = simulated("2", 5, 300, seed=3)
    est = make_method("MML").fit(r)
    sub = r.subset(r.paper < 40)
    copy = Ratings(sub.paper, sub.rater, sub.score, 5, r.n_papers, 9)
    new = est.transform(copy).paper
    # the fit's EAPs are at its last nodes (re-centred until they moved < 0.01 posterior sd), new data's
    # at nodes re-centred 8 times: the same to a few 1e-6
    np.testing.assert_allclose(new[:40], est.transform(r).paper[:40], atol=2e-5)
    assert np.isnan(new[40:]).all()  # papers without ratings have no score


def test_wle_once_a_pattern_is_every_paper_solved_alone():
    """Papers with the same items and scores are solved once (``MMLFit.patterns``): the same WLEs,
    SEs and extremes as :func:`estimate_quality` over every paper."""
    from ratercal_cli.methods.quality import estimate_quality

    _, r = simulated("2", 3, 400, seed=4)
    for code in ("MML", "MFRM"):
        est = make_method(code).fit(r)
        papers, pattern, _ = est.result_.patterns
        assert np.unique(pattern).size < papers.size / 2   # (0-3, two of nine raters: patterns repeat)
        theta, se, extreme = estimate_quality(r.paper, est._item_of(r, None), r.score, r.n_papers,
                                              est.result_.item_tau, quality="wle")
        np.testing.assert_allclose(est.quality_wle_, theta, rtol=0, atol=1e-12)
        np.testing.assert_allclose(est.quality_wle_se_, se, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(est.extreme_, extreme)


def test_the_wle_attributes_read_late_are_those_of_the_last_fit():
    """The WLE attributes are computed when first read (``WLE_ATTRIBUTES``): read after a second fit
    they are the second data's (not the first fit's, nor a mix), equal to a fresh estimator's, also
    after a pickle round trip; ``quality="wle"`` uses them at once."""
    import pickle

    from ratercal_cli.methods.mml import WLE_ATTRIBUTES, MarginalRaterModel

    _, r1 = simulated("2", 3, 300, seed=4)
    _, r2 = simulated("3", 3, 200, seed=9)
    late = MarginalRaterModel().fit(r1)
    first_extreme = late.extreme_.copy()        # read: the first fit's
    late.fit(r2)
    fresh = MarginalRaterModel().fit(r2)
    copy = pickle.loads(pickle.dumps(fresh))    # pickled before any was read
    assert first_extreme.shape == (300,) and late.extreme_.shape == (200,)
    for name in WLE_ATTRIBUTES:
        for other in (fresh, copy):
            a, b = getattr(late, name), getattr(other, name)
            if name == "rater_fit_":
                a, b = np.array([a.infit, a.outfit]), np.array([b.infit, b.outfit])
            np.testing.assert_array_equal(a, b)
    wle = MarginalRaterModel(quality="wle").fit(r2)
    np.testing.assert_array_equal(wle.quality_, fresh.quality_wle_)
    np.testing.assert_array_equal(wle.quality_se_, fresh.quality_wle_se_)
    with pytest.raises(AttributeError):
        MarginalRaterModel().quality_wle_      # not fitted


def test_facets_report_quantities():
    _, r = simulated("2", 5, 300, seed=3)
    est = make_method("MFRM").fit(r)
    assert est.code == "MFRM" and make_method("MML").code == "MML"
    assert est.severity_.shape == (9,) and est.thresholds_.shape == (5,)
    assert np.nanmean(est.severity_) == pytest.approx(0.0, abs=1e-9)
    # steps = severity + shared thresholds
    np.testing.assert_allclose(est.steps_, est.severity_[:, None] + est.thresholds_, atol=1e-9)
    assert est.rating_expected_.shape == (r.n_ratings,) and (est.rating_variance_ > 0).all()
    # the fit statistics come from these expectations: outfit = mean squared standardised residual
    z2 = (r.score - est.rating_expected_) ** 2 / est.rating_variance_
    keep = est.extreme_[r.paper] == 0
    j = 4
    assert est.rater_fit_.outfit[j] == pytest.approx(z2[keep & (r.rater == j)].mean())
    # EAP is shrunk towards the mean, WLE is not: the EAPs vary less
    assert np.std(est.quality_eap_) < np.std(est.quality_wle_)
    assert (est.quality_eap_se_ > 0).all() and (est.quality_wle_se_ > 0).all()


@pytest.mark.slow
def test_fits_one_replication_of_every_corrected_cell():
    cfg = load_config(ROOT / "configs" / "corrected.yaml")
    fitted = refused = 0
    for cell in cfg.cells:
        g = generate_set(cell, "pcm", cfg.seed, 0, np.asarray(cfg.steps[cell.max_score]))
        o = g.observed
        r = Ratings(o.paper[o.kept], o.rater[o.kept], o.score[o.kept], cell.max_score, cell.papers, 9)
        for code in ("MML", "MFRM"):
            est = make_method(code, "corrected")
            if cell.raters_per_paper == "1":
                with pytest.raises(MethodError):
                    est.fit(r)
                refused += 1
                continue
            out = est.fit_transform(r)
            assert est.converged_, (cell.code, code)
            assert np.isfinite(out.paper).all(), (cell.code, code)
            fitted += 1
    assert (fitted, refused) == (48, 16)


def test_adjust_command_with_mml_and_mfrm(tmp_path):
    """``ratercal adjust examples/ratings.csv --method MML,MFRM``: each grade fitted on its own; the
    paper columns are the estimators' fair scores; the unused categories are warned about."""
    import csv

    from click.testing import CliRunner

    from ratercal_cli.commands.practice import adjust

    src = ROOT / "examples" / "ratings.csv"
    out = tmp_path / "adj.csv"
    res = CliRunner().invoke(adjust, [str(src), "--scale", "0-5", "--group-col", "grade", "--method", "MML,MFRM",
                                      "-o", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "MML: rater R1 never gave a 0; raters R3, R10 never gave 0, 1 or 2;" in res.output   # scores, not categories
    rows = list(csv.DictReader(out.open()))
    grade = [r for r in rows if r["grade"] == "8"]
    r = Ratings.from_labels([g["paper"] for g in grade], [g["rater"] for g in grade],
                            [int(g["score"]) for g in grade], 5)
    for code in ("MML", "MFRM"):
        want = make_method(code).fit_transform(r).paper
        got = {g["paper"]: float(g[f"{code}_paper"]) for g in grade}
        np.testing.assert_allclose([got[p] for p in r.paper_ids], want, atol=6e-5)


def test_pcm_matches_r_integrate_and_optim():
    """Against an independent fit in R (tests/results/make_mml_reference.R): the marginal likelihood
    by ``integrate`` paper by paper, maximised by ``optim``, SEs from ``optimHess``; no priors."""
    import csv

    from support import RESULTS

    d = np.loadtxt(RESULTS / "mml_150x5_0-3.csv", delimiter=",", skiprows=1, dtype=int)
    r = Ratings.from_labels(d[:, 0], d[:, 1], d[:, 2], 3, rater_ids=range(1, 6))
    with open(RESULTS / "mml_r_reference_150x5_0-3.csv") as fh:
        ref = {row["parameter"]: row for row in csv.DictReader(fh)}
    fit = fit_mml(r, model="pcm", step_sd=1e6, location_sd=1e6)  # priors off
    assert fit.converged
    tau = (fit.tau - fit.theta_mean * np.arange(4))[:, 1:]  # back to the scale with mean quality 0
    want = np.array([[float(ref[f"tau_{j}_{k}"]["estimate"]) for k in (1, 2, 3)] for j in range(1, 6)])
    # agreement found: estimates 5e-6, log L 1e-10, SEs 2e-6 relative; allowed: 10-100 times that
    np.testing.assert_allclose(tau, want, atol=5e-5)
    assert np.log(fit.sigma) == pytest.approx(float(ref["log_sigma"]["estimate"]), abs=5e-5)
    assert fit.loglik == pytest.approx(float(ref["loglik"]["estimate"]), abs=1e-8)
    # model SEs (Louis information) against R's numerical Hessian, same parametrisation
    se_ref = np.array([float(ref[f"tau_{j}_{k}"]["se"]) for j in range(1, 6) for k in (1, 2, 3)]
                      + [float(ref["log_sigma"]["se"])])
    # (the fit's free coordinates are the steps: cumulated to R's tau by the layout's map)
    from ratercal_cli.methods.mml import _Objective
    K = _Objective(GridEngine(r.paper, r.rater, r.score, 5, 4, 9), fit.layout).K.toarray()
    np.testing.assert_allclose(np.sqrt(np.diag(K @ fit.cov @ K.T)), se_ref, rtol=1e-4)


# ---- many facets and anchors (the layout) -------------------------------------------------------
def rubric_like(n=800, seed=4):
    """Two of six raters score each paper in two domains (thresholds per domain); a task facet
    (three levels, one per paper) and a domain facet shift every step."""
    rng = np.random.default_rng(seed)
    sev = np.linspace(-0.8, 0.8, 6)
    task, dom = np.array([-0.5, 0.0, 0.5]), np.array([-0.3, 0.3])
    kappa = np.array([[-1.5, -0.5, 0.5, 1.5], [-1.0, -0.6, 0.4, 1.2]])
    theta = rng.normal(0.0, 1.3, n)
    raters = np.argsort(rng.random((n, 6)), axis=1)[:, :2]
    t = rng.integers(0, 3, n)
    paper = np.repeat(np.arange(n), 4)
    rater = np.repeat(raters, 2, axis=1).ravel()
    domain = np.tile([0, 1], 2 * n)
    tk = t[paper]
    steps = (sev[rater] + task[tk] + dom[domain])[:, None] + kappa[domain]
    score = pcm_model.sample_scores(rng, theta[paper][:, None], steps[:, None, :])[:, 0]
    r = Ratings(paper, rater, score, 4, n, 6)
    return r, np.column_stack([tk, domain]), dict(sev=sev, task=task, dom=dom, kappa=kappa)


@pytest.mark.slow  # over 0.6 s
def test_two_facets_thresholds_per_domain_and_anchors():
    r, facets, true = rubric_like()
    # (the priors on locations off: the prior on severities is not the same about another origin)
    fit = fit_mml(r, model="rsm", facet=facets, threshold_facet=1, location_sd=1e6)
    assert fit.converged
    z = np.r_[(fit.severity - (true["sev"] - true["sev"].mean())) / fit.severity_se,
              (fit.effects["facet0"][0] - true["task"]) / fit.effects["facet0"][1],
              (fit.effects["facet1"][0] - true["dom"]) / fit.effects["facet1"][1],
              ((fit.thresholds - true["kappa"]) / fit.thresholds_se).ravel()]
    assert fit.thresholds.shape == (2, 4) and np.abs(z).max() < 3.5, np.round(z, 2)
    # anchoring rater 1 at 0.3 and letting the paper mean move gives the same model on another origin
    anch = fit_mml(r, model="rsm", facet=facets, threshold_facet=1, location_sd=1e6,
                   anchor=lambda lay: lay.fix("severity", 0, 0.3).free("theta_mean"))
    assert anch.loglik == pytest.approx(fit.loglik, abs=1e-7)
    assert anch.severity[0] == pytest.approx(0.3, abs=1e-12)
    np.testing.assert_allclose(anch.severity - anch.severity[0], fit.severity - fit.severity[0], atol=1e-4)
    assert anch.theta_mean - anch.severity[0] == pytest.approx(fit.theta_mean - fit.severity[0], abs=1e-4)
    np.testing.assert_allclose(anch.eap - anch.severity[0], fit.eap - fit.severity[0], atol=1e-4)
    # the anchored severity has no SE; the others' SEs now include the origin's uncertainty
    assert anch.severity_se[0] == pytest.approx(0.0, abs=1e-9)


def test_a_diverged_information_is_a_method_error_not_a_value_error():
    """scipy's Cholesky refuses a non-finite matrix with ValueError, which is no longer taken for
    "the method could not be fitted"; the fit names the numerical failure itself."""
    from ratercal_cli.methods.mml import _factor

    H = -np.eye(2)
    assert _factor(H, H)[1] is True
    with pytest.raises(MethodError, match="not finite: the estimates diverged"):
        _factor(np.array([[-1.0, np.nan], [np.nan, -1.0]]), H)


@pytest.mark.parametrize("model", ["pcm", "rsm"])
def test_a_sample_steered_fit_ends_where_the_full_one_does(monkeypatch, model):
    """Past 2 x SAMPLE_RATINGS ratings the iterations are steered by the information of every k-th
    paper (cheaper by k), the sample's papers fitted first (their gradients and information alone),
    and go on until its decrement is under SAMPLE_TOL of the tolerance: the
    same estimates and log L as a fit steered and confirmed by the full information, with no full
    information computed until a standard error is asked for (then once: the same SEs)."""
    import ratercal_cli.methods.mml as mml_mod
    from ratercal_cli.methods import mml_engine

    g, r = simulated("2", 5, 2000)
    full = fit_mml(r, model=model)
    calls = []
    evaluate = mml_engine.GridEngine.evaluate

    def spy(self, *a, **k):
        calls.append((self.papers.size, k.get("level", 0)))
        return evaluate(self, *a, **k)

    monkeypatch.setattr(mml_mod, "SAMPLE_RATINGS", 2000)   # 4,000 ratings: every 2nd paper
    monkeypatch.setattr(mml_mod, "SAMPLE_PER_PARAMETER", 1)
    monkeypatch.setattr(mml_engine.GridEngine, "evaluate", spy)
    sampled = fit_mml(r, model=model)
    n_full = max(n for n, _ in calls)
    assert any(n < n_full and level == 2 for n, level in calls)   # the sample (every 2nd paper and those of rare cells) steered
    first = [n for n, _ in calls].index(n_full)   # the sample's papers were fitted first, on their own
    assert sum(level == 1 for _, level in calls[:first]) >= 3 and sum(level == 2 for _, level in calls[:first]) >= 1
    assert sum(n < n_full and level == 2 for n, level in calls) <= mml_mod.MAX_SAMPLE_INFOS
    assert [level for n, level in calls if n == n_full].count(2) == 0   # no full information yet
    assert sampled.converged and full.converged
    assert sampled.loglik == pytest.approx(full.loglik, rel=1e-10)   # (their grids may differ by a node)
    np.testing.assert_allclose(sampled.steps, full.steps, atol=2e-6)
    np.testing.assert_allclose(sampled.eap, full.eap, atol=2e-6)
    del calls[:]
    np.testing.assert_allclose(sampled.steps_se, full.steps_se, rtol=2e-3)   # the SEs: computed now, once
    np.testing.assert_allclose(sampled.severity_se, full.severity_se, rtol=2e-3)
    assert [level for n, level in calls if n == n_full] == [2]


def test_a_fit_whose_quasi_newton_updates_overflow_takes_the_information_afresh():
    """One rater's two ratings, both 0 (a group of tests/property/test_found.py's ALL_THIN once its
    thin raters are set aside): every estimate runs off, the BFGS updates' curvature vanishes and
    their two-loop product overflowed to nan, which the line search took for a step (nan compares
    False) and the next information refused ("the information matrix is not finite").  The
    direction is now checked and the information taken afresh; the fit ends with finite estimates,
    as it did before the engine's one-pass formula (997a349 .. e93d500) changed the roundings."""
    r = Ratings(paper=np.array([0, 1]), rater=np.array([1, 1]), score=np.array([0, 0]), max_score=1,
                n_papers=2, n_raters=3)
    fit = fit_mml(r, model="rsm")   # raised MethodError
    assert np.isfinite(fit.loglik) and np.isfinite(fit.sigma)
    assert np.isfinite(fit.severity[1]) and np.isfinite(fit.eap).all()


@pytest.mark.parametrize("per_paper", [3, 15])   # (15 a paper: the last pass on windows of the grid)
def test_the_fits_last_pass_takes_the_paper_ses_fair_score_moments_along(monkeypatch, per_paper):
    """The fit's last pass over every paper (log L, the EAPs: ``MMLFit.posterior``) is made when first asked
    for and takes the posterior moments of the fair score that the paper SEs need
    (``MarginalRaterModel.fair_score_sd``) along: no second pass over the papers, and the numbers of the two
    passes it replaced (a fresh engine's, on the whole grid) to 1e-12; the same EAPs whatever the engine
    evaluated in between (the pass takes the grid and windows the fit ended on)."""
    from ratercal_cli.methods import mml_engine

    monkeypatch.setattr(mml_engine, "WINDOW_CHUNK", 64)
    rng = np.random.default_rng(32)
    n, J, M = 400, 20, 4
    steps = np.linspace(-1.5, 1.5, M)[None, :] + rng.normal(0, 0.6, J)[:, None]
    theta = rng.normal(0.3, 1.4, n)
    raters = np.argsort(rng.random((n, J)), axis=1)[:, :per_paper]
    score = pcm_model.sample_scores(rng, theta[:, None], steps[raters])
    r = Ratings(np.repeat(np.arange(n), per_paper), raters.ravel(), score.ravel(), M, n, J)
    passes, windows = [], []
    evaluate, window_pass = GridEngine.evaluate, GridEngine._window_pass
    monkeypatch.setattr(GridEngine, "evaluate", lambda eng, *a, **k: passes.append(eng.N) or evaluate(eng, *a, **k))
    monkeypatch.setattr(GridEngine, "_window_pass", lambda eng, *a: windows.append(1) or window_pass(eng, *a))
    est = make_method("MML").fit(r)
    windows.clear()
    fp = est.result_.posterior
    assert fp.ev is not None
    before = len(passes)
    se = est.fair_score_sd()
    assert len(passes) == before   # (the moments were taken in the fit's last pass)
    # the two passes it replaced: log L and the EAPs, then the fair score's moments, each on the whole grid
    z, logw, Q = fp.state[:3]
    eng = GridEngine(r.paper, est._item_of(r, None), r.score, est.result_.item_tau.shape[0], M + 1, Q)
    eng.set_nodes(Q, z[0], z[-1])
    ref = eng.evaluate(fp.tau, fp.log_sigma, moments=True)
    f = est.fair_scores(np.exp(fp.log_sigma) * eng.z + fp.shift)
    E = eng.evaluate(fp.tau, fp.log_sigma, G=np.c_[f, f * f]).posterior
    np.testing.assert_array_equal(eng.papers, np.arange(n))
    np.testing.assert_allclose(est.quality_eap_, ref.eap[eng.pattern] + fp.shift, rtol=0, atol=1e-12)
    np.testing.assert_allclose(est.quality_eap_se_, ref.eap_sd[eng.pattern], rtol=0, atol=1e-12)
    np.testing.assert_allclose(se, np.sqrt(E[:, 1] - E[:, 0] ** 2)[eng.pattern], rtol=0, atol=1e-12)
    assert est.loglik_ == pytest.approx(ref.ll, rel=1e-13)
    # another fit, its engine evaluated elsewhere before its last pass: the same numbers to the bit
    other = fit_mml(r)
    moved = other.posterior.eng
    kept = {"_cells_blocks", "_cells_by_chunk"} & set(moved.__dict__)   # (the patterns' rows, for the last pass)
    assert kept and not {"_static", "_grouped_designs"} & set(moved.__dict__)
    assert fp.eng is not moved and not {"_cells_blocks", "_cells_by_chunk", "_static"} & set(fp.eng.__dict__)
    moved.set_nodes(31)
    moved.evaluate(fp.tau * 1.1, fp.log_sigma + 0.3, level=1)
    windows.clear()
    np.testing.assert_array_equal(other.eap, est.result_.eap)
    np.testing.assert_array_equal(other.eap_sd, est.result_.eap_sd)
    assert bool(windows) == (per_paper == 15)


@pytest.mark.parametrize("n", [1, 5, 64, 65, 200])
def test_the_cholesky_solves_are_numpys_solves(n):
    # substitution a block of CHOLESKY_BLOCK rows at a time (n below, at and past a block's edge)
    from ratercal_cli.methods import mml

    rng = np.random.default_rng(n)
    X = rng.normal(size=(n + 3, n))
    A = X.T @ X + 0.1 * np.eye(n)
    q = rng.normal(size=n)
    got = mml._Cholesky(A).solve(q)
    assert np.allclose(got, np.linalg.solve(A, q), rtol=1e-10, atol=1e-12)
    assert np.allclose(A @ got, q, rtol=1e-10, atol=1e-10)
    with pytest.raises(np.linalg.LinAlgError):   # (what _factor takes for "not positive definite")
        mml._Cholesky(A - 2.0 * np.linalg.eigvalsh(A).max() * np.eye(n))


def test_the_diagonal_blocks_solves_are_numpys_solves():
    # blocks of 3, 1, 3, 2 rows (two of a size inverted at once) of a block-diagonal matrix
    from ratercal_cli.methods import mml

    rng = np.random.default_rng(7)
    ends = np.array([3, 4, 7, 9])
    A = np.zeros((9, 9))
    for a, b in zip(np.r_[0, ends[:-1]], ends):
        X = rng.normal(size=(b - a + 2, b - a))
        A[a:b, a:b] = X.T @ X + 0.1 * np.eye(b - a)
    q = rng.normal(size=9)
    assert np.allclose(mml._DiagonalBlocks(A, ends).solve(q), np.linalg.solve(A, q), rtol=1e-10, atol=1e-12)
    A[4, 4] = -1.0
    with pytest.raises(np.linalg.LinAlgError):
        mml._DiagonalBlocks(A, ends)


@pytest.mark.parametrize("model, facet, block", [("rsm", True, 64), ("pcm", True, 64), ("pcm", False, 64),
                                                 ("pcm", True, 2)])
def test_the_start_is_the_least_squares_fit_of_the_layout_to_the_log_odds(monkeypatch, model, facet, block):
    # a rater and a facet level each (or raters alone: the PCM's normal equations a block a rater, solved
    # block by block; block 2: one of 10 rows by the Cholesky factor): tau's least squares over the free
    # coordinates (numpy's lstsq), log sigma 0
    from ratercal_cli.methods import mml
    from ratercal_cli.methods.mml_layout import make_layout

    monkeypatch.setattr(mml, "CHOLESKY_BLOCK", block)
    rng = np.random.default_rng(3)
    items = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 1]]) if facet else np.array([[0], [1], [2]])
    U = items.shape[0]
    lay = make_layout(model, items, 3, [2] if facet else [], 3)
    obj = mml._Objective(GridEngine(np.repeat(np.arange(10), U), np.tile(np.arange(U), 10),
                                    rng.integers(0, 4, 10 * U), U, 4), lay)
    target = rng.normal(size=U * 3)
    Kt = obj.K[:-1].toarray()
    want = np.linalg.lstsq(Kt, target, rcond=None)[0]
    got = obj.least_squares(target)
    assert np.allclose(got, want, atol=1e-10) and got[-1] == 0.0 and not Kt[:, -1].any()
    kind = type(obj._tau_normal[2])
    assert kind is (mml._Cholesky if block == 2 else mml._DiagonalBlocks)
    if kind is mml._DiagonalBlocks:
        assert sum(idx.shape[0] for idx, _ in obj._tau_normal[2].groups) == (1 if facet else 3)


def test_adjust_by_mml_and_mfrm_imports_no_scipy_linalg(tmp_path):
    """scipy.linalg (cho_factor, and lsqr's scipy.sparse.linalg) cost every ``adjust -m MML/MFRM`` 0.07-0.1 s
    of CPU to import (scipy 1.17), more than the fit's factors and solves: numpy's Cholesky does them
    (mml._Cholesky).  Fails before: the two were in sys.modules."""
    from support import modules_after_adjust

    rng = np.random.default_rng(0)
    lines = ["paper,rater,score"] + [f"P{p},R{r + 1},{rng.integers(0, 6)}" for p in range(60)
                                     for r in rng.choice(6, 2, replace=False)]
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    assert modules_after_adjust(tmp_path / "r.csv", tmp_path / "o.csv", ["MML", "MFRM"],
                                ["scipy.linalg", "scipy.sparse.linalg"]) == []
    assert (tmp_path / "o.csv").read_text().splitlines()[0].startswith("paper,rater,score,flag,MFRM")


@pytest.mark.parametrize("model, threshold_facet", [("pcm", None), ("rsm", None), ("rsm", 1)])
def test_the_layout_s_tau_and_priors_are_the_module_docstring_s(model, threshold_facet):
    # tau[u, k] and the priors' 0.5 |R v|^2 written out item by item (mml_layout's docstring), at random values
    from ratercal_cli.methods.mml_layout import make_layout

    rng = np.random.default_rng(11)
    J, M, levels = 4, 3, [3, 2]
    items = np.array([[j, a, b] for j in range(J) for a in range(3) for b in range(2) if (j + a + b) % 3])
    used = np.ones((J, M + 1), dtype=bool)
    used[1, 0] = used[2, 3] = False   # (a PCM severity: the mean of the steps between the used categories)
    lay = make_layout(model, items, J, levels, M, threshold_facet, used=used, step_sd=5.0, location_sd=10.0)
    v = rng.normal(size=lay.n)
    val = {name: v[sl].reshape(lay.shapes[name]) for name, sl in lay.blocks.items()}
    want = []
    for j, a, b in items:
        f = val["facet0"][a] + val["facet1"][b] - val["theta_mean"][0]
        if model == "pcm":
            want += [val["steps"][j, :k].sum() + k * f for k in range(1, M + 1)]
        else:
            g = (a, b)[threshold_facet] if threshold_facet is not None else 0
            want += [k * val["severity"][j] + val["thresholds"][g, :k].sum() + k * f for k in range(1, M + 1)]
    assert np.allclose(lay.B @ v, want, rtol=0, atol=1e-12)
    steps = val["steps"] if model == "pcm" else val["thresholds"]
    if model == "pcm":
        lo_hi = [(0, 3), (1, 3), (0, 2), (0, 3)]
        sev = [val["steps"][j, lo:hi].mean() for j, (lo, hi) in enumerate(lo_hi)]
    else:
        sev = val["severity"]
    prior = ((np.diff(steps, axis=1) / 5.0) ** 2).sum() + (np.square(sev) / 100.0).sum() + (
        (val["facet0"] ** 2).sum() + (val["facet1"] ** 2).sum()) / 100.0
    assert np.isclose(float(np.sum((lay.penalty @ v) ** 2)), prior, rtol=1e-12)


def test_severities_of_raters_who_skip_end_categories_are_not_shrunk():
    """Raters of 30 ratings each (120 papers, 2 of 8 raters a paper) scored by the PCM with shared steps
    (-2..2) and severities -1..1: many never give a 0 or a 5, and the mean of a rater's own steps lacked the
    end step (a severe rater's top one, the largest): the severities came out at 0.50-0.53 of their true
    spread over 20 replications (a researcher's check of the library).  Less the panel's steps in the same
    categories (mml._panel_offsets) the slope of the mean estimate on the truth is 0.93."""
    sev = np.linspace(-1.0, 1.0, 8)
    tau = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    est = []
    for rep in range(12):
        rng = np.random.default_rng(rep)
        n = 120
        theta = rng.normal(0.0, 1.0, n)
        paper = np.repeat(np.arange(n), 2)
        rater = np.array([rng.choice(8, 2, replace=False) for _ in range(n)]).ravel()
        cum = np.hstack([np.zeros((2 * n, 1)), np.cumsum((theta[paper] - sev[rater])[:, None] - tau, axis=1)])
        p = np.exp(cum - cum.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        score = (rng.random(2 * n)[:, None] > p.cumsum(axis=1)).sum(axis=1)
        fit = fit_mml(Ratings(paper, rater, np.minimum(score, 5), 5, n, 8))
        est.append(fit.severity)
    slope = np.polyfit(sev, np.mean(est, axis=0), 1)[0]
    assert 0.85 < slope < 1.15, slope


def _rubric_frame(seed=1, papers=300):
    import pandas as pd

    rng = np.random.default_rng(seed)
    sev, diff = rng.normal(0, 0.6, 8), {"ideas": -0.8, "org": 0.0, "conv": 0.8}
    rows = []
    for p in range(papers):
        q = rng.normal(2.5, 1.0)
        for j in rng.choice(8, 2, replace=False):
            for c, d in diff.items():
                rows.append((f"P{p}", f"R{j}", c, int(np.clip(np.rint(q - sev[j] - d + rng.normal(0, 0.6)), 0, 5))))
    return pd.DataFrame(rows, columns=["paper", "rater", "criterion", "score"])


@pytest.mark.parametrize("code", ["MFRM", "MML"])
def test_the_estimator_fits_the_ratings_own_facets_as_rc_fit_does(code):
    """A researcher's rubric read with facet_cols, given to the estimator: its fit left the criteria out
    (their effects lost in the papers' qualities) while rc.fit and --facet-col put them in.  It now takes
    them (rc.fit's estimates, to the bit), and transform finds new ratings' criteria by label: a file of two
    of the three criteria numbers "org" 1 where the fit's "org" was 2."""
    import ratercal_cli as rc

    df = _rubric_frame()
    r = rc.read_ratings(df, scale="0-5", facet_cols=["criterion"])
    est = make_method(code).fit(r)
    ref = rc.fit(r, model=code)
    np.testing.assert_array_equal(est.facet_, ref.estimator.facet_)
    assert est.facet_labels_ == {"criterion": ("conv", "ideas", "org")}
    assert est.facet_[0] > 1.0 > -1.0 > est.facet_[1]   # conv the hardest, ideas the easiest (0.8, -0.8 points)
    np.testing.assert_array_equal(est.transform(r).paper, ref.estimator.transform(r).paper)
    two = df[df.criterion.isin(["org", "conv"]) & df.paper.isin([f"P{i}" for i in range(20)])]
    r2 = rc.read_ratings(two, scale="0-5", facet_cols=["criterion"])
    assert r2.facets["criterion"][1] == ("conv", "org")
    codes = np.where(r2.facets["criterion"][0] == 1, 2, 0)   # (the fit's codes: conv 0, org 2)
    on = est._on_fitted_raters(r2)
    np.testing.assert_array_equal(est.transform(r2).paper, est._transform(on, training=False, facet=codes).paper)
    wrong = two.assign(criterion=two.criterion.replace("org", "voice"))
    with pytest.raises(MethodError, match="criterion voice not among the levels fitted"):
        est.transform(rc.read_ratings(wrong, scale="0-5", facet_cols=["criterion"]))
    # one criterion's ratings (as a rubric's methods within a cell take them): no facet to fit
    one = make_method(code).fit(r.subset(r.facets["criterion"][0] == 2))
    assert one.facet_labels_ == {} and one.facet_.size == 0
