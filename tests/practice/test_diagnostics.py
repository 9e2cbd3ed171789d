"""diagnostics: the check statistics against hand formulas, linkage, Chapter 5's rule."""

import json

import numpy as np
import pytest
from scipy import stats

from ratercal_cli.practice.diagnostics import (anova_means, check_ratings, chi_square_raters,
                                      per_rater_tests, rater_components, rater_summary,
                                      recommend, score_table, variance_tests)
from ratercal_cli.practice.multiplicity import holm
from ratercal_cli.ratings import Ratings

# three raters, scale 0..4; rater 0: 1 2 2 3, rater 1: 3 4 4 4 3, rater 2: 0 1 2
RATER = [0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2]
SCORE = [1, 2, 2, 3, 3, 4, 4, 4, 3, 0, 1, 2]


def small():
    paper = np.arange(12) % 6                       # two ratings per paper, raters (0,1)x3 (0,2) (1,2)x2
    return Ratings(paper, RATER, SCORE, 4, 6, 3)


def groups():
    return [np.array([s for r, s in zip(RATER, SCORE) if r == j], float) for j in range(3)]


def test_score_table_and_summary():
    t = score_table(small())
    np.testing.assert_array_equal(t, [[0, 1, 2, 1, 0], [0, 0, 0, 2, 3], [1, 1, 1, 0, 0]])
    n, mean, sd = rater_summary(small())
    np.testing.assert_array_equal(n, [4, 5, 3])
    np.testing.assert_allclose(mean, [2.0, 3.6, 1.0])
    np.testing.assert_allclose(sd, [np.sqrt(2 / 3), np.sqrt(1.2 / 4), 1.0])


def test_anova_f_by_hand():
    g = groups()
    allx = np.concatenate(g)
    ssb = sum(x.size * (x.mean() - allx.mean()) ** 2 for x in g)
    ssw = sum(((x - x.mean()) ** 2).sum() for x in g)
    f = (ssb / 2) / (ssw / 9)
    res = anova_means(small())
    assert res.df == (2, 9)
    assert res.statistic == pytest.approx(f, rel=1e-12)
    assert res.p_value == pytest.approx(stats.f.sf(f, 2, 9), rel=1e-10)
    assert res.significant(0.05)


def test_levene_is_anova_of_absolute_deviations():
    g = groups()
    dev = [np.abs(x - x.mean()) for x in g]
    alld = np.concatenate(dev)
    ssb = sum(d.size * (d.mean() - alld.mean()) ** 2 for d in dev)
    ssw = sum(((d - d.mean()) ** 2).sum() for d in dev)
    w = (ssb / 2) / (ssw / 9)
    levene, bf, bartlett = variance_tests(small())
    assert levene.statistic == pytest.approx(w, rel=1e-12)
    assert levene.df == (2, 9)
    # Bartlett by its textbook formula
    n = np.array([x.size for x in g])
    v = np.array([x.var(ddof=1) for x in g])
    sp = ((n - 1) * v).sum() / (n.sum() - 3)
    num = (n.sum() - 3) * np.log(sp) - ((n - 1) * np.log(v)).sum()
    c = 1 + (np.sum(1 / (n - 1)) - 1 / (n.sum() - 3)) / (3 * 2)
    assert bartlett.statistic == pytest.approx(num / c, rel=1e-10)
    assert np.isfinite(bf.p_value)


def test_chi_square_by_hand():
    t = np.array([[0, 1, 2, 1, 0], [0, 0, 0, 2, 3], [1, 1, 1, 0, 0]], float)
    e = t.sum(1, keepdims=True) * t.sum(0, keepdims=True) / t.sum()
    x2 = ((t - e) ** 2 / e).sum()
    res = chi_square_raters(small())
    assert res.statistic == pytest.approx(x2, rel=1e-12)
    assert res.df == (8,)
    assert res.p_value == pytest.approx(stats.chi2.sf(x2, 8), rel=1e-10)
    assert "expected counts < 5" in res.note


