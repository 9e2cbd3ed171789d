"""A student's id typed 000123 in one row and 123 in another (a workbook's text cell and number cell):
two papers, each read once, unwarned; raters and groups had this check, papers did not (their column is
too long to key a label at a time).  Now a paper column's whole numbers with and without leading zeros
are warned of, and merged by --fold-labels."""

from __future__ import annotations

import pytest

import ratercal_cli as rc
from support import run

BODY = ("student,rater,score\n000123,R1,3\n123,R2,4\n0456,R1,4\n00456,R2,3\n789,R1,2\n789,R2,3\n"
        "P010,R1,3\nP10,R2,3\n")


def test_paper_ids_alike_but_for_leading_zeros_are_warned_of_and_folded(tmp_path):
    src = tmp_path / "r.csv"
    src.write_text(BODY)
    with pytest.warns(UserWarning, match=r"2 group\(s\) of paper labels differ only in leading zeros .* "
                                         r"'000123' / '123'; '0456' / '00456'"):
        r = rc.read_ratings(src, scale="1-6", paper_col="student")
    assert r.n_papers == 7   # (P010 and P10 are no whole numbers: left to the case and spacing check)
    folded = rc.read_ratings(src, scale="1-6", paper_col="student", fold_labels=True)
    assert list(folded.paper_ids) == ["000123", "0456", "789", "P010", "P10"]   # (a tie: the padded id kept)
    assert folded.ratings_per_paper().tolist() == [2, 2, 2, 1, 1]
    res = run("adjust", src, "--paper-col", "student", "--scale", "1-6", "-m", "MN", "--fold-labels",
              "-o", tmp_path / "o.csv")
    assert res.exit_code == 0, res.output
    assert "folded into one label each" in res.output and "'000123' <- '123'" in res.output


def test_numbers_without_leading_zeros_and_coded_ids_are_not_warned_of(tmp_path):
    src = tmp_path / "r.csv"
    src.write_text("paper,rater,score\n" + "".join(f"{p},R{k},{(p + k) % 5 + 1}\n" for p in range(1, 40)
                                                   for k in (1, 2))
                   + "".join(f"P{p:04d},R{k},{(p + k) % 5 + 1}\n" for p in range(1, 40) for k in (1, 2)))
    out = run("check", src, "--scale", "1-6")
    assert out.exit_code == 0 and "leading zeros" not in out.output
