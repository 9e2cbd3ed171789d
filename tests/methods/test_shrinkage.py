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