def test_per_rater_against_others_by_hand():
    out = per_rater_tests(small())
    g = groups()
    # rater 1 vs the pooled others: KS D is the largest gap between the two ECDFs
    mine, others = g[1], np.concatenate([g[0], g[2]])
    grid = np.arange(5)
    d = np.max(np.abs((mine[:, None] <= grid).mean(0) - (others[:, None] <= grid).mean(0)))
    assert out["ks_d"][1] == pytest.approx(d)
    assert d == pytest.approx(6 / 7)        # at 2: none of rater 1's 3 4 4 4 3, six of the others' seven
    # 2 x K chi-square for rater 0 vs the others (columns with no scores dropped)
    t = np.array([[0, 1, 2, 1, 0], [1, 1, 1, 2, 3]], float)
    e = t.sum(1, keepdims=True) * t.sum(0, keepdims=True) / t.sum()
    assert out["chi2"][0] == pytest.approx(((t - e) ** 2 / e).sum())
    assert out["chi2_df"][0] == 4
    np.testing.assert_allclose(out["ks_p_holm"], holm(out["ks_p"]))


def test_holm_by_hand():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.5, np.nan, 0.2]), [0.5, np.nan, 0.4])
    np.testing.assert_allclose(holm([0.9, 0.8]), [1.0, 1.0])


def test_components():
    # raters 0-1 share paper 0; 2-3 share paper 1; rater 4 rated nothing
    r = Ratings([0, 0, 1, 1, 2], [0, 1, 2, 3, 3], [1, 2, 3, 4, 1], 4, 3, 5)
    assert rater_components(r) == [[0, 1], [2, 3]]
    r2 = Ratings([0, 0, 1, 1, 2, 2], [0, 1, 2, 3, 3, 0], [1] * 6, 4, 3, 4)
    assert rater_components(r2) == [[0, 1, 2, 3]]


@pytest.mark.parametrize("n, assignment, warranted, allall, code", [
    (7, "random", True, False, "NO"),
    (8, "random", True, False, "TMN"),
    (20, "random", True, False, "TMN"),
    (21, "random", True, False, "TLI"),
    (100, "nonrandom", True, False, "NO"),
    (100, "random", False, False, "NO"),
    (100, "random", True, True, "NO"),
])
def test_chapter5_rule(n, assignment, warranted, allall, code):
    assert recommend(n, assignment, warranted, allall)[0] == code


def test_check_report_end_to_end():
    rep = check_ratings(small(), group="5", scale_low=1)
    assert rep.min_papers == 3 and rep.recommendation == "NO"       # rater 2 scored only 3
    assert [r["rater"] for r in rep.raters] == [1, 2, 3]
    assert rep.raters[1]["mean"] == pytest.approx(4.6)               # 3.6 + scale low
    assert rep.warranted and any("ANOVA" in w for w in rep.warranted_by)
    assert not any(w.startswith("chi-square") for w in rep.warranted_by)   # sparse table: Cochran's rule
    d = rep.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["linked"] is True and d["components"] == [[1, 2, 3]]
    assert d["ratings_per_paper"] == {"2": 6}
    text = rep.format_text("f.csv")
    assert "RECOMMENDATION: NO" in text and "[5]" in text and "ANOVA F" in text


def test_all_raters_all_papers_needs_no_adjustment():
    rng = np.random.default_rng(0)
    paper = np.repeat(np.arange(30), 3)
    rater = np.tile(np.arange(3), 30)
    score = np.clip(rng.integers(0, 5, 90) + rater, 0, 5)
    rep = check_ratings(Ratings(paper, rater, score, 5, 30, 3))
    assert rep.recommendation == "NO" and "every rater scored every paper" in rep.reason
    assert rep.components == [[1, 2, 3]]


