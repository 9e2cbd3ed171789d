"""PCM (PCM.BAS / PAIR): faithful against literal loop ports of the BASIC, corrected
against simulated truth and the likelihood equations computed another way."""


import numpy as np
import pytest

from ratercal_cli.errors import MethodError
from ratercal_cli.methods import make_method
from ratercal_cli.methods.pcm import (
    PartialCreditModel,
    faithful_expected,
    faithful_pair,
    faithful_quality,
    ml_quality,
    padded_by_paper,
    pair_counts,
    step_pair_matrices,
)
from ratercal_cli.models.pcm import expected_score, sample_scores, score_variance
from ratercal_cli.ratings import Ratings

F32 = np.float32


# ---------------------------------------------------------------------------------
# literal ports of PCM.BAS (one float32 operation at a time, BASIC loop order)
# ---------------------------------------------------------------------------------
def basic_counts(papers, nj, mp):
    """``FOR j1 = 1 TO mj: FOR j2 = 1 TO mj: nk%(a, b, c, d) = nk%(a, b, c, d) + 1``."""
    nk = np.zeros((nj, mp + 1, nj, mp + 1), dtype=int)
    for ratings in papers:
        for a, b in ratings:
            for c, d in ratings:
                nk[a, b, c, d] += 1
    return nk


def basic_pair(nk, nj, mp, eps=F32(0.002), max_it=50):
    d = [[F32(0)] * (mp + 1) for _ in range(nj)]
    dt = [[F32(0)] * (mp + 1) for _ in range(nj)]
    v = 0
    while True:
        for i in range(nj):
            for x in range(1, mp + 1):
                w = x - 1
                f, f1 = F32(0), F32(0.01)
                for j in range(nj):
                    for z in range(1, mp + 1):
                        y = z - 1
                        n1, n2 = F32(nk[i, w, j, z]), F32(nk[i, x, j, y])
                        bign = n1 + n2
                        pi = F32(1) / (F32(1) + np.exp(d[i][x] - d[j][z]))
                        f = f + bign * pi - n2
                        f1 = f1 + bign * pi * (F32(1) - pi)
                a = d[i][x] + f / f1
                dt[i][x] = F32(-15) if a < -15 else F32(15) if a > 15 else a
        mx = F32(0)
        for i in range(nj):
            for x in range(1, mp + 1):
                dif = abs(dt[i][x] - d[i][x])
                if dif > mx:
                    mx = dif
                d[i][x] = dt[i][x]
        v += 1
        if mx < eps or v == max_it:
            break
    return np.array([row[1:] for row in d], dtype=F32), v


def basic_e(u, drow, mp, big=F32(np.exp(20.0))):
    e = [F32(1)] + [F32(0)] * mp
    for j in range(1, mp + 1):
        e[j] = e[j - 1] * np.exp(u - drow[j - 1])
        if e[j] > big:
            for L in range(j + 1):
                e[L] = e[L] / big
    t = F32(0)
    for L in range(mp + 1):
        t = t + e[L]
    return e, t


def basic_quality(d, ratings, mp, eps=F32(0.002)):
    cen, dl = F32(0), F32(5)
    while True:
        u, p = [], []
        for i in range(3):
            u.append(cen + F32(i - 1) * dl)
            pi = F32(1)
            for r, s in ratings:
                e, t = basic_e(u[i], d[r], mp)
                pi = pi * e[s] / t
            p.append(pi)
        if abs(cen) > 14:
            break
        if p[0] < p[1] and p[1] < p[2]:
            cen = u[2]
        elif p[0] > p[1] and p[1] > p[2]:
            cen = u[0]
        else:
            dl = dl / F32(2)
        if dl < eps / F32(2):
            break
    return cen


def basic_expected(d, cen, nj, mp):
    sc, ave = [], F32(0)
    for i in range(nj):
        e, t = basic_e(cen, d[i], mp)
        s = F32(0)
        for L in range(1, mp + 1):
            s = s + e[L] / t * F32(L)
        sc.append(s)
        ave = ave + s
    return np.array(sc, dtype=F32), ave / F32(nj)


