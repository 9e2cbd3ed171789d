"""A wide rubric whose criterion column holds no score at all (not scored this year, or the wrong
column named) made totals over the other criteria, and a cut set for all of them (14 of 4 x 1-6) was
applied to totals of three, with no word but the count of blank cells."""

from __future__ import annotations

import ratercal_cli as rc


def test_a_criterion_without_a_score_is_named(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("student,rater,style,org,conv\n" + "".join(
        f"S{p},R{r},{1 + (p + r) % 6},{1 + (p * r) % 6},\n" for p in range(1, 9) for r in (1, 2, 3)))
    r = rc.read_ratings(path, scale="1-6", paper_col="student", score_cols="style,org,conv")
    assert f"{path}: conv: no score in any row (of score_cols): the rubric's totals are over the other 2 " \
           "criteria (style, org), a cut on them too" in r.notes
    full = tmp_path / "f.csv"
    full.write_text(path.read_text().replace(",\n", ",3\n"))
    assert not any("no score in any row" in n for n in rc.read_ratings(full, scale="1-6", paper_col="student",
                                                                          score_cols="style,org,conv").notes)
