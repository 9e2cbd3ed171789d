"""A sheet filtered in Excel (or with rows hidden by hand) and saved keeps the hidden rows, which
were read like the others without a word: a user who filtered to one school analysed every school.
Now a warning names the hidden rows (they are still read: the file is the data)."""

from __future__ import annotations

import openpyxl

import ratercal_cli as rc
from ratercal_cli.practice.ratings_file import hidden_rows


def _sheet(path, hide=()):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "scores"
    ws.append(["paper", "rater", "score"])
    for p in range(1, 7):
        ws.append([f"P{p}", "A", p % 4])
        ws.append([f"P{p}", "B", (p + 1) % 4])
    for n in hide:
        ws.row_dimensions[n].hidden = True
    wb.save(path)


def test_hidden_rows_are_warned_of_and_read(tmp_path):
    path = tmp_path / "f.xlsx"
    _sheet(path, hide=(2, 3, 4, 9))
    r = rc.read_ratings(path, scale="0-3")
    assert r.n_ratings == 12
    assert f"{path}: 4 row(s) of the sheet 'scores' are hidden (rows 2-4, 9; a filter?) and are read like the " \
           "others: delete them, or copy the rows you mean to a sheet of their own, to leave them out" in r.notes


def test_a_sheet_without_hidden_rows_says_nothing(tmp_path):
    path = tmp_path / "f.xlsx"
    _sheet(path)
    assert not any("hidden" in n for n in rc.read_ratings(path, scale="0-3").notes)


def test_a_tag_cut_at_a_block_end_is_found(tmp_path):
    # a sheet of many rows, the hidden ones far past the first MiB of its XML
    path = tmp_path / "big.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["paper", "rater", "score", "note"])
    for p in range(2, 8_002):
        ws.append([f"P{p}", "A", 1, "x" * 120])
    hide = list(range(7_990, 8_002))
    for n in hide:
        ws.row_dimensions[n].hidden = True
    wb.save(path)
    assert hidden_rows(path, "xl/worksheets/sheet1.xml", set(range(1, 9_000))) == hide


def test_merged_cells_in_a_column_read_are_an_error_naming_the_range(tmp_path):
    """A district export that merges equal neighbouring cells: Excel keeps the value in the range's first cell,
    the others blank.  Merged scores lost a rating as "without a usable score (blank or NA) skipped", exit 0;
    merged papers or grades said "blank".  Now an error names the cell and its merged range; merged cells in
    a column that is not read change nothing."""
    import pytest

    from ratercal_cli.errors import InputError

    path = tmp_path / "m.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["paper", "rater", "score", "note"])
    for p in range(1, 7):
        ws.append([f"P{p}", "A", p % 4, "same"])
        ws.append([f"P{p}", "B", p % 4 if p == 2 else (p + 1) % 4, "same"])
    ws.merge_cells("D2:D13")   # (a column not read)
    wb.save(path)
    assert rc.read_ratings(path, scale="0-3").n_ratings == 12
    ws.merge_cells("C4:C5")    # P2's two equal scores
    wb.save(path)
    with pytest.raises(InputError) as got:
        rc.read_ratings(path, scale="0-3")
    assert str(got.value) == (f"{path}:5: score: cell C5 is blank, part of the merged cells C4:C5 (Excel keeps their "
                              "value in the first cell alone): unmerge them and fill each row")
