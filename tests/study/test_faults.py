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
    for command in ("adjust", "score", "report"):
        assert CliRunner().invoke(cli, [command, str(run), "-q"]).exit_code == 0
    assert (run / "score" / "scores.csv").exists() and (run / "report" / "report.md").exists()
    (run / "report" / "figures" / "mine.png").write_text("a figure of my own")   # (a tester's: deleted with report/)
    (run / "report" / "notes.md").write_text("my notes")
    res = CliRunner().invoke(cli, ["simulate", str(other), "--out", str(run), "-q", "--force"])
    assert res.exit_code == 0, res.output
    assert (run / "3151" / "obsgen" / "ratings.csv").exists() and not (run / "2151").exists()
    assert not (run / "score").exists()      # the other config's scores went with its sets, and its report's files
    assert sorted(p.relative_to(run).as_posix() for p in (run / "report").rglob("*")) == [
        "report/figures", "report/figures/mine.png", "report/notes.md"]   # ... but not the user's own
    assert (run / "config.yaml").read_text() == other.read_text()
    # RUN/report is the report's folder, the user's files beside its own or not
    for command in ("adjust", "score", "report"):
        assert CliRunner().invoke(cli, [command, str(run), "-q"]).exit_code == 0
    assert (run / "report" / "notes.md").read_text() == "my notes" and (run / "report" / "report.md").exists()


def test_simulate_into_a_folder_of_ones_own_files_is_refused_whatever_force_says(small, tmp_path):
    """``simulate --out .`` in a project folder with its own ``config.yaml``: a tester's ``config.yaml``,
    ``manifest.json`` and ``rater/design.json`` were written over, exit 0 and no word.  A folder with files
    and no run of ratercal's is refused before anything is written there (not even the lock file); an empty
    folder, or a run killed before its mark was written, is taken."""
    mine = tmp_path / "proj"
    (mine / "rater").mkdir(parents=True)
    files = {"config.yaml": "my own notes", "manifest.json": '{"name": "mine"}', "rater/design.json": '{"mine": 1}'}
    for name, text in files.items():
        (mine / name).write_text(text)
    for force in ([], ["--force"]):
        res = CliRunner().invoke(cli, ["simulate", str(small), "--out", str(mine), "-q", *force])
        one_line_error(res, f"{mine}: is not empty (config.yaml, manifest.json, rater) and holds no ratercal run: "
                            "give a new or empty --out folder")
        assert {p.relative_to(mine).as_posix(): p.read_text() for p in mine.rglob("*") if p.is_file()} == files
    empty = tmp_path / "empty"
    empty.mkdir()
    assert CliRunner().invoke(cli, ["simulate", str(small), "--out", str(empty), "-q"]).exit_code == 0
    (empty / ".config-source.json").unlink()   # (killed before the mark: the same config resumes)
    assert CliRunner().invoke(cli, ["simulate", str(small), "--out", str(empty), "-q"]).exit_code == 0
    # the config is the project folder's own config.yaml: the first run took it for the run's copy, and the next
    # config simulated there wrote over it (a researcher's comments gone)
    project = tmp_path / "project"
    project.mkdir()
    own = project / "config.yaml"
    own.write_text(small.read_text() + "# my notes on this design\n")
    res = CliRunner().invoke(cli, ["simulate", str(own), "--out", str(project), "-q"])
    one_line_error(res, f"{project}: is the folder of the config {own} itself, which the run would keep as its copy "
                        "and write over: give the run its own --out folder (e.g. --out run)")
    assert sorted(p.name for p in project.iterdir()) == ["config.yaml"] and own.read_text().endswith("design\n")
    assert CliRunner().invoke(cli, ["simulate", str(own), "--out", str(project / "run"), "-q"]).exit_code == 0
    # a run's own config.yaml simulated again into that run (an edited copy) is the run's, as before
    assert CliRunner().invoke(cli, ["simulate", str(project / "run" / "config.yaml"), "--out", str(project / "run"),
                                    "-q"]).exit_code == 0


