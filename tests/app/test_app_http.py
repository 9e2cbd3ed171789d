"""The app's whole flow over plain HTTP (Starlette's TestClient: no server, no browser), and the
security of a local server: token, Host header, upload size, escaping, formulas, no paths from the
browser.  Fast: a small file; the README's example in a real browser is test_app_browser.py."""

import csv
import hashlib
import html
import io
import re

import numpy as np
import openpyxl
import pytest

starlette = pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from ratercal_cli.app.server import create_app  # noqa: E402

TOKEN = "test-token-0123456789"
BASE = "http://127.0.0.1:8000"
EVIL_RATER = "<script>alert(1)</script>"
EVIL_PAPER = '=HYPERLINK("http://example.invalid","x")'


def small_export(evil=False) -> bytes:
    """40 students, 5 raters (R5 a point harsher), two readings each, scale 1-6; with ``evil`` rater
    R4 is named <script>... and one student =HYPERLINK(...)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["Student ID", "Reader", "Reading", "Points", "Grade"])
    for p in range(40):
        for k in range(2):
            r = (p + 2 * k) % 5 + 1
            s = min(6, max(1, (p * 7 + k * 3) % 5 + 2 - (1 if r == 5 else 0)))
            name = EVIL_RATER if evil and r == 4 else f"R{r}"
            paper = EVIL_PAPER if evil and p == 3 else f"S{p:03d}"
            w.writerow([paper, name, k + 1, s, 5 + 3 * (p % 2)])
    return out.getvalue().encode()


@pytest.fixture
def client(tmp_path):
    app = create_app(token=TOKEN, port=8000, folder=tmp_path / "uploads", max_upload=2**20)
    (tmp_path / "uploads").mkdir()
    with TestClient(app, base_url=BASE) as c:
        c.app_state = app.state.ratercal
        yield c


def login(c):
    r = c.get(f"/?token={TOKEN}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    assert "HttpOnly" in r.headers["set-cookie"] and "SameSite=Strict" in r.headers["set-cookie"]
    return c


def upload(c, data, name="export.csv"):
    r = c.post("/upload", files={"file": (name, data, "text/csv")}, follow_redirects=False)
    assert r.status_code == 303, r.text
    uid = r.headers["location"].split("/")[2]
    return uid, c.app_state.uploads[uid]


def run_job(c, u, path):
    assert u.job.wait(120)
    return c.get(path)


# -- the flow -------------------------------------------------------------------------------------
def test_the_whole_flow(client):
    c = login(client)
    assert "Upload" in c.get("/").text
    uid, u = upload(c, small_export())
    page = c.get(f"/d/{uid}/columns").text
    # the guesses, shown and changeable, by the columns' names; the scale the lowest to the highest score
    assert u.settings["paper"] == "Student ID" and u.settings["rater"] == "Reader"
    assert u.settings["order"] == "Reading" and u.settings["group"] == "Grade"
    assert u.settings["score"] == "Points" and u.settings["scale"] == "2-6"
    assert '<option value="Points" selected>' in page and "S000" in page
    form = {"paper": "Student ID", "rater": "Reader", "score": "Points", "order": "Reading", "group": "",
            "scale": "1-6", "cut": "3.5", "levels": "", "discrepancy": "1", "simulate": "0"}
    r = c.post(f"/d/{uid}/columns", data=form, follow_redirects=False)
    assert r.headers["location"] == f"/d/{uid}/job"
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert str(r.url).endswith("/decision")
    # check's findings in plain words, from the library's results
    rep = u.checked.reports[0]
    assert ("Yes" if rep.warranted else "No") in r.text and rep.reason in r.text
    summ = u.adjusted.adjustment_summaries()[0].methods[0]
    lc = u.change_list.changes[0]
    assert f"{summ.papers} students" in r.text and f"by 0.5 or more. {lc.moved} change level ({lc.up} up, {lc.down} down)" in r.text
    assert lc.up == len(summ.fail_to_pass) and lc.down == len(summ.pass_to_fail)   # one cut: pass/fail
    assert "Rater report, agreement, Wright map" in r.text
    assert '<option value="TLI">truncated linear equating (TLI)</option>' in r.text   # (not the bare code)
    rep_page = c.get(f"/d/{uid}/report").text
    assert "Wright map" in rep_page and "Agreement" in rep_page
    # choose TLI; the files
    r = c.post(f"/d/{uid}/adjust", data={"method": "TLI"}, follow_redirects=False)
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert str(r.url).endswith("/files") and "export.adjusted.csv" in r.text
    adjusted = c.get(f"/d/{uid}/file/adjusted")
    assert adjusted.headers["content-disposition"] == 'attachment; filename="export.adjusted.csv"'
    assert adjusted.content.startswith(b"\xef\xbb\xbf")   # (a BOM, as the change list has: Excel reads its accents)
    rows = list(csv.DictReader(io.StringIO(adjusted.content.decode("utf-8-sig"))))
    assert list(rows[0])[:5] == ["Student ID", "Reader", "Reading", "Points", "Grade"]
    assert "TLI_paper" in rows[0] and len(rows) == 80
    # the same numbers as the library gives for these settings
    paper_scores = dict(zip(u.adjusted.ratings.paper_ids, u.adjusted.paper_scores("TLI")))
    for row in rows:
        assert float(row["TLI_paper"]) == pytest.approx(paper_scores[row["Student ID"]], abs=1e-4)
    changes = list(csv.DictReader(io.StringIO(c.get(f"/d/{uid}/file/changes").content.decode("utf-8-sig"))))
    assert len(changes) == 40 and {r["adjusted_level"] for r in changes} <= {"fail", "pass"}
    memo = c.get(f"/d/{uid}/file/memo").text
    assert hashlib.sha256(small_export()).hexdigest() in memo
    assert "truncated linear equating (TLI)" in memo and "<th>cuts</th><td>3.5</td>" in memo
    assert c.get(f"/d/{uid}/file/report").text.startswith("<!DOCTYPE html>")


@pytest.mark.slow
def test_a_wrong_guess_corrected_and_a_workbook_comes_back_a_workbook(client):
    c = login(client)
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Ratings"
    text = small_export().decode().replace("Points", "holistic").replace("Grade", "grade")
    for row in csv.reader(io.StringIO(text)):
        ws.append([int(x) if x.isdigit() else x for x in row])
    buf = io.BytesIO()
    wb.save(buf)
    uid, u = upload(c, buf.getvalue(), "district.xlsx")
    # 'grade' is a mark in some exports: taken for the score (wrong here), said so on the page
    assert u.settings["score"] == "grade" and "read as the score" in c.get(f"/d/{uid}/columns").text
    form = {"paper": "Student ID", "rater": "Reader", "score": "holistic", "order": "Reading", "group": "grade",
            "scale": "1-6", "cut": "2.5,3.5,4.5", "levels": "Below,Basic,Proficient,Advanced", "discrepancy": "1",
            "sheet": "Ratings"}
    c.post(f"/d/{uid}/columns", data=form)
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert "grade=5" in r.text and "grade=8" in r.text
    c.post(f"/d/{uid}/adjust", data={"method": "recommended"})
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    got = c.get(f"/d/{uid}/file/adjusted")
    assert 'filename="district.adjusted.xlsx"' in got.headers["content-disposition"]
    back = openpyxl.load_workbook(io.BytesIO(got.content))
    assert back.sheetnames == ["Ratings"]
    rows = list(back.active.iter_rows(values_only=True))
    assert list(rows[0][:5]) == ["Student ID", "Reader", "Reading", "holistic", "grade"]
    assert list(rows[1][:5]) == [ws.cell(2, k).value for k in range(1, 6)]
    lc = u.change_list.changes
    assert [x.group for x in lc] == ["5", "8"]
    for x in lc:
        assert f"{x.moved} change level ({x.up} up, {x.down} down)" in c.get(f"/d/{uid}/files").text
    # ... what the shrinkage did to the levels, as the memo and the command line say it; and the report to download
    # is adjust --html's, its levels in it (it had none: a staff tester's)
    c.post(f"/d/{uid}/adjust", data={"method": "MML"})   # (its own scores shrunk: the EAP)
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    page = c.get(f"/d/{uid}/files").text
    shrunk = [x for x in u.change_list.changes if x.unshrunk is not None]
    assert len(shrunk) == 2, u.change_list.method
    for x in shrunk:
        assert f"{x.by_shrinkage[0]} of these {x.moved} level change(s) come from the shrinkage alone" in page
    report = c.get(f"/d/{uid}/file/report").text
    assert "<h2>Levels</h2>" in report and "come from the shrinkage alone" in report
    for x in u.change_list.changes:   # (2.5, 3.5 and 4.5 are means of two readings: ties on the cuts, said)
        assert sum(x.on_cut) and f"{sum(x.on_cut)} student(s) have a given score exactly on a cut" in page


def test_a_bad_file_and_a_bad_setting_are_one_line_on_the_page(client):
    c = login(client)
    uid, u = upload(c, b"PK\x03\x04 this is no workbook", "scores.xlsx")
    page = c.get(f"/d/{uid}/columns").text
    assert "This file cannot be read" in page and "scores.xlsx" in page and str(u.path) not in page
    uid, u = upload(c, b"this is not a workbook\n", "scores.xlsx")   # (not even a zip: read as text, it was)
    page = c.get(f"/d/{uid}/columns").text
    assert "not readable as an .xlsx workbook" in page and "missing column" not in page
    uid, u = upload(c, small_export())
    form = {"paper": "Student ID", "rater": "Reader", "score": "Reading", "scale": "1-6", "cut": "9"}
    c.post(f"/d/{uid}/columns", data=form)
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "error" and "Cut scores: the cut 9 is not a score on the scale 1-6" in r.text
    # (a setting's mistake, the file fine: not headed "The file could not be used", a staff tester's)
    assert "This could not be done:" in r.text and "The file could not be used" not in r.text
    assert "export.csv" not in u.job.error or str(u.path) not in u.job.error


@pytest.mark.slow
def test_labels_are_inert_in_page_report_and_files(client):
    c = login(client)
    uid, u = upload(c, small_export(evil=True))
    c.post(f"/d/{uid}/columns", data={"paper": "Student ID", "rater": "Reader", "score": "Points",
                                      "order": "Reading", "scale": "1-6", "cut": "3.5"})
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    pages = [c.get(f"/d/{uid}/columns").text, r.text, c.get(f"/d/{uid}/report").text]
    c.post(f"/d/{uid}/adjust", data={"method": "MN"})
    run_job(c, u, f"/d/{uid}/job")
    pages += [c.get(f"/d/{uid}/files").text, c.get(f"/d/{uid}/file/memo").text, c.get(f"/d/{uid}/file/report").text]
    for p in pages[:1] + pages[2:3] + pages[5:]:   # the preview, the reports: the label shown, as text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in p
    for p in pages:
        assert "<script>" not in p and p.count("alert(1)") == p.count("&lt;script&gt;alert(1)")
    text = c.get(f"/d/{uid}/file/adjusted").content.decode("utf-8-sig")
    assert "'=HYPERLINK(" in text and "\n=HYPERLINK" not in text and ",=HYPERLINK" not in text
    changes = c.get(f"/d/{uid}/file/changes").content.decode("utf-8-sig")
    assert "'=HYPERLINK(" in changes


# -- security -------------------------------------------------------------------------------------------
def test_requests_without_the_token_are_refused(client):
    for path in ("/", "/upload", "/d/x/columns"):
        assert client.get(path).status_code == 403
    assert client.get("/?token=wrong").status_code == 403
    r = client.post("/upload", files={"file": ("a.csv", b"a,b\n", "text/csv")})
    assert r.status_code == 403 and not list((client.app_state.folder).iterdir())
    client.cookies.set("ratercal_8000", "wrong")
    assert client.get("/").status_code == 403


def test_another_host_is_refused(client):
    login(client)
    assert client.get("/").status_code == 200
    for host in ("evil.example:8000", "127.0.0.1:9999", "localhost.evil.example:8000", ""):
        assert client.get("/", headers={"host": host}).status_code == 403
    assert client.get("/", headers={"host": "localhost:8000"}).status_code == 200


def test_a_2_gb_upload_is_refused_without_reading_it(client):
    login(client)
    # the Content-Length says 2 GB: refused on the headers (the streamed count: test_app_stream.py)
    r = client.post("/upload", content=b"x" * 10, headers={"content-length": str(2 * 2**30),
                                                           "content-type": "multipart/form-data; boundary=b"})
    assert r.status_code == 413 and "larger than this server takes" in r.text
    assert not list(client.app_state.folder.iterdir())


def test_no_path_from_the_browser_is_opened(client):
    c = login(client)
    uid, u = upload(c, small_export(), "../../etc/passwd")
    assert u.name == "passwd"   # shown as the name only; never a path opened
    assert u.path.parent.parent == c.app_state.folder and u.path.name == "input.csv"
    assert c.get(f"/d/{uid}/file/..%2F..%2Fetc%2Fpasswd").status_code == 404
    assert c.get(f"/d/{uid}/file/adjusted").status_code == 404   # not made yet
    assert c.get("/d/../../etc/passwd/columns").status_code == 404


def test_the_pages_forbid_scripts():
    from ratercal_cli.app.security import CSP

    assert "script-src" not in CSP and "default-src 'none'" in CSP


def test_security_headers_and_private_folder(tmp_path):
    app = create_app(token=TOKEN, port=8000)
    folder = app.state.ratercal.folder
    assert folder.stat().st_mode & 0o077 == 0   # private: the owner's only
    with TestClient(app, base_url=BASE) as c:
        r = login(c).get("/")
        assert r.headers["content-security-policy"].startswith("default-src 'none'")
        assert r.headers["referrer-policy"] == "no-referrer"
    assert not folder.exists()   # removed when the server stops


def test_long_work_shows_progress_and_is_cancelled(client):
    """check --simulate in the app: the job page shows the replications done of those asked for; Cancel stops the work at
    the next chunk, and the page says so."""
    import time

    c = login(client)
    uid, u = upload(c, small_export())
    c.post(f"/d/{uid}/columns", data={"paper": "Student ID", "rater": "Reader", "score": "Points",
                                      "order": "Reading", "scale": "1-6", "simulate": "1000"})
    for _ in range(600):   # until the simulation reports its first chunk
        if u.job.total:
            break
        time.sleep(0.05)
    page = c.get(f"/d/{uid}/job").text
    assert u.job.stage_text == "simulate" and u.job.total == 100     # 1,000 replications in chunks of 10
    assert f'<progress max="100" value="{u.job.done}">' in page and "Cancel" in page
    # in replications, as asked (it said "simulate — 0 of 100", the chunks)
    done = re.search(r"<b>Simulating the methods on this file's design</b> — (\d+) of 1000 replications", page)
    assert done and int(done.group(1)) % 10 == 0
    c.post(f"/d/{uid}/cancel")
    assert u.job.wait(60) and u.job.state == "cancelled" and u.job.done < 100
    assert "Cancelled." in c.get(f"/d/{uid}/job").text and u.checked is None


def test_settings_sent_while_a_check_runs_are_neither_taken_nor_dropped_unsaid(client):
    """Another tab's columns form (a new cut) sent while this file's check still runs: the page says the
    check is running and shows the new values again; the settings stay those the running check was
    started with, so its findings are not shown under another tab's cut (the cut was replaced and
    the old findings shown as its, before)."""
    import types

    c = login(client)
    uid, u = upload(c, small_export())
    first = {"paper": "Student ID", "rater": "Reader", "score": "Points", "order": "Reading", "scale": "1-6",
             "cut": "3.5", "simulate": "1000"}
    c.post(f"/d/{uid}/columns", data=first, follow_redirects=False)
    job = u.job
    r = c.post(f"/d/{uid}/columns", data={**first, "cut": "2.5", "simulate": "0"}, follow_redirects=False)
    assert r.status_code == 409 and "The check of export.csv started earlier is still running" in r.text
    assert 'id="cut" name="cut" value="2.5"' in r.text and f'href="/d/{uid}/job"' in r.text
    assert u.job is job and u.settings["cut"] == "3.5" and u.settings["simulate"] == 1000
    c.post(f"/d/{uid}/cancel")
    assert job.wait(60) and job.state == "cancelled"
    # an adjustment running (a second click on Adjust, another tab's method): the files it makes are not
    # named after the other method
    u.settings["method"], u.checked = "TLI", object()
    u.job = types.SimpleNamespace(state="running", title="adjust")
    r = c.post(f"/d/{uid}/adjust", data={"method": "MN"}, follow_redirects=False)
    assert r.status_code == 409 and "The adjustment of export.csv started earlier is still running" in r.text
    assert u.settings["method"] == "TLI" and u.job.title == "adjust"
    u.job = None


def test_a_stray_score_that_made_the_guessed_scale_is_noted(client):
    """One 9 typed among scores of 1-6 (line 57): the guessed scale is 1-9, as the lowest and highest
    scores give it, and the page now says that 9 is given once with no 7 or 8 (the check ran on 1-9
    without a word); with the scale set to 1-6 the check names the line."""
    lines = severity_export().decode().splitlines()
    lines[56] = lines[56].rsplit(",", 1)[0] + ",9"
    c = login(client)
    uid, u = upload(c, ("\n".join(lines) + "\n").encode(), "typo.csv")
    page = c.get(f"/d/{uid}/columns").text
    assert u.settings["scale"] == "1-9"
    assert ("Guess: the scale 1-9 was taken from the lowest and highest scores, but 9 is given once and no score "
            "lies between it and 6: if the scale is 1-6, set it so") in page
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6"})
    assert u.job.wait(60) and u.job.state == "error" and u.job.error == "typo.csv:57: score: 9 is outside the scale 1-6"
    uid, u = upload(c, severity_export(), "clean.csv")
    assert u.settings["scale"] == "1-6" and "Guess: the scale" not in c.get(f"/d/{uid}/columns").text


def test_a_semicolon_export_with_decimal_commas_is_read_and_written_with_them(client, tmp_path):
    """A European spreadsheet's CSV: semicolons, scores written 3,0.  The check failed with "'3,0' is not a
    number (give decimal comma ...)", a setting the app did not have; now the Decimal mark is guessed
    (comma) and can be changed, and the adjusted file and the change list come back with semicolons and
    decimal commas, the spreadsheet's numbers."""
    import ratercal_cli as rc

    lines = severity_export().decode().splitlines()
    data = "\n".join(";".join(f"{x},0" if x.isdigit() else x for x in line.split(",")) for line in lines) + "\n"
    c = login(client)
    uid, u = upload(c, data.encode(), "semicolons.csv")
    page = c.get(f"/d/{uid}/columns").text
    assert u.settings["sep"] == "semicolon" and u.settings["decimal"] == "comma" and u.settings["scale"] == "1-6"
    assert '<option value="comma" selected>comma 3,25</option>' in page
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6",
                                      "sep": "semicolon", "decimal": "comma"})
    assert u.job.wait(120) and u.job.state == "done", u.job.error
    c.post(f"/d/{uid}/adjust", data={"method": "TLI"})
    assert u.job.wait(120) and u.job.state == "done", u.job.error
    rows = list(csv.DictReader(io.StringIO(c.get(f"/d/{uid}/file/adjusted").content.decode("utf-8-sig")), delimiter=";"))
    assert rows[0]["score"].endswith(",0") and "," in rows[0]["TLI_paper"] and "." not in rows[0]["TLI_paper"]
    (tmp_path / "s.csv").write_bytes(severity_export())
    ratings = rc.read_ratings(tmp_path / "s.csv", scale="1-6", paper_col="student")
    want = dict(zip(ratings.paper_ids, rc.adjust(ratings, "TLI").paper_scores("TLI")))
    assert {r["student"]: float(r["TLI_paper"].replace(",", ".")) for r in rows} == pytest.approx(want, abs=1e-4)
    changes = c.get(f"/d/{uid}/file/changes").content.decode("utf-8-sig").splitlines()
    assert changes[0].startswith("student;ratings;given;adjusted;change")   # (the file's paper column, by its name)
    assert changes[1].split(";")[2].count(",") == 1
    assert "<th>decimal mark</th><td>comma</td>" in c.get(f"/d/{uid}/file/memo").text