def test_dense_chi_square_counts():
    # two raters, 60 papers each, same mean 1 but different spreads: counts (15 30 15) vs (30 0 30)
    score = [0] * 15 + [1] * 30 + [2] * 15 + [0] * 30 + [2] * 30
    rater = [0] * 60 + [1] * 60
    rep = check_ratings(Ratings(np.arange(120), rater, score, 2, 120, 2))
    t = np.array([[15, 30, 15], [30, 0, 30]], float)
    e = t.sum(1, keepdims=True) * t.sum(0, keepdims=True) / t.sum()
    chi = next(x for x in rep.tests if x.test.startswith("chi-square"))
    assert chi.statistic == pytest.approx(((t - e) ** 2 / e).sum()) and chi.note == ""
    assert any(w.startswith("chi-square") for w in rep.warranted_by)
    anova = rep.tests[0]
    assert anova.statistic == pytest.approx(0.0, abs=1e-12)           # equal means
    assert rep.recommendation == "TLI"


def test_rasch_fit_flags_a_rater_who_scores_at_random():
    from ratercal_cli.design import Cell, table3_steps
    from ratercal_cli.practice.diagnostics import rasch_fit
    from ratercal_cli.generators.modern import generate_set
    from ratercal_cli.ratings import Ratings

    cell = Cell("3", 600, 5, "normal")
    o = generate_set(cell, "pcm", 4, 0, steps=table3_steps(5) / 2).observed
    score = o.score.copy()
    noisy = o.rater == 4
    score[noisy] = np.random.default_rng(1).integers(0, 6, noisy.sum())
    rows, notes = rasch_fit(Ratings(o.paper, o.rater, score, 5, 600, 9))
    flags = {r["rater"]: r["flag"] for r in rows}
    assert flags[5] == "noisy"
    assert all(f != "noisy" for rid, f in flags.items() if rid != 5)
    assert np.median([r["relative"] for r in rows]) == pytest.approx(1.0, abs=0.05)


def test_ks_row_is_one_raters_d_and_p():
    # rater A: 3 ratings, all 5 (the largest D, but few ratings); raters B (shifted up two points)
    # and C: 80 ratings each, smaller D, far smaller p.  The row must not pair A's D with C's p.
    rng = np.random.default_rng(5)
    c = rng.integers(0, 5, 80)
    b = np.clip(rng.integers(0, 5, 80) + 2, 0, 5)
    a = np.array([5, 5, 5])
    score = np.concatenate([a, b, c])
    rater = np.repeat([0, 1, 2], [3, 80, 80])
    r = Ratings(np.arange(score.size), rater, score, 5, score.size, 3, rater_ids=("A", "B", "C"))
    d = [stats.ks_2samp(g, np.concatenate([h for k, h in enumerate((a, b, c)) if k != j]))
         for j, g in enumerate((a, b, c))]
    p_holm = holm([x.pvalue for x in d])
    assert np.argmax([x.statistic for x in d]) == 0 and np.argmin(p_holm) == 2   # the two disagree
    ks = next(t for t in check_ratings(r).tests if t.test.startswith("KS"))
    assert ks.test == "KS, rater C vs others (smallest Holm p)"
    assert ks.statistic == pytest.approx(d[2].statistic) and ks.p_value == pytest.approx(p_holm[2])
    assert d[2].statistic == pytest.approx(39 / 80)


def test_a_test_scipy_refuses_says_why_and_a_bug_propagates():
    """``_quiet`` names what failed (the note the report prints) instead of a guess such as "no
    variation within raters"; anything but scipy's ValueError is not swallowed."""
    from scipy import stats

    from ratercal_cli.practice.diagnostics import _quiet

    res, why = _quiet(stats.chi2_contingency, np.array([[1, 0], [0, 0]]), correction=False)
    assert res is None
    assert why.startswith("scipy's chi2_contingency refused the data: The internally computed table of expected "
                          "frequencies has a zero element")
    res, why = _quiet(stats.f_oneway, np.array([1.0, 2.0]), np.array([2.0, 4.0]))
    assert why == "" and res.statistic == pytest.approx(1.8)   # between 2.25 / within (0.5 + 2) / 2

    def buggy(*groups):
        raise TypeError("a coding error")

    with pytest.raises(TypeError, match="a coding error"):
        _quiet(buggy, np.array([1.0]))


