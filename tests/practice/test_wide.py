"""Wide rubric exports (a column per criterion, or a column per rater) read as long ratings."""

import numpy as np
import pytest

from ratercal_cli.errors import InputError
from ratercal_cli.practice.wide import expand_columns, melt

HEADER = ["student", "rater", "style", "org", "conv"]
ROWS = [dict(student="S1", rater="R1", style="4", org="3", conv=""),
        dict(student="S1", rater="R2", style="5", org="4", conv="4")]


def test_score_columns_become_a_criterion_facet():
    header, rows, lines, notes = melt(HEADER, ROWS, [2, 3], "f.csv", score_cols="style,org,conv")
    assert header == ["student", "rater", "criterion", "score"]
    assert lines == [2, 2, 2, 3, 3, 3]
    assert rows[0] == dict(student="S1", rater="R1", criterion="style", score="4")
    assert rows[2] == dict(student="S1", rater="R1", criterion="conv", score="")   # a missing rating, kept
    assert "2 wide row(s) read as 6 rating(s)" in notes[0]


def test_rater_columns_become_raters_and_blanks_are_no_reading():
    header = ["paper", "grade", "rater_1", "rater_2", "rater_3"]
    rows = [dict(paper="P1", grade="5", rater_1="3", rater_2="", rater_3="4"),
            dict(paper="P2", grade="5", rater_1="", rater_2="2", rater_3="2")]
    h, out, lines, _ = melt(header, rows, [2, 3], "f.csv", rater_cols="rater_*")
    assert h == ["paper", "grade", "rater", "score"]
    assert [(r["paper"], r["rater"], r["score"]) for r in out] == [("P1", "rater_1", "3"), ("P1", "rater_3", "4"),
                                                                   ("P2", "rater_2", "2"), ("P2", "rater_3", "2")]
    assert lines == [2, 2, 3, 3]


@pytest.mark.parametrize("kw, message", [
    (dict(score_cols="style,voice"), "f.csv:1: score_cols: no column 'voice'"),
    (dict(rater_cols="judge_*"), "f.csv:1: rater_cols: pattern 'judge_*' matches no column"),
    (dict(score_cols="style", rater_cols="rater"), "not both"),
    (dict(rater_cols="style,org"), "f.csv:1: rater: the file already has a column 'rater'"),
])
def test_errors_name_the_option(kw, message):
    with pytest.raises(InputError) as exc:
        melt(HEADER, ROWS, [2, 3], "f.csv", **kw)
    assert message in str(exc.value)


def test_patterns_keep_header_order():
    assert expand_columns(["c*", "style"], ["a", "conv", "b", "cx", "style"], "f", "--score-cols") == \
        ["conv", "cx", "style"]


@pytest.mark.parametrize("body, options, message", [
    ("student,rater,style,org\nS1,R1,4,4.5\n", ("--score-cols", "style,org"), "f.csv:2: org: '4.5' is not a whole number"),
    ("student,rater,style,org\nS1,R1,4,5\nS1,R2,7,3\n", ("--score-cols", "style,org", "--scale", "1-6"),
     "f.csv:3: style: 7 is outside the scale 1-6"),
    ("student,Ann,Bob\nS1,4,x\n", ("--rater-cols", "Ann,Bob"), "f.csv:2: Bob: 'x' is not a number"),
])
def test_a_bad_score_in_a_wide_file_names_its_own_column(tmp_path, body, options, message):
    """The file has no column 'score': the error names the criterion's (or rater's) column the
    score is in, as the user sees the file."""
    from support import run

    path = tmp_path / "f.csv"
    path.write_text(body)
    res = run("check", path, "--paper-col", "student", *options)
    assert res.exit_code == 2 and message in res.output, res.output


@pytest.mark.parametrize("body, options, message", [
    ("essay,Ann,Bob\nE1,4,5\n", ("--paper-col", "essay", "--rater-cols", "*"),
     "--rater-cols: 'essay' is the file's --paper-col column"),
    ("Student,Rater,style,org\nS1,R1,4,5\n", ("--paper-col", "Student", "--rater-col", "Rater", "--score-cols", "*"),
     "--score-cols: 'Student' is the file's --paper-col column"),
    ("Student,Rater,style,org\nS1,R1,4,5\n", ("--paper-col", "Student", "--rater-col", "Rater", "--score-cols",
                                                "style,org,Rater"), "--score-cols: 'Rater' is the file's --rater-col column"),
])
def test_wide_columns_that_take_in_the_paper_or_rater_column_are_refused(tmp_path, body, options, message):
    """A pattern as wide as '*' took in the papers' column and crashed with a KeyError traceback."""
    from support import run

    path = tmp_path / "f.csv"
    path.write_text(body)
    res = run("check", path, "--scale", "1-6", *options)
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output, res.output


