"""EQP: EQPEQ.BAS's at-or-below loop, mid-percentile ranks, log-linear presmoothing."""

import numpy as np
import pytest
from scipy.optimize import minimize

from ratercal_cli.methods import make_method
from ratercal_cli.methods.equipercentile import (EquipercentileEquating, interpolate_inverse,
                                                 loglinear_presmooth, mid_percentile_ranks)
from ratercal_cli.ratings import Ratings


def _from_counts(counts, max_score):
    """One rating per paper; counts[j][x] ratings of score x by rater j."""
    rater, score = [], []
    for j, row in enumerate(counts):
        for x, c in enumerate(row):
            rater += [j] * c
            score += [x] * c
    n = len(score)
    return Ratings(np.arange(n), rater, score, max_score, n, len(counts))


# Chapter 3 (p. 12): 23 % of rater A's scores are 3 or less; overall 19 % are 3 or
# less and 27 % 4 or less, so "a 3 from rater A would be adjusted to a 3.5".
A = [5, 5, 5, 8, 7, 10, 15, 15, 15, 15]  # cumulative 5 10 15 23 30 ... 100
B = [3, 4, 4, 4, 9, 16, 15, 15, 15, 15]  # cumulative 3 7 11 15 24 ... 100 -> overall 19 %, 27 %


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
def test_chapter3_example_at_or_below(variant):
    r = _from_counts([A, B], 9)
    m = EquipercentileEquating(variant, definition="at_or_below").fit(r)
    assert m.rank_[0, 3] == pytest.approx(0.23) and m.overall_rank_[3] == pytest.approx(0.19)
    assert m.overall_rank_[4] == pytest.approx(0.27)
    assert m.table_[0, 3] == pytest.approx(3.5, abs=1e-6 if variant == "faithful" else 1e-12)
    # a score at or below the overall proportion of 0s (4 %) maps to 0: rater B's 0 (3 %)
    assert m.table_[1, 0] == 0.0
    # rater A's 0 (5 %): between overall 0 (4 %) and 1 (8.5 %) -> 0.01 / 0.045
    assert m.table_[0, 0] == pytest.approx(0.01 / 0.045, abs=1e-6)
    # a rating's adjusted score is its table entry
    adj = m.transform(r)
    assert adj.rating[r.score.tolist().index(3)] == m.table_[0, 3]


def _basic_eqpeq(r):
    """EQPEQ.BAS's loops replayed literally in scalar singles."""
    f = np.float32
    M = r.max_score
    w = np.zeros((r.n_raters + 1, M + 1), dtype=int)
    for j, x in zip(r.rater, r.score):
        for k in range(M + 1):
            if x <= k:
                w[j + 1, k] += 1
                w[0, k] += 1
    bign = w[0, M]
    out = []
    for j, x in zip(r.rater, r.score):
        aj = j + 1
        s = f(f(w[aj, x]) / f(w[aj, M]))
        t = f(f(w[0, 0]) / f(bign))
        if s <= t:
            adj = f(0)
        else:
            a = f(-1)
            while t < s:
                rr = t
                a = f(a + f(1))
                t = f(f(w[0, int(a)]) / f(bign))
            adj = f(f(a + f(f(s - rr) / f(t - rr))) - f(1))
        out.append(adj)
    return out


def _random(seed, n_papers=300, m=5, skip=None):
    rng = np.random.default_rng(seed)
    rater = np.concatenate([rng.choice(9, 2, replace=False) for _ in range(n_papers)])
    score = np.clip(rng.binomial(m, 0.3 + 0.05 * rater), 0, m)
    if skip is not None:  # an unused overall category
        score[score == skip] = skip - 1
    return Ratings(np.repeat(np.arange(n_papers), 2), rater, score, m, n_papers, 9)


