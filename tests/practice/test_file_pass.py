"""The file pass of ``adjust`` (issue 32): what it imports, and the columnar read and write keeping
the guarantees of the row-by-row ones."""

import subprocess
import sys

import numpy as np


def _write(path, n_papers=30, seed=0):
    rng = np.random.default_rng(seed)
    lines = ["paper,rater,score"]
    for p in range(n_papers):
        for r in rng.choice(8, 2, replace=False):
            lines.append(f"P{p},R{r + 1},{rng.integers(0, 6)}")
    path.write_text("\n".join(lines) + "\n")


def test_adjust_no_does_not_import_scipy_stats(tmp_path):
    """scipy.stats took 0.5-1.7 s of every ``adjust`` (practice/assignment.py and agreement.py imported it
    at the top); the file pass of ``adjust -m NO`` needs none of it.  Fails before: 'scipy.stats' was
    in sys.modules."""
    data = tmp_path / "r.csv"
    _write(data)
    code = ("import sys; from ratercal_cli.cli import cli\n"
            "try:\n    cli(['adjust', sys.argv[1], '--scale', '0-5', '-m', 'NO', '-o', sys.argv[2], '-q'])\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            "print(sorted(m for m in sys.modules if m.startswith('scipy.stats')))")
    out = subprocess.run([sys.executable, "-c", code, str(data), str(tmp_path / "o.csv")], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "o.csv").read_text().splitlines()[0] == "paper,rater,score,flag,NO,NO_paper"
