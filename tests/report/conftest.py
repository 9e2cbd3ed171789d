"""A small synthetic scored run: score files, equate files and true scores."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from support import write_design

from ratercal_cli.vocabulary import adjusted_columns

SETS = ["1151", "1591", "2151", "2193", "0152", "0551", "3152", "3591"]
METHODS = ["NO", "MN", "TMN", "LI", "TLI", "EQP", "OLS", "TLS", "RAS", "PCM"]
ONE = METHODS[:6]


def _write(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def make_run(root: Path, seed=0, sets=SETS, variant="faithful"):
    """Random criteria for ``sets``; returns ``(crit, rater)`` dicts as written."""
    rng = np.random.default_rng(seed)
    write_design(root, sets, (variant,))
    crit, rater = {}, {}
    srows, rrows = [], []
    for s in sets:
        methods = ONE if s[0] == "1" else METHODS
        for m in methods:
            c = {"rmse": rng.uniform(0.4, 1.9), "r": rng.uniform(0.8, 0.97), "maxdiff": rng.uniform(1, 7)}
            crit[(s, m)] = c
            srows.append([s, m, variant, repr(c["rmse"]), repr(c["r"]), repr(c["maxdiff"])])
            for r in range(1, 10):
                n = int(rng.integers(0, 3)) * 10  # some raters absent (n = 0)
                v = rng.uniform(0.5, 2.0) if n else float("nan")
                rater[(s, m, r)] = (n, v)
                rrows.append([s, m, variant, r, n, "" if not n else repr(v)])
    _write(root / "score" / "scores.csv", ["set", "method", "variant", "rmse", "r", "maxdiff"], srows)
    _write(root / "score" / "rater_rmse.csv", ["set", "method", "variant", "rater", "n", "rmse"], rrows)
    # equate files for the multi-rater sets: 6 papers, 2 ratings each
    for s in sets:
        if s[0] == "1":
            continue
        true = rng.uniform(0, 5, 6)
        _write(root / s / "truegen" / "true_scores.csv", ["paper", "true_score"],
               [[p + 1, repr(float(t))] for p, t in enumerate(true)])
        adj = {m: true + rng.normal(0, 0.5, 6) for m in METHODS}
        rows = []
        for p in range(6):
            for r in (1 + p % 9, 1 + (p + 4) % 9):
                rows.append([p + 1, r, 3] + [repr(float(adj[m][p]) + d) for m in METHODS for d in (0.1, 0.0)])
        _write(root / s / "equate" / variant / "adjusted.csv", ["paper", "rater", "score", *adjusted_columns(METHODS)], rows)
    return crit, rater


@pytest.fixture
def run(tmp_path):
    root = tmp_path / "run"
    crit, rater = make_run(root)
    return root, crit, rater
