"""The modern generators: the models they claim, seeded per set and replication."""

import numpy as np
import pytest

from ratercal_cli.design import Cell, table3_steps
from ratercal_cli.generators import modern
from ratercal_cli.models import pcm, sequential

STEPS5 = table3_steps(5)


def test_same_seed_same_set_different_replication_differs():
    c = Cell("2", 200, 5, "normal")
    a = modern.generate_set(c, "pcm", 11, 3, steps=STEPS5)
    b = modern.generate_set(c, "pcm", 11, 3, steps=STEPS5)
    d = modern.generate_set(c, "pcm", 11, 4, steps=STEPS5)
    assert np.array_equal(a.observed.score, b.observed.score) and np.array_equal(a.quality, b.quality)
    assert not np.array_equal(a.observed.score, d.observed.score)


@pytest.mark.parametrize("generator, model", [("pcm", pcm), ("sequential", sequential)])
def test_score_frequencies_follow_the_model(generator, model):
    # one rater, one quality: observed frequencies against the model's probabilities
    rng = np.random.default_rng(5)
    theta = np.full(200_000, 0.7)
    x = model.sample_scores(rng, theta, STEPS5[4])
    p = model.category_probabilities(0.7, STEPS5[4])
    freq = np.bincount(x, minlength=6) / x.size
    se = np.sqrt(p * (1 - p) / x.size)
    assert np.all(np.abs(freq - p) < 5 * se)


def test_sequential_is_not_the_pcm():
    # the mismatch the 1990 study had: same steps, different expected scores
    assert abs(sequential.expected_score(0.0, STEPS5[4]) - pcm.expected_score(0.0, STEPS5[4])) > 0.1


def test_pcm_true_score_is_the_expected_score_of_the_generator():
    c = Cell("3", 400, 5, "normal")
    g = modern.generate_set(c, "pcm", 3, 0, steps=STEPS5)
    expected = pcm.expected_score(g.quality[:, None], STEPS5[None])
    assert np.allclose(g.true_score, expected.mean(axis=1))
    # each rating's conditional mean matches its rater's expected score, on average
    o = g.observed
    resid = o.score - expected[o.paper, o.rater]
    assert abs(resid.mean()) < 4 * resid.std() / np.sqrt(resid.size)


def test_linear_model_of_table15():
    lin = {"true_mean": 3.5, "true_sd": 1.0, "effects": [.5] * 3 + [0] * 3 + [-.5] * 3,
           "error_sd": [1.0, .7, .4] * 3}
    c = Cell("2", 20_000, 5, "normal")
    g = modern.generate_set(c, "linear", 1, 0, linear=lin)
    assert abs(g.true_score.mean() - 3.5) < 0.03 and abs(g.true_score.std() - 1.0) < 0.02
    o = g.observed
    assert o.score.min() >= 0 and o.score.max() <= 5
    # lenient raters (effects +.5) score higher than stringent (-.5) by about 1 point (less after clipping)
    gap = o.score[o.rater < 3].mean() - o.score[o.rater >= 6].mean()
    assert 0.8 < gap < 1.05


def test_two_plus_design_in_modern_generator():
    c = Cell("2+", 3000, 5, "normal")
    o = modern.generate_set(c, "sequential", 2, 0, steps=STEPS5).observed
    kept_per_paper = np.bincount(o.paper[o.kept], minlength=3000)
    assert np.all(kept_per_paper == 2)
    third = o.order == 3
    assert third.sum() == (np.bincount(o.paper, minlength=3000) == 3).sum() > 0
    # raters of a paper are distinct
    for p in np.flatnonzero(np.bincount(o.paper) == 3)[:50]:
        assert len(set(o.rater[o.paper == p])) == 3
