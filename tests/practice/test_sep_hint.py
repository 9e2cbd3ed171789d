"""``--sep tab`` on a comma-separated file (or ``--sep comma`` on a tab-separated one) read the
whole header as one column name and told the user to name the columns with --paper-col,
--rater-col and --score-col; it now says which separator the header has (as it did for ';')."""

from __future__ import annotations

import pytest

from support import run

BODY = [["paper", "rater", "score"], ["P1", "A", "1"], ["P1", "B", "2"]]


@pytest.mark.parametrize("mark, sep, shown, name", [(",", "tab", "','", "comma"), ("\t", "comma", "tabs", "tab"),
                                                     ("\t", "semicolon", "tabs", "tab")])
def test_the_wrong_separator_is_named(tmp_path, mark, sep, shown, name):
    path = tmp_path / "r.txt"
    path.write_text("".join(mark.join(r) + "\n" for r in BODY))
    res = run("check", path, "--scale", "0-5", "--sep", sep)
    assert res.exit_code == 2
    assert res.output.strip().endswith(f"the fields look separated by {shown}: give --sep {name}")


def test_a_comma_inside_a_field_is_named(tmp_path):
    """A line with one field too many ("R6,2,5": a decimal comma, or "Smith, J." unquoted) was
    "expected 3 fields, found 4" and no more."""
    path = tmp_path / "r.csv"
    path.write_text("paper,rater,score\nP1,A,1\nP1,B,2,5\n")
    res = run("check", path, "--scale", "0-5")
    assert res.output.strip() == f"error: {path}:3: expected 3 fields, found 4 (a comma inside a field -- a name " \
                                 "such as 'Smith, J.' or a decimal comma -- needs the field in double quotes)"
    path.write_text("paper,rater,score\nP1,A,1\nP1,B\n")
    assert run("check", path, "--scale", "0-5").output.strip() == f"error: {path}:3: expected 3 fields, found 2"


def test_a_file_of_a_column_a_rater_read_as_criteria_is_told_of_rater_cols(tmp_path):
    """The app guessed a column a rater as criteria; the error said only to name the rater column, where
    the fix was the rater columns."""
    p = tmp_path / "wide.csv"
    p.write_text("School,Student ID,Ann,Bob,Cy\nA,1,4,,3\nA,2,,2,3\nA,3,3,4,\n")
    res = run("check", p, "--scale", "0-5", "--paper-col", "Student ID", "--score-cols", "Ann,Bob,Cy")
    assert res.exit_code == 2
    assert res.output.strip().endswith("missing column(s) rater (found: School, Student ID, Ann, Bob, Cy); with a "
                                       "column a criterion (--score-cols), name the rater column with --rater-col, "
                                       "or where each column is a rater's, give them as --rater-cols instead")
    fixed = run("check", p, "--scale", "0-5", "--paper-col", "Student ID", "--rater-cols", "Ann,Bob,Cy", "-q")
    assert fixed.exit_code == 0, fixed.output
