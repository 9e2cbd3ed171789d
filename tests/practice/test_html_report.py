"""Issue 18, item 9: the self-contained HTML report of check, adjust and compare (--html), read
back with the standard library's HTML parser; check's text starts with the short summary and folds
thin rater pairs into one line."""

import base64
from html.parser import HTMLParser

import pytest
from district_export import COLUMNS, district_export

import ratercal_cli as rc
from ratercal_cli.practice.html_report import html_report

from ratercal_cli.vocabulary import label_tag
from support import run


class Page(HTMLParser):
    """Headings (level, text), images' sources, every URL-valued attribute, tables by class, and
    the text, in document order."""

    def __init__(self, text):
        super().__init__()
        self.headings, self.images, self.urls, self.tables, self.ids, self.text = [], [], [], [], [], []
        self._h = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("h1", "h2", "h3"):
            self._h = [tag, ""]
        if tag == "img":
            self.images.append(a.get("src", ""))
        if tag == "table":
            self.tables.append(a.get("class"))
        if "id" in a:
            self.ids.append(a["id"])
        self.urls += [v for k, v in attrs if k in ("href", "src", "action", "data") and v]
        if tag in ("link", "script", "iframe", "object", "embed"):
            self.urls.append(f"<{tag}>")

    def handle_endtag(self, tag):
        if self._h and tag == self._h[0]:
            self.headings.append(tuple(self._h))
            self._h = None

    def handle_data(self, data):
        if self._h:
            self._h[1] += data
        self.text.append(data)


def _self_contained(page):
    assert all(u.startswith("data:image/png;base64,") for u in page.urls), page.urls   # no external link
    for src in page.images:
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_report_from_the_library(tmp_path):
    p = tmp_path / "r.csv"
    rows = ["paper,rater,score"] + [f"P{q},{'ABCD'[(q + k) % 4]},{(q * 7 + k * 3) % 6}"
                                    for q in range(40) for k in range(2)]
    p.write_text("\n".join(rows) + "\n")
    r = rc.read_ratings(p, scale="0-5")
    res = rc.adjust(r, "recommended,MN", cut=2.5, bootstrap=20)
    text = html_report(r, check=rc.check(r, rasch=False), adjust=res, compare=rc.compare(r, "NO,MN,TLI", cut=2.5))
    page = Page(text)
    assert [h for lvl, h in page.headings if lvl == "h1"] == [f"Rater calibration report: {p}"]
    h2 = [h for lvl, h in page.headings if lvl == "h2"]
    assert h2[0] == "Summary" and "all papers" in h2
    h3 = [h for lvl, h in page.headings if lvl == "h3"]
    assert h3 == ["Raters", "Agreement", "Methods compared", "Adjustment per rater", "Uncertain decisions"]
    assert page.ids[0] == "summary"
    assert {"agreement", "rmsd", "pass-fail", "shifts", "moved", "uncertain"} <= set(page.tables)
    body = " ".join(page.text)
    assert "adjustment warranted" in body and "recommended method" in body and "change pass/fail" in body
    _self_contained(page)
    assert len(page.images) == 1                        # the MDS map (no Rasch fit: no Wright map)


@pytest.mark.slow
def test_html_of_each_command_on_a_district_export(tmp_path):
    p = tmp_path / "export.csv"
    district_export(p, n_papers=160)
    for cmd, extra in (("check", ()), ("adjust", ("-m", "recommended", "--cut", "4", "--bootstrap", "20", "-o",
                                                   tmp_path / "a.csv")),
                       ("compare", ("-m", "NO,MN,TLI,EQP", "--cut", "4"))):
        out = tmp_path / f"{cmd}.html"
        res = run(cmd, p, *COLUMNS, "--scale", "1-6", "--fold-labels", "--html", out, *extra)
        assert res.exit_code == 0, res.output
        page = Page(out.read_text(encoding="utf-8"))
        _self_contained(page)
        assert len(page.images) == 2                    # the Wright map and the MDS map
        h3 = [h for lvl, h in page.headings if lvl == "h3"]
        assert h3[:3] == ["Raters", "Agreement", "Methods compared"]
        body = " ".join(page.text)
        assert "Brown, Sam" in body and "BROWN, SAM" in body   # the rater report; the folding warning
        if cmd == "adjust":
            assert "Uncertain decisions" in h3 and "falls on the grid of raw averages" in body


