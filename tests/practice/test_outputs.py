"""adjust's outputs for every interface (issue 33): .xlsx, the input's layout, performance levels,
cuts on rubric totals, the change list and the decision memo."""

import csv
import hashlib
import json
import re

import numpy as np
import openpyxl
import pytest

from ratercal_cli.errors import InputError
from ratercal_cli.practice.levels import parse_levels

from support import ROOT, run

RATINGS = ROOT / "examples" / "ratings.csv"
RUBRIC = ROOT / "examples" / "rubric_year1.csv"
README_ARGS = ("--scale", "0-5", "--group-col", "grade", "--resolve-discrepancies")


def read_csv(path):
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return list(csv.DictReader(fh))


# -- levels -------------------------------------------------------------------------------------
def test_levels_from_cuts_and_names():
    lv = parse_levels("2.5,3.5,4.5", "Below,Basic,Proficient,Advanced")
    assert lv.cuts == (2.5, 3.5, 4.5) and lv.names == ("Below", "Basic", "Proficient", "Advanced")
    # a score equal to a cut reaches it (as a pass at one cut does); nan has no level
    assert lv.level([0, 2.4999, 2.5, 3.5, 4.49, 4.5, 5, np.nan]).tolist() == [0, 0, 1, 2, 2, 3, 3, -1]
    assert parse_levels(3.25).names == ("fail", "pass")
    assert parse_levels("1,2").names == ("below 1", "1 to 2", "2 and above")
    assert parse_levels(None) is None
    for cut, names, msg in (("3,2", None, "ascending"), ("2,2", None, "twice"), ("a,2", None, "numbers"),
                            ("2,3", "A,B", "3 levels, and 2 name"), ("2", "A,A", "its own"),
                            (None, "A,B", "give the cuts")):
        with pytest.raises(InputError, match=msg):
            parse_levels(cut, names)


def test_cuts_with_a_decimal_comma():
    """The app read "3,5" typed beside a file of decimal commas as the cuts 3 and 5, and classified every
    student on them: with the decimal comma, the comma is the cuts' decimal mark and ; or space separates."""
    from ratercal_cli.practice.levels import parse_cuts

    assert parse_cuts("3,5", "comma") == (3.5,) and parse_cuts("3,5") == (3.0, 5.0)
    assert parse_cuts("2,5;3,5; 4", "comma") == (2.5, 3.5, 4.0) and parse_cuts("2,5 3,5", "comma") == (2.5, 3.5)
    assert parse_cuts("3.25", "comma") == (3.25,)
    with pytest.raises(InputError, match="with a decimal comma, write each cut with a comma and separate them with "
                                         r"semicolons \(e.g. 2,5;3,5\), not '2.5,3.5'"):
        parse_cuts("2.5,3.5", "comma")
    with pytest.raises(InputError, match=r"separated by semicolons \(e.g. 2,5;3,5;4,5\), not '2.5.3.5'"):
        parse_cuts("2,5,3,5", "comma")


def test_a_decimal_comma_cut_on_the_command_line(tmp_path):
    src = tmp_path / "semi.csv"
    src.write_text("".join(["paper;rater;score\n"] + [f"P{p};R{(p + k) % 4};{(p * 7 + k * 3) % 6}\n"
                                                     for p in range(40) for k in range(2)]))
    res = run("adjust", src, "--scale", "0-5", "--sep", "semicolon", "--decimal", "comma", "-m", "TLI", "--cut", "3,5",
              "-o", tmp_path / "o.csv", "--changes", tmp_path / "c.csv")
    assert res.exit_code == 0, res.output
    assert "at cut 3.5 (a paper passes" in res.stderr and "fail" in (tmp_path / "c.csv").read_text(encoding="utf-8-sig")
    assert "3 to 5" not in (tmp_path / "c.csv").read_text(encoding="utf-8-sig")
    # the change list as the adjusted file and the app's: the input's ; and decimal commas (it was commas and
    # points, one text column in the spreadsheet of a decimal-comma locale that read the input; a staff tester's)
    lines = (tmp_path / "c.csv").read_text(encoding="utf-8-sig").splitlines()
    assert lines[0].startswith("paper;ratings;given;adjusted;change") and "," not in lines[0]
    given = [row.split(";")[2] for row in lines[1:]]
    assert all(re.fullmatch(r"\d,\d{4}", g) for g in given) and "2,5000" in given


def test_probability_of_a_level_is_the_normal_mass_between_its_cuts():
    """A bootstrap method's: P(S >= lower cut) - P(S >= upper cut) of the normal about its score; censored at
    the scale's ends where its scores stay on the scale (a cut at the lowest score: everyone passes it)."""
    from scipy.stats import norm

    from ratercal_cli.practice.uncertainty import PaperUncertainty

    u = PaperUncertainty("TLI", np.array([0.5, 0.25, 0.2]), None, "bootstrap", scores=np.array([2.5, 2.0, 3.4]))
    p = u.pass_probability(2.0) - u.pass_probability(3.0)
    assert p[0] == pytest.approx(norm.cdf(1) - norm.cdf(-1))
    assert p[1] == pytest.approx(0.5 - norm.cdf(-4))
    assert u.pass_probability(3.0)[2] == pytest.approx(1 - norm.cdf(-2))
    assert u.pass_probability(0.0)[1] == pytest.approx(norm.cdf(8)) and u.pass_probability(0.0)[1] < 1
    on_scale = PaperUncertainty("TLI", u.se, None, "bootstrap", scores=u.scores, top=5.0)
    assert on_scale.pass_probability(0.0).tolist() == [1.0, 1.0, 1.0]
    lo, hi = on_scale.interval(norm.ppf(0.95))
    assert lo[0] == pytest.approx(2.5 - 0.5 * norm.ppf(0.95)) and hi[2] == pytest.approx(3.4 + 0.2 * norm.ppf(0.95))
    near_top = PaperUncertainty("TLI", np.array([0.5]), None, "bootstrap", scores=np.array([4.8]), top=5.0)
    assert near_top.interval(1.645)[1].tolist() == [5.0]   # (censored, as its pass probability at 5 is)


def test_adjust_counts_papers_moving_between_levels(tmp_path):
    out, changes = tmp_path / "a.csv", tmp_path / "changes.csv"
    res = run("adjust", RATINGS, *README_ARGS, "-m", "TLI", "--cut", "2.25,3.25,4.25",
              "--levels", "Below,Basic,Proficient,Advanced", "-o", out, "--changes", changes)
    assert res.exit_code == 0, res.output
    # the counts, recomputed here from the adjusted file: each paper's given mean and its TLI_paper
    rows = [r for r in read_csv(out) if r["flag"] not in ("dropped", "missing")]
    papers = {}
    for r in rows:
        papers.setdefault((r["grade"], r["paper"]), ([], float(r["TLI_paper"])))[0].append(float(r["score"]))
    cuts = [2.25, 3.25, 4.25]
    lvl = lambda x: sum(x >= c for c in cuts)   # noqa: E731
    for grade in ("5", "8", "11"):
        mine = [(lvl(np.mean(s)), lvl(a)) for (g, _), (s, a) in papers.items() if g == grade]
        moved = sum(a != b for a, b in mine)
        up = sum(b > a for a, b in mine)
        head = f"levels (examples/ratings.csv, grade={grade}), TLI: cuts 2.25, 3.25, 4.25; {moved} paper(s) change " \
               f"level ({up} up, {moved - up} down)"
        assert head in res.stderr.replace(str(ROOT) + "/", "")
    ch = read_csv(changes)
    assert list(ch[0]) == ["grade", "paper", "ratings", "given", "adjusted", "change", "given_level",
                           "adjusted_level", "moved"]
    assert len(ch) == len(papers) == 387
    for r in ch:
        s, a = papers[(r["grade"], r["paper"])]
        assert float(r["given"]) == pytest.approx(np.mean(s), abs=1e-4)
        assert float(r["adjusted"]) == pytest.approx(a, abs=1e-4)
        names = ["Below", "Basic", "Proficient", "Advanced"]
        assert r["given_level"] == names[lvl(np.mean(s))] and r["adjusted_level"] == names[lvl(a)]
        assert (r["moved"] == "yes") == (r["given_level"] != r["adjusted_level"])


