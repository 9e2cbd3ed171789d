"""What a researcher trying the library without the command line found (thirteenth round's tester, on
DataFrames of its own): each was a raw pandas/numpy error, a bare KeyError/TypeError/ValueError not naming
the argument, or a silent loss; each now an ArgumentError naming it, or a warning."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ratercal_cli as rc
from ratercal_cli.errors import ArgumentError, NotFittedError


def frame(n_papers=40, n_raters=6, seed=3):
    """Two of ``n_raters`` raters a paper, scores 0-5 from a rounded quality plus the rater's severity."""
    rng = np.random.default_rng(seed)
    sev = np.linspace(-1.0, 1.0, n_raters)
    rows = []
    for p in range(n_papers):
        q = rng.normal(2.5, 1.2)
        for j in rng.choice(n_raters, 2, replace=False):
            rows.append({"paper": f"P{p + 1}", "rater": f"R{j + 1}",
                         "score": int(np.clip(np.rint(q - sev[j] + rng.normal(0, 0.5)), 0, 5))})
    return pd.DataFrame(rows)


def test_an_estimator_fits_a_data_frame_as_adjust_reads_it():
    df = frame()
    r = rc.Ratings.from_frame(df)
    for code in ("TLI", "MFRM"):
        a = rc.make_method(code).fit_transform(df).paper
        b = rc.make_method(code).fit_transform(r).paper
        np.testing.assert_array_equal(a, b)
        est = rc.make_method(code).fit(df)
        np.testing.assert_allclose(est.transform(df).paper, b, rtol=1e-12)   # (fit_transform reuses the fit's EAPs)
    with pytest.raises(ArgumentError, match="expected Ratings or a pandas DataFrame"):
        rc.make_method("TLI").fit([[1, 2, 3]])


def test_a_fitted_attribute_before_fit_is_not_fitted_error():
    for code, name in (("MFRM", "severity_"), ("OLS", "theta_"), ("TLI", "slope_")):
        est = rc.make_method(code)
        with pytest.raises(NotFittedError, match=f"not fitted; call fit first \\({name} is learned by fit\\)"):
            getattr(est, name)
        assert not hasattr(est, name)   # (an AttributeError: hasattr and getattr with a default work)
    with pytest.raises(AttributeError, match="has no attribute 'no_such'"):
        rc.make_method("TLI").fit(frame()).no_such
    assert rc.make_method("MFRM").fit(frame()).severity_.shape == (6,)


def test_rows_without_a_score_are_counted_and_their_papers_named():
    df = frame()
    df.loc[df.paper == "P5", "score"] = np.nan
    df.loc[df.index[0], "score"] = None
    with pytest.warns(UserWarning) as got:
        r = rc.Ratings.from_frame(df, scale="0-5")
    said = [str(w.message) for w in got]
    assert said == ["row 0: 3 rating(s) with no score left out",
                    "row 8: 1 paper(s) with no usable rating (e.g. paper P5) get no adjusted score"], said
    assert r.notes == tuple(said) and "P5" not in r.paper_ids and r.n_ratings == len(df) - 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rc.Ratings.from_frame(frame(), scale="0-5").notes == ()


def test_read_ratings_takes_a_data_frame_as_check_and_adjust_do():
    df = frame()
    a, b = rc.read_ratings(df, scale="0-5"), rc.Ratings.from_frame(df, scale="0-5")
    assert a.paper_ids == b.paper_ids and np.array_equal(a.score, b.score)
    with pytest.raises(ArgumentError, match="sep: applies to a ratings file, not to a DataFrame"):
        rc.read_ratings(df, scale="0-5", sep=";")


