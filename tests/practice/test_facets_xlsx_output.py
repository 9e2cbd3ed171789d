"""Regression (the new-user round of issue 28): ``import-facets spec.txt -o ratings.xlsx`` wrote CSV text
under the workbook's name and printed a ``check`` command that then failed ("not readable as an .xlsx
workbook"); ``-o ratings.ods`` wrote the anchor file before refusing the name."""

import shlex

import openpyxl
from click.testing import CliRunner

from ratercal_cli.cli import cli

SPEC = """; written from the Facets manual's conventions
Title = two traits, a dummy session
Facets = 4
Positive = 1
Non-centred = 1
Inter-rater = 2
Delements = 1N
Models =
?,?,?,#,R4
*
Labels =
1,Students
1-24
*
2,Raters
1 = Ann
2 = =HYPERLINK("x")
3 = Cara
*
3,Session,A
1 = Morning, 0
2 = Afternoon, 0
*
4,Traits
1 = Content
2 = Style
*
Data =
"""


def _spec(tmp_path):
    lines = []
    for s in range(1, 25):
        for r in ((s % 3) + 1, ((s + 1) % 3) + 1):
            lines.append(f"{s},{r},{1 + s % 2},1-2,{(s + r) % 5},{(s * r + 1) % 5}")
    path = tmp_path / "spec.txt"
    path.write_text(SPEC + "\n".join(lines) + "\n")
    return path


def test_import_facets_writes_a_workbook_the_printed_command_reads(tmp_path):
    spec, out = _spec(tmp_path), tmp_path / "ratings.xlsx"
    run = CliRunner()
    res = run.invoke(cli, ["import-facets", str(spec), "-o", str(out)])
    assert res.exit_code == 0, res.output
    ws = openpyxl.load_workbook(out).active       # a workbook, not CSV text
    rows = list(ws.iter_rows(values_only=True))
    assert rows[0] == ("Students", "Raters", "Session", "Traits", "score") and len(rows) == 1 + 24 * 2 * 2
    assert {r[1] for r in rows[1:]} == {"Ann", "Cara", "=HYPERLINK(\"x\")"}   # the label as it was...
    formula = [row[1] for row in ws.iter_rows(min_row=2) if row[1].value.startswith("=")]
    assert formula and all(c.data_type == "s" and c.quotePrefix for c in formula)   # ...inert: text, marked
    assert all(isinstance(r[4], int) for r in rows[1:])
    command = next(line for line in res.output.splitlines() if line.startswith("read it with: "))
    args = shlex.split(command.removeprefix("read it with: ratercal "))
    res = run.invoke(cli, [*args, "-q", "--no-rasch"])
    assert res.exit_code == 0, res.output


def test_an_unwritable_workbook_name_is_refused_before_anything_is_written(tmp_path):
    spec = _spec(tmp_path)
    res = CliRunner().invoke(cli, ["import-facets", str(spec), "-o", str(tmp_path / "ratings.ods")])
    assert res.exit_code == 2 and ".ods" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.txt"]