def severity_export(seed=7, n=120, twice=1.0) -> bytes:
    """``n`` students read by two of 8 raters (severities -1 to +1 on a 1-6 scale, noise 0.6), a line a
    reading: a design whose simulation (``Simulate the methods``) picks another method than the study.
    ``twice``: the share of students read twice (the others once: a sample double-read)."""
    import random

    rng = random.Random(seed)
    sev = dict(zip([f"R{k}" for k in range(1, 9)], [-1.0, -0.5, 0, 0, 0.3, 0.6, 1.0, -0.2]))
    out = ["student,rater,score"]
    for p in range(1, n + 1):
        th = rng.gauss(0, 1.2)
        for r in rng.sample(sorted(sev), 2 if twice == 1.0 or rng.random() < twice else 1):
            out.append(f"S{p:03d},{r},{max(1, min(6, round(3.5 + th - sev[r] + rng.gauss(0, 0.6))))}")
    return ("\n".join(out) + "\n").encode()


@pytest.mark.slow   # two checks, about 30 s
def test_a_sample_read_twice_is_told_the_advice_is_an_extrapolation(client):
    """300 students read once and about a fifth of them twice (a reliability sample): no cell of the
    corrected study has that design, and the page says its advice is an extrapolation from the one-rater
    cells, pointing to Simulate the methods (the page gave the study's pick as for that design, before)."""
    data = severity_export(seed=3, n=300, twice=0.2)
    readings = {}
    for line in data.decode().splitlines()[1:]:
        readings[line.split(",")[0]] = readings.get(line.split(",")[0], 0) + 1
    once, two = sum(v == 1 for v in readings.values()), sum(v == 2 for v in readings.values())
    assert once + two == 300 and 40 < two < 80
    c = login(client)
    uid, u = upload(c, data, "sample.csv")
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6"})
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert (f"Read with care: no cell of the study has this design ({once} read once, {two} read twice); the "
            "nearest, by the most common number of readings, is its one-rater cells") in r.text
    assert ("one-rater cells (every paper read once, raters compared by their score distributions): this advice is "
            "an extrapolation from them (Simulate the methods, on the columns page, ranks the methods on this "
            "file&#39;s own design)") in r.text
    assert "check --simulate" not in r.text
    # ... nor the report and the memo made in the app (they told a staff tester to run check --simulate R)
    c.post(f"/d/{uid}/adjust", data={"method": "recommended"})
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    for kind in ("memo", "report"):
        page = c.get(f"/d/{uid}/file/{kind}").text
        assert "Simulate the methods, on the columns page, ranks the methods" in page and "--simulate" not in page
    # a design the study has (every student read twice): no such line
    uid, u = upload(c, severity_export(), "twice.csv")
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6"})
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done" and "Read with care" not in r.text


