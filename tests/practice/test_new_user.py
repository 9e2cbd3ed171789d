"""Defects found trying issue 18's work as a new user would (a district's exports, the README's
walk-through): each test here failed before its fix."""

import csv

import pytest

from ratercal_cli.errors import InputError
from ratercal_cli.practice.adjust import parse_methods
from ratercal_cli.vocabulary import STUDY_METHODS

from support import run

#: 12 papers, 4 raters, two ratings each, scale 1-6
GOOD = "paper,rater,score\n" + "".join(
    f"P{p},R{(p + k) % 4 + 1},{(p * 7 + k * 3) % 6 + 1}\n" for p in range(12) for k in range(2))


@pytest.fixture
def good(tmp_path):
    p = tmp_path / "good.csv"
    p.write_text(GOOD)
    return p


# -- "-m all,MML": all used to swallow every other code silently ------------------------------
def test_all_keeps_the_methods_named_beside_it():
    codes, is_all = parse_methods("all,MML,MFRM")
    assert is_all and codes == list(STUDY_METHODS) + ["MML", "MFRM"]
    codes, _ = parse_methods(["MML", "all"])
    assert codes == ["MML"] + list(STUDY_METHODS)
    assert parse_methods("all,TLI")[0] == list(STUDY_METHODS)          # no code twice
    assert parse_methods("all,recommended", allow_recommended=True)[0][-1] == "recommended"
    with pytest.raises(InputError, match="unknown method BOGUS"):
        parse_methods("all,BOGUS")


@pytest.mark.slow
def test_adjust_all_and_wls_writes_wls_columns(tmp_path, good):
    out = tmp_path / "o.csv"
    res = run("adjust", good, "--scale", "1-6", "-m", "all,WLS", "-o", out, "-q")
    assert res.exit_code == 0, res.output
    header = next(csv.reader(out.open()))
    assert "TLI_paper" in header and "WLS_paper" in header


# -- --cut and --bootstrap that cannot mean anything -----------------------------------------
@pytest.mark.parametrize("cut", ["nan", "inf", "40", "0.5", "-1"])
@pytest.mark.parametrize("command", ["adjust", "compare"])
def test_a_cut_off_the_scale_is_an_error(tmp_path, good, cut, command):
    out = tmp_path / "o.csv"
    extra = ["-o", out] if command == "adjust" else []
    res = run(command, good, "--scale", "1-6", "-m", "TLI", "--cut", cut, *extra)
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines()[-1].startswith("error: --cut: the cut ")
    assert "not a score on the scale 1-6" in res.stderr
    assert not out.exists()


def test_cuts_at_the_ends_of_the_scale_are_allowed(tmp_path, good):
    for cut in ("1", "6", "3.75"):
        assert run("adjust", good, "--scale", "1-6", "--cut", cut, "-o", tmp_path / "o.csv", "-q").exit_code == 0


def test_one_bootstrap_draw_is_an_error_not_blank_columns(tmp_path, good):
    out = tmp_path / "o.csv"
    res = run("adjust", good, "--scale", "1-6", "--bootstrap", "1", "--cut", "3.5", "-o", out)
    assert res.exit_code == 2 and "error: --bootstrap: one bootstrap draw" in res.stderr
    assert not out.exists()
    res = run("adjust", good, "--scale", "1-6", "--bootstrap", "2", "--cut", "3.5", "-o", out, "-q")
    assert res.exit_code == 0
    rows = list(csv.DictReader(out.open()))
    assert all(r["TLI_paper_se"] and float(r["TLI_paper_se"]) > 0 for r in rows)


# -- the Wright map names thresholds by the scores they lie between --------------------------
def _wright_texts(monkeypatch, tmp_path, text, scale):
    """The texts of the Wright map ``check --png`` draws for a file (the figure caught as drawn)."""
    import ratercal_cli.report.figures as figures

    caught = []
    real = figures._draw

    def spy(path, w, h, painter):
        def paint(fig):
            painter(fig)
            caught.extend(t.get_text() for ax in fig.axes for t in ax.texts)
        return real(path, w, h, paint)

    monkeypatch.setattr(figures, "_draw", spy)
    p = tmp_path / "r.csv"
    p.write_text(text, encoding="utf-8")
    res = run("check", p, "--scale", scale, "--png", tmp_path / "map.png", "-q")
    assert res.exit_code == 0, res.output
    return caught


