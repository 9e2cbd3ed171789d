"""``adjust --changes ch.ods`` was refused as "-o: ratercal writes .xlsx workbooks and CSV" after the
work, with the adjusted file already written and exit status 2: a half-done set of outputs under an
error naming the wrong option.  Now it is refused before anything is read or written, naming
--changes."""

from __future__ import annotations

from support import run

BODY = "paper,rater,score\n" + "".join(f"P{p},R{r},{(p * r) % 4}\n" for p in range(1, 13) for r in (1, 2, 3))


def test_a_change_list_named_as_a_workbook_ratercal_cannot_write_is_refused_first(tmp_path):
    src = tmp_path / "r.csv"
    src.write_text(BODY)
    out, changes = tmp_path / "o.csv", tmp_path / "ch.ods"
    res = run("adjust", src, "--scale", "0-3", "-m", "MN", "-o", out, "--changes", changes, "--cut", "2")
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {changes}: --changes: ratercal writes .xlsx workbooks and CSV, not .ods; " \
                                 "name it .xlsx or .csv"
    assert not out.exists() and not changes.exists()


def test_a_good_change_list_name_is_written(tmp_path):
    src = tmp_path / "r.csv"
    src.write_text(BODY)
    res = run("adjust", src, "--scale", "0-3", "-m", "MN", "-o", tmp_path / "o.csv", "--changes",
              tmp_path / "ch.xlsx", "--cut", "2", "-q")
    assert res.exit_code == 0 and (tmp_path / "ch.xlsx").read_bytes()[:2] == b"PK"


def test_an_output_named_for_another_format_is_refused(tmp_path):
    """``--html report.xlsx`` wrote the HTML page under a name Excel would not open, ``--memo memo.csv`` the
    same, ``--changes list.html`` a CSV; each is now refused before anything is written (after an output
    naming an input, which says more), naming the option and the suffix it writes (check and compare's
    --html too).  A name without a suffix and
    another case of the right one are taken as given."""
    src = tmp_path / "r.csv"
    src.write_text(BODY)
    out = tmp_path / "o.csv"
    for option, name, says in (("--html", "report.xlsx", "writes an HTML page, not .xlsx; name it .html or .htm"),
                               ("--memo", "memo.csv", "writes an HTML page, not .csv; name it .html or .htm"),
                               ("--changes", "list.html", "writes a CSV table or an .xlsx workbook, not .html; "
                                                          "name it .csv or .txt or .xlsx")):
        target = tmp_path / name
        res = run("adjust", src, "--scale", "0-3", "-m", "MN", "-o", out, "--cut", "2", option, target, "-q")
        assert res.exit_code == 2
        assert res.output.strip() == f"error: {target}: {option}: {says}"
        assert not out.exists() and not target.exists()
    for command in ("check", "compare"):
        res = run(command, src, "--scale", "0-3", "--html", tmp_path / "page.pdf")
        assert res.exit_code == 2 and "--html: writes an HTML page, not .pdf" in res.output
    res = run("adjust", src, "--scale", "0-3", "-m", "MN", "-o", out, "--html", tmp_path / "PAGE.HTM",
              "--memo", tmp_path / "memo", "-q")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "PAGE.HTM").read_text().lstrip().lower().startswith("<!doctype html")
    assert "<html" in (tmp_path / "memo").read_text().lower()


def test_an_adjusted_file_or_a_map_named_for_another_format_is_refused(tmp_path):
    """``-o page.html`` wrote the adjusted CSV under a page's name, ``--png map.html`` an image; refused now,
    with nothing written.  ``-o`` keeps any table-like name (.csv, .tsv, .txt, none)."""
    src = tmp_path / "r.csv"
    src.write_text(BODY)
    for name in ("page.html", "out.JSON", "x.pdf"):
        res = run("adjust", src, "--scale", "0-3", "-m", "MN", "-o", tmp_path / name, "-q")
        assert res.exit_code == 2
        suffix = name[name.index("."):].lower()
        assert res.output.strip() == (f"error: {tmp_path / name}: -o: writes the adjusted ratings as a CSV table "
                                      f"or an .xlsx workbook, not {suffix}; name it .csv or .xlsx")
        assert not (tmp_path / name).exists()
    for command in ("check", "compare"):
        res = run(command, src, "--scale", "0-3", "--png", tmp_path / "map.html", "-q")
        assert res.exit_code == 2 and "--png: writes PNG images, not .html; name it .png" in res.output
    for name in ("o.tsv", "o.txt", "o"):
        assert run("adjust", src, "--scale", "0-3", "-m", "MN", "-o", tmp_path / name, "-q").exit_code == 0
