"""Kelley shrinkage (methods/shrinkage.py): the formula against a loop written from its
definition, one data set alone equal to the same one inside a batch, the one-rater refusal, and
MML/MFRM's own two levels (WLE and EAP fair averages)."""

from __future__ import annotations

import numpy as np
import pytest

from ratercal_cli.errors import MethodError
from ratercal_cli.methods import make_method
from ratercal_cli.methods.shrinkage import kelley, kelley_batch, shrunk_papers
from ratercal_cli.ratings import Ratings


def _ratings(seed=1, papers=40, raters=5, per=(2, 3)):
    rng = np.random.default_rng(seed)
    paper, rater = [], []
    for p in range(papers):
        k = per[p % len(per)]
        for j in rng.choice(raters, k, replace=False):
            paper.append(p)
            rater.append(int(j))
    quality = rng.normal(2.5, 1.0, papers)
    sev = np.linspace(-0.6, 0.6, raters)
    score = np.clip(np.rint(quality[paper] + sev[rater] + rng.normal(0, 0.7, len(paper))), 0, 5)
    return Ratings(np.array(paper), np.array(rater), score.astype(int), 5, papers, raters)


def _by_definition(P, r: Ratings):
    """Kelley's regressed score with the one-way ANOVA reliability, written with loops."""
    rater_mean = {j: np.mean([s for s, q in zip(r.score, r.rater) if q == j]) for j in set(r.rater.tolist())}
    y = [s - rater_mean[j] for s, j in zip(r.score, r.rater)]
    ss, df, n = 0.0, 0, []
    for i in range(r.n_papers):
        yi = [y[t] for t in range(r.n_ratings) if r.paper[t] == i]
        ss += sum((v - np.mean(yi)) ** 2 for v in yi)
        df += len(yi) - 1
        n.append(len(yi))
    s2e = ss / df
    err = np.array([s2e / k for k in n])
    s2t = max(np.var(P, ddof=1) - err.mean(), 0.0)
    rho = s2t / (s2t + err)
    return P.mean() + rho * (P - P.mean()), rho


def test_kelley_is_the_regressed_score_with_the_anova_reliability():
    r = _ratings()
    P = make_method("TLI").fit_transform(r).paper
    T, rho = kelley(P, r)
    want_T, want_rho = _by_definition(P, r)
    np.testing.assert_allclose(T, want_T, rtol=1e-12)
    np.testing.assert_allclose(rho, want_rho, rtol=1e-12)
    # papers with three ratings are more reliable, so shrunk less; every paper moves toward the mean
    assert rho[1] > rho[0] and 0 < rho.min() < rho.max() < 1
    assert np.all(np.abs(T - P.mean()) <= np.abs(P - P.mean()) + 1e-15)


def test_a_data_set_alone_is_bitwise_the_same_inside_a_batch():
    sets = [_ratings(seed) for seed in (1, 2, 3)]
    P = np.stack([make_method("MN").fit_transform(r).paper for r in sets])
    rep = np.concatenate([np.full(r.n_ratings, b) for b, r in enumerate(sets)])
    cat = lambda name: np.concatenate([getattr(r, name) for r in sets])  # noqa: E731
    T, _ = kelley_batch(P, rep, cat("paper"), cat("rater"), cat("score"), 5)
    for b, r in enumerate(sets):
        assert np.array_equal(T[b], kelley(P[b], r)[0])


def test_one_rater_data_have_no_reliability():
    r = _ratings(per=(1,))
    with pytest.raises(MethodError, match="two or more ratings"):
        kelley(r.paper_mean(), r)


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_mml_reports_wle_as_none_and_eap_as_kelley():
    r = _ratings(per=(2,), papers=60)
    est = make_method("MML")
    adj = est.fit_transform(r)
    got = shrunk_papers(est, r, adj.paper)
    np.testing.assert_array_equal(got["kelley"], adj.paper)          # MML's default: EAP
    np.testing.assert_array_equal(got["none"], make_method("MML", quality="wle").fit_transform(r).paper)
    # EAP shrinks: the fair averages at the EAP spread less than at the WLE
    assert np.std(got["kelley"]) < np.std(got["none"])


