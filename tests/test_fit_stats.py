"""Infit/outfit per rater (ratercal_cli/fit_stats.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ratercal_cli.fit_stats import fit_rows, rater_fit


def test_hand_computed_dichotomous_example():
    """Rater 0: P(1) = .5 scored 1, P(1) = .2 scored 0.  Rater 1: P(1) = .9 scored 0.

    Rater 0: E = .5, W = .25, z2 = 1;  E = .2, W = .16, y2 = .04, z2 = .25.
      outfit = 1.25 / 2 = .625, infit = .29 / .41.
      C = .0625 and .8 * .2**4 + .2 * .8**4 = .0832;
      q_out^2 = (.0625/.0625 + .0832/.0256) / 4 - 1/2 = .5625, q_in^2 = (.0625-.0625 + .0832-.0256) / .41**2.
    """
    p = np.array([[0.5, 0.5], [0.8, 0.2], [0.1, 0.9]])
    fit = rater_fit(p, np.array([1, 0, 0]), np.array([0, 0, 1]), 3)
    assert fit.outfit[0] == pytest.approx(0.625)
    assert fit.infit[0] == pytest.approx(0.29 / 0.41)
    q = 0.75
    assert fit.outfit_z[0] == pytest.approx((0.625 ** (1 / 3) - 1) * 3 / q + q / 3)
    qi = np.sqrt(0.0576) / 0.41
    assert fit.infit_z[0] == pytest.approx(((0.29 / 0.41) ** (1 / 3) - 1) * 3 / qi + qi / 3)
    # rater 1: y = -.9, W = .09: outfit = infit = .81/.09 = 9
    assert fit.outfit[1] == pytest.approx(9.0) and fit.infit[1] == pytest.approx(9.0)
    assert np.isnan(fit.outfit[2]) and fit.n.tolist() == [2, 1, 0]
    rows = fit_rows(fit, ["A", "B", "C"])
    assert [r["rater"] for r in rows] == ["A", "B"] and rows[1]["flag"] == "noisy"


def test_data_from_the_model_fit():
    """Scores drawn from the probabilities themselves: mean squares near 1, z near 0."""
    rng = np.random.default_rng(5)
    n = 30000
    logits = rng.normal(size=(n, 5)) * 1.5
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    score = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    rater = rng.integers(0, 3, n)
    fit = rater_fit(p, score, rater, 3)
    np.testing.assert_allclose(fit.outfit, 1.0, atol=0.04)
    np.testing.assert_allclose(fit.infit, 1.0, atol=0.03)
    assert np.all(np.abs(fit.infit_z) < 3.5)
    # a muted rater (always the expected category's nearest score) fits too well
    muted = rater_fit(p, np.rint(p @ np.arange(5)).astype(int), rater, 3)
    assert np.all(muted.outfit < 0.5)


def test_mask_leaves_ratings_out():
    p = np.array([[0.5, 0.5], [0.8, 0.2], [0.5, 0.5]])
    fit = rater_fit(p, np.array([1, 0, 0]), np.array([0, 0, 0]), 1, mask=np.array([True, True, False]))
    assert fit.n[0] == 2 and fit.outfit[0] == pytest.approx(0.625)


def test_rasch_fit_reports_refusals():
    from ratercal_cli.practice.diagnostics import rasch_fit
    from ratercal_cli.ratings import Ratings

    one = Ratings(np.arange(4), np.array([0, 1, 0, 1]), np.array([0, 1, 2, 1]), 2, 4, 2)
    rows, notes = rasch_fit(one)
    assert rows == [] and notes == ["needs two or more raters per paper"]
    # two raters on two papers, every score extreme or unlinked: the CML fit refuses, with its reason
    two = Ratings(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([0, 0, 2, 2]), 2, 2, 2)
    rows, notes = rasch_fit(two)
    assert rows == [] and notes[0].startswith("CML")
