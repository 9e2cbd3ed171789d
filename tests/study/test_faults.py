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


@pytest.mark.parametrize("command", ["simulate", "rater", "obsgen", "adjust", "score"])
def test_a_second_writer_of_a_run_folder_is_refused_while_the_first_holds_it(small, tmp_path, command):
    import os

    from ratercal_cli.io import folder_lock

    run = tmp_path / "run"
    assert CliRunner().invoke(cli, ["rater", str(small), "--out", str(run)]).exit_code == 0
    args = [command, str(small), "--out", str(run)] if command in ("simulate", "rater") else [command, str(run)]
    with folder_lock(run, "simulate"):
        one_line_error(CliRunner().invoke(cli, args + ["-q"] if command != "rater" else args),
                       f"{run}: in use by ratercal simulate (process {os.getpid()}); wait for it to end")
        assert not (run / "2151" / "obsgen").exists()
    res = CliRunner().invoke(cli, args)   # released: the next one goes ahead
    assert res.exit_code == 0, res.output


def test_simulate_into_the_run_of_another_config_is_refused_unless_forced(small, tmp_path):
    """``simulate a.yaml`` then ``simulate b.yaml`` into one folder made it silently the second study,
    with the first one's sets left beside it."""
    run = tmp_path / "run"
    other = tmp_path / "other.yaml"
    other.write_text(SMALL.replace("[2]", "[3]"))
    assert CliRunner().invoke(cli, ["simulate", str(small), "--out", str(run), "-q"]).exit_code == 0
    before = (run / "config.yaml").read_bytes()
    res = CliRunner().invoke(cli, ["simulate", str(other), "--out", str(run), "-q"])
    one_line_error(res, f"{run}: holds the run of another config, 'small' ({small}); give --force to replace it")
    assert (run / "config.yaml").read_bytes() == before and not (run / "3151").exists()
    # the same config, edited: its own run, brought up to date (no --force needed)
    small.write_text(SMALL.replace("seed: 7", "seed: 8"))
    assert CliRunner().invoke(cli, ["simulate", str(small), "--out", str(run), "-q"]).exit_code == 0
    res = CliRunner().invoke(cli, ["simulate", str(other), "--out", str(run), "-q", "--force"])
    assert res.exit_code == 0, res.output
    assert (run / "3151" / "obsgen" / "ratings.csv").exists() and not (run / "2151").exists()
    assert (run / "config.yaml").read_text() == other.read_text()