@pytest.mark.parametrize("code", ["MML", "MFRM", "CML", "PCM"])
def test_thin_raters_count_alike_in_the_adjusted_score_and_both_shrinkage_levels(code):
    """A rater with one rating (a thin rater) is left out of every fit and its rating counts in its paper's
    score as one unadjusted rating, in the adjusted scores of every method; MML's and MFRM's own
    levels gave their fair scores alone, so their ``kelley`` (the EAP) was not their own adjusted score
    (the EAP too; here paper 0, with a thin 5 beside two ratings, 2.99 against 3.66), and a paper rated
    only by thin raters got the fair score of no rating instead of its raters' mean."""
    base = _ratings(per=(2,), papers=60)
    # R6 and R7 rate once: paper 0 a third time, and a paper 60 that no other rater rated
    r = Ratings(np.r_[base.paper, 0, 60, 60], np.r_[base.rater, 5, 6, 7], np.r_[base.score, 5, 0, 2], 5, 61, 8)
    est = make_method(code)
    adj = est.fit_transform(r)
    assert list(est.thin_raters_) == [5, 6, 7]
    got = shrunk_papers(est, r, adj.paper)
    rest = r.subset(r.rater < 5)
    own = make_method(code).fit(rest)
    inner = shrunk_papers(own, rest, own.fit_transform(rest).paper)   # the same fit, no thin raters
    for level in ("none", "kelley"):
        k = rest.ratings_per_paper()[0]
        assert got[level][0] == pytest.approx((k * inner[level][0] + 5) / (k + 1), abs=1e-12)
        assert got[level][60] == 1.0
        np.testing.assert_allclose(got[level][1:60], inner[level][1:60], atol=1e-12)
    mine = "kelley" if code in ("MML", "MFRM") else "none"   # the level the method's adjusted score is at
    np.testing.assert_allclose(got[mine], adj.paper, atol=1e-12)


def _pcm_data(seed=4, papers=300, raters=6, per=2, sd=1.4):
    """Scores drawn from a PCM (steps spread per rater), each paper by ``per`` raters; the true
    fair score (mean over raters of the expected score) returned beside the ratings."""
    from ratercal_cli.methods.quality import category_probabilities, pcm_tau

    rng = np.random.default_rng(seed)
    steps = np.sort(rng.normal(0.0, 1.2, (raters, 5)), axis=1) + np.linspace(-0.8, 0.8, raters)[:, None]
    theta = rng.normal(0.4, sd, papers)
    paper = np.repeat(np.arange(papers), per)
    rater = np.concatenate([rng.choice(raters, per, replace=False) for _ in range(papers)])
    p = category_probabilities(theta[paper], pcm_tau(steps)[rater])
    score = (rng.random(paper.size)[:, None] > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)
    true = (category_probabilities(theta[:, None], pcm_tau(steps)) @ np.arange(6)).mean(axis=1)
    return Ratings(paper, rater, score, 5, papers, raters), true


