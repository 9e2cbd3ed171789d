"""Most papers read once, a sample read again by another rater: the advice that holds on the truth.

A researcher tester's files of this design (schools each read by their own rater, 15% of papers read
again by another; the raters no different at all) got the study's TMN, extrapolated from its cells of
one reading, whose papers go to raters at random: it took a weak school's papers for a severe rater's,
1.418 RMSE where leaving the scores alone gave 1.262, on 9 of 24 such files.  The file's few papers read
twice could not show the confound (the assignment test's p 0.23).  Now the links' say (the papers read
twice, the file's only measure of severity whatever the assignment) decides there as for clustered
raters, and the pick is at the shrunk level, which the papers read twice make possible.

The data here are of a generator of this file's own: a graded response of each rater (its own slope and
severity on a latent score, rounded into 1-6), a model no method assumes; the truth each paper's
expected score from the mean rater."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr

from ratercal_cli.practice.adjust import adjust
from ratercal_cli.practice.check import check
from ratercal_cli.ratings import Ratings

LOW, HIGH, NOISE = 1, 6, 0.7


def _expected(latent):
    """E[score] of a latent score plus N(0, NOISE^2) noise rounded into LOW..HIGH."""
    k = np.arange(LOW, HIGH + 1)
    upper = np.where(k == HIGH, np.inf, k + 0.5)
    lower = np.where(k == LOW, -np.inf, k - 0.5)
    z = latent[:, None]
    p = ndtr((upper - z) / NOISE) - ndtr((lower - z) / NOISE)
    return p @ k


def _file(seed, schools: bool, P=400, J=8, share=0.15):
    """Papers of J schools (each read first by its own rater, ``schools``) or read first by a rater at random,
    a ``share`` of them read again by another rater at random; (ratings, truth)."""
    rng = np.random.default_rng(seed)
    home = rng.integers(0, J, P)
    mu = rng.normal(0, 1.5, J) if schools else np.zeros(J)
    theta = rng.normal(0, 1, P) + mu[home]
    slope = rng.uniform(0.7, 1.4, J)
    severity = np.zeros(J) if schools else rng.normal(0, 0.5, J)
    first = home if schools else rng.integers(0, J, P)
    return _read(rng, theta, first, J, share, slope, severity)


def _read(rng, theta, first, J, share, slope, severity):
    """Each paper read by its ``first`` rater, a ``share`` of them again by another at random, each rating the
    rater's graded response (``slope``, ``severity`` on the latent score, rounded into LOW..HIGH); (ratings, truth:
    each paper's expected score from the mean rater)."""
    P = theta.size
    paper, rater = [], []
    for p in range(P):
        paper.append(p)
        rater.append(int(first[p]))
        if rng.random() < share:
            paper.append(p)
            rater.append(int(rng.choice([j for j in range(J) if j != first[p]])))
    paper, rater = np.array(paper), np.array(rater)
    latent = 3.5 + 1.1 * slope[rater] * theta[paper] - severity[rater] + rng.normal(0, NOISE, paper.size)
    score = np.clip(np.rint(latent), LOW, HIGH).astype(np.int64) - LOW
    return Ratings(paper, rater, score, HIGH - LOW, P, J), _expected(3.5 + 1.1 * theta) - LOW


def _rmse(res, truth, code):
    return float(np.sqrt(np.mean((np.asarray(res.paper_scores(code)) - truth) ** 2)))


@pytest.mark.parametrize("schools, seed", [(True, 1), (True, 2), (True, 3), (False, 4), (False, 5)])
def test_the_recommendation_is_nearer_the_truth_than_leaving_the_scores_alone(schools, seed):
    ratings, truth = _file(seed, schools)
    decision = check(ratings).report().decision
    rec = adjust(ratings, "recommended")
    assert rec.groups[0].recommended == decision.label
    no = _rmse(adjust(ratings, "NO"), truth, "NO")
    got = _rmse(rec, truth, "recommended")
    assert got < no, (decision.label, got, no)
    # a paper read once is drawn toward the mean by its reliability, which the papers read twice give
    assert decision.shrinkage == "kelley"
    if schools:   # the raters do not differ: the links (confound found or not) find nothing to adjust
        assert decision.label == "NO (shrunk)" and decision.source == "the links"


def test_shrinking_a_file_measures_its_raters_on_the_papers_they_share():
    """Kelley's error variance of one rating is the residual of the additive fit, the raters' effects measured on
    the papers they share: centred by their raw means (each a school's mean here), the second readings' spread
    took in the schools' differences, and NO shrunk drew every paper 65% of the way to the mean (1.119 RMSE
    where unshrunk 0.671, seed 1)."""
    from ratercal_cli.methods.shrinkage import kelley

    ratings, truth = _file(1, True)
    raw = np.asarray(adjust(ratings, "NO").paper_scores("NO"))
    shrunk, rho = kelley(raw, ratings, "additive")
    once = np.bincount(ratings.paper, minlength=ratings.n_papers) == 1
    best = np.cov(raw, truth)[0, 1] / raw.var(ddof=1)   # (the oracle's linear factor)
    assert abs(float(np.mean(rho[once])) - best) < 0.1, (np.mean(rho[once]), best)
    assert np.sqrt(np.mean((shrunk - truth) ** 2)) < np.sqrt(np.mean((raw - truth) ** 2))


