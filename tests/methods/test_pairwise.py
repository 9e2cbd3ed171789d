"""OLS / TLS / RAS (de Gruijter 1984): faithful listings and corrected least squares."""

import csv
from pathlib import Path

import numpy as np
import pytest

from ratercal_cli.criteria import table_round
from ratercal_cli.errors import MethodError
from ratercal_cli.methods import make_method
from ratercal_cli.methods.pairwise import (PairwiseLeastSquares, RaschExtension,
                                           gauss_jordan_inverse_single)
from ratercal_cli.ratings import Ratings

LN9 = np.log(9.0)
RESULTS = Path(__file__).resolve().parents[1] / "results"
TABLES = Path(__file__).resolve().parents[2] / "ratercal_cli" / "data" / "denny1990"


@pytest.fixture
def tiny():
    """Hand-worked example, M = 4, raters 1..3 (rater 3 is the listing's reference "nj").

    paper 1: r1=3, r2=1   team (1,2): N=1, d = 2
    paper 2: r2=2, r3=2   team (2,3): N=1, d = 0
    paper 3: r1=4, r3=1   team (1,3): N=2, d = (3 + 2)/2 = 2.5
    paper 4: r3=0, r1=2   (listed out of order; sorted to r1, r3)
    """
    return Ratings.from_labels(papers=[1, 1, 2, 2, 3, 3, 4, 4], raters=[1, 2, 2, 3, 1, 3, 3, 1],
                               scores=[3, 1, 2, 2, 4, 1, 0, 2], max_score=4)


# -- faithful -------------------------------------------------------------------------

def test_faithful_ols_hand_example(tiny):
    # Rows (+1 both raters, rater 3 -> -1 in every column): (1,2) [1, 1]; (2,3) [1,0]-[1,1] = [-1, 0];
    # (1,3) [0, -1].  A'NA = [[2, 1], [1, 3]], A'Nd = [2, 2 - 5] = [2, -3],
    # theta = [[3, -1], [-1, 2]] / 5 @ [2, -3] = [9/5, -8/5], theta_3 = -(9/5 - 8/5) = -1/5.
    est = PairwiseLeastSquares("faithful").fit(tiny)
    assert est.teams_.tolist() == [[0, 1], [1, 2], [0, 2]]
    assert est.team_n_.tolist() == [1, 1, 2]
    np.testing.assert_allclose(est.team_d_, [2, 0, 2.5])
    np.testing.assert_allclose(est.theta_, [1.8, -1.6, -0.2], atol=1e-6)
    adj = est.transform(tiny)
    raw = tiny.score
    np.testing.assert_allclose(adj.rating, raw + np.array([1.8, -1.6, -1.6, -0.2, 1.8, -0.2, -0.2, 1.8]),
                               atol=1e-6)
    np.testing.assert_allclose(adj.paper, [(4.8 - 0.6) / 2, (0.4 + 1.8) / 2, (5.8 + 0.8) / 2, (-0.2 + 3.8) / 2],
                               atol=1e-6)


def test_faithful_tls_clips_hand_example(tiny):
    adj = PairwiseLeastSquares("faithful", truncate=True).fit_transform(tiny)
    np.testing.assert_allclose(adj.rating, [4, 0, 0.4, 1.8, 4, 0.8, 0, 3.8], atol=1e-6)
    np.testing.assert_allclose(adj.paper, [2, 1.1, 2.4, 1.9], atol=1e-6)


def test_faithful_ras_hand_example(tiny):
    # team (1,2): num = s_h (M - s_l) = 1*1, den = s_l (M - s_h) = 3*3 -> d = ln(1/9)
    # team (2,3): 2*2 / 2*2 -> 0;  team (1,3): num = 1*0 + 0*2 = 0 -> d = 0 (the listing's rule)
    # A'Nd = [-ln9, -ln9]; b = [[3, -1], [-1, 2]] / 5 @ A'Nd = ln9 [-2/5, -1/5]; b_3 = 3/5 ln9
    est = RaschExtension("faithful").fit(tiny)
    np.testing.assert_allclose(est.team_d_, [-LN9, 0, 0], atol=1e-6)
    b = LN9 * np.array([-0.4, -0.2, 0.6])
    np.testing.assert_allclose(est.b_, b, atol=1e-6)
    adj = est.transform(tiny)
    e = np.exp(b[tiny.rater])
    s = tiny.score
    np.testing.assert_allclose(adj.rating, e * s / (1 - s / 4 * (1 - e)), rtol=1e-6)