@pytest.mark.slow
def test_wright_map_thresholds_are_named_on_the_files_scale(monkeypatch, tmp_path):
    import numpy as np

    rng = np.random.default_rng(4)
    names = ["Smith, J.", "Brown, Sam", "Lee, K.", "Kim, S."]
    lines = ["paper,rater,score"]
    for p in range(200):
        q = rng.normal(3.5, 1.2)
        for k in rng.choice(4, 2, replace=False):
            s = int(np.clip(np.round(q + (k - 1.5) * 0.2 + rng.normal(0, 0.7)), 1, 6))
            lines.append(f'S{p},"{names[k]}",{s}')
    texts = _wright_texts(monkeypatch, tmp_path, "\n".join(lines) + "\n", "1-6")
    thresholds = sorted(t for t in texts if "|" in t)
    assert thresholds == ["1|2", "2|3", "3|4", "4|5", "5|6"]      # was 0|1 ... 4|5
    # each rater named by a label of its own (close raters shared one label, which ran off the panel)
    assert sorted(t for t in texts if "|" not in t) == sorted(names)


# -- lookalike warnings show accented names as they are --------------------------------------
def test_lookalike_warnings_show_accents_and_escape_only_what_does_not_show():
    from ratercal_cli.practice.ratings_file import _show

    assert _show("Müller, H.") == "'Müller, H.'"          # was 'M\\xfcller, H.'
    assert _show("GARCÍA, ANA") == "'GARCÍA, ANA'"
    assert _show("O'Neil, P.") == '"O\'Neil, P."'
    assert _show("R1\u200b") == "'R1\\u200b'"             # invisible: escaped
    assert _show("Zoe\u0308") == "'Zoe\\u0308'"           # decomposed: the combining mark escaped
    assert _show("A\u00a0B") == "'A\\xa0B'" and _show(" A ") == "' A '"


def test_a_district_export_warns_of_lookalikes_in_readable_names(tmp_path):
    p = tmp_path / "export.csv"
    rows = ['"Student ID","Reader","Score"'] + [
        f'"S{p}","{r}","{(p + k) % 6 + 1}"' for p in range(40)
        for k, r in enumerate(["Müller, H.", "García, Ana"] if p % 2 else ["Zoë Keller", "Müller, H."])]
    rows.append('"S99","MÜLLER, H.","4"')
    p.write_bytes(("\ufeff" + "\r\n".join(rows) + "\r\n").encode("utf-8"))
    res = run("check", p, "--paper-col", "student id", "--rater-col", "reader", "--scale", "1-6", "--no-rasch")
    assert res.exit_code == 0
    assert "raters 'Müller, H.' and 'MÜLLER, H.' differ only in case" in res.stderr


# -- the agreement table folds thin pairs also when every pair is thin -----------------------
def test_pair_table_folds_when_every_pair_is_thin():
    """The README's example file: 45 rater pairs, each sharing under 10 papers, printed 45 rows
    (issue 18 asked for exactly this table to fold into one line)."""
    from ratercal_cli.practice.agreement import format_agreement

    pairs = [dict(rater_a=f"R{a}", rater_b=f"R{b}", papers=2 + (a + b) % 5, exact=0.5, adjacent=1.0, kappa_w=0.3)
             for a in range(1, 10) for b in range(a + 1, 11)]
    overall = dict(rating_pairs=200, rater_pairs=45, exact=0.5, adjacent=1.0, kappa_w=0.7, kappa_w_pair_median=0.5,
                   alpha_ordinal=0.7, alpha_interval=0.7,
                   icc=dict(n_papers=100, icc1=0.7, icc1_lo=0.6, icc1_hi=0.8, k0=2.0, icc1k=0.8, icc1k_lo=0.7,
                            icc1k_hi=0.9))
    lines = format_agreement(dict(pairs=pairs, overall=overall, notes=[]))
    n = sum(p["papers"] for p in pairs)
    assert any(f"45 rater pairs sharing fewer than 10 papers ({n} papers in all; exact 50.0%) are folded" in line
               for line in lines)
    assert not any(line.split()[:1] == ["R1"] for line in lines)       # no row of a pair
    assert not any(line.startswith("rater ") for line in lines)         # nor an empty table's header


