"""A file with lines exported twice named only the first repeat: eleven such lines took eleven runs
to mend.  The error now counts the duplicate lines and those that repeat their first line exactly."""

from __future__ import annotations

import pytest

import ratercal_cli as rc
from ratercal_cli.errors import InputError

BODY = "".join(f"P{p},R{r},{(p + r) % 4}\n" for p in range(1, 6) for r in (1, 2))


def _error(tmp_path, text):
    path = tmp_path / "d.csv"
    path.write_text("paper,rater,score\n" + text)
    with pytest.raises(InputError) as exc:
        rc.read_ratings(path, scale="0-3")
    return str(exc.value).split(": ", 1)[1]


def test_lines_exported_twice_are_counted(tmp_path):
    again = "P2,R1,3\nP3,R2,1\nP4,R1,1\n"          # three lines of BODY again (lines 4, 7, 8)
    assert _error(tmp_path, BODY + again) == (
        "rater: duplicate rating of paper P2 by rater R1 (first at line 4); 3 duplicate line(s) in all, 3 of "
        "them the same as the first in every column (exported twice? delete the repeats)")


def test_a_second_score_is_not_called_a_repeat(tmp_path):
    assert _error(tmp_path, BODY + "P2,R1,0\nP3,R2,1\n") == (
        "rater: duplicate rating of paper P2 by rater R1 (first at line 4); 2 duplicate line(s) in all, 1 of "
        "them the same as the first in every column (exported twice? delete the repeats)")
    assert _error(tmp_path, BODY + "P2,R1,0\n") == "rater: duplicate rating of paper P2 by rater R1 (first at line 4)"


def test_one_line_exported_twice_gets_the_hint_too(tmp_path):
    """A single repeat named the duplicate but not the "exported twice?" hint, which only two or more got (a
    staff tester's file); a single second score still gets none."""
    assert _error(tmp_path, BODY + "P2,R1,3\n") == (
        "rater: duplicate rating of paper P2 by rater R1 (first at line 4); the same as the first in every column "
        "(exported twice? delete the repeat)")
