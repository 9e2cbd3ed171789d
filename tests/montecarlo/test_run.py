"""Monte Carlo runner: executors give the same bytes, a SIGKILLed run resumes to the same result,
a replication regenerates alone, and each row's criteria match an independent computation."""

from __future__ import annotations

import csv
import hashlib
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ratercal_cli import criteria
from ratercal_cli.config import parse_config
from ratercal_cli.errors import InputError, RatercalError
from ratercal_cli.criteria import cut_for_scale
from ratercal_cli.montecarlo.chunks import Chunk, read_chunk
from ratercal_cli.montecarlo.replicate import replicate
from ratercal_cli.montecarlo.run import MonteCarloRun, run_single
from ratercal_cli.montecarlo.spec import COLUMNS, CRITERIA, KEYS, StudySpec, code_digest, code_files
from ratercal_cli.study.files import read_columns

REPO = Path(__file__).resolve().parents[2]

SMALL = """\
name: small
generator: pcm
variant: [corrected, faithful]
methods: [NO, MN, TMN, LI, TLI, EQP, OLS, TLS, RAS, PCM]
cut: 3.25
raters: {steps: table3}
cells:
  - raters_per_paper: [1, "2+"]
    papers: [100]
    max_score: [5]
    quality: [normal]
  - raters_per_paper: [2]
    papers: [100]
    max_score: [9]
    quality: [negative]
seed: 4242
replications: 6
"""

OUTPUTS = ("replications.csv", "summary.csv", "paired.csv", "summary.md")


def small_config(tmp_path, text=SMALL):
    path = tmp_path / "small.yaml"
    path.write_text(text)
    return path, parse_config(text, source=str(path))


def outputs(run_dir):
    return {name: (Path(run_dir) / "montecarlo" / name).read_bytes() for name in OUTPUTS}


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serial")
    _, cfg = small_config(tmp)
    run = MonteCarloRun(cfg, tmp / "run", chunk_size=2)
    assert run.run(quiet=True) == (9, 0)            # 3 cells x 3 chunks, none there before
    run.summarise()
    return cfg, tmp / "run"


def test_jobs_2_gives_the_same_bytes(serial_run, tmp_path):
    cfg, ref = serial_run
    run = MonteCarloRun(cfg, tmp_path / "run", chunk_size=2)
    run.run(jobs=2, quiet=True)
    run.summarise()
    assert outputs(tmp_path / "run") == outputs(ref)


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it; tests/test_parallel.py has the fast one
def test_a_killed_worker_is_replaced_and_the_run_gives_the_same_bytes(serial_run, tmp_path, monkeypatch):
    """kill -9 of one worker of ``-j 2``: its chunk was lost (a 30-line traceback, exit 1, after the
    other worker did the rest); now a new worker takes its place and the chunk is done again."""
    import ratercal_cli.montecarlo.run as mc_run
    from ratercal_cli.parallel import start_method

    if start_method() != "fork":
        pytest.skip("threads run in this test process: workers would be spawned, without the test's patch")
    cfg, ref = serial_run
    real, marker = mc_run.run_chunk_task, tmp_path / "killed"

    def dies_on_one_chunk(spec, ch):
        if (ch.cell.code, ch.start) == (cfg.cells[1].code, 2) and not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return real(spec, ch)

    monkeypatch.setattr(mc_run, "run_chunk_task", dies_on_one_chunk)
    run = MonteCarloRun(cfg, tmp_path / "run", chunk_size=2)
    assert run.run(jobs=2, quiet=True) == (9, 0) and marker.exists()
    run.summarise()
    assert outputs(tmp_path / "run") == outputs(ref)


def test_dask_local_cluster_gives_the_same_bytes(serial_run, tmp_path):
    distributed = pytest.importorskip("distributed")
    cfg, ref = serial_run
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        run = MonteCarloRun(cfg, tmp_path / "run", chunk_size=2)
        assert run.run(scheduler=cluster.scheduler_address, quiet=True) == (9, 0)
        run.summarise()
    assert outputs(tmp_path / "run") == outputs(ref)