# -- the output of a spreadsheet's ';' file, and of an .xlsx ---------------------------------
def _semicolon_file(tmp_path, scores=None):
    p = tmp_path / "noten.csv"
    rows = ["Schüler;Bewerter;Punkte"] + [f'S{p};"Müller, H.";{s}' if k == 0 else f"S{p};R{(p + k) % 3};{s}"
                                          for p in range(12) for k, s in enumerate(
                                              [f"{(p * 7) % 6 + 1},0", f"{(p * 5 + 2) % 6 + 1},0"])]
    if scores:
        rows.append(scores)
    p.write_bytes(("\r\n".join(rows) + "\r\n").encode("utf-8"))
    return p


COLS = ["--paper-col", "Schüler", "--rater-col", "Bewerter", "--score-col", "Punkte", "--scale", "1-6"]


def test_a_semicolon_file_with_decimal_commas_is_written_back_the_same_way(tmp_path):
    """A German or French Excel opens a ';' file with decimal commas; it read the ',' output with
    points as one column, or '3.2500' as 32500 when imported."""
    p = _semicolon_file(tmp_path)
    out = tmp_path / "out.csv"
    res = run("adjust", p, *COLS, "--sep", "semicolon", "--decimal", "comma", "-m", "TLI", "-o", out, "-q")
    assert res.exit_code == 0, res.stderr
    text = out.read_bytes().decode("utf-8")
    lines = text.split("\r\n")
    assert lines[0] == "Schüler;Bewerter;Punkte;flag;TLI;TLI_paper"
    first = next(csv.reader([lines[1]], delimiter=";"))
    assert first[:3] == ["S0", "Müller, H.", "1,0"]
    assert "," in first[4] and "." not in first[4] and float(first[4].replace(",", ".")) > 0
    # the numbers are those of the same file written with points and commas
    q = tmp_path / "plain.csv"
    with q.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([["Schüler", "Bewerter", "Punkte"]] + [
            r[:2] + [r[2].replace(",0", "")] for r in csv.reader(lines[1:-1], delimiter=";")])
    res = run("adjust", q, *COLS, "-m", "TLI", "-o", tmp_path / "plain_out.csv", "-q")
    assert res.exit_code == 0, res.stderr
    plain = list(csv.reader((tmp_path / "plain_out.csv").open(encoding="utf-8")))
    ours = list(csv.reader(lines[1:-1], delimiter=";"))
    assert [r[4:] for r in plain[1:]] == [[v.replace(",", ".") for v in r[4:]] for r in ours]
    # Excel's first line naming the separator (sep=;) is read as that, not refused as a title (a verifier)
    hinted = tmp_path / "hinted.csv"
    hinted.write_bytes(b"sep=;\r\n" + p.read_bytes())
    assert run("adjust", hinted, *COLS, "--decimal", "comma", "-m", "TLI", "-o", tmp_path / "hinted_out.csv",
               "-q").exit_code == 0
    assert (tmp_path / "hinted_out.csv").read_bytes() == out.read_bytes()
    # found without --sep and --decimal (the app's guess; the command line had asked for both)
    assert run("adjust", p, *COLS, "-m", "TLI", "-o", tmp_path / "auto.csv", "-q").exit_code == 0
    assert (tmp_path / "auto.csv").read_bytes() == out.read_bytes()
    # a ';' file with decimal points keeps its ';' and its points
    p2 = tmp_path / "points.csv"
    p2.write_text(p.read_text(encoding="utf-8").replace(",0", ".0"), encoding="utf-8")
    assert run("adjust", p2, *COLS, "-m", "TLI", "-o", out, "-q").exit_code == 0
    row = out.read_text(encoding="utf-8").splitlines()[1].split(";")
    assert len(row) == 6 and "." in row[4] and "," not in row[4]
    # ... and one of whole scores is written with decimal commas, as the spreadsheet that saved it reads them
    p3 = tmp_path / "whole.csv"
    p3.write_text(p.read_text(encoding="utf-8").replace(",0", ""), encoding="utf-8")
    assert run("adjust", p3, *COLS, "-m", "TLI", "-o", out, "-q").exit_code == 0
    row = out.read_text(encoding="utf-8").splitlines()[1].split(";")
    assert "," in row[4] and "." not in row[4]
    assert run("adjust", p3, *COLS, "--decimal", "point", "-m", "TLI", "-o", out, "-q").exit_code == 0
    assert "." in out.read_text(encoding="utf-8").splitlines()[1].split(";")[4]
    # ... by every cell: a file whose decimal points begin past its first 64 KiB (a verifier's: commas beside them)
    long = tmp_path / "late.csv"
    body = p3.read_text(encoding="utf-8").splitlines()
    more = [f"T{k};R{k % 3};{k % 6 + 1}" for k in range(6000)] + [f"T{k};R{(k + 1) % 3};{(k + 2) % 6 + 1}.0"
                                                                  for k in range(6000)]
    long.write_text("\r\n".join(body + more) + "\r\n", encoding="utf-8")
    assert long.stat().st_size > 1 << 17 and ".0" not in long.read_bytes()[:1 << 16].decode()
    assert run("adjust", long, *COLS, "-m", "NO", "-o", out, "-q").exit_code == 0
    assert "," not in out.read_text(encoding="utf-8").splitlines()[1].split(";")[4]


