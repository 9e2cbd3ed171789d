"""Issue 30: no output lands on an input or another output; no label runs as a spreadsheet formula.

Each hostile case is built here, small.  Before issue 30 the clashing paths were written (exit 0,
the ratings replaced by HTML) and the labels written as they were.
"""

import csv
import os

import pytest

from ratercal_cli.guard import neutralise, refuse_clashing_paths, restore
from ratercal_cli.errors import InputError

from support import run

#: 12 papers, 4 raters, two ratings each
GOOD = "paper,rater,score\n" + "".join(
    f"P{p},R{(p + k) % 4 + 1},{(p * 7 + k * 3) % 6}\n" for p in range(12) for k in range(2))


@pytest.fixture
def good(tmp_path):
    p = tmp_path / "in.csv"
    p.write_text(GOOD)
    return p


# -- item 1: outputs vs inputs -----------------------------------------------------------
@pytest.mark.parametrize("args", [
    ("check", "{in}", "--html", "{in}"),
    ("check", "{in}", "--png", "{in}"),
    ("check", "{in}", "--write-anchors", "{in}"),
    ("compare", "{in}", "-m", "NO,TLI", "--html", "{in}"),
    ("compare", "{in}", "-m", "NO,TLI", "--png", "{in}"),
    ("adjust", "{in}", "--html", "{in}"),
    ("adjust", "{in}", "--write-anchors", "{in}"),
    ("adjust", "{in}", "-o", "{out}", "--html", "{out}"),
    ("adjust", "{in}", "-o", "{out}", "--write-anchors", "{out}"),
    ("adjust", "{in}", "--html", "{in.adjusted}"),          # the default -o
    ("adjust", "{in}", "-o", "{out}", "--anchors", "{out}"),  # an input by another option
    ("adjust", "{in}", "-o", "{link}"),                      # the input through a symlink
    ("adjust", "{in}", "-o", "{hard}"),                      # the input by a hard link
    ("check", "{in}", "--html", "{sub}/../in.csv"),
    ("adjust", "{in}", "--memo", "{in}"),                    # app's outputs go through the same guard
    ("adjust", "{in}", "-o", "{out}", "--changes", "{out}"),
])
def test_an_output_naming_an_input_or_another_output_is_refused(tmp_path, good, args):
    (tmp_path / "link.csv").symlink_to(good)
    os.link(good, tmp_path / "hard.csv")
    (tmp_path / "sub").mkdir()
    names = {"{in}": good, "{out}": tmp_path / "out.csv", "{link}": tmp_path / "link.csv",
             "{hard}": tmp_path / "hard.csv", "{in.adjusted}": tmp_path / "in.adjusted.csv",
             "{sub}/../in.csv": tmp_path / "sub" / ".." / "in.csv"}
    before = sorted(os.listdir(tmp_path))
    res = run(*[str(names.get(a, a)) for a in args], "--scale", "0-5", "-q")
    assert res.exit_code == 2, res.output
    assert "ratercal would overwrite it" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert good.read_text() == GOOD            # the ratings untouched
    assert sorted(os.listdir(tmp_path)) == before   # and nothing else written


@pytest.mark.parametrize("command", ["check", "compare"])
def test_two_groups_on_one_png_are_refused_before_the_work(tmp_path, command, monkeypatch):
    """Groups '5 A' and '5/A' both map to map_5_A.png: check drew one map over the other and said 'wrote'
    twice (compare refused, after all its work).  Both refuse before any fit now, naming the groups."""
    rows = ["grade,paper,rater,score"] + [f"{g},{g}{i},R{(i + k) % 4},{(i * 3 + k) % 6}"
                                          for g in ("5 A", "5/A", "École Sud") for i in range(12) for k in range(2)]
    src = tmp_path / "g.csv"
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    import ratercal_cli.practice.check as check_module
    import ratercal_cli.practice.compare as compare_module

    def no_work(*a, **k):
        raise AssertionError("the work began before the clash was refused")
    monkeypatch.setattr(check_module, "check", no_work)
    monkeypatch.setattr(compare_module, "compare", no_work)
    extra = ("-m", "NO,TLI") if command == "compare" else ()
    res = run(command, src, "--group-col", "grade", "--scale", "0-5", *extra, "--png", tmp_path / "map.png", "-q")
    assert res.exit_code == 2, res.output
    assert "--png: groups '5 A' and '5/A' would both be mapped to" in res.stderr and "grade column" in res.stderr
    assert not list(tmp_path.glob("map*"))


