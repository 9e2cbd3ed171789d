"""Issue 28 item 10: the HTML "Uncertain decisions" table showed 200 of 1,159 rows without saying
so; adjust --json left out the file's warnings that check --json has."""

import json

import ratercal_cli as rc
from ratercal_cli.practice.html_report import UNCERTAIN_ROWS, _uncertain

from partial_double import partial_double
from support import run


def test_the_uncertain_table_says_how_many_it_leaves_out(tmp_path):
    partial_double(tmp_path / "r.csv", n_papers=1200, share=1.0, seed=4)
    r = rc.read_ratings(tmp_path / "r.csv", scale="0-5")
    res = rc.adjust(r, "MFRM", cut=2.5)
    page = _uncertain(r, res, None, 2.5)
    n = len(res.adjustment_summaries()[0].methods[0].uncertain)
    assert n > UNCERTAIN_ROWS
    assert f"{n:,} paper(s) by MFRM" in page
    assert f"the {UNCERTAIN_ROWS} closest to a coin toss are shown, all {n:,} are in the adjusted file's " \
           "MFRM_paper_pass column" in page
    assert page.count("<tr>") == UNCERTAIN_ROWS + 1     # the header and 200 rows


def test_adjust_json_has_the_files_warnings(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("paper,rater,score\n" + "".join(f"p{i},R{1 + i % 3},{i % 6}\n" for i in range(30))
                 + "p30,R1,\n")                                   # a blank score: a warning of reading
    checked = json.loads(run("check", f, "--scale", "0-5", "--no-rasch", "--json").stdout)["warnings"]
    adjusted = json.loads(run("adjust", f, "--scale", "0-5", "-m", "MN", "-o", tmp_path / "o.csv", "--json").stdout)
    assert checked and adjusted["warnings"] == checked


def test_a_workbook_and_a_csv_of_one_name_get_different_default_outputs(tmp_path):
    """export.csv and export.xlsx both defaulted to export.adjusted.csv (issue 28 item 10): the one
    overwrote the other's adjustment.  A workbook's now goes to export.adjusted.xlsx."""
    from openpyxl import Workbook

    rows = [("paper", "rater", "score")] + [(f"p{i}", f"R{1 + i % 3}", i % 6) for i in range(30)]
    (tmp_path / "export.csv").write_text("\n".join(",".join(map(str, r)) for r in rows) + "\n")
    wb = Workbook()
    for r in rows:
        wb.active.append(r)
    wb.save(tmp_path / "export.xlsx")
    for name in ("export.csv", "export.xlsx"):
        assert run("adjust", tmp_path / name, "--scale", "0-5", "-m", "MN").exit_code == 0
    assert (tmp_path / "export.adjusted.csv").exists() and (tmp_path / "export.adjusted.xlsx").exists()