def test_check_starts_with_the_summary_and_folds_thin_pairs(tmp_path):
    p = tmp_path / "r.csv"
    # A-D share 40 papers in pairs; E scores 3 papers with A: a thin pair
    rows = ["paper,rater,score"] + [f"P{q},{'ABCD'[(q + k) % 4]},{(q * 7 + k * 3) % 6}"
                                    for q in range(40) for k in range(2)]
    rows += [f"Q{q},{r},{q + k}" for q in range(3) for k, r in enumerate("AE")]
    p.write_text("\n".join(rows) + "\n")
    res = run("check", p, "--scale", "0-5", "--no-rasch")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "SUMMARY"
    # (E's papers each read by A too: E does not stop the others' adjustment, the rule on them decides)
    assert lines[1].startswith("  all papers: recommended TMN -- Chapter 5's rule on the raters other than E: the "
                               "fewest papers a rater scored is 20")
    assert "adjustment warranted: " in lines[1]
    assert "1 rater pairs sharing fewer than 10 papers (3 papers in all; exact 0.0%) are folded into this line" \
        in res.output
    assert not any(line.split()[:2] == ["A", "E"] for line in lines)


@pytest.mark.slow
def test_the_readme_walk_through_shows_what_the_commands_print(tmp_path, monkeypatch):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")

    def block(name):
        return readme.split(f"<!-- {name}:")[1].split("```\n")[1].split("```")[0]

    monkeypatch.chdir(root)
    src = "examples/ratings.csv"                          # as the README names it
    res = run("check", src, "--scale", "0-5", "--group-col", "grade", "--resolve-discrepancies")
    assert res.stdout.startswith(block("check-summary"))   # (the summary needs the Rasch fits: the study's say)
    res = run("adjust", src, "--scale", "0-5", "--group-col", "grade", "--resolve-discrepancies", "--method",
              "recommended", "--cut", "3.25", "--bootstrap", "200", "-o", tmp_path / "adjusted.csv", "--html",
              tmp_path / "report.html")
    assert res.exit_code == 0, res.output
    assert block("adjust-summary") in res.stderr
    _self_contained(Page((tmp_path / "report.html").read_text(encoding="utf-8")))


def test_check_simulates_and_its_page_adjusts_by_what_the_simulation_decided(tmp_path):
    """A staff tester's check --simulate --html: the page said the simulation's recommendation above the moves
    and per-rater shifts of the one made without it ("recommended (TLI, shrunk)" under MML (shrunk) here)."""
    import csv as _csv

    from support import ROOT

    src = tmp_path / "g8.csv"
    with open(src, "w", newline="") as fh:
        w = _csv.writer(fh)
        w.writerow(["paper", "rater", "score"])
        for r in _csv.DictReader(open(ROOT / "examples" / "ratings.csv", newline="")):
            if r["grade"] == "8":
                w.writerow([r["paper"], r["rater"], r["score"]])
    out = run("check", src, "--scale", "0-5", "--simulate", "4", "--html", tmp_path / "g8.html", "-q")
    assert out.exit_code == 0, out.output
    label = next(line for line in out.stdout.splitlines() if line.startswith("RECOMMENDATION: ")).split(" -- ")[0][16:]
    # (MN (shrunk): at 4 replications the t(3) intervals of many methods' paired differences with the best,
    # MML (shrunk), hold 0, and MN is the simplest of them)
    assert "decided by the simulation" in out.stdout and label == "MN (shrunk)"
    # ... with a note that 4 replications rank the methods roughly (a staff tester: nothing said 10 were few)
    note = "the simulation ran 4 replications, which rank the methods roughly"
    assert f"  note: {note}" in out.stdout and note in (tmp_path / "g8.html").read_text()
    page = (tmp_path / "g8.html").read_text()
    assert f"recommended ({label_tag(label)})" in page and "recommended (TLI" not in page
    # ... and shows the simulation's ranking, as the text does, the recommendation's row marked (a researcher
    # tester: the page left the ranking out, the ground of the recommendation it printed)
    import re

    table = re.search(r"<table class='simulation'>(.*?)</table>", page, re.S)
    assert table is not None
    rows = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td>(.*?)</td>", tr)]
            for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1), re.S)][1:]
    marked = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td>(.*?)</td>", tr)]
              for tr in re.findall(r'<tr class="chosen">(.*?)</tr>', table.group(1), re.S)]
    lines = out.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("  shrinkage method"))
    text = [line.split() for line in lines[head + 1:head + 1 + len(rows)]]
    assert len(rows) >= 20 and [r[1] for r in rows] == [t[1] for t in text]
    assert [r[0] for r in rows] == [{"none": "unshrunk (none)", "kelley": "shrunk (kelley)",
                                     "linear_eb": "shrunk, linear EB (linear_eb)"}[t[0]] for t in text]
    assert [r[2] for r in rows] == [" ".join(t[2:5]) for t in text]   # RMSE ± its Monte Carlo SE
    assert [r[3] for r in rows] == [t[5] for t in text]                 # the rank
    assert len(marked) == 1 and marked[0][:2] == ["shrunk (kelley)", "MN"], marked
    assert marked[0][-1] == "\u2190 recommended" and sum(r[-1] != "" for r in rows) == 1


