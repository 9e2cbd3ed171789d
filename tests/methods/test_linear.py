"""LI/TLI: (x - mean_j) / sd_j * sd + mean, SDs dividing by n (EZEQ.BAS)."""

import math

import numpy as np
import pytest

from ratercal_cli.errors import MethodError
from ratercal_cli.methods import make_method
from ratercal_cli.methods.linear import LinearEquating
from ratercal_cli.ratings import Ratings


def _hand():
    # rater 0: 0 0 0 4 (mean 1, SD_n sqrt 3); rater 1: 3 4 (3.5, 0.5); rater 2: 2 3 (2.5, 0.5)
    # all: mean 2, SD_n sqrt(54/8 - 4) = sqrt 2.75
    return Ratings(paper=[0, 0, 1, 1, 2, 2, 3, 3], rater=[0, 1, 0, 1, 0, 2, 0, 2],
                   score=[0, 3, 0, 4, 0, 2, 4, 3], max_score=4, n_papers=4, n_raters=3)


def _hand_expected(ddof):
    x = [0, 3, 0, 4, 0, 2, 4, 3]
    rater = [0, 1, 0, 1, 0, 2, 0, 2]
    mean = {0: 1.0, 1: 3.5, 2: 2.5}
    ss = {0: 16 - 4 * 1.0, 1: 0.5, 2: 0.5}  # sums of squared deviations
    n = {0: 4, 1: 2, 2: 2}
    sd = {j: math.sqrt(ss[j] / (n[j] - ddof)) for j in n}
    sd0 = math.sqrt((54 - 8 * 4) / (8 - ddof))
    return [(xi - mean[j]) / sd[j] * sd0 + 2 for xi, j in zip(x, rater)]


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
def test_hand_example_sd_divides_by_n(variant):
    m = LinearEquating(variant, ddof=0).fit(_hand())
    assert m.sd_.tolist() == pytest.approx([math.sqrt(3), 0.5, 0.5], abs=1e-6)
    assert float(m.grand_sd_) == pytest.approx(math.sqrt(2.75), abs=1e-6)
    adj = m.transform(_hand())
    expect = _hand_expected(0)
    # e.g. rater 1's 3 -> (3 - 3.5) / 0.5 * 1.6583 + 2 = 0.3417
    assert expect[1] == pytest.approx(0.341688, abs=1e-6)
    np.testing.assert_allclose(adj.rating, expect, atol=1e-6 if variant == "faithful" else 1e-12)


def test_faithful_default_is_n_and_corrected_default_is_n_minus_1():
    np.testing.assert_allclose(LinearEquating("faithful").fit_transform(_hand()).rating,
                               _hand_expected(0), atol=1e-6)
    np.testing.assert_allclose(LinearEquating("corrected").fit_transform(_hand()).rating,
                               _hand_expected(1), atol=1e-12)


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
def test_truncation(variant):
    lin = LinearEquating(variant, ddof=0).fit_transform(_hand())
    tli = make_method("TLI", variant, ddof=0).fit_transform(_hand())
    # rater 0's 4 -> 2 + 3 sqrt(2.75/3) = 4.872 above M = 4
    assert lin.rating[6] == pytest.approx(2 + 3 * math.sqrt(2.75 / 3), abs=1e-6)
    assert tli.rating[6] == 4.0
    assert tli.paper[3] == pytest.approx((4 + lin.rating[7]) / 2, abs=1e-6)
    np.testing.assert_array_equal(np.delete(tli.rating, 6), np.delete(lin.rating, 6))