@pytest.mark.slow
def test_with_the_simulation_the_file_is_adjusted_by_the_method_the_page_recommends(client, tmp_path):
    """Simulate the methods (10 replications): the page recommends the simulation's pick, OLS (shrunk: the
    simplest of those whose paired 95% interval with the best holds 0), and 'Adjust by the recommended method'
    applies it -- it applied the study's pick, MML (shrunk), before, under the page's recommendation of another
    method."""
    import ratercal_cli as rc

    c = login(client)
    uid, u = upload(c, severity_export(), "severity.csv")
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6",
                                      "simulate": "10"})
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert "Which method, and why:</b> ordinary least squares" in r.text and "(OLS, shrunk)" in r.text
    assert "What ordinary least squares" in r.text and "What the Rasch model" not in r.text
    c.post(f"/d/{uid}/adjust", data={"method": "recommended"})
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    rows = list(csv.DictReader(io.StringIO(c.get(f"/d/{uid}/file/adjusted").content.decode("utf-8-sig"))))
    assert {row["recommended_method"] for row in rows} == {"OLS (shrunk)"}
    # the library's TLS at the shrunk level, and (without the simulation) the study's other pick
    (tmp_path / "s.csv").write_bytes(severity_export())
    ratings = rc.read_ratings(tmp_path / "s.csv", scale="1-6", paper_col="student")
    assert rc.adjust(ratings, "recommended").groups[0].recommended == "MML (shrunk)"
    ols = dict(zip(ratings.paper_ids, rc.adjust(ratings, "OLS", shrinkage="kelley").paper_scores("OLS")))
    assert {row["student"]: float(row["recommended_paper"]) for row in rows} == pytest.approx(ols, abs=1e-4)


