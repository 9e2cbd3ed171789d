"""Rater effects and assignment in the generators (rater_effects.py): each effect is in the
data it makes, checked against its formula; no effects make exactly the data they made before."""

from __future__ import annotations

import numpy as np
import pytest

from ratercal_cli.config import parse_config
from ratercal_cli.design import Cell, table3_steps
from ratercal_cli.errors import InputError
from ratercal_cli.rater_effects import NEUTRAL, RaterEffects, session_positions
from ratercal_cli.generators.modern import generate_set
from ratercal_cli.models.pcm import category_probabilities, expected_score

STEPS = table3_steps(5)


def effects(**kw):
    base = {k: (v,) * 9 for k, v in NEUTRAL.items()}
    base.update({k: tuple(v) if isinstance(v, list) else (v,) * 9 for k, v in kw.items() if k != "assignment"})
    return RaterEffects(**base, assignment=kw.get("assignment", "random"))


def _set(eff, papers=500, rpp="2", seed=11, rep=0):
    return generate_set(Cell(rpp, papers, 5, "normal"), "pcm", seed, rep, STEPS, None, "model", eff)


def test_no_effects_make_the_same_data_as_before():
    a = _set(None)
    b = _set(RaterEffects.none(9))
    for x, y in ((a.observed.score, b.observed.score), (a.observed.rater, b.observed.rater), (a.true_score, b.true_score)):
        assert np.array_equal(x, y)


def test_session_positions():
    raters = np.array([[0, 1], [1, 2], [0, 2], [0, 1]])
    t = session_positions(raters, 4)
    # rater 0: papers 0, 2, 3 -> 0, .5, 1; rater 1: papers 0, 1, 3; rater 2: papers 1, 2 -> 0, 1
    np.testing.assert_allclose(t, [[0, 0], [0.5, 0], [0.5, 1], [1, 1]])


def test_drift_is_recovered_by_regression_on_the_position():
    """Every rater drifts by d = 1.2 logits over its session (more severe later).  The residual
    score - E[score | theta, mid-session] regressed on the position t has the slope the formula
    gives (the same regression of E[score | theta, t] - E[mid]) and not that of no drift (0)."""
    eff = effects(drift=1.2)
    obs_slopes, model_slopes = [], []
    for rep in range(4):
        g = _set(eff, papers=900, rep=rep)
        o = g.observed
        raters = o.rater.reshape(-1, 2)
        t = session_positions(raters, 9).ravel()
        theta = g.quality[o.paper]
        e_mid = expected_score(theta, STEPS[o.rater])
        e_t = expected_score(theta, STEPS[o.rater] + (1.2 * (t - 0.5))[:, None])
        obs_slopes.append(np.polyfit(t, o.score - e_mid, 1)[0])
        model_slopes.append(np.polyfit(t, e_t - e_mid, 1)[0])
    obs, model = np.mean(obs_slopes), np.mean(model_slopes)
    assert model < -0.4                                   # the formula: later ratings lower
    assert obs == pytest.approx(model, abs=0.08)          # SE of the mean slope about 0.025


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_centrality_severity_and_slope_give_the_formulas_category_frequencies():
    """Rater j's category frequencies over many ratings equal the mean over its ratings of the
    formula's probabilities at a_j theta against a_j delta*_j (chi-square test), and centrality
    moves ratings out of the extreme categories."""
    from scipy import stats

    eff = effects(centrality=[0, 0.6, 0, 0, 0.6, 0, 0, 0.6, 0], severity=[0.5] * 3 + [0] * 3 + [-0.5] * 3,
                  slope=[1.3, 1.0, 0.7] * 3)
    g = _set(eff, papers=2000)
    o = g.observed
    for j in range(9):
        mine = o.rater == j
        q, d = eff.rating_model(g.quality[o.paper[mine]], np.full(mine.sum(), j), STEPS,
                                np.full(mine.sum(), 0.5))
        p = category_probabilities(q, d).mean(axis=0)
        counts = np.bincount(o.score[mine], minlength=6)
        keep = p * mine.sum() >= 5
        chi = stats.chisquare(counts[keep], p[keep] / p[keep].sum() * counts[keep].sum())
        assert chi.pvalue > 0.001, (j, counts, p * mine.sum())
    # centrality moves ratings out of the extremes: the same papers and draws without it
    flat = _set(effects(severity=[0.5] * 3 + [0] * 3 + [-0.5] * 3, slope=[1.3, 1.0, 0.7] * 3), papers=2000).observed
    for j in (1, 4, 7):
        with_c = np.isin(o.score[o.rater == j], (0, 5)).mean()
        without = np.isin(flat.score[flat.rater == j], (0, 5)).mean()
        assert with_c < without - 0.05, (j, with_c, without)