def _basic_ols_float64(papers, max_score, nj, ras=False):
    """OLS.BAS / RASCHEXT.BAS transcribed loop by loop, in float64.

    ``papers``: list of [(rater 1..nj, score), ...] in file order.
    """
    teams, d, num, den, n = [], [], [], [], []
    for ratings in papers:
        ratings = sorted(ratings, key=lambda rs: rs[0])
        for j1 in range(len(ratings) - 1):
            for j2 in range(j1 + 1, len(ratings)):
                (r1, s1), (r2, s2) = ratings[j1], ratings[j2]
                if (r1, r2) not in teams:
                    teams.append((r1, r2))
                    d.append(0.0), num.append(0.0), den.append(0.0), n.append(0)
                t = teams.index((r1, r2))
                d[t] += s1 - s2
                num[t] += s2 * (max_score - s1)
                den[t] += s1 * (max_score - s2)
                n[t] += 1
    k = len(teams)
    a = np.zeros((k, nj - 1))
    for i, (t1, t2) in enumerate(teams):
        for t in (t1, t2):
            if t < nj:
                a[i, t - 1] += 1
            else:
                a[i, :] -= 1
    if ras:
        dv = np.array([np.log(x / y) if x and y else 0.0 for x, y in zip(num, den)])
    else:
        dv = np.array(d) / np.array(n)
    big_n = np.diag(n).astype(float)
    theta = np.linalg.inv(a.T @ big_n @ a) @ (a.T @ big_n @ dv)
    return teams, np.append(theta, -theta.sum())


def _simulate(rng, n_papers, per_paper, n_raters, max_score, delta=None):
    """Binomial ratings with success probability logistic(quality - delta_rater)."""
    delta = np.linspace(-1, 1, n_raters) if delta is None else np.asarray(delta)
    rater = np.concatenate([rng.choice(n_raters, size=per_paper, replace=False) for _ in range(n_papers)])
    paper = np.repeat(np.arange(n_papers), per_paper)
    quality = rng.normal(0, 1.2, size=n_papers)
    p = 1 / (1 + np.exp(-(quality[paper] - delta[rater])))
    score = rng.binomial(max_score, p)
    return Ratings(paper, rater, score, max_score, n_papers, n_raters)


@pytest.mark.parametrize("per_paper", [2, 3])
@pytest.mark.parametrize("cls", [PairwiseLeastSquares, RaschExtension])
def test_faithful_matches_transcribed_listing(cls, per_paper):
    rng = np.random.default_rng(20 + per_paper)
    r = _simulate(rng, 100, per_paper, 9, 5)
    papers = [[(int(r.rater[i]) + 1, int(r.score[i])) for i in np.flatnonzero(r.paper == p)]
              for p in range(r.n_papers)]
    teams, expected = _basic_ols_float64(papers, 5, 9, ras=cls is RaschExtension)
    est = cls("faithful").fit(r)
    assert [tuple(t) for t in (est.teams_ + 1).tolist()] == teams
    # singles against doubles: agreement to single precision, relative to the parameters' size
    np.testing.assert_allclose(est.params_, expected, atol=2e-5 * np.abs(expected).max())


def test_faithful_singular_design_is_refused():
    # two raters: the only row is (+1 for rater 1) + (-1 for rater 2 = nj) = [0]
    r = Ratings.from_labels([1, 1, 2, 2], [1, 2, 2, 1], [3, 2, 1, 1], max_score=4)
    for cls in (PairwiseLeastSquares, RaschExtension):
        with pytest.raises(MethodError, match="singular"):
            cls("faithful").fit(r)
    # raters 1 and 3 only (rater 2 never rates): the one row is e_1 - [1, 1] = [0, -1],
    # so rater 1's column is empty, and the error says so
    r = Ratings.from_labels([1, 1, 2, 2], [1, 3, 3, 1], [3, 2, 1, 1], max_score=4, rater_ids=[1, 2, 3])
    with pytest.raises(MethodError, match=r"column for rater\(s\) 1 is all 0"):
        PairwiseLeastSquares("faithful").fit(r)