@pytest.mark.parametrize("seed", range(4))
def test_melting_a_column_at_a_time_gives_the_rows_cell_by_cell(seed):
    """melt_columns (codes, not a dict a cell) gives each wide row's cells in the wide columns' order, a
    blank rater cell left out, each long column's labels in the order they first appear."""
    import numpy as np

    from ratercal_cli.columnar import Rows
    from ratercal_cli.practice.wide import melt_columns

    rng = np.random.default_rng(seed)
    header = ["paper", "r1", "grade", "r2", "r3"]
    pool = ["", " ", "1", "2", "3", "4 ", "x"]
    wide = [{"paper": f"P{rng.integers(0, 30)}", "grade": str(rng.integers(4, 7)),
             **{r: str(rng.choice(pool)) for r in ("r1", "r2", "r3")}} for _ in range(200)]
    lines = list(range(2, 202))
    for opts, keep_blank in ((dict(rater_cols="r*"), False), (dict(score_cols="r1,r2,r3"), True)):
        new = "rater" if "rater_cols" in opts else "criterion"
        want, want_lines = [], []
        for ln, r in zip(lines, wide):
            for c in ("r1", "r2", "r3"):
                if keep_blank or r[c].strip():
                    want.append({"paper": r["paper"], "grade": r["grade"], new: c, "score": r[c]})
                    want_lines.append(ln)
        h, rows, got_lines, _ = melt_columns(header, Rows.from_dicts(header, wide), np.array(lines), "f.csv", **opts)
        assert h == ["paper", "grade", new, "score"] and list(rows) == want and got_lines.tolist() == want_lines
        for c in h:   # labels first seen first, every label used
            assert rows.column(c).labels == list(dict.fromkeys(r[c] for r in want))


# -- a pair of columns per reading (a staff tester: the app read only the first) ---------------------------
def _readings_export(tmp_path, papers=60, raters=6, seed=3):
    """``(by-reading file, the same ratings long)``: a line per student with ``Reader k`` and ``Score k`` for
    each reading (a third where the first two differ by more than a point, the other readings' cells blank),
    written the way a scoring system exports it; the long file has a line per reading and its order."""
    import numpy as np

    rng = np.random.default_rng(seed)
    sev = rng.normal(0, 0.6, raters)
    wide = ["student;Reader 1;Score 1;Reader 2;Score 2;Reader 3;Score 3;grade"]
    long = ["student;rater;score;order;grade"]
    for p in range(papers):
        q = rng.normal(3, 1)
        who = rng.choice(raters, 3, replace=False)
        sc = [int(np.clip(np.rint(q + sev[j] + rng.normal(0, 0.6)), 1, 6)) for j in who]
        n = 3 if abs(sc[0] - sc[1]) > 1 else 2
        cells = [x for k in range(3) for x in ((f"Ms {who[k]}", str(sc[k])) if k < n else ("", ""))]
        wide.append(";".join([f"S{p:03d}", *cells, str(5 + p % 2 * 3)]))
        long += [f"S{p:03d};Ms {who[k]};{sc[k]};{k + 1};{5 + p % 2 * 3}" for k in range(n)]
    a, b = tmp_path / "byreading.csv", tmp_path / "long.csv"
    a.write_text("\n".join(wide) + "\n", encoding="utf-8")
    b.write_text("\n".join(long) + "\n", encoding="utf-8")
    return a, b


