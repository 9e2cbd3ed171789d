"""The Monte Carlo fast path (issue 11) gives the per-replication numbers bit for bit.

A batch of replications of one cell (:func:`generate_batch`) must hold exactly the data
sets :func:`generate_set` makes one at a time, :func:`paper_scores` exactly the paper
scores each estimator's ``fit_transform`` gives per replication (``==``, not close: the
merged Monte Carlo files must keep their bytes), and :func:`chunk_rows` exactly the rows
of :func:`replicate`.  Cells: one rater, two, 2+ (a third rater on discrepant papers),
three; scales 0-5 and 0-9; three quality shapes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ratercal_cli.config import load_config
from ratercal_cli.generators.batched import generate_batch
from ratercal_cli.methods import STUDY_METHODS, make_method
from ratercal_cli.methods.batched import batched_codes, paper_scores
from ratercal_cli.montecarlo.replicate import chunk_rows, replicate
from ratercal_cli.montecarlo.spec import StudySpec

REPO = Path(__file__).resolve().parents[2]
CFG = load_config(REPO / "configs" / "corrected.yaml")
SPEC = StudySpec.from_config(CFG)
# 1 rater 0-5 normal; 2 raters 0-9 positive; 3 raters 0-5 negative; 2+ 0-9 normal; 2+ 0-5 negative
CELLS = ["1151", "2192", "3153", "0191", "0153"]
REPS = (3, 4, 5, 6)


def _batch(code, reps=REPS):
    cell = CFG.cell(code)
    return cell, generate_batch(cell, SPEC.generator, SPEC.seed, reps, SPEC.steps_for(cell.max_score),
                                SPEC.linear or None, SPEC.true_score, SPEC.n_raters)


ALL_CELLS = [c.code for c in CFG.cells]
#: the PCM's fits cost 10-50 ms a data set: every cell of it is a slow test
WITHOUT_PCM = [m for m in STUDY_METHODS if m != "PCM"]


def assert_batched_is_per_replication(batch, methods, variants=("faithful", "corrected")):
    """Every method's batched paper scores (or failures: type and message) are the estimator's
    on each replication alone; returns how many replications were compared."""
    checked = 0
    for variant in variants:
        for method in methods:
            if batch.per_paper < 2 and make_method(method, variant).needs_multiple_raters:
                continue
            P, failed = paper_scores(method, variant, batch)
            for b in range(batch.size):
                try:
                    want = make_method(method, variant).fit_transform(batch.ratings(b)).paper
                except Exception as exc:   # noqa: BLE001 - the estimator's own failure is the reference
                    assert (type(failed[b]), str(failed[b])) == (type(exc), str(exc)), (method, variant, b)
                    assert np.isnan(P[b]).all()
                    continue
                assert b not in failed, (method, variant, b)
                assert P[b].tobytes() == want.tobytes(), (method, variant, b)
                checked += 1
    return checked


@pytest.mark.parametrize("code", ALL_CELLS)
def test_every_cell_batched_equals_the_estimators(code):
    """Every cell of configs/corrected.yaml, two replications, every study method but the PCM
    (below) in both variants."""
    _, batch = _batch(code, (0, 1))
    assert assert_batched_is_per_replication(batch, WITHOUT_PCM) >= 2 * 2 * (6 if code[0] == "1" else 9)


@pytest.mark.parametrize("code", ["3153", "0191", "0153"])
def test_batched_pcm_equals_the_estimator(code):
    _, batch = _batch(code, REPS[:2])
    assert assert_batched_is_per_replication(batch, ["PCM"]) == (0 if code[0] == "1" else 4)


@pytest.mark.slow
@pytest.mark.parametrize("code", ALL_CELLS)
def test_every_cell_batched_pcm_equals_the_estimator(code):
    _, batch = _batch(code, (0, 1))
    assert assert_batched_is_per_replication(batch, ["PCM"]) == (0 if code[0] == "1" else 4)


def _other(rater, avoid, choices):
    """Per paper, the first rater of ``choices`` not among the paper's raters ``avoid``."""
    out = np.full(rater.shape[0], -1)
    for c in reversed(choices):
        out = np.where((avoid != c).all(axis=-1), c, out)
    return out