def test_eap_normal_maximises_the_marginal_likelihood_and_matches_the_mml_engine():
    """The normal fitted with the raters' parameters held is the marginal ML one (log L of the
    MML engine, an independent computation on its own grid, falls when mu or sigma moves by
    0.02), and its EAPs are that engine's posterior means at (mu, sigma)."""
    from ratercal_cli.methods.mml import _settled_engine, marginal_loglik
    from ratercal_cli.methods.quality import eap_normal, estimate_quality, pcm_tau

    r, _ = _pcm_data()
    tau = pcm_tau(make_method("PCM").fit(r).steps_)
    wle, _, _ = estimate_quality(r.paper, r.rater, r.score, r.n_papers, tau)
    eap, sd, mu, sigma = eap_normal(r.paper, r.rater, r.score, r.n_papers, tau, wle)
    k = np.arange(tau.shape[1])

    def loglik(m, s):   # theta = m + z, z ~ N(0, s^2): tau - m * x
        return marginal_loglik(r, tau - m * k, s)

    best = loglik(mu, sigma)
    for dm, ds in ((0.02, 0), (-0.02, 0), (0, 0.02), (0, -0.02)):
        assert loglik(mu + dm, sigma + ds) < best
    eng, ev = _settled_engine(r.paper, r.rater, r.score, r.n_raters, 6, tau - mu * k, float(np.log(sigma)))
    np.testing.assert_allclose(eap[eng.papers], ev.eap[eng.pattern] + mu, atol=2e-6)
    np.testing.assert_allclose(sd[eng.papers], ev.eap_sd[eng.pattern], atol=2e-6)
    assert 0.9 < sigma < 2.0 and np.std(eap) < np.std(wle)


def test_corrected_pcm_reports_wle_as_none_and_eap_as_kelley():
    """The corrected PCM's levels: ``none`` its own paper scores (at the WLE, the default), ``kelley``
    at the EAP of a normal fitted with its steps held, which shrinks (less spread) and here, on
    data drawn from a PCM, is nearer the truth; the faithful PCM scores ``none`` only (its
    ``kelley`` is Kelley's formula)."""
    r, true = _pcm_data()
    est = make_method("PCM")
    assert est.quality == "wle"
    adj = est.fit_transform(r)
    got = shrunk_papers(est, r, adj.paper)
    np.testing.assert_array_equal(got["none"], adj.paper)
    np.testing.assert_array_equal(got["none"], make_method("PCM", quality="wle").fit_transform(r).paper)
    assert np.std(got["kelley"]) < np.std(got["none"])
    rmse = {s: np.sqrt(np.mean((got[s] - true) ** 2)) for s in got}
    assert rmse["kelley"] < rmse["none"] - 0.01
    mle = make_method("PCM", quality="mle").fit_transform(r).paper
    assert rmse["none"] < np.sqrt(np.mean((mle - true) ** 2))     # WLE beats bounded ML
    faithful = make_method("PCM", "faithful")
    fa = faithful.fit_transform(r)
    assert set(faithful.paper_scores_by_shrinkage(r)) == {"none"}
    np.testing.assert_array_equal(shrunk_papers(faithful, r, fa.paper)["kelley"], kelley(fa.paper, r)[0])


def test_eap_normal_leaves_out_a_score_in_a_gap_of_the_raters_categories():
    """A CML rater whose step into category 2 cannot be estimated has no category 2 (tau inf) but
    categories on both sides: a paper it scored 2 would have a likelihood of 0 everywhere (its EAP
    nan, its replication silently lost); that rating is left out, the paper's others count."""
    from ratercal_cli.methods.quality import eap_normal

    tau = np.array([[0.0, -0.5, np.inf, 1.0, 2.5, 5.0], [0.0, 0.3, 0.4, 1.2, 2.0, 4.0]])
    paper = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    rater = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    score = np.array([2, 3, 1, 1, 4, 4, 0, 2])
    eap, sd, mu, sigma = eap_normal(paper, rater, score, 4, tau, np.array([0.5, -0.5, 1.5, -1.0]))
    assert np.isfinite(eap).all() and np.isfinite(sd).all() and np.isfinite([mu, sigma]).all()
    # paper 0 is then rater 1's 3 alone: the same as a paper scored 3 by rater 1 only
    alone, _, _, _ = eap_normal(np.array([0, 0, 1, 1, 2, 2, 3, 3]), np.array([1, 1, 0, 1, 0, 1, 0, 1]),
                                np.array([3, 3, 1, 1, 4, 4, 0, 2]), 4, tau, np.array([0.5, -0.5, 1.5, -1.0]))
    assert eap[0] < alone[0]       # one reading of 3 (rater 1's) pulls it up less than two


