"""Paths and readers shared by the tests (importable: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "denny1990.yaml"
PUBLISHED = ROOT / "ratercal_cli" / "data" / "denny1990"
RESULTS = Path(__file__).resolve().parent / "results"


def published(name):
    """Rows of a published table CSV as dicts."""
    with open(PUBLISHED / name, newline="") as fh:
        return list(csv.DictReader(fh))
