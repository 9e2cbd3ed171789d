"""Paths and readers shared by the tests (importable: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import csv
from pathlib import Path

from click.testing import CliRunner

from ratercal_cli.cli import cli as CLI  # the ratercal command group

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "denny1990.yaml"
PUBLISHED = ROOT / "ratercal_cli" / "data" / "denny1990"
RESULTS = Path(__file__).resolve().parent / "results"


def published(name):
    """Rows of a published table CSV as dicts."""
    with open(PUBLISHED / name, newline="") as fh:
        return list(csv.DictReader(fh))


def write_design(root, codes, variants=("faithful",), generator="basic1990"):
    """``RUN/rater/design.json`` for the 1990 set ``codes``, as the rater stage writes it (for tests that
    write score files by hand: the report reads the sets' cells from the design)."""
    import json

    from ratercal_cli.design import parse_code

    sets = [{"code": c.code, "label": c.label, "raters_per_paper": c.raters_per_paper, "papers": c.papers,
             "max_score": c.max_score, "quality": c.quality} for c in map(parse_code, codes)]
    path = Path(root) / "rater" / "design.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": "test", "generator": generator, "variants": list(variants),
                                "methods": [], "n_raters": 9, "sets": sets}))
    return path


def run(*args):
    """``ratercal ARGS`` in this process (click's runner), exceptions not caught; arguments are
    turned into text."""
    return CliRunner().invoke(CLI, [str(a) for a in args], catch_exceptions=False)
