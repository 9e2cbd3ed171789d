"""A score cell holding a code (``ABS`` for an absent student) or a half point (the mean of two
readings, as a district's export often holds) was "not a number" / "not a whole number" and no
more: the errors now say what to write instead."""

from __future__ import annotations

import pytest

import ratercal_cli as rc
from ratercal_cli.errors import InputError


@pytest.mark.parametrize("cell, message", [
    ("ABS", "r.csv:3: score: 'ABS' is not a number (a rating not given -- absent, not scorable -- is read as "
            "missing where its cell is blank or NA: replace 'ABS' with NA)"),
    ("3.5", "r.csv:3: score: '3.5' is not a whole number (a score is one rating on a whole-point scale; a half "
            "point is often the mean of two readings: give each reading a line of its own)"),
    ("4*", "r.csv:3: score: '4*' is not a number"),
    ("?", "r.csv:3: score: '?' is not a number (a rating not given -- absent, not scorable -- is read as "
          "missing where its cell is blank or NA: replace '?' with NA)"),   # (no digit: a mark, said as ABS is)
    ("3.25", "r.csv:3: score: '3.25' is not a whole number"),
])
def test_a_code_or_a_half_point_says_what_to_write(tmp_path, cell, message):
    path = tmp_path / "r.csv"
    path.write_text(f"paper,rater,score\nP1,R1,3\nP1,R2,{cell}\n")
    with pytest.raises(InputError) as exc:
        rc.read_ratings(path, scale="0-5")
    assert str(exc.value) == f"{path.parent}/{message}"


def test_na_is_read_as_missing(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("paper,rater,score\nP1,R1,3\nP1,R2,NA\nP2,R1,2\nP2,R2,4\n")
    r = rc.read_ratings(path, scale="0-5")
    assert r.n_ratings == 3


@pytest.mark.parametrize("cell", ["#N/A", "#n/a", "\u2014", "\u2013", "N/A", "-"])
def test_excels_na_and_a_sheets_dashes_are_read_as_missing(tmp_path, cell):
    """Excel's own ``#N/A`` and the dashes a sheet shows for no value stopped a staff tester's run as "not a
    number" where ``N/A`` and ``-`` were read as missing."""
    path = tmp_path / "r.csv"
    path.write_text(f"paper,rater,score\nP1,R1,3\nP1,R2,{cell}\nP2,R1,2\nP2,R2,4\n", encoding="utf-8")
    r = rc.read_ratings(path, scale="0-5")
    assert r.n_ratings == 3