def test_assignment_by_quality_gives_weak_papers_to_the_first_raters():
    rnd = _set(effects())
    byq = _set(effects(assignment="by_quality"))
    for g, lo, hi in ((rnd, -0.1, 0.1), (byq, 0.6, 1.0)):
        o = g.observed
        r = np.corrcoef(o.rater, g.quality[o.paper])[0, 1]
        assert lo < r < hi, r


def test_config_keys_and_their_errors(tmp_path):
    text = """\
generator: pcm
assignment: by_quality
raters:
  steps: table3
  count: 12
  effects: {drift: 0.5, centrality: [0, .5, 0, 0, .5, 0, 0, .5, 0, 0, 0, 0]}
cells: [{raters_per_paper: [2], papers: [100], max_score: [5], quality: [normal]}]
"""
    cfg = parse_config(text, "c.yaml")
    assert cfg.n_raters == 12 and cfg.effects.assignment == "by_quality" and cfg.effects.drift == (0.5,) * 12
    np.testing.assert_array_equal(cfg.steps[5][9], table3_steps(5)[0])      # Table 3's raters in turn
    with pytest.raises(InputError, match=r"c.yaml:6: raters.effects.centrality: 9 values for 12 raters"):
        parse_config(text.replace(", 0, 0, 0]", "]"), "c.yaml")
    with pytest.raises(InputError, match="need the pcm, sequential or grm generator"):
        parse_config("generator: linear\nassignment: by_quality\ncells: [{raters_per_paper: [2], papers: [100], "
                     "max_score: [5]}]\n", "c.yaml")
    with pytest.raises(InputError, match="assignment: must be one of random, by_quality"):
        parse_config(text.replace("by_quality", "sorted"), "c.yaml")
    # a value that overflows the model (inf logits) gave RMSE 0.0 for every method, without a word
    for effect in ("drift: 1e308", "drift: -1e308", "severity: 1e308", "slope: 1e308", "centrality: 1e308"):
        with pytest.raises(InputError, match=r"c.yaml:6: raters.effects.\w+: .*at most 100"):
            parse_config(text.replace("{drift: 0.5, centrality: [0, .5, 0, 0, .5, 0, 0, .5, 0, 0, 0, 0]}",
                                      "{" + effect + "}"), "c.yaml")
    assert parse_config(text.replace("drift: 0.5", "drift: 100"), "c.yaml").effects.drift == (100.0,) * 12


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_a_config_with_effects_runs_through_montecarlo_and_the_file_pipeline(tmp_path):
    """configs/rater_effects.yaml (drift, centrality, slopes, halo across four criteria, assignment by
    quality), one cell: the file pipeline's replication 0 is the Monte Carlo's replication 0, row
    for row (the rubric mean), and its criterion_scores.csv are the Monte Carlo's with score: each
    (the mean square over the four criteria)."""
    from pathlib import Path

    from ratercal_cli.config import load_config
    from ratercal_cli.montecarlo.replicate import replicate
    from ratercal_cli.montecarlo.spec import StudySpec

    src = Path(__file__).resolve().parents[2] / "configs" / "rater_effects.yaml"
    text = src.read_text().replace('raters_per_paper: [2, "2+", 3]', 'raters_per_paper: ["2+"]').replace(
        "papers: [100, 500]", "papers: [100]")
    (tmp_path / "c.yaml").write_text(text)
    cfg = load_config(tmp_path / "c.yaml")
    eff = cfg.effects
    assert eff.assignment == "by_quality" and cfg.rubric.count == 4 and cfg.rubric.score == "mean"
    assert all(any(getattr(eff, k)) for k in ("drift", "centrality", "halo"))
    rows = replicate(StudySpec.from_config(cfg), cfg.cells[0], 0)
    (tmp_path / "each.yaml").write_text(text.replace("difficulty: [", "score: each, difficulty: ["))
    each = replicate(StudySpec.from_config(load_config(tmp_path / "each.yaml")), cfg.cells[0], 0)
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    r = CliRunner().invoke(cli, ["simulate", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "run"), "--quiet"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["score", str(tmp_path / "run"), "--quiet"])
    assert r.exit_code == 0, r.output
    scores = {(x.split(",")[1]): float(x.split(",")[3]) for x in
              (tmp_path / "run" / "score" / "scores.csv").read_text().splitlines()[1:]}
    mc = {row[4]: float(row[5]) for row in rows if row[3] == "none"}
    assert scores.keys() == mc.keys()
    for m in mc:
        assert scores[m] == pytest.approx(mc[m], rel=1e-12), m
    per_criterion = {}
    for x in (tmp_path / "run" / "score" / "criterion_scores.csv").read_text().splitlines()[1:]:
        f = x.split(",")
        per_criterion.setdefault(f[1], []).append(float(f[4]))
    for row in each:
        if row[3] == "none":
            assert len(per_criterion[row[4]]) == 4
            assert float(row[5]) == pytest.approx(np.sqrt(np.mean(np.square(per_criterion[row[4]]))), rel=1e-12)
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "report"), "--quiet"])
    assert r.exit_code == 0, r.output


