"""The one service that applies methods: results, skipped with reasons, strict mode, timings."""

import numpy as np
import pytest

from ratercal_cli.errors import MethodError
from ratercal_cli.methods.apply import apply_methods, failure_reason, non_finite_count
from ratercal_cli.ratings import Adjusted, Ratings
from ratercal_cli.vocabulary import NEEDS_TWO_RATERS


def test_one_rater_data_skip_the_matrix_methods_with_their_reason():
    # one rating per paper: NO is the raw score; OLS needs two raters per paper
    r = Ratings(np.arange(4), [0, 0, 1, 1], [1, 2, 3, 5], 5, 4, 2)
    timings = {}
    out = apply_methods(r, ["NO", "OLS"], "corrected", timings=timings)
    assert list(out.adjusted) == ["NO"] and out.skipped == {"OLS": NEEDS_TWO_RATERS}
    assert out.not_applicable == ("OLS",) and list(timings) == [("corrected", "NO")]
    np.testing.assert_allclose(out.adjusted["NO"].paper, [1, 2, 3, 5])
    with pytest.raises(MethodError, match="OLS needs two or more raters per paper"):
        apply_methods(r, ["OLS"], "corrected", strict=True)
    out = apply_methods(r, ["MN"], "corrected")
    # MN: x - mean_j + mean: rater means 1.5 and 4, overall 2.75
    np.testing.assert_allclose(out.adjusted["MN"].rating, [2.25, 3.25, 1.75, 3.75])
    assert out.estimators["MN"].shift_.shape == (2,)


def test_a_failing_fit_is_skipped_with_one_line_or_raised_under_strict():
    # raters 1, 2 and raters 3, 4 share no paper: OLS cannot put them on one scale
    r = Ratings([0, 0, 1, 1, 2, 2, 3, 3], [0, 1, 0, 1, 2, 3, 2, 3], [1, 3, 2, 3, 4, 3, 2, 2], 5, 4, 4)
    out = apply_methods(r, ["OLS", "NO"], "corrected")
    assert list(out.adjusted) == ["NO"] and out.not_applicable == ()
    assert out.skipped["OLS"] == ("MethodError: OLS: raters 3, 4 not linked through shared papers to raters 1, 2; "
                                  "their scores cannot be put on the same scale (drop them or add papers they share)")
    with pytest.raises(MethodError, match=r"^OLS: raters 3, 4 not linked"):   # (not "OLS: MethodError: OLS: ...")
        apply_methods(r, ["OLS"], "corrected", strict=True)


def test_failure_reason_is_one_line():
    assert failure_reason(ValueError("a\nb")) == "ValueError: a b"


def test_non_finite_count():
    assert non_finite_count(Adjusted(rating=np.array([1.0, np.nan]), paper=np.array([np.inf]))) == 2


def test_a_bug_in_a_fit_propagates_instead_of_being_skipped(monkeypatch):
    """Only the failures the methods document (MethodError, a singular system, a floating-point
    failure) are "could not be fitted"; a ValueError or TypeError is a bug and stops the run."""
    from ratercal_cli.methods import linear
    from ratercal_cli.methods.base import FIT_FAILURES

    assert ValueError not in FIT_FAILURES and not issubclass(ValueError, FIT_FAILURES)
    r = Ratings([0, 0, 1, 1], [0, 1, 0, 1], [1, 3, 2, 3], 5, 2, 2)

    def broken(self, ratings):
        raise ValueError("a coding error")

    monkeypatch.setattr(linear.LinearEquating, "_fit", broken)
    with pytest.raises(ValueError, match="a coding error"):
        apply_methods(r, ["NO", "LI"], "corrected")

    def singular(self, ratings):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(linear.LinearEquating, "_fit", singular)
    out = apply_methods(r, ["NO", "LI"], "corrected")
    assert out.skipped == {"LI": "LinAlgError: Singular matrix"} and list(out.adjusted) == ["NO"]


def test_a_bad_parameter_is_an_error_not_a_skipped_method():
    from ratercal_cli.methods import make_method

    r = Ratings([0, 0, 1, 1], [0, 1, 0, 1], [1, 3, 2, 3], 5, 2, 2)
    with pytest.raises(ValueError, match="zero_sd: must be one of"):
        make_method("LI", zero_sd="nonsense").fit(r)


def test_a_paper_without_ratings_has_no_score_not_zero():
    """Ratings.subset keeps every paper; a paper left without ratings got the paper score 0.0 (the mean of
    nothing) from every method whose paper score is a mean of its ratings, and the PCM the expected score
    at a default quality, where the Rasch fits gave nan.  A rubric's paper without one criterion's
    ratings then had its criterion mean (apply.combined_scores, the Monte Carlo path) pulled toward 0:
    (0 + 4) / 2 = 2 for a paper scored 3 and 5 on its one criterion."""
    from ratercal_cli.methods.apply import apply_within_cells, combined_scores
    from ratercal_cli.methods import method_codes, make_method

    papers = ["p1", "p1", "p2", "p2", "p3", "p3", "p4", "p4"] * 2
    raters = ["A", "B", "B", "C", "C", "A", "A", "C"] * 2
    scores = [2, 3, 4, 4, 3, 1, 5, 4, 1, 2, 3, 4, 2, 2, 4, 5]
    r = Ratings.from_labels(papers, raters, scores, max_score=5)
    half = r.subset(np.isin(r.paper, [0, 1, 2]) & (np.arange(r.n_ratings) < 8))   # p4 left without ratings
    for code in method_codes():
        try:
            adj = make_method(code).fit_transform(half)
        except MethodError:
            continue
        assert np.isnan(adj.paper[3]) and np.isfinite(adj.paper[:3]).all(), code
    # a rubric: p1 without criterion "org"; its score is the mean over the one criterion it has
    crit = np.array([0] * 8 + [1] * 8)
    keep = ~((crit == 1) & (r.paper == 0))
    rubric = Ratings.from_labels([papers[k] for k in np.flatnonzero(keep)], [raters[k] for k in np.flatnonzero(keep)],
                                 np.asarray(scores)[keep], max_score=5)
    from dataclasses import replace

    rubric = replace(rubric, facets={"criterion": (crit[keep], ("style", "org"))})
    paper = combined_scores(apply_within_cells(rubric, ["NO"]), "NO", rubric.n_ratings)[0].paper
    assert paper[0] == (2 + 3) / 2   # style only: 2 and 3
    assert paper[1] == ((4 + 4) / 2 + (3 + 4) / 2) / 2
