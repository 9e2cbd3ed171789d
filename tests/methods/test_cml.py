"""CML for the PCM and RSM (ratercal_cli/methods/cml.py).

References: psychotools 0.7-2 ``pcmodel``/``rsmodel`` on the simulated 500-paper 0-9
two-raters-per-paper set (tests/results/make_r_references.R), and a brute-force
conditional likelihood that enumerates every score pattern (no ESFs), maximised by scipy.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize

from ratercal_cli.errors import MethodError
from ratercal_cli.methods.cml import (ConditionalPCM, _loglik_grad_hess, _group, conditional_loglik,
                                      estimable_categories, fit_cml)
from ratercal_cli.models.pcm import expected_score
from ratercal_cli.ratings import Ratings

RESULTS = Path(__file__).resolve().parents[1] / "results"


def load_500x2():
    d = np.loadtxt(RESULTS / "cml_500x2_0-9.csv", delimiter=",", skiprows=1, dtype=int)
    return Ratings.from_labels(d[:, 0], d[:, 1], d[:, 2], 9, rater_ids=range(1, 10))


def psychotools_steps():
    ref = np.full((9, 9), np.nan)
    with open(RESULTS / "psychotools_pcmodel_500x2_0-9.csv") as f:
        for row in csv.DictReader(f):
            if row["delta"]:
                ref[int(row["rater"]) - 1, int(row["step"]) - 1] = float(row["delta"])
    return ref


def psychotools_fits():
    with open(RESULTS / "psychotools_fits_500x2_0-9.csv") as f:
        return {row["fit"]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def data500():
    return load_500x2()


@pytest.fixture(scope="module")
def pcm500(data500):
    return fit_cml(data500, model="pcm")


# ---- against psychotools ------------------------------------------------------------------
def test_pcm_steps_match_psychotools_pcmodel(pcm500):
    ref = psychotools_steps()
    both = np.isfinite(ref) & np.isfinite(pcm500.steps)
    assert both.sum() == 64  # 81 steps; 17 not estimable here (see the next test)
    ours = pcm500.steps[both] - pcm500.steps[both].mean()
    theirs = ref[both] - ref[both].mean()
    assert np.max(np.abs(ours - theirs)) < 0.001
    assert pcm500.converged


def test_pcm_steps_match_patched_erm(data500, pcm500):
    """eRm 1.0-2 PCM with its fitcml missing-data bug patched (make_r_references.R, RUN_ERM=1).

    eRm's betapar are easiness parameters of the categories above each rater's lowest:
    tau[j, c] = -beta[j, c]; its null categories run off instead of being left out.
    """
    tau = np.full((9, 10), np.nan)
    for j in range(9):
        tau[j, data500.score[data500.rater == j].min()] = 0.0
    with open(RESULTS / "erm_pcm_500x2_0-9.csv") as f:
        for row in csv.DictReader(f):
            tau[int(row["rater"]) - 1, int(row["category"])] = -float(row["beta"])
    ref = np.diff(tau, axis=1)
    both = np.isfinite(ref) & np.isfinite(pcm500.steps)
    assert both.sum() == 64
    ours = pcm500.steps[both] - pcm500.steps[both].mean()
    assert np.max(np.abs(ours - (ref[both] - ref[both].mean()))) < 0.001
    assert pcm500.loglik == pytest.approx(float(psychotools_fits()["eRm_PCM_patched"]["loglik"]), abs=1e-4)


def test_pcm_loglik_matches_psychotools(pcm500):
    assert pcm500.loglik == pytest.approx(float(psychotools_fits()["psychotools_pcmodel"]["loglik"]), abs=1e-5)


def test_pcm_reports_steps_it_cannot_estimate(pcm500):
    """Unused categories, categories used only on extreme papers, and a diverging estimate.

    psychotools leaves the unused categories out (NA) but returns large numbers for the
    rest: rater 2 step 3 (about -248 there), rater 3 steps 2 and 3 (-142, -291).
    """
    ref = psychotools_steps()
    nan = ~np.isfinite(pcm500.steps)
    expected = {1: [1, 2, 3, 4], 2: [1, 2, 3], 3: [1, 2, 3], 5: [1], 6: [1, 2, 9], 9: [1, 2, 9]}
    for j in range(9):
        assert sorted(np.flatnonzero(nan[j]) + 1) == expected.get(j + 1, [])
    assert ref[1, 2] < -100 and ref[2, 1] < -100 and ref[2, 2] < -100  # psychotools' huge numbers
    assert pcm500.diverged[1, 2] and not pcm500.diverged.sum() - 1
    # rater 3 (index 2): categories 1 and 2 are given only on papers at their raters' minimum
    assert list(pcm500.categories[2]) == [False] * 3 + [True] * 7
    assert any("rater 2: steps 3 not estimable (the estimate diverges)" in n for n in pcm500.notes)
    assert np.all(np.isnan(pcm500.steps_se[nan])) and np.all(np.isfinite(pcm500.steps_se[~nan]))


def test_rsm_matches_psychotools_rsmodel(data500):
    fit = fit_cml(data500, model="rsm")
    rows = list(csv.DictReader(open(RESULTS / "psychotools_rsmodel_500x2_0-9.csv")))
    beta = np.array([float(r["value"]) for r in rows if r["kind"] == "beta"])
    kappa = np.array([float(r["value"]) for r in rows if r["kind"] == "kappa"])
    assert np.max(np.abs(fit.beta - beta)) < 0.001
    assert np.max(np.abs(fit.kappa - kappa)) < 0.001
    assert fit.loglik == pytest.approx(float(psychotools_fits()["psychotools_rsmodel"]["loglik"]), abs=1e-5)
    # RSM steps are beta_j + kappa_k, centred
    np.testing.assert_allclose(fit.steps, fit.beta[:, None] + fit.kappa[None, :], atol=1e-9)
    assert abs(fit.steps.mean()) < 1e-9


# ---- against brute force ------------------------------------------------------------------
def small_data():
    """4 raters, scale 0-3, 60 papers with 2 or 3 raters, PCM scores."""
    rng = np.random.default_rng(7)
    delta = np.array([[-1.0, 0.0, 1.0], [-0.5, 0.5, 1.5], [-2.0, -0.5, 0.5], [0.0, 0.2, 0.4]])
    papers, raters, scores = [], [], []
    for v in range(60):
        theta = rng.normal(0, 1.2)
        js = rng.choice(4, size=2 + (v % 3 == 0), replace=False)
        for j in js:
            p = np.exp(np.r_[0, np.cumsum(theta - delta[j])])
            papers.append(v)
            raters.append(j)
            scores.append(rng.choice(4, p=p / p.sum()))
    return Ratings(np.array(papers), np.array(raters), np.array(scores), 3, 60, 4)


def enumerate_patterns(ratings, K):
    """Per paper: its raters, observed scores, and every score pattern with the same total."""
    out = []
    for v in range(ratings.n_papers):
        m = ratings.paper == v
        js, xs = ratings.rater[m], ratings.score[m]
        pats = np.array([ys for ys in itertools.product(range(K), repeat=len(js)) if sum(ys) == xs.sum()])
        out.append((js, xs, pats))
    return out


def brute_loglik(patterns, tau):
    """sum_v log P(x_v | r_v, S_v) = sum_v [-sum tau[j, x] - log sum_patterns exp(-sum tau[j, y])]."""
    ll = 0.0
    for js, xs, pats in patterns:
        ll += -tau[js, xs].sum() - np.log(np.exp(-tau[js[None, :], pats].sum(axis=1)).sum())
    return ll


def test_conditional_loglik_equals_enumeration():
    data = small_data()
    cats, _ = estimable_categories(data)
    assert cats.all()  # every category used on informative papers: no exclusions to mimic
    tau = np.random.default_rng(1).normal(size=(4, 4))
    tau[:, 0] = 0
    assert conditional_loglik(data, tau) == pytest.approx(brute_loglik(enumerate_patterns(data, 4), tau), rel=1e-12)


def test_pcm_estimates_equal_brute_force_maximum():
    data = small_data()
    fit = fit_cml(data)
    pats = enumerate_patterns(data, 4)

    def negll(phi):
        tau = np.zeros((4, 4))
        tau[:, 1:] = phi.reshape(4, 3)
        return -brute_loglik(pats, tau)

    res = minimize(negll, np.zeros(12), method="BFGS", options={"gtol": 1e-7})
    tau = np.zeros((4, 4))
    tau[:, 1:] = res.x.reshape(4, 3)
    steps = np.diff(tau, axis=1)
    steps -= steps.mean()
    np.testing.assert_allclose(fit.steps, steps, atol=2e-4)
    assert fit.loglik == pytest.approx(-res.fun, abs=1e-7)


def test_rsm_estimates_equal_brute_force_maximum():
    data = small_data()
    fit = fit_cml(data, model="rsm")

    def tau_of(phi):
        beta, kappa = phi[:4], phi[4:]
        delta = beta[:, None] + np.r_[kappa, 0.0][None, :]  # kappa_3 fixed 0 (identification)
        return np.c_[np.zeros(4), np.cumsum(delta, axis=1)]

    pats = enumerate_patterns(data, 4)
    res = minimize(lambda p: -brute_loglik(pats, tau_of(p)), np.zeros(6), method="BFGS", options={"gtol": 1e-7})
    steps = np.diff(tau_of(res.x), axis=1)
    steps -= steps.mean()
    np.testing.assert_allclose(fit.steps, steps, atol=2e-4)


def test_gradient_and_information_match_finite_differences():
    data = small_data()
    cats, inf = estimable_categories(data)
    groups = _group(data, cats, inf)
    rng = np.random.default_rng(3)
    tau = rng.normal(size=(4, 4))
    tau[:, 0] = 0
    ll, g, H = _loglik_grad_hess(tau, cats, groups)
    h = 1e-5
    for j, x in [(0, 1), (1, 3), (3, 2)]:
        e = np.zeros_like(tau)
        e[j, x] = h
        lp = _loglik_grad_hess(tau + e, cats, groups)
        lm = _loglik_grad_hess(tau - e, cats, groups)
        assert g[j, x] == pytest.approx((lp[0] - lm[0]) / (2 * h), abs=1e-6)
        # information = -d(gradient)/d tau
        np.testing.assert_allclose(H[j * 4 + x].reshape(4, 4), -(lp[1] - lm[1]) / (2 * h), atol=1e-6)


# ---- what cannot be estimated ------------------------------------------------------------
def test_unused_and_extreme_only_categories_are_not_estimable():
    """Hand-made: raters 0 and 1 on scale 0-2 plus rater 2.

    Rater 0 never gives 1: steps 1 and 2 of rater 0 are nan.  Rater 1 gives 2 only on a paper
    where rater 2 also gives its top score 2 (an extreme paper): category 2 of rater 1 is
    dropped and its step 2 is nan.
    """
    rows = [  # paper, rater, score
        (0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 0), (2, 0, 0), (2, 2, 1), (3, 0, 2), (3, 2, 0),
        (4, 1, 0), (4, 2, 2), (5, 1, 1), (5, 2, 0), (6, 1, 2), (6, 2, 2), (7, 0, 2), (7, 2, 1),
        (8, 1, 1), (8, 2, 1), (9, 0, 0), (9, 2, 2), (10, 0, 2), (10, 1, 1), (11, 1, 0), (11, 2, 1),
    ]
    p, r, s = map(np.array, zip(*rows))
    data = Ratings(p, r, s, 2, 12, 3)
    cats, informative = estimable_categories(data)
    assert cats.tolist() == [[True, False, True], [True, True, False], [True, True, True]]
    assert not informative[6]  # (rater 1: 2, rater 2: 2) is at the top
    fit = fit_cml(data)
    assert np.isnan(fit.steps[0]).all() and np.isnan(fit.steps[1, 1]) and np.isfinite(fit.steps[1, 0])
    assert np.isfinite(fit.steps[2]).all()
    assert np.isinf(fit.tau[0, 1]) and np.isfinite(fit.tau[0, 2])
    assert any(n.startswith("rater 1: steps 1,2") for n in fit.notes)


def test_disconnected_design_is_refused():
    # raters 0,1 share papers; raters 2,3 share papers; no paper links the two pairs
    p = np.repeat(np.arange(8), 2)
    r = np.array([0, 1] * 4 + [2, 3] * 4)
    s = np.array([0, 1, 1, 2, 2, 1, 1, 0, 0, 1, 1, 2, 2, 1, 1, 0])
    with pytest.raises(MethodError, match=r"2 groups that share no informative papers \(raters 1, 2; raters 3, 4\)"):
        fit_cml(Ratings(p, r, s, 2, 8, 4))


def test_one_rater_per_paper_is_refused():
    data = Ratings(np.arange(6), np.array([0, 1, 2, 0, 1, 2]), np.array([0, 1, 2, 1, 2, 0]), 2, 6, 3)
    with pytest.raises(MethodError, match="at least two raters"):
        ConditionalPCM().fit(data)


# ---- the estimator -----------------------------------------------------------------------
def test_fair_scores_rsm_average_rater(data500):
    est = ConditionalPCM(model="rsm", fair="average-rater").fit(data500)
    adj = est.transform(data500)
    theta = est.quality_
    assert np.all(np.isfinite(theta))  # WLE: finite for all-0 and all-9 papers
    # the average rater of the RSM: beta = 0, steps kappa (models.pcm computes it independently)
    fair = expected_score(theta, est.kappa_)
    np.testing.assert_allclose(adj.paper, fair, atol=1e-12)
    np.testing.assert_allclose(adj.rating, fair[data500.paper], atol=1e-12)


def test_fair_scores_pcm_mean_rater(data500):
    est = ConditionalPCM(fair="mean-rater").fit(data500)
    adj = est.transform(data500)
    # independent: mean over raters of E_j(theta), each from its finite tau by direct sums
    tau = est.tau_
    x = np.arange(10)
    vals = []
    for j in range(9):
        ok = np.isfinite(tau[j])
        eta = np.where(ok, x[None, :] * est.quality_[:, None] - np.where(ok, tau[j], 0), -np.inf)
        p = np.exp(eta - eta.max(axis=1, keepdims=True))
        vals.append((p * x).sum(axis=1) / p.sum(axis=1))
    np.testing.assert_allclose(adj.paper, np.mean(vals, axis=0), atol=1e-10)
    assert np.all((adj.paper > 0) & (adj.paper < 9))


def test_mle_quality_solves_the_likelihood_equation(data500):
    est = ConditionalPCM(model="rsm", quality="mle").fit(data500)
    inf = est.result_.informative
    theta = est.quality_
    # sum over the paper's raters of E_j(theta) = the paper's total (models.pcm, delta = beta + kappa)
    delta = est.beta_[:, None] + est.kappa_[None, :]
    e = expected_score(theta[data500.paper], delta[data500.rater])
    tot = np.bincount(data500.paper, weights=e, minlength=500)
    np.testing.assert_allclose(tot[inf], np.bincount(data500.paper, weights=data500.score)[inf], atol=1e-8)


def test_rater_fit_is_computed_for_every_rater(data500):
    est = ConditionalPCM().fit(data500)
    fit = est.rater_fit_
    assert fit.n.sum() == 2 * est.result_.informative.sum()
    # with two ratings per paper the residuals are half used up by theta: mean squares near 0.5
    assert 0.3 < np.mean(fit.infit) < 0.7 and 0.3 < np.mean(fit.outfit) < 0.8


def test_rater_fit_read_after_a_refit_is_the_new_datas(data500):
    """``rater_fit_`` is computed when first read (methods.base.DeferredFit): read after a second fit it
    is the second data's, equal to a fresh fit's, also after a pickle round trip."""
    import pickle

    half = data500.subset(data500.paper < 250)
    est = ConditionalPCM().fit(data500)
    whole_n = est.rater_fit_.n.copy()
    est.fit(half)
    fresh = pickle.loads(pickle.dumps(ConditionalPCM().fit(half)))
    assert whole_n.sum() > est.rater_fit_.n.sum() > 0
    for name in ("n", "infit", "outfit", "infit_z", "outfit_z"):
        np.testing.assert_array_equal(getattr(est.rater_fit_, name), getattr(fresh.rater_fit_, name))
    with pytest.raises(AttributeError):
        ConditionalPCM().rater_fit_


def test_papers_of_raters_without_estimable_steps_are_refused():
    """Rater 2 gives 1 only where rater 0 gives 0 (extreme), 0 only where rater 1 gives 0: after
    the extreme papers go, rater 2 has one category left, so paper 9 (rater 2 only) has no score."""
    rows = [(0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 0), (2, 0, 1), (2, 1, 1), (3, 0, 0), (3, 1, 1),
            (4, 0, 1), (4, 1, 0), (5, 0, 0), (5, 2, 1), (6, 1, 0), (6, 2, 0), (7, 0, 1), (7, 1, 1), (8, 0, 0),
            (8, 1, 0), (9, 2, 1)]
    p, r, s = map(np.array, zip(*rows))
    data = Ratings(p, r, s, 1, 10, 3)
    cats, _ = estimable_categories(data)
    assert not cats[2].any()
    with pytest.raises(MethodError, match=r"1 papers are scored only by raters with no estimable step \(raters 3"):
        ConditionalPCM().fit(data)


def test_no_estimable_step_is_refused():
    """Pairs that never differ by more than a point (as the 2+ design keeps them): given the
    total, the observed split is always the closest one, so every CML estimate runs off."""
    pairs = [(0, 1), (1, 0), (1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 2)] * 3
    p = np.repeat(np.arange(len(pairs)), 2)
    r = np.array([[0, 1], [1, 2], [2, 0]] * (len(pairs) // 3)).ravel()
    data = Ratings(p, r, np.array(pairs).ravel(), 3, len(pairs), 3)
    for model in ("pcm", "rsm"):
        with pytest.raises(MethodError, match=r"no step can be estimated.*\(9 diverging, 0 unused\)"):
            fit_cml(data, model=model)


def test_transform_of_new_data_recomputes_the_same_qualities(data500):
    est = ConditionalPCM(model="rsm").fit(data500)
    same = est.transform(data500)
    copy = est.transform(data500.subset(np.ones(data500.n_ratings, dtype=bool)))  # not the fitted object
    np.testing.assert_allclose(copy.paper, same.paper, atol=1e-9)
    half = data500.subset(data500.paper < 250)
    assert np.isnan(est.transform(half).paper[300])  # a paper without ratings has no score


def test_a_paper_resting_on_a_non_estimable_step_is_bounded_and_named():
    """Issue 21: a rater's only 0 (it never gives 1) on a paper rated 1, 0, 0.  The sum of its steps 1-2
    (across the unused category 1) runs off to -34 logits, and with it that paper's quality (-16.8, SE 1.0;
    the next lowest -3.8).  The difference is limited as a diverging step is, and the paper is named."""
    from ratercal_cli.models import pcm as pcm_model

    rng = np.random.default_rng(2)
    n, J, M = 300, 6, 5
    steps = np.linspace(-2, 2, M)[None, :] + np.linspace(-0.5, 0.5, J)[:, None]
    theta = rng.normal(0.5, 1.2, n)
    raters = np.argsort(rng.random((n, J)), axis=1)[:, :3]
    score = pcm_model.sample_scores(rng, theta[:, None], steps[raters])
    score[raters == 0] = np.maximum(score[raters == 0], 2)
    p = np.flatnonzero((raters == 0).any(axis=1))[0]
    score[p] = np.where(raters[p] == 0, 0, [1, 0, 0])
    assert sorted(score[p]) == [0, 0, 1] and score[p][raters[p] == 0] == 0
    r = Ratings(np.repeat(np.arange(n), 3), raters.ravel(), score.ravel(), M, n, J)
    est = ConditionalPCM().fit(r)
    assert np.isnan(est.steps_[0, :2]).all()            # steps 1-2 of that rater: not estimable
    bound = np.nanmax(np.abs(est.steps_)) + 2.0          # the cap of a diverging step, per step spanned
    assert est.tau_[0, 2] - est.tau_[0, 0] == pytest.approx(-2 * bound)
    assert np.flatnonzero(est.resting_papers_).tolist() == [p]
    assert est.warnings_ and f": {r.paper_ids[p]}; MML estimates them" in est.warnings_[0]
    others = np.delete(est.quality_, p)
    # bounded: about the lowest of the others (the cap's doing), no longer 13 logits below them
    assert others.min() - 1.5 < est.quality_[p] < others.min() + 0.5


def test_fit_without_standard_errors_gives_the_same_estimates(data500, pcm500):
    """standard_errors=False (check's per-rater fit table) leaves out the SEs, nothing else."""
    res = fit_cml(data500, model="pcm", standard_errors=False)
    assert res.steps_se is None
    assert np.array_equal(res.steps, pcm500.steps, equal_nan=True)
    assert np.array_equal(res.tau, pcm500.tau, equal_nan=True)
    assert np.array_equal(res.diverged, pcm500.diverged)


def three_of_twenty(n_papers=3000, J=20, M=5, seed=1):
    """PCM ratings, three of J raters a paper (each paper its own random set: issue 32's shape)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.5, n_papers)
    delta = np.sort(rng.normal(0, 1, (J, M)), axis=1) + rng.normal(0, 0.5, (J, 1))
    tau = np.c_[np.zeros(J), np.cumsum(delta, axis=1)]
    paper = np.repeat(np.arange(n_papers), 3)
    rater = np.concatenate([rng.choice(J, 3, replace=False) for _ in range(n_papers)])
    logits = np.arange(M + 1)[None, :] * theta[paper][:, None] - tau[rater]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    score = (rng.random(paper.size)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return Ratings.from_labels(paper, rater, score, M, rater_ids=range(J))


def test_fit_without_standard_errors_skips_the_final_information(monkeypatch):
    """Without SEs the final point is evaluated without the information (one full evaluation less) where
    the gradient was expected under the tolerance there; the estimates are those of the fit with SEs,
    bit for bit (the same points), and so is what the weak-direction test concludes."""
    from ratercal_cli.methods import cml

    ratings = three_of_twenty()
    calls = []
    plain = cml._Problem.evaluate
    monkeypatch.setattr(cml._Problem, "evaluate", lambda self, phi, order=2: calls.append(order) or plain(self, phi, order))
    full = fit_cml(ratings, model="pcm")
    with_se = list(calls)
    calls.clear()
    res = fit_cml(ratings, model="pcm", standard_errors=False)
    assert with_se == [2] * 6 and calls == [2] * 5 + [1]
    assert res.converged and res.n_iter == full.n_iter == 5
    assert np.array_equal(res.steps, full.steps, equal_nan=True) and np.array_equal(res.tau, full.tau)
    assert res.loglik == full.loglik and not res.diverged.any()
    # the information kept is that of the point one step before: within the last step's change
    change = np.abs(res.information - full.information).max() / np.abs(full.information).max()
    assert 0 < change < 1e-5


@pytest.mark.parametrize("model", ["pcm", "rsm"])
def test_the_information_does_not_depend_on_the_chunks_of_rater_sets(monkeypatch, model):
    """_information_blocks takes the rater sets a chunk of about _CHUNK_ENTRIES block entries at a time:
    one set a chunk or all at once, the same information (the PCM's bit for bit: each set's block
    is computed alone; the RSM's reduction to its parameters is a product over a chunk's sets, to
    round-off)."""
    from ratercal_cli.methods import cml

    ratings = three_of_twenty(n_papers=600)
    pb = cml._cml_problem(ratings, model)
    phi = cml._cml_start(pb)
    out = {}
    for entries in (1, 10 ** 9):
        monkeypatch.setattr(cml, "_CHUNK_ENTRIES", entries)
        out[entries] = pb.evaluate(phi)
    (ll1, g1, H1), (ll2, g2, H2) = out.values()
    assert ll1 == ll2 and np.array_equal(g1, g2)
    if model == "pcm":
        assert np.array_equal(H1, H2)
    else:
        assert np.abs(H1 - H2).max() <= 1e-14 * np.abs(H2).max()


@pytest.mark.parametrize("model", ["pcm", "rsm"])
def test_identification_directions_are_null_directions_of_the_information(data500, model):
    """The model's null directions (a shift of the quality scale; the RSM's beta - d, kappa + d) are
    those of the information: H n = 0, and no other eigenvalue of H is near 0."""
    from ratercal_cli.methods.cml import _cml_problem, _cml_start, _identification

    pb = _cml_problem(data500, model)
    phi = _cml_start(pb)
    Hphi = pb.evaluate(phi)[2]
    null = _identification(pb)
    assert null.shape[1] == (1 if model == "pcm" else 2)
    assert np.allclose(null.T @ null, np.eye(null.shape[1]))
    assert np.max(np.abs(Hphi @ null)) < 1e-9 * np.max(np.abs(Hphi))
    w = np.linalg.eigvalsh(Hphi)
    assert np.sum(w < 1e-10 * w.max()) == null.shape[1]


@pytest.mark.parametrize("model", ["pcm", "rsm"])
def test_information_over_the_parameters_is_the_design_reduced_information(data500, model):
    """Each rater set's block of the information goes straight to the fit's parameters (the RSM's
    Newton needs the (raters + categories)^2 matrix, not the (raters x categories)^2 one): it equals
    A' H A of the information over tau, and the gradient A' g."""
    from ratercal_cli.methods.cml import _cml_problem, _cml_start

    pb = _cml_problem(data500, model)
    phi = _cml_start(pb) + np.random.default_rng(0).normal(0, 0.3, pb.A.shape[1])
    ll, g, H = _loglik_grad_hess(pb.tau(phi), pb.cats, pb.groups)
    ll2, gphi, Hphi = pb.evaluate(phi)
    A = pb.A.toarray()
    assert A.shape[1] == (66 if model == "pcm" else 18)   # 9 raters: 75 categories less 9; 9 + 9
    assert ll2 == ll
    assert np.allclose(gphi, A.T @ g.ravel(), rtol=0, atol=1e-12 * np.abs(g).max())
    assert np.allclose(Hphi, A.T @ H @ A, rtol=0, atol=1e-12 * np.abs(H).max())


def test_weak_direction_test_by_lanczos_equals_the_cholesky_test():
    """_below on a large matrix (Lanczos on the factorisation) answers as the Cholesky test of
    pen - t I does, for a smallest eigenvalue just above and just below t; _inverse inverts."""
    from scipy.linalg import cho_factor

    from ratercal_cli.methods.cml import _LANCZOS_FROM, _BlockJacobi, _below, _inverse

    rng = np.random.default_rng(2)
    n = _LANCZOS_FROM + 50
    Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
    for smallest, expected in ((0.0102, False), (0.0098, True)):
        w = np.r_[smallest, rng.uniform(0.5, 50.0, n - 1)]
        pen = (Q * w) @ Q.T
        pen = (pen + pen.T) / 2
        assert _below(pen, 0.01, cho_factor(pen)) is expected
        assert _below(pen, 0.01) is expected
        # the per-rater blocks' bound cannot decide this near t: the factorisation then does
        assert _below(pen, 0.01, None, _BlockJacobi(pen, np.arange(n) // 5)) is expected
    assert np.allclose(_inverse(cho_factor(pen)) @ pen, np.eye(n), atol=1e-8)


def test_newton_step_by_conjugate_gradients_equals_the_cholesky_solution():
    """From _ITERATIVE_FROM parameters on, the Newton step is solved by conjugate gradients preconditioned
    with the per-rater blocks: the Cholesky solution to 1e-11; the blocks' lower bound of the smallest
    eigenvalue is one (below it, within a factor 3 here), and decides _below away from the threshold."""
    from scipy.linalg import block_diag

    from ratercal_cli.methods.cml import _ITERATIVE_FROM, _below, _direction

    rng = np.random.default_rng(3)
    n = _ITERATIVE_FROM + 5
    owner = np.arange(n) // 5
    X = rng.normal(size=(n, 40)) * 0.1   # the raters' interaction, weaker than each rater's own block
    blocks = [(lambda a: a @ a.T + np.eye(5))(rng.normal(size=(5, 5))) for _ in range(n // 5)]
    blocks[7] = blocks[7] * 0.05   # one rater's rare category: the smallest eigenvalue stands apart
    pen = X @ X.T + block_diag(*blocks)
    g = rng.normal(size=n)
    d, factor, bj = _direction(pen, g, owner)
    assert factor is None and bj is not None
    exact = np.linalg.solve(pen, g)
    assert np.max(np.abs(d - exact)) < 1e-11 * np.max(np.abs(exact))
    smallest = np.linalg.eigvalsh(pen)[0]
    assert smallest / 3 < bj.lower_bound(pen) <= smallest * (1 + 1e-9)
    assert _below(pen, smallest / 10, None, bj) is False
    assert _below(pen, smallest * 1.01, None, bj) is True



def test_conjugate_gradients_give_up_on_an_ill_conditioned_information_for_the_factorisation(monkeypatch):
    """An estimate running off leaves the information a direction of round-off level: conjugate gradients
    then crawl (to 10 x the parameters' products, 16,000 here, each Newton step: ``check`` on 500 raters, one
    giving only the top score, spent most of its time there).  They give up after _CG_ITERATIONS products
    and the factorisation solves the step: the Cholesky solution."""
    import scipy.sparse.linalg as spla
    from scipy.linalg import cho_factor, cho_solve

    from ratercal_cli.methods.cml import _CG_ITERATIONS, _ITERATIVE_FROM, _direction

    rng = np.random.default_rng(4)
    n = _ITERATIVE_FROM + 100
    Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
    w = np.r_[1e-9, 3e-8, np.geomspace(1e-3, 1e3, n - 2)]   # two directions running off, the rest spread
    pen = (Q * w) @ Q.T
    pen = (pen + pen.T) / 2
    g = rng.normal(size=n)
    products = []
    cg = spla.cg

    def counted(A, b, **kw):   # (the iterations cg took, by its callback)
        return cg(A, b, callback=lambda xk: products.append(1), **kw)

    monkeypatch.setattr(spla, "cg", counted)
    d, factor, blocks = _direction(pen, g, np.arange(n) // 5)
    assert factor is not None and blocks is not None   # (the factorisation took over)
    assert 0 < len(products) <= _CG_ITERATIONS
    exact = cho_solve(cho_factor(pen), g)
    assert np.array_equal(d, exact)

# Two 2+ sets of the beyond-1990 study (configs/beyond1990.yaml, cells 0151 and 0193, replications 48
# and 2: 100 papers, 9 raters, the kept pair of each paper): each paper's "r1 r2 s1 s2".
SET_2PLUS_0_5 = """
3444 3533 4632 5745 3843 4654 5632 4554 1754 1755 3543 5832 1554 0433 0655 2734 3654 1732 6855 1254 3854 5645 0144 3701
0344 7833 0655 1410 7823 4621 0332 1655 3755 5734 4832 5833 4512 3533 6745 5722 6734 2533 0655 2332 0254 0355 2533 6743
5644 1355 1355 6843 4832 1455 1743 0655 3843 6822 3811 1755 1455 0155 6723 5632 5854 7833 1843 4533 7811 4554 0155 2645
1645 3455 1732 2444 1832 2523 2734 1755 6755 0543 3501 0755 0454 1755 2733 0654 2843 1455 2532 3522 0733 2755 1533 1355
4732 6843 1421 1233"""
SET_2PLUS_0_9 = """
3465 7866 0199 2864 3776 2865 1399 1834 1799 3699 0199 7865 2754 2577 0199 6701 4812 0598 2577 0699 3799 0399 2576 1487
4689 0112 5778 4656 3699 4699 4812 4699 1875 2566 0543 1599 2555 3499 2788 1577 1499 2844 3499 1399 2765 0722 1554 5766
1298 5654 1876 0379 3875 4775 2455 1366 3699 1400 6844 5865 4555 6843 2577 1688 1498 0801 1399 4598 7877 0399 0199 4789
0465 3855 6898 0296 1699 2576 4587 5887 0598 0286 3499 1798 4676 4898 1399 4565 1499 4643 3898 0256 1522 2310 0199 5833
1499 2478 4676 2777"""


def _pairs(text, max_score):
    q = np.array([[int(c) for c in w] for w in text.split()])
    return Ratings(np.repeat(np.arange(len(q)), 2), q[:, :2].ravel(), q[:, 2:].ravel(), max_score, len(q), 9)


@pytest.fixture
def perturbed_information(monkeypatch):
    """The information of every evaluation perturbed by 1e-12 of its largest element (a symmetric
    random matrix): as much as a reordering of the floating-point sums moves it, and more."""
    from ratercal_cli.methods import cml

    plain, rng = cml._loglik_grad_hess, np.random.default_rng(0)

    def perturbed(tau, cats, groups, order=2, target=None):
        ll, g, H = plain(tau, cats, groups, order, target)
        if H is not None:
            E = rng.standard_normal(H.shape)
            H = H + 1e-12 * np.abs(H).max() * (E + E.T) / 2
        return ll, g, H

    monkeypatch.setattr(cml, "_loglik_grad_hess", perturbed)


@pytest.mark.parametrize("perturb", [False, True])
def test_a_2plus_set_whose_thresholds_all_run_off_is_refused(perturb, request):
    """Every kept pair within a point: given the total the split is always the closest one, so spreading
    the RSM's thresholds apart (tau[j, x] += t x^2 / 2) raises every paper's conditional likelihood
    for ever; no step difference is finite.  The code before took the vanishing information along
    that direction for an identification direction whenever round-off made the penalised information's
    factorisation fail, and then reported steps of -123 .. 84 logits with no note (whether it did
    hung on the last bits: 21 such sets flipped between failing and fitting when a commit reordered
    the sums)."""
    if perturb:
        request.getfixturevalue("perturbed_information")
    data = _pairs(SET_2PLUS_0_5, 5)
    o = np.lexsort((data.rater, data.paper))
    assert np.abs(np.diff(data.score[o].reshape(-1, 2), axis=1)).max() == 1
    for model in ("rsm", "pcm"):
        with pytest.raises(MethodError, match=r"no step can be estimated"):
            fit_cml(data, model=model)


def test_a_2plus_set_with_some_thresholds_estimable_fits_the_same_whatever_the_rounding(request):
    """On the 0-9 set pairs two or more points apart occur (a third reading far from both) but only
    between the scores 4 and 9: the RSM's thresholds into the categories 1-4 run off (a total that
    reaches below 4 is always split the closest way) and those into 5-9 are estimable.  The code before stopped with 'the estimates run off to infinity until the
    elementary symmetric functions overflow' (a step along the diverging directions underflowed, a
    matter of the path); now it fits, and a 1e-12 perturbation of the information moves nothing but
    the last digits."""
    data = _pairs(SET_2PLUS_0_9, 9)
    o = np.lexsort((data.rater, data.paper))
    s = data.score[o].reshape(-1, 2)
    apart = np.abs(s[:, 0] - s[:, 1]) >= 2
    assert apart.sum() >= 5 and s[apart].min() == 4
    fit = fit_cml(data, model="rsm")
    assert fit.notes == ["thresholds 1,2,3,4 not estimable (the estimate diverges)"]
    assert fit.diverged[:, :4].all() and not fit.diverged[:, 4:].any()
    assert np.isfinite(fit.steps[:, 4:]).all() and np.isfinite(fit.steps_se[:, 4:]).all()
    # where Newton left the estimates (the diverging ones far out, before the fit's tau limits them),
    # moving any estimable parameter (a rater's beta, one of the thresholds 6-9 against 5) lowers the
    # conditional likelihood: the finite part is a maximum, not wherever the iterations stopped
    from ratercal_cli.methods import cml

    pb = cml._cml_problem(data, "rsm")
    far = pb.tau(cml._cml_newton(pb, cml._cml_start(pb), 1e-9, 100, 10.0)[0])
    np.testing.assert_allclose(np.diff(far, axis=1)[:, 4:] - np.diff(far, axis=1)[:, 4:].mean(),
                               fit.steps[:, 4:] - fit.steps[:, 4:].mean(), atol=1e-9)
    ll = conditional_loglik(data, far, "rsm")
    x = np.arange(10)
    for j in range(9):
        for e in (-1e-3, 1e-3):
            tau = far.copy()
            tau[j] += e * x
            assert conditional_loglik(data, tau, "rsm") < ll
    for k in range(6, 10):
        for e in (-1e-3, 1e-3):
            tau = far.copy()
            tau[:, k:] += e
            assert conditional_loglik(data, tau, "rsm") < ll
    request.getfixturevalue("perturbed_information")
    again = fit_cml(data, model="rsm")
    np.testing.assert_array_equal(again.diverged, fit.diverged)
    np.testing.assert_allclose(again.steps, fit.steps, atol=1e-8)
    np.testing.assert_allclose(again.tau, fit.tau, atol=1e-8)


def test_steps_moved_alike_do_not_depend_on_the_basis_of_the_weak_directions():
    """Two weak directions of round-off-level information: any rotation of their eigenvectors is as
    good, and which steps run off must not change with it (a test on each eigenvector's components,
    against their median, did)."""
    from ratercal_cli.methods.cml import _moved_alike

    rng = np.random.default_rng(1)
    # 12 steps: 7 kept together, 3 moved one way, 2 another, all of them shifted alike too
    R = np.zeros((12, 3))
    R[7:10] = [1.0, 0.5, 0.0]
    R[10:] = [-0.3, 1.0, 0.0]
    R += [0.2, -0.1, 0.7]
    R += 1e-9 * rng.standard_normal(R.shape)
    expected = np.arange(12) < 7
    for _ in range(20):
        Q = np.linalg.qr(rng.standard_normal((3, 3)))[0]
        np.testing.assert_array_equal(_moved_alike(R @ Q), expected)
    # no majority kept together: none (here 6 against 6)
    R[6] = R[7]
    assert not _moved_alike(R).any()
    # nothing moved: all kept
    assert _moved_alike(np.ones((5, 2))).all()


def test_a_long_information_shows_its_progress_over_the_rater_sets(monkeypatch):
    """``adjust -m CML`` at 21 of 200 raters a paper (1M ratings) ran ~19 CPU minutes with no sign of life: an
    information past PROGRESS_WORK reports its rater sets as it goes (a bar on a terminal; the app's job page,
    whose Cancel stops it), and one under it reports nothing."""
    import ratercal_cli.methods.cml as cml_mod
    from ratercal_cli.progress import observed

    rng = np.random.default_rng(4)
    raters = np.argsort(rng.random((80, 10)), axis=1)[:, :4]
    score = np.clip(np.rint(2 + rng.normal(0, 1, 80)[:, None] + rng.normal(0, 0.7, (80, 4))), 0, 4).astype(int)
    r = Ratings(np.repeat(np.arange(80), 4), raters.ravel(), score.ravel(), 4, 80, 10)
    seen = []
    with observed(lambda desc, done, total: seen.append((desc, done, total))):
        fit_cml(r)
    assert seen == []
    monkeypatch.setattr(cml_mod, "PROGRESS_WORK", 1.0)
    with observed(lambda desc, done, total: seen.append((desc, done, total))):
        fit_cml(r)
    assert seen and {d for d, _, _ in seen} == {"CML information"}
    sets = sum(g["items"].shape[0] for g in cml_mod._cml_problem(r, "pcm").groups.sizes)
    assert sets > 50 and all(total == sets for _, _, total in seen)
    starts = [k for k, (_, done, _) in enumerate(seen) if done == 0]   # (one bar an information, each to its end)
    assert len(starts) >= 3 and all(seen[k - 1][1] == sets for k in starts[1:]) and seen[-1][1] == sets


def test_a_fit_without_ses_ends_without_the_information_of_its_final_point():
    """Without SEs the information only tells weak directions (below 1 / max_se**2 = 0.01 where an estimate
    with data has hundreds), so where the gradient after the final step is under the tolerance, the fit keeps
    the information of the point before it (cml._FINAL_STEP).  On 100 raters, 2 a paper, that step moved a
    rarely given category's threshold by 0.004 logits, past the 1e-3 that was allowed, and the information
    (the fit's costly part, ~4 gradients) was computed again at the end; now it is not, and the steps are those
    of the fit with SEs."""
    from ratercal_cli.methods import cml

    rng = np.random.default_rng(1)
    n_papers, J = 25_000, 100
    severity = rng.normal(0.0, 0.5, J)
    quality = rng.normal(2.5, 1.0, n_papers)
    r1 = rng.integers(0, J, n_papers)
    r2 = (r1 + 1 + rng.integers(0, J - 1, n_papers)) % J
    paper, rater = np.repeat(np.arange(n_papers), 2), np.column_stack([r1, r2]).ravel()
    score = np.clip(np.rint(quality[paper] + severity[rater] + rng.normal(0.0, 0.7, paper.size)), 0, 5).astype(int)
    r = Ratings(paper=paper, rater=rater, score=score, max_score=5, n_papers=n_papers, n_raters=J)
    orders, steps = [], []
    evaluate, halving = cml._Problem.evaluate, cml._halving_step

    def spy(self, phi, order=2):
        orders.append(order)
        return evaluate(self, phi, order)

    def step(pb, phi, d, ll, order=2):
        out = halving(pb, phi, d, ll, order)
        steps.append(float(np.max(np.abs(out[0] - phi))))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cml._Problem, "evaluate", spy)
        mp.setattr(cml, "_halving_step", step)
        quick = cml.fit_cml(r, "pcm", standard_errors=False)
    assert quick.converged and orders[-1] == 1 and orders.count(1) == 1
    assert 1e-3 < steps[-1] < cml._FINAL_STEP   # (the case: a final step past the old 1e-3)
    full = cml.fit_cml(r, "pcm")
    np.testing.assert_allclose(quick.steps, full.steps, rtol=0, atol=1e-6)
    assert np.isfinite(full.steps_se[np.isfinite(full.steps)]).all()


def test_a_complete_panels_long_products_by_convolution_are_the_term_by_term_ones(monkeypatch):
    """A complete panel is one set of raters whose ESF products run to hundreds of terms: multiplied a term at a time
    in Python, check spent 170 of 173 s there on 100 raters (an edge tester). Long products in few rows are numpy's
    convolution now (CONVOLVE_FROM); the products and the fit are the term-by-term ones to rounding."""
    from ratercal_cli.methods import cml

    rng = np.random.default_rng(5)
    for a_shape, b_shape in (((1, 40), (1, 300)), ((2, 3, 64), (2, 3, 40)), ((1, 40), (3, 40)), ((40,), (50,))):
        a, b = np.exp(rng.normal(0, 3, a_shape)), np.exp(rng.normal(0, 3, b_shape))
        fast = cml._polymul(a, b)
        monkeypatch.setattr(cml, "CONVOLVE_FROM", 10 ** 9)
        slow = cml._polymul(a, b)
        monkeypatch.setattr(cml, "CONVOLVE_FROM", 32)
        assert fast.shape == slow.shape and np.allclose(fast, slow, rtol=1e-13, atol=0)
    P, J = 150, 20   # (20 raters on 0-5: ESF products of up to 101 terms, both factors of some 32 or more)
    theta, sev = rng.normal(0, 1, P), rng.normal(0, 0.5, J)
    paper, rater = np.repeat(np.arange(P), J), np.tile(np.arange(J), P)
    score = np.clip(np.rint(2.5 + 1.2 * theta[paper] - sev[rater] + rng.normal(0, 0.7, P * J)), 0, 5).astype(np.int64)
    r = Ratings(paper, rater, score, 5, P, J)
    calls = []
    convolve = np.convolve
    monkeypatch.setattr(cml.np, "convolve", lambda x, y: calls.append(1) or convolve(x, y))
    fast = ConditionalPCM().fit(r).tau_
    monkeypatch.setattr(cml.np, "convolve", convolve)
    assert calls   # (the long products took the convolution)
    monkeypatch.setattr(cml, "CONVOLVE_FROM", 10 ** 9)
    slow = ConditionalPCM().fit(r).tau_
    assert np.allclose(fast, slow, rtol=0, atol=1e-9, equal_nan=True)
