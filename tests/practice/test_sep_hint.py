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