def test_rater_task_interaction_is_recovered_per_rater_and_task():
    """rater_task_sd 0.8 over 3 tasks: a rater's mean residual (score - its expected score without
    the interaction) on a task's papers falls as its gamma on that task rises (correlation < -0.8),
    and the data without the effect (sd 0) are the ones of no effects at all."""
    from ratercal_cli.generators.modern import stage_seed

    eff = RaterEffects(**{k: (v,) * 9 for k, v in NEUTRAL.items()}, tasks=3, rater_task_sd=0.8)
    g = _set(eff, papers=1500)
    o = g.observed
    gamma = eff.task_interaction(stage_seed(11, Cell("2", 1500, 5, "normal").code, 0, 1), 9)
    resid = o.score - expected_score(g.quality[o.paper], STEPS[o.rater])
    task = o.paper % 3
    means = np.array([[resid[(o.rater == j) & (task == c)].mean() for c in range(3)] for j in range(9)])
    assert np.corrcoef(means.ravel(), gamma.ravel())[0, 1] < -0.8
    zero = RaterEffects(**{k: (v,) * 9 for k, v in NEUTRAL.items()}, tasks=3, rater_task_sd=0.0)
    assert zero.neutral and np.array_equal(_set(zero).observed.score, _set(None).observed.score)


def test_rater_task_keys():
    text = ("generator: pcm\nraters:\n  steps: table3\n  effects: {rater_task_sd: 0.4, tasks: 2}\n"
            "cells: [{raters_per_paper: [2], papers: [100], max_score: [5]}]\n")
    cfg = parse_config(text, "c.yaml")
    assert (cfg.effects.tasks, cfg.effects.rater_task_sd, cfg.effects.neutral) == (2, 0.4, False)
    with pytest.raises(InputError, match=r"c.yaml:4: raters.effects.rater_task_sd: expected a number >= 0"):
        parse_config(text.replace("0.4", "-1"), "c.yaml")


