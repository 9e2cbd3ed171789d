"""The study's ``linear_eb`` level (issue 29): rows beside none and kelley that leave those rows'
bytes as they were, the batched path equal to single replications, on plain and rubric studies."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from ratercal_cli.config import parse_config
from ratercal_cli.montecarlo.replicate import chunk_rows, replicate
from ratercal_cli.montecarlo.spec import StudySpec

PLAIN = ("generator: pcm\nvariant: corrected\nshrinkage: [none, kelley, linear_eb]\nmethods: [NO, TLI, PCM, MML]\n"
         "cells: [{raters_per_paper: ['2+', 1], papers: [100], max_score: [5]}]\nseed: 7\n")
RUBRIC = ("generator: pcm\nvariant: corrected\nshrinkage: [none, kelley, linear_eb]\nmethods: [NO, TLI, PCM]\n"
          "criteria: {count: 3, score: SCORE}\nraters: {steps: table3, effects: {halo: 0.6}}\n"
          "cells: [{raters_per_paper: ['2+'], papers: [100], max_score: [5]}]\nseed: 3\n")


def _spec(text):
    cfg = parse_config(text, "c.yaml")
    return cfg, StudySpec.from_config(cfg)


@pytest.mark.parametrize("text", [PLAIN, RUBRIC.replace("SCORE", "mean"), RUBRIC.replace("SCORE", "each")],
                         ids=["plain", "rubric-mean", "rubric-each"])
def test_linear_eb_rows_leave_the_other_levels_bytes_and_batch_as_single_replications(text):
    cfg, spec = _spec(text)
    two = replace(spec, shrinkages=("none", "kelley"))
    for cell in cfg.cells:
        rows = chunk_rows(spec, cell, 0, 2)
        assert rows == [replicate(spec, cell, r) for r in range(2)]
        before = chunk_rows(two, cell, 0, 2)
        assert [[r for r in rep if r[3] != "linear_eb"] for rep in rows] == before
        one_rater = cell.raters_per_paper == "1"
        levels = {r[3] for r in rows[0]}
        assert levels == ({"none"} if one_rater else {"none", "kelley", "linear_eb"})
        if not one_rater:   # a row per method, numbers unlike kelley's
            eb = {r[4]: r for r in rows[0] if r[3] == "linear_eb"}
            kel = {r[4]: r for r in rows[0] if r[3] == "kelley"}
            assert set(eb) == set(spec.methods) and all(eb[m][-1] == "" for m in eb)
            assert all(eb[m][5] != kel[m][5] for m in eb)


def test_linear_eb_of_a_rasch_fit_is_of_its_wle_and_lowers_the_rmse_of_no():
    """On the plain study's 2+ cell, MML's linear_eb row is the operator on its WLE fair averages
    (not its EAP), and shrinking NO lowers its RMSE."""
    from ratercal_cli.methods.shrinkage import linear_eb

    cfg, spec = _spec(PLAIN)
    cell = [c for c in cfg.cells if c.raters_per_paper == "2+"][0]
    rep = replicate(spec, cell, 0, keep=True)
    rows = {(r[3], r[4]): r for r in rep.rows}
    assert float(rows[("linear_eb", "NO")][5]) < float(rows[("none", "NO")][5])
    from ratercal_cli.methods.apply import apply_methods
    from ratercal_cli.methods.shrinkage import shrunk_papers

    applied = apply_methods(rep.ratings, ["MML"], "corrected")
    levels = shrunk_papers(applied.estimators["MML"], rep.ratings, applied.adjusted["MML"].paper,
                           ("none", "linear_eb"))
    np.testing.assert_array_equal(levels["linear_eb"], linear_eb(levels["none"], rep.ratings)[0])
    rmse = np.sqrt(np.mean((levels["linear_eb"] - rep.generated.true_score) ** 2))
    assert float(rows[("linear_eb", "MML")][5]) == pytest.approx(rmse, rel=1e-12)
