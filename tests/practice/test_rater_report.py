"""The rater report: severities and S.E.s against psychotools (tests/results/
psychotools_rsm_severity_500x2_0-9.csv, made by tests/results/make_rater_report_references.R),
separation statistics by hand, fit and fair averages through the model interface, a planted
rater x group bias, and the Wright map."""

import csv
import math

import numpy as np
import pytest

from support import RESULTS

from ratercal_cli.methods.quality import category_probabilities, expected_score
from ratercal_cli.practice.rater_report import (
    fit_rater_model,
    format_bias,
    from_estimator,
    rater_group_bias,
    rater_report,
    report_and_model,
    separation,
    wright_map,
)
from ratercal_cli.ratings import Ratings



@pytest.fixture(scope="module")
def data500():
    with open(RESULTS / "cml_500x2_0-9.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return Ratings.from_labels([r["paper"] for r in rows], [int(r["rater"]) for r in rows],
                               [int(r["score"]) for r in rows], 9)


@pytest.fixture(scope="module")
def psychotools():
    with open(RESULTS / "psychotools_rsm_severity_500x2_0-9.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    per = {}
    for r in rows:
        per.setdefault(r["statistic"], {})[r["rater"]] = float(r["value"])
    return per


def test_severity_and_se_match_psychotools(data500, psychotools):
    rep = rater_report(data500)
    assert rep.fitted
    sev = {str(r["rater"]): r for r in rep.raters}
    for j in map(str, range(1, 10)):
        # psychotools' BFGS stops about 1e-5 from the optimum that Newton reaches
        assert sev[j]["measure"] == pytest.approx(psychotools["severity"][j], abs=1e-4)
        assert sev[j]["se"] == pytest.approx(psychotools["se"][j], abs=1e-4)
    s, ref = rep.rater_separation, {k: v["all"] for k, v in psychotools.items() if "all" in v}
    for k in ("rmse", "adj_sd", "separation", "strata", "reliability"):
        assert s[k] == pytest.approx(ref[k], rel=1e-4), k
    assert s["chi2"] == pytest.approx(ref["chi2"], rel=1e-4) and s["chi2_df"] == 8
    assert s["chi2_p"] == pytest.approx(ref["chi2_p"], rel=1e-2)


def test_the_rsm_estimator_gives_psychotools_severities_and_ses(data500, psychotools):
    """make_method("RSM") (the rating scale model by CML) gave its severities without standard errors: its
    results() rows had nan SEs and severity_frame() refused.  Both now carry the conditional information's,
    psychotools' rsmodel to 1e-4 (the rater report's, from the same function)."""
    from ratercal_cli.methods import make_method

    est = make_method("RSM").fit(data500)
    frame = est.severity_frame()
    params = est.results().params.set_index(["facet", "element", "parameter"])
    for j in map(str, range(1, 10)):
        label = int(j)
        assert frame.loc[label, "severity"] == pytest.approx(psychotools["severity"][j], abs=1e-4)
        assert frame.loc[label, "se"] == pytest.approx(psychotools["se"][j], abs=1e-4)
        assert params.loc[("rater", j, "severity"), "se"] == pytest.approx(psychotools["se"][j], abs=1e-4)
    assert make_method("CML").fit(data500).severity_se_ is None   # (the PCM's raters have steps, not a location)


def test_separation_by_hand():
    d, se = np.array([-1.0, 0.0, 2.0]), np.array([0.5, 0.5, 1.0])
    got = separation(d, se)
    var = np.var(d)                        # 14/9
    rmse = math.sqrt((0.25 + 0.25 + 1.0) / 3)
    G = math.sqrt(var - rmse ** 2) / rmse
    assert got["rmse"] == pytest.approx(rmse) and got["separation"] == pytest.approx(G)
    assert got["strata"] == pytest.approx((4 * G + 1) / 3)
    assert got["reliability"] == pytest.approx((var - rmse ** 2) / var)
    w = 1 / se ** 2                        # weighted mean (4*-1 + 0 + 2) / 9 = -2/9
    assert got["chi2"] == pytest.approx(4 * (7 / 9) ** 2 + 4 * (2 / 9) ** 2 + (20 / 9) ** 2)
    assert got["chi2"] == pytest.approx(np.sum(w * (d - np.sum(w * d) / np.sum(w)) ** 2))
    # measurement error larger than the spread: no true variance, separation 0
    assert separation(d, np.full(3, 5.0))["separation"] == 0.0
    assert math.isnan(separation([1.0], [0.1])["separation"])


def test_fit_and_fair_averages_through_the_interface(data500):
    from ratercal_cli.fit_stats import rater_fit

    model = fit_rater_model(data500)
    rep = rater_report(data500, model)
    # infit/outfit from the interface's moments = fit_stats.rater_fit from the probabilities
    p = category_probabilities(model.measure[data500.paper], model.tau[data500.rater])
    ref = rater_fit(p, data500.score, data500.rater, data500.n_raters, mask=model.usable)
    got = {r["rater"]: r for r in rep.raters}
    for j in range(9):
        assert got[j + 1]["infit"] == pytest.approx(ref.infit[j]) and got[j + 1]["outfit_zstd"] == pytest.approx(
            ref.outfit_z[j])
    # a rater's fair average: its expected score at the mean paper measure; severer raters lower
    tb = model.measure[model.measured].mean()
    for j in range(9):
        assert got[j + 1]["fair_average"] == pytest.approx(float(expected_score(tb, model.tau[j])))
    order = sorted(got.values(), key=lambda r: r["measure"])
    assert [r["fair_average"] for r in order] == sorted((r["fair_average"] for r in order), reverse=True)
    assert rep.papers["measured"] + rep.papers["extreme"] == 500
    # papers' fair averages lie on the scale and keep the measures' order
    fa = model.fair_average(np.sort(model.measure))
    assert np.all(np.diff(fa) >= 0) and fa.min() >= 0 and fa.max() <= 9


def test_from_estimator_takes_a_many_facet_model(data500):
    """Any estimator with severity_, severity_se_, tau_, quality_, quality_se_ and fair_scores
    (the MML/MFRM's attributes) gives the same report as the CML wrapper on the same numbers."""
    cml = fit_rater_model(data500)

    class Fitted:
        code = "MFRM"
        severity_, severity_se_, tau_ = cml.severity, cml.severity_se, cml.tau
        quality_, quality_se_ = cml.measure, cml.measure_se
        fair_scores = staticmethod(cml.fair_average)

    a = rater_report(data500, cml)
    b = rater_report(data500, from_estimator(Fitted(), data500))
    assert b.model == "MFRM"
    for ra, rb in zip(a.raters, b.raters):
        assert rb["measure"] == ra["measure"] and rb["se"] == ra["se"]
        assert rb["infit"] == pytest.approx(ra["infit"], rel=1e-12)
    wald = ("wald", "wald_df", "wald_p")   # (the CML's Wald test from its information, which Fitted has not)
    assert {k: v for k, v in b.rater_separation.items() if k not in wald} == \
        {k: v for k, v in a.rater_separation.items() if k not in wald}
    assert np.isnan(b.rater_separation["wald_p"]) and a.rater_separation["wald_p"] < 1e-6
    assert b.papers["measured"] == a.papers["measured"]   # extremes found from tau_ as CML's

    # a model's own per-rating moments replace tau_'s (e.g. with a further facet): doubling every
    # variance and fourth moment halves infit and leaves the severities alone
    class WithMoments(Fitted):
        @staticmethod
        def rating_moments(r):
            E, W, C = cml.moments()
            return E, 2 * W, 4 * C

    c = rater_report(data500, from_estimator(WithMoments(), data500))
    for ra, rc in zip(a.raters, c.raters):
        assert rc["infit"] == pytest.approx(ra["infit"] / 2) and rc["measure"] == ra["measure"]


def test_not_fitted_says_why():
    one = Ratings(np.arange(20), np.arange(20) % 4, np.arange(20) % 6, 5, 20, 4)
    rep = rater_report(one)
    assert not rep.fitted and "two or more raters" in rep.reason
    assert "not available" in rep.format_text()[0]


def _simulate_rsm(rng, n_groups=2, papers=400, raters=6, bias=None):
    """Rating scale model data: 2 of ``raters`` per paper, thresholds kappa, severities beta,
    ``bias[(rater, group)]`` logits added to a rater's severity in one group."""
    kappa = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    beta = np.linspace(-0.8, 0.8, raters)
    groups = []
    for g in range(n_groups):
        theta = rng.normal(0, 1.5, papers)
        paper, rater, score = [], [], []
        for p in range(papers):
            for j in rng.choice(raters, 2, replace=False):
                b = beta[j] + (bias or {}).get((int(j), g), 0.0)
                tau = np.r_[0.0, np.cumsum(b + kappa)]
                pr = category_probabilities(theta[p], tau)
                paper.append(p)
                rater.append(int(j))
                score.append(int(rng.choice(6, p=pr)))
        groups.append((str(g), Ratings(np.array(paper), np.array(rater), np.array(score), 5, papers, raters)))
    return groups


def test_planted_rater_by_group_bias_is_found():
    rng = np.random.default_rng(20261203)
    groups = _simulate_rsm(rng, bias={(0, 1): 1.2})
    out = rater_group_bias(groups, "grade")
    rows = {(r["rater"], r["group"]): r for r in out["rows"]}
    # rater 1 (index 0): 1.2 logits severer in group "1"; relative to that group's 6 raters (centred
    # severities) the gap between its two groups is 1.2 * 5/6 = 1.0, split +-0.5 around its mean
    gap = rows[(1, "1")]["bias"] - rows[(1, "0")]["bias"]
    assert rows[(1, "1")]["bias"] == pytest.approx(-rows[(1, "0")]["bias"])
    assert abs(gap - 1.0) < 2 * 2 * rows[(1, "1")]["se"]
    assert rows[(1, "1")]["p_holm"] < 0.05 and rows[(1, "1")]["t"] > 3
    flagged = {k for k, r in rows.items() if r["p_holm"] < 0.05}
    assert flagged == {(1, "0"), (1, "1")}
    # S.E. of s_1 - mean = half the S.E. of the difference of two independent severities
    assert 0.05 < rows[(1, "1")]["se"] < 0.25
    text = "\n".join(format_bias(out))
    assert "2 of 12 cells significant" in text


def test_no_bias_when_none_is_planted():
    groups = _simulate_rsm(np.random.default_rng(7))
    out = rater_group_bias(groups, "grade")
    assert len(out["rows"]) == 12 and out["significant"] == 0
    assert all(abs(r["t"]) < 3.5 for r in out["rows"])


def test_bias_needs_raters_in_two_groups():
    (_, a), (_, b) = _simulate_rsm(np.random.default_rng(3), papers=60)
    b = Ratings(b.paper, b.rater, b.score, 5, b.n_papers, b.n_raters, rater_ids=tuple(f"X{j}" for j in range(6)))
    out = rater_group_bias([("0", a), ("1", b)], "grade")
    assert not out["fitted"] and "two or more grades" in out["reason"]
    assert "one grade only" in out["notes"][0]


def test_wright_map_is_a_deterministic_png(data500, tmp_path):
    model = fit_rater_model(data500)
    rep = rater_report(data500, model)
    a = wright_map(tmp_path / "a.png", rep, model.measure[model.measured], "t")
    b = wright_map(tmp_path / "b.png", rep, model.measure[model.measured], "t")
    assert a.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and a.read_bytes() == b.read_bytes()


def test_a_wright_map_draws_labels_with_dollar_signs_as_written(tmp_path):
    """A staff tester's rater "Frank $\\frac{a$ Jr" (two dollar signs: TeX to matplotlib) stopped check --png,
    --html and the app's check with mathtext's parse error."""
    labels = ["Frank $\\frac{a$ Jr", "Ann $_$", "Lee $#$"]
    r = _rsm_file(5, n_papers=120, n_raters=3, severity=[0.4, 0.0, -0.4])
    r = Ratings(r.paper, r.rater, r.score, r.max_score, r.n_papers, r.n_raters, rater_ids=tuple(labels))
    rep, model = report_and_model(r)
    path = wright_map(tmp_path / "m.png", rep, model.measure[model.measured], "t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_where_conditional_ml_cannot_be_fitted_the_report_uses_marginal_ml():
    """Issue 12: the README's walk-through (``--resolve-discrepancies``) leaves pairs that never differ
    by more than a point, so no paper informs the conditional likelihood; the report then comes from
    the same rating scale model fitted by marginal ML (MFRM), the estimator ``adjust -m MFRM`` uses."""
    import json

    from click.testing import CliRunner
    from support import ROOT

    from ratercal_cli.cli import cli
    from ratercal_cli.methods import make_method
    from ratercal_cli.practice.ratings_file import Columns, read_ratings_file

    path = ROOT / "examples" / "ratings.csv"
    res = CliRunner().invoke(cli, ["check", str(path), "--scale", "0-5", "--group-col", "grade",
                                   "--resolve-discrepancies", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    table = read_ratings_file(path, scale="0-5", columns=Columns(group="grade"), resolve=True)
    for g, group in zip(data["groups"], table.groups):
        rr = g["rater_report"]
        assert rr["fitted"] and rr["model"].startswith("rating scale model by marginal ML (MFRM)")
        assert any("conditional ML could not be fitted" in n for n in rr["notes"])
        est = make_method("MFRM").set_params(fair="average-rater").fit(group.ratings)
        want = {group.ratings.rater_ids[j]: est.severity_[j] for j in range(group.ratings.n_raters)}
        assert len(rr["raters"]) == 10
        for r in rr["raters"]:
            assert r["measure"] == pytest.approx(want[r["rater"]], abs=1e-12) and 0 < r["se"] < 1
        assert g["study"]["applies"] is True or g["study"]["reason"] == "the raters do not differ significantly"
    assert data["bias"]["fitted"]


def _rsm_file(seed, n_papers=300, n_raters=8, per_paper=2, severity=None):
    """Ratings of the rating scale model on 0-5 (raters equal unless ``severity``), ``per_paper`` distinct
    raters a paper drawn at random."""
    rng = np.random.default_rng([2027, seed])
    theta = rng.normal(0.0, 1.5, n_papers)
    raters = np.argsort(rng.random((n_papers, n_raters)), axis=1)[:, :per_paper]
    sev = np.zeros(n_raters) if severity is None else np.asarray(severity)
    kappa = np.array([-1.5, -0.5, 0.0, 0.5, 1.5])
    logit = theta[:, None, None] - sev[raters][:, :, None] - kappa
    cum = np.concatenate([np.zeros(raters.shape + (1,)), np.cumsum(logit, axis=2)], axis=2)
    p = np.exp(cum - cum.max(axis=2, keepdims=True))
    p /= p.sum(axis=2, keepdims=True)
    score = (rng.random(raters.shape)[:, :, None] > np.cumsum(p, axis=2)).sum(axis=2)
    return Ratings(np.repeat(np.arange(n_papers), per_paper), raters.ravel(), score.ravel(), 5, n_papers, n_raters)


def test_the_wald_test_of_equal_severities_holds_its_level_where_the_fixed_chi_square_does_not():
    """Facets' fixed (all same) chi-square weighs each severity by its own S.E., as if the raters' estimates were
    independent; raters compared on shared papers are not, and it called identical raters differing in ~10% of
    files at p < .05 (a researcher's 12%), which check counted toward "adjustment warranted".  The Wald test with
    the severities' covariance (CML, and MML where the CML cannot be fitted) holds the level."""
    from ratercal_cli.practice.rater_report import _marginal_rater_model

    p = {"wald": [], "fixed": [], "mml": []}
    for seed in range(150):
        r = _rsm_file(seed)
        sep = report_and_model(r)[0].rater_separation
        p["wald"].append(sep["wald_p"])
        p["fixed"].append(sep["chi2_p"])
        if seed < 60:
            p["mml"].append(report_and_model(r, _marginal_rater_model(r, "test"))[0].rater_separation["wald_p"])
    rate = {k: float(np.mean(np.array(v) < 0.05)) for k, v in p.items()}
    assert rate["wald"] <= 0.09 and rate["mml"] <= 0.12 and rate["fixed"] > rate["wald"], rate
    # with raters that differ it finds them
    r = _rsm_file(1, severity=np.linspace(-0.6, 0.6, 8))
    assert report_and_model(r)[0].rater_separation["wald_p"] < 1e-6


def test_the_wald_test_of_two_raters_is_their_difference_over_its_se():
    """Two raters: the centred severities are +-d/2, and W = (d / SE(d))^2 = (b / SE(b))^2 of either one."""
    from ratercal_cli.practice.rater_report import _marginal_rater_model

    r = _rsm_file(3, n_papers=200, n_raters=2, severity=[0.3, -0.3])
    for model in (None, _marginal_rater_model(r, "test")):
        rep, m = report_and_model(r, model)
        sep = rep.rater_separation
        assert sep["wald_df"] == 1
        assert sep["wald"] == pytest.approx((m.severity[0] / m.severity_se[0]) ** 2, rel=1e-6)