def test_the_links_say_on_a_sample_read_twice_is_said_in_check():
    ratings, _ = _file(3, False)   # (papers at random, 15% read twice: no confound found, the links not enough)
    decision = check(ratings).report().decision
    assert decision.label == "NO (shrunk)" and decision.source == "the links"
    assert "the papers read twice are too few to compare the raters" in decision.short
    text = "\n".join(decision.reasons)
    assert "the links' say:" in text and "the papers read twice leave" in text
    assert "more papers read twice would show by how much" in text and "clusters" not in text


def test_on_a_complete_panel_the_additive_fit_centres_as_the_raters_means_do():
    """Every rater reads every paper: a rater's mean is the grand mean plus its effect, so both centrings give
    the same error variance and the same shrunk scores."""
    from ratercal_cli.methods.shrinkage import kelley, linear_eb

    rng = np.random.default_rng(7)
    P, J = 50, 4
    paper, rater = np.repeat(np.arange(P), J), np.tile(np.arange(J), P)
    score = np.clip(np.rint(2.5 + rng.normal(0, 1, P)[paper] + rng.normal(0, 0.5, J)[rater]
                            + rng.normal(0, 0.6, P * J)), 0, 5).astype(np.int64)
    ratings = Ratings(paper, rater, score, 5, P, J)
    x = np.bincount(paper, weights=score) / J
    for fn in (kelley, linear_eb):
        np.testing.assert_allclose(fn(x, ratings, "additive")[0], fn(x, ratings, "means")[0], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="centring must be one of means, additive"):
        kelley(x, ratings, "medians")


def test_adjusting_a_file_of_no_paper_read_twice_says_what_it_assumed():
    """Every paper read once: MN and TLI moved papers by their raters' score distributions with no word (a tester's
    file). adjust now says those are the raters' severity only if papers went to raters at random."""
    rng = np.random.default_rng(3)
    P, J = 240, 6
    ratings = Ratings(np.arange(P), rng.integers(0, J, P), rng.integers(0, 6, P), 5, P, J)
    res = adjust(ratings, ["NO", "MN", "TLI"])
    said = [w for w in res.groups[0].warnings if "no paper was read twice" in w]
    assert len(said) == 1 and said[0].startswith("no paper was read twice: MN, TLI compared the raters")
    assert not any("no paper was read twice" in w for w in adjust(ratings, "NO").groups[0].warnings)
    twice, _ = _file(4, False)
    assert not any("no paper was read twice" in w for w in adjust(twice, "TLI").groups[0].warnings)


def _two_schools_each(seed, P=500, J=6, S=12, share=0.2):
    """A verifier's design: S schools of different means, each read first by one of J raters (each rater two
    schools), a ``share`` read again by another rater; the raters differ in severity (SD 0.5 on the latent score)."""
    rng = np.random.default_rng(seed)
    school = rng.integers(0, S, P)
    mu = rng.normal(0, 1.2, S)
    theta = rng.normal(0, 1, P) + mu[school]
    severity = rng.normal(0, 0.5, J)
    return _read(rng, theta, school % J, J, share, np.ones(J), severity)


@pytest.mark.parametrize("seed", [2, 3, 8])   # (TMN shrunk 0.794, 0.748, 1.052 where NO 0.652, 0.724, 0.999)
def test_where_the_links_let_it_adjust_it_moves_papers_by_the_raters_effects_on_shared_papers(seed):
    """Where the papers read twice place the raters well enough (the links' say), the pick was the study's TMN, which
    compares raters by their scores alone: with each rater reading two schools of different means it took a weaker
    mix for severity (a verifier: TMN shrunk 1.193 RMSE where NO 1.101). It is TLS now, shrunk: the raters' least-
    squares effects on the shared papers, what the links' gain measures."""
    ratings, truth = _two_schools_each(seed)
    decision = check(ratings).report().decision
    rec = adjust(ratings, "recommended")
    no = _rmse(adjust(ratings, "NO"), truth, "NO")
    got = _rmse(rec, truth, "recommended")
    assert got < no, (decision.label, got, no)
    assert decision.label == "TLS (shrunk)" and decision.source == "the links"
    assert "the raters placed on the papers read twice" in decision.short


def test_the_additive_fit_of_a_design_is_made_once_and_not_changed_by_its_callers():
    """A simulation's replications share their file's design and every method's shrinkage asks for its additive fit,
    whose eigendecomposition is raters^3 (1.8 s at 2,000 raters): made once a design, its arrays read-only."""
    from ratercal_cli.methods import additive

    ratings, _ = _file(1, False)
    paper, rater = np.asarray(ratings.paper, dtype=np.int64), np.asarray(ratings.rater, dtype=np.int64)
    x = np.asarray(ratings.score, dtype=np.float64)
    a = additive.two_way(paper, rater, x, ratings.n_papers, ratings.n_raters)
    b = additive.two_way(paper, rater, x[::-1].copy(), ratings.n_papers, ratings.n_raters)   # (other scores)
    assert a.Lp is b.Lp and not np.array_equal(a.effect, b.effect)
    with pytest.raises(ValueError):
        a.Lp[0, 0] = 1.0
    fresh = additive.two_way(paper, rater[::-1].copy(), x, ratings.n_papers, ratings.n_raters)   # (another design)
    assert fresh.Lp is not a.Lp
