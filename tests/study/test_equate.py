"""The simulate and equate stages give the same files whether the sets run in one process or two."""

import pytest
from support import CONFIG

from ratercal_cli.study import Run
from ratercal_cli.study.equate import run_equate
from ratercal_cli.study.simulate import run_stage


def _equate_files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.glob("*/equate/faithful/*")) if p.is_file()}


def _generated_files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for stage in ("pargen", "truegen", "obsgen") for p in sorted(root.glob(f"*/{stage}/*"))}


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_serial_and_forked_equate_write_identical_files(faithful_run, tmp_path):
    run = Run.create(CONFIG, tmp_path / "serial")
    runner = run_stage(run, "obsgen", quiet=True, jobs=1)
    assert len(runner.ran) == 1 + 3 * 32  # the design, then pargen, truegen, obsgen of every set
    generated = _generated_files(run.root)
    assert len(generated) == 32 * (3 + 4 + 3)  # files and manifests of pargen, truegen, obsgen
    assert generated == _generated_files(faithful_run.root)  # the fixture's chains ran in two processes
    assert (run.root / "rater" / "design.json").read_bytes() == (faithful_run.root / "rater" / "design.json").read_bytes()
    runner = run_equate(run, quiet=True, jobs=1)
    assert len(runner.ran) >= 32
    serial = _equate_files(run.root)
    assert len(serial) == 32 * 3  # adjusted.csv, methods.json and a manifest per set
    assert serial == _equate_files(faithful_run.root)  # the fixture's equate ran in two processes


def test_fresh_equate_is_not_redone(faithful_run):
    runner = run_equate(faithful_run, quiet=True)
    assert runner.ran == []


def test_a_set_equated_by_the_code_before_adjusted_csv_is_redone(tmp_path):
    """A run made when equate wrote a CSV per method: its manifest does not list adjusted.csv,
    so the stage is stale; redone, it writes adjusted.csv and removes the per-method files."""
    import json

    from ratercal_cli.io import sha256_file

    run = Run.create(CONFIG, tmp_path / "run")
    run_stage(run, "obsgen", codes=["2151"], quiet=True, jobs=1)
    run_equate(run, codes=["2151"], quiet=True, jobs=1)
    folder = run.root / "2151" / "equate" / "faithful"
    (folder / "adjusted.csv").unlink()
    (folder / "MN.csv").write_text("paper,rater,score,adjusted,paper_adjusted\n")
    man = json.loads((folder / "manifest.json").read_text())
    man["outputs"] = {"2151/equate/faithful/MN.csv": sha256_file(folder / "MN.csv"),
                      "2151/equate/faithful/methods.json": sha256_file(folder / "methods.json")}
    (folder / "manifest.json").write_text(json.dumps(man))
    runner = run_equate(run, codes=["2151"], quiet=True, jobs=1)
    assert runner.ran == [("equate", "2151", "faithful")]
    assert sorted(p.name for p in folder.iterdir()) == ["adjusted.csv", "manifest.json", "methods.json"]
    assert run_equate(run, codes=["2151"], quiet=True, jobs=1).ran == []