def test_check_with_a_cluster_column_pages_the_file_as_it_is_not_as_a_rubric(tmp_path):
    """``check --cluster-col school --html``: the column is read as a facet for check to take back out, and the
    page was handed the ratings with it: it took the file for a rubric, headed the group with nothing, listed
    the methods and the adjustment twice and showed MFRM's moves under the recommendation's name (a researcher
    tester's file).  Now the page is the file's, and its moves are the check's recommendation's."""
    from confounded import district

    src = tmp_path / "schools.csv"
    district(3, papers=240).frame.to_csv(src, index=False)
    out = run("check", src, "--scale", "1-6", "--cluster-col", "school", "--html", tmp_path / "s.html")
    assert out.exit_code == 0, out.output
    label = next(line for line in out.stdout.splitlines() if line.startswith("RECOMMENDATION: ")).split(" -- ")[0][16:]
    assert label.startswith("MML (multi-group")
    page = (tmp_path / "s.html").read_text()
    headings = [text for level, text in Page(page).headings]
    assert "all papers" in headings and "" not in headings
    assert "Methods: all papers" not in headings and headings.count("Methods compared") == 1
    assert f"recommended ({label_tag(label)}) moved papers" in page and "MFRM moved" not in page


@pytest.mark.slow   # two check --simulate 3 runs (about 20 s)
def test_the_simulation_marks_a_multi_group_and_a_rubrics_recommendations(tmp_path):
    """The simulation's rows are (shrinkage, method); a multi-group recommendation's label (``MML (multi-group,
    shrunk)``) matched none, so its page marked nothing, nor a rubric's (its criteria's recommendations), a
    researcher tester's files."""
    import re

    from confounded import district, rubric

    def marked(page):
        table = re.search(r"<table class='simulation'>(.*?)</table>", page, re.S)
        return [re.findall(r"<td>(.*?)</td>", tr)[:2]
                for tr in re.findall(r'<tr class="chosen">(.*?)</tr>', table.group(1), re.S)]

    src = tmp_path / "schools.csv"
    district(1, papers=300).frame.drop(columns="school").to_csv(src, index=False)
    out = run("check", src, "--scale", "1-6", "--simulate", "5", "--html", tmp_path / "d.html", "-q")   # (3: t(2) holds NO)
    assert out.exit_code == 0, out.output
    label = next(line for line in out.stdout.splitlines() if line.startswith("RECOMMENDATION: ")).split(" -- ")[0][16:]
    method, how = label.split(" (", 1)
    assert "multi-group" in how, label
    level = "shrunk (kelley)" if "shrunk" in how else "unshrunk (none)"
    assert marked((tmp_path / "d.html").read_text()) == [[level, method]]
    src = tmp_path / "rubric.csv"
    rubric(1, papers=120).frame.drop(columns="school").to_csv(src, index=False)
    out = run("check", src, "--scale", "1-6", "--facet-col", "criterion", "--simulate", "3", "--html",
              tmp_path / "r.html", "-q")
    assert out.exit_code == 0, out.output
    labels = {line.split(": recommended ")[1].split(" -- ")[0] for line in out.stdout.splitlines()
              if line.startswith("  criterion=") and ": recommended " in line}   # (the summary's, one a criterion)
    assert labels
    chosen = {("shrunk (kelley)" if "shrunk" in lab else "unshrunk (none)", lab.split(" (")[0]) for lab in labels}
    got = marked((tmp_path / "r.html").read_text())
    assert sorted(map(tuple, got)) == sorted(chosen), (got, chosen)
