"""Regression (the new-user round of issue 28): the README says check, adjust, compare and fit take a
path or a DataFrame "with the same paper_col=, rater_col=, ... arguments", but they took only the data:
``rc.check("export.csv", scale="1-6", paper_col="Student ID")`` was a TypeError, and a path could be read
only with the default column names and an inferred scale."""

import pandas as pd
import pytest

import ratercal_cli as rc

KW = dict(scale="1-6", paper_col="Student ID", rater_col="Reader", score_col="Score", group_col="Grade")


@pytest.fixture
def export(tmp_path):
    """A district export of my own: 2 grades, 4 readers on 1-6, every paper read twice."""
    rows = []
    for g in (3, 5):
        for p in range(24):
            for k, r in enumerate(("Ames", "Bly", "Cruz", "Dunn")):
                if (p + k) % 4 < 2:
                    rows.append({"Student ID": f"S{g}{p:02d}", "Grade": g, "Reader": r,
                                 "Score": min(6, max(1, 1 + (p * 7 + g) % 6 + (-1, 0, 0, 2)[k]))})
    path = tmp_path / "export.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_path_and_frame_take_read_keywords(export):
    read = rc.read_ratings(export, **KW)
    by_path, by_frame = rc.check(export, **KW), rc.check(pd.read_csv(export, dtype=str), **KW)
    assert by_path.recommendation == rc.check(read).recommendation == by_frame.recommendation
    assert set(by_path.recommendation) == {"3", "5"} and "NO" not in by_path.recommendation.values()
    a = rc.adjust(export, "TLI", **KW).paper_frame()
    assert a["TLI"].tolist() == rc.adjust(read, "TLI").paper_frame()["TLI"].tolist()
    assert len(a) == 48 and a["TLI"].between(1, 6).all()
    c = rc.compare(export, ["MN", "TLI"], cut=4, **KW).to_frame()
    assert c["rmsd"].tolist() == rc.compare(read, ["MN", "TLI"], cut=4).to_frame()["rmsd"].tolist()
    one = dict(KW, group_col=None)
    f = rc.fit(export, model="MFRM", quality="wle", **one)
    assert f.params.query("facet == 'rater'")["element"].tolist() == ["Ames", "Bly", "Cruz", "Dunn"]
    assert f.params["estimate"].tolist() == rc.fit(rc.read_ratings(export, **one), model="MFRM",
                                                   quality="wle").params["estimate"].tolist()


def test_read_keywords_are_refused_where_they_cannot_apply(export):
    with pytest.raises(rc.ArgumentError, match="scale"):
        rc.check(rc.read_ratings(export, **KW), scale="1-6")     # Ratings are read already
    with pytest.raises(rc.ArgumentError, match="encoding"):
        rc.check(pd.read_csv(export), encoding="latin-1", **KW)  # a file's option, not a frame's
    with pytest.raises(rc.ArgumentError, match="paper_column"):
        rc.compare(export, paper_column="Student ID")            # a misspelling is named


def test_a_path_or_frame_with_a_cluster_column_is_read_with_it(tmp_path):
    """``rc.check(path, cluster="school")`` on a file with a column ``school`` was an ArgumentError ("not
    a facet of the ratings (facets: none)"): the command line reads --cluster-col's column, the library
    did not.  Four schools, each read by its own pair of raters and one shared rater."""
    rows = []
    for p in range(64):
        s = p % 4
        own = (f"R{2 * s + 1}", f"R{2 * s + 2}")
        for r in (own[p % 2], "R9" if (p // 4) % 4 == 0 else own[1 - p % 2]):
            rows.append({"paper": f"P{p:02d}", "rater": r, "school": f"S{s + 1}", "score": 1 + (p * 5 + len(r)) % 6})
    path = tmp_path / "schools.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    for data in (path, pd.read_csv(path, dtype=str)):
        found = rc.check(data, scale="1-6", cluster="school").reports[0].assignment_found
        assert found.cluster_source == "column school" and found.cluster_labels == ("S1", "S2", "S3", "S4")
    by_path = rc.adjust(path, "MML", scale="1-6", cluster="school").paper_frame()["MML"].tolist()
    read = rc.read_ratings(path, scale="1-6", facet_cols=["school"])
    assert by_path == rc.adjust(read, "MML", cluster="school").paper_frame()["MML"].tolist()
    assert len(by_path) == 64
