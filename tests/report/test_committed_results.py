"""CI's check that results/denny1990/ is what `make reproduce` regenerates."""

import pytest
from support import ROOT

from ratercal_cli.report import build_report

COMMITTED = ROOT / "results" / "denny1990"


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_regenerated_faithful_report_equals_the_committed_one(faithful_run, tmp_path):
    out = tmp_path / "report"
    build_report(faithful_run.root, out, quiet=True)
    committed, regenerated = _files(COMMITTED), _files(out)
    assert sorted(regenerated) == sorted(committed)
    differ = [name for name in committed if committed[name] != regenerated[name]]
    assert not differ, f"regenerate with `make reproduce` and commit: {differ}"
    assert b"Tables 7 and 12 (the study's result): **555 of 576 published values reproduced.**" in committed["report.md"]


def test_readme_shows_the_committed_table7_comparison():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- table07:")[1].split("-->", 1)[1].split("<!-- /table07 -->")[0]
    committed = (COMMITTED / "comparison" / "table07_rmse.md").read_text()
    assert block.strip().splitlines()[1:] == committed.strip().splitlines()[1:]
