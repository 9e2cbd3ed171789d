"""Several years at once in the app, over plain HTTP: two (or three) files of one task uploaded together,
the later years put on the earliest one's scale through the raters they share (the command line's
``check --write-anchors`` then ``adjust -m MFRM --anchors``), a drifted rater freed, the files per year.
The README's two-year rubric in a real browser: test_app_browser.py."""

import csv
import io
import re

import pytest

pytest.importorskip("starlette")

from test_app_http import BASE, TOKEN, login  # noqa: E402

from ratercal_cli.app.server import create_app  # noqa: E402


def year_file(year: int, harsher: dict | None = None, raters=("R1", "R2", "R3", "R4", "R5", "R6"), papers=150) -> bytes:
    """A holistic 1-6 export: ``papers`` students of year ``year``, each read by two of ``raters`` at random
    (seeded by the year), a rater's leniency the same every year; ``harsher``: rater -> points taken off in
    this year (a drift)."""
    import numpy as np

    harsher = harsher or {}
    rng = np.random.default_rng(year)
    lean = {r: (k % 3 - 1) * 0.4 for k, r in enumerate(raters)}   # -0.4, 0, +0.4
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["student", "reader", "score"])
    for p in range(papers):
        quality = rng.normal(3.5, 1.0)
        for r in rng.choice(raters, 2, replace=False):
            s = quality + lean[r] - harsher.get(r, 0) + rng.normal(0, 0.6)
            w.writerow([f"Y{year}-{p:03d}", r, int(min(6, max(1, round(s))))])
    return out.getvalue().encode()


@pytest.fixture
def client(tmp_path):
    from starlette.testclient import TestClient

    app = create_app(token=TOKEN, port=8000, folder=tmp_path, max_upload=2**20)
    with TestClient(app, base_url=BASE) as c:
        c.app_state = app.state.ratercal
        yield login(c)


def upload_years(c, named: dict):
    r = c.post("/upload", files=[("file", (name, data, "text/csv")) for name, data in named.items()],
               follow_redirects=False)
    assert r.status_code == 303, r.text
    uid = r.headers["location"].split("/")[2]
    return uid, c.app_state.uploads[uid]


FORM = {"paper": "student", "rater": "reader", "score": "score", "scale": "1-6", "cut": "3.5"}


def cli_anchored(tmp_path, first: bytes, second: bytes):
    """Year 2 as the command line makes it: ``check --write-anchors`` on year 1, then ``adjust -m MFRM
    --anchors`` on year 2 (the library's calls, the calibration through its file)."""
    import ratercal_cli as rc
    from ratercal_cli.practice.anchors import read_anchors, write_anchors
    from ratercal_cli.practice.check import check

    paths = []
    for k, data in enumerate((first, second)):
        paths.append(tmp_path / f"cli{k + 1}.csv")
        paths[-1].write_bytes(data)
    read = dict(scale="1-6", paper_col="student", rater_col="reader")
    y1 = rc.read_ratings(paths[0], **read)
    write_anchors(tmp_path / "a.csv", check(y1, calibrate=True).calibration)
    return rc.adjust(rc.read_ratings(paths[1], **read), "MFRM", anchors=read_anchors(tmp_path / "a.csv"))


