"""A title above the header (an export's "Spring writing 2026" line, a merged title cell over a
sheet's table) was told to "name the columns with --paper-col, --rater-col and --score-col", which
cannot help: the error now names the line that holds the columns and says to delete the ones above."""

from __future__ import annotations

import openpyxl
import pytest

import ratercal_cli as rc
from ratercal_cli.errors import InputError

ROWS = [["paper", "rater", "score"], ["p1", "A", "1"], ["p1", "B", "2"], ["p2", "A", "3"], ["p2", "B", "3"]]


def _error(path):
    with pytest.raises(InputError) as exc:
        rc.read_ratings(path, scale="0-5")
    return str(exc.value)


def test_a_title_line_above_a_csv_header_is_named(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("Spring writing 2026,,\r\nexported 2026-05-01\r\n\r\n"
                    + "".join(",".join(r) + "\r\n" for r in ROWS), encoding="utf-8-sig")
    msg = _error(path)
    assert msg.startswith(f"{path}:1: missing column(s) paper, rater, score (found: Spring writing 2026")
    assert msg.endswith("line 4 holds the columns paper, rater, score: delete the line(s) above it (a title?) "
                        "and read the file again")


def test_a_merged_title_row_above_a_sheets_header_is_named(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Spring writing 2026"])
    ws.merge_cells("A1:C1")
    for r in ROWS:
        ws.append(r)
    path = tmp_path / "t.xlsx"
    wb.save(path)
    assert _error(path).endswith("row 2 holds the columns paper, rater, score: delete the row(s) above it "
                                 "(a title?) and read the file again")


def test_a_file_with_no_such_line_keeps_the_column_hint(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("a\tb\n1\t2\n")
    assert _error(path).endswith("name the columns with paper_col, rater_col and score_col")