def test_gauss_jordan_single():
    rng = np.random.default_rng(5)
    x = rng.integers(-5, 6, size=(8, 8)) + 20 * np.eye(8)
    np.testing.assert_allclose(gauss_jordan_inverse_single(x), np.linalg.inv(x), atol=1e-6)
    assert gauss_jordan_inverse_single(x).dtype == np.float32
    # zero pivot: the routine swaps with the next row holding a nonzero
    np.testing.assert_array_equal(gauss_jordan_inverse_single([[0, 2], [4, 0]]), [[0, 0.25], [0.5, 0]])
    with pytest.raises(MethodError, match="no inverse"):
        gauss_jordan_inverse_single([[0, 1], [0, 1]])


def _denny_set(code):
    """A simulated set from tests/results (made by make_pairwise_fixtures.py) and its true scores."""
    obs = np.loadtxt(RESULTS / "pairwise_sets.csv", delimiter=",", skiprows=1, dtype=str)
    obs = obs[obs[:, 0] == code, 1:].astype(int)
    true = np.loadtxt(RESULTS / "pairwise_true.csv", delimiter=",", skiprows=1, dtype=str)
    true = true[true[:, 0] == code, 2].astype(float)
    r = Ratings.from_labels(obs[:, 0], obs[:, 1], obs[:, 2], max_score=int(code[2]), rater_ids=range(1, 10))
    return r, true


def _published(table, code):
    with open(TABLES / table, newline="") as fh:
        row = next(row for row in csv.DictReader(fh) if row["code"] == code)
    return {m: float(row[m]) for m in ("OLS", "TLS", "RAS")}


@pytest.mark.parametrize("code", ["0551", "2191", "3151"])
def test_faithful_reproduces_tables_7_and_12(code):
    # 0551 = 2+551 (two raters, a third on disagreement), 2191 (M = 9), 3151 (three raters).
    r, true = _denny_set(code)
    rmse, maxdiff = _published("table7_rmse.csv", code), _published("table12_maxdiff.csv", code)
    for name, est in (("OLS", PairwiseLeastSquares("faithful")), ("TLS", PairwiseLeastSquares("faithful", truncate=True)),
                      ("RAS", RaschExtension("faithful"))):
        paper = est.fit_transform(r).paper
        assert table_round(np.sqrt(np.mean((paper - true) ** 2))) == rmse[name], name
        assert table_round(np.abs(paper - true).max()) == maxdiff[name], name


def test_corrected_beats_no_equating_on_2plus551():
    # The regeneration's finding (shared/denny1990 README): with +1/-1 rows OLS, TLS, RAS
    # give RMSE 0.68, 0.67, 0.69 on 2+551, against 0.74 for no equating.
    r, true = _denny_set("0551")
    got = [table_round(np.sqrt(np.mean((make_method(c, "corrected").fit_transform(r).paper - true) ** 2)))
           for c in ("OLS", "TLS", "RAS")]
    assert got == [0.68, 0.67, 0.69]
    assert table_round(np.sqrt(np.mean((r.paper_mean() - true) ** 2))) == 0.74


def test_corrected_ras_handles_zero_sums_on_2191():
    # M = 9: six teams have a zero sum, e.g. raters (1,2) share one paper scored 9 and 6:
    # num = 6 * (9 - 9) = 0, den = 9 * (9 - 6) = 27.  Faithful sets d = 0; corrected adds
    # 1/2 to both sums, d = ln(0.5 / 27.5), and keeps every team.
    r, _ = _denny_set("2191")
    faithful = RaschExtension("faithful").fit(r)
    est = RaschExtension("corrected").fit(r)
    assert est.teams_.tolist() == faithful.teams_.tolist()
    t12 = est.teams_.tolist().index([0, 1])
    assert est.team_n_[t12] == 1 and faithful.team_d_[t12] == 0
    np.testing.assert_allclose(est.team_d_[t12], np.log(0.5 / 27.5), rtol=1e-12)
    assert int((faithful.team_d_ == 0).sum()) >= 6
    assert np.isfinite(est.b_).all() and abs(est.b_.sum()) < 1e-12
    # Table 3: raters 1-3 lenient, 7-9 stringent
    assert est.b_[:3].mean() < est.b_[3:6].mean() < est.b_[6:].mean()
    assert np.isfinite(est.transform(r).rating).all()