def test_the_html_reports_own_maps_do_not_depend_on_the_group_names(tmp_path):
    """Groups 'NORTH' and 'North' share no --png file on a case-sensitive disk, but the check made for --png
    refused the HTML report's maps, drawn in a folder of its own: they are numbered now."""
    rows = ["paper,rater,score,school"] + [f"{g}{i},R{(i + k) % 4 + (4 if g == 'North' else 0)},{(i * 3 + k) % 6},{g}"
                                           for g in ("NORTH", "North") for i in range(15) for k in range(2)]
    src = tmp_path / "in.csv"
    src.write_text("\n".join(rows) + "\n")
    res = run("check", src, "--scale", "0-5", "--group-col", "school", "--html", tmp_path / "r.html", "-q")
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r.html").read_text()
    maps = [m for m in page.split("data:image/png;base64,")[1:]]
    assert len(maps) >= 2 and len({m[:2000] for m in maps}) == len(maps)   # (each group's own)


def test_a_group_png_keeps_the_letters_of_its_name():
    from pathlib import Path

    from ratercal_cli.practice.text import group_path

    assert group_path(Path("m.png"), "École Sud").name == "m_École_Sud.png"
    assert group_path(Path("m.png"), "5/A").name == "m_5_A.png"
    # a name past a file name's 255 bytes (87 Japanese characters: "File name too long") is cut, its hash kept
    long_a, long_b = "東京都立" * 30 + "A", "東京都立" * 30 + "B"
    a, b = group_path(Path("m.png"), long_a).name, group_path(Path("m.png"), long_b).name
    assert len(a.encode()) < 130 and a != b and a.startswith("m_東京都立") and a.endswith(".png")


def test_png_per_group_may_not_hit_the_input(tmp_path):
    """check --png map.png with groups draws map_A.png, ...: one of those is the input here."""
    src = tmp_path / "map_A.png"   # a ratings file with an odd name
    src.write_text("paper,rater,score,grade\n" + "".join(
        f"P{p},R{(p + k) % 4 + 1},{(p * 7 + k * 3) % 6},{'AB'[p % 2]}\n" for p in range(24) for k in range(2)))
    before = src.read_text()
    res = run("check", src, "--group-col", "grade", "--scale", "0-5", "--png", tmp_path / "map.png", "-q")
    assert res.exit_code == 2 and "--png" in res.stderr and "ratercal would overwrite it" in res.stderr
    assert src.read_text() == before


def test_distinct_outputs_are_written(tmp_path, good):
    res = run("adjust", good, "--scale", "0-5", "-o", tmp_path / "out.csv", "--html", tmp_path / "r.html", "-q")
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "out.csv").read_text().startswith("paper,rater,score,flag,TLI")
    assert (tmp_path / "r.html").read_text().lstrip().lower().startswith("<!doctype html")


SPEC = "Title = t\nFacets = 2\nModels = ?,?,R5\nLabels =\n1,paper\n1-3\n*\n2,rater\n1=A\n2=B\n*\nData = {data}\n"


def test_import_facets_refuses_to_write_over_its_data_file(tmp_path):
    data = tmp_path / "essays.dat"
    data.write_text("1,1,3\n1,2,4\n2,1,2\n2,2,2\n3,1,5\n3,2,4\n")
    spec = tmp_path / "spec.txt"
    spec.write_text(SPEC.format(data="essays.dat"))
    before = data.read_text()
    res = run("import-facets", spec, "-o", data)
    assert res.exit_code == 2 and "Data= of" in res.stderr and "ratercal would overwrite it" in res.stderr
    assert data.read_text() == before
    assert run("import-facets", spec, "-o", tmp_path / "long.csv").exit_code == 0