@pytest.mark.parametrize("seed,skip", [(1, None), (2, 3), (3, None)])
def test_faithful_is_the_basic_loop_in_singles(seed, skip):
    r = _random(seed, skip=skip)
    expect = _basic_eqpeq(r)
    adj = EquipercentileEquating("faithful").fit_transform(r)
    assert adj.rating.tolist() == [float(v) for v in expect]
    f = np.float32
    papers = [f(f(f(0) + expect[2 * i]) + expect[2 * i + 1]) / f(2) for i in range(r.n_papers)]
    assert adj.paper.tolist() == [float(v) for v in papers]
    corr = EquipercentileEquating("corrected", definition="at_or_below").fit_transform(r)
    np.testing.assert_allclose(adj.rating, corr.rating, atol=1e-5)


def test_mid_percentile_hand_example():
    # overall: one 0, three 1s, four 2s -> PR = 1/16, 5/16, 12/16
    # rater A: 0 1 1 2 -> PR 1/8, 1/2, 7/8; rater B: 1 2 2 2 -> PR 0, 1/8, 5/8
    r = _from_counts([[1, 2, 1], [0, 1, 3]], 2)
    m = EquipercentileEquating("corrected").fit(r)
    np.testing.assert_allclose(m.overall_rank_, [1 / 16, 5 / 16, 12 / 16])
    np.testing.assert_allclose(m.rank_, [[1 / 8, 1 / 2, 7 / 8], [0, 1 / 8, 5 / 8]])
    np.testing.assert_allclose(m.table_, [[0.25, 1 + (3 / 16) / (7 / 16), 2.0],
                                          [0.0, 0.25, 1 + (5 / 16) / (7 / 16)]], atol=1e-12)
    # the faithful variant with the same definition, in singles
    np.testing.assert_allclose(EquipercentileEquating("faithful", definition="mid").fit(r).table_,
                               m.table_, atol=1e-6)


def test_unused_overall_categories():
    # everyone gives 0 or 4; overall 2 zeros, 4 fours
    r = _from_counts([[1, 0, 0, 0, 1], [1, 0, 0, 0, 3]], 4)
    # mid: overall PR = 1/6 1/3 1/3 1/3 2/3; rater 0 PR = .25 .5 .5 .5 .75; rater 1 .125 .25 .25 .25 .625
    mid = EquipercentileEquating("corrected").fit(r)
    np.testing.assert_allclose(mid.table_, [[0.5, 3.5, 3.5, 3.5, 4.0],
                                            [0.0, 0.5, 0.5, 0.5, 3.875]], atol=1e-12)
    # at or below: overall F = 1/3 1/3 1/3 1/3 1; rater 0's F(0) = .5 -> 3 + (1/6) / (2/3)
    for variant in ("faithful", "corrected"):
        aob = EquipercentileEquating(variant, definition="at_or_below").fit(r)
        np.testing.assert_allclose(aob.table_, [[3.25] * 4 + [4.0], [0.0] * 4 + [4.0]], atol=1e-6)


def test_interpolate_inverse_ties_and_ends():
    G = [0.25, 0.5, 0.5, 0.5, 0.75]
    p = [0.1, 0.25, 0.375, 0.5, 0.6, 0.75, 0.9]
    np.testing.assert_allclose(interpolate_inverse(G, p, "middle"), [0, 0, 0.5, 2, 3.4, 4, 4])
    np.testing.assert_allclose(interpolate_inverse(G, p, "lowest"), [0, 0, 0.5, 1, 3.4, 4, 4])
    # a tie at the bottom (two unused lowest categories under mid-percentiles)
    np.testing.assert_allclose(interpolate_inverse([0.0, 0.0, 0.5, 1.0], [0.0, 0.25], "middle"),
                               [0.5, 1.5])


def test_mid_percentile_ranks_formula():
    f = np.array([[3, 0, 5, 2], [1, 1, 1, 1]])
    p = f / f.sum(axis=1, keepdims=True)
    expect = [[sum(p[j, :x]) + p[j, x] / 2 for x in range(4)] for j in range(2)]
    np.testing.assert_allclose(mid_percentile_ranks(f), expect)