# -- linear_eb: one empirical-Bayes linear operator for every method (issue 29) -------------------

def _hand_ratings():
    """Four papers, three raters, one paper read three times (the hand computation's data)."""
    paper = np.array([0, 0, 1, 1, 2, 2, 3, 3, 3])
    rater = np.array([0, 1, 0, 2, 1, 2, 0, 1, 2])
    score = np.array([2, 3, 4, 4, 1, 2, 3, 5, 4])
    return Ratings(paper, rater, score, 5, 4, 3)


def test_linear_eb_against_a_hand_computation():
    """By hand, in fractions.  Rater means 3, 3, 10/3; rater-centred ratings y: paper 0 (-1, 0), 1 (1, 2/3),
    2 (-2, -4/3), 3 (0, 2, 2/3); paper means of y -1/2, 5/6, -5/3, 8/9.  Within-paper sums of squares
    1/2 + 1/18 + 2/9 + 56/27 = 77/27 on 1 + 1 + 1 + 2 = 5 df: s2_E = 77/135.  The papers' means of y
    have mean -1/9 and variance (49 + 289 + 784 + 324) / 324 / 3 = 241/162; mean(1/n_i) = 11/24, so
    s2_T = 241/162 - (77/135)(11/24) = 3973/3240.  A method's scores X = (2.5, 4.2, 1.4, 4.1): mean 3.05,
    var(X) = (0.3025 + 1.3225 + 2.7225 + 1.1025) / 3 = 5.45/3; its error variance of one rating's
    worth s2_X = (var(X) - s2_T) / (11/24) = 1.28829; rho_i = s2_T / (s2_T + s2_X / n_i): 0.655620 for
    the papers read twice."""
    from fractions import Fraction as F

    from ratercal_cli.methods.shrinkage import _one_way, linear_eb

    r = _hand_ratings()
    ni, s2e, ybar = _one_way(np.zeros(9, np.int64), r.paper, r.rater, r.score, 1, 4, 3)
    assert s2e[0] == pytest.approx(77 / 135, rel=1e-14)
    np.testing.assert_allclose(ybar[0], [-1 / 2, 5 / 6, -5 / 3, 8 / 9], rtol=1e-14)
    s2t = F(241, 162) - F(77, 135) * F(11, 24)
    assert s2t == F(3973, 3240)
    var_x = F(545, 100) / 3
    s2x = (var_x - s2t) / F(11, 24)
    n = [2, 2, 2, 3]
    rho = [s2t / (s2t + s2x / k) for k in n]
    X = [F(25, 10), F(42, 10), F(14, 10), F(41, 10)]
    want = [F(305, 100) + p * (x - F(305, 100)) for p, x in zip(rho, X)]
    T, got_rho = linear_eb(np.array([2.5, 4.2, 1.4, 4.1]), r)
    np.testing.assert_allclose(got_rho, [float(p) for p in rho], rtol=1e-13)
    np.testing.assert_allclose(T, [float(t) for t in want], rtol=1e-13)
    assert float(rho[0]) == pytest.approx(0.655620, abs=1e-6) and rho[3] > rho[0]   # three readings: shrunk less


def test_linear_eb_is_kelley_on_the_rater_centred_means_and_differs_where_the_error_is_the_methods():
    """Kelley's ``s2_T`` is the method's score variance less the raw ratings' error; linear_eb's the
    ratings' own.  On the papers' mean rater-centred ratings (plus a constant) the two are the same
    number, so the operators agree; on scores with twice the spread (a method whose error is not
    the raw ratings') Kelley keeps rho and linear_eb shrinks by the excess variance."""
    from ratercal_cli.methods.shrinkage import _one_way, linear_eb

    r = _ratings()
    _, _, ybar = _one_way(np.zeros(r.n_ratings, np.int64), r.paper, r.rater, r.score, 1, r.n_papers, r.n_raters)
    X = ybar[0] + 2.7
    np.testing.assert_allclose(linear_eb(X, r)[0], kelley(X, r)[0], rtol=1e-12)
    np.testing.assert_allclose(linear_eb(X, r)[1], kelley(X, r)[1], rtol=1e-12)
    wide = 2.0 * X
    assert np.all(linear_eb(wide, r)[1] < kelley(wide, r)[1])


