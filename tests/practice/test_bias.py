"""Rater x facet bias tables (Facets Tables 13/14) from the joint marginal-ML fit."""

import numpy as np
import pytest
from scipy import optimize

from ratercal_cli.methods.mml import marginal_loglik
from ratercal_cli.models.pcm import sample_scores
from ratercal_cli.practice.bias import T_FLAG, bias_table
from ratercal_cli.ratings import Ratings


def small(seed=4, J=4, F=2, M=2, n=80):
    """Two raters of four per paper, each scoring both levels; rater 2 harsher in level a, kinder in b."""
    rng = np.random.default_rng(seed)
    sev = np.array([-0.5, 0.0, 0.2, 0.3])
    crit = np.array([-0.2, 0.2])
    kap = np.array([-0.8, 0.8])
    bias = np.zeros((J, F))
    bias[1] = [0.8, -0.8]
    theta = rng.normal(0.2, 1.0, n)
    P, R, L, S = [], [], [], []
    for p in range(n):
        for j in rng.permutation(J)[:2]:
            s = sample_scores(rng, np.full(F, theta[p]), (sev[j] + crit + bias[j])[:, None] + kap[None, :])
            P += [p] * F
            R += [j] * F
            L += list(range(F))
            S += list(s)
    return Ratings(np.array(P), np.array(R), np.array(S), M, n, J, rater_ids=("A", "B", "C", "D")), np.array(L)


def _fd_hessian(f, x, h=1e-4):
    """The Hessian of ``f`` at ``x`` by central differences (step ``h``)."""
    P = x.size
    H = np.zeros((P, P))
    for a in range(P):
        for b in range(a, P):
            e_a, e_b = np.eye(P)[a] * h, np.eye(P)[b] * h
            H[a, b] = H[b, a] = (f(x + e_a + e_b) - f(x + e_a - e_b) - f(x - e_a + e_b) + f(x - e_a - e_b)) / (4 * h * h)
    return H