@pytest.mark.slow
def test_two_years_linked_through_their_raters(client, tmp_path):
    c = client
    y1 = year_file(1)
    y2 = year_file(2, harsher={"R3": 1})   # R3 a point harsher in year 2: drift
    uid, u = upload_years(c, {"scores 2025.csv": y2, "scores 2024.csv": y1})   # given latest first
    assert [y.name for y in u.years] == ["scores 2024.csv", "scores 2025.csv"] and u.name == "scores 2024.csv"
    page = c.get(f"/d/{uid}/columns").text
    assert "2 years, linked through the raters they share" in page and "scores 2025.csv" in page
    assert [x.name for x in c.app_state.uploads.values() if x.series is None] == ["scores 2024.csv"]
    form = {**FORM, **{f"year_{y.id}": str(k + 1) for k, y in enumerate(u.years)}}
    c.post(f"/d/{uid}/columns", data=form)
    assert u.job.wait(180) and u.job.state == "done", u.job.error
    r = c.get(f"/d/{uid}/decision")
    first, second = u.years
    assert first.anchors is None and second.anchors is not None
    # the link: every rater shared, R3's drift found and freed, the others held
    link = second.link
    assert [x["element"] for x in link["raters"]] == ["R1", "R2", "R3", "R4", "R5", "R6"]
    assert [x["element"] for x in link["freed"]] == ["R3"] and link["new"] == []
    r3 = link["freed"][0]
    assert r3["displacement"] > 1.0 and r3["p_holm"] < 0.05
    held = [x for x in link["raters"] if not x["freed"]]
    assert all(abs(x["displacement"]) < 0.5 for x in held)
    assert all(x["used"] == pytest.approx(x["anchor"], abs=1e-6) for x in held)   # held at year 1's measure
    text = r.text
    assert "Linked to year 1:</b> 6 rater(s) rated both years" in text
    assert f"R3 (displacement {r3['displacement']:+.2f} logits" in text and "freed, measured afresh" in text
    # the same numbers as the command line's two steps
    cli = cli_anchored(tmp_path, y1, y2)
    assert [x["element"] for x in cli.anchored if x.get("freed")] == ["R3"]
    assert second.adjusted.paper_scores("MFRM") == pytest.approx(cli.paper_scores("MFRM"), abs=1e-3)
    # the files, per year
    c.post(f"/d/{uid}/adjust", data={})
    assert u.job.wait(180) and u.job.state == "done", u.job.error
    files = c.get(f"/d/{uid}/files").text
    assert "scores_2024.adjusted.csv" in files and "scores_2025.adjusted.csv" in files
    rows = list(csv.DictReader(io.StringIO(c.get(f"/d/{second.id}/file/adjusted").content.decode("utf-8-sig"))))
    assert len(rows) == 300 and list(rows[0])[:3] == ["student", "reader", "score"]
    got = {row["student"]: float(row["MFRM_paper"]) for row in rows}
    want = dict(zip(cli.ratings.paper_ids, cli.paper_scores("MFRM")))
    assert got == pytest.approx(want, abs=1e-3)
    memo = c.get(f"/d/{second.id}/file/memo").text
    assert "year 1 (scores 2024.csv)" in memo and "freed (measured afresh" in memo
    # the raters held at their anchors, R3 not among them (a staff tester's memo listed the freed one there)
    assert "<th>anchored raters</th><td>R1, R2, R4, R5, R6</td>" in memo
    # check's pick for the year alone is not a method to check instead: it cannot use the anchors
    assert "To check:" not in memo and "was chosen instead" not in memo
    assert "holds the scores on the anchors&#x27; scale (the earlier calibration&#x27;s)" in memo
    assert "For this file alone, without the anchors: check recommends" in memo
    # held at their anchors instead (--hold-drifted): R3's students carry its drift, lower than freed
    c.post(f"/d/{uid}/adjust", data={"hold_drifted": "on"})
    assert u.job.wait(180) and u.job.state == "done", u.job.error
    assert second.link["freed"] == [] and [x["element"] for x in second.link["drifted"]] == ["R3"]
    assert "held at its anchor" in c.get(f"/d/{uid}/files").text
    held_scores = dict(zip(second.adjusted.ratings.paper_ids, second.adjusted.paper_scores("MFRM")))
    r3_students = {row["student"] for row in rows if row["reader"] == "R3"}
    assert all(held_scores[p] < got[p] for p in r3_students)


def test_a_year_that_shares_no_rater_is_one_line_and_the_order_is_the_users(client):
    c = client
    uid, u = upload_years(c, {"a.csv": year_file(1), "b.csv": year_file(2, raters=("Q1", "Q2", "Q3", "Q4"))})
    # the order given on the page: b first, then a
    c.post(f"/d/{uid}/columns", data={**FORM, f"year_{u.years[0].id}": "2", f"year_{u.years[1].id}": "1"})
    assert [y.name for y in u.years] == ["b.csv", "a.csv"]
    assert u.job.wait(120) and u.job.state == "error"
    assert u.job.error == ("a.csv: shares no rater with b.csv: nothing links the two years (the raters are matched "
                           "by their labels)")
    # a group column: years are linked one group at a time
    c.post(f"/d/{uid}/columns", data={**FORM, "group": "reader"})
    assert u.job.wait(120) and u.job.state == "error"
    assert u.job.error.startswith("b.csv: Group: years are linked one group at a time, and reader has 4 groups")
    # two years in one place: said on the page, nothing started
    r = c.post(f"/d/{uid}/columns", data={**FORM, f"year_{u.years[0].id}": "1", f"year_{u.years[1].id}": "1"})
    assert r.status_code == 400 and "give each year its own place" in r.text


