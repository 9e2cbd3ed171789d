"""Issue 13: the methods' memory grows with the ratings, not papers x raters x categories.

The block-wise and sparse computations must give what the whole arrays gave: to the bit
for PCM and CML (the same element-wise operations), to rounding for WLS's sparse solve
and the QR-reduced NNLS.  The sizes here are small; `make bench` (benchmarks/
bench_large_files.py) measures 1M and 5M ratings.
"""

import tracemalloc

import numpy as np
import pytest

from ratercal_cli.methods import make_method
from ratercal_cli.methods import quality as quality_mod
from ratercal_cli.methods import wls as wls_mod
from ratercal_cli.methods.pcm import F32, PartialCreditModel
from ratercal_cli.methods.quality import expected_score
from ratercal_cli.ratings import Ratings


def many_raters(n_papers=300, n_raters=40, seed=5, top=5):
    """Two of many raters per paper, scores from quality + severity + noise."""
    rng = np.random.default_rng(seed)
    paper = np.repeat(np.arange(n_papers), 2)
    r1 = rng.integers(0, n_raters, n_papers)
    r2 = (r1 + 1 + rng.integers(0, n_raters - 1, n_papers)) % n_raters
    rater = np.column_stack([r1, r2]).ravel()
    sev = rng.normal(0, 0.5, n_raters)
    q = rng.normal(top / 2, 1.0, n_papers)
    score = np.clip(np.rint(q[paper] + sev[rater] + rng.normal(0, 0.7, paper.size)), 0, top).astype(int)
    return Ratings(paper, rater, score, top, n_papers, n_raters)


@pytest.mark.parametrize("variant, quality", [("faithful", "mle"), ("corrected", "mle"), ("corrected", "wle")])
def test_pcm_blocks_equal_the_whole_array_to_the_bit(variant, quality):
    data = many_raters()
    m = PartialCreditModel(variant=variant, quality=quality)
    m.chunk_cells = 37   # a block of one quality: many blocks, uneven ends
    with np.errstate(all="ignore"):
        adj = m.fit_transform(data)
        sc = m.expected_scores(data)   # the whole (papers x raters) array, as before
    assert sc.shape == (data.n_papers, data.n_raters)
    np.testing.assert_array_equal(adj.rating, sc[data.paper, data.rater].astype(np.float64))
    if variant == "faithful":
        want = (np.cumsum(sc.astype(F32), axis=1, dtype=F32)[:, -1] / F32(sc.shape[1])).astype(np.float64)
    else:
        want = sc.mean(axis=1)
    np.testing.assert_array_equal(adj.paper, want)
    # papers with the same raters and scores share one quality: fewer qualities than papers
    assert np.unique(m.quality_).size < data.n_papers


@pytest.mark.parametrize("code", ["CML", "MML"])
def test_fair_scores_in_blocks_equal_the_whole_array(monkeypatch, code):
    """CML's and MML's fair scores (one function, quality.mean_expected_score) a few qualities
    at a time are the papers x raters x categories computation to the bit."""
    data = many_raters(n_papers=400, n_raters=12)
    m = make_method(code, "corrected").fit(data)
    monkeypatch.setattr(quality_mod, "FAIR_BLOCK_CELLS", 50)
    got = m.fair_scores(m.quality_)
    keep = np.isfinite(m.tau_).any(axis=1) if code == "CML" else np.isfinite(m.tau_).all(axis=1)
    np.testing.assert_array_equal(got, expected_score(m.quality_[:, None], m.tau_[keep]).mean(axis=-1))
    assert np.isfinite(got).all() and np.unique(m.quality_).size < data.n_papers
    grid = m.quality_[:40].reshape(8, 5)                  # any shape of qualities (the rater report's)
    np.testing.assert_array_equal(m.fair_scores(grid), expected_score(grid[..., None], m.tau_[keep]).mean(axis=-1))


def test_wls_sparse_solve_equals_the_dense_one(monkeypatch):
    data = many_raters(n_papers=500, n_raters=30)
    w = np.random.default_rng(1).uniform(0.5, 2.0, data.n_raters)
    dense = wls_mod._solve_additive(data, w)
    monkeypatch.setattr(wls_mod, "DENSE_CELLS", 0)
    sparse = wls_mod._solve_additive(data, w)
    for a, b in zip(dense, sparse):   # b, mu, leverages
        np.testing.assert_allclose(b, a, rtol=1e-11, atol=1e-12)
    assert 0 < sparse[2].min() and sparse[2].max() <= 1 + 1e-12


def test_three_ratings_per_paper_leverages_sparse_equal_dense(monkeypatch):
    rng = np.random.default_rng(2)
    n = 200
    paper = np.repeat(np.arange(n), 3)
    rater = np.concatenate([rng.choice(9, 3, replace=False) for _ in range(n)])
    data = Ratings(paper, rater, rng.integers(0, 6, 3 * n), 5, n, 9)
    w = rng.uniform(0.5, 2.0, 9)
    dense = wls_mod._solve_additive(data, w)
    monkeypatch.setattr(wls_mod, "DENSE_CELLS", 0)
    np.testing.assert_allclose(wls_mod._solve_additive(data, w)[2], dense[2], rtol=1e-11)


def test_pairwise_variances_qr_route_equals_the_direct_nnls(monkeypatch):
    data = many_raters(n_papers=4000, n_raters=40)
    direct, ok1 = wls_mod.pairwise_variances(data)
    monkeypatch.setattr(wls_mod, "TALL_ROWS", 10)   # 40 raters: up to 780 pairs, taken as tall
    qr, ok2 = wls_mod.pairwise_variances(data)
    assert ok1 and ok2
    np.testing.assert_allclose(qr, direct, rtol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("code, n_papers, n_raters", [("PCM", 30000, 100), ("CML", 30000, 60), ("WLS", 8000, 300)])
def test_memory_does_not_grow_as_papers_x_raters(monkeypatch, code, n_papers, n_raters):
    """Before issue 13 these held papers x raters (x categories) arrays, several at once
    (PCM: 30,000 x 100 x 6 doubles, 144 MB each; WLS: raters x papers and ratings x raters).
    With small blocks the peak is a few arrays over the ratings."""
    data = many_raters(n_papers=n_papers, n_raters=n_raters)
    if code == "WLS":   # raters x papers, and ratings x raters for the leverages
        whole = (data.n_papers + data.n_ratings) * data.n_raters * 8
    else:               # papers x raters x categories
        whole = data.n_papers * data.n_raters * (data.max_score + 1) * 8
    monkeypatch.setattr(PartialCreditModel, "chunk_cells", 1 << 12)
    monkeypatch.setattr(quality_mod, "FAIR_BLOCK_CELLS", 1 << 14)
    monkeypatch.setattr(wls_mod, "DENSE_CELLS", 1 << 12)
    tracemalloc.start()
    try:
        with np.errstate(all="ignore"):
            adj = make_method(code, "corrected").fit_transform(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.isfinite(adj.paper).all()
    assert peak < 0.5 * whole, f"{code}: peak {peak / 2**20:.0f} MiB of {whole / 2**20:.0f}"