def rubric_export(seed=5, n=60) -> bytes:
    """A wide rubric: ``n`` students each read by two of 6 raters (severities -1 to +1), a line a reading,
    four criteria scored 1-6."""
    import random

    rng = random.Random(seed)
    sev = dict(zip([f"R{k}" for k in range(1, 7)], [-1.0, -0.4, 0, 0.2, 0.5, 1.0]))
    out = ["paper,rater,ideas,organization,voice,conventions"]
    for p in range(1, n + 1):
        th = rng.gauss(0, 1.2)
        for r in rng.sample(sorted(sev), 2):
            out.append(f"P{p:03d},{r}," + ",".join(str(max(1, min(6, round(3.5 + th + c - sev[r] + rng.gauss(0, 0.6)))))
                                                   for c in (-0.3, 0, 0.2, 0.4)))
    return ("\n".join(out) + "\n").encode()


@pytest.mark.slow
def test_a_rubric_decision_names_its_method_and_moves_on_the_totals(client, tmp_path):
    """A wide rubric with a cut on the total: the page said 'Which method: MML (shrunk)' (the first
    criterion's recommendation) over 'What MFRM changes', and the moves of a criterion's score (at most
    0.75) beside levels and a change list on the totals (moves up to 3.00).  Now: MFRM named as the app's
    method for a rubric, each criterion's recommendation beside it, and the moves of the totals."""
    import ratercal_cli as rc

    c = login(client)
    data = rubric_export()
    uid, u = upload(c, data, "rubric.csv")
    assert u.settings["score_cols"] == ["ideas", "organization", "voice", "conventions"]
    c.post(f"/d/{uid}/columns", data={"paper": "paper", "rater": "rater", "scale": "1-6", "cut": "14",
                                      "score_cols": u.settings["score_cols"]})
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert "Which method, and why:</b> the many-facet Rasch model (MFRM), the app's method for a rubric" in r.text
    assert re.search(r"for each criterion on its own:\s+conventions: \S+.*; ideas: \S+.*; organization: \S+.*; "
                     r"voice: \S+", r.text)
    # the totals' moves: the library's MFRM totals against the given totals (each reading's sum, averaged)
    given = {}
    for line in data.decode().splitlines()[1:]:
        paper, _, *scores = line.split(",")
        given.setdefault(paper, []).append(sum(map(int, scores)))
    (tmp_path / "r.csv").write_bytes(data)
    ratings = rc.read_ratings(tmp_path / "r.csv", scale="1-6", score_cols=["ideas", "organization", "voice",
                                                                          "conventions"])
    totals = dict(zip(ratings.paper_ids, rc.adjust(ratings, "MFRM").paper_totals("MFRM")))
    moves = {p: abs(totals[p] - sum(v) / len(v)) for p, v in given.items()}
    largest = max(moves, key=moves.get)
    mean = sum(moves.values()) / len(moves)
    assert (f"their totals over the 4 criteria (the change list's, on which the cuts are) move by\n{mean:.2f} on "
            f"average, at most {moves[largest]:.2f} ({largest})") in r.text
    assert moves[largest] > 2   # (a criterion's score moved at most a quarter of that)
    assert "no standard errors for a rubric's totals yet" in r.text
    c.post(f"/d/{uid}/adjust", data={"method": "MFRM"})
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert ("A rubric: the moves are of a student's score on a criterion (the mean over the criteria); the "
            "levels, and the change list, are of the totals.") in c.get(f"/d/{uid}/file/memo").text
    # the command line's adjust -m recommended is offered too, with its numbers (a staff tester's totals differed,
    # the app's MFRM against the command line's recommendation)
    decision = c.get(f"/d/{uid}/decision").text
    assert 'option value="recommended">the recommended method of each criterion' in decision
    assert "choose the recommended method of each\ncriterion below" in decision
    c.post(f"/d/{uid}/adjust", data={"method": "recommended"})
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    got = list(csv.DictReader(io.StringIO(c.get(f"/d/{uid}/file/adjusted").content.decode("utf-8-sig"))))
    cli = rc.adjust(ratings, "recommended")
    want = dict(zip(ratings.paper_ids, cli.paper_totals("recommended")))
    assert got and all(abs(float(row["recommended_total"]) - want[row["paper"]]) < 1e-3 for row in got)


@pytest.mark.slow
def test_a_wide_rubric_comes_back_wide(client):
    from support import ROOT

    c = login(client)
    data = (ROOT / "examples" / "rubric_year1.csv").read_bytes()
    uid, u = upload(c, data, "rubric_year1.csv")
    assert u.settings["score_cols"] == ["style", "org", "conv", "sent_form"] and u.settings["score"] is None
    form = {"paper": "student", "rater": "rater", "scale": "1-6", "cut": "14",
            "score_cols": ["style", "org", "conv", "sent_form"]}
    c.post(f"/d/{uid}/columns", data=form)
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    lc = u.change_list.changes[0]
    assert f"{lc.moved} change level ({lc.up} up, {lc.down} down)" in r.text and r.text.count("Which method, and why:") == 1
    c.post(f"/d/{uid}/adjust", data={"method": "MFRM"})
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    lines = c.get(f"/d/{uid}/file/adjusted").content.decode("utf-8-sig").splitlines()
    assert len(lines) == 1001 and lines[0] == ("student,rater,style,style_MFRM,org,org_MFRM,conv,conv_MFRM,"
                                               "sent_form,sent_form_MFRM,flag,MFRM_total")
    totals = dict(zip(u.adjusted.ratings.paper_ids, u.adjusted.paper_totals("MFRM")))
    for line in lines[1:]:
        cells = line.split(",")
        assert float(cells[-1]) == pytest.approx(totals[cells[0]], abs=1e-4)