@pytest.mark.slow
def test_a_third_year_is_held_to_the_second_years_measures(client):
    """Three years: year 3 is held to year 2's anchored measures (so on year 1's scale): R3, a point harsher
    in year 2 only, is freed in year 2 and again in year 3 (back to its year-1 self); R7 and R8, new in year
    3, are measured on the scale; R5 and R6, gone in year 3, anchor nothing."""
    c = client
    files = {"y1.csv": year_file(1), "y2.csv": year_file(2, harsher={"R3": 1}),
             "y3.csv": year_file(3, raters=("R1", "R2", "R3", "R4", "R7", "R8"))}
    uid, u = upload_years(c, files)
    c.post(f"/d/{uid}/columns", data=FORM)
    assert u.job.wait(240) and u.job.state == "done", u.job.error
    y1, y2, y3 = u.years
    assert [x["element"] for x in y2.link["freed"]] == ["R3"]
    assert [x["element"] for x in y3.link["raters"]] == ["R1", "R2", "R3", "R4"]
    assert [x["element"] for x in y3.link["freed"]] == ["R3"] and y3.link["new"] == ["R7", "R8"]
    # year 3's anchors are the measures year 2's fit used (R3: its year-2 measure, freed there)
    used2 = {x["element"]: x["used"] for x in y2.link["raters"]}
    anchors3 = {a.element: a.measure for a in y3.anchors.of("rater").values()}
    assert set(anchors3) == {"R1", "R2", "R3", "R4", "R5", "R6"}   # (year 2's whole calibration: R5, R6 unused)
    for rater, measure in anchors3.items():
        assert measure == pytest.approx(used2[rater], abs=1e-6)
    said = [w for w in y3.adjusted.warnings if "not in the data" in w]
    assert len(said) == 1 and said[0].endswith("their anchors unused (raters who left?): rater R5, rater R6")
    assert "Linked to year 2:</b> 4 rater(s)" in c.get(f"/d/{uid}/decision").text
    text = c.get(f"/d/{uid}/decision").text
    # the next sentence apart ("R8.5 criterion and threshold measure(s)" read as a rater R8.5, before)
    assert re.search(r"New this year, measured on the anchors' scale: R7, R8\.\s+5 criterion and threshold", text)


def workbook(data: bytes, sheet: str) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = sheet
    for row in csv.reader(io.StringIO(data.decode())):
        ws.append([int(x) if x.isdigit() else x for x in row])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


@pytest.mark.slow
def test_workbook_years_keep_their_own_sheet_and_come_back_as_workbooks(client):
    """Two .xlsx years whose sheets are named differently: each is read from its own sheet and its adjusted
    file comes back a workbook with that sheet."""
    import openpyxl

    c = client
    uid, u = upload_years(c, {"2024.xlsx": workbook(year_file(1, papers=60), "Spring 2024"),
                              "2025.xlsx": workbook(year_file(2, papers=60), "Spring 2025")})
    assert [y.sheets for y in u.years] == [["Spring 2024"], ["Spring 2025"]]
    c.post(f"/d/{uid}/columns", data={**FORM, "sheet": "Spring 2024"})
    assert u.job.wait(180) and u.job.state == "done", u.job.error
    assert [y.settings["sheet"] for y in u.years] == ["Spring 2024", "Spring 2025"]
    c.post(f"/d/{uid}/adjust", data={})
    assert u.job.wait(180) and u.job.state == "done", u.job.error
    got = c.get(f"/d/{u.years[1].id}/file/adjusted")
    assert 'filename="2025.adjusted.xlsx"' in got.headers["content-disposition"]
    back = openpyxl.load_workbook(io.BytesIO(got.content))
    assert back.sheetnames == ["Spring 2025"]
    rows = list(back.active.iter_rows(values_only=True))
    assert len(rows) == 121 and list(rows[0][:3]) == ["student", "reader", "score"] and "MFRM_paper" in rows[0]