def test_a_decimal_comma_score_that_is_not_whole_is_quoted_as_written(tmp_path):
    p = _semicolon_file(tmp_path, "S99;R1;3,5")
    res = run("check", p, *COLS, "--sep", "semicolon", "--decimal", "comma", "--no-rasch")
    assert res.exit_code == 2 and "Punkte: '3,5' is not a whole number" in res.stderr   # was '3.5'


def test_an_output_named_as_a_workbook_it_cannot_write_is_refused_before_the_work(tmp_path, good):
    # .xlsx is written (issue 33, tests/practice/test_outputs.py); the other spreadsheet formats are refused
    for name in ("OUT.XLS", "out.ods", "out.xlsm"):
        res = run("adjust", good, "--scale", "1-6", "-o", tmp_path / name)
        assert res.exit_code == 2 and "ratercal writes .xlsx workbooks and CSV, not ." in res.stderr
        assert not (tmp_path / name).exists()


# -- Excel's "Unicode Text": tab-separated UTF-16 with a byte-order mark ----------------------
def test_excel_unicode_text_is_read_as_utf16_and_written_back_as_utf8_with_a_bom(tmp_path):
    rows = [["Student ID", "Reader", "Score"]] + [
        [f"S{p}", ["Müller, H.", "García, Ana", "Zoë Keller", "Lee, K."][(p + k) % 4], str((p * 3 + k * 5) % 6 + 1)]
        for p in range(16) for k in range(2)]
    text = "".join("\t".join(r) + "\r\n" for r in rows)
    u16, u8 = tmp_path / "export.txt", tmp_path / "export.tsv"
    u16.write_bytes(text.encode("utf-16"))           # what Excel's Save As "Unicode Text" writes
    u8.write_bytes(text.encode("utf-8"))
    args = ["--paper-col", "Student ID", "--rater-col", "Reader", "--scale", "1-6", "-m", "TLI", "-q"]
    res = run("adjust", u16, *args, "-o", tmp_path / "a.tsv")
    assert res.exit_code == 0, res.stderr     # was: not UTF-8 text ... give --encoding (e.g. latin-1 ...)
    assert run("adjust", u8, *args, "-o", tmp_path / "b.tsv").exit_code == 0
    a, b = (tmp_path / "a.tsv").read_bytes(), (tmp_path / "b.tsv").read_bytes()
    assert a == b"\xef\xbb\xbf" + b and "Müller, H.\t".encode() in b


def test_a_utf16_byte_order_mark_before_text_that_is_not_utf16_is_named(tmp_path):
    """A file starting with UTF-16's byte-order mark whose text is 8-bit (a tool that wrote the mark and then
    UTF-8) was refused as "not UTF-8 text: byte 0x0a ... line 20" (an odd number of bytes) or as "missing
    column(s) paper, rater, score (found: 慰数Ⱳ慲整...)" (an even number), of a file read as UTF-16."""
    for body in (b"paper,rater,score\nP1,R1,3\nP1,R2,4\n", b"paper,rater,score\nP1,R1,3\nP1,R2,4\nP2,R1,5\n"):
        p = tmp_path / "marked.csv"
        p.write_bytes(b"\xff\xfe" + body)
        res = run("check", p, "--scale", "0-5")
        assert res.exit_code == 2 and res.stderr.strip() == (
            f"error: {p}:1: starts with a UTF-16 byte-order mark but is not UTF-16 text (no byte of it is NUL, as "
            "half of a line end's and a comma's are); save it again as UTF-8")