# ---------------------------------------------------------------------------------
# data helpers
# ---------------------------------------------------------------------------------
def simulate(rng, delta, n_papers, per_paper, theta_sd=2.0, theta_mean=0.0):
    nr, m = delta.shape
    theta = theta_mean + theta_sd * rng.standard_normal(n_papers)
    raters = np.argsort(rng.random((n_papers, nr)), axis=1)[:, :per_paper]
    paper = np.repeat(np.arange(n_papers), per_paper)
    rater = raters.ravel()
    score = sample_scores(rng, theta[paper], delta[rater])
    return Ratings(paper, rater, score, m, n_papers, nr), theta


def as_paper_lists(r: Ratings):
    papers = [[] for _ in range(r.n_papers)]
    for p, j, s in zip(r.paper, r.rater, r.score):
        papers[p].append((int(j), int(s)))
    return papers


def study_steps(m, spread=1.0):
    """Table 3's layout (shift I, spacing 2**J) on a milder scale."""
    i, j = np.meshgrid([-1, 0, 1], [-1, 0, 1], indexing="ij")
    base = np.linspace(-1.5, 1.5, m) * spread
    delta = base[None, :] * (2.0 ** j.ravel())[:, None] + 0.75 * i.ravel()[:, None]
    return delta - delta.mean()


@pytest.fixture(scope="module")
def tiny():
    """12 papers, 4 raters, scale 0..3, two or three ratings a paper, mixed order."""
    rng = np.random.default_rng(7)
    delta = study_steps(3)[[0, 4, 5, 8]]
    papers, raters, scores = [], [], []
    for p in range(12):
        k = 2 + p % 2
        who = rng.permutation(4)[:k]
        s = sample_scores(rng, np.full(k, rng.normal(0, 1.5)), delta[who])
        papers += [p] * k
        raters += list(who)
        scores += list(s)
    return Ratings(np.array(papers), np.array(raters), np.array(scores), 3, 12, 4)


# ---------------------------------------------------------------------------------
# pair counts
# ---------------------------------------------------------------------------------
def test_pair_counts_hand_example():
    # paper 0: rater 0 gave 2, rater 1 gave 1; paper 1: rater 1 gave 1, rater 2 gave 0, rater 0 gave 1
    r = Ratings(np.array([0, 0, 1, 1, 1]), np.array([0, 1, 1, 2, 0]), np.array([2, 1, 1, 0, 1]), 2, 2, 3)
    n = pair_counts(r, self_pairs=False)
    assert n.sum() == 2 + 6
    assert n[0, 2, 1, 1] == 1 and n[1, 1, 0, 2] == 1
    assert n[1, 1, 2, 0] == 1 and n[2, 0, 1, 1] == 1 and n[0, 1, 1, 1] == 1 and n[0, 1, 2, 0] == 1
    assert n[0, 0].sum() == 0
    ns = pair_counts(r, self_pairs=True)
    assert ns.sum() == 4 + 9
    assert ns[1, 1, 1, 1] == 2  # rater 1 gave 1 on both papers: two self-pairs
    assert ns[0, 2, 0, 2] == 1 and ns[0, 1, 0, 1] == 1 and ns[2, 0, 2, 0] == 1


def test_pair_counts_match_basic_loop(tiny):
    assert np.array_equal(pair_counts(tiny, self_pairs=True), basic_counts(as_paper_lists(tiny), 4, 3))


# ---------------------------------------------------------------------------------
# faithful
# ---------------------------------------------------------------------------------
def test_faithful_pair_matches_literal_sweep(tiny):
    nk = basic_counts(as_paper_lists(tiny), 4, 3)
    want, sweeps = basic_pair(nk, 4, 3)
    got, got_sweeps, _ = faithful_pair(pair_counts(tiny, self_pairs=True))
    assert got_sweeps == sweeps
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    # the tiny set has steps nobody crossed: the clip at +-15 is exercised
    assert np.abs(got).max() == 15