def test_a_pair_of_columns_per_reading_is_read_as_its_readings(tmp_path):
    """``--rater-cols 'Reader *:Score *'``: every reading a rating, in the pairs' order (the third reading resolved
    as the long file's order column resolves it), the same adjusted scores as the long file's; the adjusted file
    keeps the layout, each score followed by that rating adjusted, the blank readings blank."""
    import csv

    from support import run

    import ratercal_cli as rc

    wide, long = _readings_export(tmp_path)
    kw = dict(scale="1-6", sep=";", paper_col="student", group_col="grade", resolve_discrepancies=True)
    a = rc.read_ratings(wide, rater_cols="Reader *:Score *", **kw)
    b = rc.read_ratings(long, **kw)
    assert a.n_ratings == b.n_ratings and a.n_papers == b.n_papers == 60
    ra, rb = rc.adjust(a, "TLI,MML"), rc.adjust(b, "TLI,MML")
    for m in ("TLI", "MML"):
        x = dict(zip(a.paper_ids, ra.paper_scores(m)))
        y = dict(zip(b.paper_ids, rb.paper_scores(m)))
        assert x.keys() == y.keys() and max(abs(x[k] - y[k]) for k in x) < 1e-12
    out = tmp_path / "out.csv"
    res = run("adjust", wide, "--sep", "semicolon", "--paper-col", "student", "--group-col", "grade", "--scale", "1-6",
              "--rater-cols", "Reader *:Score *", "--resolve-discrepancies", "-m", "TLI", "-o", out, "-q")
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(open(out, encoding="utf-8-sig"), delimiter=";"))
    assert list(rows[0])[:8] == ["student", "Reader 1", "Score 1", "Score 1_TLI", "Reader 2", "Score 2", "Score 2_TLI",
                                 "Reader 3"]
    assert len(rows) == 60 and all(r["Reader 1"].startswith("Ms ") for r in rows)
    two = next(r for r in rows if not r["Reader 3"])
    assert two["Score 3"] == "" and two["Score 3_TLI"] == ""
    x = dict(zip(a.paper_ids, ra.paper_scores("TLI")))
    # (a ';' file of whole scores: its numbers written with decimal commas, as a spreadsheet reading ';' files writes them)
    assert all(abs(float(r["TLI_paper"].replace(",", ".")) - x[r["student"]]) < 1e-4 for r in rows)
    assert all("," in r["TLI_paper"] for r in rows)
    # the memo lists no rater or score column for a file that has none (it listed rater_col rater, a tester)
    memo = tmp_path / "m.html"
    res = run("adjust", wide, "--sep", "semicolon", "--paper-col", "student", "--group-col", "grade", "--scale", "1-6",
              "--rater-cols", "Reader *:Score *", "-m", "TLI", "-o", tmp_path / "o2.csv", "--memo", memo, "-q")
    assert res.exit_code == 0 and "<th>rater_cols</th>" in memo.read_text()
    assert "<th>rater_col</th>" not in memo.read_text() and "<th>score_col</th>" not in memo.read_text()
    # the same layout on standard output (it came back long there, a tester)
    res = run("adjust", wide, "--sep", "semicolon", "--paper-col", "student", "--group-col", "grade", "--scale", "1-6",
              "--rater-cols", "Reader *:Score *", "--resolve-discrepancies", "-m", "TLI", "-o", "-", "-q")
    assert res.exit_code == 0 and res.stdout.splitlines()[0] == ";".join(list(rows[0])), res.stdout[:300]


@pytest.mark.parametrize("body, options, message", [
    ("student,Reader 1,Score 1,Reader 2,Score 2\nS1,Ann,4,,5\n", ("--rater-cols", "Reader *:Score *"),
     "f.csv:2: Score 2: a score ('5') without its rater: 'Reader 2' is blank"),
    ("student,Reader 1,Score 1,Reader 2,Score 2\nS1,Ann,4,Bob,x\n", ("--rater-cols", "Reader *:Score *"),
     "f.csv:2: Score 2: 'x' is not a number"),
    ("student,Reader 1,Score 1,Reader 2\nS1,Ann,4,Bob\n", ("--rater-cols", "Reader *:Score *"),
     "--rater-cols: 'Reader *:Score *': 2 rater column(s) (Reader 1, Reader 2) against 1 score column(s)"),
    ("student,Reader 1,Score 1,order\nS1,Ann,4,1\n", ("--rater-cols", "Reader 1:Score 1", "--order-col", "order"),
     "--order-col"),
    ("student,Reader 1,Score 1,Reader 2,Score 2\nS1,Ann,4,Bob,5\n", ("--rater-cols", "Reader 1:Score 1,Reader 2:"),
     "--rater-cols: 'Reader 2': give each reading as RATER_COLUMN:SCORE_COLUMN"),
    # (the file's own columns named, not the long file's 'rater'; a pattern taking in the paper column said so)
    ("student,Reader 1,Score 1,Reader 2,Score 2\nS1,Ann,4,Ann,5\n", ("--rater-cols", "Reader *:Score *"),
     "f.csv:2: Reader 2: duplicate rating of paper S1 by rater Ann (first at line 2, Reader 1)"),
    ("Reader ID,Reader 1,Score 1,Reader 2,Score 2\nS1,Ann,4,Bob,5\n", ("--rater-cols", "Reader *:Score *",
                                                                    "--paper-col", "Reader ID"),
     "--rater-cols: 'Reader ID' is the file's --paper-col column"),
])
def test_readings_errors_name_the_files_own_column(tmp_path, body, options, message):
    from support import run

    path = tmp_path / "f.csv"
    path.write_text(body)
    res = run("check", path, "--paper-col", "student", "--scale", "1-6", *options)
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output, res.output


