"""Category statistics (Facets Table 8) against their definitions, computed rating by rating."""

import numpy as np
import pytest

from ratercal_cli.practice.categories import category_statistics

KAPPA = np.array([-2.0, -0.5, 0.7, 1.8])   # Rasch-Andrich thresholds of a 0-4 scale


def probs(m, kappa):
    tau = np.r_[0.0, np.cumsum(kappa)]
    eta = np.arange(tau.size) * m[:, None] - tau[None, :]
    p = np.exp(eta - eta.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def draw(rng, m, kappa):
    P = probs(m, kappa)
    return (rng.random(m.size)[:, None] > np.cumsum(P, axis=1)).sum(axis=1), P


def test_against_definitions_one_rating_at_a_time():
    rng = np.random.default_rng(3)
    m = rng.normal(0, 1.5, 40)
    x, P = draw(rng, m, KAPPA)
    t = category_statistics(x, m, P, KAPPA, [0.1, 0.2, 0.3, 0.4], low=1, label="all raters")
    for k in range(5):
        idx = [i for i in range(40) if x[i] == k]
        assert t.categories[k] == k + 1 and t.count[k] == len(idx)
        assert t.percent[k] == pytest.approx(100 * len(idx) / 40)
        if idx:
            assert t.average_measure[k] == pytest.approx(sum(m[i] for i in idx) / len(idx))
            # Winsteps' category outfit (Help, "Category mean-square fit statistics"):
            # [sum (k-Eni)^2/Wni for all Xni=k] / [sum Pnik (k-Eni)^2/Wni for all Xni]
            observed, expected = 0.0, 0.0
            for i in range(40):
                E = sum(h * P[i, h] for h in range(5))
                W = sum((h - E) ** 2 * P[i, h] for h in range(5))
                expected += P[i, k] * (k - E) ** 2 / W
                if x[i] == k:
                    observed += (k - E) ** 2 / W
            assert t.outfit[k] == pytest.approx(observed / expected)
        assert t.expected_measure[k] == pytest.approx(sum(P[i, k] * m[i] for i in range(40)) / sum(P[:, k]))
    assert np.isnan(t.threshold[0]) and list(t.threshold[1:]) == list(KAPPA) and t.threshold_se[2] == 0.2
    d = t.to_dict()
    assert d["category"] == [1, 2, 3, 4, 5] and d["threshold"][0] is None
    assert t.format_text()[0] == "Category statistics (Facets Table 8): all raters"


def test_model_data_behave_and_disorder_is_flagged():
    rng = np.random.default_rng(5)
    m = rng.normal(0, 2.0, 20000)
    x, P = draw(rng, m, KAPPA)
    t = category_statistics(x, m, P, KAPPA)
    assert t.warnings == []
    assert np.all(np.diff(t.average_measure) > 0)
    # data from the model: every category's outfit near its expected value, 1 (the mean of z^2 over a
    # category's ratings, the denominator before, gave 1.11, 0.93, 1.01, 1.05, 0.97 here)
    assert t.outfit == pytest.approx(np.ones(5), abs=0.06)
    assert t.average_measure == pytest.approx(t.expected_measure, abs=0.05)
    bad = category_statistics(x, m, P, np.array([-2.0, 0.9, 0.7, 1.8]))
    assert any("disordered thresholds: the threshold into 3 (0.70) not above 2 (0.90)" in w for w in bad.warnings)
    few = category_statistics(x[:30], m[:30], P[:30], KAPPA)
    assert any("fewer than 10 ratings" in w for w in few.warnings)
    rev = category_statistics(4 - x, m, P, KAPPA)   # categories used backwards
    assert any("average measures do not rise" in w for w in rev.warnings)


def test_dichotomy_against_winsteps_special_case():
    """Winsteps' Help gives the dichotomy's category outfit in closed form (P the probability of a 1):
    category 0: sum_{x=0} P/(1-P) / sum_all P; category 1: sum_{x=1} (1-P)/P / sum_all (1-P).  Checked
    on numbers small enough to do by hand: three ratings at P = 0.2, 0.5, 0.8 scored 0, 1, 1."""
    P1 = np.array([0.2, 0.5, 0.8])
    x = np.array([0, 1, 1])
    t = category_statistics(x, np.log(P1 / (1 - P1)), np.column_stack([1 - P1, P1]), [0.0])
    assert t.outfit[0] == pytest.approx((0.2 / 0.8) / 1.5)                  # 0.25 / 1.5 = 0.1667
    assert t.outfit[1] == pytest.approx((0.5 / 0.5 + 0.2 / 0.8) / 1.5)      # 1.25 / 1.5 = 0.8333


def test_nine_categories_from_the_model():
    """On 1-9 the old per-category mean of z^2 gave 1.27 and 1.30 at the ends here, on data that fit at
    the true measures; the category outfit stays near 1 in every category."""
    rng = np.random.default_rng(11)
    kappa = np.linspace(-3.0, 3.0, 8)
    m = rng.normal(0, 2.0, 40000)
    x, P = draw(rng, m, kappa)
    t = category_statistics(x, m, P, kappa, low=1)
    assert t.outfit == pytest.approx(np.ones(9), abs=0.1)


@pytest.mark.slow
def test_model_tables_from_a_fitted_mfrm():
    """From a fitted MFRM's pieces: the rating's measure is its paper's measure less its rater's severity
    and its level's difficulty, the thresholds are the fit's."""
    from ratercal_cli.methods import make_method
    from ratercal_cli.models.pcm import sample_scores
    from ratercal_cli.practice.categories import model_category_tables
    from ratercal_cli.ratings import Ratings

    rng = np.random.default_rng(2)
    n, J = 300, 6
    sev = np.linspace(-0.5, 0.5, J)
    theta = rng.normal(0, 1.5, n)
    raters = np.argsort(rng.random((n, J)), axis=1)[:, :2]
    task = rng.integers(0, 2, n)
    gam = np.array([-0.3, 0.3])
    s = sample_scores(rng, theta[:, None], (sev[raters] + gam[task][:, None])[..., None] + KAPPA)
    r = Ratings(np.repeat(np.arange(n), 2), raters.ravel(), s.ravel(), 4, n, J)
    facet = np.repeat(task, 2)
    est = make_method("MFRM").fit(r, facet=facet)
    item = est._item_of(r, facet)
    th = est.quality_wle_[r.paper]
    (t,) = model_category_tables(r.score, th, est.result_.item_tau[item], est.thresholds_, est.thresholds_se_,
                                 mask=est.extreme_[r.paper] == 0)
    m = th - est.severity_[r.rater] - est.facet_[facet]
    use = est.extreme_[r.paper] == 0
    k = r.score[use] == 2
    assert t.average_measure[2] == pytest.approx(m[use][k].mean(), abs=1e-9)
    assert t.count.sum() == use.sum() and list(t.threshold[1:]) == pytest.approx(list(est.thresholds_))
    assert np.all(np.diff(t.average_measure) > 0) and not any("disordered" in w for w in t.warnings)


@pytest.mark.slow
def test_table8_of_a_fitted_rubric_from_the_model(tmp_path):
    """Table 8 of check on a rubric drawn from the many-facet model (8 ratings a student, measures fitted):
    the old per-category mean of z^2 gave 1.73 / 0.93 / 0.62 / 0.66 / 0.90 / 1.66 on 1-6 and 1.84 and
    2.02 at the ends of 1-9 (false alarms by Linacre's 'above 1.5' reading); the category outfit gives
    0.77-0.95 and 0.73-0.95 (below 1 by about the share of each student's ratings its fitted measure
    absorbs, 1/8)."""
    import csv
    import warnings

    from ratercal_cli.generators.rubric import simulate_rubric
    from ratercal_cli.practice.ratings_file import read_ratings
    from ratercal_cli.practice.rubric import rubric_check

    for scale, thr in (("1-6", (-2.4, -1.2, 0.0, 1.2, 2.4)), ("1-9", tuple(np.linspace(-3, 3, 8)))):
        rub = simulate_rubric(seed=4, n_papers=600, n_raters=8, thresholds=thr)
        with open(tmp_path / "r.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(rub.header)
            w.writerows(rub.rows)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = read_ratings(tmp_path / "r.csv", scale=scale, score_cols=",".join(rub.criteria))
        out = rubric_check(r).categories[0].outfit
        assert np.all((out > 0.7) & (out < 1.1)), (scale, out)
