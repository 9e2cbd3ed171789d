"""Facetted ratings: classical methods within each cell, MFRM with the facets as main effects, totals."""

import numpy as np
import pytest

from ratercal_cli.methods.apply import apply_methods
from ratercal_cli.models.pcm import sample_scores
from ratercal_cli.practice.rubric import adjust_facets, cells, paper_total
from ratercal_cli.ratings import Ratings


def rubric_ratings(seed=3, n=120, J=6, C=3, M=4):
    rng = np.random.default_rng(seed)
    sev = np.linspace(-0.6, 0.6, J)
    dif = np.array([-0.4, 0.0, 0.4])[:C]
    kap = np.linspace(-1.5, 1.5, M)
    theta = rng.normal(0, 1.2, n)
    P, R, L, S = [], [], [], []
    for p in range(n):
        for j in rng.permutation(J)[:2]:
            s = sample_scores(rng, np.full(C, theta[p]), (sev[j] + dif)[:, None] + kap[None, :])
            P += [p] * C
            R += [j] * C
            L += list(range(C))
            S += list(s)
    lab = ("style", "org", "conv")[:C]
    return Ratings(np.array(P), np.array(R), np.array(S), M, n, J, scale_low=1,
                   facets={"criterion": (np.array(L), lab)})


def test_classical_methods_apply_within_each_cell():
    r = rubric_ratings()
    cell, labels = cells(r)
    assert labels == [("style",), ("org",), ("conv",)]
    fa = adjust_facets("TLI", r, "corrected")
    for c in range(3):
        sub = r.subset(cell == c)
        want = apply_methods(sub, ["TLI"], "corrected", strict=True).adjusted["TLI"]
        np.testing.assert_allclose(fa.adjusted.rating[cell == c], want.rating)
        np.testing.assert_allclose(fa.cell_scores[:, c], want.paper)
    np.testing.assert_allclose(fa.adjusted.paper, fa.cell_scores.mean(axis=1))
    tot = paper_total(fa.cell_scores, 1, "sum")
    np.testing.assert_allclose(tot, (fa.cell_scores + 1).sum(axis=1))
    np.testing.assert_allclose(paper_total(fa.cell_scores, 1, "mean"), tot / 3)


@pytest.mark.slow
def test_mfrm_cell_scores_shift_the_measure_by_the_criterion():
    r = rubric_ratings()
    fa = adjust_facets("MFRM", r, "corrected")
    est = fa.estimators[0]
    assert est.facet_ == pytest.approx([-0.4, 0.0, 0.4], abs=0.25)
    # a harder criterion gives lower fair scores to every paper
    assert np.all(fa.cell_scores[:, 2] < fa.cell_scores[:, 0])
    for c in range(3):
        np.testing.assert_allclose(fa.cell_scores[:, c], est.fair_scores(est.quality_ - est.facet_[c]))
    cell, _ = cells(r)
    np.testing.assert_allclose(fa.adjusted.rating, fa.cell_scores[r.paper, cell])


def test_shared_raters_mean_equating_by_hand():
    """--shared-raters, MN: each rating moves by the mean of all ratings less its rater's mean over all
    its ratings in every criterion (one shift per rater), not its rater's mean in that criterion."""
    r = rubric_ratings()
    cell, _ = cells(r)
    fa = adjust_facets("MN", r, "corrected", shared_raters=True)
    means = np.bincount(r.rater, weights=r.score) / np.bincount(r.rater)
    np.testing.assert_allclose(fa.adjusted.rating, r.score + r.score.mean() - means[r.rater], atol=1e-12)
    # a paper's score in a criterion: the mean of its raters' adjusted ratings there
    for p in (0, 7, 50):
        for c in range(3):
            here = (r.paper == p) & (cell == c)
            assert fa.cell_scores[p, c] == pytest.approx(fa.adjusted.rating[here].mean())
    within = adjust_facets("MN", r, "corrected")
    shift = within.adjusted.rating - r.score
    assert np.ptp(shift[(r.rater == 0)]) > 0.05     # within each criterion: a shift per rater and criterion