def test_bad_arguments_name_themselves():
    df = frame()
    cases = [
        (lambda: rc.adjust(df, "TLI", scale="0-5", cut="high"), "cut: must be a number"),
        (lambda: rc.adjust(df, "TLI", scale="0-5", foo=1), "foo: is not an argument of adjust"),
        (lambda: rc.adjust(df, "TLI", scale="0-5").paper_scores("MFRM"), "code: 'MFRM' was not applied \\(methods: TLI\\)"),
        (lambda: rc.make_method("TLI", variant="wrong"), "variant: must be one of"),
        (lambda: rc.make_method("TLI").set_params(bogus=1), "bogus: is not a parameter of LinearEquating"),
        (lambda: rc.check(df, scale="0-5").report("bogus"), "group: no group 'bogus'"),
        (lambda: rc.make_method("MFRM").fit(rc.Ratings.from_frame(df), facet=np.zeros(3, int)),
         "facet: needs a level for each of the 80 ratings"),
        (lambda: rc.make_method("MFRM").fit(rc.Ratings.from_frame(df), facet=np.array(["a"] * 80)),
         "facet: levels are codes 0, 1, ..."),
    ]
    for call, message in cases:
        with pytest.raises(ArgumentError, match=message):
            call()


def test_ratings_from_arrays_name_the_first_rating_at_fault():
    from ratercal_cli.ratings import Ratings

    with pytest.raises(rc.InputError, match=r"score\[1\] = 7 is not 0..max_score = 5 \(scores less the scale's low end, 1\)"):
        Ratings([0, 1], [0, 1], [3, 7], 5, 2, 2, scale_low=1)
    with pytest.raises(ValueError, match=r"paper\[2\] = 5 is not an index 0..n_papers - 1 = 1 \(2 such ratings\)"):
        Ratings([0, 1, 5, 9], [0, 1, 0, 1], [3, 4, 2, 2], 5, 2, 2)
    with pytest.raises(ValueError, match=r"rater\[0\] = -1 is not an index 0..n_raters - 1 = 1"):
        Ratings([0, 1], [-1, 1], [3, 4], 5, 2, 2)
    # from_labels refuses as from_frame does, with ratercal's errors (a researcher's except rc.RatercalError missed them)
    for scores in ([9], [-1], [2.5], [float("nan")], ["x"]):
        with pytest.raises(rc.RatercalError):
            Ratings.from_labels(["a"], ["R1"], scores, max_score=5)


def test_estimators_refuse_empty_ratings_and_bad_parameters_by_name():
    """A researcher's: TLI fitted nothing without a word and failed in transform on a learned attribute never set;
    MML's n_nodes=-3 was numpy's linspace error and 0 was taken as None; min_ratings=-1 as 1 (TMN's 'x' int()'s
    error); fair='bogus' a bare ValueError (the CML's still, a verifier)."""
    from ratercal_cli.ratings import Ratings

    empty = Ratings.from_labels([], [], [], max_score=5)
    for code in ("TLI", "MN", "MML", "NO"):
        with pytest.raises(rc.MethodError, match=f"{code}: no ratings to fit"):
            rc.make_method(code).fit(empty)
    with pytest.raises(rc.RatercalError, match="no ratings to fit"):
        rc.adjust(empty, "TLI")
    with pytest.raises(rc.InputError, match="no ratings to check"):
        rc.check(empty)
    r = Ratings.from_labels(["a", "a", "b", "b", "c", "c"], ["R1", "R2", "R1", "R2", "R2", "R1"], [1, 2, 3, 3, 4, 5],
                            max_score=5)
    for code, kw, name in (("MML", {"n_nodes": -3}, "n_nodes"), ("MML", {"n_nodes": 0}, "n_nodes"),
                           ("MML", {"n_nodes": 2.5}, "n_nodes"), ("MML", {"fair": "bogus"}, "fair"),
                           ("CML", {"fair": "bogus"}, "fair"), ("TLI", {"min_ratings": -1}, "min_ratings"),
                           ("TLI", {"ddof": -1}, "ddof"), ("TLI", {"ddof": 0.5}, "ddof"),
                           ("TMN", {"min_ratings": -1}, "min_ratings"), ("TMN", {"min_ratings": "x"}, "min_ratings")):
        with pytest.raises(ArgumentError, match=f"^{name}: expected"):
            rc.make_method(code, **kw).fit(r)
    assert rc.make_method("MML", n_nodes=21).fit(r).severity_.shape == (2,)