def test_chunk_size_does_not_change_the_numbers(serial_run, tmp_path):
    cfg, ref = serial_run
    run = MonteCarloRun(cfg, tmp_path / "run", chunk_size=4)   # chunks 0-4, 4-6
    run.run(quiet=True)
    run.summarise()
    assert outputs(tmp_path / "run") == outputs(ref)


def test_rows_are_in_config_order_and_complete(serial_run):
    cfg, ref = serial_run
    lines = (ref / "montecarlo" / "replications.csv").read_text().splitlines()
    assert lines[0] == ",".join(COLUMNS)
    rows = [line.split(",") for line in lines[1:]]
    # 1151: six one-rater methods; 0151 and 2193: all ten; two variants; six replications
    assert len(rows) == 6 * 2 * (6 + 10 + 10)
    assert [r[0] for r in rows] == ["1151"] * 72 + ["0151"] * 120 + ["2193"] * 120
    assert [int(r[1]) for r in rows[:72:12]] == [0, 1, 2, 3, 4, 5]
    assert {r[3] for r in rows} == {"none"}                       # no shrinkage key: none only
    assert {r[4] for r in rows[:72]} == {"NO", "MN", "TMN", "LI", "TLI", "EQP"}
    assert all(r[-1] == "" for r in rows)            # no failed fit on these sets


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_killed_run_resumes_to_the_same_bytes(serial_run, tmp_path):
    """SIGKILL the CLI mid-way (after a few chunks), rerun it: finished chunks are kept as they
    were (same inode and mtime), the rest computed, and the summaries equal an unbroken run's."""
    cfg, ref = serial_run
    config, _ = small_config(tmp_path)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "ratercal_cli.commands.montecarlo", str(config), "--out", str(out),
           "--chunk-size", "1", "--quiet"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    chunks = out / "montecarlo" / "chunks"
    total = 3 * 6
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list(chunks.glob("*/*.csv"))) >= 3:
                break
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
    done = sorted(chunks.glob("*/*.csv"))
    assert 3 <= len(done) < total, "the run was not killed mid-way"
    assert not (out / "montecarlo" / "summary.csv").exists()
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in done}

    res = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in done} == before
    assert len(list(chunks.glob("*/*.csv"))) == total
    assert not list(chunks.glob("*/.*.tmp"))
    assert outputs(out) == outputs(ref)


def _chunk_of_a_run(cfg, tmp_path, cell, start):
    """A run of ``cfg`` in chunks of 2, and the chunk of ``cfg.cells[cell]`` from ``start``:
    (run, chunk, its path, its text)."""
    run = MonteCarloRun(cfg, tmp_path / "run", chunk_size=2)
    run.run(quiet=True)
    ch = Chunk(cfg.cells[cell], start, start + 2)
    path = run.chunk_dir / ch.relpath
    return run, ch, path, path.read_text()


