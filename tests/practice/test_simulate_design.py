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
    # the study's ten and the model-based MML and MFRM, at both levels
    assert {m["shrinkage"] for m in methods} == {"none", "kelley"} and len(methods) == 24
    assert {m["method"] for m in methods} >= {"MML", "MFRM", "TLI", "PCM"}
    assert sorted(m["rank"] for m in methods if m["shrinkage"] == "none") == list(range(1, 13))
    other = CliRunner().invoke(cli, args + ["--seed", "7"])
    assert json.loads(other.stdout)["groups"][0]["simulation"]["methods"] != methods


def _rubric_file(n=120, seed=3):
    """A rubric: each paper scored by two of six raters on three criteria of different difficulty
    (criterion c shifts the quality by -0.8, 0, +0.8 logits), scores from Table 3's steps."""
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(n) + 2
    r = np.argsort(rng.random((n, 6)), axis=1)[:, :2]
    paper, rater, crit, score = [], [], [], []
    for c, shift in enumerate((-0.8, 0.0, 0.8)):
        sc = sample_scores(rng, (theta - shift)[:, None], table3_steps(5)[r])
        paper.append(np.repeat(np.arange(n), 2)), rater.append(r.ravel()), score.append(sc.ravel())
        crit.append(np.full(2 * n, c))
    crit = np.concatenate(crit)
    return Ratings(np.concatenate(paper), np.concatenate(rater), np.concatenate(score), 5, n, 6,
                   facets={"criterion": (crit, ("a", "b", "c"))})


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_a_rubric_is_simulated_as_the_many_facet_design_adjust_uses():
    """With facets the fitted design keeps each rating's cell and the criteria's effects (the
    simulated scores differ by criterion as the file's do); true scores are papers x cells; every
    method is scored on each (paper, criterion) score, MML and MFRM fitted to all the ratings."""
    r = _rubric_file()
    model = DesignModel.fit(r)
    assert model.facetted and model.effect.shape == (3,)
    assert model.effect[0] < model.effect[1] < model.effect[2]          # a's criterion easiest
    sims = [model.simulate(1, 0, k) for k in range(10)]
    crit = r.facets["criterion"][0]
    for c in range(3):
        sim = np.concatenate([s.score[crit == c] for s, _ in sims])
        assert abs(sim.mean() - r.score[crit == c].mean()) < 0.25, c
    _, true = sims[0]
    assert true.shape == (r.n_papers, 3) and np.isfinite(true).all()
    assert (true[:, 0] > true[:, 2]).all()                                # the easier criterion scores higher
    res = simulate_design(r, 3, methods=["TLI", "MFRM"])
    rows = {(x["shrinkage"], x["method"]): x for x in res.rows()}
    assert set(rows) == {(s, m) for s in ("none", "kelley") for m in ("TLI", "MFRM")}
    assert res.to_dict()["model"]["cells"] == 3 and "many-facet" in res.format_text()
    # pooling the three criteria, the many-facet model is far nearer the truth than TLI within each
    assert rows[("none", "MFRM")]["rmse"] < rows[("none", "TLI")]["rmse"] - 0.1


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_serial_jobs_2_and_dask_give_the_same_numbers():
    """The replications run on the Monte Carlo machinery: in this process, in two processes and on
    a Dask cluster the results are the same to the bit (chunks of CHUNK replications, put in order)."""
    from ratercal_cli.practice import simulate as sim_mod

    r = _pcm_file(n=80, seed=4)
    kw = dict(cut=3.25, methods=["TMN", "TLI", "PCM"])
    serial = simulate_design(r, 13, **kw)        # two chunks, the second short
    assert sim_mod.CHUNK < 13
    two = simulate_design(r, 13, jobs=2, **kw)
    assert serial.values.tobytes() == two.values.tobytes() and serial.rows() == two.rows()
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        dask = simulate_design(r, 13, scheduler=cluster.scheduler_address, **kw)
    assert serial.values.tobytes() == dask.values.tobytes() and serial.to_dict() == dask.to_dict()


@pytest.mark.parametrize("extra, name", [(["--cut", "3"], "--cut"), (["--scheduler", "tcp://x:1"], "--scheduler"),
                                         (["-m", "TLI"], "--method")])
def test_simulate_options_need_simulate(extra, name):
    from support import run

    out = run("check", REPO / "examples" / "ratings.csv", "--scale", "0-5", "--no-rasch", *extra)
    assert out.exit_code == 2 and f"{name} goes with --simulate" in out.output


