"""Faults and hostile input on a run folder (issue 19): each is one line naming the file, exit 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ratercal_cli.cli import cli

SMALL = "generator: pcm\nseed: 7\ncells:\n  - {raters_per_paper: [2], papers: [100], max_score: [5]}\n"


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    return path


def one_line_error(res, *fragments):
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.output
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("command", ["adjust", "score", "obsgen"])
def test_a_run_config_that_is_not_utf8_is_one_line(small, tmp_path, command):
    run = tmp_path / "run"
    assert CliRunner().invoke(cli, ["rater", str(small), "--out", str(run)]).exit_code == 0
    with open(run / "config.yaml", "ab") as fh:
        fh.write(b"name: caf\xe9\n")
    res = CliRunner().invoke(cli, [command, str(run)])
    one_line_error(res, f"{run / 'config.yaml'}:5: not UTF-8 text: byte 0xe9 at byte offset {len(SMALL) + 9}")
