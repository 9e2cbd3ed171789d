"""A paper read a third time though its first two readings agree (a back-reading, or a wrong order of
reading: an order column of 12-hour times made such papers) was used with all three readings and
no word, with or without --resolve-discrepancies.  Now a warning counts them."""

from __future__ import annotations

import pytest

import ratercal_cli as rc

# P1: 1 and 2 agree, a third 4 read after; P2: 0 and 3 differ, a third 2; P3-P5: two readings
ROWS = [("P1", "A", 1, 1), ("P1", "B", 2, 2), ("P1", "C", 4, 3), ("P2", "A", 0, 1), ("P2", "C", 3, 2),
        ("P2", "B", 2, 3), ("P3", "A", 2, 1), ("P3", "B", 3, 2), ("P4", "B", 1, 1), ("P4", "C", 2, 2),
        ("P5", "A", 3, 1), ("P5", "C", 3, 2)]


@pytest.mark.parametrize("resolve", [False, True])
def test_a_third_reading_after_agreement_is_counted(tmp_path, resolve):
    path = tmp_path / "r.csv"
    path.write_text("paper,rater,score,order\n" + "".join(f"{p},{r},{s},{o}\n" for p, r, s, o in ROWS))
    r = rc.read_ratings(path, scale="0-5", resolve_discrepancies=resolve)
    assert f"{path}: 1 paper(s) have a third rating though their first two (by the order column) are within 1 " \
           "point(s), so the third-reading rule does not apply: all three used (back-readings? if the order of " \
           "reading is another, give order_col)" in r.notes
    p1 = list(r.paper_ids).index("P1")
    assert (r.paper == p1).sum() == 3     # all three of P1's readings kept


def test_two_readings_a_paper_say_nothing(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("paper,rater,score\n" + "".join(f"{p},{r},{s}\n" for p, r, s, o in ROWS if o < 3))
    assert not any("third rating" in n for n in rc.read_ratings(path, scale="0-5").notes)