def test_conditional_work_counts_each_distinct_rater_set_once():
    """(s M)^2 (s M + 1) a distinct set of raters: papers 0-2 share raters {0, 1} (counted once),
    paper 3 has {0, 1, 2} (a rater twice on it counts once), paper 4 {2} alone; scale 0-4."""
    from ratercal_cli.methods.cml import conditional_work

    paper = [0, 0, 1, 1, 2, 2, 3, 3, 3, 3, 4]
    rater = [0, 1, 1, 0, 0, 1, 0, 1, 2, 2, 2]
    r = Ratings(paper, rater, [1, 2, 3, 4, 0, 1, 2, 3, 4, 4, 0], 4, 5, 3)
    work, n_sets, most = conditional_work(r)
    assert (n_sets, most) == (3, 3)
    assert work == 8 ** 2 * 9 + 12 ** 2 * 13 + 4 ** 2 * 5


def test_check_fits_its_rasch_models_by_marginal_ml_where_conditional_ml_costs_too_much(monkeypatch):
    """Every paper its own set of many raters (21 of 200 at 1M ratings: 19 CPU minutes a conditional fit):
    check left its Rasch fits out, and with them the rater report, the assignment evidence and the
    corrected study's advice.  It now fits the same models by marginal ML (seconds at 1M ratings), says
    why, and makes no conditional fit; the infit/outfit and severities agree with the conditional fits'
    (each a consistent estimate of the same rating scale / partial credit model)."""
    import ratercal_cli.methods.cml as cml_mod

    rng = np.random.default_rng(0)
    raters = np.argsort(rng.random((300, 12)), axis=1)[:, :6]          # 6 of 12 raters a paper
    quality = rng.normal(2, 1, 300)
    severity = np.linspace(-0.8, 0.8, 12)
    score = np.clip(np.rint(quality[:, None] - severity[raters] + rng.normal(0, 0.7, (300, 6))), 0, 4).astype(int)
    r = Ratings(np.repeat(np.arange(300), 6), raters.ravel(), score.ravel(), 4, 300, 12)
    conditional = check_ratings(r)
    assert conditional.rasch_fit and conditional.rater_report.fitted
    assert "conditional ML" in conditional.rater_report.model
    monkeypatch.setattr(cml_mod, "CHECK_WORK", cml_mod.conditional_work(r)[0] - 1)

    def no_fit(*a, **k):
        raise AssertionError("a conditional fit was made")

    monkeypatch.setattr(cml_mod, "fit_cml", no_fit)
    rep = check_ratings(r)
    n_sets = cml_mod.conditional_work(r)[1]
    assert n_sets > 250
    why = f"conditional ML would take about 0 s of CPU a fit ({n_sets} distinct sets of up to 6 raters"
    assert rep.rater_report.fitted and "marginal ML (MFRM)" in rep.rater_report.model
    assert rep.rater_report.notes[0].startswith(why) and "fitted by marginal ML instead" in rep.rater_report.notes[0]
    assert rep.rasch_notes[0].startswith(why) and "marginal ML (MML)" in rep.rasch_notes[0]
    assert len(rep.rasch_fit) == 12 and rep.assignment_found.by_rater
    assert "--no-rasch" not in rep.format_text()
    # the same raters, by both fits: severities (centred) within their SEs' reach, mean squares alike
    a = {x["rater"]: x for x in conditional.rater_report.raters}
    b = {x["rater"]: x for x in rep.rater_report.raters}
    d = np.array([a[k]["measure"] - b[k]["measure"] for k in a])
    assert np.abs(d - d.mean()).max() < 2 * max(x["se"] for x in b.values())
    assert np.corrcoef([a[k]["measure"] for k in a], [b[k]["measure"] for k in a])[0, 1] > 0.97
    fa = {x["rater"]: x["infit"] for x in conditional.rasch_fit}
    fb = {x["rater"]: x["infit"] for x in rep.rasch_fit}
    assert max(abs(fa[k] - fb[k]) for k in fa) < 0.1


