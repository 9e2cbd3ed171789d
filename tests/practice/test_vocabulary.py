"""One vocabulary across the API (issue 31 item 3): a path or DataFrame wherever Ratings go, arguments
checked with errors naming them, methods= everywhere, to_frame(table=) and paper_frame with one
meaning, and short reprs."""

import warnings

import pandas as pd
import pytest

import ratercal_cli as rc
from ratercal_cli.errors import ArgumentError

from support import ROOT

EXAMPLE = ROOT / "examples" / "ratings.csv"


@pytest.fixture(scope="module")
def grouped():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return rc.read_ratings(EXAMPLE, scale="0-5", group_col="grade")


def test_a_path_or_a_dataframe_wherever_ratings_go(grouped):
    """rc.check("file.csv") raised AttributeError: 'PosixPath' object has no attribute 'by_group'."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        by_path = rc.check(str(EXAMPLE), rasch=False, assignment="random")
    assert by_path.recommendation == {None: "TLI"} and by_path.ratings.source == str(EXAMPLE)
    assert by_path.ratings.n_ratings == grouped.n_ratings
    a = rc.adjust(pd.read_csv(EXAMPLE), "MN").paper_frame()
    b = rc.adjust(rc.Ratings.from_frame(pd.read_csv(EXAMPLE)), "MN").paper_frame()
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ArgumentError, match="ratings: expected Ratings, a path to a ratings file or a pandas"):
        rc.compare(42)


@pytest.mark.parametrize("call, message", [
    (lambda r: rc.check(r, alpha=5), "alpha: expected a number between 0 and 1 (e.g. 0.05), not 5"),
    (lambda r: rc.check(r, simulate="ten"), "simulate: expected a whole number of at least 2, not 'ten'"),
    (lambda r: rc.check(r, assignment="bogus"), "assignment: expected one of auto, random, nonrandom"),
    (lambda r: rc.adjust(r, "MN", assignment="bogus"), "assignment: expected one of auto, random, nonrandom"),
    (lambda r: rc.adjust(r, "MN", variant="exact"), "variant: expected one of faithful, corrected"),
    (lambda r: rc.adjust(r, "MN", bootstrap=-3), "bootstrap: expected a whole number of at least 0, not -3"),
    (lambda r: rc.adjust(r, "XYZ"), "methods: unknown method XYZ"),
    (lambda r: rc.compare(r, "MN", total="median"), "total: expected one of mean, sum, not 'median'"),
    (lambda r: rc.make_method("XYZ"), "code: unknown method 'XYZ'"),
])
def test_bad_arguments_are_errors_naming_them(grouped, call, message):
    """check(alpha=5) and adjust(assignment='bogus') were accepted silently, check(simulate='ten') a raw
    int() error, make_method('XYZ') a KeyError."""
    with pytest.raises(rc.InputError) as e:
        call(grouped)
    assert isinstance(e.value, ValueError) and message in str(e.value)


def test_methods_everywhere_and_one_meaning_of_the_frames(grouped):
    with pytest.warns(DeprecationWarning, match=r"adjust\(method=\) is now adjust\(methods=\)"):
        old = rc.adjust(grouped, method="MN")
    new = rc.adjust(grouped, methods="MN")
    pd.testing.assert_frame_equal(old.paper_frame(), new.paper_frame())
    pd.testing.assert_frame_equal(new.to_frame(table="papers"), new.paper_frame())
    assert len(new.to_frame()) == grouped.n_ratings == len(new.to_frame("ratings"))
    cmp = rc.compare(grouped, "MN", cut=3.25)
    pd.testing.assert_frame_equal(cmp.paper_frame(), cmp.scores_frame())
    pd.testing.assert_frame_equal(cmp.to_frame(table="pass_fail"), cmp.pass_fail_frame())
    # one paper, one row, in both: the same papers in the same order
    assert cmp.paper_frame()[["grade", "paper"]].equals(new.paper_frame()[["grade", "paper"]])
    # summary() is the command's text on every results object
    assert new.summary() == new.summary_text() and "how far the adjustment moved" in new.summary()


@pytest.mark.slow  # over 0.6 s (check with its Rasch fits, MFRM): `make test-slow` (CI) runs it
def test_results_print_short(grouped):
    """Their reprs were the default dataclass repr of everything: 55,000-160,000 characters."""
    checked = rc.check(grouped)
    adjusted = rc.adjust(grouped, ["TLI", "MFRM"])
    compared = rc.compare(grouped, ["MN", "TLI"], cut=3.25)
    fitted = rc.fit(dict(grouped.by_group())["11"], model="MFRM")
    objects = [checked, adjusted, compared, fitted, checked.reports[0], adjusted.groups[0], compared.groups[0]]
    for obj in objects:
        text = repr(obj)
        assert len(text) < 2000 and type(obj).__name__ in text, (type(obj).__name__, len(text))
    for obj in (checked, adjusted, compared, fitted):
        assert "<table" in obj._repr_html_()