def test_edge_cases_batched_equal_the_estimators():
    """Replications made to reach the estimators' rare branches: a rater whose ratings are all
    equal (LI's zero-SD rule) and one at the floor of the scale (EQP's empty categories, RAS's
    zero sums); a rater with one rating (a thin rater: the corrected estimators leave it out of
    their fit, so that replication is fitted alone) and one with none."""
    from ratercal_cli.generators.batched import CellBatch

    for code in ("2151", "0551"):
        cell, batch = _batch(code, (0, 1, 2))
        rater, score = batch.rater.copy(), batch.score.copy()
        score[0][rater[0] == 0] = 3
        score[0][rater[0] == 1] = 0
        # replication 1: rater 8 keeps its first paper only; replication 2: rater 5 has none
        for b, gone, keep_first in ((1, 8, True), (2, 5, False)):
            papers = np.flatnonzero((rater[b] == gone).any(axis=1))
            papers = papers[1:] if keep_first else papers
            sub = _other(rater[b][papers], rater[b][papers], (7, 6, 4, 3))
            r = rater[b][papers]
            rater[b][papers] = np.where(r == gone, sub[:, None], r)
        assert (rater[1] == 8).sum() == 1 and not (rater[2] == 5).any()
        edge = CellBatch(cell, batch.reps, batch.n_raters, rater, score, batch.true)
        from ratercal_cli.methods.linear import LinearEquating

        assert list(LinearEquating("faithful").fit(edge.ratings(0)).zero_sd_) == [0, 1]
        assert list(make_method("EQP", "corrected").fit(edge.ratings(1)).thin_raters_) == [8]
        assert assert_batched_is_per_replication(edge, STUDY_METHODS) >= 3 * 2 * 9


def test_the_study_methods_have_batched_forms():
    assert {"NO", "MN", "TMN", "LI", "TLI", "EQP", "PCM"} <= set(batched_codes())


@pytest.mark.parametrize("code", ["1193", "2151", "0591"])
def test_chunk_rows_are_replicates_rows(code):
    cell = CFG.cell(code)
    rows = chunk_rows(SPEC, cell, 7, 9)
    assert rows == [replicate(SPEC, cell, rep) for rep in (7, 8)]
    # one-rater: 2 variants x 6 methods, no shrinkage (no within-paper variance); else x 10 methods x 3 levels
    assert len(rows[0]) == (12 if code[0] == "1" else 60)


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
def test_replications_off_the_batched_path_fail_or_refit_as_the_estimator_does(variant):
    """A replication whose raters fall into two unlinked groups (papers 0-49 scored by raters
    1 and 2, papers 50-99 by raters 3 and 4) beside an ordinary one: each method gives the
    estimator's paper scores for the ordinary one and, for the split one, its paper scores
    or its exception (type and message)."""
    from ratercal_cli.generators.batched import CellBatch

    cell, batch = _batch("2151", reps=(0, 1))
    rater = batch.rater.copy()
    rater[1, :50] = (0, 1)
    rater[1, 50:] = (2, 3)
    split = CellBatch(cell, batch.reps, batch.n_raters, rater, batch.score, batch.true)
    failures = 0
    for method in STUDY_METHODS:
        P, failed = paper_scores(method, variant, split)
        for b in range(2):
            try:
                want = make_method(method, variant).fit_transform(split.ratings(b)).paper
            except Exception as exc:   # noqa: BLE001 - the estimator's own failure is the reference
                assert b in failed, (method, b)
                assert (type(failed[b]), str(failed[b])) == (type(exc), str(exc))
                assert np.isnan(P[b]).all()
                failures += 1
                continue
            assert b not in failed
            assert np.array_equal(P[b], want, equal_nan=True), (method, variant, b)
    assert failures >= (4 if variant == "corrected" else 2)


@pytest.mark.parametrize("quality", ["mle", "wle"])
def test_ml_quality_batch_is_ml_quality_per_replication(quality):
    """The batched person-quality solver against :func:`pcm.ml_quality`, with each
    replication's own fitted steps and category range (WLE too, which the study does not use)."""
    from ratercal_cli.methods.pcm import PartialCreditModel, ml_quality
    from ratercal_cli.methods.pcm_batched import ml_quality_batch

    _, batch = _batch("0191")
    fits = [PartialCreditModel("corrected").fit(batch.ratings(b)) for b in range(batch.size)]
    steps = np.stack([f.steps_ for f in fits])
    lo = np.array([f.category_range_[0] for f in fits])
    hi = np.array([f.category_range_[1] for f in fits])
    theta = ml_quality_batch(batch, steps, lo, hi, quality=quality)
    for b, f in enumerate(fits):
        want = ml_quality(batch.ratings(b), f.steps_, lo[b], hi[b], quality=quality)
        assert np.array_equal(theta[b], want)
    assert np.isfinite(theta).all() and theta.std() > 0.5