# -- corrected ------------------------------------------------------------------------

def test_corrected_ols_hand_example(tiny):
    # Rows (1,2) [1,-1,0] w1 d2; (2,3) [0,1,-1] w1 d0; (1,3) [1,0,-1] w2 d2.5, sum theta = 0:
    # 3 t2 = -2 -> t2 = -2/3; 5 t1 = 23/3 -> t1 = 23/15; t3 = -13/15.
    est = PairwiseLeastSquares("corrected").fit(tiny)
    theta = np.array([23, -10, -13]) / 15
    np.testing.assert_allclose(est.theta_, theta, atol=1e-12)
    adj = est.transform(tiny)
    np.testing.assert_allclose(adj.rating, tiny.score - theta[tiny.rater], atol=1e-12)


def _dummy_ols(r):
    """score ~ paper + rater, dummy-coded, rater effects sum to zero (effect coding), lstsq."""
    active = np.flatnonzero(np.bincount(r.rater, minlength=r.n_raters) > 0)
    col = {j: i for i, j in enumerate(active)}
    k = active.size
    x = np.zeros((r.n_ratings, r.n_papers + k - 1))
    x[np.arange(r.n_ratings), r.paper] = 1
    for i, j in enumerate(r.rater):
        c = col[j]
        if c < k - 1:
            x[i, r.n_papers + c] = 1
        else:
            x[i, r.n_papers:] = -1
    coef = np.linalg.lstsq(x, r.score.astype(float), rcond=None)[0]
    eff = coef[r.n_papers:]
    theta = np.zeros(r.n_raters)
    theta[active] = np.append(eff, -eff.sum())
    return theta


@pytest.mark.parametrize("per_paper", [2, 3])
def test_corrected_ols_equals_dummy_regression(per_paper):
    # With the same number of raters on every paper the pairwise sum of squares is
    # per_paper times the within-paper residual sum of squares, so the minimisers agree.
    rng = np.random.default_rng(7 + per_paper)
    r = _simulate(rng, 80, per_paper, 6, 9)
    theta = _dummy_ols(r)
    est = PairwiseLeastSquares("corrected").fit(r)
    np.testing.assert_allclose(est.theta_, theta, atol=1e-10)
    adj = est.transform(r)
    np.testing.assert_allclose(adj.rating, r.score - theta[r.rater], atol=1e-10)
    assert abs(est.theta_.sum()) < 1e-12


def test_corrected_sum_to_zero_skips_raters_without_ratings():
    rng = np.random.default_rng(8)
    r = _simulate(rng, 60, 2, 5, 6)
    r7 = Ratings(r.paper, r.rater, r.score, r.max_score, r.n_papers, 7)  # raters 6, 7 never rate
    est = PairwiseLeastSquares("corrected").fit(r7)
    np.testing.assert_allclose(est.theta_[:5], _dummy_ols(r)[:5], atol=1e-10)
    assert est.theta_[5:].tolist() == [0, 0]
    assert est.fitted_.tolist() == [True] * 5 + [False] * 2
    other = Ratings([0, 0], [0, 6], [1, 2], 6, 1, 7)
    with pytest.raises(MethodError, match=r"no parameters for rater\(s\) 7"):
        est.transform(other)


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
def test_tls_stays_on_scale(variant):
    rng = np.random.default_rng(4)
    r = _simulate(rng, 100, 2, 9, 5, delta=np.linspace(-3, 3, 9))
    ols = PairwiseLeastSquares(variant).fit_transform(r).rating
    assert ols.min() < 0 or ols.max() > 5  # the unclipped method leaves the scale here
    tls = PairwiseLeastSquares(variant, truncate=True).fit_transform(r)
    assert tls.rating.min() >= 0 and tls.rating.max() <= 5
    np.testing.assert_allclose(tls.rating, np.clip(ols, 0, 5), atol=1e-12)
    assert tls.paper.min() >= 0 and tls.paper.max() <= 5