def test_refuse_clashing_paths_names_both(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("x")
    with pytest.raises(InputError, match=r"--html: is also the output of -o \(.*b.csv\)"):
        refuse_clashing_paths([("RATINGS_FILE", a)], [("-o", tmp_path / "b.csv"), ("--html", tmp_path / "b.csv")])
    refuse_clashing_paths([("RATINGS_FILE", a)], [("-o", "-"), ("--html", None), ("--png", tmp_path / "c.png")])


# -- item 2: spreadsheet formulas ----------------------------------------------------------
HOSTILE = ["=cmd|' /C calc'!A0", '=HYPERLINK("http://x","y")', "+1+1", "@SUM(1)", "\tTAB", "-2+3", "\rCR"]


@pytest.mark.parametrize("value", HOSTILE)
def test_neutralise_makes_a_formula_text_and_restore_gives_it_back(value):
    out = neutralise(value)
    assert out == "'" + value and restore(out) == value


@pytest.mark.parametrize("value", ["-1", "+2.5", "-3e2", "-2,5", "R1", "'quoted'", "", "a=b", "-", "+"])   # ("-": a sheet's none)
def test_neutralise_keeps_numbers_and_ordinary_labels(value):
    assert neutralise(value) == value and restore(value) == value
    assert neutralise(-1.5) == -1.5 and neutralise(None) is None


def _hostile_file(tmp_path):
    """Raters and papers labelled with formulas, and a column of negative numbers that must stay numbers."""
    raters = ["=cmd|' /C calc'!A0", "+1+1", "@SUM(1)", "-R4"]
    lines = ["paper,rater,score,offset"]
    for p in range(12):
        for k in range(2):
            paper = '=HYPERLINK("http://x","y")' if p == 0 else f"P{p}"
            lines.append(csv_line([paper, raters[(p + k) % 4], str((p * 7 + k * 3) % 6), "-1.5"]))
    path = tmp_path / "hostile.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, raters


def csv_line(cells):
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(cells)
    return buf.getvalue()


def _formula_cells(rows):
    return [c for row in rows for c in row if c[:1] in ("=", "+", "-", "@", "\t", "\r")
            and not c.lstrip("+-").replace(".", "", 1).isdigit()]


def test_adjusted_csv_and_anchor_file_hold_no_formula(tmp_path):
    src, raters = _hostile_file(tmp_path)
    out, anchors = tmp_path / "out.csv", tmp_path / "cal.csv"
    res = run("adjust", src, "--scale", "0-5", "-o", out, "--write-anchors", anchors, "-q")
    assert res.exit_code == 0, res.stderr
    rows = list(csv.reader(out.open()))
    assert _formula_cells(rows) == []
    assert {r[1] for r in rows[1:]} == {"'" + r for r in raters}        # readable, with a leading '
    assert rows[1][0] == "'" + '=HYPERLINK("http://x","y")'
    assert {r[3] for r in rows[1:]} == {"-1.5"}                         # a number stays a number
    cal = list(csv.reader(anchors.open()))
    assert _formula_cells(cal) == [] and "'=cmd|' /C calc'!A0" in [r[3] for r in cal]
    # the anchor file reads back as the labels it was made of: the anchored fit finds every rater
    res = run("adjust", src, "--scale", "0-5", "-m", "MFRM", "-o", tmp_path / "o2.csv", "--anchors", anchors,
              "--json")
    assert res.exit_code == 0, res.stderr
    assert "not in the ratings" not in res.stderr and "no element" not in res.stderr


def test_import_facets_output_holds_no_formula(tmp_path):
    spec = tmp_path / "spec.txt"
    spec.write_text("Title = t\nFacets = 2\nModels = ?,?,R5\nLabels =\n1,paper\n1=@SUM(1)\n2=p2\n*\n2,rater\n"
                    "1==cmd|' /C calc'!A0\n2=B\n*\nData =\n1,1,3\n1,2,4\n2,1,2\n2,2,2\n")
    out = tmp_path / "long.csv"
    res = run("import-facets", spec, "-o", out, "-q")
    assert res.exit_code == 0, res.stderr
    rows = list(csv.reader(out.open()))
    assert _formula_cells(rows) == []
    assert rows[1][:2] == ["'@SUM(1)", "'=cmd|' /C calc'!A0"]


def test_xlsx_text_cells_come_back_inert_in_the_csv(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["paper", "rater", "score"])
    for p in range(12):
        for k in range(2):
            ws.append([f"P{p}", f"R{(p + k) % 4 + 1}", (p * 7 + k * 3) % 6])
    ws["B2"].value = "@SUM(1)"
    ws["B2"].data_type = "s"       # a text cell holding a formula's text
    path = tmp_path / "in.xlsx"
    wb.save(path)
    out = tmp_path / "out.csv"
    res = run("adjust", path, "--scale", "0-5", "-o", out, "-q")
    assert res.exit_code == 0, res.stderr
    rows = list(csv.reader(out.open()))
    assert _formula_cells(rows) == [] and rows[1][1] == "'@SUM(1)"


def test_text_cell_writes_a_string_not_a_formula(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    from ratercal_cli.guard import text_cell

    wb = openpyxl.Workbook()
    ws = wb.active
    text_cell(ws["A1"], "=1+1")
    text_cell(ws["A2"], -2.5)
    wb.save(tmp_path / "o.xlsx")
    back = openpyxl.load_workbook(tmp_path / "o.xlsx")
    a1 = back.active["A1"]   # text, as Excel writes '=1+1 typed in: shown and read as =1+1, never run
    assert a1.data_type == "s" and a1.value == "=1+1" and a1.quotePrefix
    assert back.active["A2"].value == -2.5


# -- item 6: hangs and unbounded memory --------------------------------------------------------
def _bounded(*args, timeout=180):
    """``ratercal ARGS`` in a child process held to 2 GiB of address space and ``timeout`` seconds
    (before issue 30 these cases ran for minutes or until the OOM killer)."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    code = "import sys; from ratercal_cli.cli import cli; cli(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit)


def test_an_xlsx_declaring_a_huge_dimension_is_read_by_its_cells(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    import zipfile

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["paper", "rater", "score"])
    for p in range(12):
        for k in range(2):
            ws.append([f"P{p}", f"R{(p + k) % 4 + 1}", (p * 7 + k * 3) % 6])
    ws.cell(row=1048576, column=1, value=" ")   # a blank-looking cell in the last row: every row between read
    plain = tmp_path / "plain.xlsx"
    wb.save(plain)
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = re_dimension(data)
                assert b'<dimension ref="A1:XFD1048576"/>' in data
            dst.writestr(item, data)
    assert bomb.stat().st_size < 10_000
    res = _bounded("adjust", bomb, "--scale", "0-5", "-o", tmp_path / "out.csv", "-q")
    assert res.returncode == 0, res.stderr
    rows = list(csv.reader((tmp_path / "out.csv").open(encoding="utf-8-sig")))   # for Excel: a BOM
    assert len(rows) == 25 and rows[0] == ["paper", "rater", "score", "flag", "TLI", "TLI_paper"]


def re_dimension(xml: bytes) -> bytes:
    import re

    return re.sub(rb'<dimension ref="[^"]*" ?/>', b'<dimension ref="A1:XFD1048576"/>', xml)


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_a_device_or_fifo_as_input_is_refused(tmp_path, kind):
    path = kind
    if kind == "fifo":
        path = tmp_path / "ratings.csv"
        os.mkfifo(path)
    res = _bounded("check", path, "--scale", "0-5", timeout=120)
    assert res.returncode == 2 and "is not a regular file" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_a_ratings_file_too_big_for_memory_is_refused_before_reading(good, monkeypatch):
    import ratercal_cli.config as config

    monkeypatch.setattr(config, "memory_available", lambda: 1000)   # a machine of 1000 bytes
    res = run("check", good, "--scale", "0-5")
    assert res.exit_code == 2 and "would need about" in res.stderr and str(good) in res.stderr


def test_a_facets_labels_range_of_a_billion_is_refused(tmp_path):
    spec = tmp_path / "spec.txt"
    spec.write_text("Title = t\nFacets = 2\nModels = ?,?,R5\nLabels =\n1,paper\n1-1000000000\n*\n2,rater\n1=A\n*\n"
                    "Data =\n1,1,3\n")
    res = _bounded("import-facets", spec, "-o", tmp_path / "long.csv", timeout=120)
    assert res.returncode == 2 and "more than 1,000,000 elements" in res.stderr and "spec.txt:6" in res.stderr
    spec.write_text("Title = t\nFacets = 2\nModels = ?,?,R5\nLabels =\n1,paper\n1-3\n*\n2,rater\n1=A\n*\n"
                    "Data =\n1-1000000000,1,3\n")
    res = _bounded("import-facets", spec, "-o", tmp_path / "long.csv", timeout=120)
    assert res.returncode == 2 and "needs 1,000,000,000 observations" in res.stderr


# -- item 9: error messages quote a bounded, printable snippet ---------------------------------
def test_a_facets_data_file_of_secrets_is_not_copied_into_the_error(tmp_path):
    secret = "root:$6$SALTSALT$" + "h" * 80 + ":19000:0:99999:7:::"
    data = tmp_path / "shadow"
    data.write_text(secret + "\n")
    env = tmp_path / "environ"
    env.write_bytes(b"HOME=/root\0PATH=/usr/bin\0SECRET_TOKEN=" + b"x" * 1400 + b"\0")
    for target in (data, env):
        spec = tmp_path / "spec.txt"
        spec.write_text(SPEC.format(data=target))
        res = run("import-facets", spec, "-o", tmp_path / "long.csv")
        assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
        assert "hhhhhhhhhhhhhhhhhhhh" not in res.stderr and "x" * 30 not in res.stderr
        assert "\0" not in res.stderr and len(res.stderr) < 300 + len(str(target)), res.stderr


def test_a_long_score_cell_is_quoted_in_part(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("paper,rater,score\nP1,R1," + "7" * 50 + "x\nP1,R2,3\n")
    res = run("check", path, "--scale", "0-5")
    assert res.exit_code == 2 and "r.csv:2: score: '777777777777777777777777'... is not a number" in res.stderr