def test_the_change_list_is_made_only_where_something_shows_it(tmp_path, monkeypatch):
    """A list of every paper (0.9-2 s of adjust --cut at 1M ratings) was made for every cut and thrown
    away unless --changes, --memo, --json or several levels showed it (issue 32)."""
    from ratercal_cli.practice import levels

    made = []
    real = levels.changes
    monkeypatch.setattr(levels, "changes", lambda *a, **k: made.append(1) or real(*a, **k))
    plain = run("adjust", RATINGS, *README_ARGS, "-m", "TLI", "--cut", "3.25", "-o", tmp_path / "a.csv")
    quiet = run("adjust", RATINGS, *README_ARGS, "-m", "TLI", "--cut", "2.25,3.25", "-o", tmp_path / "b.csv", "-q")
    assert plain.exit_code == quiet.exit_code == 0 and made == []
    shown = run("adjust", RATINGS, *README_ARGS, "-m", "TLI", "--cut", "2.25,3.25", "-o", tmp_path / "c.csv")
    assert shown.exit_code == 0 and len(made) == 1 and "paper(s) change level" in shown.stderr
    listed = run("adjust", RATINGS, *README_ARGS, "-m", "TLI", "--cut", "3.25", "-o", tmp_path / "d.csv", "-q",
                 "--changes", tmp_path / "c.csv")
    assert listed.exit_code == 0 and len(made) == 2 and len(read_csv(tmp_path / "c.csv")) == 387


def test_levels_in_json_and_uncertain_with_standard_errors(tmp_path):
    res = run("adjust", RATINGS, *README_ARGS, "-m", "MML", "--cut", "2.25,3.25,4.25", "-o", tmp_path / "a.csv",
              "--changes", tmp_path / "c.csv", "--json")
    assert res.exit_code == 0, res.output
    levels = json.loads(res.stdout)["levels"]
    assert [g["group"] for g in levels] == ["5", "8", "11"]
    ch = read_csv(tmp_path / "c.csv")
    for g in levels:
        mine = [r for r in ch if r["grade"] == g["group"]]
        assert g["moved"] == sum(r["moved"] == "yes" for r in mine)
        assert g["uncertain"] == sum(r["uncertain"] == "yes" for r in mine) > 0
        assert sum(g["before"]) == sum(g["after"]) == len(mine)
    # uncertain: the 90% interval (MML's: the fair scores of its quality's, tests/practice/test_intervals.py)
    # holds a cut; p_level, the probability of the adjusted level, is then at least 0.9 where it holds none
    names = ["below 2.25", "2.25 to 3.25", "3.25 to 4.25", "4.25 and above"]
    for r in ch:
        a, se = float(r["adjusted"]), float(r["se"])
        low, high = float(r["low90"]), float(r["high90"])
        assert low <= a + 1e-4 and a <= high + 1e-4 and names[sum(a >= c for c in (2.25, 3.25, 4.25))] == r["adjusted_level"]
        assert (r["uncertain"] == "yes") == any(low < c <= high for c in (2.25, 3.25, 4.25))
        assert r["uncertain"] == "yes" or float(r["p_level"]) >= 0.9 - 1e-4
        # (se_to_cut: in the SDs of the normal the probabilities are made of, the quality's for MML)
        assert (r["uncertain"] == "yes") == (float(r["se_to_cut"]) < 1.6449), r
    # the old rule (the level's probability below 0.95) called a student in the middle of a level uncertain
    # whose 90% interval reaches no cut: such students are sure now
    middle = [r for r in ch if r["uncertain"] != "yes" and float(r["p_level"]) < 0.95]
    assert middle and all(float(r["se_to_cut"]) >= 1.644 for r in middle)
    for g in levels:   # the text: the count, the confidence, per cut, the expected classification accuracy
        mine = [r for r in ch if r["grade"] == g["group"]]
        assert g["confidence"] == 0.9
        assert g["classification_accuracy"] == pytest.approx(np.mean([float(r["p_level"]) for r in mine]), abs=1e-4)
        assert g["uncertain_at_cut"] == [sum(float(r["low90"]) < c <= float(r["high90"]) for r in mine)
                                         for c in (2.25, 3.25, 4.25)]


def test_uncertain_at_one_cut_is_the_summarys_pass_fail_rule_and_the_confidence_is_stated():
    """With one cut, the change list's uncertain students are the summary's (a pass probability between
    0.05 and 0.95); another confidence widens or narrows the interval, and is said."""
    import ratercal_cli as rc
    from ratercal_cli.errors import ArgumentError
    from ratercal_cli.practice.levels import changes

    r = rc.read_ratings(RATINGS, scale="0-5", group_col="grade")
    res = rc.adjust(r, "TLI", bootstrap=50, cut=3.25)
    ch = changes(res, levels=parse_levels("3.25"))
    for lc, s in zip(ch.changes, res.adjustment_summaries()):
        mine = {row["paper"] for row in ch.rows if row["grade"] == s.group and row["uncertain"] == "yes"}
        assert mine == set(s.methods[0].uncertain) and lc.uncertain == len(mine) > 0
        assert lc.uncertain_text().startswith(f"{lc.uncertain} of {lc.papers} paper(s) are uncertain at 90% "
                                              "confidence (the 90% interval of the adjusted score, ± 1.64 standard")
    wide = changes(res, levels=parse_levels("3.25"), confidence=0.99)
    narrow = changes(res, levels=parse_levels("3.25"), confidence=0.5)
    n = [sum(x.uncertain for x in c.changes) for c in (narrow, ch, wide)]
    assert n[0] < n[1] < n[2], n
    assert "low99" in wide.header and "at 99% confidence" in wide.changes[0].uncertain_text()
    with pytest.raises(ArgumentError, match="confidence"):
        changes(res, levels=parse_levels("3.25"), confidence=1.0)


def test_levels_narrower_than_the_interval_are_said_so():
    """The README's levels (1 point wide) at the README's standard errors (about 0.33): most students are
    uncertain whatever the adjustment, and the text says why instead of only naming them."""
    import ratercal_cli as rc
    from ratercal_cli.practice.levels import changes

    r = rc.read_ratings(RATINGS, scale="0-5", group_col="grade", resolve_discrepancies=True)
    res = rc.adjust(r, "recommended", bootstrap=50)
    ch = changes(res, levels=parse_levels("2.25,3.25,4.25"))
    for lc in ch.changes:
        assert 0.25 < lc.median_se < 0.45 and lc.too_narrow and lc.uncertain > 0.8 * lc.papers
        assert "The levels (the narrowest 1 wide) are narrower than the 90% interval" in lc.uncertain_text()
        assert 0.6 < lc.accuracy < 0.85
    # two levels 2 points apart at the same SEs: not too narrow, and fewer uncertain
    wide = changes(res, levels=parse_levels("1.5,3.5"))
    for lc, narrow in zip(wide.changes, ch.changes):
        assert not lc.too_narrow and lc.uncertain < narrow.uncertain and "narrower" not in lc.uncertain_text()


