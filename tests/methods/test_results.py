"""rc.fit and FitResults (issue 31 item 2): one statsmodels-style results object for every Rasch fit,
checked against the independent R fits of tests/results/ and against the estimators' own numbers."""

import csv
import math

import numpy as np
import pandas as pd
import pytest

import ratercal_cli as rc
from ratercal_cli.errors import ArgumentError, InputError, NotFittedError
from ratercal_cli.ratings import Ratings

from support import RESULTS

OFF = dict(step_sd=1e6, location_sd=1e6)   # the priors off, as the R fits have none


def _reference(name):
    with open(RESULTS / name) as fh:
        return {row["parameter"]: row for row in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def mfrm_criterion():
    df = pd.read_csv(RESULTS / "mfrm_120x6_3crit_2sess_0-3.csv")
    r = Ratings.from_frame(df, scale="0-3", facet_cols=["criterion"])
    return r, rc.fit(r, model="MFRM", **OFF)


def test_mfrm_params_llf_and_criteria_match_r(mfrm_criterion):
    """make_mfrm_reference.R: integrate + optim, SEs by optimHess and the delta method (mu's too)."""
    r, res = mfrm_criterion
    ref = _reference("mfrm_r_reference_criterion.csv")
    p = res.params.set_index(["facet", "element", "parameter"])
    assert res.converged and res.model == "MFRM"
    assert res.llf == pytest.approx(float(ref["loglik"]["estimate"]), abs=1e-6)
    for j in range(1, 7):
        row = p.loc[("rater", str(j), "severity")]
        assert row.estimate == pytest.approx(float(ref[f"beta_{j}"]["estimate"]), abs=1e-4)
        assert row.se == pytest.approx(float(ref[f"beta_{j}"]["se"]), rel=2e-3)
    for k in (1, 2, 3):
        row = p.loc[("scale", "", f"threshold {k}")]
        assert row.estimate == pytest.approx(float(ref[f"kappa_{k}"]["estimate"]), abs=1e-4)
        assert row.se == pytest.approx(float(ref[f"kappa_{k}"]["se"]), rel=2e-3)
        row = p.loc[("criterion", str(k), "measure")]
        assert row.se == pytest.approx(float(ref[f"gamma_criterion_{k}"]["se"]), rel=2e-3)
    # the papers' mean: the fit reports no SE for it; FitResults' (from cov_params' rows) is R's
    mean = p.loc[("paper", "", "mean")]
    assert mean.estimate == pytest.approx(float(ref["mu"]["estimate"]), abs=1e-4)
    assert mean.se == pytest.approx(float(ref["mu"]["se"]), rel=2e-3)
    sigma = p.loc[("paper", "", "sigma")]
    assert sigma.se / sigma.estimate == pytest.approx(float(ref["log_sigma"]["se"]), rel=2e-3)
    # k by hand, as R counts its free parameters: beta 1..5 (sum 0), gamma 1..2, kappa 1..2, mu, log sigma
    k = 5 + 2 + 2 + 1 + 1
    assert res.df_model == k and res.nobs == 120 and res.n_ratings == r.n_ratings
    assert res.aic == pytest.approx(2 * k - 2 * float(ref["loglik"]["estimate"]), abs=1e-5)
    assert res.bic == pytest.approx(k * math.log(120) - 2 * float(ref["loglik"]["estimate"]), abs=1e-5)


def test_cov_params_is_the_covariance_the_ses_come_from(mfrm_criterion):
    _, res = mfrm_criterion
    cov = res.cov_params()
    assert cov.shape == (len(res.params),) * 2
    np.testing.assert_allclose(np.sqrt(np.diag(cov.to_numpy())), res.params.se, rtol=1e-9)
    np.testing.assert_allclose(cov.to_numpy(), cov.to_numpy().T, atol=1e-14)
    # severities sum to 0: their covariance rows sum to 0 too
    is_rater = (res.params.facet == "rater").to_numpy()
    sev = cov.to_numpy()[np.ix_(is_rater, is_rater)]
    assert np.abs(sev.sum(axis=0)).max() < 1e-10
    ci = res.conf_int(0.10)
    np.testing.assert_allclose(ci.lower, res.params.estimate - 1.6448536269514722 * res.params.se, rtol=1e-12)
    # statsmodels' tvalues and pvalues, properties indexed as bse; the table's z and p are the same numbers
    z = res.params.estimate.to_numpy() / res.params.se.to_numpy()
    np.testing.assert_allclose(res.tvalues.to_numpy(), z, rtol=1e-12)
    from scipy.stats import norm

    np.testing.assert_allclose(res.pvalues.to_numpy(), 2 * norm.cdf(-np.abs(z)), rtol=1e-9)
    assert res.pvalues.index.equals(res.bse.index) and res.tvalues.index.equals(res.bse.index)
    np.testing.assert_allclose(res.table().p.to_numpy(), res.pvalues.to_numpy(), rtol=1e-12)


def test_mml_pcm_matches_r_and_the_estimator():
    d = np.loadtxt(RESULTS / "mml_150x5_0-3.csv", delimiter=",", skiprows=1, dtype=int)
    r = Ratings.from_labels(d[:, 0], d[:, 1], d[:, 2], 3, rater_ids=range(1, 6))
    ref = _reference("mml_r_reference_150x5_0-3.csv")
    res = rc.fit(r, model="MML", **OFF)
    assert res.llf == pytest.approx(float(ref["loglik"]["estimate"]), abs=1e-8)
    assert res.df_model == 5 * 3 + 1 == 16        # R: tau_j_k for 5 raters x 3 steps, log sigma
    assert res.aic == 2 * 16 - 2 * res.llf
    est = res.estimator
    p = res.params
    steps = p[p.parameter.str.startswith("step")]
    np.testing.assert_array_equal(steps.estimate, est.steps_.ravel())
    np.testing.assert_array_equal(steps.se, est.steps_se_.ravel())
    sev = p[p.parameter == "severity"]
    np.testing.assert_array_equal(sev.se, est.severity_se_)
    assert res.llf == est.loglik_ and res.converged == est.converged_


def test_cml_and_rsm_llf_are_psychotools():
    from test_cml import load_500x2, psychotools_fits

    r = load_500x2()
    fits = psychotools_fits()
    pcm, rsm = rc.fit(r, model="CML"), rc.fit(r, model="RSM")
    assert pcm.llf == pytest.approx(float(fits["psychotools_pcmodel"]["loglik"]), abs=1e-5)
    assert rsm.llf == pytest.approx(float(fits["psychotools_rsmodel"]["loglik"]), abs=1e-5)
    assert pcm.llf == pcm.estimator.result_.loglik and pcm.llf_kind == "conditional"
    # 64 of 81 steps estimable (test_cml); the rows are those, with the estimator's SEs
    steps = pcm.params
    assert len(steps) == 64 and np.isfinite(steps.se).all()
    est = pcm.estimator
    assert steps.estimate.tolist() == est.steps_[np.isfinite(est.steps_)].tolist()
    # RSM: 9 raters' severities (sum 0) and 9 thresholds (sum 0): 8 + 8 free
    assert rsm.df_model == 16 and len(rsm.params) == 18


def test_pcm_has_no_likelihood_and_says_so():
    d = np.loadtxt(RESULTS / "mml_150x5_0-3.csv", delimiter=",", skiprows=1, dtype=int)
    r = Ratings.from_labels(d[:, 0], d[:, 1], d[:, 2], 3, rater_ids=range(1, 6))
    res = rc.fit(r, model="pcm")
    assert math.isnan(res.llf) and math.isnan(res.aic) and res.params.se.isna().all()
    assert any("PAIR" in n for n in res.notes) and res.nobs == 150


def test_views_text_and_errors(mfrm_criterion):
    r, res = mfrm_criterion
    est = res.estimator
    frame = est.rater_frame()
    assert frame.loc[3, "severity"] == est.severity_[2] and frame.loc[3, "severity_se"] == est.severity_se_[2]
    assert len(repr(res)) < 2000 and "MFRM" in repr(res)
    text = res.summary()
    assert "log-likelihood (marginal): -798.4278" in text and "criterion" in text
    assert "<table" in res._repr_html_()
    with pytest.raises(NotFittedError, match="not fitted; call fit first"):
        rc.make_method("MFRM").rater_frame()
    with pytest.raises(InputError, match="code: unknown method 'XYZ'"):
        rc.make_method("XYZ")
    with pytest.raises(ArgumentError, match="model: expected one of MML, MFRM, CML, RSM, PCM, not 'LOGIT'"):
        rc.fit(r, model="LOGIT")
    with pytest.raises(ArgumentError, match="model: CML takes no further facets"):
        rc.fit(r, model="CML")
    with pytest.raises(ArgumentError, match="alpha"):
        res.conf_int(5)


@pytest.mark.parametrize("code", ["MN", "TMN", "LI", "TLI"])
def test_the_equatings_linear_maps_in_the_same_long_form(code):
    """adjusted = intercept + slope * score on the file's scale (a 1-6 scale: the 0-based shift moved),
    then kept inside the scale by the truncating variants."""
    df = pd.read_csv(RESULTS / "mfrm_120x6_3crit_2sess_0-3.csv")
    df = df[df.criterion == 1].assign(score=df.score + 1)            # one criterion, on a 1-4 scale
    r = Ratings.from_frame(df, scale="1-4")
    est = rc.make_method(code).fit(r)
    res = est.results(scale_low=1)
    p = res.params.pivot(index="element", columns="parameter", values="estimate")
    rows = p.loc[[str(r.rater_ids[j]) for j in r.rater]]
    a, b = rows.intercept.to_numpy(), rows.slope.to_numpy()
    want = a + b * (r.score + 1)
    if code.startswith("T"):
        want = np.clip(want, 1, 4)
    np.testing.assert_allclose(want, est.transform(r).rating + 1, rtol=0, atol=1e-12)
    if code in ("MN", "TMN"):
        assert (p.slope == 1).all()
    assert math.isnan(res.llf) and "no likelihood" in res.notes[0] and len(repr(res)) < 2000


def test_to_frame_and_to_dict_as_every_results_object_has_them():
    """README: "Every results object has to_frame() (pandas), to_dict() (the command's JSON) and
    summary()"; FitResults had neither to_frame nor to_dict (AttributeError)."""
    import json

    d = np.loadtxt(RESULTS / "mml_150x5_0-3.csv", delimiter=",", skiprows=1, dtype=int)
    r = Ratings.from_labels(d[:, 0], d[:, 1], d[:, 2], 3, rater_ids=range(1, 6))
    ref = _reference("mml_r_reference_150x5_0-3.csv")
    res = rc.fit(r, model="MML", **OFF)
    frame = res.to_frame()
    assert list(frame.columns) == ["facet", "element", "parameter", "estimate", "se", "z", "p", "0.025", "0.975"]
    out = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert out["model"] == "MML" and out["df_model"] == 16 and out["nobs"] == 150 and out["converged"] is True
    assert out["llf"] == pytest.approx(float(ref["loglik"]["estimate"]), abs=1e-8)
    assert len(out["params"]) == len(frame) and out["params"][0]["facet"] == "rater"
    pair = rc.fit(r, model="PCM").to_dict()   # no likelihood: null, not NaN, in JSON
    assert pair["llf"] is None and pair["aic"] is None and json.dumps(pair, allow_nan=False)


def test_a_rater_frame_has_no_column_of_a_parameter_the_model_has_not():
    """The CML's PCM has steps a rater and no rater parameter ``beta``: its rater_frame had a ``beta`` column all
    nan (a new user compared the raters by it); the RSM's has its beta."""
    import warnings

    rng = np.random.default_rng(0)
    P = 800
    paper = np.repeat(np.arange(P), 2)
    rater = np.concatenate([rng.choice(6, 2, replace=False) for _ in range(P)])
    quality = rng.normal(2.5, 1.2, P)
    score = np.clip(np.rint(quality[paper] - np.linspace(-0.8, 0.8, 6)[rater] + rng.normal(0, 0.8, 2 * P)), 0, 5)
    r = rc.Ratings(paper, rater, score.astype(int), max_score=5, n_papers=P, n_raters=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cml, rsm = rc.make_method("CML").fit(r).rater_frame(), rc.make_method("RSM").fit(r).rater_frame()
    assert "beta" not in cml.columns and not cml.drop(columns="seen").isna().all().any()
    assert cml.filter(like="step").notna().any().any()
    assert rsm["beta"].notna().all() and np.corrcoef(rsm["beta"], np.linspace(-0.8, 0.8, 6))[0, 1] > 0.9
