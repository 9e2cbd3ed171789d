"""MML/MFRM fits steered by a sample's information (past 2 x SAMPLE_RATINGS ratings, mml._newton) on
designs the benchmarks' shapes (scores 0-5, every category used, random assignment) are not: rare
and never-used categories, a rater with a handful of ratings, papers scored all top or all bottom,
two blocks of raters joined by a few papers, school-confounded assignment, a rubric with thresholds
per criterion, an anchored fit and raters of different slopes (the model misspecified).  Each fit
must end where the same fit without a sample ends when converged much more tightly (every paper's
information steering it): estimates within 1e-6 logits.

The generator is written here (not benchmarks/shapes.py, not ratercal_cli.generators): the
generalised partial credit model with each rater's slope, severity and thresholds, a threshold of
+inf a category the rater never gives.  The sample is made to steer smaller files than in use by
lowering SAMPLE_RATINGS.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratercal_cli.methods.mml as mml_mod
from ratercal_cli.methods.mml import fit_mml
from ratercal_cli.ratings import Ratings


def gpcm_ratings(kind, n_ratings, seed=1, raters=60, per=2):
    """Ratings of ``n_ratings // per`` papers, ``per`` raters each drawn at random from ``raters``;
    scores by the GPCM.  ``kind``: "rare7" scores 0-7, raters 0-7 seldom give 7, 8-13 never, 14-17 never
    6 or 7, 18-21 seldom 6, 22-25 seldom 0; "low4" scores 1-4, raters 0-2 never 1, 3-7 seldom 4;
    "extreme" 0-5, 16% of papers far beyond either end (every rating top or bottom); "weak" 0-5, two
    blocks of raters, each reading its own half of the papers, joined by 4 papers read across;
    "few" 0-5, the last rater with 4 ratings; "slopes" 0-7 as rare7 with raters' slopes log-normal
    (sd 0.5); "plain" 0-5."""
    rng = np.random.default_rng([32, seed])
    M = {"rare7": 7, "slopes": 7, "low4": 3}.get(kind, 5)
    n_papers = n_ratings // per
    paper = np.repeat(np.arange(n_papers), per)
    if kind == "weak":
        half = raters // 2
        pick = np.argsort(rng.random((n_papers, half)), axis=1)[:, :per] + (np.arange(n_papers) % 2)[:, None] * half
        pick[:4, 1] = (pick[:4, 0] + half) % raters   # the 4 papers read across the blocks
    else:
        pick = np.argsort(rng.random((n_papers, raters)), axis=1)[:, :per]
    rater = pick.ravel()
    if kind == "few":   # all but 4 of the last rater's ratings go to the next rater not on the paper
        mine = np.flatnonzero(rater == raters - 1)[4:]
        mate = rater[mine ^ 1]
        rater[mine] = np.where(mate == 0, 1, 0)
    theta = rng.normal(0.0, 1.5, n_papers)
    if kind == "extreme":
        u = rng.random(n_papers)
        theta[u < 0.08], theta[u > 0.92] = 9.0, -9.0
    base = np.linspace(-2.5, 2.5, M) if M > 3 else np.array([-1.5, 0.0, 1.5])
    thr = np.sort(base + rng.normal(0.0, 0.4, (raters, M)), axis=1)
    slope = np.exp(0.5 * rng.standard_normal(raters)) if kind == "slopes" else np.ones(raters)
    if M == 7:
        thr[:8, -1] += 2.5
        thr[8:14, -1] = np.inf
        thr[14:18, -2:] = np.inf
        thr[18:22, -2] += 3.0
        thr[22:26, 0] -= 3.0
    if kind == "low4":
        thr[:3, 0] = -50.0   # never the bottom
        thr[3:8, -1] += 3.0
    z = slope[rater][:, None] * (theta[paper] - rng.normal(0.0, 0.5, raters)[rater])[:, None] - slope[rater][:, None] * thr[rater]
    cum = np.concatenate([np.zeros((rater.size, 1)), np.cumsum(np.where(np.isfinite(thr[rater]), z, -np.inf), axis=1)], axis=1)
    p = np.exp(cum - cum.max(axis=1, keepdims=True))
    cdf = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
    score = np.minimum((rng.random(rater.size)[:, None] > cdf).sum(axis=1), M)
    return Ratings(paper=paper, rater=rater, score=score, max_score=M, n_papers=n_papers, n_raters=raters,
                   scale_low=1 if kind == "low4" else 0)


def compare(monkeypatch, ratings, sample_ratings, atol=1e-6, spy=None, **kw):
    """The default fit with a sample of ~``sample_ratings`` ratings steering it against the same fit with
    no sample, converged to a decrement 1e5 times smaller; returns both (and with ``spy``, a ``what`` of
    :func:`spy_evaluations`, the steered fit's evaluations as a third)."""
    monkeypatch.setattr(mml_mod, "SAMPLE_RATINGS", 10 ** 12)
    tight = fit_mml(ratings, tol=1e-14, **kw)
    monkeypatch.setattr(mml_mod, "SAMPLE_RATINGS", sample_ratings)
    monkeypatch.setattr(mml_mod, "SAMPLE_PER_PARAMETER", 1)
    calls = None if spy is None else spy_evaluations(monkeypatch, spy)
    made = []
    make = mml_mod._sample_engine
    monkeypatch.setattr(mml_mod, "_sample_engine", lambda *a, **k: made.append(make(*a, **k)) or made[-1])
    fit = fit_mml(ratings, **kw)
    assert made[0] is not None   # the sample steered
    assert fit.converged and tight.converged
    np.testing.assert_allclose(fit.phi, tight.phi, rtol=0, atol=atol)
    np.testing.assert_allclose(fit.steps, tight.steps, rtol=0, atol=atol)
    np.testing.assert_allclose(fit.eap, tight.eap, rtol=0, atol=atol)
    assert fit.loglik == pytest.approx(tight.loglik, rel=1e-10 if atol <= 1e-6 else 1e-9)   # (their grids may differ by a node)
    return (fit, tight) if spy is None else (fit, tight, calls)


def papers_and_level(eng, level, ev):
    return eng.papers.size, level


def spy_evaluations(monkeypatch, what=papers_and_level):
    """The list of every ``GridEngine.evaluate`` of the test from now on, each as ``what(engine, level,
    evaluation)`` (None: left out); by default (the engine's papers, the level)."""
    from ratercal_cli.methods import mml_engine

    calls = []
    evaluate = mml_engine.GridEngine.evaluate

    def spy(self, *a, **k):
        ev = evaluate(self, *a, **k)
        got = what(self, k.get("level", 0), ev)
        if got is not None:
            calls.append(got)
        return ev

    monkeypatch.setattr(mml_engine.GridEngine, "evaluate", spy)
    return calls


def test_rare_top_categories_converge_to_a_tight_fit(monkeypatch):
    """Scores 0-7 with categories some raters seldom or never give, raters of different slopes: the
    sample holds a handful of a rater's top scores, its information in those thresholds' directions is
    far from every paper's, and a decrement under the tolerance by that matrix left a threshold
    2.6e-6 logits from the optimum (3.96e-6 at 1M ratings, 2 of 200 raters a paper, scores 0-7).
    The fit now also asks that the last step, whose error is a fraction of it, be under
    SAMPLE_STEP_TOL: 1.1e-7."""
    compare(monkeypatch, gpcm_ratings("slopes", 60_000), 5_000, model="pcm")


@pytest.mark.slow
@pytest.mark.parametrize("kind, model", [("rare7", "pcm"), ("rare7", "rsm"), ("slopes", "rsm"), ("low4", "pcm"),
                                         ("low4", "rsm"), ("extreme", "pcm"), ("extreme", "rsm"), ("weak", "pcm"),
                                         ("weak", "rsm"), ("few", "pcm"), ("few", "rsm")])
def test_designs_unlike_the_benchmarks_converge_to_a_tight_fit(monkeypatch, kind, model):
    # papers far beyond the scale's ends: the two fits' grids differ by a node (61, 60) and so do their
    # optima by 2.9e-6 (log L by 3.7e-5) and the EAPs of all-top papers by 6.4e-6, however tightly the
    # sampled fit converges (the trapezoidal rule's error on their skewed posteriors, not the sample's)
    compare(monkeypatch, gpcm_ratings(kind, 60_000), 5_000, model=model, atol=1e-5 if kind == "extreme" else 1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["pcm", "rsm"])
def test_an_anchored_sample_steered_fit_converges_to_a_tight_fit(monkeypatch, model):
    def anchor(lay):
        (lay.fix("severity", 3, 0.5) if "severity" in lay.blocks else lay.fix("steps", (3, 0), -1.0)).free("theta_mean")

    fit, _ = compare(monkeypatch, gpcm_ratings("plain", 60_000), 5_000, model=model, anchor=anchor)
    at = fit.layout.index("severity", 3) if model == "rsm" else fit.layout.index("steps", (3, 0))
    assert fit.layout.value[at] == pytest.approx(0.5 if model == "rsm" else -1.0)


@pytest.mark.slow
def test_a_school_confounded_rubric_with_thresholds_per_criterion_converges_to_a_tight_fit(monkeypatch):
    """tests/confounded.py's rubric (graded response raters of different slopes, schools read by their
    own raters), the criterion a facet with its own RSM thresholds."""
    from confounded import rubric

    f = rubric(4, papers=8_000).frame
    r = Ratings.from_labels(f.paper.to_numpy(), f.rater.to_numpy(), f.score.to_numpy() - 1, max_score=5)
    crit = pd.factorize(f.criterion)[0]
    compare(monkeypatch, r, 5_000, model="rsm", facet=crit, threshold_facet=0)


def test_the_sample_holds_every_rating_of_a_rare_cell_each_paper_standing_for_itself(monkeypatch):
    """A rater with 4 ratings: every k-th paper holds one of them or none, the sample's information of
    its thresholds was the prior's, the BFGS updates stalled and every paper's information was computed
    (once at 60k ratings, twice at 200k).  The sample now holds every paper with a rating in a cell of
    fewer than SAMPLE_RARE x k ratings, at weight 1 (the others at weight k: the weights sum to the
    papers), and steers the fit to the end: no information of every paper."""
    from ratercal_cli.methods import mml_engine
    from ratercal_cli.methods.mml import _items

    r = gpcm_ratings("few", 60_000)
    monkeypatch.setattr(mml_mod, "SAMPLE_RATINGS", 5_000)   # k = 12
    monkeypatch.setattr(mml_mod, "SAMPLE_PER_PARAMETER", 1)
    item = _items(r, None)[0]
    eng = mml_engine.GridEngine(r.paper, item, r.score, int(item.max()) + 1, r.max_score + 1)
    sample = mml_mod._sample_engine(r, item, eng, 1)
    few = np.flatnonzero(r.rater == r.n_raters - 1)
    assert few.size == 4
    np.testing.assert_array_equal(sample.n_obs[r.n_raters - 1], eng.n_obs[r.n_raters - 1])   # all 4, weight 1
    assert set(r.paper[few]) <= set(sample.papers)
    assert sample.mult.sum() == pytest.approx(eng.mult.sum(), rel=0.01)
    assert sample.papers.size < eng.papers.size / 6
    calls = spy_evaluations(monkeypatch)
    fit = fit_mml(r, model="pcm")
    assert fit.converged
    assert (eng.papers.size, 2) not in calls   # no information of every paper
    assert any(n < eng.papers.size and level == 2 for n, level in calls)


def _with_sample(r, fit, monkeypatch):
    """The PCM's objective of ``r`` on ``fit``'s grid with a sample of about every few papers (SAMPLE_RATINGS
    5,000): ``(eng, sample, lay, items, K)``."""
    from ratercal_cli.methods.mml_engine import GridEngine
    from ratercal_cli.methods.mml_layout import make_layout

    monkeypatch.setattr(mml_mod, "SAMPLE_RATINGS", 5_000)
    monkeypatch.setattr(mml_mod, "SAMPLE_PER_PARAMETER", 1)
    item, items, seen, levels = mml_mod._items(r, None)
    K = r.max_score + 1
    counts = np.bincount(items[item, 0] * K + r.score, minlength=seen.size * K).reshape(seen.size, K)
    lay = make_layout("pcm", items, seen.size, levels, K - 1, None, used=counts > 0)
    eng = GridEngine(r.paper, item, r.score, items.shape[0], K, fit.n_nodes)
    sample = mml_mod._sample_engine(r, item, eng, lay.n)
    return eng, sample, lay, items, K


@pytest.mark.slow
def test_the_sample_s_information_scaled_to_every_paper_s_complete_data_is_nearer_every_paper_s(monkeypatch):
    """The sample's information (every k-th paper's, scaled by k) is far from every paper's in the
    directions of thresholds it holds a handful of ratings about; scaled (``T H T``, T the square root of
    the ratio of every paper's to the sample's complete-data information on the diagonal, which every
    paper's gradient gives, :meth:`mml._Objective.scaled_to_complete`) it is nearer: at the optimum of scores
    0-7 with rare top categories (60k ratings, k = 12), the eigenvalues of its inverse times every
    paper's information were 0.71-1.62, scaled 0.78-1.32 (the iterations on a matrix converge at about
    the largest distance from 1 a step)."""
    from scipy.linalg import eigh

    r = gpcm_ratings("rare7", 60_000)
    fit = fit_mml(r, model="pcm")
    eng, sample, lay, items, K = _with_sample(r, fit, monkeypatch)
    assert sample.papers.size < eng.papers.size / 5
    obj = mml_mod._Objective(eng, lay, sample, info_grid=True)
    _, _, H, Hem_all, ev = obj(fit.phi, level=2)         # every paper's information (and gradient)
    Hs, Hem_s = obj.hessians(fit.phi, ev, approx=True)  # the sample's, scaled to every paper's
    tau, ls = obj.tau(fit.phi)
    obj._same_grid()
    sample.set_nodes(*mml_mod.info_grid(eng, ev))
    sev = sample.evaluate(tau, ls, level=2)              # the sample's, as it was
    plain = eng.mult.sum() / sample.mult.sum() * sev.H.project(obj.Ku, obj.cols, obj.ks, obj.P) - obj.pen.toarray()
    plain, scaled = eigh(-H, -plain, eigvals_only=True), eigh(-H, -Hs, eigvals_only=True)
    assert np.abs(1 - plain).max() > 0.55
    assert np.abs(1 - scaled).max() < 0.35
    # its complete-data part is every paper's (the EM fallback's matrix; by the gradient's grid, not the
    # information's coarser one: 1.4e-4 apart)
    np.testing.assert_allclose(Hem_s, Hem_all, rtol=1e-3, atol=1e-3 * np.abs(Hem_all).max())


def test_the_scaled_sample_information_keeps_the_sample_s_own_curvature_along_the_shift_of_every_threshold(
        monkeypatch):
    """Along the shift of every threshold (every paper's quality moved the other way) the information is a
    small difference of its complete-data part and its missing part, each some ten times larger at 12
    raters a paper: the scaling by the complete-data parts (a different ratio in each coordinate) took it
    5% off, the sample's own (its papers' exact informations, weighted) was within 0.2%, and the scaled
    matrix keeps that (:func:`mml._along`).  120k ratings, 12 of 60 raters a paper, a sample of about every
    4th paper: the eigenvalues of the steering matrix's inverse times every paper's information 0.80-1.26
    scaled alone, 0.88-1.10 now."""
    from scipy.linalg import eigh

    r = gpcm_ratings("plain", 120_000, raters=60, per=12)
    fit = fit_mml(r, model="pcm")
    eng, sample, lay, items, K = _with_sample(r, fit, monkeypatch)
    obj = mml_mod._Objective(eng, lay, sample, info_grid=True)
    _, _, H, _, ev = obj(fit.phi, level=2)               # every paper's information (and gradient)
    steer = obj.hessians(fit.phi, ev, approx=True)[0]
    monkeypatch.setattr(mml_mod, "_along", lambda *a: None)
    scaled = obj.hessians(fit.phi, ev, approx=True)[0]   # scaled alone, as before
    d = obj._shift
    np.testing.assert_allclose(obj.K[:-1] @ d, np.tile(np.arange(1.0, K), items.shape[0]), atol=1e-12)
    assert abs((d @ steer @ d) / (d @ H @ d) - 1.0) < 0.005
    assert abs((d @ scaled @ d) / (d @ H @ d) - 1.0) > 0.03
    assert np.abs(1.0 - eigh(-H, -steer, eigvals_only=True)).max() < 0.15
    assert np.abs(1.0 - eigh(-H, -scaled, eigvals_only=True)).max() > 0.2


def test_along_makes_a_negative_definite_matrix_that_along_a_direction_and_keeps_it_negative_definite():
    """:func:`mml._along`: ``H d = h`` after it, ``H`` symmetric and negative definite; left as it was where
    a curvature (``d'H d`` or ``h'd``) is not negative.  Its blocks of rows (FACTOR_BLOCK) as the whole."""
    rng = np.random.default_rng(5)
    P = 2 * mml_mod.FACTOR_BLOCK + 7
    A = rng.standard_normal((P, P + 5))
    H = -(A @ A.T) / P - np.eye(P)
    d = rng.standard_normal(P)
    h = 1.3 * (H @ d) + 0.1 * np.linalg.norm(H @ d) / np.sqrt(P) * rng.standard_normal(P)
    assert h @ d < 0
    G = H.copy()
    mml_mod._along(G, d, h)
    np.testing.assert_allclose(G @ d, h, rtol=1e-10, atol=1e-10 * np.abs(h).max())
    np.testing.assert_allclose(G, G.T, rtol=0, atol=1e-12 * np.abs(G).max())
    assert np.linalg.eigvalsh(G).max() < 0
    same = H.copy()
    mml_mod._along(same, d, -h)   # (a positive curvature: no update)
    np.testing.assert_array_equal(same, H)


def test_a_sample_steered_fit_takes_fewer_gradients_of_every_paper_and_ends_at_the_tight_fit(monkeypatch):
    """Every paper's iterations started on the sample's phase's matrix (its information taken far from
    the optimum, BFGS updates of the sample's log L) and kept it to the end, each step a fixed fraction
    nearer (15 gradients of every paper on these 60k ratings, k = 12; at 1M ratings 3 of 200 raters a
    paper, 13: decrements 5230, 132, 4.9, 0.5, 0.036, ... 9e-11).  Now the sample's information, scaled
    to every paper's complete-data information, is taken afresh once the decrement is under
    SAMPLE_REFRESH a parameter: 9 gradients, and the same estimates as a tight fit (1e-6)."""

    r = gpcm_ratings("plain", 60_000)
    fit, tight, calls = compare(monkeypatch, r, 5_000, spy=papers_and_level, model="pcm")
    n_full = max(n for n, _ in calls)
    assert sum(c == (n_full, 1) for c in calls) <= 10
    assert 2 <= sum(n < n_full and level == 2 for n, level in calls) <= mml_mod.MAX_SAMPLE_INFOS
    assert (n_full, 2) not in calls


def test_the_steering_informations_take_the_coarser_grid_and_the_fit_ends_at_the_tight_fit(monkeypatch):
    """The informations that only steer (the sample's, in both phases) are taken on a grid of spacing
    the posteriors' 1% quantile sd / SAMPLE_INFO_NODE_RATIO (0.7), not / INFO_NODE_RATIO (0.9, the
    standard errors'): 21 of 200 raters a paper at 1M ratings, 119 and 63 nodes where 152 and 81.  Here:
    fewer nodes an information than at 0.9 from the same posteriors, and the fit ends where a tight fit
    does (1e-6)."""

    r = gpcm_ratings("plain", 60_000, per=8)
    fit, tight, infos = compare(monkeypatch, r, 5_000, model="pcm", spy=lambda eng, level, ev: None if level != 2 else (
        eng.Q, int(np.ceil((eng.z[-1] - eng.z[0]) * mml_mod.INFO_NODE_RATIO / ev.z_sd_low)) + 1))
    assert len(infos) >= 2
    for nodes, at_info_ratio in infos:   # (the posteriors at an information narrow little from those that chose its grid)
        assert nodes < 0.85 * at_info_ratio


def test_an_rsm_fit_takes_the_sample_s_information_afresh_at_every_paper_s_start(monkeypatch):
    """The RSM's every-paper iterations started on the sample's phase's matrix, as the PCM's do, and it
    steered them badly (1.1-1.4 times nearer in decrement a step at 1M ratings, 3 of 200 raters a paper,
    until the stalled updates had the sample's information taken afresh): on two blocks of raters joined
    by 4 papers, 31 gradients of every paper.  The RSM's now take the sample's information (scaled to every
    paper's complete-data information) afresh at their start (mml.SAMPLE_CARRY_MODELS): 12, and the same
    estimates as a tight fit (1e-6)."""
    r = gpcm_ratings("weak", 60_000)
    fit, tight, calls = compare(monkeypatch, r, 5_000, spy=papers_and_level, model="rsm")
    n_full = max(n for n, _ in calls)
    assert sum(c == (n_full, 1) for c in calls) <= 14


@pytest.mark.slow
def test_an_rsm_fit_s_every_paper_grid_is_chosen_at_the_end_of_the_sample_s_phase(monkeypatch):
    """The grid of every paper's iterations was chosen by the sample's posteriors before the last step of
    its phase, which moves the RSM's far (it ends at (k - 1) a parameter): 21 of 200 raters a paper, 1M
    ratings, 132 nodes, made anew on 116 after a step (one gradient of every paper more); here (300k
    ratings, GPCM) 127 nodes to the end where 109 do.  Chosen at the phase's end (one more evaluation of
    the sample's log L): every grid of every paper within GRID_MARGIN (and a node) of what its last
    posteriors ask for."""
    r = gpcm_ratings("plain", 300_000, raters=200, per=21)
    last = {}
    grids = spy_evaluations(monkeypatch, lambda eng, level, ev: last.update(ev=ev) or eng.Q
                            if eng.papers.size == r.n_papers and level == 1 else None)
    fit = fit_mml(r, model="rsm")
    assert fit.converged and len(grids) >= 5
    need = mml_mod.required_grid(last["ev"], mml_mod.GRID_MARGIN)[0]
    assert max(grids) <= need + 1