def test_a_cut_on_rubric_totals(tmp_path):
    args = ("--scale", "1-6", "--paper-col", "student", "--score-cols", "style,org,conv,sent_form", "-m", "TLI")
    res = run("adjust", RUBRIC, *args, "--cut", "14", "-o", tmp_path / "a.csv", "--changes", tmp_path / "c.csv")
    assert res.exit_code == 0, res.output   # was refused: "the cut 14 is not a score on the scale 1-6"
    ch = read_csv(tmp_path / "c.csv")
    out = read_csv(tmp_path / "a.csv")
    total = {r["student"]: float(r["TLI_total"]) for r in out}
    given = {}
    for r in out:
        given.setdefault(r["student"], []).append([float(r[c]) for c in ("style", "org", "conv", "sent_form")])
    assert list(ch[0])[0] == "student"   # (the input's paper column, by its name)
    for r in ch:
        assert float(r["adjusted"]) == pytest.approx(total[r["student"]], abs=1e-4)
        assert float(r["given"]) == pytest.approx(np.mean(given[r["student"]], axis=0).sum(), abs=1e-4)
        assert r["adjusted_level"] == ("pass" if total[r["student"]] >= 14 else "fail")
    n_fail_pass = sum(r["given_level"] == "fail" and r["adjusted_level"] == "pass" for r in ch)
    assert f"fail -> pass: {n_fail_pass}" in res.stderr
    res = run("adjust", RUBRIC, *args, "--cut", "25", "-o", tmp_path / "b.csv")
    assert res.exit_code == 2 and "the cut 25 is not a score on the rubric total's range 4-24" in res.stderr
    assert not (tmp_path / "b.csv").exists()


# -- formats and layouts ------------------------------------------------------------------------
def _xlsx(path):
    wb = openpyxl.load_workbook(path)
    ws = wb.worksheets[0]
    return ws, [list(r) for r in ws.iter_rows(values_only=True)]


def test_xlsx_output_numbers_as_numbers_labels_never_formulas(tmp_path):
    src = tmp_path / "in.csv"
    text = RATINGS.read_text().replace("G5-001", '"=HYPERLINK(""http://x"",""G5-001"")"', 2)
    text = text.replace("G5-002,R6", "@SUM(1;2),R6").replace("G5-002,R3", "@SUM(1;2),R3")
    src.write_text(text)
    res = run("adjust", src, *README_ARGS, "-m", "TLI", "-o", tmp_path / "a.xlsx", "-q")
    assert res.exit_code == 0, res.output
    res = run("adjust", src, *README_ARGS, "-m", "TLI", "-o", tmp_path / "a.csv", "-q")
    ws, rows = _xlsx(tmp_path / "a.xlsx")
    want = read_csv(tmp_path / "a.csv")
    assert rows[0] == list(want[0])
    assert len(rows) - 1 == len(want) == 781
    for got, w in zip(rows[1:], want):
        assert got[0] == int(w["grade"]) and got[3] == int(w["score"])       # numbers, not text
        assert got[5] == (pytest.approx(float(w["TLI"])) if w["TLI"] else None)
        assert got[1] == w["paper"] or "'" + got[1] == w["paper"]
    # the formula labels: the labels as they were, in the cells' string type with Excel's quotePrefix
    # mark (what Excel writes for text typed as '=x), never formulas
    cells = [c for row in ws.iter_rows() for c in row if isinstance(c.value, str) and "HYPERLINK" in c.value]
    assert len(cells) == 2 and all(c.data_type == "s" and c.value.startswith("=") and c.quotePrefix for c in cells)
    assert rows[3][1] == "@SUM(1;2)" and rows[1][1] == "=HYPERLINK(\"http://x\",\"G5-001\")"
    plain = [c for row in ws.iter_rows(min_row=2) for c in row[1:2] if not c.value.startswith(("=", "@"))]
    assert plain and not any(c.quotePrefix for c in plain)
    assert want[2]["paper"] == "'@SUM(1;2)"   # the CSV the same (guard.neutralise)


def test_labels_come_back_from_a_workbook_as_they_were(tmp_path):
    """A paper labelled ``+1`` was written as the number 1 and ``1.50`` as 1.5, and a rater ``=A``
    as the text ``'=A``: read back, they named other papers and raters than the input's.  Labels
    are numbers in the workbook only when they read back as the same text (``12``); a formula-like
    label is the text itself with Excel's quotePrefix mark.  The adjusted numbers read back from the
    workbook equal the CSV's."""
    src = tmp_path / "in.csv"
    papers = ["+1", "1.50", "12", "007", "p5", "p6"]
    lines = ["paper,rater,score"]
    for i, p in enumerate(papers):
        lines += [f"{p},=A,{1 + i % 4}", f"{p},B,{2 + (i * 3) % 4}", f"{p},C,{1 + (i * 2) % 5}"]
    src.write_text("\n".join(lines) + "\n")
    res = run("adjust", src, "--scale", "1-5", "-m", "MN", "-o", tmp_path / "a.xlsx", "-q")
    assert res.exit_code == 0, res.output
    ws, rows = _xlsx(tmp_path / "a.xlsx")
    assert [r[0] for r in rows[1::3]] == ["+1", "1.50", 12, "007", "p5", "p6"]
    assert {r[1] for r in rows[1:]} == {"=A", "B", "C"}
    res = run("adjust", src, "--scale", "1-5", "-m", "MN", "-o", tmp_path / "a.csv", "-q")
    assert res.exit_code == 0, res.output
    want = read_csv(tmp_path / "a.csv")
    assert [w["paper"] for w in want[::3]] == papers and want[0]["rater"] == "'=A"
    # the workbook read as ratings names the same papers and raters, and adjusts them the same
    from ratercal_cli.practice.ratings_file import read_ratings_table

    table = read_ratings_table(tmp_path / "a.xlsx", scale="1-5")
    assert [row["paper"] for row in table.rows[::3]] == papers
    assert [row["rater"] for row in table.rows[:3]] == ["=A", "B", "C"]
    assert [float(row["MN"]) for row in table.rows] == pytest.approx([float(w["MN"]) for w in want])