def _workbook(first: str, first_rows: list, data: str) -> bytes:
    """A workbook of two sheets: ``first`` holding ``first_rows``, then ``data`` holding :func:`small_export`."""
    wb = openpyxl.Workbook()
    wb.active.title = first
    for row in first_rows:
        wb.active.append(row)
    ws = wb.create_sheet(data)
    for row in csv.reader(io.StringIO(small_export().decode())):
        ws.append([int(x) if x.isdigit() else x for x in row])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_another_sheet_is_previewed_before_it_is_checked(client):
    """A workbook of two sheets: choosing the second shows its rows and guesses first (the settings of the
    first sheet's preview are not checked against it), then the check reads it."""
    c = login(client)
    uid, u = upload(c, _workbook("Notes", [["exported", "by"], ["2024-06-01", "district system"]], "Scores"),
                    "two sheets.xlsx")
    # the first sheet does not look like ratings: the first that does is shown, and the page says so (a staff
    # helper's "Read me" sheet was taken, a paragraph guessed for the paper column, and the check failed with
    # "missing column(s) rater, score" and no word of the sheet beside it)
    assert u.sheets == ["Notes", "Scores"] and u.header[:2] == ["Student ID", "Reader"]
    page = c.get(f"/d/{uid}/columns").text
    assert ("Guess: the workbook has 2 sheets (Notes, Scores); the first whose columns look like ratings, Scores, is "
            "shown (choose another sheet above)") in page and '<option value="Scores" selected>' in page
    r = c.post(f"/d/{uid}/columns", data={"paper": "Student ID", "sheet": "Notes"}, follow_redirects=False)
    assert r.headers["location"] == f"/d/{uid}/columns" and u.job is None
    assert u.header == ["exported", "by"]   # (asked for: shown as it is)
    r = c.post(f"/d/{uid}/columns", data={"paper": "exported", "sheet": "Scores"}, follow_redirects=False)
    assert r.headers["location"] == f"/d/{uid}/columns" and u.job is None
    page = c.get(f"/d/{uid}/columns").text
    assert u.header[:4] == ["Student ID", "Reader", "Reading", "Points"] and "S000" in page
    assert '<option value="Scores" selected>' in page and u.settings["paper"] == "Student ID"
    c.post(f"/d/{uid}/columns", data={**{k: v for k, v in u.settings.items() if isinstance(v, str)},
                                      "scale": "1-6", "group": ""})
    assert u.job.wait(120) and u.job.state == "done", u.job.error
    assert u.adjusted.ratings.n_papers == 40
    # Excel's empty "Sheet1" before the data's "Sheet2": the page was "empty sheet", a dead end (a verifying helper)
    uid, u = upload(c, _workbook("Sheet1", [], "Sheet2"), "blank first.xlsx")
    page = c.get(f"/d/{uid}/columns").text
    assert u.error is None and u.header[:2] == ["Student ID", "Reader"] and u.settings["sheet"] == "Sheet2"
    assert "the first whose columns look like ratings, Sheet2, is shown" in page


def big_rubric(students=12000, raters=20, seed=1) -> bytes:
    """A wide export of three criteria (1-6), each student read by two of ``raters`` raters: about 400 KB
    whose check (a many-facet fit and its tables) takes several seconds in one go, no progress step inside."""
    import numpy as np

    rng = np.random.default_rng(seed)
    severity = rng.normal(0, 0.5, raters)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["student", "rater", "style", "org", "conv"])
    for p in range(students):
        q = rng.normal(3.5, 1)
        for r in rng.choice(raters, 2, replace=False):
            w.writerow([f"S{p:05d}", f"R{r}", *np.clip(np.rint(q - severity[r] + rng.normal(0, 0.7, 3)), 1, 6).astype(int)])
    return out.getvalue().encode()


def test_cancel_stops_a_long_fit_inside_it(tmp_path):
    """Cancel during one long fit (the check of a 12,000-student rubric: several seconds with no step at which
    a thread could stop): the worker process is ended within a couple of seconds, the page says so, nothing
    is kept.  With the worker a thread, Cancel waited for the fit to end."""
    import os
    import time

    app = create_app(token=TOKEN, port=8000, folder=tmp_path, max_upload=2 * 2**20)
    with TestClient(app, base_url=BASE) as c:
        c.app_state = app.state.ratercal
        login(c)
        uid, u = upload(c, big_rubric(), "big.csv")
        before = sorted(p.name for p in u.folder.iterdir())
        c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "scale": "1-6",
                                          "score_cols": ["style", "org", "conv"]})
        for _ in range(1200):   # until the check's fit has begun
            if u.job.stage_text.startswith("Checking the raters"):
                break
            time.sleep(0.05)
        time.sleep(0.5)
        page = c.get(f"/d/{uid}/job").text
        assert u.job.state == "running" and "Checking the raters" in page and u.job.total is None   # no step
        pid = u.job.pid
        os.kill(pid, 0)   # the worker is there
        t0 = time.monotonic()
        r = c.post(f"/d/{uid}/cancel")
        assert u.job.wait(5)
        stopped = time.monotonic() - t0
        assert u.job.state == "cancelled" and stopped < 3, stopped
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)   # gone (ended and reaped)
        assert "Cancelled" in r.text and "Cancelled" in c.get(f"/d/{uid}/job").text
        assert u.checked is None and u.adjusted is None
        assert sorted(p.name for p in u.folder.iterdir()) == before


def write_then_wait(job, folder):
    """A worker that writes a partial file into its scratch folder, then works on (a minute)."""
    import time

    folder.mkdir()
    (folder / "partial.csv").write_text("student,score\n")
    job.stage("writing")
    time.sleep(60)


def die(job, code):
    import os

    job.stage("about to die")
    os._exit(code)


def test_a_cancelled_job_leaves_no_files_and_a_dead_worker_says_so(tmp_path):
    import os
    import time

    from ratercal_cli.app.jobs import Job

    scratch = tmp_path / "scratch"
    job = Job(write_then_wait, "t", (scratch,), scratch=scratch)
    for _ in range(600):
        if job.stage_text == "writing":
            break
        time.sleep(0.05)
    assert job.stage_text == "writing" and (scratch / "partial.csv").exists()
    job.cancel()
    assert job.wait(5) and job.state == "cancelled" and not scratch.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(job.pid, 0)
    dead = Job(die, "t", (3,))
    assert dead.wait(30) and dead.state == "error" and dead.error == "the worker stopped (exit code 3)"



def test_a_windows_csv_is_read_as_windows_1252_and_the_page_says_so(client):
    """Excel's "CSV" on Windows is Windows-1252: the app refused it ("give encoding (e.g. latin-1 or
    cp1252)"), and had no field for it.  It is read as such, the Encoding field says "guessed", and the
    names come back whole."""
    c = login(client)
    text = small_export().decode("utf-8").replace("Reader", "Lecteur").replace("R1,", "Zoë Thérèse,")
    uid, u = upload(c, text.encode("cp1252"))
    assert u.error is None and u.settings["encoding"] == "cp1252" and u.encoding_guessed
    page = c.get(f"/d/{uid}/columns").text
    assert '<option value="cp1252" selected>Windows-1252</option>' in page and "guessed: not UTF-8" in page
    form = {"paper": "Student ID", "rater": "Lecteur", "score": "Points", "order": "Reading", "group": "",
            "scale": "1-6", "cut": "3.5", "levels": "", "discrepancy": "1", "simulate": "0", "encoding": "cp1252"}
    c.post(f"/d/{uid}/columns", data=form, follow_redirects=False)
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert "Zoë Thérèse" in u.adjusted.ratings.rater_ids
    # told UTF-8 instead, the page names its own field
    form["encoding"] = ""
    c.post(f"/d/{uid}/columns", data=form, follow_redirects=False)
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "error" and "not UTF-8 text" in u.job.error and "Encoding" in u.job.error


@pytest.mark.parametrize("header, expect", [
    (["Schule", "Kennung", "Bewerter", "Punkte"], ("Kennung", "Bewerter", "Punkte", "Schule")),
    (["École", "Élève", "Correcteur", "Note"], ("Élève", "Correcteur", "Note", "École")),
    (["Escuela", "Alumno", "Evaluador", "Puntuación"], ("Alumno", "Evaluador", "Puntuación", "Escuela")),
])
def test_columns_named_in_other_languages_are_guessed(header, expect):
    """A German export (Schule, Kennung, Bewerter, Punkte) was guessed with the raters as the students, the
    school as the rater and the zero-padded ids as a criterion on 1-240 (a browser tester)."""
    from ratercal_cli.app.guess import guess_columns

    rows = [dict(zip(header, [s, f"{p:06d}", f"R{s}{(p + k) % 4}", str((p + k) % 5 + 1)]))   # (each school its raters:
            for s in ("A", "B") for p in range(20) for k in range(2)]                          # the group, a place)
    g = guess_columns(header, rows)
    assert (g.paper, g.rater, g.score, g.group) == expect and g.scale == "1-5" and not g.score_cols


@pytest.mark.parametrize("names", [["rater_Adams", "rater_Baker", "rater_Cole"], ["Reader: Hill", "Reader: Ng", "Reader: Ortiz"],
                                   ["rater_1", "rater_2", "rater_3"]])
