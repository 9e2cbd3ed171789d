"""Paper standard errors after discrepancies are resolved, against the truth of ratings drawn from a known model."""

from __future__ import annotations

import numpy as np
from ratercal_cli.practice.adjust import adjust
from ratercal_cli.practice.ratings_file import read_ratings_table

STEPS = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])   # a partial credit model on 1-6


def _probabilities(theta):
    k = np.arange(6)
    lp = k * theta - np.r_[0.0, np.cumsum(STEPS)]
    p = np.exp(lp - lp.max())
    return p / p.sum()


def _write(path, seed=1, papers=400, raters=8):
    """Two readings a paper by raters drawn at random, a third by another where the two are more than a point
    apart; each paper's true score the model's expected score at the raters' mean severity."""
    rng = np.random.default_rng(seed)
    sev, theta = rng.normal(0, 0.5, raters), rng.normal(0, 1.2, papers)
    lines, truth = ["paper,rater,score,reading"], np.empty(papers)
    for p in range(papers):
        who = rng.choice(raters, 3, replace=False)
        s = [int(rng.choice(6, p=_probabilities(theta[p] - sev[r]))) + 1 for r in who]
        n = 3 if abs(s[0] - s[1]) > 1 else 2
        lines += [f"P{p:03d},R{who[k]},{s[k]},{k + 1}" for k in range(n)]
        truth[p] = _probabilities(theta[p] - sev.mean()) @ np.arange(1, 7)
    path.write_text("\n".join(lines) + "\n")
    return truth


def test_resolving_discrepancies_is_said_to_understate_the_standard_errors(tmp_path):
    path = tmp_path / "double.csv"
    truth = _write(path)
    coverage, rmse = {}, {}
    for resolve in (False, True):
        ratings = read_ratings_table(path, scale=(1, 6), order_col="reading", resolve_discrepancies=resolve).ratings
        assert ratings.paper_ids == tuple(f"P{p:03d}" for p in range(400))
        res = adjust(ratings, ["MML", "TLI"], bootstrap=100, seed=3)
        for code in ("MML", "TLI"):
            err = res.paper_scores(code) - truth
            se = res.groups[0].uncertainty[code].se
            coverage[code, resolve] = float(np.mean(np.abs(err) < 1.645 * se))
            rmse[code, resolve] = float(np.sqrt(np.mean(err ** 2)))
        said = [w for w in res.warnings if "discrepancies resolved" in w]
        if resolve:
            assert said == [f"{path}: MML, TLI: discrepancies resolved (resolve_discrepancies=True): the pairs kept "
                            "agree by construction, so the raters look more consistent than they are and the "
                            "standard errors, pass probabilities and uncertain students understate the uncertainty "
                            "(in simulations their 90% intervals covered the truth as little as half the time); adjusting "
                            "every reading keeps them honest, and its scores nearer the truth"]
        else:
            assert said == []
    for code in ("MML", "TLI"):   # what the warning says, on this file
        assert 0.83 <= coverage[code, False] <= 0.96, coverage
        assert coverage[code, True] < 0.68, coverage
        assert rmse[code, True] > rmse[code, False] + 0.05, rmse


def test_a_group_with_nothing_resolved_is_not_warned(tmp_path):
    """A verifying helper's grade B, two readings a paper within a point of each other, was warned that its
    discrepancies were resolved, since grade A's were."""
    path = tmp_path / "double.csv"
    _write(path, papers=120)
    lines = path.read_text().splitlines()
    lines = [lines[0] + ",grade"] + [line + ",A" for line in lines[1:]]
    lines += [f"Q{p:03d},R{(p + k) % 8},{1 + p % 6},{k + 1},B" for p in range(60) for k in range(2)]   # (they agree)
    path.write_text("\n".join(lines) + "\n")
    ratings = read_ratings_table(path, scale=(1, 6), order_col="reading", group_col="grade",
                                 resolve_discrepancies=True).ratings
    res = adjust(ratings, "MML")
    said = [w for w in res.warnings if "discrepancies resolved" in w]
    assert len(said) == 1 and said[0].startswith(f"{path}: grade=A: MML: discrepancies resolved")


def test_unshrunk_model_scores_carry_their_own_standard_errors(tmp_path):
    """adjust(..., shrinkage="none") put MML/MFRM's scores at the WLE but kept the posterior's (EAP's) standard
    errors and pass probabilities: a researcher's paper passed at 3.51 with P(pass) = 0.078.  At the WLE the pass
    probability is P(fair(theta) >= cut) under the WLE's normal, at least a half exactly where the score passes."""
    path = tmp_path / "double.csv"
    truth = _write(path, papers=300)
    ratings = read_ratings_table(path, scale=(1, 6), order_col="reading").ratings
    cut = 3.5
    for code in ("MML", "MFRM"):
        own = adjust(ratings, code, cut=cut)
        none = adjust(ratings, code, cut=cut, shrinkage="none")
        u_own, u_none = own.groups[0].uncertainty[code], none.groups[0].uncertainty[code]
        score = none.paper_scores(code)
        assert u_none.source == "WLE" and u_own.source == "posterior"
        assert np.array_equal(score >= cut, u_none.pass_prob >= 0.5)
        assert not np.array_equal(score >= cut, u_own.pass_prob >= 0.5)   # (what it was: the EAP's, not the score's)
        assert np.mean(u_none.se) > 1.1 * np.mean(u_own.se)   # (the WLE's wider than the posterior's)
        covered = np.abs(score - truth) < 1.645 * u_none.se
        assert 0.85 <= np.mean(covered) <= 0.97, np.mean(covered)


def test_linear_eb_scores_have_their_level_probability_about_themselves(tmp_path):
    """shrinkage="linear_eb": MML's scores were the linear EB's but their interval and pass probability the
    posterior's (EAP's): three papers sat in a level with p_level under 0.5 (a helper's P0007, 3.5031, pass, 0.4954)."""
    path = tmp_path / "double.csv"
    _write(path, papers=300)
    ratings = read_ratings_table(path, scale=(1, 6), order_col="reading").ratings
    res = adjust(ratings, "MML", cut=3.5, shrinkage="linear_eb")
    u = res.groups[0].uncertainty["MML"]
    score = res.paper_scores("MML")
    assert np.array_equal(score >= 3.5, u.pass_prob >= 0.5)
    assert u.source == "posterior" and np.allclose(u.se, adjust(ratings, "MML", cut=3.5).groups[0].uncertainty["MML"].se)
