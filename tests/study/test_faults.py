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


def test_a_design_too_big_for_memory_is_refused_before_anything_is_written(tmp_path):
    """``papers: [10000000000]`` once asked numpy for 74.5 GiB and left a run folder behind."""
    import time

    from ratercal_cli.config import memory_available

    huge = tmp_path / "huge.yaml"
    huge.write_text(SMALL.replace("papers: [100]", "papers: [10000000000]"))
    t0 = time.perf_counter()
    res = CliRunner().invoke(cli, ["simulate", str(huge), "--out", str(tmp_path / "run")])
    assert time.perf_counter() - t0 < 2
    line = one_line_error(res, f"{huge}:4: cells[0].papers: set ", "(10,000,000,000 papers, 2 ratings each) would "
                          "need about ", "of memory; this machine has")
    needed = float(line.split("need about ")[1].split()[0].replace(",", ""))
    assert line.split("need about ")[1].split()[1] == "TiB" and 30 < needed < 40   # 1e10 x 2 x 1.5 KiB + 9 x 64 B
    assert not (tmp_path / "run").exists()
    # replications x sets: bounded by the summary they make
    reps = tmp_path / "reps.yaml"
    reps.write_text(SMALL + f"replications: {memory_available() // 8}\n")
    res = CliRunner().invoke(cli, ["montecarlo", str(reps), "--out", str(tmp_path / "run")])
    one_line_error(res, f"{reps}:5: replications: ", "replications of 1 set(s) would need about")
    assert not (tmp_path / "run").exists()


def test_replications_and_chunk_size_given_on_the_command_line_are_bounded_too(small, tmp_path):
    for option, value in (("--replications", "1000000000000"), ("--chunk-size", "100000000")):
        res = CliRunner().invoke(cli, ["montecarlo", str(small), "--out", str(tmp_path / "run"), option, value])
        one_line_error(res, f"{small}: {option}: ", "would need about")
    assert not (tmp_path / "run").exists()