def test_a_wide_exports_rater_columns_named_after_people_are_guessed(names):
    """A wide export (a row per student, a column per rater) whose rater columns are named after the raters was
    guessed as a long file, rater_Adams the rater and the others criteria (a staff tester); the columns are rater
    columns where they hold scores, and a long file's rater_id beside rater_name is still its rater."""
    from ratercal_cli.app.guess import guess_columns

    header = ["student", *names]
    rows = [{"student": f"S{p}", **{n: ("" if (p + k) % 3 == 0 else str((p + k) % 5 + 1)) for k, n in enumerate(names)}}
            for p in range(30)]
    g = guess_columns(header, rows)
    assert (g.paper, g.rater, g.rater_cols, g.score_cols, g.scale) == ("student", None, names, [], "1-5")
    long = [{"student": f"S{p}", "rater_id": str(p % 4 + 1), "rater_name": f"N{p % 4}", "score": str(p % 5 + 1)}
            for p in range(30)]
    g = guess_columns(["student", "rater_id", "rater_name", "score"], long)
    assert (g.rater, g.rater_cols, g.score) == ("rater_id", [], "score")


def test_a_rater_of_few_papers_is_left_out_by_the_pages_setting(client):
    """A rater of 3 papers, each read by two others too: Chapter 5's rule says NO, and its reason names the page's
    setting "Leave out raters" (not the library's leave_out=), and with it set the readings are left out, the rule
    no longer says NO and the memo lists the setting.  (The one recommendation goes on without it: the rater's
    papers were read by others too, tests/practice/test_few_paper_raters.py.)"""
    rng = np.random.default_rng(5)
    rows = ["paper,rater,score"]
    for p in range(120):
        q = rng.normal(3.0, 1.0)
        for j in rng.choice(6, 2, replace=False):
            rows.append(f"S{p},R{j + 1},{int(np.clip(np.rint(q + (j - 2.5) * 0.4 + rng.normal(0, 0.5)), 1, 6))}")
    rows += ["S0,X9,4", "S1,X9,2", "S2,X9,5"]
    data = ("\n".join(rows) + "\n").encode()
    c = login(client)
    form = {"paper": "paper", "rater": "rater", "score": "score", "order": "", "group": "", "scale": "1-6",
            "cut": "", "levels": "", "discrepancy": "1", "simulate": "0"}
    uid, u = upload(c, data)
    c.post(f"/d/{uid}/columns", data=form)
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert u.checked.reports[0].recommendation == "NO"
    assert "(to leave its 3 reading(s) out instead: \u201cLeave out raters\u201d: X9)" in u.checked.reports[0].reason
    assert "leave_out=" not in r.text
    uid, u = upload(c, data)
    c.post(f"/d/{uid}/columns", data={**form, "leave_out": "X9"})
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert u.checked.reports[0].recommendation != "NO" and "X9" not in u.adjusted.ratings.rater_ids
    c.post(f"/d/{uid}/adjust", data={"method": "recommended"})
    run_job(c, u, f"/d/{uid}/job")
    memo = c.get(f"/d/{uid}/file/memo").text
    assert "<th>raters left out</th><td>X9</td>" in memo
    adjusted = list(csv.DictReader(io.StringIO(c.get(f"/d/{uid}/file/adjusted").content.decode("utf-8-sig"))))
    assert [r_["flag"] for r_ in adjusted if r_["rater"] == "X9"] == ["left out"] * 3


def test_a_guessed_scale_and_the_file_warnings_are_on_the_decision_page(client):
    """A staff tester's file: scores 2-7 on a 0-5 rubric (a typo 7, no one gave 0 or 1), and one rater written
    "R2" and "r2".  The app filled Scale with 2-7 unmarked and checked on it without a word (the command line
    warns where no --scale is given), and the look-alike labels' warning was only in the full report, telling
    the user to "give fold_labels", which the page had no field for.  The scale is marked guessed, the decision
    page says it and the file's warnings in the page's words, and "Merge look-alike labels" merges them."""
    rows = ["student,rater,score"] + [f"S{p:03d},{'r2' if p == 7 and k == 1 else f'R{(p + k) % 4 + 1}'},"
                                      f"{7 if p == 3 and k == 0 else 2 + (p + 2 * k) % 4}" for p in range(40) for k in range(2)]
    c = login(client)
    uid, u = upload(c, ("\n".join(rows) + "\n").encode(), "typo.csv")
    assert u.settings["scale"] == "2-7" and 'id="scale_guessed"' in c.get(f"/d/{uid}/columns").text
    assert 'id="scale_confirmed"' in c.get(f"/d/{uid}/columns").text   # (a box: "this is the rubric's scale")
    form = {"paper": "student", "rater": "rater", "score": "score", "scale": "2-7"}
    c.post(f"/d/{uid}/columns", data=form)
    page = html.unescape(run_job(c, u, f"/d/{uid}/decision").text)
    assert 'id="file_warnings"' in page
    assert ("typo.csv: \u201cScale\u201d 2-7 is the lowest and highest scores found in the file, not a scale given: "
            "if the rubric's is another") in page
    assert "counted as different raters (give \u201cMerge look-alike labels\u201d to merge them)" in page
    assert "fold_labels" not in page and u.checked.reports[0].raters and len(u.checked.reports[0].raters) == 5
    c.post(f"/d/{uid}/columns", data={**form, "scale": "0-7", "fold_labels": "on"})   # (set, and merged)
    page = html.unescape(run_job(c, u, f"/d/{uid}/decision").text)
    assert "lowest and highest scores found" not in page and "counted as different raters" not in page
    assert "folded into one label each (\u201cMerge look-alike labels\u201d): 'R2' <- 'r2'" in page
    assert len(u.checked.reports[0].raters) == 4
    # the guess confirmed as the rubric's scale (typed as guessed, it was still "not a scale given": a staff tester)
    c.post(f"/d/{uid}/columns", data={**form, "scale_confirmed": "1"})
    assert "lowest and highest scores found" not in html.unescape(run_job(c, u, f"/d/{uid}/decision").text)
    # a scale guessed as a rubric's would be (1-6, every score given) is not doubted, typed or left so
    uid, u = upload(c, severity_export(), "clean.csv")
    assert u.settings["scale"] == "1-6"
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6"})
    assert "lowest and highest scores found" not in run_job(c, u, f"/d/{uid}/decision").text


def _leave_out_export() -> bytes:
    """The README example's grade 8 with a rater R99 reading papers G8-001..005 third (a staff tester's file)."""
    from support import ROOT

    rows = list(csv.DictReader(open(ROOT / "examples" / "ratings.csv", newline="")))
    out, extra = ["paper,rater,score"], dict(zip([f"G8-00{k}" for k in range(1, 6)], [1, 1, 2, 1, 0]))
    grade8 = [r for r in rows if r["grade"] == "8"]
    for k, r in enumerate(grade8):
        out.append(f"{r['paper']},{r['rater']},{r['score']}")
        if r["paper"] in extra and (k + 1 == len(grade8) or grade8[k + 1]["paper"] != r["paper"]):
            out.append(f"{r['paper']},R99,{extra[r['paper']]}")
    return ("\n".join(out) + "\n").encode()


@pytest.mark.slow   # two simulations of 20 replications
def test_the_apps_simulation_draws_the_files_third_reading_rule_as_check_does(client, tmp_path):
    """The app's "Simulate the methods" passed check no third-reading rule, so its simulated design had no third
    readings: MN (shrunk) where check --simulate 20 (its --discrepancy 1) recommended TMN (shrunk), and every
    download then differed from the command's.  It passes the page's rule now (1 by default)."""
    import ratercal_cli as rc

    c = login(client)
    uid, u = upload(c, _leave_out_export(), "g8.csv")
    c.post(f"/d/{uid}/columns", data={"paper": "paper", "rater": "rater", "score": "score", "scale": "0-5",
                                      "leave_out": "R99", "simulate": "20"})
    run_job(c, u, f"/d/{uid}/decision")
    assert u.job.state == "done", u.job.error
    (tmp_path / "g8.csv").write_bytes(_leave_out_export())
    r = rc.read_ratings(tmp_path / "g8.csv", scale="0-5", leave_out=["R99"])
    by_check = rc.check(r, simulate=20, discrepancy=1)
    assert u.checked.report().decision.label == by_check.report().decision.label == "MN (shrunk)"
    # (the same label without the rule since the simulation's equivalents are the methods whose paired interval
    # holds 0, as its table shows: the designs drawn are told apart by their notes and their numbers)
    rule = "third readings by the file's rule: when the first two readers differ by more than 1"
    assert any(n.startswith(rule) for n in u.checked.simulations[0].design_notes())
    assert np.array_equal(u.checked.simulations[0].values, by_check.simulations[0].values, equal_nan=True)
    assert not any(n.startswith(rule) for n in rc.check(r, simulate=20).simulations[0].design_notes())


