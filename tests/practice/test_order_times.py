"""An order column of times on a 12-hour clock (an export's "5/2/2026 1:30 PM") sorted as text: a
paper read at 9:05 AM (1), 10:15 AM (2) and 1:30 PM (4) had its 1:30 PM reading taken for its first,
the first two (4 and 1) became a discrepancy, and the rule dropped the 4 it should have kept (the
paper's score 1.5 where all three readings give 2.33).  Such a column is now an error saying what to
write; numbers and ISO times are read as before."""

from __future__ import annotations

import pytest

import ratercal_cli as rc
from ratercal_cli.errors import InputError

ROWS = [("P1", "A", 1, "9:05 AM"), ("P1", "B", 2, "10:15 AM"), ("P1", "C", 4, "1:30 PM"),
        ("P2", "A", 2, "9:10 AM"), ("P2", "B", 2, "11:00 AM"), ("P3", "A", 3, "9:00 AM"), ("P3", "C", 3, "9:30 AM"),
        ("P4", "B", 1, "8:00 AM"), ("P4", "C", 2, "8:30 AM")]


def _file(tmp_path, when):
    path = tmp_path / "r.csv"
    path.write_text("paper,rater,score,scored_at\n" + "".join(f"{p},{r},{s},{when(t)}\n" for p, r, s, t in ROWS))
    return path


def _iso(t):
    h, rest = t.split(":")
    m, half = rest.split()
    return f"2026-05-02 {int(h) % 12 + (12 if half == 'PM' else 0):02d}:{m}"


@pytest.mark.parametrize("when", [lambda t: f"5/2/2026 {t}", lambda t: t, lambda t: "30/04/2026" if t[0] == "9" else
                                  "02/05/2026"])
def test_times_whose_text_does_not_sort_are_refused(tmp_path, when):
    path = _file(tmp_path, when)
    with pytest.raises(InputError) as exc:
        rc.read_ratings(path, scale="0-5", order_col="scored_at", resolve_discrepancies=True)
    msg = str(exc.value)
    assert msg.startswith(f"{path}:2: scored_at: ") and "does not sort in the order of time" in msg
    assert "give the order of reading as numbers (1, 2, 3), or times as ISO 8601 (2026-05-02 13:30" in msg


def test_iso_times_keep_the_reading_order(tmp_path):
    path = _file(tmp_path, _iso)
    r = rc.read_ratings(path, scale="0-5", order_col="scored_at", resolve_discrepancies=True)
    res = rc.adjust(r, "NO")
    p1 = list(r.paper_ids).index("P1")
    # P1's first two readings (1 and 2) agree within a point: all three readings count
    assert res.groups[0].adjusted["NO"].paper[p1] == pytest.approx((1 + 2 + 4) / 3)
