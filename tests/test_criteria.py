"""Criteria: RMSE, r, maximum difference, per-rater RMSE, Fisher z, rounding, pass/fail."""

import math

import numpy as np
import pytest
from scipy import stats

from ratercal_cli.criteria import (PASS_CUT, fisher_z_mean, passes, rater_rmse, round_half_up, score_set,
                                   score_sets, table_round)
from ratercal_cli.ratings import Ratings

ADJ = np.array([1.0, 2.5, 3.0, 4.25])
TRUE = np.array([1.5, 2.0, 3.5, 3.0])


def test_rmse_and_max_by_hand():
    # differences -.5 .5 -.5 1.25: squares .25 .25 .25 1.5625 -> mean .578125
    assert score_set(ADJ, TRUE)["rmse"] == pytest.approx(math.sqrt(0.578125), abs=1e-15)
    assert score_set(ADJ, TRUE)["maxdiff"] == 1.25
    assert score_set(TRUE, TRUE)["rmse"] == 0.0
    with pytest.raises(ValueError, match="shape"):
        score_set(ADJ, TRUE[:3])


def test_pearson_r_matches_scipy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = 0.6 * x + rng.normal(size=200)
    assert score_set(x, y)["r"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    assert score_set(ADJ, TRUE)["r"] == pytest.approx(stats.pearsonr(ADJ, TRUE)[0], abs=1e-12)
    assert math.isnan(score_set([1, 1, 1], [1, 2, 3])["r"])
    got = score_set(ADJ, TRUE, cut=2.5)
    assert got["bias"] == pytest.approx(np.mean(np.asarray(ADJ) - np.asarray(TRUE)), abs=1e-15)
    # cut 2.5: adjusted passes papers 1, 2, 3; true 2, 3 -> papers 0, 2, 3 agree
    assert got["accuracy"] == 0.75
    assert got["pass_true"] == np.mean(np.asarray(TRUE) >= 2.5)
    assert "accuracy" not in score_set(ADJ, TRUE)
    # a batch is its rows, each as on its own, to the bit
    rng = np.random.default_rng(1)
    P, T = rng.normal(size=(5, 40)), rng.normal(size=(5, 40))
    batch = score_sets(P, T, cut=0.0)
    for b in range(5):
        assert {k: v[b] for k, v in batch.items()} == score_set(P[b], T[b], cut=0.0)


def test_rater_rmse_by_hand():
    # papers' true scores 2, 3, 1; rater 0 rates papers 0, 1; rater 1 paper 0; rater 2 none;
    # rater 3 papers 1, 2
    r = Ratings(paper=[0, 0, 1, 1, 2], rater=[0, 1, 0, 3, 3], score=[2, 3, 3, 4, 0],
                max_score=4, n_papers=3, n_raters=4)
    adj = np.array([2.5, 3.0, 2.0, 4.0, 0.0])
    out = rater_rmse(r, adj, np.array([2.0, 3.0, 1.0]))
    # rater 0: (.5, -1) -> sqrt(1.25/2); rater 1: 1; rater 3: (1, -1) -> 1
    assert out[0] == pytest.approx(math.sqrt(0.625))
    assert out[1] == 1.0 and out[3] == 1.0
    assert math.isnan(out[2])
    with pytest.raises(ValueError):
        rater_rmse(r, adj[:4], np.array([2.0, 3.0, 1.0]))


def test_fisher_z_mean():
    # atanh .5 = .549306, atanh .8 = 1.098612 -> mean .823959 -> tanh .677219
    assert fisher_z_mean([0.5, 0.8]) == pytest.approx(0.677219, abs=1e-6)
    # weights 3:1 -> (3 * .549306 + 1.098612) / 4 = .686633 -> .595791
    assert fisher_z_mean([0.5, 0.8], weights=[3, 1]) == pytest.approx(
        math.tanh((3 * math.atanh(0.5) + math.atanh(0.8)) / 4), abs=1e-15)
    assert fisher_z_mean([0.5, np.nan, 0.8]) == pytest.approx(0.677219, abs=1e-6)
    assert fisher_z_mean([0.5, 0.8]) > np.mean([0.5, 0.8])  # not the plain mean .65
    assert fisher_z_mean([0.3, -0.3]) == pytest.approx(0.0, abs=1e-15)
    assert fisher_z_mean([1.0, 0.5]) == 1.0
    assert math.isnan(fisher_z_mean([np.nan]))


@pytest.mark.parametrize("x,digits,expect", [
    (2.675, 2, 2.68),     # float 2.67499999..., Python's round gives 2.67
    (1.005, 2, 1.01),
    (0.125, 2, 0.13),     # exact binary tie: half up, not to even
    (0.5949, 3, 0.595),
    (2.3846, 3, 2.385),
    (-1.005, 2, -1.01),   # ties away from zero
    (0.6449, 2, 0.64),
])
def test_round_half_up(x, digits, expect):
    assert round_half_up(x, digits) == expect


def test_round_half_up_arrays_and_nan():
    out = round_half_up(np.array([[2.675, np.nan], [np.inf, 0.004999]]), 2)
    assert out.shape == (2, 2)
    assert out[0, 0] == 2.68 and math.isnan(out[0, 1]) and out[1, 0] == np.inf and out[1, 1] == 0.0


@pytest.mark.parametrize("x,expect", [
    (2.3846, 2.39),   # the README's example: 2.3846 -> 2.385 -> 2.39
    (2.3844, 2.38),
    (0.5945, 0.60),   # 0.5945 -> 0.595 (half up) -> 0.60
    (0.5944, 0.59),
    (0.594, 0.59),    # set 0151's NO RMSE re-run value stays 0.59 (published 0.60)
    (1.0, 1.0),
])
def test_table_round(x, expect):
    assert table_round(x) == expect


def test_table_round_differs_from_single_rounding():
    assert round_half_up(2.3846, 2) == 2.38 and table_round(2.3846) == 2.39
    np.testing.assert_array_equal(table_round(np.array([2.3846, 0.5945, 0.594])), [2.39, 0.6, 0.59])


def test_pass_fail_and_agreement():
    assert PASS_CUT == 3.25
    scores = np.array([3.25, 3.2499, 3.5, 2.0, 4.0])
    assert passes(scores).tolist() == [True, False, True, False, True]
    true = np.array([3.5, 3.0, 3.0, 3.3, 4.0])
    # agree on papers 0, 1, 4; disagree on 2 (adjusted passes) and 3 (true passes)
    assert score_set(scores, true, cut=PASS_CUT)["accuracy"] == 0.6
    # cut 2.5: adjusted fail only paper 3, true pass all -> 4 of 5 agree
    assert score_set(scores, true, cut=2.5)["accuracy"] == 0.8


def test_a_score_at_the_cut_up_to_rounding_passes():
    from ratercal_cli.criteria import passes

    # (3 + 3.5) / 2 computed the long way round can land a bit below 3.25
    almost = 3.25 - 4e-16
    assert passes([almost, 3.25, 3.2499, np.nan]).tolist() == [True, True, False, False]