def test_a_failed_adjustment_leaves_no_files_of_the_one_before(client):
    """A staff tester's: after adjusting, another method that fails (one the file cannot be fitted by) left the
    files page saying it over the earlier method's adjusted file and memo.  The earlier files go when another
    adjustment starts: the page goes back to the decision, the downloads are gone.  (One reading a student: TLI
    adjusts it, OLS needs two.)"""
    c = login(client)
    once = b"student,rater,score\n" + b"".join(f"S{p:03d},R{p % 5 + 1},{1 + (p * 7) % 6}\n".encode() for p in range(60))
    uid, u = upload(c, once, "once.csv")
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6"})
    run_job(c, u, f"/d/{uid}/decision")
    c.post(f"/d/{uid}/adjust", data={"method": "TLI"})
    run_job(c, u, f"/d/{uid}/files")
    assert u.job.state == "done" and c.get(f"/d/{uid}/file/adjusted").status_code == 200
    old = {p for p, _ in u.files.values()}
    c.post(f"/d/{uid}/adjust", data={"method": "OLS"})
    assert u.job.wait(60) and u.job.state == "error" and "OLS needs two or more raters per paper" in u.job.error
    assert not u.files and not any(p.exists() for p in old)
    assert c.get(f"/d/{uid}/file/adjusted").status_code == 404
    assert c.get(f"/d/{uid}/files", follow_redirects=False).headers["location"].endswith("/decision")


def test_a_pair_of_columns_per_reading_is_guessed_and_every_reading_read(client):
    """A staff tester's export of a line per student with Correcteur k and Note k for each reading: the app took
    Correcteur 1 and Note 1 for a long file's rater and score and said "160 ratings of 160 students" (the file
    holds 340), the other readings dropped without a word.  The pairs are guessed, shown in the Reading columns
    field, and every reading is read."""
    c = login(client)
    lines = ["Niveau;ID élève;Correcteur 1;Note 1;Correcteur 2;Note 2;Correcteur 3;Note 3"]
    for p in range(40):
        a, b, d = f"R{p % 5}", f"R{(p + 2) % 5}", f"R{(p + 4) % 5}"
        s1, s2 = p % 5 + 1, (p * 3) % 5 + 1
        third = f"{d};{(s1 + s2) // 2}" if abs(s1 - s2) > 1 else ";"
        lines.append(f"{5 + p % 2 * 3};S{p:03d};{a};{s1};{b};{s2};{third}")
    data = ("\n".join(lines) + "\n").encode()
    n = sum(3 if x.split(";")[6] else 2 for x in lines[1:])
    uid, u = upload(c, data, "notes.csv")
    assert u.settings["rater_cols"] == ["Correcteur 1:Note 1", "Correcteur 2:Note 2", "Correcteur 3:Note 3"]
    assert u.settings["rater"] is None and u.settings["score"] is None
    page = c.get(f"/d/{uid}/columns").text
    assert 'value="Correcteur 1:Note 1, Correcteur 2:Note 2, Correcteur 3:Note 3"' in page
    form = {"paper": "ID élève", "group": "Niveau", "scale": "1-5", "sep": "semicolon", "discrepancy": "1",
            "simulate": "0", "reading_cols": "Correcteur 1:Note 1, Correcteur 2:Note 2, Correcteur 3:Note 3"}
    c.post(f"/d/{uid}/columns", data=form, follow_redirects=False)
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    assert u.checked.ratings.n_ratings == n and u.checked.ratings.n_papers == 40
    assert f"{n} ratings" in r.text or f"{n:,} ratings" in r.text, r.text[:3000]
    # an entry that is no pair is an error, not dropped (the check ran on the first reading alone, a tester)
    form["reading_cols"] = "Correcteur 1:Note 1, Correcteur 2"
    c.post(f"/d/{uid}/columns", data=form, follow_redirects=False)
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "error" and "'Correcteur 2': give each reading as RATER_COLUMN:SCORE_COLUMN" in u.job.error


def test_rater_columns_named_after_people_are_told_from_a_rubric_by_their_blanks():
    """A staff tester's sheet of a line per student and a column per rater named after the person (``@Kim``,
    ``Baker``, ``Mme Dubois``: each line fills the two or three who read it) beside a school grade was guessed as a
    rubric of nine criteria (the grade among them) with the row average as the rater.  Numeric columns blank on
    many lines and together filled on every one are rater columns; a rubric's criteria, filled on every line,
    stay criteria."""
    from ratercal_cli.app.guess import guess_columns

    raters = ["@Kim", "Baker", "Hernández", "Mme Dubois", "Renée O'Hara"]
    header = ["Niveau", "ID élève", *raters, "Moyenne"]
    rows = []
    for p in range(30):
        who = {raters[p % 5], raters[(p + 2) % 5]}
        cells = {r: (str((p + k) % 5 + 1) if r in who else "") for k, r in enumerate(raters)}
        rows.append({"Niveau": str(5 + 3 * (p % 2)), "ID élève": f"S{p:04d}", **cells, "Moyenne": f"{p % 5 + 1}.5"})
    g = guess_columns(header, rows)
    assert (g.paper, g.rater, g.rater_cols, g.score_cols, g.scale) == ("ID élève", None, raters, [], "1-5")
    rubric = [{"student": f"S{p}", "rater": f"R{p % 4}", **{c: str((p + k) % 6 + 1) for k, c in enumerate("abcd")}}
              for p in range(30)]
    g = guess_columns(["student", "rater", "a", "b", "c", "d"], rubric)
    assert (g.score_cols, g.rater_cols) == (["a", "b", "c", "d"], [])


def test_a_files_page_left_open_does_not_download_a_later_adjustments_files(client):
    """A staff tester's two tabs: tab A adjusted by TLI, tab B then by the recommended method; tab A's link, under
    "adjusted by TLI", downloaded the recommended method's file. The links carry which adjustment's files they
    name, and one whose files were replaced says so (409) with a link to the files page; the new page's links
    serve the new files."""
    import re

    c = login(client)
    uid, u = upload(c, severity_export(), "severity.csv")
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6"})
    run_job(c, u, f"/d/{uid}/job")
    c.post(f"/d/{uid}/adjust", data={"method": "TLI"})
    run_job(c, u, f"/d/{uid}/job")
    page_a = c.get(f"/d/{uid}/files").text
    link_a = re.search(r'id="dl-adjusted" href="([^"]+)"', page_a).group(1)
    assert "?v=out-" in link_a
    first = c.get(link_a)
    assert first.status_code == 200 and b"TLI" in first.content.splitlines()[0]
    c.post(f"/d/{uid}/adjust", data={"method": "MN"})   # (tab B)
    run_job(c, u, f"/d/{uid}/job")
    stale = c.get(link_a)
    assert stale.status_code == 409 and "were replaced" in stale.text and f'href="/d/{uid}/files"' in stale.text
    assert "the files of MN are there now" in stale.text
    link_b = re.search(r'id="dl-adjusted" href="([^"]+)"', c.get(f"/d/{uid}/files").text).group(1)
    assert link_b != link_a
    fresh = c.get(link_b)
    assert fresh.status_code == 200 and b"MN" in fresh.content.splitlines()[0] and b"TLI" not in fresh.content
    assert c.get(link_b.replace("/file/adjusted", "/file/memo") + "&view=1").status_code == 200
    # a check anew (the columns page) takes the files away: the old link says so, not "no such page"
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6"})
    run_job(c, u, f"/d/{uid}/job")
    gone = c.get(link_b)
    assert gone.status_code == 409 and "there are no files now" in gone.text