def test_a_missing_score_of_a_reading_names_its_column(tmp_path):
    from support import run

    path = tmp_path / "f.csv"
    path.write_text("student,Reader 1,Score 1,Reader 2,Score 2\nS1,Ann,4,Bob,5\nS2,Ann,3,Bob,\nS3,Cy,2,Bob,3\n")
    res = run("check", path, "--paper-col", "student", "--scale", "1-6", "--rater-cols", "Reader *:Score *")
    assert res.exit_code == 0 and "f.csv:3: Score 2: 1 rating(s) without a usable score" in res.stderr, res.output


def test_the_app_guesses_a_pair_of_columns_per_reading():
    """A staff tester's French export (Correcteur 1, Note 1, ... Correcteur 3, Note 3) was guessed as a long file
    of Correcteur 1 and Note 1: the decision page said 160 ratings of 160 students where the file holds 340."""
    from ratercal_cli.app.guess import guess_columns

    header = ["Niveau", "ID élève", "Correcteur 1", "Note 1", "Correcteur 2", "Note 2", "Correcteur 3", "Note 3"]
    rows = [dict(zip(header, ["5", f"S{p}", "Kim", str(p % 5 + 1), "Ng", str(p % 4 + 1), *(("Ali", "3") if p % 3 else ("", ""))]))
            for p in range(20)]
    g = guess_columns(header, rows)
    assert (g.paper, g.rater, g.score, g.group) == ("ID élève", None, None, "Niveau")
    assert g.rater_cols == ["Correcteur 1:Note 1", "Correcteur 2:Note 2", "Correcteur 3:Note 3"] and g.scale == "1-5"
    h = ["Établissement", "copie", "Correcteur 1", "Note 1", "Correcteur 2", "Note 2"]   # (a tester's: no group guessed)
    g = guess_columns(h, [dict(zip(h, ["S1", f"P{p}", "Kim", "3", "Ng", str(p % 6 + 1)])) for p in range(10)])
    assert (g.group, g.paper) == ("Établissement", "copie")
    h = ["student", "Reader 1", "Score 1", "Reader 2", "Score 2"]
    g = guess_columns(h, [dict(zip(h, [f"S{p}", "Ann", "3", "Bob", str(p % 6 + 1)])) for p in range(10)])
    assert g.rater_cols == ["Reader 1:Score 1", "Reader 2:Score 2"] and g.order is None


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_a_rubric_lines_total_is_its_students_when_its_first_criterion_is_blank(tmp_path, suffix):
    """A staff tester's rubric: a line whose first criterion cell was blank (or NA) had its student's X_total blank
    (the line's first long row, the missing one, gave it), the student's other line the total."""
    import csv

    from support import run

    rng = np.random.default_rng(2)
    rows = [["student", "rater", "ideas", "org", "conv"]]
    for p in range(40):
        for r in rng.choice(5, 2, replace=False):
            rows.append([f"S{p:02d}", f"R{r}", *(str(int(x)) for x in rng.integers(1, 7, 3))])
    rows[4][2], rows[9][2], rows[14][3] = "", "NA", ""   # (lines 5 and 10: the first criterion; 15: the second)
    src = tmp_path / f"rubric{suffix}"
    if suffix == ".csv":
        src.write_text("\n".join(",".join(r) for r in rows) + "\n")
    else:
        from openpyxl import Workbook

        wb = Workbook()
        for r in rows:
            wb.active.append(r)
        wb.save(src)
    out = tmp_path / f"out{suffix}"
    res = run("adjust", src, "--scale", "1-6", "--paper-col", "student", "--score-cols", "ideas,org,conv",
              "-m", "TLI,MFRM", "-o", out, "-q")
    assert res.exit_code == 0, res.output
    if suffix == ".csv":
        got = list(csv.DictReader(open(out, newline="")))
    else:
        from openpyxl import load_workbook

        values = list(load_workbook(out).active.values)
        got = [dict(zip(values[0], (("" if v is None else str(v)) for v in line))) for line in values[1:]]
    for code in ("TLI", "MFRM"):
        by = {}
        for line in got:
            by.setdefault(line["student"], set()).add(line[f"{code}_total"])
        assert all(len(v) == 1 and "" not in v for v in by.values()), (code, [s for s, v in by.items() if len(v) > 1])
    assert got[3]["ideas"] == "" and got[3]["flag"] == "missing"
    # ... and beside the blank cell, the student's adjusted score on that criterion (a verifier: it was blank, the
    # next criteria's the student's)
    for code in ("TLI", "MFRM"):
        for crit in ("ideas", "org", "conv"):
            by = {}
            for line in got:
                by.setdefault(line["student"], set()).add(line[f"{crit}_{code}"])
            assert all(len(v) == 1 and "" not in v for v in by.values()), (code, crit)
