"""A rater "Rl" typed for "R1" (or "RO" for "R0") was a rater of its own, unwarned: lookalikes were
sought by confusable skeleton only where a column had a label that is not ASCII.  A rater column,
of few labels, is now compared by skeleton always; a paper column as before."""

from __future__ import annotations

import pytest

import ratercal_cli as rc
from ratercal_cli.practice.skeleton import ascii_prototypes, prototypes
from support import run

ROWS = [("P1", "R1", 1), ("P1", "R2", 2), ("P2", "Rl", 3), ("P2", "R2", 2), ("P3", "R1", 0), ("P3", "R2", 1),
        ("Pl", "R2", 1), ("Pl", "R1", 1)]


def _file(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("paper,rater,score\n" + "".join(f"{p},{r},{s}\n" for p, r, s in ROWS))
    return path


def test_an_ascii_lookalike_rater_is_warned_of_and_folded(tmp_path):
    path = _file(tmp_path)
    with pytest.warns(UserWarning) as got:
        r = rc.read_ratings(path, scale="0-3")
    text = [str(w.message) for w in got]
    assert f"{path}: rater: raters 'R1' and 'Rl' differ only in characters that look alike (1 and l, 0 and O: a " \
           "typing slip?) and are counted as different raters (give fold_labels=True to merge them)" in text
    assert r.n_raters == 3 and r.n_papers == 4           # papers P1 and Pl stay apart, unwarned
    assert not any("paper" in t for t in text)
    folded = rc.read_ratings(path, scale="0-3", fold_labels=True)
    assert folded.n_raters == 2 and list(folded.rater_ids) == ["R1", "R2"]


def test_the_ascii_table_is_the_full_tables_ascii_part():
    assert ascii_prototypes() == {k: v for k, v in prototypes().items() if k.isascii()}
    assert ascii_prototypes()["1"] == "l" and ascii_prototypes()["0"] == "O"


def test_a_raters_number_and_its_zero_padded_text_are_warned_of_and_folded(tmp_path):
    """A workbook's rater 7 typed as a number on some rows and as the text "007" on others (merged
    exports): twenty raters where there were ten, unwarned."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["grade", "paper", "rater", "score"])
    for p in range(1, 9):
        ws.append([8 if p % 2 else "08", f"P{p}", 7 if p % 2 else "007", p % 4])
        ws.append([8 if p % 2 else "08", f"P{p}", 12, (p + 1) % 4])
    path = tmp_path / "w.xlsx"
    wb.save(path)
    with pytest.warns(UserWarning) as got:
        r = rc.read_ratings(path, scale="0-3")
    text = [str(w.message) for w in got]
    assert f"{path}: rater: raters '7' and '007' differ only in leading zeros (7 and 007: a number cell and a text " \
           "cell of a spreadsheet?) and are counted as different raters (give fold_labels=True to merge them)" in text
    assert r.n_raters == 3
    g = rc.read_ratings(path, scale="0-3", group_col="grade")
    assert any("1 group(s) of group labels differ only in leading zeros" in n and "'8' / '08'" in n for n in g.notes)
    folded = rc.read_ratings(path, scale="0-3", fold_labels=True)
    assert sorted(folded.rater_ids) == ["12", "7"]


def test_a_raters_number_written_as_a_decimal_is_warned_of_folded_and_named_as_the_remedy(tmp_path):
    """An integer column with a blank, exported by pandas as floats: rater 3 written "3.0" on a few rows.  A
    rater "3.0" of 3 papers, apart from "3", unwarned, stopped the adjustment of every paper by Chapter 5's rule,
    and the advice was to leave its readings out rather than merge them (a tester's file).  Now it is warned of
    as a number written otherwise, the rule's reason names the merge, and --fold-labels makes one rater; a
    student's id "123.0" beside "123" is one paper too.  ("2.50" is not "2.5"'s: no whole number.)"""
    src = tmp_path / "r.csv"
    rows = ["paper,rater,score"]
    for p in range(1, 61):
        first = "3.0" if p in (4, 16, 28) else str(1 + p % 6)
        rows += [f"P{p},{first},{(p * 7) % 6}", f"P{p},{1 + (p + 3) % 6},{(p * 5 + 1) % 6}"]
    src.write_text("\n".join(rows) + "\n")
    out = run("check", src, "--scale", "0-5", "--no-rasch")
    assert out.exit_code == 0, out.output
    assert (f"{src}: rater: raters '3' and '3.0' differ only in how a number is written (3 and 3.0: a column of "
            "whole numbers exported as decimals") in out.output
    rule = next(line for line in out.output.splitlines() if line.startswith("CHAPTER 5 RULE"))
    assert rule.startswith("CHAPTER 5 RULE: NO -- rater 3.0 scored only 3") and \
        rule.endswith("'3.0' is '3' written otherwise: merge them (--fold-labels) and check again")
    folded = run("check", src, "--scale", "0-5", "--no-rasch", "--fold-labels")
    assert "'3' <- '3.0'" in folded.output and "rater 3.0" not in folded.output
    papers = tmp_path / "p.csv"
    papers.write_text("paper,rater,score\n123,R1,3\n123.0,R2,4\n2.50,R1,2\n2.5,R2,3\n")
    with pytest.warns(UserWarning, match=r"1 group\(s\) of paper labels differ only in how a number is written .*'123.0' / '123'"):
        r = rc.read_ratings(papers, scale="0-5")
    assert r.n_papers == 4 and rc.read_ratings(papers, scale="0-5", fold_labels=True).n_papers == 3