def _random(seed, n_papers=200, n_raters=9, m=5):
    rng = np.random.default_rng(seed)
    rater = np.concatenate([rng.choice(n_raters, 2, replace=False) for _ in range(n_papers)])
    score = np.clip(rng.integers(0, m + 1, rater.size) * (1 + (rater % 2)) // 2 + rater % 3, 0, m)
    return Ratings(np.repeat(np.arange(n_papers), 2), rater, score, m, n_papers, n_raters)


def test_faithful_is_the_basic_expression_in_singles():
    """Scalar float32 replay of EZEQ.BAS: sd(j) = SQR((ss(j) - s(j)^2 / n(j)) / n(j)),
    sc = (x - mn(aj)) / sd(aj) * sd(0) + mn(0)."""
    r = _random(7)
    f = np.float32
    n, s, ss = [f(0)] * 10, [f(0)] * 10, [f(0)] * 10
    for j, x in zip(r.rater, r.score):
        for k in (0, j + 1):  # 0 = totals, like the BASIC's index 0
            n[k] = f(n[k] + f(1))
            s[k] = f(s[k] + f(x))
            ss[k] = f(ss[k] + f(x) * f(x))
    mn = [f(s[k] / n[k]) for k in range(10)]
    sd = [f(np.sqrt(f(f(ss[k] - f(f(s[k] * s[k]) / n[k])) / n[k]))) for k in range(10)]
    expect = [f(f(f(f(f(x) - mn[j + 1]) / sd[j + 1]) * sd[0]) + mn[0]) for j, x in zip(r.rater, r.score)]
    adj = LinearEquating("faithful").fit_transform(r)
    assert adj.rating.tolist() == [float(v) for v in expect]
    corr = LinearEquating("corrected", ddof=0).fit_transform(r)
    np.testing.assert_allclose(adj.rating, corr.rating, atol=5e-6)


def test_corrected_matches_numpy_std():
    r = _random(8)
    x = r.score.astype(float)
    mean = np.array([x[r.rater == j].mean() for j in range(9)])
    sd = np.array([x[r.rater == j].std(ddof=1) for j in range(9)])
    expect = (x - mean[r.rater]) / sd[r.rater] * x.std(ddof=1) + x.mean()
    adj = LinearEquating("corrected").fit_transform(r)
    np.testing.assert_allclose(adj.rating, expect, atol=1e-12)
    m = LinearEquating("corrected").fit(r)
    np.testing.assert_allclose(m.intercept_ + m.slope_ * 3, (3 - mean) / sd * x.std(ddof=1) + x.mean())


def _zero_sd():
    # rater 0 gives only 4s (SD 0, like set 1151's rater 1); all ratings mean 2.5
    return Ratings(paper=[0, 1, 2, 3, 4, 5], rater=[0, 0, 1, 1, 1, 1], score=[4, 4, 0, 1, 3, 3],
                   max_score=4, n_papers=6, n_raters=2)


def test_zero_sd_rules():
    r = _zero_sd()
    assert LinearEquating("faithful").fit(r).zero_sd_.tolist() == [0]
    # default faithful rule: z = 0 -> the overall mean 15/6
    assert LinearEquating("faithful").fit_transform(r).rating[:2].tolist() == [2.5, 2.5]
    assert LinearEquating("faithful", zero_sd="raw").fit_transform(r).rating[:2].tolist() == [4, 4]
    assert LinearEquating("faithful", zero_sd=-1.0).fit_transform(r).rating[:2].tolist() == [-1, -1]
    assert LinearEquating("faithful", zero_sd=0).fit_transform(r).rating[:2].tolist() == [0, 0]
    assert LinearEquating("faithful", zero_sd=-1.0, truncate=True).fit_transform(r).rating[:2].tolist() == [0, 0]
    with pytest.raises(MethodError, match="SD 0"):
        LinearEquating("faithful", zero_sd="error").fit(r)
    # the other rater is equated as usual: 1 -> (1 - 1.75) / sd1 * sd + 2.5 with SDs over n
    sd1 = np.std([0, 1, 3, 3])
    sd = np.std([4, 4, 0, 1, 3, 3])
    got = LinearEquating("faithful").fit_transform(r).rating[3]
    assert got == pytest.approx((1 - 1.75) / sd1 * sd + 2.5, abs=1e-6)


def test_zero_sd_shift_rule_on_new_scores():
    r = _zero_sd()
    m = LinearEquating("corrected").fit(r)  # default rule "shift": mean equating for rater 0
    assert m.slope_[0] == 1.0 and m.intercept_[0] == pytest.approx(2.5 - 4)
    other = Ratings(paper=[0], rater=[0], score=[2], max_score=4, n_papers=1, n_raters=2)
    assert m.transform(other).rating[0] == pytest.approx(0.5)
    m = LinearEquating("corrected", zero_sd="mean").fit(r)
    assert m.transform(other).rating[0] == pytest.approx(2.5)


def test_one_rating_rater():
    r = Ratings(paper=[0, 0, 1, 1, 2], rater=[0, 1, 0, 1, 2], score=[1, 3, 0, 4, 3],
                max_score=4, n_papers=3, n_raters=3)
    # corrected: below min_ratings=2 -> unadjusted; with ddof=1 its SD is undefined anyway
    assert LinearEquating("corrected").fit_transform(r).rating[4] == 3.0
    m = LinearEquating("corrected", min_ratings=1).fit(r)
    assert m.zero_sd_.tolist() == [2]
    assert m.transform(r).rating[4] == pytest.approx(11 / 5)  # shift: 3 - 3 + mean
    # faithful: SD over n is 0 -> overall mean
    assert LinearEquating("faithful").fit_transform(r).rating[4] == pytest.approx(2.2, abs=1e-6)


def test_bad_zero_sd_rule():
    with pytest.raises(ValueError, match="zero_sd"):
        LinearEquating(zero_sd="nope").fit(_hand())