# -- one rating per paper: no paper SE rather than the rater parameters' part alone -----------
def test_one_rating_per_paper_gives_no_se_rather_than_an_overconfident_one(tmp_path):
    """Scored once, a paper's adjusted score carries its one rating's whole error; the bootstrap's
    spread alone (the rater parameters) gave SEs of about 0.08 and pass probabilities of 0 or 1,
    far surer than the same papers scored twice (SEs about 0.5)."""
    p = tmp_path / "once.csv"
    p.write_text("paper,rater,score\n" + "".join(
        f"P{i},R{i % 6 + 1},{(i * 7 + (i % 6)) % 6 + 1}\n" for i in range(120)))
    out = tmp_path / "o.csv"
    res = run("adjust", p, "--scale", "1-6", "-m", "TLI,MN", "--cut", "3.5", "--bootstrap", "20", "-o", out)
    assert res.exit_code == 0, res.stderr
    assert "warning: " + str(p) + ": TLI: no standard errors: no paper has two ratings" in res.stderr
    assert "MN: no standard errors" in res.stderr
    rows = list(csv.DictReader(out.open()))
    assert all(r["TLI_paper_se"] == "" and r["TLI_paper_pass"] == "" for r in rows)
    assert all(r["TLI_paper"] != "" for r in rows)
    # two ratings a paper: SEs as before
    q = tmp_path / "twice.csv"
    q.write_text(GOOD)
    assert run("adjust", q, "--scale", "1-6", "--bootstrap", "20", "-o", out, "-q").exit_code == 0
    assert all(float(r["TLI_paper_se"]) > 0.2 for r in csv.DictReader(out.open()))


# -- empty columns right of a spreadsheet's table ("a,b,c,,") --------------------------------
def test_empty_unnamed_columns_right_of_the_table_are_ignored(tmp_path):
    """Excel exports the used range: columns once touched come out as trailing ',,' on every line,
    which was refused ("more than one column has no name")."""
    p = tmp_path / "export.csv"
    body = "".join(f"P{p},R{(p + k) % 4 + 1},{(p * 7 + k * 3) % 6 + 1},,\r\n" for p in range(12) for k in range(2))
    p.write_text("paper,rater,score,,\r\n" + body + "P99,R1,4\r\n,,,,\r\n")   # a short line, an empty one
    out = tmp_path / "o.csv"
    res = run("adjust", p, "--scale", "1-6", "-o", out, "-q")
    assert res.exit_code == 0, res.stderr
    rows = out.read_text().splitlines()
    assert rows[0] == "paper,rater,score,flag,TLI,TLI_paper" and rows[1].startswith("P0,R1,1,,") and len(rows) == 26
    p.write_text("paper,rater,score,,\r\n" + body.replace("P3,R4,4,,", "P3,R4,4,,oops", 1))
    res = run("adjust", p, "--scale", "1-6", "-o", out)
    assert res.exit_code == 2 and "field 5 has a value, and its column no name" in res.stderr


# -- "outside the scale" counts scores that leave it, not rounding ---------------------------
def test_rounding_at_the_top_of_the_scale_is_not_leaving_it():
    """RAS on the README's grade 8 gave 5.000000000000001 (written 5.0000) five times, and a
    warning said 5 RAS ratings fell outside the scale 0-5."""
    import numpy as np

    from ratercal_cli.methods.base import Adjusted
    from ratercal_cli.practice.notes import out_of_scale_notes
    from ratercal_cli.ratings import Ratings

    r = Ratings(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([5, 4, 0, 1]), 5, 2, 2)

    class Applied:
        adjusted = {"RAS": Adjusted(np.array([5 + 1e-15, 4.0, -1e-15, 1.0]), np.array([4.5, 0.5])),
                    "MN": Adjusted(np.array([5.2, 4.0, 0.0, 1.0]), np.array([4.6, 0.5]))}

    notes = out_of_scale_notes(Applied, r, 1)
    assert notes == ["MN: 1 adjusted rating(s) and 0 paper score(s) fall outside the scale 1-6 "
                     "(MN does not truncate; TMN does)"]