def test_damaged_or_stale_chunk_is_recomputed(serial_run, tmp_path):
    cfg, ref = serial_run
    run, ch, path, good = _chunk_of_a_run(cfg, tmp_path, 1, 2)
    path.write_text(good[: len(good) // 2])                       # cut short
    assert read_chunk(path, run.digest, ch) is None
    other = run.chunk_dir / Chunk(cfg.cells[2], 0, 2).relpath
    other.write_text(other.read_text().replace(run.digest, "0" * 16))   # another study's chunk
    # pending in task order: replication block by block
    assert [c.relpath for c in run.pending()] == [Chunk(cfg.cells[2], 0, 2).relpath, ch.relpath]
    assert run.run(quiet=True) == (2, 7)
    assert path.read_text() == good
    run.summarise()
    assert outputs(tmp_path / "run") == outputs(ref)


def test_chunk_with_a_damaged_row_is_refused_and_rows_parse_back(serial_run, tmp_path):
    """A chunk whose rows lost or gained a field, name another cell, or miss a replication is
    not valid; a valid one parses back into the numbers its rows carry (empty = nan)."""
    from ratercal_cli.montecarlo.chunks import load_chunk, parse_rows

    cfg, _ = serial_run
    run, ch, path, good = _chunk_of_a_run(cfg, tmp_path, 0, 0)
    lines = read_chunk(path, run.digest, ch)
    data = parse_rows(lines)
    loaded_lines, loaded = load_chunk(path, run.digest, ch)     # what summarise reads: the same rows
    assert loaded_lines == lines and loaded.keys() == data.keys()
    for k in data:
        np.testing.assert_array_equal(loaded[k], data[k])
    first = lines[0].rstrip("\n").split(",")
    assert data["set"][0] == first[0] and data["replication"][0] == int(first[1])
    for i, c in enumerate(CRITERIA):
        want = float(first[len(KEYS) + i]) if first[len(KEYS) + i] else math.nan
        assert data[c][0] == want or (math.isnan(want) and math.isnan(data[c][0]))
    assert len(data["rmse"]) == len(lines)
    row = lines[3]
    f = row.split(",")
    for bad in (row.replace(",", ",,", 1), row.replace(",", ";", 1), ",".join(["9999"] + f[1:]),
                ",".join(f[:1] + ["7"] + f[2:])):
        path.write_text(good.replace(row, bad, 1))
        assert read_chunk(path, run.digest, ch) is None, bad
    path.write_text(good.replace("".join(line for line in lines if line.split(",")[1] == "1"), ""))
    assert read_chunk(path, run.digest, ch) is None                   # replication 1 missing


def test_a_chunk_edited_after_it_was_written_is_computed_again(serial_run, tmp_path):
    """One method row deleted, or one digit changed: the rows still cover every replication, so
    only the recorded count and SHA-256 tell; such a chunk used to go into the summary (a method
    "failed", another promoted) or into replications.csv."""
    cfg, ref = serial_run
    run, ch, path, good = _chunk_of_a_run(cfg, tmp_path, 1, 2)
    assert good.endswith(f"sha256={hashlib.sha256(''.join(read_chunk(path, run.digest, ch)).encode()).hexdigest()}\n")
    rows = read_chunk(path, run.digest, ch)
    tli = next(r for r in rows if ",corrected,none,TLI," in r)
    digit = next(r for r in rows if ",faithful,none,MN," in r)
    rmse = digit.split(",")[len(KEYS)]
    changed = digit.replace(rmse, rmse[:-1] + str((int(rmse[-1]) + 1) % 10))
    for edited in (good.replace(tli, "", 1), good.replace(digit, changed, 1)):
        path.write_text(edited)
        assert read_chunk(path, run.digest, ch) is None
        assert [c.relpath for c in run.pending()] == [ch.relpath]
        assert run.run(quiet=True) == (1, 8)
        assert path.read_text() == good
    run.summarise()
    assert outputs(tmp_path / "run") == outputs(ref)


def test_another_study_in_the_same_folder_is_refused(serial_run, tmp_path):
    _, cfg = small_config(tmp_path)
    MonteCarloRun(cfg, tmp_path / "run").run(quiet=True)
    _, other = small_config(tmp_path, SMALL.replace("seed: 4242", "seed: 7"))
    with pytest.raises(InputError, match="another study"):
        MonteCarloRun(other, tmp_path / "run").run(quiet=True)


def test_a_montecarlo_folder_of_ones_own_files_is_refused(tmp_path):
    """A researcher's own ``OUT/montecarlo/summary.md`` (no run there) was written over without a word, and so
    would a ``manifest.json`` of theirs: refused, as ``simulate`` refuses such a folder; nothing is written."""
    _, cfg = small_config(tmp_path)
    for name, text in (("summary.md", "my own notes"), ("manifest.json", '{"name": "mine"}')):
        mine = tmp_path / name.replace(".", "_") / "montecarlo"
        mine.mkdir(parents=True)
        (mine / name).write_text(text)
        with pytest.raises(InputError, match=rf"is not empty \({name}\) and holds no Monte Carlo run of ratercal's"):
            MonteCarloRun(cfg, mine.parent).run(quiet=True)
        assert [p.name for p in mine.iterdir()] == [name] and (mine / name).read_text() == text
    empty = tmp_path / "empty"
    (empty / "montecarlo").mkdir(parents=True)   # (an empty folder is taken)
    assert MonteCarloRun(cfg, empty).run(quiet=True)[1] == 0


def test_more_replications_reuse_the_chunks_done(serial_run, tmp_path):
    cfg, _ = serial_run
    run = MonteCarloRun(cfg, tmp_path / "run", replications=4, chunk_size=2)
    assert run.run(quiet=True) == (6, 0)
    assert MonteCarloRun(cfg, tmp_path / "run", replications=6, chunk_size=2).run(quiet=True) == (3, 6)


def test_one_replication_regenerates_alone(serial_run, tmp_path):
    """``--cell 2193 --replication 4`` gives the very rows the full run has for it."""
    cfg, ref = serial_run
    lines = (ref / "montecarlo" / "replications.csv").read_text().splitlines()
    expect = [line for line in lines if line.startswith("2193,4,")]
    folder, rep = run_single(cfg, tmp_path / "run", "2193", 4, keep_data=True)
    got = (folder / "criteria.csv").read_text().splitlines()
    assert got[0] == ",".join(COLUMNS) and got[1:] == expect and len(expect) == 20
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["adjusted_corrected.csv", "adjusted_faithful.csv", "criteria.csv", "ratings.csv",
                     "true_scores.csv"]
    # the adjusted scores read back to the same doubles (a run's equate/<variant>/adjusted.csv layout)
    eqp, eqp_paper = read_columns(folder / "adjusted_corrected.csv", ["EQP", "EQP_paper"], [float, float])
    adj = rep.adjusted[("corrected", "EQP")]
    assert np.array_equal(eqp, adj.rating) and np.array_equal(eqp_paper, adj.paper[rep.ratings.paper])


def test_criteria_rows_match_an_independent_computation(serial_run):
    """Each row against numpy/scipy on the kept data: RMSE, r, max |d|, bias, decision agreement."""
    cfg, _ = serial_run
    spec = StudySpec.from_config(cfg)
    for cell in cfg.cells:
        rep = replicate(spec, cell, 3, keep=True)
        true = rep.generated.true_score
        cut = 3.25 * cell.max_score / 5
        assert len(rep.rows) == 2 * (6 if cell.raters_per_paper == "1" else 10)
        for row in rep.rows:
            adj = rep.adjusted[(row[2], row[4])].paper
            got = dict(zip(CRITERIA, map(float, row[len(KEYS):len(KEYS) + len(CRITERIA)])))
            assert got["rmse"] == pytest.approx(math.sqrt(float(np.sum((adj - true) ** 2)) / true.size), rel=1e-12)
            assert got["r"] == pytest.approx(stats.pearsonr(adj, true)[0], rel=1e-12)
            assert got["maxdiff"] == pytest.approx(float(np.abs(adj - true).max()), rel=1e-12)
            assert got["bias"] == pytest.approx(float(np.sum(adj - true)) / true.size, abs=1e-12)
            assert got["accuracy"] == np.count_nonzero((adj >= cut - 1e-9) == (true >= cut - 1e-9)) / true.size
            assert got["pass_true"] == np.count_nonzero(true >= cut) / true.size
            assert got["pass_adjusted"] == np.count_nonzero(adj >= cut) / adj.size
            # conditional bias: deciles of the true score (100 papers: 10 each, ties in paper order)
            order = np.argsort(true, kind="stable")
            dec = [(adj - true)[order[10 * d:10 * d + 10]] for d in range(10)]
            for d in range(10):
                assert got[f"cbias_d{d + 1}"] == pytest.approx(dec[d].mean(), abs=1e-12)
            assert got["cbias_worst"] == pytest.approx(max(abs(x.mean()) for x in dec), abs=1e-12)
            assert got["rmse_bottom"] == pytest.approx(math.sqrt(np.mean(dec[0] ** 2)), rel=1e-12)
            assert got["rmse_top"] == pytest.approx(math.sqrt(np.mean(dec[9] ** 2)), rel=1e-12)
    # the rows read back to the same doubles (repr round trip)
    assert float(rep.rows[0][5]) == criteria.score_set(rep.adjusted[(rep.rows[0][2], rep.rows[0][4])].paper, true)["rmse"]


def test_cut_for_scale():
    assert cut_for_scale(3.25, 5) == 3.25
    assert cut_for_scale(3.25, 9) == pytest.approx(5.85)


def invoke(args):
    """``ratercal ARGS`` through the real command group (its one-line errors, exit code 2)."""
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(r, *needles):
    """The run failed with exit code 2 and one line 'error: ...' naming ``needles``."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    err = r.stderr
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in r.output
    for n in needles:
        assert n in err, err
    return err


def test_cli_single_replication_and_bad_options(tmp_path):
    config, cfg = small_config(tmp_path)
    out = tmp_path / "run"
    r = invoke(["montecarlo", config, "--out", out, "--cell", "2+151", "--replication", "2", "--quiet"])
    assert r.exit_code == 0, r.output
    rows = (out / "montecarlo" / "single" / "0151_r2" / "criteria.csv").read_text().splitlines()
    assert len(rows) == 1 + 20 and rows[1].startswith("0151,2,corrected,none,NO,")
    one_line_error(invoke(["montecarlo", config, "--out", out, "--keep-data"]), "--keep-data", "--cell")
    one_line_error(invoke(["montecarlo", config, "--out", out, "--replication", "1"]), "--replication needs --cell")


def test_cli_refuses_the_basic1990_generator_before_writing_anything(tmp_path):
    """configs/denny1990.yaml used to crash with KeyError 'basic1990' after writing the manifest."""
    out = tmp_path / "run"
    one_line_error(invoke(["montecarlo", REPO / "configs" / "denny1990.yaml", "--out", out, "--quiet"]),
                   "denny1990.yaml", "generator", "'basic1990'", "ratercal simulate")
    assert not out.exists()
    one_line_error(invoke(["montecarlo", REPO / "configs" / "denny1990.yaml", "--out", out, "--cell", "2151",
                           "--replication", "0"]), "'basic1990'")
    assert not out.exists()


def test_cli_bad_scheduler_address_is_one_line(tmp_path):
    config, _ = small_config(tmp_path)
    one_line_error(invoke(["montecarlo", config, "--out", tmp_path / "run", "--scheduler", "garbage", "-q"]),
                   "--scheduler", "'garbage'")
    assert not list((tmp_path / "run" / "montecarlo").glob("chunks/*/*.csv"))


def test_a_second_run_into_the_same_folder_is_refused_while_the_first_holds_it(tmp_path):
    """Two runs into one RUN used to delete each other's temporary files; now the second stops."""
    config, cfg = small_config(tmp_path)
    out = tmp_path / "run"
    first = MonteCarloRun(cfg, out, replications=2)
    with first.lock():
        tmp = out / "montecarlo" / "chunks" / "2193" / ".r000000-000002.csv.abc.tmp"
        tmp.parent.mkdir(parents=True)
        tmp.write_text("being written by the first run")
        one_line_error(invoke(["montecarlo", config, "--out", out, "-r", "2", "-q"]),
                       f"{out}: in use by ratercal montecarlo (process {os.getpid()})")
        with pytest.raises(RatercalError, match="in use by ratercal montecarlo"):
            MonteCarloRun(cfg, out, replications=2).run(quiet=True)
        assert tmp.exists()                                   # left alone
        assert first.run(quiet=True) == (3, 0)                # the holder itself may run (re-entrant)
    assert not tmp.exists()
    # released: the next run goes ahead (every chunk already there)
    r = invoke(["montecarlo", config, "--out", out, "-r", "2", "-q"])
    assert r.exit_code == 0, r.output
    assert (out / "montecarlo" / "summary.md").exists()


def test_the_code_digest_covers_every_module_but_the_command_line_and_report(tmp_path):
    """Imports inside functions (the method registry, quality checks, fit statistics, the runner
    itself) used to be left out of the digest, so a resumed run could mix two code versions."""
    import shutil

    files = code_files()
    for f in ("methods/__init__.py", "methods/quality.py", "fit_stats.py", "montecarlo/replicate.py", "criteria.py",
              "generators/modern.py", "models/pcm.py", "methods/cml.py", "montecarlo/summary.py"):
        assert f in files, f
    assert not [f for f in files if f == "cli.py" or f.startswith(("commands/", "report/"))]
    assert files == sorted(files)
    pkg = REPO / "ratercal_cli"
    assert len(files) == len([p for p in pkg.rglob("*.py") if "__pycache__" not in p.parts
                              and p.relative_to(pkg).parts[0] not in ("cli.py", "commands", "report")])
    copy = tmp_path / "ratercal_cli"
    shutil.copytree(pkg, copy, ignore=shutil.ignore_patterns("__pycache__"))
    base = code_digest(copy)
    assert base == code_digest() and len(base) == 16
    for f in ("cli.py", "commands/montecarlo.py", "report/__init__.py"):   # free to change
        with open(copy / f, "a") as fh:
            fh.write("\n# edited\n")
    assert code_digest(copy) == base
    for f in ("methods/quality.py", "methods/__init__.py", "fit_stats.py", "montecarlo/run.py"):
        with open(copy / f, "a") as fh:
            fh.write("\n# edited\n")
        now = code_digest(copy)
        assert now != base, f
        base = now


def test_a_change_in_the_methods_code_is_not_mixed_into_a_resumed_run(serial_run, tmp_path):
    import json

    _, cfg = small_config(tmp_path)
    run = MonteCarloRun(cfg, tmp_path / "run", replications=2)
    run.run(quiet=True)
    manifest = tmp_path / "run" / "montecarlo" / "manifest.json"
    m = json.loads(manifest.read_text())
    assert len(m["code"]) == 16
    manifest.write_text(json.dumps(dict(m, code="0" * 16)))      # as if methods/ had changed since
    with pytest.raises(InputError, match="code changed"):
        MonteCarloRun(cfg, tmp_path / "run", replications=4).run(quiet=True)


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_one_cell_with_replications_has_both_shrinkage_levels(tmp_path):
    """Issue 23: ``montecarlo configs/corrected.yaml --cell 2551 -r 50`` runs that cell alone, with rows
    for shrinkage none, kelley and linear_eb; Kelley-shrunk TLI beats unshrunk TLI there, as an independent
    re-implementation measured (about 0.44 against 0.49)."""
    out = tmp_path / "x"
    r = invoke(["montecarlo", REPO / "configs" / "corrected.yaml", "--cell", "2551", "-r", "50", "--out", out,
                "--quiet"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (out / "montecarlo" / "chunks").iterdir()) == ["2551"]
    rows = {(x["variant"], x["shrinkage"], x["method"]): x for x in
            csv.DictReader((out / "montecarlo" / "summary.csv").open()) if x["facet"] == "all"}
    assert {s for _, s, _ in rows} == {"none", "kelley", "linear_eb"}
    none, kel = float(rows[("corrected", "none", "TLI")]["rmse"]), float(rows[("corrected", "kelley", "TLI")]["rmse"])
    assert kel < none
    assert none == pytest.approx(0.49, abs=0.01) and kel == pytest.approx(0.44, abs=0.01)
    assert "| 2551 |" in (out / "montecarlo" / "summary.md").read_text()
