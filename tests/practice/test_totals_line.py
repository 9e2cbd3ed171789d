"""A spreadsheet's line of totals or notes below the table ("Total,,610", "Exported by ...") was
"rater: blank" or "610 is outside the scale 0-5" and no more: the errors now ask whether it is one."""

from __future__ import annotations

import pytest

import ratercal_cli as rc
from ratercal_cli.errors import InputError

BODY = "paper,rater,score\n" + "".join(f"P{p},R{r},{(p + r) % 4}\n" for p in range(1, 21) for r in (1, 2))


@pytest.mark.parametrize("tail, message", [
    ("Total,,61\nExported by ScoreSys,,\n", "42: rater: blank (a line of totals or notes below the table? delete it)"),
    ("ALL,ALL,61\n", "42: score: 61 is outside the scale 0-5 (a line of totals below the table? delete it)"),
])
def test_a_line_of_totals_below_the_table_is_named_as_such(tmp_path, tail, message):
    path = tmp_path / "r.csv"
    path.write_text(BODY + tail)
    with pytest.raises(InputError) as exc:
        rc.read_ratings(path, scale="0-5")
    assert str(exc.value) == f"{path}:{message}"


def test_a_blank_in_the_middle_says_blank(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(BODY.replace("P3,R1,", "P3,,", 1))
    with pytest.raises(InputError) as exc:
        rc.read_ratings(path, scale="0-5")
    assert str(exc.value) == f"{path}:6: rater: blank"