def test_the_rater_models_chi_square_counts_among_the_tests():
    """Raters whose severities differ once each paper's quality is taken out, where the tests of raw ratings
    (ANOVA, Levene, KS) find nothing: check said "no test found the raters differing" and recommended NO
    above the rater report's fixed chi-square p < .001.  It counts now, and --no-rasch (no model) keeps the
    tests' say."""
    import pandas as pd

    import ratercal_cli as rc

    rng = np.random.default_rng(4)
    rows = []
    for p in range(60):
        q = rng.normal(2.5, 1.3)
        for r in rng.choice(5, 2, replace=False):
            rows.append((f"P{p}", f"R{r + 1}", int(np.clip(np.rint(q + [-.4, 0, .4, 0, 0][r] + rng.normal(0, .5)), 0, 5))))
    df = pd.DataFrame(rows, columns=["paper", "rater", "score"])
    rep = rc.check(df, scale="0-5").reports[0]
    sep = rep.rater_report.rater_separation
    # (the Wald test with the severities' covariance counts: Facets' fixed chi-square, as if independent, says p < .001)
    assert sep["chi2_p"] < 0.001 and 0.01 < sep["wald_p"] < 0.05
    assert rep.warranted_by == [f"Wald chi-square of the rater model's severities, p = {sep['wald_p']:.3f}"]
    assert rep.warranted and rep.recommendation != "NO" and "no test found" not in rep.reason
    quick = rc.check(df, scale="0-5", rasch=False).reports[0]
    assert not quick.warranted and quick.recommendation == "NO" and "no test found" in quick.reason


def test_checks_text_makes_no_pcm_fit_table_where_the_rater_report_replaces_it(monkeypatch):
    """The per-rater PCM fit table shows in check's text only where the rater report could not be fitted (its
    infit and outfit replace it); it took 10 of check's 19 s of CPU at 800 raters, 1M ratings.  It is now
    fitted when first read: the text of a report whose rater report is fitted makes no such fit; ``to_dict``
    (``--json``) makes it once, where it always stood, with the rows of :func:`rasch_fit` itself."""
    from ratercal_cli.practice import diagnostics

    rng = np.random.default_rng(3)
    raters = np.argsort(rng.random((200, 8)), axis=1)[:, :2]
    quality = rng.normal(2, 1, 200)
    score = np.clip(np.rint(quality[:, None] + np.linspace(-0.6, 0.6, 8)[raters] + rng.normal(0, 0.6, (200, 2))),
                    0, 4).astype(int)
    r = Ratings(np.repeat(np.arange(200), 2), raters.ravel(), score.ravel(), 4, 200, 8)
    calls = []
    fit = diagnostics.rasch_fit
    monkeypatch.setattr(diagnostics, "rasch_fit", lambda *a, **k: calls.append(1) or fit(*a, **k))
    rep = check_ratings(r)
    text = rep.format_text()
    assert rep.rater_report.fitted and "infit" in text and calls == []
    d = rep.to_dict()
    assert calls == [1]
    keys = list(d)
    assert keys[keys.index("notes") + 1:keys.index("notes") + 3] == ["rasch_fit", "rasch_notes"]
    rows, notes = fit(r)
    assert json.loads(json.dumps(d["rasch_fit"])) == json.loads(json.dumps(rows)) and len(rows) == 8
    assert d["rasch_notes"] == notes
    assert rep.rasch_fit is rep.rasch_fit and calls == [1]   # (fitted once)
    quick = check_ratings(r, rasch=False)
    assert quick.rasch_fit == [] and quick.rasch_notes == ["skipped (--no-rasch)"]