def test_faithful_pair_stops_after_50_sweeps():
    nk = np.zeros((2, 3, 2, 3), dtype=int)
    nk[0, 1, 1, 1] = nk[1, 1, 0, 1] = 3
    nk[0, 2, 1, 0] = nk[1, 0, 0, 2] = 1
    want, sweeps = basic_pair(nk, 2, 2, max_it=4)
    got, got_sweeps, _ = faithful_pair(nk, max_it=4)
    assert got_sweeps == sweeps == 4
    np.testing.assert_array_equal(got, want)


def test_faithful_quality_matches_literal_bracket_search(tiny):
    d, _, _ = faithful_pair(pair_counts(tiny, self_pairs=True))
    # add papers that end at |CEN| > 14 and that trigger the e(j) > big rescaling
    extra = [[(0, 0), (1, 0)], [(2, 3), (3, 3)], [(1, 3)], [(0, 1), (3, 2), (2, 0)], []]
    papers = as_paper_lists(tiny) + extra
    r = Ratings.from_labels(
        [p for p, lst in enumerate(papers) for _ in lst] + [len(papers) - 1],
        [j for lst in papers for j, _ in lst] + [0],
        [s for lst in papers for _, s in lst] + [0],
        3,
        rater_ids=range(4),
    )
    papers[-1] = [(0, 0)]
    r_pad, s_pad, _ = padded_by_paper(r)
    cen, _ = faithful_quality(d, r_pad, s_pad)
    want = np.array([basic_quality(d, lst, 3) for lst in papers], dtype=F32)
    np.testing.assert_array_equal(cen, want)
    assert np.abs(cen).max() > 14  # some paper ran off the scale


def test_faithful_quality_random_steps_with_rescaling():
    rng = np.random.default_rng(3)
    d = np.clip(rng.normal(0, 8, (5, 6)), -15, 15).astype(F32)
    d[0] = -15  # e(j) exceeds EXP(20) quickly: exercises the rescaling branch
    papers = [[(int(j), int(rng.integers(0, 7))) for j in rng.permutation(5)[: 1 + i % 3]] for i in range(15)]
    r = Ratings.from_labels([p for p, lst in enumerate(papers) for _ in lst],
                            [j for lst in papers for j, _ in lst],
                            [s for lst in papers for _, s in lst], 6, rater_ids=range(5))
    r_pad, s_pad, _ = padded_by_paper(r)
    cen, _ = faithful_quality(d, r_pad, s_pad)
    want = np.array([basic_quality(d, lst, 6) for lst in papers], dtype=F32)
    np.testing.assert_array_equal(cen, want)
    sc, ave = faithful_expected(d, cen)
    for p in range(len(papers)):
        w_sc, w_ave = basic_expected(d, cen[p], 5, 6)
        np.testing.assert_array_equal(sc[p], w_sc)
        assert ave[p] == w_ave


def test_faithful_estimator_end_to_end(tiny):
    m = PartialCreditModel("faithful")
    adj = m.fit_transform(tiny)
    d, _ = basic_pair(basic_counts(as_paper_lists(tiny), 4, 3), 4, 3)
    np.testing.assert_array_equal(m.steps_, d.astype(np.float64))
    for p, lst in enumerate(as_paper_lists(tiny)):
        cen = basic_quality(d, lst, 3)
        assert m.quality_[p] == cen
        sc, ave = basic_expected(d, cen, 4, 3)
        assert adj.paper[p] == ave  # the mean over ALL raters, not over the paper's own
        rows = np.flatnonzero(tiny.paper == p)
        np.testing.assert_array_equal(adj.rating[rows], sc[tiny.rater[rows]])
    assert m.estimable_.all() and m.n_iter_ >= 1


def test_registry_and_one_rater_refusal(tiny):
    assert isinstance(make_method("PCM", "corrected"), PartialCreditModel)
    one = tiny.subset(np.r_[True, np.diff(tiny.paper) != 0])
    with pytest.raises(MethodError):
        PartialCreditModel().fit(one)


# ---------------------------------------------------------------------------------
# corrected
# ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def large():
    """9 raters (Table 3 layout, steps -3..3 before spacing), 3000 papers, 3 raters each, M = 4."""
    delta = study_steps(4)
    r, theta = simulate(np.random.default_rng(100), delta, 3000, 3)
    return r, theta, delta


