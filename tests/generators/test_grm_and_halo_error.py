"""Generators from models none of the methods assume (issue 29): the graded response model with
rater slopes, and halo whose impression carries a rater-specific error.  Each recovers its
parameters from a large draw, by maximum likelihood written here from the models' definitions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from ratercal_cli.config import parse_config
from ratercal_cli.design import Cell
from ratercal_cli.errors import InputError
from ratercal_cli.generators.modern import generate_set
from ratercal_cli.models import grm
from ratercal_cli.rater_effects import NEUTRAL, RaterEffects, RubricDesign

#: three raters' thresholds on a 0-4 scale (lenient, average, severe) and slopes
THRESHOLDS = np.array([[-3.0, -0.5, 2.0, 4.5], [-2.0, 0.5, 3.0, 5.5], [-1.0, 1.5, 4.0, 6.5]])
SLOPES = [1.3, 0.7, 1.0]
GRM = ("generator: grm\nvariant: corrected\nmethods: [NO, TLI]\n"
       "raters: {steps: " + str(THRESHOLDS.tolist()) + ", effects: {slope: " + str(SLOPES) + "}}\n"
       "cells: [{raters_per_paper: [3], papers: [PAPERS], max_score: [4]}]\nseed: 11\n")


def _logistic(z):
    return 1.0 / (1.0 + np.exp(-z))


def test_grm_probabilities_are_samejimas():
    """P(x) = P(X >= x) - P(X >= x+1) with P(X >= k) the logistic of theta - b_k (slope folded in),
    summing to 1, and the expected score the sum of the cumulative probabilities."""
    theta = np.array([-2.0, 0.3, 4.0])
    b = np.array([-1.0, 0.0, 2.5])
    p = grm.category_probabilities(theta, b[None, :])
    cum = _logistic(theta[:, None] - b[None, :])
    want = np.column_stack([1 - cum[:, 0], cum[:, 0] - cum[:, 1], cum[:, 1] - cum[:, 2], cum[:, 2]])
    np.testing.assert_allclose(p, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(grm.expected_score(theta, b[None, :]), cum.sum(axis=1), rtol=1e-12)


def _grm_negloglik(params, theta, x, m):
    a, b = np.exp(params[0]), np.cumsum(np.r_[params[1], np.exp(params[2:])])   # ordered thresholds
    cum = _logistic(a * (theta[:, None] - b[None, :]))
    p = np.column_stack([np.ones_like(theta), cum]) - np.column_stack([cum, np.zeros_like(theta)])
    return -np.sum(np.log(np.maximum(p[np.arange(x.size), x], 1e-300)))


@pytest.mark.slow  # ~1 s: make test-slow (CI) runs it
def test_grm_generator_recovers_its_slopes_and_thresholds():
    """20,000 papers read by all three raters: each rater's slope and thresholds, fitted by maximum
    likelihood given the papers' qualities, are the config's (slopes within 0.05, thresholds within
    0.12 logits, about 3 standard errors); the true score is the mean over the raters of the GRM's
    expected score."""
    cfg = parse_config(GRM.replace("PAPERS", "20000"), "g.yaml")
    g = generate_set(cfg.cells[0], "grm", 11, 0, cfg.steps[4], None, "model", cfg.effects)
    o = g.observed
    for j in range(3):
        mine = o.rater == j
        theta, x = g.quality[o.paper[mine]], o.score[mine]
        d = np.diff(THRESHOLDS[j])
        start = np.r_[0.0, THRESHOLDS[j][0] - 0.5, np.log(d)]
        fit = minimize(_grm_negloglik, start, args=(theta, x, 4), method="BFGS")
        a, b = np.exp(fit.x[0]), np.cumsum(np.r_[fit.x[1], np.exp(fit.x[2:])])
        assert a == pytest.approx(SLOPES[j], abs=0.05), j
        np.testing.assert_allclose(b, THRESHOLDS[j], atol=0.12, err_msg=str(j))
    a = np.asarray(SLOPES)
    want = _logistic(a[None, :, None] * (g.quality[:, None, None] - THRESHOLDS[None])).sum(axis=2).mean(axis=1)
    np.testing.assert_allclose(g.true_score, want, rtol=1e-12)


def test_grm_is_not_the_pcm():
    """The same thresholds give other category probabilities under the GRM than under the PCM (up to
    0.078 apart over qualities -4..8 for rater 2's thresholds): the data differ from what the PCM,
    MML and the EAP assume even before the slopes, which no method in the study models."""
    from ratercal_cli.models import pcm

    t = np.linspace(-4, 8, 49)
    gap = np.abs(grm.category_probabilities(t, THRESHOLDS[1][None]) - pcm.category_probabilities(t, THRESHOLDS[1][None]))
    assert gap.max() == pytest.approx(0.0784, abs=1e-4)


def test_grm_config_refuses_unordered_thresholds_and_takes_effects():
    bad = GRM.replace("PAPERS", "100").replace("[-2.0, 0.5, 3.0, 5.5]", "[-2.0, 3.0, 0.5, 5.5]")
    with pytest.raises(InputError, match=r"g.yaml:4: raters\.steps\[1\]: rater 2's thresholds are not increasing"):
        parse_config(bad, "g.yaml")
    cfg = parse_config(GRM.replace("PAPERS", "100"), "g.yaml")
    assert cfg.generator == "grm" and cfg.effects.slope == tuple(SLOPES)


# -- halo with an error in the impression -------------------------------------------------------

def _halo_set(halo, halo_error, papers=3000, count=6, seed=5):
    eff = RaterEffects(**{k: (v,) * 9 for k, v in NEUTRAL.items()}, halo=tuple(halo), halo_error=tuple(halo_error))
    rubric = RubricDesign(count, 0.5, tuple(np.linspace(-0.5, 0.5, count)))
    from ratercal_cli.design import table3_steps

    steps = table3_steps(5)
    return generate_set(Cell("2", papers, 5, "normal"), "pcm", seed, 0, steps, None, "model", eff, rubric), rubric, steps


@pytest.mark.slow  # ~1 s: make test-slow (CI) runs it
def test_halo_error_is_recovered_per_rater():
    """Raters with full halo (h = 1) and impression errors sigma 0, 0.8 and 1.6 logits (three of
    each): every criterion of a reading is scored at theta_i. + e_ij, so each rater's sigma is found
    again by marginal maximum likelihood over e (Gauss-Hermite quadrature, a grid of sigma), within
    0.25; without halo_error (sigma = 0) the rubric mean of a reading's qualities is the paper's,
    with it off by h e."""
    from ratercal_cli.models.pcm import category_probabilities

    sigma = [0.0, 0.8, 1.6] * 3
    g, rubric, steps = _halo_set([1.0] * 9, sigma)
    o = g.observed
    C = rubric.count
    reading_rater = o.rater.reshape(-1, C)[:, 0]
    reading_paper = o.paper.reshape(-1, C)[:, 0]
    x = o.score.reshape(-1, C)
    z, w = np.polynomial.hermite_e.hermegauss(21)
    w = w / w.sum()
    grid = np.arange(0.0, 2.51, 0.1)
    for j in range(9):
        mine = reading_rater == j
        theta = g.quality[reading_paper[mine]]                                  # theta_i., the overall
        delta = steps[j][None, :] + np.asarray(rubric.difficulty)[:, None]        # (C, M)
        ll = []
        for s in grid:
            q = theta[:, None] + s * z[None, :]                                 # (readings, nodes)
            p = category_probabilities(q[:, :, None], delta[None, None])        # (readings, nodes, C, M+1)
            lik = np.take_along_axis(p, x[mine][:, None, :, None], axis=3)[..., 0].prod(axis=2)
            ll.append(np.log(lik @ w).sum())
        assert grid[int(np.argmax(ll))] == pytest.approx(sigma[j], abs=0.25), (j, grid[int(np.argmax(ll))])


def test_halo_error_draws_its_own_stream_and_moves_the_rubric_mean():
    """halo_error leaves every other draw as it was (its own SeedSequence): with sigma 0 the data are
    those of halo alone; the impression errors have the rater's SD; the keys' errors."""
    from ratercal_cli.rater_effects import halo_qualities

    a, _, _ = _halo_set([0.5] * 9, [0.0] * 9, papers=200)
    b, _, _ = _halo_set([0.5] * 9, (), papers=200)
    assert np.array_equal(a.observed.score, b.observed.score)
    eff = RaterEffects(**{k: (v,) * 9 for k, v in NEUTRAL.items()}, halo=(1.0,) * 9, halo_error=(0.5,) * 4 + (2.0,) * 5)
    raters = np.tile(np.arange(9), (20000, 1))
    e = eff.impression_error(np.random.SeedSequence(1, spawn_key=(1, 2, 1)), raters)
    np.testing.assert_allclose(e.std(axis=0), [0.5] * 4 + [2.0] * 5, rtol=0.03)
    theta_c = np.random.default_rng(0).normal(size=(20000, 4))
    q = halo_qualities(theta_c, raters[:, :2], np.full(9, 0.6), e[:, :2])
    np.testing.assert_allclose(q.mean(axis=2) - theta_c.mean(axis=1)[:, None], 0.6 * e[:, :2], atol=1e-12)
    base = ("generator: pcm\nvariant: corrected\nmethods: [NO]\ncriteria: {count: 3}\n"
            "raters: {steps: table3, effects: {EFFECTS}}\ncells: [{raters_per_paper: [2], papers: [100], max_score: [5]}]\n")
    with pytest.raises(InputError, match="halo_error .*give the raters' halo too"):
        parse_config(base.replace("EFFECTS", "halo_error: 0.5"), "h.yaml")
    with pytest.raises(InputError, match="halo_error.*expected a number from 0"):
        parse_config(base.replace("EFFECTS", "halo: 0.5, halo_error: -1"), "h.yaml")
    cfg = parse_config(base.replace("EFFECTS", "halo: 0.5, halo_error: 0.7"), "h.yaml")
    assert cfg.effects.to_dict()["halo_error"] == [0.7] * 9