def test_a_school_read_across_by_its_raters_is_not_guessed_as_the_group():
    """A staff tester's export with a school column: the app took it for the group, so each school was adjusted
    alone (by three methods) though its raters read in every school. A place word is the group only where each
    rater reads in one of its places; a grade stays the group either way."""
    from ratercal_cli.app.guess import guess_columns

    header = ["student", "rater", "score", "Schule"]
    across = [{"student": f"S{i}", "rater": f"R{i % 3}", "score": "3", "Schule": ["Nord", "Ost", "Süd"][i % 2]}
              for i in range(12)]
    g = guess_columns(header, across)
    assert g.group is None and any("'Schule' not taken as the group" in n for n in g.notes)
    apart = [dict(r, Schule=["Nord", "Ost", "Süd"][int(r["rater"][1])]) for r in across]
    assert guess_columns(header, apart).group == "Schule"
    grade = [dict(r, grade=str(5 + i % 2)) for i, r in enumerate(across)]
    assert guess_columns(["student", "rater", "score", "grade"], grade).group == "grade"
    # the same in a paper's row, a pair of columns a reading or a column a rater (the wide file had School guessed)
    pairs = [{"student": f"S{i}", "Reader 1": f"R{i % 3}", "Score 1": "3", "Reader 2": f"R{(i + 1) % 3}",
              "Score 2": "4", "School": ["Nord", "Ost"][i % 2]} for i in range(12)]
    g = guess_columns(list(pairs[0]), pairs)
    assert g.rater_cols == ["Reader 1:Score 1", "Reader 2:Score 2"] and g.group is None
    assert any("'School' not taken as the group" in n for n in g.notes)
    own = [dict(r, **{"Reader 1": "A" if r["School"] == "Nord" else "C", "Reader 2": "B" if r["School"] == "Nord"
                      else "D"}) for r in pairs]
    assert guess_columns(list(own[0]), own).group == "School"
    columns = [{"student": f"S{i}", "R1": "3" if i % 3 else "", "R2": "4" if i % 3 != 1 else "", "R3": "2" if i % 3 != 2
                else "", "School": ["Nord", "Ost"][i % 2]} for i in range(12)]
    g = guess_columns(list(columns[0]), columns)
    assert g.rater_cols == ["R1", "R2", "R3"] and g.group is None
    # ... and a column a rater named after the person, found by its blanks after the group was guessed (a verifier's)
    people = [{"student": r["student"], "Adams": r["R1"], "Baker": r["R2"], "Chen": r["R3"], "School": r["School"]}
              for r in columns]
    g = guess_columns(list(people[0]), people)
    assert g.rater_cols == ["Adams", "Baker", "Chen"] and g.group is None


def checked_and_adjusted(c, data: bytes, name: str, method: str):
    """Upload ``data`` (columns student, rater, score on 1-6), check it, adjust by ``method``: ``(id, upload, the
    files page)``."""
    uid, u = upload(c, data, name)
    c.post(f"/d/{uid}/columns", data={"paper": "student", "rater": "rater", "score": "score", "scale": "1-6"})
    run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    c.post(f"/d/{uid}/adjust", data={"method": method})
    r = run_job(c, u, f"/d/{uid}/job")
    assert u.job.state == "done", u.job.error
    return uid, u, r


def random_export(seed=11, n=150) -> bytes:
    """``n`` students read by two of 6 raters, every score drawn at random on 1-6: no paper differs from another."""
    import random

    rng = random.Random(seed)
    out = ["student,rater,score"]
    for p in range(1, n + 1):
        for r in rng.sample([f"R{k}" for k in range(1, 7)], 2):
            out.append(f"S{p:03d},{r},{rng.randint(1, 6)}")
    return ("\n".join(out) + "\n").encode()


def test_the_adjustments_warnings_are_on_the_files_page_and_in_the_memo(client):
    """Random scores adjusted in the app: the command line and the report warn that the papers do not differ
    detectably; the files page and the memo, the page a committee signs, said nothing (a staff tester)."""
    from ratercal_cli.practice.adjust import adjust
    from ratercal_cli.practice.ratings_file import read_ratings_table

    c = login(client)
    uid, u, r = checked_and_adjusted(c, random_export(), "random.csv", "TLI")
    # the library's warnings on the same file, as the command line prints them
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "random.csv"
        path.write_bytes(random_export())
        expected = [w.replace(str(path), "random.csv") for w in   # (the page names the file as the user knows it)
                    adjust(read_ratings_table(path, scale=(1, 6), paper_col="student").ratings, "TLI").warnings]
    signal = [w for w in expected if "do not differ detectably" in w]
    assert len(signal) == 1
    box = r.text.split('id="adjust_warnings"')[1].split("</div>")[0]
    memo = c.get(f"/d/{uid}/file/memo").text
    section = memo.split("<h2>What the adjustment warned</h2>")[1].split("</ul>")[0]
    assert [html.unescape(p.split("</p>")[0]) for p in box.split('<p class="warn">')[1:]] == expected
    assert [html.unescape(li.split("</li>")[0]) for li in section.split("<li>")[1:]] == expected
    # a file whose raters and papers differ: no such box
    uid, u, r = checked_and_adjusted(c, severity_export(), "severity.csv", "TLI")   # (random assignment)
    assert u.adjusted.warnings == [] and 'id="adjust_warnings"' not in r.text
    assert "What the adjustment warned" not in c.get(f"/d/{uid}/file/memo").text


def test_the_app_leaves_out_the_command_lines_pointers_it_has_no_setting_for(client):
    """Two groups of raters that share no paper, adjusted by the recommended method in the app: the page and the memo
    ended "...; if they were, say assignment random", a setting the app has not (a verifying helper)."""
    import random

    rng = random.Random(2)
    lines = ["student,rater,score"]
    for p in range(200):
        quality, team = rng.gauss(3.5, 1.0), ("A1", "A2", "A3") if p < 100 else ("B1", "B2", "B3")
        lines += [f"S{p:03d},{r},{min(6, max(1, round(quality - (1.0 if r < 'B' else 0) + rng.gauss(0, 0.5))))}"
                  for r in rng.sample(team, 2)]
    c = login(client)
    uid, u, r = checked_and_adjusted(c, ("\n".join(lines) + "\n").encode(), "apart.csv", "recommended")
    assert any("share no paper" in w for w in u.adjusted.warnings)
    memo = c.get(f"/d/{uid}/file/memo").text
    for text in (r.text, memo):
        assert "share no paper" in text and "say assignment" not in text and "--assignment" not in text


def confounded_export() -> bytes:
    """400 students, two readings each; the weakest quarter read by R1 (and another), the rest by two of R2-R8."""
    from support import confounded_csv

    return confounded_csv("student", "S{:03d}").encode()


def test_a_method_that_compares_scores_on_a_confounded_file_is_warned(client):
    """A staff helper chose TLI in the app on a file the check found confounded (the weakest papers read by one
    rater): its files page said nothing, the memo only "To check: check recommends PCM"."""
    c = login(client)
    uid, u, r = checked_and_adjusted(c, confounded_export(), "confounded.csv", "TLI")
    assert u.checked.reports[0].assignment_found.confounded
    said = [w for w in u.adjusted.warnings if "the check found the papers' quality differing by rater" in w]
    assert len(said) == 1 and said[0].startswith("confounded.csv: TLI: ")
    assert said[0].endswith(f"the check recommends {u.checked.reports[0].decision.label}")
    assert html.escape(said[0], quote=False).replace("'", "&#39;") in r.text
    assert "differing by rater" in c.get(f"/d/{uid}/file/memo").text
    uid, u, r = checked_and_adjusted(c, confounded_export(), "confounded.csv", "recommended")
    assert not any("differing by rater (" in w for w in u.adjusted.warnings)