@pytest.mark.parametrize("smoothing", [0.0, 1.0])
def test_corrected_recovers_steps(large, smoothing):
    """Centred PAIR estimates vs the truth, in units of the naive standard error.

    SE from the inverse of the pairwise information (the Laplacian at the estimate).
    Pairs of one paper share ratings, so the naive SE is too small: over 20 replications
    of this design the z-scores had SD 1.22 and max |z| 4.0 among 720.  Tolerance:
    RMS z < 1.8, max |z| < 5.5 (4.5 SDs).  The faithful PAIR (self-pairs) fails it.
    """
    r, _, delta = large
    m = PartialCreditModel("corrected", smoothing=smoothing).fit(r)
    assert m.converged_ and m.estimable_.all()
    assert abs(m.steps_.mean()) < 1e-9  # identification: mean step 0
    d = m.steps_.ravel()
    _, wins = step_pair_matrices(pair_counts(r, self_pairs=False))
    n = wins + wins.T
    pi = 1 / (1 + np.exp(d[:, None] - d[None, :]))
    q = n * pi * (1 - pi)
    se = np.sqrt(np.diag(np.linalg.pinv(np.diag(q.sum(1)) - q))).reshape(delta.shape)
    z = (m.steps_ - delta) / se
    assert np.sqrt(np.mean(z**2)) < 1.8
    assert np.abs(z).max() < 5.5
    assert np.abs(m.steps_ - delta).max() < 0.5  # about 0.1-0.2 logits of SE per step
    f = PartialCreditModel("faithful").fit(r).steps_
    assert np.abs((f - f.mean() - delta) / se).max() > 5.5


@pytest.mark.parametrize("smoothing", [0.0, 1.0])
def test_corrected_pair_solves_the_pairwise_equations(large, smoothing):
    """F[i,x] = sum_{j,z} (n1 + n2) pi - n2 = 0 at the estimate (no self-pairs), the
    counts of every compared step pair (a, b) raised by s (1/deg_a + 1/deg_b) / 2."""
    r, _, _ = large
    m = PartialCreditModel("corrected", smoothing=smoothing).fit(r)
    n = pair_counts(r, self_pairs=False).astype(float)
    deg = np.zeros((9, 5))
    for i in range(9):
        for x in range(1, 5):
            deg[i, x] = ((n[i, x - 1, :, 1:] + n[i, x, :, :-1]) > 0).sum()
    f = np.zeros(m.steps_.shape)
    d = m.steps_
    for i in range(9):
        for x in range(1, 5):
            n1 = n[i, x - 1, :, 1:]
            n2 = n[i, x, :, :-1]
            extra = smoothing * ((n1 + n2) > 0) * (1 / deg[i, x] + 1 / deg[:, 1:]) / 2
            n1, n2 = n1 + extra, n2 + extra
            pi = 1 / (1 + np.exp(d[i, x - 1] - d))
            f[i, x - 1] = ((n1 + n2) * pi - n2).sum()
    assert np.abs(f).max() < 1e-6


def test_ml_quality_solves_likelihood_equation(large):
    r, theta, _ = large
    m = PartialCreditModel("corrected", quality="mle").fit(r)
    q = m.quality_
    resid = np.bincount(r.paper, weights=r.score - expected_score(q[r.paper], m.steps_[r.rater]),
                        minlength=r.n_papers)
    per = r.ratings_per_paper()
    top = np.bincount(r.paper, weights=r.score == 4) == per
    bottom = np.bincount(r.paper, weights=r.score == 0) == per
    inner = ~top & ~bottom
    assert np.abs(resid[inner]).max() < 1e-8
    assert np.all(q[top] == 15) and np.all(q[bottom] == -15)  # extreme papers: at the bound
    assert top.sum() > 10 and bottom.sum() > 10
    assert np.corrcoef(q[inner], theta[inner])[0, 1] > 0.85  # 3 ratings on 0..4: reliability ~0.8