# -- criteria and halo -------------------------------------------------------------------
def _rubric_set(halo, papers=1500, rpp="2", rho=0.5, difficulty=(0.0, 0.5, -0.5, 0.0), seed=5, rep=0):
    from ratercal_cli.rater_effects import RubricDesign

    eff = RaterEffects(**{k: (v,) * 9 for k, v in NEUTRAL.items()}, halo=tuple(halo))
    rubric = RubricDesign(len(difficulty), rho, tuple(difficulty))
    return generate_set(Cell(rpp, papers, 5, "normal"), "pcm", seed, rep, STEPS, None, "model", eff, rubric), rubric


def test_halo_is_recovered_per_rater():
    """Raters with halo 0, 0.5 and 0.9 (three of each): each rater's h found again by least squares,
    the h whose quality (1 - h) theta_ic + h theta_i. gives the expected scores nearest its ratings,
    within 0.1; and the correlation between a reading's criteria rises with h (Cooper's halo: at
    h = 0 it is that of the criteria's qualities through the scale)."""
    halo = [0.0, 0.5, 0.9] * 3
    g, rubric = _rubric_set(halo)
    o = g.observed
    theta_c, crit = g.criterion_quality, o.criterion
    overall = theta_c.mean(axis=1)
    delta = STEPS[o.rater] + np.asarray(rubric.difficulty)[crit][:, None]
    grid = np.linspace(0, 1, 41)
    for j in range(9):
        mine = o.rater == j
        q_own, q_all = theta_c[o.paper[mine], crit[mine]], overall[o.paper[mine]]
        sse = [np.sum((o.score[mine] - expected_score((1 - h) * q_own + h * q_all, delta[mine])) ** 2) for h in grid]
        assert grid[int(np.argmin(sse))] == pytest.approx(halo[j], abs=0.1), j
    # the same papers and draws with every rater at h = 0, 0.5, 0.9: a reading's criteria correlate more
    corr = []
    for h in (0.0, 0.5, 0.9):
        scores = _rubric_set([h] * 9)[0].observed.score.reshape(-1, 4)   # reading by reading, its four criteria
        corr.append(np.corrcoef(scores.T)[np.triu_indices(4, 1)].mean())
    assert corr[0] + 0.1 < corr[1] < corr[2] - 0.05, corr


def test_criteria_correlate_as_configured_and_difficulty_lowers_scores():
    """Without halo: the criteria's qualities correlate rho (the normal shape), each has the cell's
    distribution (3z + 2), the paper's true score is the mean of its criteria's, and a harder
    criterion (difficulty +0.5) is scored lower than an easier one (-0.5) of the same qualities."""
    g, _ = _rubric_set([0.0] * 9, papers=3000, rho=0.6)
    q = g.criterion_quality
    r = np.corrcoef(q.T)[np.triu_indices(4, 1)]
    assert np.all(np.abs(r - 0.6) < 0.04), r
    assert q.mean() == pytest.approx(2.0, abs=0.1) and q.std() == pytest.approx(3.0, abs=0.1)
    np.testing.assert_array_equal(g.true_score, g.criterion_true.mean(axis=1))
    o = g.observed
    assert o.score[o.criterion == 1].mean() < o.score[o.criterion == 2].mean() - 0.2
    assert g.criterion_true[:, 1].mean() < g.criterion_true[:, 2].mean() - 0.2


def test_rubric_two_plus_takes_the_third_reading_on_the_readings_means():
    g, _ = _rubric_set([0.5] * 9, papers=400, rpp="2+")
    o = g.observed
    means = {}
    for p, order, crit, s in zip(o.paper, o.order, o.criterion, o.score):
        means.setdefault((p, order), []).append(s)
    for p in range(400):
        m1, m2 = np.mean(means[(p, 1)]), np.mean(means[(p, 2)])
        assert ((p, 3) in means) == (abs(m1 - m2) > 1)
    assert np.bincount(o.paper[o.kept], minlength=400).tolist() == [8] * 400   # two readings of four criteria