def test_corrected_ras_hand_example(tiny):
    # team (1,3) has num = 0: Haldane-Anscombe, d = ln(0.5 / 20.5) = -ln 41.  Same Laplacian as
    # the OLS example, right side [-ln9 - 2 ln41, ln9, 2 ln41]; with sum 0:
    # b2 = ln9/3, b1 = -(4/15) ln9 - (2/5) ln41, b3 = -(1/15) ln9 + (2/5) ln41.
    est = RaschExtension("corrected").fit(tiny)
    ln41 = np.log(41.0)
    np.testing.assert_allclose(est.team_d_, [-LN9, 0, -ln41], atol=1e-12)
    b = [-4 / 15 * LN9 - 0.4 * ln41, LN9 / 3, -LN9 / 15 + 0.4 * ln41]
    np.testing.assert_allclose(est.b_, b, atol=1e-12)


def _expected_score(quality, b, m):
    """Rasch extension (dissertation p. 15): E s = M exp(beta - b) / (1 + exp(beta - b))."""
    return m / (1 + np.exp(-(quality - b)))


def test_corrected_ras_adjusted_score_solves_expected_score_equation():
    rng = np.random.default_rng(12)
    m = 6
    r = _simulate(rng, 150, 3, 7, m)
    est = RaschExtension("corrected").fit(r)
    adj = est.transform(r).rating
    s = r.score
    b = est.b_[r.rater]
    inner = (s > 0) & (s < m)
    # adj is the average rater's (b = 0) expected score at the quality beta where rater r's
    # expected score is s: beta = logit(adj / M) and E(s | beta, b_r) = s.
    beta = np.log(adj[inner] / (m - adj[inner]))
    np.testing.assert_allclose(_expected_score(beta, b[inner], m), s[inner], rtol=1e-12)
    np.testing.assert_allclose(_expected_score(beta, 0.0, m), adj[inner], rtol=1e-12)
    assert (adj[s == 0] == 0).all() and np.allclose(adj[s == m], m)
    # stringent raters (b > 0) are adjusted upwards, lenient ones downwards
    assert (adj[inner & (b > 0)] > s[inner & (b > 0)]).all()
    assert (adj[inner & (b < 0)] < s[inner & (b < 0)]).all()


def test_corrected_ras_recovers_generating_stringency():
    # For binomial scores with p = logistic(beta - delta) every paper's
    # E[s_h (M - s_l)] / E[s_l (M - s_h)] = exp(delta_l - delta_h), so b -> delta - mean(delta).
    rng = np.random.default_rng(13)
    delta = np.array([-1.0, -0.4, 0.0, 0.3, 1.1])
    r = _simulate(rng, 6000, 2, 5, 8, delta=delta)
    est = RaschExtension("corrected").fit(r)
    np.testing.assert_allclose(est.b_, delta - delta.mean(), atol=0.06)


# -- refusals -------------------------------------------------------------------------

@pytest.mark.parametrize("code", ["OLS", "TLS", "RAS"])
@pytest.mark.parametrize("variant", ["faithful", "corrected"])
def test_one_rater_data_refused(code, variant):
    r = Ratings.from_labels([1, 2, 3, 4], [1, 2, 3, 1], [2, 3, 1, 0], max_score=4)
    with pytest.raises(MethodError, match="at least two raters"):
        make_method(code, variant).fit(r)


@pytest.mark.parametrize("code", ["OLS", "RAS"])
def test_corrected_names_disconnected_raters(code):
    # raters A, B, C linked by papers 1-3; D and E only score papers together (4, 5)
    r = Ratings.from_labels(papers=[1, 1, 2, 2, 3, 3, 4, 4, 5, 5],
                            raters=["A", "B", "B", "C", "A", "C", "D", "E", "E", "D"],
                            scores=[2, 3, 1, 2, 3, 3, 2, 1, 3, 2], max_score=4)
    with pytest.raises(MethodError, match=rf"{code}: raters D, E not linked .* raters A, B, C"):
        make_method(code, "corrected").fit(r)


def test_registry_builds_pairwise_classes():
    tls = make_method("tls", "corrected")
    assert isinstance(tls, PairwiseLeastSquares) and tls.truncate and tls.variant == "corrected"
    assert tls.code == "TLS" and make_method("OLS").code == "OLS"
    assert isinstance(make_method("RAS"), RaschExtension)
    assert tls.get_params() == {"variant": "corrected", "truncate": True}