def test_wle_quality_is_finite_and_solves_warm_equation(large):
    """Warm: sum (x - E) + I'(theta) / (2 I(theta)) = 0, I' by central differences."""
    r, _, _ = large
    m = PartialCreditModel("corrected", quality="wle").fit(r)
    q = m.quality_
    assert np.all(np.abs(q) < 15)
    h = 1e-5
    dr = m.steps_[r.rater]

    def info(t):
        return np.bincount(r.paper, weights=score_variance(t[r.paper], dr), minlength=r.n_papers)

    g = np.bincount(r.paper, weights=r.score - expected_score(q[r.paper], dr), minlength=r.n_papers)
    warm = g + (info(q + h) - info(q - h)) / (2 * h) / (2 * info(q))
    assert np.abs(warm).max() < 1e-6
    assert np.array_equal(PartialCreditModel("corrected").fit(r).quality_, q)   # WLE is the default
    ml = PartialCreditModel("corrected", quality="mle").fit(r).quality_
    top, bottom = ml == 15, ml == -15
    assert q[top].min() > np.median(q) > q[bottom].max()  # extreme papers: finite, on their side


def test_unused_categories_reported_and_fit_finite():
    """Rater 0 never scores above 1, rater 1 never gives a 2 (gap), nobody gives 5."""
    rng = np.random.default_rng(11)
    delta = np.pad(study_steps(4, spread=0.6)[:4], ((0, 0), (0, 1)), constant_values=50.0)
    r, _ = simulate(rng, delta, 600, 2, theta_sd=1.5)
    s = r.score.copy()
    s[(r.rater == 0) & (s > 1)] = 1
    s[(r.rater == 1) & (s == 2)] = 3
    r = Ratings(r.paper, r.rater, s, 5, r.n_papers, 4)
    m = PartialCreditModel("corrected").fit(r)
    assert m.category_range_ == (0, 4)
    est = m.estimable_
    assert not est[0, 1:].any() and est[0, 0]  # 0->1 estimable, above: never crossed / no data
    assert m.pair_steps_[0, 1] == np.inf and np.isnan(m.pair_steps_[0, 2])
    assert m.pair_steps_[1, 1] == np.inf and m.pair_steps_[1, 2] == -np.inf  # both sides of the gap
    assert not est[:, 4].any() and np.all(m.steps_[:, 4] == np.inf)  # nobody gave 5
    assert np.all(np.isfinite(m.steps_[:, :4]))
    # the smoothing gives every compared step a value; rater 0's steps 3, 4 have no data
    assert m.fitted_[1:, :4].all() and m.fitted_[0, :2].all() and not m.fitted_[0, 2:].any()
    assert abs(m.steps_[m.fitted_].mean()) < 1e-9
    assert np.all(m.pair_steps_[est] == m.steps_[est])
    strict = PartialCreditModel("corrected", smoothing=0).fit(r)
    assert np.array_equal(strict.fitted_, est) and abs(strict.steps_[est].mean()) < 1e-9
    assert np.all(np.isfinite(strict.transform(r).paper))
    adj = m.transform(r)
    assert np.all(np.isfinite(adj.rating)) and np.all(np.isfinite(adj.paper))
    assert adj.paper.max() <= 4 and adj.rating.min() >= 0


def test_disconnected_raters_are_refused_by_name():
    """Raters {0,1} and {2,3} never share a paper: no common scale, as OLS/RAS/CML refuse."""
    rng = np.random.default_rng(5)
    delta = study_steps(3)[:4]
    a, _ = simulate(rng, delta[:2], 300, 2)
    b, _ = simulate(rng, delta[2:], 100, 2)
    r = Ratings(np.r_[a.paper, b.paper + 300], np.r_[a.rater, b.rater + 2], np.r_[a.score, b.score], 3, 400, 4)
    with pytest.raises(MethodError, match="PCM: raters 3, 4 not linked through shared papers to raters 1, 2"):
        PartialCreditModel("corrected").fit(r)


def test_refits_and_new_data(tiny, large):
    r, _, _ = large
    m = PartialCreditModel("corrected").fit(r)
    half = r.subset(r.paper < 1500)
    a = m.transform(half)
    b = PartialCreditModel("corrected").fit(r).transform(half)
    np.testing.assert_allclose(a.paper, b.paper)
    q = ml_quality(half, m.steps_, *m.category_range_)   # WLE, as the estimator's default
    np.testing.assert_allclose(q[:1500], m.quality_[:1500], atol=1e-9)


