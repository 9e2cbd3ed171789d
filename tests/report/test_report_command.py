"""``ratercal report --help`` warns which files under --out a build deletes."""

from click.testing import CliRunner

from ratercal_cli.commands.report import report


def test_help_says_which_files_are_deleted():
    res = CliRunner().invoke(report, ["--help"], terminal_width=200)
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    assert "is deleted" in text and "other files are left alone" in text
    for where in ("DIR/tables", "DIR/comparison", "DIR/figures", "table*.md/.csv/.tex", "fig*.png"):
        assert where in text
