"""On data drawn from the model (the many-facet rating scale model: paper + rater + criterion,
shared thresholds), the fitted rater severities and Table 8's category outfits are near their truth
(issue 28): severities within 4 S.E. (+0.05) of the generating ones (centred), and the category
outfit mean squares, whose expectation is 1 (Linacre's denominator): each category of 50+ ratings
within 0.5-2 (the old mean of z^2 gave 1.95 and 5.57 on such data) and their count-weighted mean
within 0.7-1.25: a little below 1, because a paper's measure is estimated from its own 9-12
ratings, which shrinks its residuals (with 4 ratings a paper category outfits of 0.5 were seen)."""

import tempfile
import warnings
from pathlib import Path

import numpy as np
from hypothesis import given, strategies as st

import ratercal_cli as rc

from designs import Design, write_csv


@st.composite
def model_designs(draw):
    low = draw(st.sampled_from([0, 1]))
    return Design(n_papers=draw(st.integers(100, 180)), n_raters=draw(st.integers(4, 8)), per_paper=3,
                  double_share=0.0, third=False, groups=1, criteria=draw(st.sampled_from([3, 4])), low=low,
                  high=low + draw(st.integers(2, 5)), seed=draw(st.integers(0, 2**31)),
                  severity_sd=draw(st.sampled_from([0.3, 0.7, 1.2])))


@given(design=model_designs())
def test_severities_and_category_outfits_near_truth(design):
    rows = design.rows()
    truth = np.random.default_rng(design.seed).normal(0, design.severity_sd, design.n_raters)   # rows()'s first draw
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = rc.read_ratings(write_csv(rows, design.columns(), Path(tmp) / "r.csv"), scale=design.scale,
                            facet_cols=["criterion"])
    from ratercal_cli.practice.anchors import fit_mfrm
    from ratercal_cli.practice.categories import model_category_tables
    from ratercal_cli.practice.rubric import facet_levels_matrix

    est = fit_mfrm(r)[0]                 # the many-facet MFRM of check and adjust
    names = design.names()
    seen = [j for j in range(design.n_raters) if names[j] in r.rater_ids]
    fitted = np.array([est.severity_[r.rater_ids.index(names[j])] for j in seen])
    true = truth[seen]
    err = (fitted - fitted.mean()) - (true - true.mean())
    se = np.array([est.severity_se_[r.rater_ids.index(names[j])] for j in seen])
    assert np.all(np.abs(err) < 4 * se + 0.05), (err, se, design)
    # Table 8 as check prints it (rubric.rubric_check, without its bias tables)
    item = est._item_of(r, facet_levels_matrix(r))
    table = model_category_tables(r.score, est.quality_wle_[r.paper], est.result_.item_tau[item], est.thresholds_,
                                  est.thresholds_se_, low=r.scale_low, mask=est.extreme_[r.paper] == 0)[0]
    count, outfit = np.asarray(table.count), np.asarray(table.outfit)
    big = count >= 50
    assert np.all((outfit[big] > 0.5) & (outfit[big] < 2.0)), (outfit, count, design)
    mean = np.average(outfit[count > 0], weights=count[count > 0])
    assert 0.7 < mean < 1.25, (mean, outfit, count, design)
