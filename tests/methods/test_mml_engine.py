"""The MML engine's information (methods/mml_engine.py) computed three ways - the patterns' items
dense (BLAS products), item by item, and by chunks of (pattern, item pair) entries - gives the same
Louis Hessian on random designs of every shape, and on many raters a paper (21 of 200) it holds no
array of designs x item pairs (issue 32: a 7.13 GiB allocation at 1M ratings)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from ratercal_cli.methods import mml_engine
from ratercal_cli.methods.mml_engine import GridEngine


def random_design(rng, U, K, N, per_paper):
    """N papers, each rated by ``per_paper(rng)`` distinct items of U (one item sometimes twice)."""
    paper, item, score = [], [], []
    for p in range(N):
        its = rng.choice(U, per_paper(rng), replace=False)
        if rng.random() < 0.2:
            its = np.r_[its, its[:1]]
        paper += [p] * its.size
        item += list(its)
        score += list(rng.integers(0, K, its.size))
    return np.array(paper), np.array(item), np.array(score)


def evaluate(monkeypatch, data, U, K, tau, ls, dense_gain, by_item_from, chunk=1 << 18, pair_entries=1 << 21,
             pair_chunk=1 << 10, entry_run=1 << 12, item_group=1 << 16):
    monkeypatch.setattr(mml_engine, "DENSE_GAIN", dense_gain)
    monkeypatch.setattr(mml_engine, "BY_ITEM_FROM", by_item_from)
    monkeypatch.setattr(mml_engine, "ENTRY_CHUNK", chunk)
    monkeypatch.setattr(mml_engine, "PAIR_ENTRIES", pair_entries)
    monkeypatch.setattr(mml_engine, "PAIR_CHUNK", pair_chunk)
    monkeypatch.setattr(mml_engine, "ENTRY_RUN", entry_run)
    monkeypatch.setattr(mml_engine, "ITEM_GROUP", item_group)
    eng = GridEngine(*data, U, K, 17)
    eng.evaluate(tau, ls, level=2)   # (a second information takes what the first kept, where it kept it)
    return eng, eng.evaluate(tau, ls, level=2)


SHAPES = {
    "few of many": lambda U: (lambda rng: int(rng.integers(1, 4))),
    "complete": lambda U: (lambda rng: U),
    "any number": lambda U: (lambda rng: int(rng.integers(1, U + 1))),
    "most of them": lambda U: (lambda rng: int(rng.integers(max(1, U - 2), U + 1))),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_three_ways_to_the_information_agree(monkeypatch, shape, seed):
    rng = np.random.default_rng([seed, len(shape)])
    U, K, N = int(rng.integers(3, 12)), int(rng.integers(2, 6)), int(rng.integers(20, 200))
    data = random_design(rng, U, K, N, SHAPES[shape](U))
    tau = np.c_[np.zeros(U), np.cumsum(rng.normal(0, 1, (U, K - 1)), axis=1)]
    ls = float(rng.normal(0, 0.3))
    ways = {"dense": (1e9, 6.0), "by item": (0.0, 0.0), "by entries": (0.0, 1e9),
            "by entries, small chunks": (0.0, 1e9, 7),
            # the designs' and the patterns' pairs of items made again at each information, in groups
            "by item, nothing kept": (0.0, 0.0, 1 << 18, 5), "by entries, nothing kept": (0.0, 1e9, 7, 5),
            # the node part's sparse products a run of a few item pairs at a time
            "by item, runs of 4 pairs": (0.0, 0.0, 1 << 18, 1 << 21, 4), "nothing kept, runs": (0.0, 0.0, 1 << 18, 5, 3),
            # the mean part's outer products a run of about 5 pairs of entries at a time
            "by entries, runs of 5": (0.0, 1e9, 1 << 18, 1 << 21, 1 << 10, 5),
            # the mean part's sparse products a group of items of about 6 pairs of entries at a time
            "by item, groups of 6": (0.0, 0.0, 1 << 18, 1 << 21, 1 << 10, 1 << 12, 6)}
    out = {name: evaluate(monkeypatch, data, U, K, tau, ls, *args) for name, args in ways.items()}
    ref_eng, ref = out["by item"]
    H = ref.H.dense()
    assert np.abs(H).max() > 1.0   # (a real information)
    for name, (eng, ev) in out.items():
        assert ev.ll == pytest.approx(ref.ll, rel=1e-13)
        np.testing.assert_allclose(ev.H.dense(), H, rtol=0, atol=1e-11 * np.abs(H).max(), err_msg=name)
        np.testing.assert_allclose(ev.H_em.dense(), ref.H_em.dense(), rtol=0, atol=1e-11 * np.abs(H).max())
    # each way was the one taken
    assert not isinstance(out["by item"][0].items_dense, np.ndarray)
    if shape == "complete":
        assert isinstance(out["dense"][0].items_dense, np.ndarray)


def test_many_raters_a_paper_hold_nothing_of_designs_times_pairs():
    """2,000 papers, 21 of 200 raters each: every paper its own design and 20,100 co-rated pairs; the
    code before issue 32 made a designs x pairs array (2,000 x 20,100 doubles: 322 MB here, 7 GiB at
    1M ratings).  Now the set-up and one information stay within a few times the ratings' bytes."""
    rng = np.random.default_rng(5)
    U, K, N, k = 200, 6, 2000, 21
    raters = np.argpartition(rng.random((N, U)), k - 1, axis=1)[:, :k]
    paper, item = np.repeat(np.arange(N), k), raters.ravel()
    score = rng.integers(0, K, paper.size)
    tau = np.c_[np.zeros(U), np.cumsum(rng.normal(0, 0.5, (U, K - 1)), axis=1)]
    tracemalloc.start()
    try:
        eng = GridEngine(paper, item, score, U, K, 31)
        ev = eng.evaluate(tau, 0.2, level=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert eng.pair_u.size == U * (U + 1) // 2 and eng.design_first.size == N
    assert np.isfinite(ev.H.dense()).all()
    assert peak < 120e6, f"{peak / 1e6:.0f} MB"


@pytest.mark.parametrize("tail", ["default", "near"])   # (the windows' reach: WINDOW_TAIL or NEAR_TAIL)
@pytest.mark.parametrize("moved", ["a step", "far"])
def test_windows_of_the_grid_give_the_whole_grid_s_numbers(monkeypatch, moved, tail):
    """Many ratings a paper: after a first evaluation, chunks of patterns near each other are
    evaluated on the nodes where their posteriors lay (GridEngine._windows); log L, gradient,
    posterior means and sds, and the grid's range and resolution statistics are the whole grid's
    (to rounding), after a small step and after one that moves every posterior far past its
    window (those chunks are done again on the whole grid)."""
    monkeypatch.setattr(mml_engine, "WINDOW_CHUNK", 64)
    rng = np.random.default_rng(3)
    U, K, N = 15, 5, 1200
    data = random_design(rng, U, K, N, lambda rng: U)
    theta = rng.normal(0, 1.5, N)
    tau = np.c_[np.zeros(U), np.cumsum(rng.normal(0, 0.7, (U, K - 1)), axis=1)]
    score = np.array([(theta[p] > tau[u, 1:] - 0.5 * np.arange(1, K) + rng.normal(0, 1, K - 1)).sum()
                      for p, u in zip(data[0], data[1])])
    data = (data[0], data[1], score)
    # a step: each rater a little more or less severe; far: every rater 3 logits harsher (every
    # posterior 2 sd lower)
    tau1 = tau + np.arange(K)[None, :] * (rng.normal(0, 0.05, U)[:, None] if moved == "a step" else 3.0)
    ls1 = 0.4 + (0.02 if moved == "a step" else 0.0)
    win = GridEngine(*data, U, K, 301)
    if tail == "near":
        win.window_tail = mml_engine.NEAR_TAIL
    win.evaluate(tau, 0.4)                      # the posteriors' places
    assert win._windows() is not None           # (windows pay here: 15 ratings a paper)
    G = np.c_[np.tanh(win.z), win.z ** 4]   # (posterior expectations of functions at the nodes: the windows' too)
    got = win.evaluate(tau1, ls1, level=1, moments=True, G=G)
    assert (win.window_misses > 0) == (moved == "far")
    ref = GridEngine(*data, U, K, 301).evaluate(tau1, ls1, level=1, moments=True, G=G)
    np.testing.assert_allclose(got.posterior, ref.posterior, rtol=1e-12, atol=1e-13)
    assert got.ll == pytest.approx(ref.ll, rel=1e-13)
    np.testing.assert_allclose(got.g, ref.g, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(got.eap, ref.eap, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.eap_sd, ref.eap_sd, rtol=1e-10)
    assert (got.z_lo, got.z_hi, got.z_sd_low) == pytest.approx((ref.z_lo, ref.z_hi, ref.z_sd_low), rel=1e-10)


def pcm_ratings(rng, U, K, N, per_paper, sigma):
    """``per_paper`` of U raters score each of N papers (``None``: every rater), by the partial credit model
    with thresholds ``tau`` (cumulative, tau[:, 0] = 0) and qualities N(0, sigma^2): (paper, item, score), tau."""
    steps = np.linspace(-1.5, 1.5, K - 1) + rng.normal(0, 0.3, (U, K - 1)) + rng.normal(0, 0.5, (U, 1))
    tau = np.c_[np.zeros(U), np.cumsum(steps, axis=1)]
    raters = np.tile(np.arange(U), (N, 1)) if per_paper is None else np.argsort(rng.random((N, U)), axis=1)[:, :per_paper]
    paper, item = np.repeat(np.arange(N), raters.shape[1]), raters.ravel()
    theta = rng.normal(0, sigma, N)[paper]
    logit = np.arange(K)[None, :] * theta[:, None] - tau[item]
    prob = np.exp(logit - logit.max(axis=1, keepdims=True))
    cum = np.cumsum(prob / prob.sum(axis=1, keepdims=True), axis=1)
    score = (rng.random(paper.size)[:, None] > cum[:, :-1]).sum(axis=1)
    return (paper, item, score), tau


@pytest.mark.parametrize("way", ["by item", "by entries", "dense", "weighted", "complete", "designs first"])
@pytest.mark.parametrize("moved", ["a step", "far"])
def test_the_information_on_windows_of_the_grid_is_the_whole_grid_s(monkeypatch, way, moved):
    """An engine of at least INFO_WINDOWS_FROM ratings takes its informations on the windows of the grid
    (each chunk of patterns on the nodes where its posteriors lay at the last evaluation, as log L and
    the gradient do; issue 32: the sample's two informations at 21 of 200 raters a paper, 1M ratings,
    0.27 s where 0.33 s): 15 of 40 raters a paper (its mean parts an item at a time, by entries, or with
    the items dense), a complete panel of 12 (one design), papers weighted (a sample's), designs numbered
    by an information before the windows (grouped by a permutation); ratings from a
    known partial credit model.  The Louis and complete-data Hessians, log L and gradient are the whole
    grid's to 1e-10 of the largest entry, after a step and after a move past the windows (those chunks
    done again on the whole grid); an engine under INFO_WINDOWS_FROM keeps the whole grid's to the bit."""
    monkeypatch.setattr(mml_engine, "WINDOW_CHUNK", 16 if way == "complete" else 64)
    monkeypatch.setattr(mml_engine, "DENSE_GAIN", 1e9 if way in ("dense", "complete") else 0.0)
    monkeypatch.setattr(mml_engine, "BY_ITEM_FROM", 1e9 if way == "by entries" else 0.0)
    rng = np.random.default_rng([11, len(way), len(moved)])
    U, K, N = (12, 11, 1000) if way == "complete" else (40, 5, 1500)
    data, tau = pcm_ratings(rng, U, K, N, None if way == "complete" else 15, 1.5)
    weight = rng.choice([1.0, 4.0], N) if way == "weighted" else None
    tau1 = tau + np.arange(K)[None, :] * (rng.normal(0, 0.05, U)[:, None] if moved == "a step" else 3.0)
    ls1 = np.log(1.5) + (0.02 if moved == "a step" else 0.0)

    def windowed(at_least):
        monkeypatch.setattr(mml_engine, "INFO_WINDOWS_FROM", at_least)
        eng = GridEngine(*data, U, K, 151, weight=weight)
        if way == "designs first":   # (an information before any windows: its designs in their own order)
            eng.evaluate(tau, np.log(1.5), level=2)
        eng.evaluate(tau, np.log(1.5))   # the posteriors' places
        assert eng._windows() is not None
        return eng, eng.evaluate(tau1, ls1, level=2)
    eng, got = windowed(0)
    assert any(key[0] == "chunk" for key in eng._static) and (eng.window_misses > 0) == (moved == "far")
    assert isinstance(eng.items_dense, np.ndarray) == (way in ("dense", "complete"))
    assert (eng.design_blocks is not None) == (way == "complete")
    if way != "complete":
        assert (eng.design_groups()[0] is not None) == (way == "designs first")
    ref = GridEngine(*data, U, K, 151, weight=weight).evaluate(tau1, ls1, level=2)
    H = ref.H.dense()
    assert np.abs(H).max() > 100.0   # (a real information)
    assert got.ll == pytest.approx(ref.ll, rel=1e-13)
    np.testing.assert_allclose(got.g, ref.g, rtol=0, atol=1e-10 * np.abs(ref.g).max())
    np.testing.assert_allclose(got.H.dense(), H, rtol=0, atol=1e-10 * np.abs(H).max())
    np.testing.assert_allclose(got.H_em.dense(), ref.H_em.dense(), rtol=0, atol=1e-10 * np.abs(H).max())
    # under INFO_WINDOWS_FROM ratings (every file the tests compare with R, mirt, psychotools): the whole grid's
    eng, small = windowed(data[0].size + 1)
    assert not any(key[0] == "chunk" for key in eng._static)
    assert small.ll == ref.ll
    np.testing.assert_array_equal(small.H.dense(), H)
    np.testing.assert_array_equal(small.g, ref.g)


def test_a_first_evaluation_takes_windows_from_its_guide_s_posteriors_and_the_whole_grid_s_numbers(monkeypatch):
    """Every paper's first evaluation in a fit a sample steers (the sample its ``guide``) takes windows
    from the sample's last posteriors, each pattern's guessed from those of the sample's patterns with as
    many ratings and the same total (21 of 200 raters a paper, 1M ratings: 0.062 s where the whole grid
    took 0.097): log L, gradient and moments the whole grid's (to rounding) after a step, no chunk done
    again; papers with a number of ratings the sample has not (8 here) or a total beyond its are on the
    whole grid."""
    monkeypatch.setattr(mml_engine, "WINDOW_CHUNK", 64)
    rng = np.random.default_rng(5)
    U, K, N = 15, 5, 1200
    paper, item, _ = random_design(rng, U, K, N, lambda rng: U)
    keep = (paper >= 40) | (item < 8)   # papers 0-39: 8 ratings each
    paper, item = paper[keep], item[keep]
    theta = rng.normal(0, 1.5, N)
    tau = np.c_[np.zeros(U), np.cumsum(rng.normal(0, 0.7, (U, K - 1)), axis=1)]
    score = np.array([(theta[p] > tau[u, 1:] - 0.5 * np.arange(1, K) + rng.normal(0, 1, K - 1)).sum()
                      for p, u in zip(paper, item)])
    tau1 = tau + np.arange(K)[None, :] * rng.normal(0, 0.05, U)[:, None]
    sel = (paper % 4 == 1) & (paper >= 40)
    guide = GridEngine(paper[sel], item[sel], score[sel], U, K, 301)
    guide.evaluate(tau, 0.4)
    eng = GridEngine(paper, item, score, U, K, 301)
    eng.guide = guide
    got = eng.evaluate(tau1, 0.42, level=1, moments=True)
    assert eng._order is not None and eng.window_misses == 0 and eng.guide is None   # windows, all held
    few = np.flatnonzero(np.asarray(eng.cells.sum(axis=1)).ravel() == 8)
    assert np.isin(few, eng._order[0][-60:]).all()   # (guessed nan: sorted last, their chunks on the whole grid)
    ref = GridEngine(paper, item, score, U, K, 301).evaluate(tau1, 0.42, level=1, moments=True)
    assert got.ll == pytest.approx(ref.ll, rel=1e-13)
    np.testing.assert_allclose(got.g, ref.g, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(got.eap, ref.eap, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.eap_sd, ref.eap_sd, rtol=1e-10)


def test_an_engine_near_the_optimum_narrows_its_windows_by_the_posteriors_last_move(monkeypatch):
    """An engine with ``window_tail`` NEAR_TAIL (every paper's in a fit a sample steers) reaches TAIL + twice
    the largest move of a posterior at its last evaluation (sds), between NEAR_TAIL and WINDOW_TAIL: after a
    small step its windows hold fewer cells than WINDOW_TAIL's, and the numbers are the whole grid's (the
    RSM at 21 of 200 raters a paper, 1M ratings, moved 4.9 sds at its first evaluations, where a fixed
    NEAR_TAIL did 44 of 47 chunks again)."""
    monkeypatch.setattr(mml_engine, "WINDOW_CHUNK", 64)
    rng = np.random.default_rng(7)
    U, K, N = 15, 5, 1200
    paper, item, score = random_design(rng, U, K, N, lambda rng: U)
    tau = np.c_[np.zeros(U), np.cumsum(rng.normal(0, 0.7, (U, K - 1)), axis=1)]
    step = np.arange(K)[None, :] * rng.normal(0, 0.01, U)[:, None]
    eng = GridEngine(paper, item, score, U, K, 301)
    eng.window_tail = mml_engine.NEAR_TAIL
    eng.evaluate(tau, 0.4)
    assert eng._moved == np.inf   # (no windows yet: unknown)

    def cells():
        return sum(rows.size * (qb - qa) for _, rows, qa, qb in eng._windows())
    eng.evaluate(tau + step, 0.4, level=1)
    moved = eng._moved
    assert 0 < moved < 0.5 * (mml_engine.WINDOW_TAIL - mml_engine.NEAR_TAIL)
    narrow = cells()
    eng._moved = np.inf
    assert narrow < 0.9 * cells()   # (WINDOW_TAIL's)
    eng._moved = moved
    got = eng.evaluate(tau + 2 * step, 0.4, level=1, moments=True)
    assert eng.window_misses == 0
    ref = GridEngine(paper, item, score, U, K, 301).evaluate(tau + 2 * step, 0.4, level=1, moments=True)
    assert got.ll == pytest.approx(ref.ll, rel=1e-13)
    np.testing.assert_allclose(got.g, ref.g, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(got.eap, ref.eap, rtol=0, atol=1e-12)


def test_a_pattern_whose_shift_bound_underflows_is_shifted_by_its_largest_term():
    """Each pattern's posterior is shifted by a bound of its largest log term (the sum of its cells'
    largest: no pass over patterns x nodes); a paper of 600 ratings 0 of item A and 600 ratings 1 of
    item B (each cell largest at the other end of the grid) lies 830 below that bound, where exp
    underflows, and is shifted by its largest term instead: log L, gradient and moments as a direct
    log-sum-exp over the nodes (the other paper, of two ratings, through the bound)."""
    from scipy.special import expit, logsumexp

    paper = np.r_[np.zeros(1200, dtype=np.int64), 1, 1]
    item = np.r_[np.zeros(600, dtype=np.int64), np.ones(600, dtype=np.int64), 0, 1]
    score = np.r_[np.zeros(600, dtype=np.int64), np.ones(600, dtype=np.int64), 1, 0]
    tau = np.zeros((2, 2))
    eng = GridEngine(paper, item, score, 2, 2, 61)
    ev = eng.evaluate(tau, np.log(1.5), level=1, moments=True)
    theta = 1.5 * eng.z
    lp1 = np.log(expit(theta))     # P(score 1) of either item (tau 0)
    lp0 = np.log(expit(-theta))
    L = np.vstack([600 * lp0 + 600 * lp1, lp1 + lp0]) + eng.logw
    assert L[0].max() < 600 * 2 * lp1.max() - 700   # the bound is that far above: exp underflows there
    assert ev.ll == pytest.approx(logsumexp(L, axis=1).sum(), rel=1e-13)
    post = np.exp(L - logsumexp(L, axis=1)[:, None])
    np.testing.assert_allclose(ev.eap[eng.pattern], post @ theta, atol=1e-12)
    g = 0.0   # d log L / d tau[0, 1]: -(n1 - sum_q post P(1)) of item 0's ratings, both papers
    for p, (n0, n1) in enumerate([(600, 0), (0, 1)]):
        g += -(n1 - (n0 + n1) * post[p] @ np.exp(lp1))
    assert ev.g[0] == pytest.approx(g, rel=1e-10)


def class_designs(rng, K):
    """Designs whose papers share items and totals but not scores: a complete panel of 6 raters, a
    rubric (2 of 4 raters a paper x 3 criteria, items rater x criterion), 2 of 5 raters a paper, and
    2 of 4 raters with one of them scoring the paper twice (the same item twice)."""
    def make(N, items_of):
        paper, item = [], []
        for p in range(N):
            its = items_of(p)
            paper += [p] * len(its)
            item += list(its)
        paper, item = np.array(paper), np.array(item)
        theta = rng.normal(0, 1, N)[paper]
        score = np.clip(np.rint(theta + (K - 1) / 2 + rng.normal(0, 0.8, paper.size)), 0, K - 1).astype(np.int64)
        return paper, item, score

    pick = (lambda n, k: (lambda p: np.sort(rng.choice(n, k, replace=False))))
    return {"complete": (6, make(150, lambda p: range(6))),
            "rubric": (12, make(150, lambda p: (pick(4, 2)(p)[:, None] * 3 + np.arange(3)).ravel())),
            "2 of 5": (5, make(200, pick(5, 2))),
            "a rater twice": (4, make(200, lambda p: np.r_[pick(4, 2)(p), pick(4, 2)(p)[:1]]))}


@pytest.mark.parametrize("K", [2, 4])
@pytest.mark.parametrize("shape", ["complete", "rubric", "2 of 5", "a rater twice"])
def test_classes_give_every_paper_s_log_l_gradient_and_hessians(shape, K):
    """Papers with the same items and total score are one class (a Rasch model's posterior depends on
    nothing else), computed from one of its papers: log L (with the class's constant), its gradient
    (the observed counts every paper's) and the Louis and complete-data Hessians are those of every
    paper summed, each its own engine (so its own pattern), to 1e-10, and the posterior moments are
    each paper's own (here the classes are fewer than the patterns: 7 of 50 to 30 of 40); with weights
    (a sample's papers, each standing for 1 or k), each paper's terms times its weight."""
    rng = np.random.default_rng([K, len(shape)])
    U, (paper, item, score) = class_designs(rng, K)[shape]
    tau = np.c_[np.zeros(U), np.cumsum(rng.normal(0, 0.8, (U, K - 1)), axis=1)]
    ls = 0.1
    eng = GridEngine(paper, item, score, U, K, 41)
    ev = eng.evaluate(tau, ls, level=2, moments=True)
    weight = rng.choice([1.0, 3.0], paper.max() + 1)   # (a sample's papers: each standing for 1 or k)
    wev = GridEngine(paper, item, score, U, K, 41, weight=weight).evaluate(tau, ls, level=2)
    n_patterns = len({tuple(sorted(zip(item[paper == p], score[paper == p]))) for p in np.unique(paper)})
    assert eng.N < n_patterns
    ll, g, H, Hem = 0.0, 0.0, 0.0, 0.0
    w = dict(ll=0.0, g=0.0, H=0.0, Hem=0.0)
    for p in np.unique(paper):
        k = paper == p
        one = GridEngine(np.zeros(k.sum(), np.int64), item[k], score[k], U, K, 41).evaluate(tau, ls, level=2, moments=True)
        ll, g, H, Hem = ll + one.ll, g + one.g, H + one.H.dense(), Hem + one.H_em.dense()
        for name, x in (("ll", one.ll), ("g", one.g), ("H", one.H.dense()), ("Hem", one.H_em.dense())):
            w[name] = w[name] + weight[p] * x
        assert ev.eap[eng.pattern[p]] == pytest.approx(one.eap[0], abs=1e-12)
        assert ev.eap_sd[eng.pattern[p]] == pytest.approx(one.eap_sd[0], abs=1e-12)
    assert ev.ll == pytest.approx(ll, rel=1e-12)
    scale = np.abs(H).max()
    np.testing.assert_allclose(ev.g, g, rtol=0, atol=1e-10 * np.abs(g).max())
    np.testing.assert_allclose(ev.H.dense(), H, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(ev.H_em.dense(), Hem, rtol=0, atol=1e-10 * scale)
    # papers weighted: each paper's terms times its weight
    assert wev.ll == pytest.approx(w["ll"], rel=1e-12)
    np.testing.assert_allclose(wev.g, w["g"], rtol=0, atol=1e-10 * np.abs(w["g"]).max())
    np.testing.assert_allclose(wev.H.dense(), w["H"], rtol=0, atol=1e-10 * np.abs(w["H"]).max())
    np.testing.assert_allclose(wev.H_em.dense(), w["Hem"], rtol=0, atol=1e-10 * np.abs(w["H"]).max())
    # the observed counts are every rating's, the classes' ratings those of papers of theirs
    np.testing.assert_array_equal(eng.n_obs.ravel(), np.bincount(item * K + score, minlength=U * K))
    cls, it, sc = eng.pattern_ratings()
    first = np.array([np.flatnonzero(eng.pattern == c)[0] for c in range(eng.N)])
    for c in range(eng.N):
        k = paper == eng.papers[first[c]]
        assert sorted(zip(it[cls == c], sc[cls == c])) == sorted(zip(item[k], score[k]))


@pytest.mark.parametrize("shape", SHAPES)
def test_a_gradient_gives_the_complete_data_hessian_of_the_information(shape):
    """A level-1 evaluation (the gradient) gives the expected complete-data Hessian (EM's) that the
    information gives (the same formula, :func:`mml_engine.complete_data_hessian`, from the same
    expected ratings per item and node): what scales a sample's information to every paper's
    (:meth:`.mml._Objective.scaled_to_complete`) at no cost of an information."""
    rng = np.random.default_rng([7, len(shape)])
    U, K, N = 9, 4, 150
    data = random_design(rng, U, K, N, SHAPES[shape](U))
    tau = np.c_[np.zeros(U), np.cumsum(rng.normal(0, 1, (U, K - 1)), axis=1)]
    eng = GridEngine(*data, U, K, 21)
    one, two = eng.evaluate(tau, 0.2, level=1), eng.evaluate(tau, 0.2, level=2)
    assert one.H is None and one.H_em is not None
    np.testing.assert_allclose(one.H_em.dense(), two.H_em.dense(), rtol=1e-12, atol=1e-12 * np.abs(two.H_em.dense()).max())
    em = two.H_em.dense()
    assert np.all(np.linalg.eigvalsh(em[:-1, :-1]) <= 1e-9) and em[-1, -1] < 0   # negative semidefinite
    assert not em[:-1, -1].any()                                                  # nothing between tau and log sigma


def _patterns_by_dict(paper, cell, K=None):
    """paper_patterns' contract written out per paper: patterns grouped by number of ratings
    (ascending), numbered in the lexicographic order of each paper's sorted cells (with K: of its
    sorted items and total score), a pattern's cells those of its lowest-numbered paper."""
    cells = {}
    for p, c in zip(paper.tolist(), cell.tolist()):
        cells.setdefault(p, []).append(c)
    papers = sorted(cells)
    key = {p: (len(cells[p]), tuple(sorted(cells[p])) if K is None else
               (tuple(sorted(c // K for c in cells[p])), sum(c % K for c in cells[p]))) for p in papers}
    keys = sorted(set(key.values()))
    rep = {}
    for p in papers:
        rep.setdefault(key[p], sorted(cells[p]))
    return papers, [keys.index(key[p]) for p in papers], [rep[k] for k in keys], [
        sum(key[p] == k for p in papers) for k in keys]


@pytest.mark.parametrize("K", [None, 3])
def test_paper_patterns_of_shuffled_ratings_of_mixed_lengths(K):
    # ratings in no order (not by paper, a paper's cells in any order), papers of 1-4 ratings
    # (an item rated twice by some), sparse paper numbers
    rng = np.random.default_rng(5)
    n = rng.integers(1, 5, 300)
    paper = np.repeat(rng.choice(10_000, n.size, replace=False), n)
    cell = rng.integers(0, 4, paper.size) * 3 + rng.integers(0, 3, paper.size)
    order = rng.permutation(paper.size)
    paper, cell = paper[order], cell[order]
    papers, pattern, groups = mml_engine.paper_patterns(paper, cell, 12, K=K)
    want_papers, want_pattern, want_cells, want_count = _patterns_by_dict(paper, cell, K)
    assert papers.tolist() == want_papers and pattern.tolist() == want_pattern
    assert [row for R, _ in groups for row in R.tolist()] == want_cells
    assert [c for _, cnt in groups for c in cnt.tolist()] == want_count
    assert len(set(want_pattern)) < 0.9 * len(want_papers)   # papers do share patterns


def test_posterior_expectations_of_the_nodes_are_the_evaluations_posterior_moments():
    """An evaluation's posterior expectations (``G``) of z and z^2 are the posterior means and second
    moments it gives (EAP, EAP sd), and of 1 is 1: the expectations the paper SEs of MML/MFRM take
    of the fair score (``MarginalRaterModel.fair_score_sd``); and they do not change the rest."""
    rng = np.random.default_rng(32)
    U, K = 7, 4
    paper, item, score = random_design(rng, U, K, 300, lambda r: int(r.integers(1, 5)))
    tau = np.c_[np.zeros(U), np.cumsum(rng.normal(0, 1, (U, K - 1)), axis=1)]
    eng = GridEngine(paper, item, score, U, K, 61)
    ev = eng.evaluate(tau, np.log(1.3), moments=True)
    sigma = 1.3
    with_G = eng.evaluate(tau, np.log(1.3), moments=True, G=np.c_[np.ones(eng.Q), sigma * eng.z, (sigma * eng.z) ** 2])
    assert ev.posterior is None and with_G.ll == ev.ll
    np.testing.assert_array_equal(with_G.eap, ev.eap)
    E = with_G.posterior
    np.testing.assert_allclose(E[:, 0], 1.0, rtol=1e-12)
    np.testing.assert_allclose(E[:, 1], ev.eap, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.sqrt(E[:, 2] - E[:, 1] ** 2), ev.eap_sd, rtol=1e-8)


@pytest.mark.parametrize("bases", [[7], [200] * 3 + [16], [1 << 20] * 2, [3, 1 << 40, 5, 1 << 30], [200] * 21 + [106]])
def test_unique_rows_are_numpys_unique_rows(bases):
    # one key (by a table or by radix passes) and several (16-bit passes, column by column), rows often repeated
    rng = np.random.default_rng(len(bases))
    for n in (0, 1, 50, 3000):
        R = np.column_stack([rng.integers(0, min(b, 4) if rng.random() < 0.5 else b, n) for b in bases]).reshape(n, len(bases))
        first, inv, cnt = mml_engine.unique_rows(R, bases)
        _, want_first, want_inv, want_cnt = np.unique(R, axis=0, return_index=True, return_inverse=True,
                                                      return_counts=True)
        assert first.tolist() == want_first.tolist() and inv.tolist() == want_inv.ravel().tolist()
        assert cnt.tolist() == want_cnt.tolist()
        key = R[:, 0]
        for size in (bases[0], 1000 * bases[0]):
            ukey, kinv = mml_engine.distinct_keys(key, size)
            want_key, want_kinv = np.unique(key, return_inverse=True)
            assert ukey.tolist() == want_key.tolist() and kinv.tolist() == want_kinv.ravel().tolist()


@pytest.mark.parametrize("n", range(1, 10))
def test_rows_sorted_by_columns_are_numpys_sort(n):
    # up to SORT_NETWORK columns by compare-exchanges of whole columns, more by numpy's row sort
    rng = np.random.default_rng(n)
    R = rng.integers(0, 5 if n % 2 else 1000, (500, n))
    Rt = R.T.copy()
    mml_engine._sort_rows(Rt)
    assert Rt.T.tolist() == np.sort(R, axis=1).tolist()


def test_counts_matrix_sums_an_entry_a_row_has_twice():
    # rows [1, 1, 4], [], [2], [0, 3, 3]: the twice-given entries summed; rows without any taken as they are
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    indices = np.array([1, 1, 4, 2, 0, 3, 3])
    indptr = np.array([0, 3, 3, 4, 7])
    m = mml_engine._counts_matrix(data, indices, indptr, (4, 5))
    assert m.toarray().tolist() == [[0, 3, 0, 0, 3], [0] * 5, [0, 0, 4, 0, 0], [5, 0, 0, 13, 0]]
    assert m.has_canonical_format
    # an entry equal to the next row's first is not one given twice
    m = mml_engine._counts_matrix(np.ones(4), np.array([0, 2, 2, 3]), np.array([0, 2, 4]), (2, 4))
    assert m.toarray().tolist() == [[1, 0, 1, 0], [0, 0, 1, 1]] and m.nnz == 4


def test_low_quantile_is_numpys_to_the_bit(monkeypatch):
    """``low_quantile`` (each evaluation's 1% quantile of the posterior sds, from the few smallest values)
    is ``np.quantile``'s number to the bit: on random, tied, sorted and reversed values, with a nan (nan) or
    an infinity among them, few values or many, at 0.1%, 1% and 5%; and it takes the few-values path where
    the values are many (the bound from a strided sample holds the two it interpolates between)."""
    rng = np.random.default_rng(32)
    for t in range(300):
        n = int(rng.integers(1, 60_000)) if t % 3 else int(rng.integers(1, 300))
        kind = t % 5
        x = rng.lognormal(-1, 0.4, n)
        if kind == 1:
            x = np.round(x, 2)                  # ties
        elif kind == 2:
            x = np.sort(x)[::-1].copy()         # the smallest last
        elif kind == 3:
            x[rng.integers(0, n)] = np.nan if t % 2 else np.inf
        elif kind == 4:
            x[: n - n // 100] = 0.3             # a run of equal values above the quantile
        for q in (0.001, 0.01, 0.05):
            want = np.quantile(x, q)
            got = mml_engine.low_quantile(x, q)
            assert np.float64(got).tobytes() == np.float64(want).tobytes(), (n, kind, q, got, want)
    x = rng.lognormal(-1, 0.4, 200_000)
    calls = []
    quantile = np.quantile
    monkeypatch.setattr(np, "quantile", lambda a, *k, **kw: calls.append(np.size(a)) or quantile(a, *k, **kw))
    assert mml_engine.low_quantile(x, 0.01) == quantile(x, 0.01)
    assert calls == [2]   # (np.quantile of the two values, not of every one)