def random_year(year: int, raters=("R1", "R2", "R3", "R4", "R5", "R6", "N1"), papers=150) -> bytes:
    """A year whose scores are drawn at random (no student differs from another), read by two of ``raters`` (N1 new)."""
    import numpy as np

    rng = np.random.default_rng(100 + year)
    lines = ["student,reader,score"]
    for p in range(papers):
        lines += [f"Y{year}-{p:03d},{r},{rng.integers(1, 7)}" for r in rng.choice(raters, 2, replace=False)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.slow
def test_each_years_warnings_are_on_the_files_page_and_its_memo_says_what_the_scale_does(client):
    """A verifying helper's finds: the files page of linked years showed none of the adjustment's warnings (a
    random year 2 said nothing of its papers not differing), the year-2 memo pointed to the command line's
    --write-anchors, and year 1's memo said "MFRM was chosen instead of the recommended method. To check: ..."
    where the app imposes the model that carries its scale to the later years."""
    from ratercal_cli.app.work import app_words

    c = client
    uid, u = upload_years(c, {"2024.csv": year_file(1), "2025.csv": random_year(2)})
    c.post(f"/d/{uid}/columns", data={**FORM, **{f"year_{y.id}": str(k + 1) for k, y in enumerate(u.years)}})
    assert u.job.wait(180) and u.job.state == "done", u.job.error
    c.post(f"/d/{uid}/adjust", data={})
    assert u.job.wait(180) and u.job.state == "done", u.job.error
    page = c.get(f"/d/{uid}/files").text
    first, second = u.years
    said = second.adjusted.warnings
    assert any("do not differ detectably" in w for w in said) and any("N1 have no anchor" in w for w in said)
    box = page.split('id="adjust_warnings-2"')[1].split("</div>")[0]
    import html

    assert [html.unescape(p.split("</p>")[0]) for p in box.split('<p class="warn">')[1:]] == [app_words(w) for w in said]
    assert "--write-anchors" not in page and "N1 have no anchor in the earlier year: measured on" in box
    memo2 = c.get(f"/d/{second.id}/file/memo").text
    assert "--write-anchors" not in memo2 and "do not differ detectably" in memo2
    assert "The many-facet Rasch model (MFRM) holds the scores on the anchors&#x27; scale" in memo2
    memo1 = c.get(f"/d/{first.id}/file/memo").text
    assert "was chosen instead" not in memo1 and "To check:" not in memo1
    assert ("The many-facet Rasch model (MFRM) sets the scale the later years are held to; the methods compared "
            "for this file alone cannot carry it.") in memo1
    assert "For this file alone, without the years linked to it: check recommends" in memo1


@pytest.mark.slow
def test_a_rater_who_skipped_a_year_is_held_at_its_last_measure(client):
    """Year 3 measured afresh a rater who read in year 1 but not year 2, and called it new, though year 1 had put
    it on the scale every year shares (a verifying helper): the earlier measures are carried to the next year."""
    c = client
    files = {"y1.csv": year_file(1), "y2.csv": year_file(2, raters=("R1", "R2", "R3", "R4", "R7")),
             "y3.csv": year_file(3)}
    uid, u = upload_years(c, files)
    c.post(f"/d/{uid}/columns", data=FORM)
    assert u.job.wait(240) and u.job.state == "done", u.job.error
    y1, y2, y3 = u.years
    assert [x["element"] for x in y3.link["raters"]] == ["R1", "R2", "R3", "R4", "R5", "R6"]
    assert y3.link["new"] == []
    held1 = {x["element"]: x for x in y2.link["raters"]}   # (year 2's use of year 1's, R5 and R6 absent)
    assert set(held1) == {"R1", "R2", "R3", "R4"}
    anchors3 = {a.element: a.measure for a in y3.anchors.of("rater").values()}
    first = {a.element: a.measure for a in y2.anchors.of("rater").values()}   # (year 1's measures)
    for rater in ("R5", "R6"):   # not in year 2: held in year 3 at year 1's measure
        assert anchors3[rater] == pytest.approx(first[rater], abs=1e-12)
    assert not any("have no anchor" in w and "R5" in w for w in y3.adjusted.warnings)