# -- log-linear presmoothing (Holland & Thayer 2000) --------------------------------

FREQ = np.array([2, 0, 7, 15, 31, 40, 22, 9, 0, 1], dtype=float)


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 6])
def test_presmoothing_preserves_total_and_first_c_moments(degree):
    mu = loglinear_presmooth(FREQ, degree)
    x = np.arange(FREQ.size, dtype=float)
    for k in range(degree + 1):
        assert (x ** k) @ mu == pytest.approx((x ** k) @ FREQ, rel=1e-9)
    assert (mu > 0).all()
    if degree < FREQ.size - 1:  # the next moment is not kept
        assert (x ** (degree + 1)) @ mu != pytest.approx((x ** (degree + 1)) @ FREQ, rel=1e-6)


@pytest.mark.parametrize("degree", [2, 3])
def test_presmoothing_is_the_poisson_mle(degree):
    """Independent fit: maximise the Poisson log likelihood with scipy's BFGS."""
    x = np.arange(FREQ.size, dtype=float)
    u = (x - 4.5) / 4.5
    V = np.vander(u, degree + 1, increasing=True)

    def negll(b):
        eta = V @ b
        return -(FREQ @ eta - np.exp(eta).sum())

    def grad(b):
        return -(V.T @ (FREQ - np.exp(V @ b)))

    b0 = np.zeros(degree + 1)
    b0[0] = np.log(FREQ.mean())
    res = minimize(negll, b0, jac=grad, method="BFGS", options={"gtol": 1e-10, "maxiter": 10000})
    np.testing.assert_allclose(loglinear_presmooth(FREQ, degree), np.exp(V @ res.x), rtol=1e-5)


def test_presmoothing_degenerate_cases():
    # saturated: degree K-1 with every category used returns the data
    f = np.array([3.0, 1, 4, 1, 5])
    np.testing.assert_allclose(loglinear_presmooth(f, 4), f)
    # a single used score: returned unchanged (no ML fit exists)
    np.testing.assert_array_equal(loglinear_presmooth([0, 0, 6, 0], 2), [0, 0, 6, 0])
    # two used scores: the degree drops to 1 (total and mean kept, all positive)
    mu = loglinear_presmooth([0, 4, 0, 2, 0], 3)
    assert mu.sum() == pytest.approx(6) and np.arange(5) @ mu == pytest.approx(10)
    assert (mu > 0).all()
    with pytest.raises(ValueError):
        loglinear_presmooth(f, 0)


def test_presmoothed_eqp():
    r = _random(5)
    m = EquipercentileEquating("corrected", presmoothing=2).fit(r)
    x = np.arange(r.max_score + 1)
    for j in range(9):
        raw = np.bincount(r.score[r.rater == j], minlength=r.max_score + 1)
        assert m.freq_[j].sum() == pytest.approx(raw.sum())
        assert x @ m.freq_[j] == pytest.approx(x @ raw)
    assert (m.overall_freq_ > 0).all()
    raw0 = np.bincount(r.score, minlength=r.max_score + 1)
    assert (x ** 2) @ m.overall_freq_ == pytest.approx((x ** 2) @ raw0)
    adj = m.transform(r)
    assert adj.rating.min() >= 0 and adj.rating.max() <= r.max_score
    # adjusted scores never decrease with the raw score, and strictly increase
    # between the ends (ranks beyond the overall PR(0), PR(M) clamp to 0, M)
    d = np.diff(m.table_, axis=1)
    assert (d >= 0).all()
    inside = (m.table_[:, :-1] > 0) & (m.table_[:, 1:] < r.max_score)
    assert (d[inside] > 0).all() and inside.sum() > 20


def test_registry_and_defaults():
    m = make_method("EQP", "corrected")
    assert m.code == "EQP" and m._definition() == "mid"
    assert make_method("EQP", "faithful")._definition() == "at_or_below"