def test_criteria_and_halo_keys_and_their_errors():
    text = ("generator: pcm\ncriteria: {count: 3, correlation: 0.5, difficulty: [0, 0.3, -0.3]}\nraters:\n"
            "  steps: table3\n  effects: {halo: [0, .2, .4, .6, .8, 1, 0, 0, 0]}\n"
            "cells: [{raters_per_paper: [2], papers: [100], max_score: [5]}]\n")
    cfg = parse_config(text, "c.yaml")
    assert cfg.rubric.count == 3 and cfg.rubric.labels == ("c1", "c2", "c3") and cfg.effects.halo[5] == 1.0
    assert cfg.raw["criteria"] == {"count": 3, "correlation": 0.5, "difficulty": [0.0, 0.3, -0.3]}
    assert cfg.raw["effects"]["halo"] == [0, .2, .4, .6, .8, 1, 0, 0, 0]
    for bad, msg in ((text.replace("count: 3", "count: 1"), r"c.yaml:2: criteria.count: expected the number of "
                      r"criteria, 2 or more, got 1"),
                     (text.replace("0.5,", "1.5,"), "criteria.correlation: expected a number from 0 to 1"),
                     (text.replace("[0, 0.3, -0.3]", "[0, 1]"), "criteria.difficulty: 2 values for 3 criteria"),
                     (text.replace(".8, 1,", ".8, 1.2,"), r"c.yaml:5: raters.effects.halo\[5\]: expected a number "
                      "from 0 to 1, got 1.2"),
                     (text.replace("criteria: {count: 3, correlation: 0.5, difficulty: [0, 0.3, -0.3]}\n", ""),
                      "halo leaks a rater's overall impression across criteria"),
                     (text.replace("pcm", "linear").replace("raters:\n  steps: table3\n  effects: {halo: [0, .2, .4, "
                                                            ".6, .8, 1, 0, 0, 0]}\n", ""),
                      "criteria need the pcm, sequential or grm generator")):
        with pytest.raises(InputError, match=msg):
            parse_config(bad, "c.yaml")
    plain = parse_config(text.replace("criteria: {count: 3, correlation: 0.5, difficulty: [0, 0.3, -0.3]}\n", "")
                         .replace("  effects: {halo: [0, .2, .4, .6, .8, 1, 0, 0, 0]}\n", ""), "c.yaml")
    assert plain.rubric is None and "criteria" not in plain.raw and "halo" not in plain.effects.to_dict()


def _rubric_rows(score):
    """The rows of a chunk of two replications of a rubric study, checked against replicate()'s."""
    from ratercal_cli.montecarlo.replicate import chunk_rows, replicate
    from ratercal_cli.montecarlo.spec import StudySpec

    cfg = parse_config("generator: pcm\nvariant: corrected\nshrinkage: [none, kelley]\nmethods: [NO, TLI, PCM]\n"
                       f"criteria: {{count: 3, score: {score}}}\nraters: {{steps: table3, effects: {{halo: 0.6}}}}\n"
                       "cells: [{raters_per_paper: ['2+'], papers: [100], max_score: [5]}]\nseed: 3\n", "c.yaml")
    spec = StudySpec.from_config(cfg)
    assert spec.rubric_design() == cfg.rubric and cfg.rubric.score == score
    rows = chunk_rows(spec, cfg.cells[0], 0, 2)
    assert rows == [replicate(spec, cfg.cells[0], r) for r in range(2)]
    assert len(rows[0]) == 6 and all(r[-1] == "" for r in rows[0])
    return rows


