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


def test_accented_labels_sort_among_their_letters():
    """The app listed schools Escuela, Zürich, École, Ōtaki (by code point): accents are set aside first, case
    and the natural order of numbers kept."""
    from ratercal_cli.ratings import natural_key

    labels = ["Zürich", "Ōtaki", "École", "Escuela", "R10", "R2", "Ecole", "r1", "2", "10"]
    assert sorted(labels, key=natural_key) == ["2", "10", "Ecole", "École", "Escuela", "Ōtaki", "R2", "R10", "Zürich",
                                               "r1"]
    r = rc.Ratings.from_labels(["p1", "p1", "p2", "p2"], ["Zoë", "Élise", "Adam", "Élise"], [1, 2, 3, 4], max_score=5)
    assert r.rater_ids == ("Adam", "Élise", "Zoë")