@pytest.mark.parametrize("code", ["TLI", "EQP", "OLS"])
def test_shared_raters_give_a_rater_one_transformation_over_the_criteria(code):
    """A rater's adjusted rating is a function of its raw score alone under --shared-raters (the same in
    every criterion), and is the method applied once to the ratings with each paper x criterion a paper."""
    r = rubric_ratings()
    cell, _ = cells(r)
    fa = adjust_facets(code, r, "corrected", shared_raters=True)
    within = adjust_facets(code, r, "corrected")
    spread_shared = spread_within = 0.0
    for j in range(r.n_raters):
        for x in range(r.max_score + 1):
            here = (r.rater == j) & (r.score == x)
            if here.sum() > 1:
                spread_shared = max(spread_shared, np.ptp(fa.adjusted.rating[here]))
                spread_within = max(spread_within, np.ptp(within.adjusted.rating[here]))
    assert spread_shared < 1e-9 < 0.05 < spread_within
    labels = [f"{p}|{c}" for p, c in zip(r.paper, cell)]
    pp = {lab: k for k, lab in enumerate(dict.fromkeys(labels))}
    flat = Ratings(np.array([pp[x] for x in labels]), r.rater, r.score, r.max_score, len(pp), r.n_raters)
    want = apply_methods(flat, [code], "corrected", strict=True).adjusted[code]
    np.testing.assert_allclose(fa.adjusted.rating, want.rating)
    firsts = np.unique([pp[x] for x in labels], return_index=True)[1]
    np.testing.assert_allclose(fa.cell_scores[r.paper[firsts], cell[firsts]], want.paper)


def test_shared_raters_need_facets():
    from ratercal_cli.errors import InputError
    from ratercal_cli.practice.adjust import adjust
    from ratercal_cli.practice.compare import compare

    r = rubric_ratings()
    flat = Ratings(r.paper, r.rater, r.score, r.max_score, r.n_papers, r.n_raters)
    with pytest.raises(InputError, match="shares a rater's parameters across the levels of a facet"):
        adjust(flat.subset(r.facets["criterion"][0] == 0), "MN", shared_raters=True)
    with pytest.raises(InputError, match="give facet_cols or score_cols"):
        compare(flat.subset(r.facets["criterion"][0] == 0), "MN", shared_raters=True)


def test_a_paper_missing_a_cell():
    r = rubric_ratings()
    cell, _ = cells(r)
    drop = (r.paper == 0) & (cell == 1)
    fa = adjust_facets("MN", r.subset(~drop), "corrected")
    assert np.isnan(fa.cell_scores[0, 1]) and np.isfinite(fa.cell_scores[0, [0, 2]]).all()
    assert paper_total(fa.cell_scores, 1)[0] == pytest.approx(np.nansum(fa.cell_scores[0] + 1))


@pytest.mark.slow
def test_rubric_check_report():
    from ratercal_cli.practice.rubric import rubric_check

    r = rubric_ratings()
    rep = rubric_check(r)
    assert [x["rater"] for x in rep.raters] == list(range(1, 7))
    assert [x["level"] for x in rep.facets["criterion"]] == ["style", "org", "conv"]
    assert len(rep.categories) == 1 and list(rep.categories[0].categories) == [1, 2, 3, 4, 5]
    assert set(rep.bias) == {"criterion"} and len(rep.bias["criterion"].rows) == 18
    text = rep.format_text()
    assert "Many-facet Rasch model (MFRM: paper + rater + criterion" in text
    assert "Category statistics (Facets Table 8)" in text and "Rater x criterion bias/interaction" in text
    d = rep.to_dict()
    assert d["facets"]["criterion"][2]["difficulty"] > d["facets"]["criterion"][0]["difficulty"]


@pytest.mark.slow
def test_adjust_results_carry_cells_and_totals():
    from ratercal_cli.practice.adjust import adjust

    r = rubric_ratings()
    res = adjust(r, "TLI,MN")
    df = res.to_frame()
    assert list(df.columns) == ["paper", "rater", "criterion", "score", "TLI", "TLI_paper", "TLI_total", "MN",
                                "MN_paper", "MN_total"]
    fa = adjust_facets("TLI", r, "corrected")
    cell, _ = cells(r)
    np.testing.assert_allclose(df["TLI_paper"], fa.cell_scores[r.paper, cell] + 1)
    np.testing.assert_allclose(df["TLI_total"], paper_total(fa.cell_scores, 1)[r.paper])


@pytest.mark.slow
def test_steps_by_criterion_gives_each_criterion_its_thresholds():
    from ratercal_cli.practice.anchors import calibration, fit_mfrm
    from ratercal_cli.practice.rubric import rubric_check

    r = rubric_ratings()
    rep = rubric_check(r, steps_by="criterion")
    assert [t.label for t in rep.categories] == ["criterion style", "criterion org", "criterion conv"]
    est = rep.model
    assert np.shape(est.thresholds_) == (3, 4)
    cal = calibration(fit_mfrm(r, steps_by="criterion")[0], r, steps_by="criterion")
    assert sorted({a.level for a in cal.elements if a.facet == "threshold"}) == ["conv", "org", "style"]
    anch, rows = fit_mfrm(r, cal, steps_by="criterion")   # its own calibration: nothing moves
    np.testing.assert_allclose(anch.thresholds_, est.thresholds_, atol=1e-3)
    assert max(abs(x["displacement"]) for x in rows) < 1e-3