@pytest.mark.parametrize("score", ["mean", "each"])
def test_rubric_rows_of_a_chunk_are_those_of_single_replications(score):
    """The Monte Carlo's batched path (each criterion a batch) gives replicate()'s rows byte for byte,
    the rubric mean's or each criterion's; the config's criteria reach the workers whole."""
    _rubric_rows(score)


def test_rubric_mean_and_each_criterion_score_different_units():
    """score: each scores 3 x 100 paper-criteria (the pass rates are shares of them), mean 100 rubric
    means; the data are the same, so NO's rubric-mean RMSE is below its criterion RMSE (the mean
    averages four readings' errors away) and the kelley rows differ."""
    each, mean = _rubric_rows("each")[0], _rubric_rows("mean")[0]
    assert float(mean[0][5]) < float(each[0][5]) - 0.1
    assert [r[:5] for r in each] == [r[:5] for r in mean] and each[3][5] != mean[3][5]


def test_editing_the_effects_or_criteria_in_a_run_remakes_its_data(tmp_path):
    """A run's stages depend on the rater effects and the criteria: editing them in RUN/config.yaml
    makes obsgen (and truegen, pargen for the criteria) again; the design file alone (which does not
    record them) left the old ratings standing."""
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    text = ("name: e\ngenerator: pcm\ncriteria: {count: 2}\nraters: {steps: table3, effects: {halo: 0.2}}\n"
            "cells: [{raters_per_paper: [2], papers: [100], max_score: [5]}]\n")
    run = tmp_path / "run"
    ratings = run / "2151" / "obsgen" / "ratings.csv"
    (tmp_path / "c.yaml").write_text(text)
    seen = []
    for edit in (text, text.replace("halo: 0.2", "halo: 0.9"), text.replace("halo: 0.2", "halo: 0.9, drift: 1")):
        (tmp_path / "c.yaml").write_text(edit)
        r = CliRunner().invoke(cli, ["simulate", str(tmp_path / "c.yaml"), "--out", str(run), "--quiet"])
        assert r.exit_code == 0, r.output
        seen.append(ratings.read_text())
    assert seen[0] != seen[1] != seen[2] and seen[0].startswith("paper,rater,criterion,score,order,kept\n")


def test_one_rubric_replication_written_with_its_data(tmp_path):
    """montecarlo --cell --replication --keep-data on a rubric: the ratings with their criterion, each
    criterion's quality and true score, and each rating's paper score on its criterion, whose mean over
    a paper's criteria is the rubric mean the rows score."""
    from ratercal_cli.montecarlo.run import run_single

    cfg = parse_config("generator: pcm\nvariant: corrected\nmethods: [NO, TLI]\ncriteria: {count: 3}\n"
                       "raters: {steps: table3, effects: {halo: 0.5}}\n"
                       "cells: [{raters_per_paper: [2], papers: [100], max_score: [5]}]\nseed: 3\n", "c.yaml")
    folder, rep = run_single(cfg, tmp_path, "2151", 1, keep_data=True)
    assert (folder / "ratings.csv").read_text().startswith("paper,rater,criterion,score,order,kept\n")
    assert (folder / "true_scores.csv").read_text().startswith(
        "paper,quality,true,quality_c1,quality_c2,quality_c3,true_c1,true_c2,true_c3\n")
    lines = (folder / "adjusted_corrected.csv").read_text().splitlines()
    head = lines[0].split(",")
    assert head[:4] == ["paper", "rater", "criterion", "score"] and len(lines) == 1 + 100 * 2 * 3
    by = {}
    for line in lines[1:]:
        f = line.split(",")
        by.setdefault(int(f[0]), {})[int(f[2])] = float(f[head.index("TLI_paper")])
    np.testing.assert_allclose([np.mean(list(by[p].values())) for p in range(1, 101)],
                               rep.adjusted[("corrected", "TLI")].paper, rtol=1e-12)
