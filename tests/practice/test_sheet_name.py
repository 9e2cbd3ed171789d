"""``--sheet Notes`` for a sheet saved as "Notes " (a trailing space) or "notes" was "no sheet 'Notes'
(sheets: Sheet, Notes )", the space invisible: a name differing only in case or outer spaces is now
taken where it is the only such sheet."""

from __future__ import annotations

import openpyxl
import pytest

import ratercal_cli as rc
from ratercal_cli.errors import InputError


def test_a_sheet_named_with_other_case_or_spaces_is_found(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Scores 2026 "
    for row in (["paper", "rater", "score"], ["P1", "A", 1], ["P1", "B", 2], ["P2", "A", 3], ["P2", "B", 3]):
        ws.append(row)
    wb.create_sheet("Notes").append(["read me"])
    path = tmp_path / "w.xlsx"
    wb.save(path)
    assert rc.read_ratings(path, scale="0-3", sheet="scores 2026").n_ratings == 4
    with pytest.raises(InputError, match=r"no sheet 'Score' \(sheets: Scores 2026 , Notes\)"):
        rc.read_ratings(path, scale="0-3", sheet="Score")