# ---------------------------------------------------------------------------------
# the published numbers: Tables 7 and 12, PCM column
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize("low_byte,chain", [(None, ("0551", "0591")), (None, ("3551",)), (137, ("0192",))])
def test_faithful_regenerates_published_pcm_rmse_and_maxdiff(low_byte, chain):
    """Faithful PCM on the faithfully generated sets gives Table 7's RMSE and Table 12's
    maximum |adjusted - true| to the printed two decimals (via three, as the README says).
    (All 23 reproducible multi-rater sets match, 46 of 46 values; three sets here.)"""
    import csv
    from pathlib import Path

    import ratercal_cli
    from ratercal_cli.design import parse_code, table3_steps
    from ratercal_cli.generators import basic1990 as gen
    from ratercal_cli.qbasic import QBasicRandom

    data = Path(ratercal_cli.__file__).parent / "data" / "denny1990"
    rmse = {r["set"]: float(r["PCM"]) for r in csv.DictReader(open(data / "table7_rmse.csv")) if r.get("PCM")}
    maxd = {r["set"]: float(r["PCM"]) for r in csv.DictReader(open(data / "table12_maxdiff.csv")) if r.get("PCM")}
    rng = QBasicRandom() if low_byte is None else QBasicRandom.with_low_byte(low_byte)
    for code in chain:
        cell = parse_code(code)
        q = gen.pargen(rng, cell)
        steps = table3_steps(cell.max_score).astype(np.float32)
        true, _ = gen.truegen(q, steps)
        obs = gen.obsgen(rng, cell, q, steps)
        k = obs.kept
        r = Ratings(obs.paper[k], obs.rater[k], obs.score[k], cell.max_score, cell.papers, 9)
        err = PartialCreditModel("faithful").fit_transform(r).paper - true

        def printed(x):
            return np.floor(np.floor(x * 1000 + 0.5) / 10 + 0.5) / 100

        label = cell.label
        assert printed(np.sqrt(np.mean(err**2))) == pytest.approx(rmse[label], abs=1e-9)
        assert printed(np.abs(err).max()) == pytest.approx(maxd[label], abs=1e-9)


@pytest.mark.parametrize("quality", ["wle", "mle"])
def test_paper_quality_solved_once_a_pattern_is_every_papers_own_to_the_bit(quality):
    """ml_quality solves each pattern of ratings once (quality.quality_by_pattern; 170,000 patterns of 500,000
    papers at 1M ratings, 2 of 200 raters a paper): the qualities are those of solving every paper, to the bit,
    all-extreme papers at the bound (ML) and papers without ratings at 0."""
    from ratercal_cli.methods.pcm import ml_quality
    from ratercal_cli.methods.quality import estimate_quality, pcm_tau

    rng = np.random.default_rng(4)
    n_papers, J = 3000, 12
    r1 = rng.integers(0, J, n_papers)
    r2 = (r1 + 1 + rng.integers(0, J - 1, n_papers)) % J
    paper = np.repeat(np.arange(n_papers), 2)
    rater = np.column_stack([r1, r2]).ravel()
    score = rng.integers(0, 4, paper.size)
    keep = paper < n_papers - 7   # (the last 7 papers have no ratings)
    r = Ratings(paper[keep], rater[keep], score[keep], 3, n_papers, J)
    delta = np.sort(rng.normal(0.0, 1.0, (J, 3)), axis=1)
    got = ml_quality(r, delta, quality=quality)
    want = estimate_quality(r.paper, r.rater, r.score, n_papers, pcm_tau(delta, 0, 3), quality=quality, bound=15.0,
                            with_se=False)[0]
    patterns = {(a, b, c, d) for a, b, c, d in zip(r1, r2, *score.reshape(-1, 2).T)}
    assert len(patterns) < 0.8 * (n_papers - 7)   # (papers share patterns: the case)
    np.testing.assert_array_equal(got, want)
    assert (got[-7:] == 0).all() and np.isfinite(got).all()
    if quality == "mle":
        assert (np.abs(got) == 15.0).any()   # (all-extreme papers at the bound)