def test_table_pieces():
    r, lev = small()
    bt = bias_table(r, lev, ("a", "b"), "criterion", main_expected=np.full(r.n_ratings, 1.0), scale_low=1)
    assert bt.fit.converged and len(bt.rows) == 8
    bias = np.array([x["bias"] for x in bt.rows]).reshape(4, 2)
    # a complete rater x level design: the interaction sums to zero over raters and over levels
    np.testing.assert_allclose(bias.sum(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(bias.sum(axis=1), 0, atol=1e-9)
    b = bt.rows[2]
    assert (b["rater"], b["level"]) == ("B", "a") and b["bias"] > 0 and abs(b["t"]) >= T_FLAG
    assert b["bias_points"] < 0    # harsher there: lower expected scores
    cnt = int(((r.rater == 1) & (lev == 0)).sum())
    assert b["count"] == cnt and b["df"] == cnt - 1
    obs = r.score[(r.rater == 1) & (lev == 0)]
    assert b["observed_average"] == pytest.approx(obs.mean() + 1)
    assert b["obs_minus_exp"] == pytest.approx(obs.mean() - 1.0)
    assert b in bt.flagged
    # pairs: 6 per level; the contrast is the two raters' cell locations' difference
    assert len(bt.pairs) == 12
    loc = {(x["rater"], x["level"]): x for x in bt.rows}
    pab = next(p for p in bt.pairs if (p["level"], p["rater_a"], p["rater_b"]) == ("a", "A", "B"))
    assert pab["contrast"] < 0 and pab["se"] > 0
    text = "\n".join(bt.format_text())
    assert "Rater x criterion bias/interaction" in text and "Table 14" in text
    assert bt.to_dict()["flagged"] == len(bt.flagged)
    assert loc


@pytest.mark.slow
def test_bias_is_the_joint_fits_interaction_by_brute_force():
    """The definition by brute force: maximise the marginal likelihood of
    l[j, f] = a[j] + b[f] + i[j, f] (b and i summing to zero) with scipy over every parameter at once,
    the likelihood from :func:`marginal_loglik` (items = cells); SEs from a finite-difference Hessian."""
    r, lev = small()
    J, F, M = 4, 2, 2
    bt = bias_table(r, lev, ("a", "b"), "criterion", step_sd=1e6, location_sd=1e6, n_nodes=41)  # priors off
    cells = Ratings(r.paper, r.rater * F + lev, r.score, M, r.n_papers, J * F)

    def unpack(q):
        inter = np.zeros((J, F))
        inter[:3, 0] = q[J + 1:J + 4]
        inter[3, 0] = -q[J + 1:J + 4].sum()
        inter[:, 1] = -inter[:, 0]
        loc = (q[:J, None] + np.array([q[J], -q[J]])[None, :] + inter).ravel()
        tau = np.arange(M + 1)[None, :] * loc[:, None] + np.r_[0.0, q[J + 4], 0.0][None, :]
        return tau, q[J + 5], inter

    def nll(q):
        tau, ls, _ = unpack(q)
        return -marginal_loglik(cells, tau, np.exp(ls), n_nodes=41)

    res = optimize.minimize(nll, np.zeros(J + 6), method="BFGS", options=dict(gtol=1e-7))
    got = np.array([x["bias"] for x in bt.rows])
    np.testing.assert_allclose(got, unpack(res.x)[2].ravel(), atol=2e-5)
    assert bt.fit.loglik == pytest.approx(-res.fun, abs=1e-6)
    # SEs: inverse finite-difference Hessian, mapped to the interactions i[j, 0] (i[j, 1] = -i[j, 0])
    H = _fd_hessian(nll, res.x)
    V = np.linalg.inv(H)
    G = np.zeros((J, res.x.size))
    G[:3, J + 1:J + 4] = np.eye(3)
    G[3, J + 1:J + 4] = -1.0
    se = np.sqrt(np.diag(G @ V @ G.T))
    np.testing.assert_allclose([x["se"] for x in bt.rows][::2], se, rtol=2e-3)


def three_levels(seed=11, n=300):
    """Four raters, two a paper, each scoring three levels; rater B 1.2 logits harsher in level a only."""
    rng = np.random.default_rng(seed)
    sev = np.array([-0.4, 0.0, 0.1, 0.3])
    crit = np.array([-0.2, 0.0, 0.2])
    kap = np.array([-0.8, 0.8])
    bias = np.zeros((4, 3))
    bias[1, 0] = 1.2
    theta = rng.normal(0.0, 1.0, n)
    P, R, L, S = [], [], [], []
    for p in range(n):
        for j in rng.permutation(4)[:2]:
            s = sample_scores(rng, np.full(3, theta[p]), (sev[j] + crit + bias[j])[:, None] + kap[None, :])
            P += [p] * 3
            R += [j] * 3
            L += [0, 1, 2]
            S += list(s)
    return Ratings(np.array(P), np.array(R), np.array(S), 2, n, 4, rater_ids=("A", "B", "C", "D")), np.array(L)


@pytest.mark.slow
def test_purified_bias_is_the_contrast_with_the_reference_cells_by_brute_force():
    """Purification by brute force: the cells' locations l (one free per rater x level) and their
    covariance from scipy's maximum of the marginal likelihood and a finite-difference Hessian; the
    main effects then fitted by least squares (lstsq) to the cells the table kept as reference, every
    cell's bias its location less them; the S.E.s that linear map of the covariance."""
    r, lev = three_levels()
    J, F, M = 4, 3, 2
    bt = bias_table(r, lev, ("a", "b", "c"), "criterion", step_sd=1e6, location_sd=1e6, n_nodes=41)
    assert bt.purified == [("B", "a")]
    ref = np.array([x["reference"] for x in bt.rows])
    assert ref.sum() == J * F - 1
    cells = Ratings(r.paper, r.rater * F + lev, r.score, M, r.n_papers, J * F)

    def nll(q):
        tau = np.arange(M + 1)[None, :] * q[:J * F, None] + np.r_[0.0, q[J * F], 0.0][None, :]
        return -marginal_loglik(cells, tau, np.exp(q[J * F + 1]), n_nodes=41)

    res = optimize.minimize(nll, np.zeros(J * F + 2), method="BFGS", options=dict(gtol=1e-7))
    assert bt.fit.loglik == pytest.approx(-res.fun, abs=1e-6)
    X = np.zeros((J * F, J + F))
    X[np.arange(J * F), np.repeat(np.arange(J), F)] = 1.0
    X[np.arange(J * F), J + np.tile(np.arange(F), J)] = 1.0
    # the linear map l -> bias: each unit vector's location less the main effects fitted to the reference cells
    G = np.column_stack([e - X @ np.linalg.lstsq(X[ref], e[ref], rcond=None)[0] for e in np.eye(J * F)])
    np.testing.assert_allclose([x["bias"] for x in bt.rows], G @ res.x[:J * F], atol=2e-5)
    assert bt.rows[3]["bias"] == pytest.approx(1.2, abs=0.35)          # B in a, measured whole
    H = _fd_hessian(nll, res.x)
    V = np.linalg.inv(H)[:J * F, :J * F]
    np.testing.assert_allclose([x["se"] for x in bt.rows], np.sqrt(np.diag(G @ V @ G.T)), rtol=2e-3)
    # without purification the same fit's sum-to-zero interaction
    plain = bias_table(r, lev, ("a", "b", "c"), "criterion", step_sd=1e6, location_sd=1e6, n_nodes=41,
                       purify=False)
    G0 = np.eye(J * F) - X @ np.linalg.pinv(X)
    np.testing.assert_allclose([x["bias"] for x in plain.rows], G0 @ res.x[:J * F], atol=2e-5)


@pytest.mark.slow
def test_planted_rubric_biases_are_flagged():
    """The issue's rubric: 500 papers, 12 raters (2 a paper), 4 criteria, 1-6; rater R3 1 logit harsher
    on org, R8 1 logit kinder on sent_form.  Both are flagged and significant after Holm."""
    from ratercal_cli.generators.rubric import simulate_rubric

    bias = np.zeros((12, 4))
    bias[2, 1], bias[7, 3] = 1.0, -1.0
    rub = simulate_rubric(seed=1, bias=bias)
    rows = rub.rows
    papers = {p: k for k, p in enumerate(dict.fromkeys(r[0] for r in rows))}
    P = np.repeat([papers[r[0]] for r in rows], 4)
    R = np.repeat([int(r[1][1:]) - 1 for r in rows], 4)
    S = np.array([int(x) - 1 for r in rows for x in r[2:]])
    lev = np.tile(np.arange(4), len(rows))
    r = Ratings(P, R, S, 5, len(papers), 12, rater_ids=tuple(rub.raters))
    bt = bias_table(r, lev, tuple(rub.criteria), "criterion")
    sig = {(x["rater"], x["level"]): x for x in bt.significant}
    # purified: the two planted cells and no other, each measured against the other cells' main effects
    assert set(sig) == {("R3", "org"), ("R8", "sent_form")} == set(bt.purified)
    assert sig[("R3", "org")]["bias"] == pytest.approx(1.0, abs=0.3) and not sig[("R3", "org")]["reference"]
    assert sig[("R8", "sent_form")]["bias"] == pytest.approx(-1.0, abs=0.3)
    # sum to zero, the planted 1 logit is shared out over the rater's row and the criterion's column:
    # (1 - 1/4)(1 - 1/12) = 0.69 in the cell itself, -(1/4)(1 - 1/12) = -0.23 in the rater's other cells
    plain = bias_table(r, lev, tuple(rub.criteria), "criterion", purify=False)
    cell = {(x["rater"], x["level"]): x for x in plain.rows}
    assert plain.purified == [] and all(x["reference"] for x in plain.rows)
    assert cell[("R3", "org")]["bias"] == pytest.approx(0.69, abs=0.3)
    assert np.mean([cell[("R3", c)]["bias"] for c in ("style", "conv", "sent_form")]) == pytest.approx(-0.23, abs=0.1)
    # the fit is the same; only the cells the main effects are fitted to differ
    assert plain.fit.loglik == bt.fit.loglik and plain.pairs == bt.pairs


@pytest.mark.slow
def test_check_adds_the_joint_rater_by_group_table():
    from pathlib import Path

    from ratercal_cli.practice.check import check
    from ratercal_cli.practice.ratings_file import read_ratings

    root = Path(__file__).resolve().parents[2]
    with pytest.warns(UserWarning):
        r = read_ratings(root / "examples" / "ratings.csv", scale="0-5", group_col="grade")
    res = check(r)
    gi = res.group_interaction
    assert gi is not None and gi.facet == "grade" and len(gi.rows) == 30
    b = np.array([x["bias"] for x in gi.rows]).reshape(10, 3)   # every rater in every grade
    np.testing.assert_allclose(b.sum(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(b.sum(axis=1), 0, atol=1e-9)
    assert all(np.isfinite(x["obs_minus_exp"]) for x in gi.rows)
    assert "group_interaction" in res.to_dict() and "joint MFRM by marginal ML" in res.summary()


def test_a_rater_seen_in_one_level_has_no_t_or_p():
    """A rater who scores one criterion only (a third reader on one criterion) has an interaction
    that is 0 by definition: the table must not give it a t or p made of rounding noise (which could
    pass |t| >= 2 and be flagged) nor count it among Holm's tests."""
    r, lev = small()
    n = 30
    extra = Ratings(np.r_[r.paper, np.arange(n)], np.r_[r.rater, np.full(n, 4)],
                    np.r_[r.score, np.tile([0, 1, 2], n // 3)], r.max_score, r.n_papers, 5,
                    rater_ids=("A", "B", "C", "D", "E"))
    bt = bias_table(extra, np.r_[lev, np.zeros(n, int)], ("a", "b"), "criterion")
    e = next(x for x in bt.rows if x["rater"] == "E")
    assert e["bias"] == 0.0
    assert np.isnan(e["se"]) and np.isnan(e["t"]) and np.isnan(e["p"]) and np.isnan(e["p_holm"])
    assert e not in bt.flagged
    # the other raters' Holm p counts 8 tests, not 9
    ps = np.array([x["p"] for x in bt.rows if x["rater"] != "E"])
    smallest = min(x["p_holm"] for x in bt.rows if x["rater"] != "E")
    assert smallest == pytest.approx(min(1.0, 8 * ps.min()))
    assert any("one criterion only" in note and "E" in note for note in bt.notes)