class _FullDiskOS:
    """``os`` for :mod:`ratercal_cli.io` on a disk that fills up when the data are written: every
    write of a ratings file, a chunk or an output (not of a config or manifest) fails with ENOSPC,
    as the kernel reports it."""

    def __getattr__(self, name):
        import os

        return getattr(os, name)

    @staticmethod
    def fdopen(fd, *args, **kwargs):
        import errno
        import os

        name = os.readlink(f"/proc/self/fd/{fd}")
        if not any(part in name for part in ("ratings.csv", "/chunks/", "adjusted.csv")):
            return os.fdopen(fd, *args, **kwargs)

        class Full:
            def __init__(self):
                self.fh = os.fdopen(fd, *args, **kwargs)

            def write(self, *_):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            writelines = write

            def flush(self):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()

        return Full()


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_full_disk_is_one_line_naming_the_file_in_simulate_montecarlo_and_adjust(small, tmp_path, monkeypatch,
                                                                                   jobs):
    """ENOSPC injected at the write call (forked workers inherit it): a 38-line traceback in
    simulate and montecarlo, and a message without the file in adjust, before."""
    import ratercal_cli.io

    many = tmp_path / "many.yaml"
    many.write_text(SMALL.replace("[2]", "[1, 2, 3, 4]").replace("seed: 7", "seed: 7\nreplications: 4"))
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("paper,rater,score\n" + "".join(f"P{p},R{(p + k) % 5},{(p + 2 * k) % 6}\n"
                                                      for p in range(40) for k in (0, 1)))
    monkeypatch.setattr(ratercal_cli.io, "os", _FullDiskOS())
    out = tmp_path / "run"
    from ratercal_cli.parallel import start_method

    if start_method() == "fork":   # else (threads left by another test) spawned workers would not inherit the patch
        res = CliRunner().invoke(cli, ["simulate", str(many), "--out", str(out), "-q"])   # 4 sets: in 2 workers
        one_line_error(res, f"{out}/", "/obsgen/ratings.csv: cannot write: No space left on device")
    res = CliRunner().invoke(cli, ["montecarlo", str(many), "--out", str(tmp_path / "mc"), "-q", "-j", str(jobs),
                                   "--chunk-size", "2"])
    one_line_error(res, f"{tmp_path / 'mc'}/montecarlo/chunks/", ".csv: cannot write: No space left on device")
    res = CliRunner().invoke(cli, ["adjust", str(ratings), "--scale", "0-5", "-m", "MN", "-q",
                                   "-o", str(tmp_path / "adjusted.csv")])
    one_line_error(res, f"{tmp_path / 'adjusted.csv'}: cannot write: No space left on device")
    assert not list(tmp_path.rglob("*.tmp")) and not (tmp_path / "adjusted.csv").exists()


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (mounting needs root: skipped otherwise)."""
    import os
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; the injected ENOSPC test covers the same path")
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("this machine does not let root mount a tmpfs here")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_real_full_disk_is_one_line_and_the_run_resumes_once_there_is_room(small, tmp_path, tiny_disk):
    out = tiny_disk / "run"
    res = CliRunner().invoke(cli, ["simulate", str(small), "--out", str(out), "-q"])
    one_line_error(res, f"{out}/2151/", ": cannot write: No space left on device")
    assert not list(tiny_disk.rglob("*.tmp"))
    ref = tmp_path / "ref"
    assert CliRunner().invoke(cli, ["simulate", str(small), "--out", str(ref), "-q"]).exit_code == 0
    import shutil
    import subprocess

    subprocess.run(["mount", "-o", "remount,size=4m", str(tiny_disk)], check=True)
    assert CliRunner().invoke(cli, ["simulate", str(small), "--out", str(out), "-q"]).exit_code == 0
    for f in ref.rglob("*.csv"):
        assert (out / f.relative_to(ref)).read_bytes() == f.read_bytes()
    shutil.rmtree(out)


def test_a_read_only_run_folder_is_one_line(small, tmp_path):
    """The lock file cannot be made: one line naming it (root ignores permissions: a read-only
    bind mount, which needs root; skipped otherwise)."""
    import os
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root (and root ignores file permissions)")
    src, ro = tmp_path / "src", tmp_path / "ro"
    assert CliRunner().invoke(cli, ["rater", str(small), "--out", str(src)]).exit_code == 0
    ro.mkdir()
    if subprocess.run(["mount", "--bind", str(src), str(ro)], capture_output=True).returncode != 0:
        pytest.skip("this machine does not let root bind-mount here")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True, capture_output=True)
        one_line_error(CliRunner().invoke(cli, ["score", str(ro), "-q"]),
                       f"{ro / '.lock'}: cannot write: Read-only file system")
    finally:
        subprocess.run(["umount", str(ro)], capture_output=True)


def test_the_memory_bound_counts_every_process_of_montecarlo_jobs(small, tmp_path, monkeypatch):
    """The chunk bound checked one chunk, whatever --jobs: -j 8 holds eight chunks at once.  With
    memory for one and a half chunks, -j 2 is refused before anything is written (naming --jobs);
    -j 1 runs."""
    import ratercal_cli.config as config

    many = tmp_path / "many.yaml"
    many.write_text(SMALL.replace("[2]", "[1, 2, 3]").replace("seed: 7", "seed: 7\nreplications: 4"))
    cfg = config.load_config(many)
    one = max(cfg.set_bytes(c, 2) for c in cfg.cells)
    monkeypatch.setattr(config, "memory_available", lambda: int(one * 1.5))
    res = CliRunner().invoke(cli, ["montecarlo", str(many), "--out", str(tmp_path / "run"), "-q", "-j", "2",
                                   "--chunk-size", "2"])
    one_line_error(res, f"{many}: --jobs: 2 processes, each with a chunk of up to 2 replications (set ",
                   "give fewer --jobs or a smaller --chunk-size")
    assert not (tmp_path / "run").exists()
    res = CliRunner().invoke(cli, ["montecarlo", str(many), "--out", str(tmp_path / "run"), "-q", "-j", "1",
                                   "--chunk-size", "2"])
    assert res.exit_code == 0, res.output


def test_the_study_stages_run_fewer_processes_where_their_sets_would_not_fit_together(small, tmp_path, monkeypatch):
    """simulate / adjust / score make the sets in up to two processes: each set was bounded alone, two
    at once were not.  With memory for one set and a half they are made one at a time (the same files)."""
    import ratercal_cli.config as config
    from ratercal_cli.study.simulate import jobs_within_memory

    many = tmp_path / "many.yaml"
    many.write_text(SMALL.replace("[2]", "[1, 2, 3, 4]"))
    cfg = config.load_config(many)
    assert jobs_within_memory(cfg, cfg.cells, None) is None and jobs_within_memory(cfg, cfg.cells, 2) == 2
    one = max(cfg.set_bytes(c) for c in cfg.cells)
    monkeypatch.setattr(config, "memory_available", lambda: int(one * 1.5))
    assert jobs_within_memory(cfg, cfg.cells, None) == 1 and jobs_within_memory(cfg, cfg.cells, 4) == 1
    sizes = sorted((cfg.set_bytes(c) for c in cfg.cells), reverse=True)
    monkeypatch.setattr(config, "memory_available", lambda: sizes[0] + sizes[1])   # the two largest, not three
    assert jobs_within_memory(cfg, cfg.cells, 4) == 2 and jobs_within_memory(cfg, cfg.cells, None) is None
    # the command under that memory: the same files as with room for both processes
    res = CliRunner().invoke(cli, ["simulate", str(many), "--out", str(tmp_path / "tight"), "-q"])
    assert res.exit_code == 0, res.output
    monkeypatch.setattr(config, "memory_available", lambda: int(one * 1.5))
    res = CliRunner().invoke(cli, ["simulate", str(many), "--out", str(tmp_path / "serial"), "-q"])
    assert res.exit_code == 0, res.output
    for f in (tmp_path / "tight").rglob("*.csv"):
        assert (tmp_path / "serial" / f.relative_to(tmp_path / "tight")).read_bytes() == f.read_bytes()


def test_library_calls_take_the_run_folders_lock(small, tmp_path):
    """run_stage, run_equate and run_score, called from Python, wrote a run folder while a command held
    it (only the commands took the lock); they are refused as a second command is, and run when they
    hold the lock themselves or are given a run that holds it."""
    import os

    from ratercal_cli.errors import RatercalError
    from ratercal_cli.io import folder_lock
    from ratercal_cli.study import Run
    from ratercal_cli.study.equate import run_equate
    from ratercal_cli.study.score import run_score
    from ratercal_cli.study.simulate import run_stage

    run = tmp_path / "run"
    assert CliRunner().invoke(cli, ["rater", str(small), "--out", str(run)]).exit_code == 0
    calls = {"run_stage": lambda: run_stage(Run(run), "obsgen", quiet=True), "run_equate": lambda: run_equate(
        str(run), quiet=True), "run_score": lambda: run_score(Run(run), quiet=True)}
    with folder_lock(run, "simulate"):
        for name, call in calls.items():
            with pytest.raises(RatercalError, match=f"in use by ratercal simulate \\(process {os.getpid()}\\)"):
                call()
        assert not (run / "2151" / "obsgen").exists(), name
    for call in calls.values():
        call()
    assert (run / "score" / "scores.csv").exists()
    with Run.writing(run, "score") as opened:   # a run that holds the lock: no second taking
        run_score(opened, quiet=True)


def test_a_created_run_takes_the_lock_after_its_creation(small, tmp_path):
    """Run.create holds the lock only while the config is copied in: the run it returns takes the
    lock again for a later library call (it had kept counting the released lock as held, so
    run_score on it wrote the folder while a command held it)."""
    import os

    from ratercal_cli.errors import RatercalError
    from ratercal_cli.io import folder_lock
    from ratercal_cli.study import Run
    from ratercal_cli.study.score import run_score

    run = Run.create(small, tmp_path / "run")
    with folder_lock(run.root, "simulate"):
        with pytest.raises(RatercalError, match=f"in use by ratercal simulate \\(process {os.getpid()}\\)"):
            run_score(run, quiet=True)
    with Run.writing(run.root, "score") as opened:
        with opened.lock("score"):   # nested: counted, not taken twice
            pass
        with pytest.raises(RatercalError, match="in use by ratercal score"):
            with run.lock("score"):   # another object of the same folder: refused
                pass


def test_a_hand_edit_of_a_runs_file_is_said_when_it_is_made_again(small, tmp_path):
    """A staff tester edited ``RUN/<set>/obsgen/ratings.csv``; ``adjust RUN`` made it again from its inputs (as a
    stage whose output changed is redone) without a word.  It now says so, once."""
    run = tmp_path / "run"
    assert CliRunner().invoke(cli, ["simulate", str(small), "--out", str(run), "-q"]).exit_code == 0
    (ratings,) = run.glob("*/obsgen/ratings.csv")
    before = ratings.read_bytes()
    lines = before.decode().splitlines(keepends=True)
    fields = lines[1].split(",")
    fields[2] = "9"   # (the first rating's score)
    lines[1] = ",".join(fields)
    ratings.write_text("".join(lines))
    res = CliRunner().invoke(cli, ["adjust", str(run)])
    assert res.exit_code == 0, res.output
    assert (f"warning: {ratings}: changed since ratercal wrote it (by hand?), and made again from its inputs"
            in res.stderr)
    assert ratings.read_bytes() == before
    again = CliRunner().invoke(cli, ["adjust", str(run)])
    assert again.exit_code == 0 and "changed since" not in again.stderr
