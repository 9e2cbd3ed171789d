"""Shared fixtures: one faithful run of the 1990 study, made once per session."""

from __future__ import annotations

import pytest
from support import CONFIG


@pytest.fixture(scope="session")
def faithful_run(tmp_path_factory):
    """``simulate`` + ``adjust`` + ``score`` of configs/denny1990.yaml (about 3 s)."""
    from ratercal_cli.study import Run
    from ratercal_cli.study.score import run_score
    from ratercal_cli.study.simulate import run_stage

    root = tmp_path_factory.mktemp("denny1990")
    run = Run.create(CONFIG, root)
    run_stage(run, "obsgen", quiet=True)
    run_score(run, quiet=True)
    return run