def test_pair_steps_batch_are_the_estimators():
    """Faithful PAIR sweeps of a stack of replications and corrected PAIR Newton steps, batched,
    against the estimator's on each replication alone."""
    from ratercal_cli.methods.pcm import PartialCreditModel, faithful_pair
    from ratercal_cli.methods.pcm_batched import corrected_steps_batch, pair_counts_batch

    _, batch = _batch("3193")
    d, sweeps, _ = faithful_pair(pair_counts_batch(batch, self_pairs=True))     # the stack of replications
    assert sweeps.shape == (batch.size,)
    steps, lo, hi, ok = corrected_steps_batch(batch)
    assert ok.all()
    for b in range(batch.size):
        faithful = PartialCreditModel("faithful").fit(batch.ratings(b))
        corrected = PartialCreditModel("corrected").fit(batch.ratings(b))
        assert np.array_equal(d[b], faithful._d32_)
        assert np.array_equal(steps[b], corrected.steps_)
        assert (lo[b], hi[b]) == corrected.category_range_


def test_faithful_search_once_per_distinct_paper_is_the_search_of_every_paper():
    """faithful_quality searches each distinct (raters, scores) row once: the same float32
    CEN, bit for bit, as the bracket search run on every paper (1-rater 500-paper cell: over 80%
    of its papers repeat another; 2 raters of 0-9: a few)."""
    from ratercal_cli.methods.pcm import FAITHFUL_EPS, _faithful_search, distinct_rows, faithful_pair, faithful_quality
    from ratercal_cli.methods.pcm_batched import pair_counts_batch

    for code in ("1551", "2191"):
        _, batch = _batch(code, (0, 1))
        B, n, nr = batch.size, batch.n_papers, batch.n_raters
        d = faithful_pair(pair_counts_batch(batch, self_pairs=True))[0].reshape(B * nr, -1)
        rows = (np.arange(B)[:, None, None] * nr + batch.rater).reshape(B * n, -1)
        scores = batch.score.reshape(B * n, -1)
        first, _ = distinct_rows(rows, scores)
        assert first.size < (0.2 if code == "1551" else 1.0) * B * n
        cen, it = faithful_quality(d, rows, scores)
        every, it_every = _faithful_search(d, rows, scores, FAITHFUL_EPS)
        assert cen.tobytes() == every.tobytes() and it == it_every


def test_largest_components_by_label_propagation_are_scipys():
    """The comparison components of the corrected PCM's batched PAIR (label propagation) are
    scipy's connected components, on random sparse graphs with ties and isolated nodes."""
    from scipy.sparse.csgraph import connected_components

    from ratercal_cli.methods.pcm_batched import _largest_components

    rng = np.random.default_rng(7)
    B, K = 40, 12
    g = rng.random((B, K, K)) < rng.uniform(0.02, 0.3, (B, 1, 1))
    g = g | g.transpose(0, 2, 1)
    g[:, np.arange(K), np.arange(K)] = False
    nodes = g.any(axis=2)
    main, unique = _largest_components(g, nodes, B, K)
    for b in range(B):
        _, lab = connected_components(g[b], directed=False)
        deg = g[b].sum(axis=1)
        w = np.bincount(lab, weights=np.where(nodes[b], deg, 0))
        best = np.flatnonzero(w == w[lab[nodes[b]]].max()) if nodes[b].any() else []
        assert unique[b] == (len(best) <= 1)
        if unique[b] and len(best):
            assert np.array_equal(main[b], lab == best[0])


def test_corrected_pcm_levels_batched_equal_the_estimator_with_a_thin_rater():
    """The corrected PCM's two levels (WLE and EAP fair scores) batched are the estimator's
    (:func:`.shrinkage.shrunk_papers`) bit for bit, also on a replication where a rater kept one
    rating (a thin rater: fitted alone)."""
    from ratercal_cli.generators.batched import CellBatch
    from ratercal_cli.methods.batched import paper_scores_by_shrinkage
    from ratercal_cli.methods.shrinkage import shrunk_papers

    cell, batch = _batch("2151", (0, 1))
    rater = batch.rater.copy()
    papers = np.flatnonzero((rater[1] == 8).any(axis=1))[1:]
    sub = _other(rater[1][papers], rater[1][papers], (7, 6, 4, 3))
    rater[1][papers] = np.where(rater[1][papers] == 8, sub[:, None], rater[1][papers])
    edge = CellBatch(cell, batch.reps, batch.n_raters, rater, batch.score, batch.true)
    got, failed = paper_scores_by_shrinkage("PCM", "corrected", edge, ("none", "kelley"))
    assert not failed
    for b in range(edge.size):
        est = make_method("PCM", "corrected")
        adj = est.fit_transform(edge.ratings(b))
        want = shrunk_papers(est, edge.ratings(b), adj.paper)
        assert list(est.thin_raters_) == ([8] if b == 1 else [])
        for s in ("none", "kelley"):
            assert got[s][b].tobytes() == want[s].tobytes(), (s, b)
        assert not np.array_equal(want["none"], want["kelley"])
