"""Paper qualities by WLE and MLE (ratercal_cli/methods/quality.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from ratercal_cli.errors import ArgumentError
from ratercal_cli.methods.mml_engine import paper_patterns, rating_patterns
from ratercal_cli.methods.quality import estimate_quality, quality_by_pattern
from ratercal_cli.models.pcm import expected_score, score_variance


def test_wle_dichotomous_equal_items_closed_form():
    """n Rasch items at difficulty 0: the WLE equation r - nP + (1 - 2P)/2 = 0 gives
    P = (r + 1/2) / (n + 1), theta = log((r + 1/2) / (n - r + 1/2)) — finite at r = 0 and n."""
    n = 4
    totals = np.arange(n + 1)
    paper = np.repeat(totals, n)
    rater = np.tile(np.arange(n), n + 1)
    score = np.concatenate([[1] * r + [0] * (n - r) for r in totals])
    tau = np.zeros((n, 2))  # tau[j, 1] = delta = 0
    theta, se, extreme = estimate_quality(paper, rater, score, n + 1, tau, quality="wle")
    np.testing.assert_allclose(theta, np.log((totals + 0.5) / (n - totals + 0.5)), atol=1e-9)
    assert list(extreme) == [-1, 0, 0, 0, 1]
    p = 1 / (1 + np.exp(-theta))
    np.testing.assert_allclose(se, 1 / np.sqrt(n * p * (1 - p)), rtol=1e-9)


def test_mle_dichotomous_closed_form_and_infinite_extremes():
    n = 4
    totals = np.arange(n + 1)
    paper = np.repeat(totals, n)
    rater = np.tile(np.arange(n), n + 1)
    score = np.concatenate([[1] * r + [0] * (n - r) for r in totals])
    theta, se, _ = estimate_quality(paper, rater, score, n + 1, np.zeros((n, 2)), quality="mle")
    np.testing.assert_allclose(theta[1:-1], np.log(totals[1:-1] / (n - totals[1:-1])), atol=1e-9)
    assert theta[0] == -np.inf and theta[-1] == np.inf


def test_wle_pcm_matches_root_of_warm_equation():
    """Two PCM raters on 0-4; the WLE root found by brentq on r - E + I'/(2I), I' by differences."""
    delta = np.array([[-1.5, -0.3, 0.4, 2.0], [-0.5, 0.0, 1.0, 1.2]])
    tau = np.c_[np.zeros(2), np.cumsum(delta, axis=1)]
    pairs = [(0, 0), (0, 3), (2, 2), (4, 1), (4, 4)]
    paper = np.repeat(np.arange(len(pairs)), 2)
    rater = np.tile([0, 1], len(pairs))
    score = np.array(pairs).ravel()
    theta, _, _ = estimate_quality(paper, rater, score, len(pairs), tau)

    def info(t):
        return score_variance(t, delta).sum()

    for v, (a, b) in enumerate(pairs):
        def warm(t):
            h = 1e-5
            return a + b - expected_score(t, delta).sum() + (info(t + h) - info(t - h)) / (2 * h) / (2 * info(t))
        assert theta[v] == pytest.approx(brentq(warm, -10, 10, xtol=1e-12), abs=1e-6)


def test_unusable_categories_and_unrated_papers():
    # rater 1 cannot give 0 (tau = inf): a 0 from it is treated as its lowest category, 1
    tau = np.array([[0.0, 0.0, 0.5], [np.inf, 0.0, 1.0]])
    theta, se, extreme = estimate_quality(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([0, 0, 0, 1]),
                                          3, tau)
    assert extreme[0] == -1 and extreme[1] == -1  # (0, 0) and (0, 1) are both the lowest possible
    assert theta[0] == pytest.approx(theta[1])
    assert np.isnan(theta[2]) and np.isnan(se[2])  # paper 2 has no ratings


def test_pcm_tau_is_the_generators_pcm_on_the_used_categories():
    """:func:`pcm_tau` + :func:`category_probabilities` (the solver's form) against models/pcm.py
    (the generators' step form): the same P on 0..M; on lo..hi the same P renormalised, 0 outside,
    whatever the (infinite) steps outside the range are."""
    from ratercal_cli.methods.quality import category_probabilities, pcm_tau
    from ratercal_cli.models.pcm import category_probabilities as step_probabilities

    steps = np.array([[-1.2, -0.3, 0.4, 1.5], [-0.5, 0.0, 0.2, 2.0]])
    theta = np.array([-2.0, 0.3, 1.7])[:, None]
    full = step_probabilities(theta, steps)
    np.testing.assert_allclose(category_probabilities(theta, pcm_tau(steps, 0, 4)), full, rtol=1e-12)
    cut = steps.copy()
    cut[:, 0], cut[:, 3] = -np.inf, np.inf                      # categories 1..3 used only
    p = category_probabilities(theta, pcm_tau(cut, 1, 3))
    assert np.all(p[..., [0, 4]] == 0)
    want = full[..., 1:4] / full[..., 1:4].sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(p[..., 1:4], want, rtol=1e-12)


def test_newton_does_not_cycle_away_from_the_root():
    """A 2-rater 0-9 paper (scores 6 and 5; steps of a corrected PCM fit in the sequential study)
    on which plain safeguarded Newton from the logit start cycles between -1.0 and 1.8 inside a
    slowly shrinking bracket and stops with the score residual at -4.4 (the old PCM solver, from
    0, did the same on 25 of 24,000 study data sets): the root is found, bounded or not."""
    from ratercal_cli.methods.quality import expected_score, pcm_tau

    steps = np.array([[-0.63415135, -0.27558877, -0.05989308, 0.07386995, 0.89348293, 0.32274604,
                       -0.37161159, 1.30565464, -0.52507608],
                      [-1.58186866, -1.97279478, -2.25295374, -1.77983271, -0.2033105, 1.22937629,
                       1.51986029, 2.61520014, 3.1672062]])
    tau = pcm_tau(steps)
    for bound in (None, 15.0):
        theta, _, _ = estimate_quality(np.zeros(2, dtype=int), np.array([0, 1]), np.array([6, 5]), 1, tau,
                                       quality="mle", bound=bound, max_iter=100)
        assert 11 - expected_score(theta[0], tau).sum() == pytest.approx(0, abs=1e-9)
        assert theta[0] == pytest.approx(0.4205647, abs=1e-6)


@pytest.mark.parametrize("K", range(1, 17))
def test_last_axis_sum_and_max_are_numpys_to_the_bit(K):
    """The column-wise sums of the category axis give np.sum's bits (its pairwise summation from
    +0, signed zeros, inf and nan included) and np.max's values, for every row length; if numpy
    ever sums short rows differently this fails, and the batched and per-data-set fits would no
    longer agree with the committed studies either."""
    from ratercal_cli.methods.quality import last_axis_max, last_axis_sum

    rng = np.random.default_rng(K)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-300, -1e300, 3.5])
    for a in (rng.choice(special, size=(5000, K)),
              rng.standard_normal((5000, K)) * 10.0 ** rng.integers(-12, 12, (5000, K)),
              rng.random((7, 3, K))):
        with np.errstate(invalid="ignore"):
            assert np.array_equal(last_axis_sum(a).view(np.int64), np.sum(a, axis=-1).view(np.int64))
            np.testing.assert_array_equal(last_axis_max(a), np.max(a, axis=-1))


@pytest.mark.parametrize("M, sd", [(5, 1.0), pytest.param(15, 0.4, marks=pytest.mark.slow)])
def test_interpolated_fair_scores_are_the_exact_ones_to_1e_10(monkeypatch, M, sd):
    """mean_expected_score interpolates (cubic Hermite on exact values and slopes) when there are many
    more distinct qualities than grid points: within 1e-10 of the exact values, on every scale width."""
    import ratercal_cli.methods.quality as q

    rng = np.random.default_rng(M)
    tau = np.zeros((30, M + 1))
    tau[:, 1:] = np.cumsum(rng.normal(0, sd, (30, M)), axis=1)
    theta = np.r_[rng.normal(0, 1.5, 3000), np.nan]
    exact = q.mean_expected_score(theta, tau)
    monkeypatch.setattr(q, "FAIR_INTERPOLATE_RATIO", 0)   # interpolate whatever the count
    got = q.mean_expected_score(theta, tau)
    assert not np.array_equal(got[:-1], exact[:-1])        # (it did interpolate)
    np.testing.assert_allclose(got[:-1], exact[:-1], rtol=0, atol=1e-10)
    assert np.isnan(got[-1]) and np.isnan(exact[-1])
    # the blocks of the grid's exact values and the chunks of the interpolation change no bit
    monkeypatch.setattr(q, "FAIR_BLOCK_CELLS", 1 << 24)
    monkeypatch.setattr(q, "FAIR_CHUNK", 1 << 22)
    whole = q.mean_expected_score(theta, tau)
    monkeypatch.setattr(q, "FAIR_BLOCK_CELLS", 7 * tau.size)
    monkeypatch.setattr(q, "FAIR_CHUNK", 100)
    np.testing.assert_array_equal(q.mean_expected_score(theta, tau), whole)
    np.testing.assert_array_equal(whole, got)


@pytest.mark.parametrize("J, K", [(200, 6), (7, 3), (40, 10), (30, 16), (20, 25)])
def test_the_fair_scores_exact_values_are_the_formulas_whatever_the_layout(J, K):
    """``_mean_expected_exact`` (with the variances, tau taken column by column: each category's qualities
    x raters in one piece) gives the bits of the formula on C-ordered arrays: the means of the raters'
    moments (``moments`` of ``category_probabilities``) and, without them, the raters' mean expected score
    (``expected_score``), a category no rater can give (+inf) among them."""
    import ratercal_cli.methods.quality as q

    rng = np.random.default_rng(J * K)
    tau = np.zeros((J, K))
    tau[:, 1:] = np.cumsum(rng.normal(0, 1.0, (J, K - 1)), axis=1)
    tau[1, -1] = np.inf
    theta = rng.normal(0, 2.0, 700)
    f, d = q._mean_expected_exact(theta, tau, moments_too=True)
    m, v = q.moments(q.category_probabilities(theta[:, None], np.ascontiguousarray(tau)), order=2)
    np.testing.assert_array_equal(f, m.mean(axis=-1))
    np.testing.assert_array_equal(d, v.mean(axis=-1))
    np.testing.assert_array_equal(q._mean_expected_exact(theta, tau)[0], q.expected_score(theta[:, None], tau).mean(axis=-1))


@pytest.mark.parametrize("J, K", [(200, 6), (7, 3), (40, 11), (20, 25)])
def test_the_fair_scores_grid_by_products_of_matrices_is_the_formula_s(J, K):
    """The interpolation's grid takes its values and slopes (the raters' mean expected score and variance)
    from the categories' sums as products of matrices (``_mean_moments_by_products``: 1M ratings, 21 of
    200 raters a paper, 0.10 -> 0.007 s): the formula's (``moments`` of ``category_probabilities``), the
    means to 1e-13 and the variances to 1e-9 relative, a category a rater cannot give (+inf) among them;
    past the exps' range (a wide scale, far qualities) the grid is the formula's itself."""
    import ratercal_cli.methods.quality as q

    rng = np.random.default_rng(J + K)
    tau = np.zeros((J, K))
    tau[:, 1:] = np.cumsum(rng.normal(0, 1.0, (J, K - 1)), axis=1)
    tau[1, -1] = np.inf
    theta = np.linspace(-9.0, 9.0, 701)
    assert q._products_in_range(theta, tau)
    f, d = q._mean_moments_by_products(theta, tau)
    m, v = q.moments(q.category_probabilities(theta[:, None], tau), order=2)
    np.testing.assert_allclose(f, m.mean(axis=-1), rtol=0, atol=1e-13)
    np.testing.assert_allclose(d, v.mean(axis=-1), rtol=1e-9, atol=0)
    wide = np.zeros((5, 101))
    wide[:, 1:] = np.cumsum(rng.normal(0, 0.3, (5, 100)), axis=1)
    far = np.r_[rng.normal(0, 3.0, 4000), 7.5]   # 100 x 7.5 > PRODUCT_EXPONENT
    assert not q._products_in_range(np.array([7.5]), wide) and q._products_in_range(np.array([6.0]), wide)
    assert not q._products_in_range(theta, np.where(tau > 1.0, np.nan, tau))
    exact = q._mean_expected_exact(np.unique(far), wide)[0]
    got = q.mean_expected_score(far, wide)
    np.testing.assert_allclose(got, exact[np.searchsorted(np.unique(far), far)], rtol=0, atol=1e-10)


def test_every_estimator_spells_the_paper_quality_option_alike():
    """One name, ``quality=``, and one spelling of each estimate across the estimators (the PCM's
    was ``estimator="ml"``, the person solver's ``method=``)."""
    import inspect

    from ratercal_cli.methods import make_method
    from ratercal_cli.methods.quality import QUALITY_ESTIMATES

    for code, default in (("PCM", "wle"), ("CML", "wle"), ("RSM", "wle"), ("MML", "eap"), ("MFRM", "eap")):
        est = make_method(code)
        assert est.get_params()["quality"] == default and default in QUALITY_ESTIMATES
        assert "estimator" not in est.get_params()
    assert "quality" in inspect.signature(estimate_quality).parameters
    with pytest.raises(ArgumentError, match="quality: must be 'wle' or 'mle', not 'ml'"):
        estimate_quality(np.array([0]), np.array([0]), np.array([1]), 1, np.zeros((1, 3)), quality="ml")


@pytest.mark.parametrize("code, wrong", [("PCM", "eap"), ("CML", "eap"), ("MML", "mle")])
def test_a_quality_an_estimator_does_not_make_is_refused_alike(code, wrong):
    from ratercal_cli.methods import make_method
    from ratercal_cli.ratings import Ratings

    r = Ratings([0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 2, 0], [1, 3, 2, 3, 0, 2], 3, 3, 3)
    with pytest.raises(ArgumentError, match=rf"^quality: must be '\w+' or '\w+', not '{wrong}'$"):
        make_method(code, quality=wrong).fit(r)   # (an ArgumentError, a ValueError: the README's bad argument)


def test_a_parameter_a_method_does_not_have_is_an_argument_error():
    """make_method("TLI", foo=1) was the constructor's bare TypeError ("unexpected keyword argument")."""
    from ratercal_cli.methods import make_method

    with pytest.raises(ArgumentError, match=r"^foo: is not a parameter of TLI \(its parameters: variant, ddof, "
                                            r"zero_sd, min_ratings\)$"):
        make_method("TLI", foo=1)
    with pytest.raises(ArgumentError, match="^truncate: is not a parameter of TLI"):   # (TLI is LI truncated)
        make_method("TLI", truncate=False)
    assert make_method("LI", zero_sd="raise").zero_sd == "raise"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quality_solved_per_pattern_is_the_per_paper_one_to_the_bit(seed):
    # issue 32: CML's and MML's WLE are solved once per distinct pattern of ratings; a random design
    # with 1-5 ratings a paper in random order, interleaved, a rater with no finite category (its
    # ratings unusable), one that cannot give 0, papers without ratings and extreme totals
    rng = np.random.default_rng(seed)
    n_papers, J, K = 3000, 6, 4
    tau = np.c_[np.zeros(J), np.cumsum(rng.normal(0, 1, (J, K - 1)), axis=1) + rng.normal(0, 0.5, (J, 1))]
    tau[4] = np.inf
    tau[5, 0] = np.inf
    n = rng.choice([1, 2, 2, 2, 3, 5], n_papers)
    n[rng.choice(n_papers, 20, replace=False)] = 0
    paper = np.repeat(np.arange(n_papers), n)
    rater = rng.integers(0, J, paper.size)
    score = rng.integers(0, K, paper.size)
    order = rng.permutation(paper.size)
    paper, rater, score = paper[order], rater[order], score[order]
    patterns = rating_patterns(paper, rater, score)
    assert patterns[1].max() + 1 < 0.6 * (n > 0).sum()   # papers do share patterns
    for quality in ("wle", "mle"):
        by_paper = estimate_quality(paper, rater, score, n_papers, tau, quality=quality)
        by_pattern = quality_by_pattern(patterns, n_papers, tau, quality=quality)
        for a, b in zip(by_paper, by_pattern):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    assert np.isnan(by_pattern[0][n == 0]).all() and (by_pattern[2] != 0).any()


def test_patterns_keep_the_ratings_order_only_when_asked():
    # papers 0 and 1: the same ratings in another order; paper 2 like paper 0
    paper, cell = np.array([0, 0, 1, 1, 2, 2]), np.array([3, 5, 5, 3, 3, 5])
    assert paper_patterns(paper, cell, 6)[1].tolist() == [0, 0, 0]
    papers, pattern, groups = paper_patterns(paper, cell, 6, in_order=True)
    assert pattern.tolist() == [0, 1, 0]
    assert [R.tolist() for R, _ in groups] == [[[3, 5], [5, 3]]] and groups[0][1].tolist() == [2, 1]
