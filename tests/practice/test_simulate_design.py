"""``check FILE --simulate R`` (practice/simulate.py): the fitted design simulates the file's
scores, the replications are seeded (two runs and --jobs 2 give the same numbers), and the ranking
is what the per-replication criteria give."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ratercal_cli.cli import cli
from ratercal_cli.design import table3_steps
from ratercal_cli.errors import MethodError
from ratercal_cli.models.pcm import sample_scores
from ratercal_cli.practice.simulate import DesignModel, simulate_design
from ratercal_cli.ratings import Ratings

REPO = Path(__file__).resolve().parents[2]


def _pcm_file(n=600, seed=5):
    rng = np.random.default_rng(seed)
    theta = 3 * rng.standard_normal(n) + 2
    r = np.argsort(rng.random((n, 9)), axis=1)[:, :2]
    sc = sample_scores(rng, theta[:, None], table3_steps(5)[r])
    return Ratings(np.repeat(np.arange(n), 2), r.ravel(), sc.ravel(), 5, n, 9)


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_the_fitted_design_reproduces_the_files_raters():
    """Data from Table 3's raters: the simulated replications keep the file's assignment and give
    each rater the mean and spread of scores the file has (within sampling error)."""
    r = _pcm_file()
    model = DesignModel.fit(r)
    sims = [model.simulate(1, 0, k)[0] for k in range(20)]
    assert all(np.array_equal(s.paper, r.paper) and np.array_equal(s.rater, r.rater) for s in sims)
    for j in range(9):
        mine = r.rater == j
        sim = np.concatenate([s.score[mine] for s in sims])
        assert abs(sim.mean() - r.score[mine].mean()) < 0.2, j
        assert abs(sim.std() - r.score[mine].std()) < 0.2, j
    # the seed decides everything; another replication differs
    a, ta = model.simulate(1, 0, 3)
    b, tb = model.simulate(1, 0, 3)
    assert np.array_equal(a.score, b.score) and np.array_equal(ta, tb)
    assert not np.array_equal(a.score, model.simulate(1, 0, 4)[0].score)


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_ranking_is_the_mean_rmse_with_paired_intervals():
    r = _pcm_file(n=150, seed=2)
    res = simulate_design(r, 6, cut=3.25, methods=["NO", "TMN", "TLI"])
    rows = {(x["shrinkage"], x["method"]): x for x in res.rows()}
    for (s, m), x in rows.items():
        i = res.columns.index((s, m))
        assert x["rmse"] == pytest.approx(res.values[:, i, 0].mean(), rel=1e-12)
        assert x["rmse_mcse"] == pytest.approx(res.values[:, i, 0].std(ddof=1) / np.sqrt(6), rel=1e-12)
    for s in ("none", "kelley"):
        ranked = sorted((x for x in rows.values() if x["shrinkage"] == s), key=lambda x: x["rank"])
        assert [x["rmse"] for x in ranked] == sorted(x["rmse"] for x in ranked)
        best = ranked[0]
        assert best["vs_best"] is None
        for x in ranked[1:]:
            assert x["vs_best"]["diff"] == pytest.approx(x["rmse"] - best["rmse"], abs=1e-12)
            assert x["vs_best"]["ci"][0] < x["vs_best"]["diff"] < x["vs_best"]["ci"][1]
    # Kelley shrinkage lowers every method's RMSE on these data
    assert all(rows[("kelley", m)]["rmse"] < rows[("none", m)]["rmse"] for m in ("NO", "TMN", "TLI"))


def test_a_design_the_model_cannot_fit_is_refused():
    r = Ratings(np.arange(20), np.arange(20) % 4, np.arange(20) % 6, 5, 20, 4)   # one rater per paper
    with pytest.raises(MethodError):
        simulate_design(r, 3)


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_check_simulate_is_reproducible(tmp_path):
    """Issue 23: ``check examples/ratings.csv --scale 0-5 --group-col grade --simulate R --cut 3.25``
    twice gives the same numbers, and --jobs 2 the same as one process (R = 4 here for time)."""
    args = ["check", str(REPO / "examples" / "ratings.csv"), "--scale", "0-5", "--group-col", "grade",
            "--simulate", "4", "--cut", "3.25", "--json", "--no-rasch"]
    runs = [CliRunner().invoke(cli, args + extra) for extra in ([], [], ["--jobs", "2"])]
    for r in runs:
        assert r.exit_code == 0, r.output
    sims = [[g["simulation"] for g in json.loads(r.stdout)["groups"]] for r in runs]
    assert sims[0] == sims[1] == sims[2]
    assert len(sims[0]) == 3 and all(s["replications"] == 4 and s["cut"] == 3.25 for s in sims[0])
    methods = sims[0][0]["methods"]
    assert {m["shrinkage"] for m in methods} == {"none", "kelley"} and len(methods) == 20
    assert sorted(m["rank"] for m in methods if m["shrinkage"] == "none") == list(range(1, 11))
    other = CliRunner().invoke(cli, args + ["--seed", "7"])
    assert json.loads(other.stdout)["groups"][0]["simulation"]["methods"] != methods
