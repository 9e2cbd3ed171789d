"""The Ratings object itself: what a user sees of it in a notebook or a log."""

import ratercal_cli as rc

from support import ROOT


def test_a_ratings_repr_is_one_line_of_its_sizes_not_its_arrays():
    """The dataclass's repr printed every array (13 KB at 788 ratings)."""
    r = rc.read_ratings(ROOT / "examples" / "ratings.csv", scale="0-5", group_col="grade", resolve_discrepancies=True)
    text = repr(r)
    assert text.startswith(f"<Ratings: {r.n_ratings} ratings; 387 papers; 10 raters; scale 0-5; 3 groups (grade); from")
    assert "\n" not in text and len(text) < 200
    rubric = rc.read_ratings(ROOT / "examples" / "rubric_year1.csv", scale="1-6", paper_col="student",
                             score_cols="style,org,conv,sent_form")
    assert "scale 1-6" in repr(rubric) and "facets criterion" in repr(rubric)