# -- a workbook whose formulas have no saved value --------------------------------------------
@pytest.mark.slow
def test_a_formula_without_a_saved_value_is_an_error_not_a_missing_score(tmp_path):
    """openpyxl (and other scripts) write formulas without computing them; such a score cell read
    as blank, and the rating was skipped as 'blank or NA'."""
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["paper", "rater", "score", "raw"])
    for p in range(12):
        for k in range(2):
            raw = (p * 7 + k * 3) % 6 + 1
            row = ws.max_row + 1
            ws.append([f"P{p}", f"R{(p + k) % 4 + 1}", f"=D{row}" if (p, k) == (5, 1) else raw, raw])
    ws.append(["P99", "R1", None, None])      # a blank score stays a blank score
    wb.save(tmp_path / "f.xlsx")
    res = run("check", tmp_path / "f.xlsx", "--scale", "1-6", "--no-rasch")
    assert res.exit_code == 2
    assert "f.xlsx:13: score: a formula (=D13) with no saved value" in res.stderr
    ws["C13"] = 5
    wb.save(tmp_path / "f.xlsx")
    res = run("check", tmp_path / "f.xlsx", "--scale", "1-6", "--no-rasch")
    assert res.exit_code == 0 and "1 rating(s) without a usable score" in res.stderr


def test_a_formula_without_a_saved_value_in_a_column_not_read_is_a_warning(tmp_path):
    """A staff tester's workbook with an unused ``Moyenne`` column of ``=AVERAGE(...)`` written by a script stopped
    the run over a column the analysis never reads: a warning now; a wide file's score column (read, though not
    named as a column) and a long file's score column are still refused."""
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["paper", "R1", "R2", "Moyenne"])
    for p in range(12):
        row = ws.max_row + 1
        ws.append([f"P{p}", (p * 7) % 6 + 1, (p * 5 + 3) % 6 + 1, f"=AVERAGE(B{row}:C{row})"])
    wb.save(tmp_path / "w.xlsx")
    res = run("check", tmp_path / "w.xlsx", "--scale", "1-6", "--rater-cols", "R1,R2", "--no-rasch")
    assert res.exit_code == 0, res.output
    assert "formulas with no saved value in column(s) 'Moyenne' (from row 2)" in res.stderr
    ws["C5"] = "=B5"
    wb.save(tmp_path / "w.xlsx")
    res = run("check", tmp_path / "w.xlsx", "--scale", "1-6", "--rater-cols", "R*", "--no-rasch")
    assert res.exit_code == 2 and "w.xlsx:5: R2: a formula (=B5) with no saved value" in res.stderr


def test_a_workbooks_date_column_comes_back_as_the_date(tmp_path):
    """Found by the tester: a date cell of an .xlsx input (openpyxl: a datetime at midnight) came back in the
    output as ``2026-05-01 00:00:00``; a CSV export of the sheet holds the date."""
    import datetime

    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["paper", "rater", "score", "read on"])
    for p, (a, b) in enumerate(((2, 3), (4, 4), (1, 3))):
        ws.append([f"P{p}", "A", a, datetime.datetime(2026, 5, 1 + p)])
        ws.append([f"P{p}", "B", b, datetime.datetime(2026, 5, 1 + p, 14, 30)])
    wb.save(tmp_path / "d.xlsx")
    res = run("adjust", tmp_path / "d.xlsx", "--scale", "0-5", "-m", "NO", "-o", tmp_path / "d.csv", "-q")
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "d.csv").read_text().splitlines()
    assert lines[1].split(",")[3] == "2026-05-01" and lines[2].split(",")[3] == "2026-05-01 14:30:00"
    assert lines[5].split(",")[3] == "2026-05-03"


def test_a_title_row_above_the_columns_names_is_said_where_no_column_is_named(tmp_path):
    """The app reads a file before any column is named (its preview): a sheet whose first row is a title (one merged
    cell) ended in "expected 1 fields, found 14", a dead end (a staff tester); the command line, given the columns'
    names, already said which row holds them.  The error now says the row above holds one cell, a title."""
    from ratercal_cli.errors import InputError
    from ratercal_cli.practice.ratings_file import read_source

    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["Notes du trimestre"], ["paper", "rater", "score"], ["P1", "R1", 3], ["P1", "R2", 4]):
        ws.append(row)
    wb.save(tmp_path / "t.xlsx")
    (tmp_path / "t.csv").write_text("Notes du trimestre\npaper,rater,score\nP1,R1,3\nP1,R2,4\n")
    for name, where in (("t.xlsx", "row 1 holds one cell"), ("t.csv", "the line above holds one field")):
        with pytest.raises(InputError) as exc:
            read_source(tmp_path / name, ())
        assert f"{name}:2: expected 1 field, found 3: {where} ('Notes du trimestre', a title?)" in str(exc.value)
        # (the count is of cells: "and this row 3" read as a row number, a staff tester in the app)
        assert ("and this row 3 cells; delete" if name == "t.xlsx" else "and this one 3 fields; delete") in str(exc.value)