def test_linear_eb_batch_equals_each_set_alone_and_refuses_one_rater_data():
    from ratercal_cli.methods.shrinkage import linear_eb, linear_eb_batch

    sets = [_ratings(seed) for seed in (1, 2, 3)]
    P = np.stack([make_method("TLI").fit_transform(r).paper for r in sets])
    rep = np.concatenate([np.full(r.n_ratings, b) for b, r in enumerate(sets)])
    cat = lambda name: np.concatenate([getattr(r, name) for r in sets])  # noqa: E731
    T, _ = linear_eb_batch(P, rep, cat("paper"), cat("rater"), cat("score"), 5)
    for b, r in enumerate(sets):
        assert np.array_equal(T[b], linear_eb(P[b], r)[0])
    with pytest.raises(MethodError, match="linear_eb shrinkage needs papers with two or more ratings"):
        linear_eb(np.arange(40.0), _ratings(per=(1,)))


def test_linear_eb_shrinks_a_rasch_fits_unshrunk_score_not_its_eap():
    """linear_eb is the same operator for every method: the corrected PCM's and MML's WLE fair averages
    (their ``none``), never their EAP (their own ``kelley``)."""
    from ratercal_cli.methods.shrinkage import linear_eb

    r, true = _pcm_data(papers=200)
    for code in ("PCM", "TLI"):
        est = make_method(code)
        adj = est.fit_transform(r)
        got = shrunk_papers(est, r, adj.paper, ("none", "kelley", "linear_eb"))
        np.testing.assert_array_equal(got["linear_eb"], linear_eb(got["none"], r)[0])
        assert not np.array_equal(got["linear_eb"], got["kelley"])
        rmse = {s: np.sqrt(np.mean((got[s] - true) ** 2)) for s in got}
        assert rmse["linear_eb"] < rmse["none"]


def test_eap_normal_on_papers_that_do_not_differ_is_the_mean_not_nan():
    """A file whose papers show no signal (the app test's small export, grade 5, with 'grade' read
    as the score): the fitted sd of quality goes to 0, the variance E[t^2] - mu^2 rounded to
    -2.8e-17, its sqrt was nan and max(nan, 1e-3) kept it: all 20 EAPs were nan.  Now sigma stops
    at its floor and every paper's EAP is the grid point at the fitted mean."""
    import warnings

    from ratercal_cli.methods.quality import eap_normal

    paper = np.repeat(np.arange(20), 2)
    rater = np.array([0, 2, 2, 4, 4, 1, 1, 3, 3, 0] * 4)
    score = np.array([1, 4, 5, 2, 3, 2, 3, 1, 2, 5] * 4)
    a = [np.inf, 0.0, 2.944438979166439, 2.944438979166439, 1.4722194895832197, -1.4722194895832192]
    tau = np.array([a, [np.inf, 0.0, 4.043051267834548, 5.141663556502657, 4.768056355587547, 2.9222296650892163],
                    a, a, [np.inf, 0.0, 1.8458266904983303, 0.7472144018302216, -1.8236173764211063,
                           -5.866668644255654]])
    start = np.tile([-0.4628749614696968, -0.5244343157468656, -1.3363275562789267, -0.3699632781772425,
                     -0.2841867453482704], 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eap, sd, mu, sigma = eap_normal(paper, rater, score, 20, tau, start)
    assert np.isfinite(eap).all() and np.isfinite(sd).all()
    assert sigma == 1e-3 and -0.6 < mu < -0.3
    assert np.ptp(eap) == 0 and abs(eap[0] - mu) <= 0.05    # the grid point nearest the mean (spacing 0.1)
