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


def modules_after_adjust(data, out, methods, prefixes):
    """The modules starting with one of ``prefixes`` that ``adjust DATA --scale 0-5 -m METHOD -o OUT -q``
    left imported, each method in turn in one fresh interpreter (what a command imports costs every run
    of it: the tests that keep heavy modules out of the file pass and the fits)."""
    import subprocess
    import sys

    code = ("import sys; from ratercal_cli.cli import cli\n"
            f"for m in {list(methods)!r}:\n"
            "    try:\n        cli(['adjust', sys.argv[1], '--scale', '0-5', '-m', m, '-o', sys.argv[2], '-q'])\n"
            "    except SystemExit as e:\n        assert not e.code, e.code\n"
            f"print(sorted(m for m in sys.modules if m.startswith({tuple(prefixes)!r})))")
    done = subprocess.run([sys.executable, "-c", code, str(data), str(out)], capture_output=True, text=True,
                          check=True)
    return eval(done.stdout.strip().splitlines()[-1])   # (a list of module names, printed by the child)


def user_module(folder, monkeypatch, name, text):
    """A module of methods of the user's own, ``name``, written in ``folder`` and importable for the test
    (first on sys.path, any earlier import of the name forgotten); returns ``folder``."""
    import sys

    (Path(folder) / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return folder


def confounded_csv(paper_col: str = "paper", paper_id: str = "P{}", seed: int = 5) -> str:
    """400 papers, two readings each on 1-6: the weakest quarter read by R1 (a harsh rater) and another, the rest by
    two of R2-R8, so that check finds the assignment confounded and recommends the PCM (``paper_id``: a format of
    the paper's number)."""
    import random

    rng = random.Random(seed)
    sev = {"R1": 0.8, "R2": -0.5, "R3": 0.0, "R4": 0.3, "R5": -0.3, "R6": 0.0, "R7": 0.5, "R8": -0.6}
    quality = sorted(rng.gauss(3.5, 1.0) for _ in range(400))
    lines = [f"{paper_col},rater,score"]
    for p, q in enumerate(quality):
        who = ["R1", rng.choice(list(sev)[1:])] if p < 100 else rng.sample(list(sev)[1:], 2)
        lines += [f"{paper_id.format(p)},{r},{min(6, max(1, round(q - sev[r] + rng.gauss(0, 0.6))))}" for r in who]
    return "\n".join(lines) + "\n"