def test_a_cut_off_the_scale_is_refused_before_simulating():
    """adjust and compare refuse a cut that is no score of the scale; check --simulate took --cut 9
    on a 1-6 file and printed every method's decision accuracy as 1.0000."""
    args = ["check", str(REPO / "examples" / "ratings.csv"), "--scale", "0-5", "--group-col", "grade",
            "--simulate", "2", "--cut", "9", "--no-rasch"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "error: --cut: the cut 9 is not a score on the scale 0-5" in res.output


def _write(path, r: Ratings):
    path.write_text("paper,rater,score\n" + "".join(f"P{p},R{j + 1},{s}\n" for p, j, s in zip(r.paper, r.rater,
                                                                                              r.score)))
    return path


def test_a_file_without_paper_signal_is_warned_that_the_ranking_rests_on_no_signal(tmp_path):
    """Random scores (each paper's ratings drawn alike from 0-5): MML fits a quality SD to the noise and
    check --simulate ranked the methods on it with nothing said; a ranking where every paper's true
    score is about the same rewards a method for putting papers at the mean, not for telling them apart.
    The papers' one-way ANOVA (agreement's ICC) finds no difference and the ranking says so; a file
    from Table 3's raters with real paper differences gets no such warning."""
    rng = np.random.default_rng(5)
    n = 120
    rater = np.argsort(rng.random((n, 6)), axis=1)[:, :2].ravel()
    noise = _write(tmp_path / "noise.csv", Ratings(np.repeat(np.arange(n), 2), rater, rng.integers(0, 6, 2 * n), 5,
                                                   n, 6))
    signal = _write(tmp_path / "signal.csv", _pcm_file(n=120))
    out = {}
    for name, path in (("noise", noise), ("signal", signal)):
        res = CliRunner().invoke(cli, ["check", str(path), "--scale", "0-5", "--no-rasch", "-q", "--simulate", "4",
                                       "-m", "NO,MN", "--json"])
        assert res.exit_code == 0, res.output
        out[name] = json.loads(res.output)["groups"][0]["simulation"]
    sim = out["noise"]
    assert sim["paper_signal"]["p_value"] > 0.05 and sim["paper_signal"]["icc1k"] < 0.1
    warning, untested = sim["warnings"]                 # --no-rasch: the assignment is not tested either
    assert untested.startswith("the assignment: not tested")
    assert warning.startswith("the file's papers do not differ detectably (one-way ANOVA of papers F(119, 120) = ")
    assert "this ranking of the methods rests on a design with no paper signal" in warning
    assert out["signal"]["paper_signal"]["p_value"] < 1e-6 and out["signal"]["warnings"] == [untested]
    res = CliRunner().invoke(cli, ["check", str(noise), "--scale", "0-5", "--no-rasch", "-q", "--simulate", "4",
                                   "-m", "NO,MN"])
    assert "  warning: the file's papers do not differ detectably" in res.output


# -- issue 29: the file's own design (confound and third-reading rule) ------------------------
def test_third_readings_follow_the_files_rule():
    """A 2+ file: each replication reads a paper a third time exactly when its first two readings
    differ by more than the file's threshold (the file's third reader, else one of the others)."""
    from ratercal_cli.practice.simulate import reading_rule

    rng = np.random.default_rng(3)
    n, J = 200, 8
    theta = 1.5 * rng.standard_normal(n) + 2.5
    who = np.argsort(rng.random((n, J)), axis=1)[:, :3]
    sc = sample_scores(rng, theta[:, None], table3_steps(5)[who])
    third = np.abs(sc[:, 0] - sc[:, 1]) > 1
    k = np.where(third, 3, 2)
    paper = np.repeat(np.arange(n), k)
    rater = np.concatenate([who[i, :k[i]] for i in range(n)])
    score = np.concatenate([sc[i, :k[i]] for i in range(n)])
    r = Ratings(paper, rater, score, 5, n, J)
    first, second, third_idx, d = reading_rule(r, 1)
    assert first.shape == second.shape == third_idx.shape == (n, 1)     # papers x cells: one cell without facets
    first = first[:, 0]
    assert d == 1 and (third_idx >= 0).sum() == third.sum()
    assert reading_rule(r, None) is None
    model = DesignModel.fit(r, discrepancy=1)
    shares = []
    for k_ in range(5):
        s, true = model.simulate(7, 0, k_)
        per = s.ratings_per_paper()
        order = np.argsort(s.paper, kind="stable")
        start = np.r_[0, np.cumsum(per)[:-1]]
        a, b = s.score[order[start]], s.score[order[start + 1]]
        assert np.array_equal(per == 3, np.abs(a - b) > 1)                 # the rule, paper by paper
        assert np.array_equal(s.rater[order[start]], r.rater[first])        # the first two readers kept
        extra = order[start[per == 3] + 2]
        assert not np.any((s.rater[extra] == s.rater[order[start[per == 3]]]) |
                          (s.rater[extra] == s.rater[order[start[per == 3] + 1]]))
        shares.append((per == 3).mean())
        assert np.isfinite(true).all()
    assert abs(np.mean(shares) - third.mean()) < 0.08   # about as often as the file's raters disagreed


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_a_confounded_design_draws_quality_by_cluster():
    """School-confounded file (tests/confounded.py): the design model is the multi-group MML's, and the
    simulated papers' mean quality in each cluster is that cluster's fitted mean."""
    from confounded import district

    from ratercal_cli.practice.assignment import decide_assignment

    d = district(5, papers=300)
    r = Ratings.from_frame(d.frame, scale="1-6")
    found = decide_assignment(r)
    assert found.multigroup
    model = DesignModel.fit(r, clusters=found.clusters)
    assert model.cluster_mean.size == len(found.cluster_labels)
    assert np.ptp(model.cluster_mean) > 2.0          # the schools' spread (true means -1.5 .. 1.5, slopes ~2)
    rng = np.random.default_rng(0)
    th = np.mean([model.quality(rng) for _ in range(200)], axis=0)
    for c, mu in enumerate(model.cluster_mean):
        assert abs(th[found.clusters == c].mean() - mu) < 0.05


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_nonrandom_without_clusters_is_said_and_does_not_decide():
    """Issue 29: with --assignment nonrandom the simulation ranked MML first without a caveat.  With no
    clusters to draw, its ranking carries a warning and the recommendation is not the simulation's."""
    from ratercal_cli.practice.check import check

    r = _pcm_file(n=150, seed=2)
    res = check(r, assignment="nonrandom", simulate=3, methods=["NO", "TLI", "MML"])
    sim = res.simulations[0]
    assert any("cannot see the confound" in w for w in sim.warnings)
    assert "cannot see the confound" in sim.format_text()
    dec = res.report().decision
    assert dec.source == "the assignment" and dec.method == "PCM"


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_a_rubric_draws_the_files_design():
    """Issue 29 for a rubric: the many-facet design keeps each paper's readers, draws quality about each
    cluster's fitted mean (the multi-group many-facet MML) and reads a paper a third time, in every
    criterion, exactly when its first two readers differ by more than the threshold on some criterion
    (tests/confounded.py's rubric: the district's rule)."""
    from confounded import rubric

    from ratercal_cli.practice.simulate import reading_rule

    d = rubric(2, papers=120)
    r = Ratings.from_frame(d.frame, scale="1-6", facet_cols=["criterion"])
    first, second, third, thr = reading_rule(r, 1)
    readers = d.frame.groupby("paper").rater.nunique().reindex(list(r.paper_ids)).to_numpy()
    assert first.shape == (120, 3) and thr == 1 and (first >= 0).all() and (second >= 0).all()
    assert np.array_equal((third >= 0).all(axis=1), readers == 3) and np.array_equal((third >= 0).any(axis=1),
                                                                                     readers == 3)
    assert reading_rule(r.subset(~np.isin(np.arange(r.n_ratings), third[third >= 0][:1])), 1) is None  # a reader short
    school = d.school.reindex(list(r.paper_ids)).str[1:].astype(int).to_numpy() - 1
    model = DesignModel.fit(r, clusters=school, discrepancy=1)
    assert model.facetted and model.rule is not None and np.all(np.diff(model.cluster_mean) > 0)   # S1 .. S6
    crit = r.facets["criterion"]
    for k in range(4):
        s, true = model.simulate(11, 0, k)
        assert true.shape == (120, 3) and np.isfinite(true).all()
        f2, s2, t2, _ = reading_rule(s, 1)                        # the replication's own readings, by reader
        a, b = s.score[f2], s.score[s2]
        assert np.array_equal((t2 >= 0).all(axis=1), (np.abs(a - b) > 1).any(axis=1))   # the rule, paper by paper
        assert np.array_equal(s.rater[f2[:, 0]], r.rater[first[:, 0]])                 # the first two readers kept
        assert np.array_equal(s.rater[s2[:, 0]], r.rater[second[:, 0]])
        lev = s.facets["criterion"][0]
        assert np.array_equal(lev[t2[t2[:, 0] >= 0]], np.tile([0, 1, 2], ((t2[:, 0] >= 0).sum(), 1)))
        assert s.facets["criterion"][1] == crit[1]


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_linear_eb_is_ranked_where_the_assignment_was_tested_random():
    """The simulation ranks the study's like-for-like level (linear_eb) beside none and kelley where the
    file's assignment was tested and found random (the level is for random assignment only); with
    --no-rasch the assignment is not tested: the summary says so, the simulation warns that a confound
    would not show in it, and ranks none and kelley alone.  Before, every simulation ranked none and
    kelley, and --no-rasch's summary said 'assignment random' as though it had been tested."""
    from ratercal_cli.practice.check import check

    r = _pcm_file(n=150, seed=2)
    tested = check(r, simulate=3, methods=["NO", "TLI"])
    assert tested.report().assignment_found.confounded is False
    sim = tested.simulations[0]
    assert [c for c in sim.columns] == [(s, m) for s in ("none", "kelley", "linear_eb") for m in ("NO", "TLI")]
    assert np.isfinite(sim.values[:, :, :2]).all() and sim.warnings == []
    rows = {(x["shrinkage"], x["method"]): x for x in sim.rows()}
    assert sorted(rows[("linear_eb", m)]["rank"] for m in ("NO", "TLI")) == [1, 2]
    assert "assignment random;" in tested.short_summary()
    untested = check(r, simulate=3, methods=["NO", "TLI"], rasch=False)
    sim = untested.simulations[0]
    assert {s for s, _ in sim.columns} == {"none", "kelley"}
    assert any(w.startswith("the assignment: not tested") and "a confound would not show" in w for w in sim.warnings)
    assert "assignment random (not tested);" in untested.short_summary()
    # the none and kelley columns are the same numbers whichever levels are ranked beside them
    np.testing.assert_array_equal(untested.simulations[0].values, tested.simulations[0].values[:, :4])


@pytest.mark.parametrize("reps, ratio", [(5, 2.3), (400, 1.98)])
def test_the_simulations_equivalents_are_the_methods_whose_paired_interval_holds_0(reps, ratio):
    """The recommendation's "equivalent within Monte Carlo error" and the table's "vs best (95% CI)" are one
    test: at 5 replications a paired difference 2.3 standard errors from the best has a t(4) interval
    (half-width 2.78 SE) that holds 0, and is equivalent (it was not: "twice its standard error"); at 400
    one 1.98 SE from it has an interval (1.97 SE) that does not, and is not (it was)."""
    from ratercal_cli.practice.recommend import simulation_say
    from ratercal_cli.practice.simulate import SimulationResult

    rng = np.random.default_rng(3)
    noise = rng.standard_normal(reps)
    noise = (noise - noise.mean()) / noise.std(ddof=1)   # mean 0, sd 1: the paired SE is 1 / sqrt(reps)
    best = 0.5 + 0.01 * rng.standard_normal(reps)
    values = np.zeros((reps, 3, 3))
    values[:, 0, 0] = best + 0.01 * (ratio / np.sqrt(reps) + noise)   # TLS: ratio SEs behind
    values[:, 1, 0] = best                                             # MML: the best
    values[:, 2, 0] = best + 1.0                                       # NO: far behind
    sim = SimulationResult(reps, 1, None, None, [("none", "TLS"), ("none", "MML"), ("none", "NO")], values)
    say = simulation_say(sim)
    row = next(r for r in sim.rows() if r["method"] == "TLS")
    holds_0 = row["vs_best"]["ci"][0] <= 0
    assert row["vs_best"]["diff"] == pytest.approx(0.01 * ratio / np.sqrt(reps))
    assert holds_0 == (reps == 5)
    assert ("TLS" in say["equivalent"]) == holds_0
    assert say["method"] == ("TLS" if holds_0 else "MML")   # (the simplest of the equivalents)
