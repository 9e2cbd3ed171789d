"""``ratercal app`` in a real browser: Debian's Chromium driven by Playwright for Python (its own
browser download is not used: ``executable_path`` points at the system's).  The README's example
export through the whole flow, with a wrong guess corrected; a messy export whose labels are
<script> and =HYPERLINK(...); a bad file.  Screenshots of each step go to $RATERCAL_SCREENSHOTS (or the
test's temporary folder); docs/app/ holds the README's.  Skipped, with the reason, where Chromium or
Playwright is missing (.ci/run installs Chromium)."""

import csv
import io
import os
import shutil
from pathlib import Path

import openpyxl
import pytest

from support import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason="no Chromium: apt-get install chromium (.ci/run does)")]
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (.[test])")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def shots(tmp_path):
    folder = Path(os.environ.get("RATERCAL_SCREENSHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser, live_server):
    base, token, _ = live_server
    ctx = browser.new_context(viewport={"width": 1100, "height": 900}, accept_downloads=True)
    pg = ctx.new_page()
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.goto(f"{base}/?token={token}")
    yield pg
    ctx.close()


def readme_export(tmp_path) -> Path:
    """The README's example (examples/ratings.csv) as a district's system exports it: a workbook, its
    score column named after the trait (holistic)."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Ratings"
    with open(ROOT / "examples" / "ratings.csv", newline="") as fh:
        for k, row in enumerate(csv.reader(fh)):
            ws.append(["grade", "paper", "rater", "holistic"] if k == 0 else [int(row[0]), row[1], row[2], int(row[3])])
    path = tmp_path / "district_2024.xlsx"
    wb.save(path)
    return path


def wait_for(page, suffix, timeout=120_000):
    page.wait_for_url(f"**{suffix}", timeout=timeout)


def test_the_readme_example_from_upload_to_files(page, tmp_path, shots):
    src = readme_export(tmp_path)
    page.screenshot(path=shots / "1-upload.png")
    page.set_input_files("#file", str(src))
    page.click("button[type=submit]")
    wait_for(page, "/columns")
    # the guesses: 'grade' taken for the score (a mark, in some exports) -- wrong here
    assert page.input_value("#score") == "grade" and page.input_value("#paper") == "paper"
    assert "read as the score" in page.inner_text("main")
    page.screenshot(path=shots / "2-columns-guessed.png", full_page=True)
    page.select_option("#score", "holistic")
    page.select_option("#group", "grade")
    page.fill("#scale", "0-5")
    page.check("input[name=resolve]")
    page.fill("#cut", "2.25,3.25,4.25")
    page.fill("#levels", "Below,Basic,Proficient,Advanced")
    page.screenshot(path=shots / "3-columns-corrected.png", full_page=True)
    page.click("#check")
    page.wait_for_selector("#progress, .group", timeout=30_000)
    if "/job" in page.url:
        page.screenshot(path=shots / "4-progress.png")
    wait_for(page, "/decision")
    text = page.inner_text("main")
    # the README's findings (its check-summary block), in plain words
    assert "grade=5" in text and "grade=8" in text and "grade=11" in text
    assert text.count("Do the raters differ beyond chance? Yes") == 3   # (the decision is the method's line)
    # Chapter 5's rule (the README's check summary) beside check's one recommendation
    assert "truncated mean equating (TMN) — the fewest papers a rater scored is 20 (rater R10)" in text
    assert "truncated linear equating (TLI) — every rater scored more than 20 papers" in text
    assert text.count("Which method, and why:") == 3
    page.screenshot(path=shots / "5-decision.png", full_page=True)
    page.click("#details")
    assert 'alt="Wright map' in page.content() and "input.xlsx" not in page.content()
    page.screenshot(path=shots / "6-report.png")
    page.go_back()
    page.select_option("#method", "recommended")
    page.click("#adjust")
    wait_for(page, "/files")
    page.screenshot(path=shots / "7-files.png", full_page=True)
    with page.expect_download() as dl:
        page.click("#dl-adjusted")
    assert dl.value.suggested_filename == "district_2024.adjusted.xlsx"
    dl.value.save_as(tmp_path / "adjusted.xlsx")
    got = openpyxl.load_workbook(tmp_path / "adjusted.xlsx")
    given = openpyxl.load_workbook(src)
    assert got.sheetnames == ["Ratings"]
    rows = list(got.active.iter_rows(values_only=True))
    inp = list(given.active.iter_rows(values_only=True))
    assert len(rows) == len(inp) == 782   # the same layout: a line per input line, its columns first, in order
    assert all(r[:4] == i for r, i in zip(rows, inp))
    assert rows[0][4:] == ("flag", "recommended", "recommended_paper", "recommended_paper_se", "recommended_method")
    with page.expect_download() as dl:
        page.click("#dl-changes")
    dl.value.save_as(tmp_path / "changes.xlsx")
    ch = list(openpyxl.load_workbook(tmp_path / "changes.xlsx").active.iter_rows(values_only=True))
    assert ch[0][:6] == ("grade", "paper", "ratings", "given", "adjusted", "change") and len(ch) == 388
    with page.expect_download() as dl:
        page.click("#dl-memo")
    dl.value.save_as(tmp_path / "memo.html")
    memo = (tmp_path / "memo.html").read_text()
    import hashlib

    assert hashlib.sha256(src.read_bytes()).hexdigest() in memo
    # the memo's decision is the method the adjusted file says each line got
    from ratercal_cli.practice.memo import method_words

    applied = {r[0]: r[8] for r in rows[1:]}
    for grade in (5, 8, 11):
        assert f"<b>grade={grade}</b>: adjust the scores by {method_words(applied[grade])}." in memo
    page.click("#view-memo")
    page.screenshot(path=shots / "8-memo.png", full_page=True)
    assert page.dialogs == []


MESSY = ("\ufeffStudent ID;Reader;Reading;Score;Comment\r\n"
         + "".join(f"{p};{r};{k};{s};{c}\r\n" for p, r, k, s, c in [
             ("=HYPERLINK(\"http://example.invalid\",\"S01\")", "<script>alert(1)</script>", 1, "4", "ok"),
             ("=HYPERLINK(\"http://example.invalid\",\"S01\")", "Zoë Keller", 2, "3", "")]
             + [(f"S{p:02d} ", ["Zoë Keller", "<script>alert(1)</script>", "Lee, K.", "Müller"][(p + k) % 4], k + 1,
                 "NA" if p == 7 and k == 1 else str((p * 5 + k * 3) % 6 + 1), "@SUM(1+1)" if p == 3 else "")
                for p in range(2, 40) for k in range(2)]) + "\r\n;;;;\r\n")


def test_a_messy_export_and_a_bad_file(page, tmp_path, shots):
    src = tmp_path / "messy export.csv"
    src.write_bytes(MESSY.encode("utf-8"))
    page.set_input_files("#file", str(src))
    page.click("button[type=submit]")
    wait_for(page, "/columns")
    assert page.input_value("#paper") == "Student ID" and page.input_value("#rater") == "Reader"
    assert page.input_value("#order") == "Reading" and page.input_value("#score") == "Score"
    assert "<script>alert(1)</script>" in page.inner_text("#preview")   # shown as text
    page.fill("#scale", "1-6")
    page.fill("#cut", "3.5")
    page.click("#check")
    wait_for(page, "/decision")
    page.screenshot(path=shots / "9-messy-decision.png", full_page=True)
    page.click("#details")
    assert "<script>alert(1)</script>" in page.inner_text("body")
    page.go_back()
    page.select_option("#method", "MN")
    page.click("#adjust")
    wait_for(page, "/files")
    with page.expect_download() as dl:
        page.click("#dl-adjusted")
    assert dl.value.suggested_filename == "messy_export.adjusted.csv"
    dl.value.save_as(tmp_path / "adjusted.csv")
    raw = (tmp_path / "adjusted.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and "Zoë Keller".encode() in raw
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig")), delimiter=";"))
    assert rows[0][:5] == ["Student ID", "Reader", "Reading", "Score", "Comment"]
    cells = [c for r in rows for c in r]
    assert "'=HYPERLINK(\"http://example.invalid\",\"S01\")" in cells and "'@SUM(1+1)" in cells
    assert not any(c.startswith(("=", "@")) for c in cells)
    assert page.dialogs == []   # no alert ran, on any page
    # a bad file: a line per page, no traceback
    bad = tmp_path / "scores.xlsx"
    bad.write_bytes(b"PK\x03\x04 not a workbook at all")
    page.goto(page.url.split("/d/")[0] + "/")
    page.set_input_files("#file", str(bad))
    page.click("button[type=submit]")
    wait_for(page, "/columns")
    assert "This file cannot be read: scores.xlsx: not readable as an .xlsx workbook" in page.inner_text("#error")
    page.screenshot(path=shots / "10-bad-file.png")


def test_the_readme_two_year_rubric_linked(page, tmp_path, shots):
    """The README's two-year rubric (examples/rubric_year1.csv, rubric_year2.csv, rater R5 made a logit
    harsher in year 2) uploaded together: year 2 on year 1's scale, R5 freed for its drift, the files per
    year; year 2's totals those of the command line's ``check --write-anchors`` + ``adjust --anchors``."""
    import ratercal_cli as rc
    from ratercal_cli.practice.anchors import read_anchors, write_anchors
    from ratercal_cli.practice.check import check

    files = [str(ROOT / "examples" / f"rubric_year{k}.csv") for k in (2, 1)]
    page.set_input_files("#file", files)
    page.click("button[type=submit]")
    wait_for(page, "/columns")
    assert "2 years, linked through the raters they share" in page.inner_text("#years")
    assert page.input_value("select[aria-label='year of rubric_year1.csv']") == "1"
    page.fill("#scale", "1-6")
    page.fill("#cut", "12,16,20")
    page.fill("#levels", "Below,Basic,Proficient,Advanced")
    page.screenshot(path=shots / "11-years-columns.png", full_page=True)
    page.click("#check")
    wait_for(page, "/decision", timeout=240_000)
    link = page.inner_text("#link-2")
    assert "Linked to year 1: 12 rater(s) rated both years" in link
    assert "1 drifted: R5 (displacement +0.98 logits, t 8.6; freed, measured afresh)" in link
    assert "9 criterion and threshold measure(s) held too" in link
    page.screenshot(path=shots / "12-years-decision.png", full_page=True)
    top, box = page.locator("#year-2").bounding_box(), page.locator("#link-2").bounding_box()
    page.screenshot(path=shots / "12b-years-link.png", full_page=True,
                    clip={"x": 0, "y": top["y"] - 12, "width": 1100, "height": box["y"] + box["height"] - top["y"] + 24})
    page.click("#adjust")
    wait_for(page, "/files", timeout=240_000)
    page.screenshot(path=shots / "13-years-files.png", full_page=True)
    with page.expect_download() as dl:
        page.click("#dl-adjusted-2")
    assert dl.value.suggested_filename == "rubric_year2.adjusted.csv"
    dl.value.save_as(tmp_path / "y2.csv")
    rows = list(csv.DictReader(open(tmp_path / "y2.csv", encoding="utf-8-sig")))
    assert len(rows) == 1000 and list(rows[0])[:6] == ["student", "rater", "style", "style_MFRM", "org", "org_MFRM"]
    read = dict(scale="1-6", paper_col="student", score_cols=["style", "org", "conv", "sent_form"])
    write_anchors(tmp_path / "y1_anchors.csv",
                  check(rc.read_ratings(ROOT / "examples" / "rubric_year1.csv", **read), calibrate=True).calibration)
    cli = rc.adjust(rc.read_ratings(ROOT / "examples" / "rubric_year2.csv", **read), "MFRM",
                    anchors=read_anchors(tmp_path / "y1_anchors.csv"))
    want = dict(zip(cli.ratings.paper_ids, cli.paper_totals("MFRM")))
    assert {r["student"]: float(r["MFRM_total"]) for r in rows} == pytest.approx(want, abs=1e-3)
    with page.expect_download() as dl:
        page.click("#dl-memo-2")
    dl.value.save_as(tmp_path / "memo2.html")
    assert "year 1 (rubric_year1.csv)" in (tmp_path / "memo2.html").read_text()
    page.click("#view-memo-2")
    page.screenshot(path=shots / "14-years-memo.png", full_page=True)
    assert page.dialogs == []


def test_a_huge_label_does_not_stretch_the_pages(page, tmp_path, shots):
    """Student labels of 2,000 characters, one of 20,000 (an essay pasted into the ID column), and a rater's
    of 5,000: the pages, the memo and the report stay as wide as the window (the decision page was
    219,263 pixels wide, a label on one line); the adjusted file keeps the labels whole."""
    src = tmp_path / "huge label.csv"
    rows = ["student,rater,score"] + [f"S{p:03d}-{'X' * (20000 if p == 3 else 2000)},{'R3-' + 'Y' * 5000 if r == 3 else f'R{r}'},"
                                      f"{min(6, max(1, (p * 5 + r * 3) % 6 + 1 - (r == 5)))}"
                                      for p in range(60) for r in ((p % 6) + 1, (p + 2) % 6 + 1)]
    src.write_text("\n".join(rows) + "\n")
    page.set_input_files("#file", str(src))
    page.click("button[type=submit]")
    wait_for(page, "/columns")
    width = "document.documentElement.scrollWidth"
    assert "X" * 500 not in page.inner_text("main") and page.evaluate(width) <= 1100
    page.fill("#cut", "3.5")
    page.click("#check")
    wait_for(page, "/decision")
    assert page.evaluate(width) <= 1100
    page.screenshot(path=shots / "15-huge-label-decision.png", full_page=True)
    page.select_option("#method", "MN")
    page.click("#adjust")
    wait_for(page, "/files")
    assert page.evaluate(width) <= 1100
    with page.expect_download() as dl:
        page.click("#dl-adjusted")
    dl.value.save_as(tmp_path / "adjusted.csv")
    got = list(csv.reader(open(tmp_path / "adjusted.csv", encoding="utf-8-sig")))
    assert [r[:3] for r in got] == [r.split(",") for r in rows]   # the labels whole
    with page.expect_navigation():   # (measured once the page is there: at load, mid-navigation, CI read a null)
        page.click("#view-memo")
    assert page.evaluate(width) <= 1100
    page.go_back()
    with page.expect_navigation():
        page.click("a[href*='/file/report?view=1']")
    assert page.evaluate(width) <= 1100


UNNAMED = ("Array.from(document.querySelectorAll('input,select,button')).filter(e => e.type !== 'hidden' && "
           "!(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !(e.tagName === 'BUTTON' && "
           "e.innerText.trim())).map(e => e.outerHTML)")


def test_keyboard_only_from_upload_to_download_and_every_control_named(page, tmp_path, shots):
    """Tab, Space, typing and Enter only: choose the file, set the cut, check, choose the method, adjust,
    download; on every page each control has a name a screen reader says (the third readings' threshold
    had none)."""
    src = tmp_path / "keyboard.csv"
    src.write_text("student,rater,score\n" + "".join(f"S{p:02d},R{(p + k) % 5 + 1},{(p * 3 + k) % 6 + 1}\n"
                                                      for p in range(40) for k in (0, 2)))

    def tab_to(selector):
        for _ in range(80):
            page.keyboard.press("Tab")
            if page.evaluate(f"document.activeElement === document.querySelector({selector!r})"):
                return
        raise AssertionError(f"Tab never reached {selector}")

    # Playwright asks the browser to intercept file choosers without waiting for it to agree
    # (channel_owner's fire_and_forget), so a Space pressed at once can open the real dialog
    # and the wait times out: subscribe first, and the Tab round trips below let it land.
    page.on("filechooser", lambda _chooser: None)
    assert page.evaluate(UNNAMED) == []
    tab_to("#file")
    with page.expect_file_chooser() as chooser:
        page.keyboard.press("Space")
    chooser.value.set_files(str(src))
    tab_to("button[type=submit]")
    page.keyboard.press("Enter")
    wait_for(page, "/columns")
    assert page.evaluate(UNNAMED) == []
    tab_to("#cut")
    page.keyboard.type("3.5")
    tab_to("#check")
    page.keyboard.press("Enter")
    wait_for(page, "/decision")
    assert page.evaluate(UNNAMED) == []
    tab_to("#method")
    page.keyboard.press("ArrowDown")   # from the recommended method to the first one, NO... then MN
    page.keyboard.press("ArrowDown")
    assert page.input_value("#method") == "MN"
    tab_to("#adjust")
    page.keyboard.press("Enter")
    wait_for(page, "/files")
    assert "keyboard.csv: adjusted by MN" in page.inner_text("h1")
    tab_to("#dl-adjusted")
    with page.expect_download() as dl:
        page.keyboard.press("Enter")
    assert dl.value.suggested_filename == "keyboard.adjusted.csv"
    page.screenshot(path=shots / "16-keyboard-files.png", full_page=True)