def test_xlsx_input_comes_back_as_xlsx_and_csv_with_a_bom(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Scores"
    ws.append(["Student ID", "Reader", "Score"])
    names = ["Zoë", "Müller", "García", "Lee"]
    for p in range(16):
        for k in range(2):
            ws.append([f"S{p:02d}", names[(p + k) % 4], (p * 3 + k * 5) % 6 + 1])
    src = tmp_path / "export.xlsx"
    wb.save(src)
    args = ("--scale", "1-6", "--paper-col", "Student ID", "--rater-col", "Reader", "--score-col", "Score", "-m", "MN")
    res = run("adjust", src, *args, "-q")
    assert res.exit_code == 0, res.output
    ws2, rows = _xlsx(tmp_path / "export.adjusted.xlsx")   # the default output of an .xlsx input
    assert ws2.title == "Scores" and rows[0][:3] == ["Student ID", "Reader", "Score"]
    assert rows[1][:3] == ["S00", "Zoë", 1] and isinstance(rows[1][5], float)
    res = run("adjust", src, *args, "-q", "-o", tmp_path / "out.csv")
    raw = (tmp_path / "out.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and "Zoë".encode() in raw   # Excel shows Zoë, not ZoÃ«
    assert [r["MN"] for r in read_csv(tmp_path / "out.csv")] == [f"{r[4]:.4f}" for r in rows[1:]]


def test_a_wide_input_stays_wide(tmp_path):
    args = ("--scale", "1-6", "--paper-col", "student", "--score-cols", "style,org,conv,sent_form", "-m", "MN,TLI")
    res = run("adjust", RUBRIC, *args, "-o", tmp_path / "wide.csv")
    assert res.exit_code == 0, res.output
    assert "wide.csv: 1000 lines, 500 papers" in res.stdout
    res = run("adjust", RUBRIC, *args, "-o", tmp_path / "long.csv", "--layout", "long", "-q")
    wide, long = read_csv(tmp_path / "wide.csv"), read_csv(tmp_path / "long.csv")
    crits = ("style", "org", "conv", "sent_form")
    assert list(wide[0]) == ["student", "rater"] + [x for c in crits for x in (c, f"{c}_MN", f"{c}_TLI")] + [
        "flag", "MN_total", "TLI_total"]
    assert len(wide) == 1000 and len(long) == 4000
    original = read_csv(RUBRIC)
    by = {(r["student"], r["rater"], r["criterion"]): r for r in long}
    for w, o in zip(wide, original):
        assert [w[k] for k in o] == list(o.values())           # the input's cells, in its order
        for c in crits:
            lr = by[(w["student"], w["rater"], c)]
            assert w[f"{c}_MN"] == lr["MN_paper"] and w[f"{c}_TLI"] == lr["TLI_paper"]
        assert w["TLI_total"] == lr["TLI_total"]
    # and as a workbook, wide too
    res = run("adjust", RUBRIC, *args, "-o", tmp_path / "wide.xlsx", "-q")
    _, rows = _xlsx(tmp_path / "wide.xlsx")
    assert rows[0] == list(wide[0]) and len(rows) == 1001
    assert rows[1][3] == pytest.approx(float(wide[0]["style_MN"]))


def test_a_rater_wide_input_stays_wide(tmp_path):
    f = tmp_path / "byrater.csv"
    f.write_text("paper,r1,r2,r3\nA,3,4,\nB,,2,2\nC,5,,4\nD,1,1,\nE,,3,4\nF,2,,3\n")
    res = run("adjust", f, "--scale", "0-5", "--rater-cols", "r*", "-m", "MN", "-o", tmp_path / "o.csv", "-q")
    assert res.exit_code == 0, res.output
    rows = read_csv(tmp_path / "o.csv")
    assert list(rows[0]) == ["paper", "r1", "r1_MN", "r2", "r2_MN", "r3", "r3_MN", "flag", "MN_paper"]
    long_rows = None
    run("adjust", f, "--scale", "0-5", "--rater-cols", "r*", "-m", "MN", "-o", tmp_path / "l.csv", "-q",
        "--layout", "long")
    long_rows = read_csv(tmp_path / "l.csv")
    for r in rows:
        mine = [x for x in long_rows if x["paper"] == r["paper"]]
        for x in mine:
            assert r[f"{x['rater']}_MN"] == x["MN"] and r["MN_paper"] == x["MN_paper"]
        assert r["r1_MN"] == "" if r["r1"] == "" else r["r1_MN"] != ""


# -- the memo -------------------------------------------------------------------------------------
def test_the_decision_memo(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1733400000")   # 2024-12-05
    src = tmp_path / "r.csv"
    src.write_text(RATINGS.read_text().replace("R10", "<script>alert(1)</script>"))
    memo = tmp_path / "memo.html"
    res = run("adjust", src, *README_ARGS, "-m", "recommended", "--cut", "2.25,3.25,4.25",
              "--levels", "Below,Basic,Proficient,Advanced", "--bootstrap", "20", "-o", tmp_path / "a.csv",
              "--memo", memo, "--changes", tmp_path / "c.csv")
    assert res.exit_code == 0, res.output
    page = memo.read_text()
    from ratercal_cli import __version__

    assert hashlib.sha256(src.read_bytes()).hexdigest() in page
    assert f"ratercal {__version__}" in page and "2024-12-05" in page
    # check's one recommendation (the beyond-1990 run's best at two raters a paper), the rule's beside it
    assert ("<b>grade=5</b>: adjust the scores by the Rasch model by marginal maximum likelihood (MML, shrunk)."
            in page)
    assert "Denny's 1990 rule (its Chapter 5) would use truncated mean equating (TMN): the fewest papers a rater scored " \
           "is 20 (rater " in page and "), within 8 to 20 (rater spreads are unstable)." in page   # (the method named once)
    assert page.count("(its error against the true scores, RMSE, 0.5295 ± 0.0011 points)") == 3
    # what "shrunk" means, once (a staff tester's memo said it and never what it is)
    assert page.count("Shrunk: each student&#x27;s adjusted score is pulled toward the group&#x27;s mean") == 1
    plain = tmp_path / "plain.html"
    assert run("adjust", src, *README_ARGS, "-m", "TLI", "-o", tmp_path / "t.csv", "--memo", plain).exit_code == 0
    assert "Shrunk:" not in plain.read_text()
    # why check's recommendation is not the rule's, in the memo as the command line's warning says it
    assert page.count("Check follows the study rather than the rule: its 200 replications a cell rank the methods") == 3
    assert "The raters differ by more than chance would make them (the tests that say so: ANOVA F" in page
    # ... and the tests that found none, beside them (a staff tester's memo named only the one that found one)
    assert ("Wald chi-square of the rater model&#x27;s severities, p = 0.005; the others found no difference: Levene, rater "
            "spreads, p = 0.168; KS, rater R6 vs others (smallest Holm p), p = 0.158)." in page)
    # (its basis, not the method again: the decision line names it)
    assert page.count("It is check's recommendation; its basis: the corrected study (beyond-1990 run") == 3
    assert page.count("by marginal maximum likelihood (MML, shrunk)") == 3
    # the students closest to a cut, each with its group (one list of all grades named none)
    first = page.split("Closest to a cut first: ", 1)[1].split(" and ", 1)[0].split(", ")
    assert first and all(re.fullmatch(r"G(5|8|11)-\d{3} \((5|8|11)\)", f) and f[1:].split("-")[0] == f.split("(")[1][:-1]
                         for f in first), first
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # what reading the file said (the memo is the page signed off; it said none of it)
    said = page.split("<h2>What reading the file said</h2><ul>", 1)[1].split("</ul>", 1)[0]
    assert f"<li>{src}: 2 discrepant paper(s) (grade 5) resolved: the third rating kept with the nearer" in said
    assert "no order column: the first two ratings of a paper are taken to be its first two lines" in said
    ch = read_csv(tmp_path / "c.csv")
    for g in ("5", "8", "11"):
        mine = [r for r in ch if r["grade"] == g]
        moved = sum(r["moved"] == "yes" for r in mine)
        order = ["Below", "Basic", "Proficient", "Advanced"]
        up = sum(order.index(r["adjusted_level"]) > order.index(r["given_level"]) for r in mine)
        row = page.split(f"<tr><td>grade={g}</td><td>{len(mine)}</td>", 1)[1].split("</tr>", 1)[0]
        assert row.endswith(f"<td>{moved} ({up} up, {moved - up} down)</td>")
    for g in ("5", "8", "11"):
        unc = sum(r["uncertain"] == "yes" for r in ch if r["grade"] == g)
        n = sum(r["grade"] == g for r in ch)
        assert f"<b>grade={g}</b>: {unc} of {n} student(s) are uncertain at 90% confidence" in page
    for setting in ("<th>cut</th><td>2.25,3.25,4.25</td>", "<th>levels</th><td>Below,Basic,Proficient,Advanced</td>",
                    "<th>bootstrap</th><td>20</td>", "<th>group_col</th><td>grade</td>",
                    "<th>resolve_discrepancies</th><td>True</td>", "<th>scale</th><td>0-5</td>"):
        assert setting in page
    # the same settings give the same memo, byte for byte
    first = memo.read_bytes()
    run("adjust", src, *README_ARGS, "-m", "recommended", "--cut", "2.25,3.25,4.25",
        "--levels", "Below,Basic,Proficient,Advanced", "--bootstrap", "20", "-o", tmp_path / "a.csv",
        "--memo", memo, "-q")
    assert memo.read_bytes() == first


@pytest.mark.parametrize("method, same", [("MML", True), ("TLI", False)])
def test_the_memo_names_checks_recommendation_for_a_named_method(tmp_path, method, same):
    """-m MML is check's MML (shrunk) (its EAP fair scores): the memo said it was "chosen instead of the
    recommended method" and named Chapter 5's rule (TMN/TLI) as check's recommendation, from a check run
    without the Rasch fits, where ratercal check recommends MML (shrunk) by the study."""
    memo = tmp_path / "m.html"
    res = run("adjust", RATINGS, *README_ARGS, "-m", method, "--cut", "3.25", "-o", tmp_path / "a.csv", "--memo", memo,
              "-q")
    assert res.exit_code == 0, res.output
    page = memo.read_text()
    said = "the Rasch model by marginal maximum likelihood (MML, shrunk): the corrected study"
    assert page.count("It is check's recommendation; its basis: the corrected study" if same
                      else f"To check: check recommends {said}") == 3
    assert ("was chosen instead of the recommended method" in page) is not same
    assert "check recommends truncated" not in page


def test_confidence_on_the_command_line(tmp_path):
    """adjust --confidence 0.68: the interval is ± 0.994 SE (within the scale), its columns low68/high68, the memo says 68%; a
    confidence that is not between 0 and 1 is one line, exit 2, nothing written."""
    args = (RATINGS, *README_ARGS, "-m", "TLI", "--bootstrap", "20", "--cut", "2.25,3.25,4.25")
    res = run("adjust", *args, "-o", tmp_path / "a.csv", "--changes", tmp_path / "c.csv", "--confidence", "0.68",
              "--memo", tmp_path / "m.html", "-q")
    assert res.exit_code == 0, res.output
    ch = read_csv(tmp_path / "c.csv")
    for r in ch:
        low, high = float(r["low68"]), float(r["high68"])
        a, half = float(r["adjusted"]), 0.9944579 * float(r["se"])   # (TLI's scores stay on 0-5: censored there)
        assert (low, high) == pytest.approx((max(a - half, 0.0), min(a + half, 5.0)), abs=2e-3)
        assert (r["uncertain"] == "yes") == any(low < c <= high for c in (2.25, 3.25, 4.25))
    n = sum(r["uncertain"] == "yes" for r in ch if r["grade"] == "5")
    memo = (tmp_path / "m.html").read_text()
    assert f"<b>grade=5</b>: {n} of 124 student(s) are uncertain at 68% confidence" in memo
    assert "<th>confidence</th><td>0.68</td>" in memo
    bad = run("adjust", *args, "-o", tmp_path / "b.csv", "--confidence", "95")
    assert bad.exit_code == 2 and "--confidence: must lie strictly between 0 and 1" in bad.output
    assert not (tmp_path / "b.csv").exists()


def test_the_summarys_uncertain_papers_follow_the_confidence(tmp_path):
    """``adjust --confidence``: the summary printed, its --json and the library's ``adjustment_summaries``
    count as uncertain the papers whose pass probability lies between (1 - c) / 2 and (1 + c) / 2, the same
    papers as the change list at that confidence.  The summary said 0.05 and 0.95 whatever was given."""
    import ratercal_cli as rc
    from ratercal_cli.practice.levels import changes

    r = rc.read_ratings(RATINGS, scale="0-5", group_col="grade")
    res = rc.adjust(r, "TLI", bootstrap=50, cut=3.25)
    for c in (0.5, 0.99):
        ch = changes(res, levels=parse_levels("3.25"), confidence=c)
        for s in res.adjustment_summaries(confidence=c):
            mine = {row["paper"] for row in ch.rows if row["grade"] == s.group and row["uncertain"] == "yes"}
            assert set(s.methods[0].uncertain) == mine
    n = [sum(len(s.methods[0].uncertain) for s in res.adjustment_summaries(confidence=c)) for c in (0.5, None, 0.99)]
    assert n[0] < n[1] < n[2], n
    args = ["adjust", str(RATINGS), "--scale", "0-5", "--group-col", "grade", "-m", "TLI", "--bootstrap", "50",
            "--cut", "3.25", "-o", str(tmp_path / "a.csv")]
    out = run(*args, "--confidence", "0.5", "--html", tmp_path / "a.html")
    assert out.exit_code == 0, out.output
    assert "pass with a probability between 0.25 and 0.75" in out.output
    page = (tmp_path / "a.html").read_text()
    assert "whose probability of passing lies between 0.25 and 0.75" in page and "0.05 and 0.95" not in page
    js = json.loads(run(*args, "--confidence", "0.5", "--json", "-q").stdout)
    assert sum(len(g["summary"]["methods"][0]["uncertain"]) for g in js["groups"]) == n[0]


def test_confidence_without_a_cut_is_refused(tmp_path):
    """``adjust --confidence 0.5`` without ``--cut`` was ignored in silence (uncertain is of a decision at a
    cut); an error now, before anything is written.  Left at its default it says nothing."""
    out = tmp_path / "a.csv"
    res = run("adjust", RATINGS, "--scale", "0-5", "--group-col", "grade", "-m", "TLI", "-o", out,
              "--confidence", "0.5", "-q")
    assert res.exit_code == 2 and not out.exists()
    assert res.output.strip() == "error: --confidence: goes with --cut: a decision is uncertain at a cut"
    assert run("adjust", RATINGS, "--scale", "0-5", "--group-col", "grade", "-m", "TLI", "-o", out, "-q").exit_code == 0


def test_the_page_of_several_cuts_shows_the_levels_and_the_uncertain(tmp_path):
    """``adjust --cut 2.25,3.25 --html``: the printed summary and the memo gave each level's count and the
    uncertain students at the confidence; the page said nothing of cuts.  It now has the memo's levels table
    (one function for both) and the same uncertain counts."""
    import re

    args = [RATINGS, "--scale", "0-5", "--group-col", "grade", "-m", "MML", "--cut", "2.25,3.25",
            "--confidence", "0.5", "-o", tmp_path / "a.csv", "--html", tmp_path / "p.html", "--memo",
            tmp_path / "m.html", "--json", "-q"]
    res = run("adjust", *args)
    assert res.exit_code == 0, res.output
    page, memo = (tmp_path / "p.html").read_text(), (tmp_path / "m.html").read_text()
    assert "<h2>Levels</h2>" in page and "cuts 2.25, 3.25" in page
    table = re.search(r"<table><tr><th rowspan=2>level</th>.*?</table>", memo, re.S).group(0)
    assert table in page
    for lv in json.loads(res.stdout)["levels"]:
        assert f"{lv['uncertain']} of {sum(lv['before'])} paper(s) are uncertain at 50% confidence" in page


def test_a_change_list_of_several_methods_says_whose_it_is(tmp_path):
    """-m MML,TLI --changes wrote MML's list with no method column and said nothing."""
    res = run("adjust", RATINGS, *README_ARGS, "-m", "TLI,MN", "--cut", "3.25", "-o", tmp_path / "a.csv",
              "--changes", tmp_path / "c.csv", "--memo", tmp_path / "m.html")
    assert res.exit_code == 0, res.output
    assert ("warning: --changes and --memo: of TLI, the first of the methods named (TLI, MN); to have them of "
            "another method, name that method first\n") in res.stderr
    one = run("adjust", RATINGS, *README_ARGS, "-m", "TLI", "--cut", "3.25", "-o", tmp_path / "b.csv",
              "--changes", tmp_path / "d.csv")
    assert one.exit_code == 0 and "the first of the methods named" not in one.stderr


def test_a_workbook_is_the_same_bytes_whenever_it_is_written(tmp_path, monkeypatch):
    """openpyxl stamped the workbook's properties and each zip entry with the time of writing: a staff tester's
    two runs 1.5 s apart gave different .xlsx bytes (every CSV, HTML and PNG the same).  The clock moved an
    hour between the runs here: the same bytes; with SOURCE_DATE_EPOCH the properties carry its time."""
    import time
    import zipfile

    clock = [time.time()]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    digests = []
    for k in range(2):
        clock[0] += 3600.0 * k
        out, changes = tmp_path / f"a{k}.xlsx", tmp_path / f"c{k}.xlsx"
        res = run("adjust", RATINGS, *README_ARGS, "-m", "TLI", "-o", out, "--changes", changes, "-q")
        assert res.exit_code == 0, res.output
        digests.append((hashlib.sha256(out.read_bytes()).hexdigest(), hashlib.sha256(changes.read_bytes()).hexdigest()))
    assert digests[0] == digests[1]
    assert {i.date_time for i in zipfile.ZipFile(tmp_path / "a0.xlsx").infolist()} == {(1980, 1, 1, 0, 0, 0)}
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert run("adjust", RATINGS, *README_ARGS, "-m", "TLI", "-o", tmp_path / "e.xlsx", "-q").exit_code == 0
    assert str(openpyxl.load_workbook(tmp_path / "e.xlsx").properties.created) == "2023-11-14 22:13:20"


def test_a_later_years_memo_names_its_anchors_and_the_raters_that_drifted(tmp_path):
    """A staff tester's year-2 memo (adjust --anchors --memo) named the anchor file but neither its digest nor
    that R5 drifted and was freed (the README's rubric years: +0.98 logits)."""
    from ratercal_cli.io import sha256_file

    rubric = ["--scale", "1-6", "--paper-col", "student", "--score-cols", "style,org,conv,sent_form"]
    anchors = tmp_path / "y1.csv"
    assert run("check", ROOT / "examples" / "rubric_year1.csv", *rubric, "--write-anchors", anchors, "-q").exit_code == 0
    memo = tmp_path / "memo.html"
    res = run("adjust", ROOT / "examples" / "rubric_year2.csv", *rubric, "-m", "MFRM", "--anchors", anchors,
              "-o", tmp_path / "y2.csv", "--memo", memo, "-q")
    assert res.exit_code == 0, res.output
    page = memo.read_text()
    assert f"<th>anchors SHA-256</th><td>{sha256_file(anchors)}</td>" in page
    assert "<th>drifted raters</th><td>R5 (+0.98 logits, freed: measured afresh)</td>" in page
    # what the anchors do, once, before the criteria (a rubric's memo said nothing of them, and one bare "For this
    # file alone" line inside conv's paragraph read as conv's alone: a verifying helper)
    items = re.findall(r"<li>(.*?)</li>", page.split("<h2>Decision</h2>")[1].split("<h2>")[0])
    kept = ("The many-facet Rasch model (MFRM) holds the scores on the anchors&#x27; scale (the earlier "
            "calibration&#x27;s); the methods compared for this file alone cannot use anchors.")
    assert items[0] == kept and items.count(kept) == 1
    alone = [i for i in items if "for this file alone, without the anchors: check recommends" in i]
    assert alone and all(re.match(r"criterion=\w+: for this file alone", i) for i in alone)
    assert "To check:" not in page and "was chosen instead" not in page
    # a memo of TLI, named first beside the anchored MFRM: TLI holds no scale, and the anchors' notes are MFRM's
    res = run("adjust", ROOT / "examples" / "rubric_year2.csv", *rubric, "-m", "TLI,MFRM", "--anchors", anchors,
              "-o", tmp_path / "y2b.csv", "--memo", memo, "-q")
    assert res.exit_code == 0, res.output
    page = memo.read_text()
    assert "scale (the earlier calibration" not in page and "MFRM: " not in page


def test_the_memo_says_a_single_cut_on_the_grid_of_raw_averages(tmp_path):
    """One cut where many papers' raw means sit (3 on means of two readings): the command line warns that any
    method lowering them by a hair fails them, but the memo (and the app's decision page) said "16 change
    level (0 up, 16 down)" alone (a staff tester).  They say how many sit on the cut and how many of the
    changes are theirs, as they do of several cuts."""
    memo = tmp_path / "m.html"
    res = run("adjust", RATINGS, *README_ARGS, "-m", "TLI", "--cut", "3", "-o", tmp_path / "a.csv", "--memo", memo,
              "--changes", tmp_path / "c.csv", "-q")
    assert res.exit_code == 0, res.output
    page = memo.read_text()
    ch = read_csv(tmp_path / "c.csv")
    for g in ("5", "8", "11"):
        mine = [r for r in ch if r["grade"] == g]
        on = sum(float(r["given"]) == 3.0 for r in mine)
        moved = sum(r["moved"] == "yes" for r in mine)
        assert on and f"<b>grade={g}</b>: {on} student(s) have a given score exactly on a cut ({on} at 3)" in page
        assert f"of the {moved} level change(s) are theirs" in page
    # the moves between two levels are the table's "changed level (up, down)": not listed again (a tester)
    assert "Moves between levels" not in page


def test_check_and_compare_read_a_decimal_comma_cut_as_adjust_does(tmp_path):
    """``compare --decimal comma --cut 2,5`` (and check's) was "'2,5' is not a valid float" where adjust takes it
    (a staff tester): the same numbers as ``--cut 2.5``; two cuts are one line naming --cut, exit 2."""
    path = tmp_path / "f.csv"
    path.write_text("p;r;s\n" + "".join(f"P{p};R{(p + k) % 4};{(p * (k + 2)) % 5 + 1}\n" for p in range(30) for k in range(2)))
    base = ("--sep", "semicolon", "--paper-col", "p", "--rater-col", "r", "--score-col", "s", "--scale", "1-5",
            "-m", "NO,TLI", "--json")
    a = run("compare", path, *base, "--decimal", "comma", "--cut", "2,5")
    b = run("compare", path, *base, "--cut", "2.5")
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    assert json.loads(a.output) == json.loads(b.output) and "2.5" in a.output
    res = run("compare", path, *base, "--decimal", "comma", "--cut", "2,5;3,5")
    assert res.exit_code == 2 and "--cut: one cut here" in res.output
    res = run("check", path, *base[:-3], "--decimal", "comma", "--cut", "2,5", "--simulate", "2", "--json")
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("end", [b"\r\n", b"\r"])
def test_the_change_list_keeps_the_inputs_line_ends(tmp_path, end):
    """A CRLF export's adjusted file kept CRLF but its change list had LF alone (a staff tester); a file of CRs alone
    (a classic Mac export) came back with LF (an edge tester)."""
    path = tmp_path / "f.csv"
    path.write_bytes(b"paper,rater,score" + end + b"".join(f"P{p},R{(p + k) % 4},{(p * (k + 2)) % 5 + 1}".encode() + end
                                                           for p in range(30) for k in range(2)))
    res = run("adjust", path, "--scale", "1-5", "-m", "TLI", "--cut", "3", "-o", tmp_path / "a.csv",
              "--changes", tmp_path / "c.csv", "-q")
    assert res.exit_code == 0, res.output
    for name in ("a.csv", "c.csv"):
        data = (tmp_path / name).read_bytes()
        assert data.count(end) > 30 and data.replace(end, b"").count(b"\n") == data.replace(end, b"").count(b"\r") == 0, name


def test_a_workbook_keeps_numbers_and_dates_as_cells_of_their_kind(tmp_path):
    """A decimal-comma file's score ``3,0`` beside ``3`` came back as a text cell beside a number (Excel's SUM skips
    the text), and a workbook's date cells as the text '2025-03-01' (a staff tester): numbers are numbers, ISO dates
    dates; labels stay as they were."""
    import datetime as dt

    src = tmp_path / "f.csv"
    src.write_text("paper;rater;score;when;note\n" + "".join(
        f"P{p};R{(p + k) % 4};{(p * (k + 2)) % 5 + 1}{',0' if p % 3 == 0 else ''};2025-03-{p % 28 + 1:02d};1.234\n"
        for p in range(30) for k in range(2)), encoding="utf-8")
    out = tmp_path / "a.xlsx"
    res = run("adjust", src, "--sep", "semicolon", "--decimal", "comma", "--scale", "1-5", "-m", "TLI", "-o", out, "-q")
    assert res.exit_code == 0, res.output
    rows = list(openpyxl.load_workbook(out).active.iter_rows(values_only=True))
    h = rows[0]
    scores = [r[h.index("score")] for r in rows[1:]]
    assert all(isinstance(x, (int, float)) for x in scores) and scores[0] == 1   # (P0: "1,0")
    when = [r[h.index("when")] for r in rows[1:]]
    assert all(isinstance(x, dt.datetime) for x in when) and when[0] == dt.datetime(2025, 3, 1)
    assert {r[h.index("paper")] for r in rows[1:]} == {f"P{p}" for p in range(30)}
    assert {r[h.index("note")] for r in rows[1:]} == {"1.234"}   # (in a decimal-comma file: a thousand, or text)


def test_checks_study_reason_names_the_run_one_way_and_the_best_only_when_another(tmp_path):
    """A tester read "(beyond1990 run" beside "beyond-1990" and "MML shrunk (0.5295 +- 0.0011; best MML shrunk
    0.5295)": the run is named one way, and the best only where it is not the pick."""
    res = run("check", RATINGS, *README_ARGS, "--json")
    assert res.exit_code == 0, res.output
    reasons = [x for g in json.loads(res.stdout)["groups"] for x in g["reasons"]]
    study = [x for x in reasons if x.startswith("the corrected study")]
    assert study and all("(beyond-1990 run, 200 replications)" in x for x in study)
    assert all("; best MML shrunk" not in x for x in study if ": MML shrunk (" in x)


def test_a_memo_lists_the_warnings_of_its_own_method_not_of_those_beside_it(tmp_path, monkeypatch):
    """adjust -m TLI,MN --memo: the memo is TLI's; it listed "MN: ... fall outside the scale" (a verifying helper),
    which the command line prints for the file."""
    import random

    rng = random.Random(4)
    lines = ["paper,rater,score"]
    for p in range(60):
        q = rng.randint(1, 6)
        lines += [f"P{p},{r},{max(1, q - 2) if r == 'R1' else q}" for r in rng.sample(["R1", "R2", "R3", "R4"], 2)]
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    memo = tmp_path / "memo.html"
    res = run("adjust", tmp_path / "r.csv", "--scale", "1-6", "-m", "TLI,MN", "-o", tmp_path / "o.csv", "--memo", memo)
    assert res.exit_code == 0, res.output
    assert "MN: 15 adjusted rating(s) and 5 paper score(s) fall outside the scale 1-6" in res.output
    assert "fall outside the scale" not in memo.read_text()
    run("adjust", tmp_path / "r.csv", "--scale", "1-6", "-m", "MN,TLI", "-o", tmp_path / "o2.csv", "--memo", memo)
    assert "MN: 15 adjusted rating(s) and 5 paper score(s) fall outside the scale 1-6" in memo.read_text()
    # a file named like a method: its name is no method's warning (the memo lost its own, a helper's)
    (tmp_path / "MN").write_text("paper,rater,score\n" + "".join(   # (random scores: the papers do not differ)
        f"P{p},{r},{rng.randint(1, 6)}\n" for p in range(80) for r in rng.sample(["R1", "R2", "R3", "R4"], 2)))
    monkeypatch.chdir(tmp_path)   # (named as given: "MN: the file's papers ...")
    res = run("adjust", "MN", "--scale", "1-6", "-m", "TLI,MN", "-o", tmp_path / "o3.csv", "--memo", memo)
    assert res.exit_code == 0, res.output
    assert "warning: MN: the file's papers do not differ detectably" in res.stderr
    assert "the file&#x27;s papers do not differ detectably" in memo.read_text()
    # the recommendation beside: its lines are its own
    res = run("adjust", tmp_path / "r.csv", "--scale", "1-6", "-m", "TLI,recommended", "-o", tmp_path / "o4.csv",
              "--memo", memo)
    assert "warning: " + str(tmp_path / "r.csv") + ": recommended " in res.stderr
    assert "recommended " not in memo.read_text().split("<h2>What it changes</h2>")[1]


def test_a_bootstrap_that_draws_none_of_the_methods_named_says_so(tmp_path):
    """A staff helper's PCM with --bootstrap 200: no standard errors and no word; its memo said "give a bootstrap"
    beside its settings' bootstrap 200."""
    from support import confounded_csv

    (tmp_path / "r.csv").write_text(confounded_csv())   # (the weakest papers read by a harsh rater: PCM recommended)
    memo = tmp_path / "m.html"
    res = run("adjust", tmp_path / "r.csv", "--scale", "1-6", "-m", "PCM,TLI", "--bootstrap", "20",
              "-o", tmp_path / "o.csv", "--memo", memo, "--cut", "3.5")
    assert res.exit_code == 0, res.output
    assert ("PCM: no standard errors from --bootstrap 20, which does not draw its scores (it draws NO, MN, TMN, LI, "
            "TLI,") in res.stderr
    assert "TLI_paper_se" in (tmp_path / "o.csv").read_text().splitlines()[0]
    assert "PCM_paper_se" not in (tmp_path / "o.csv").read_text().splitlines()[0]
    assert "(the bootstrap does not draw PCM: MML or MFRM give each one&#x27;s from their model)" in memo.read_text()
    assert "give a bootstrap" not in memo.read_text()
    # a memo of TLI beside it: PCM's line is PCM's
    run("adjust", tmp_path / "r.csv", "--scale", "1-6", "-m", "TLI,PCM", "--bootstrap", "20", "-o", tmp_path / "q.csv",
        "--memo", memo, "--cut", "3.5")
    assert "no standard errors from" not in memo.read_text()
    # without a bootstrap, PCM's memo is not told to give one (it never draws PCM); TLI's is
    run("adjust", tmp_path / "r.csv", "--scale", "1-6", "-m", "PCM", "-o", tmp_path / "q.csv", "--memo", memo,
        "--cut", "3.5")
    assert "the bootstrap does not draw PCM" in memo.read_text() and "give a bootstrap" not in memo.read_text()
    run("adjust", tmp_path / "r.csv", "--scale", "1-6", "-m", "TLI", "-o", tmp_path / "q.csv", "--memo", memo,
        "--cut", "3.5")
    assert "TLI gives none without a bootstrap, --bootstrap N" in memo.read_text()
    # a group's sentence of level changes says the same (it told a group's PCM, beside another group's MML with
    # standard errors, to give the bootstrap it was given)
    from ratercal_cli.practice.levels import LevelChanges

    lc = LevelChanges("A", "recommended", parse_levels("3.5", None), [1, 1], [1, 1], [[1, 0], [0, 1]], papers=2,
                      without_se="PCM (shrunk)", bootstrap=20)
    assert lc.uncertain_text("student") == ("no standard errors for its 2 student(s) (the bootstrap does not draw "
                                            "PCM (shrunk): MML or MFRM give each one's from their model), so whose "
                                            "level is uncertain is not known")
    lc.without_se, lc.bootstrap = "TLI (shrunk)", 0
    assert "(TLI (shrunk) gives none without a bootstrap, bootstrap N)" in lc.uncertain_text("student")
    res = run("adjust", tmp_path / "r.csv", "--scale", "1-6", "-m", "TLI", "--bootstrap", "20", "-o", tmp_path / "p.csv")
    assert "no standard errors for" not in res.stderr


def test_compare_at_a_cut_on_the_grid_of_raw_averages_warns_as_adjust_does():
    """compare --cut 3.5 showed "hurt" counts that were mostly papers averaging exactly 3.5, without the warning
    adjust gives at the same cut (a staff helper)."""
    import ratercal_cli as rc

    ratings = rc.read_ratings(ROOT / "examples" / "ratings.csv", scale="0-5", group_col="grade")
    got = [w for w in rc.compare(ratings, "TLI,MN", cut=3.5).warnings if "falls on the grid" in w]
    summaries = rc.adjust(ratings, "TLI", cut=3.5).adjustment_summaries()
    want = [w for s in summaries for w in s.warnings if "falls on the grid" in w]
    assert len(got) == 3 and [w.split(": ", 2)[2] for w in got] == want
    assert not [w for w in rc.compare(ratings, "TLI,MN", cut=3.25).warnings if "falls on the grid" in w]


def test_a_group_column_named_like_a_change_list_column_keeps_its_values(tmp_path):
    """A group column named "given" took the given scores' place in the change list (the memo then named students
    by their score, "G5-P000 (3.0)"), and a paper column named like the group's would have been written twice (a
    verifying helper)."""
    text = (ROOT / "examples" / "ratings.csv").read_text().splitlines()
    assert text[0] == "grade,paper,rater,score"
    (tmp_path / "g.csv").write_text("\n".join(["given,Student ID,rater,score"] + text[1:]) + "\n")
    res = run("adjust", tmp_path / "g.csv", "--scale", "0-5", "--group-col", "given", "--paper-col", "Student ID",
              "-m", "TLI", "--cut", "3.25", "-o", tmp_path / "o.csv", "--changes", tmp_path / "ch.csv", "-q")
    assert res.exit_code == 0, res.output
    ch = read_csv(tmp_path / "ch.csv")
    assert list(ch[0])[:4] == ["group", "Student ID", "ratings", "given"]
    assert {r["group"] for r in ch} == {"5", "8", "11"} and all("." in r["given"] for r in ch)


def test_a_memo_of_the_recommendation_keeps_its_methods_warnings():
    """-m recommended,MML: the recommendation is MML (shrunk), and MML's warnings are its own too (the memo left
    out "MML: raters ... never gave ...", a verifying helper); TLI's, named beside, are not."""
    from types import SimpleNamespace

    from ratercal_cli.practice.memo import _warnings_of
    from ratercal_cli.ratings import Ratings

    r = Ratings.from_labels(["p1", "p1", "p2", "p2"], ["R1", "R2", "R1", "R2"], [3, 4, 2, 2], max_score=5)
    said = ["recommended MML (shrunk) (decided by the study: ...)", "MML: rater R1 never gave a 0",
            "TLI: 3 adjusted score(s) are not finite", "the file's papers do not differ detectably (...)"]
    res = SimpleNamespace(methods=["recommended", "MML", "TLI"], ratings=r, warnings=said,
                          groups=[SimpleNamespace(name=None, recommended="MML (shrunk)")])
    assert _warnings_of(res, "recommended") == [said[0], said[1], said[3]]
    assert _warnings_of(res, "MML") == [said[1], said[3]]
    assert _warnings_of(res, "TLI") == [said[2], said[3]]


def test_one_cut_on_a_rubrics_totals_is_on_the_html_page(tmp_path):
    """adjust --cut 14 on a rubric's totals: the page said nothing of pass and fail (its one-cut account is the
    pass/fail summary, which a rubric has not), where the memo and the app gave the levels and the ties on the cut."""
    page = tmp_path / "r.html"
    res = run("adjust", ROOT / "examples" / "rubric_year1.csv", "--scale", "1-6", "--paper-col", "student",
              "--score-cols", "style,org,conv,sent_form", "-m", "MFRM", "--cut", "14", "-o", tmp_path / "a.csv",
              "--html", page, "--changes", tmp_path / "c.csv", "-q")
    assert res.exit_code == 0, res.output
    text = page.read_text()
    assert "<h2>Levels</h2>" in text and "cuts 14 on the rubric totals, adjusted by MFRM" in text
    ch = read_csv(tmp_path / "c.csv")
    given_fail = sum(r["given_level"] == "fail" for r in ch)
    adjusted_fail = sum(r["adjusted_level"] == "fail" for r in ch)
    assert re.search(rf"<td>fail</td><td>{given_fail}</td><td>{adjusted_fail}</td>", text), text[text.index("Levels"):][:800]
    assert text.count("have a given score exactly on a cut") == 1
