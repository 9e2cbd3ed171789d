"""PAIR-PCM fitted to a batch of replications at once (the Monte Carlo fast path, issue 11).

The functions here run :mod:`ratercal_cli.methods.pcm` on ``B`` replications of one cell
together and give the numbers its estimator gives one replication at a time, bit for bit:

* pair counts: one ``bincount`` over ``replication * size + cell`` (integers);
* faithful PAIR sweeps (PCM.BAS): the same float32 Jacobi sweep on a ``(B, K, K)`` stack,
  each replication stopping at its own sweep;
* paper qualities: the papers of all replications are the "papers" of one call of the
  per-paper solvers (each paper looks up its own replication's steps), so the bracket
  search of PCM.BAS and the corrected ML/WLE Newton steps (:mod:`.quality`, the solver
  CML and MML use too) run once for the batch.
"""

from __future__ import annotations

import numpy as np

from .pcm import (distinct_rows, faithful_expected, faithful_pair, faithful_quality, pair_newton,
                  stacked_pair_counts, step_pair_matrices)
from ..network import all_linked
from .quality import estimate_quality, expected_score, pcm_tau


def pair_counts_batch(batch, self_pairs):
    """:func:`~ratercal_cli.methods.pcm.pair_counts` of every replication:
    ``(B, nr, M+1, nr, M+1)`` int64."""
    return stacked_pair_counts(batch.rater, batch.score, batch.n_raters, batch.max_score + 1, self_pairs)


def faithful_pcm_papers(batch):
    """Paper scores of the faithful PCM (PCM.BAS) for every replication, ``(B, n)``."""
    B, n, nr = batch.size, batch.n_papers, batch.n_raters
    d, _, _ = faithful_pair(pair_counts_batch(batch, self_pairs=True))
    # every paper of every replication at once, each with its own replication's steps
    r_glob = (np.arange(B)[:, None, None] * nr + batch.rater).reshape(B * n, -1)
    cen, _ = faithful_quality(d.reshape(B * nr, -1), r_glob, batch.score.reshape(B * n, -1))
    _, paper = faithful_expected(d, cen.reshape(B, n))
    return paper.astype(np.float64)


# ----------------------------------------------------------------------------- corrected

def ml_quality_batch(batch, steps, lo, hi, bound=15.0, quality="wle", tol=1e-10, max_iter=100):
    """:func:`~ratercal_cli.methods.pcm.ml_quality` for every paper of every replication at
    once, each with its replication's ``steps`` ``(B, nr, M)`` and category range ``lo``,
    ``hi`` ``(B,)``: one call of :func:`.quality.estimate_quality` (the one person solver,
    which solves each paper as alone) with the papers and raters of all replications numbered
    globally (``b * n + paper``, ``b * nr + rater``).  Returns ``theta`` ``(B, n)``."""
    B, n, k = batch.rater.shape
    nr = steps.shape[1]
    tau = pcm_tau(steps, np.asarray(lo)[:, None], np.asarray(hi)[:, None]).reshape(B * nr, -1)
    rater = (np.arange(B)[:, None, None] * nr + batch.rater).reshape(B * n, k)
    score = batch.score.reshape(B * n, k)
    # papers of a replication with the same raters in the same order and the same scores
    # have the same quality: each distinct one is solved once
    first, inverse = distinct_rows(rater, score)
    if first is not None:
        rater, score = rater[first], score[first]
    papers = rater.shape[0]
    theta, _, _ = estimate_quality(np.arange(papers).repeat(k), rater.ravel(), score.ravel(), papers, tau,
                                   quality=quality, bound=bound, tol=tol,
                                   max_iter=max_iter, with_se=False)
    return (theta if first is None else theta[inverse]).reshape(B, n)


def _linked(batch):
    """Per replication: every rater with ratings linked to the others through shared
    papers (:func:`~ratercal_cli.network.require_connected` would not raise)."""
    B, n, k = batch.rater.shape
    nr = batch.n_raters
    adj = np.zeros((B, nr, nr), dtype=bool)
    bi = np.broadcast_to(np.arange(B)[:, None], (B, n))
    for p in range(k):
        for q in range(k):
            if p != q:
                adj[bi, batch.rater[:, :, p], batch.rater[:, :, q]] = True
    active = np.zeros((B, nr), dtype=bool)
    active[np.broadcast_to(np.arange(B)[:, None, None], batch.rater.shape), batch.rater] = True
    return all_linked(adj, active)


def _largest_components(graph, nodes, B, K):
    """Per replication, the nodes of the largest connected component of the undirected
    graph ``graph`` ``(B, K, K)`` among ``nodes`` (``(B, K)`` bool), weighted by degree as
    :func:`~ratercal_cli.methods.pcm._fitted_steps` weighs them; ``unique`` is False where two
    components tie (the estimator then fits the replication alone: it takes neither, :func:`.pcm._largest`).  Components by label
    propagation: every node takes the smallest label among itself and its neighbours until
    nothing changes (each component then carries the number of its first node)."""
    lab = np.broadcast_to(np.arange(K), (B, K)).copy()
    while True:
        new = np.minimum(lab, np.where(graph, lab[:, None, :], K).min(axis=2))
        if np.array_equal(new, lab):
            break
        lab = new
    rows = np.broadcast_to(np.arange(B)[:, None], (B, K))
    weights = np.zeros((B, K))
    np.add.at(weights, (rows, lab), np.where(nodes, graph.sum(axis=2), 0).astype(np.float64))
    w_node = np.where(nodes, np.take_along_axis(weights, lab, axis=1), -1.0)
    main = nodes & (w_node == w_node.max(axis=1)[:, None])
    # one component only: the nodes at the best weight all share a label
    first = np.take_along_axis(lab, np.argmax(main, axis=1)[:, None], axis=1)
    unique = np.all(~main | (lab == first), axis=1)
    return main & (lab == first), unique


def corrected_steps_batch(batch, smoothing=1.0, tol=1e-9, max_iter=100):
    """``steps_`` and ``category_range_`` of :meth:`PartialCreditModel._fit_corrected` for
    every replication (``smoothing > 0``: the steps fitted are those of the largest
    comparison component, so the estimability analysis is not needed for them).
    Returns ``(steps (B, nr, M), lo, hi, ok)``; ``ok`` False: fit that replication alone."""
    from .pcm import _impute_steps, _pseudo_counts, scorable_steps, used_range

    B, nr, m = batch.size, batch.n_raters, batch.max_score
    K = nr * m
    ok = _linked(batch)
    _, wins = step_pair_matrices(pair_counts_batch(batch, self_pairs=False))
    lo, hi = used_range(batch.score.reshape(B, -1), m)
    inside = scorable_steps(nr, m, lo, hi)
    wins_in = wins * inside[:, :, None] * inside[:, None, :]
    comp = (wins_in + wins_in.transpose(0, 2, 1)) > 0
    fitted, unique = _largest_components(comp, comp.any(axis=2), B, K)
    ok &= unique
    steps = np.zeros((B, nr, m))
    size = fitted.sum(axis=1)
    for kk in np.unique(size[ok]):
        rows = np.flatnonzero(ok & (size == kk))
        idx = np.nonzero(fitted[rows])[1].reshape(rows.size, kk)           # fitted steps, in order
        w = wins[rows[:, None, None], idx[:, :, None], idx[:, None, :]].astype(np.float64)
        if smoothing:
            w = w + _pseudo_counts(w, smoothing)
        est, _, _ = pair_newton(w, tol=tol, max_iter=max_iter)
        for i, b in enumerate(rows):
            values = np.full(K, np.nan)
            values[idx[i]] = est[i]
            steps[b] = _impute_steps(values.reshape(nr, m), fitted[b].reshape(nr, m), int(lo[b]), int(hi[b]))
    return steps, lo, hi, ok


def corrected_pcm_papers(batch, eap=False):
    """Paper scores of the corrected PCM for every replication: PAIR steps
    (:func:`corrected_steps_batch`), qualities (:func:`ml_quality_batch`) and expected
    scores of all replications at once; a replication off the batched path is fitted by
    the estimator.  Returns ``(P (B, n), {b: exception})``; with ``eap``, ``P`` is
    ``{"none": P, "kelley": the scores at the EAP}`` (the qualities by :func:`.pcm.eap_quality`,
    replication by replication on the replication's steps and WLEs, as the estimator calls it)."""
    from .base import FIT_FAILURES
    from .pcm import PartialCreditModel, eap_quality

    B, n = batch.size, batch.n_papers
    est = PartialCreditModel("corrected")
    steps, lo, hi, ok = corrected_steps_batch(batch, est.smoothing, est.tol, est.max_iter)
    failed = {}
    for b in np.flatnonzero(~ok):
        one = PartialCreditModel("corrected")
        try:
            one._fit_corrected(batch.ratings(b))
        except FIT_FAILURES as exc:
            failed[b] = exc
            continue
        steps[b] = one.steps_
        lo[b], hi[b] = one.category_range_
    theta = ml_quality_batch(batch, steps, lo, hi, bound=est.theta_bound, quality=est.quality)
    tau = pcm_tau(steps, lo[:, None], hi[:, None])                      # (B, nr, M+1)
    P = _mean_expected(theta, tau)
    for b in failed:
        P[b] = np.nan
    if not eap:
        return P, failed
    theta_eap = np.zeros((B, n))
    for b in range(B):
        if b not in failed:
            theta_eap[b] = eap_quality(batch.ratings(b), steps[b], int(lo[b]), int(hi[b]), theta[b])
    shrunk = _mean_expected(theta_eap, tau)
    for b in failed:
        shrunk[b] = np.nan
    return {"none": P, "kelley": shrunk}, failed


def _mean_expected(theta, tau):
    """The corrected PCM's paper scores ``(B, n)`` at qualities ``theta`` ``(B, n)``: the mean over
    the raters of the expected score under each replication's ``tau`` ``(B, nr, M+1)``, once per
    distinct quality of a replication, all replications at once."""
    B, n = theta.shape
    rep = np.repeat(np.arange(B), n)
    flat = theta.reshape(-1)
    bits = flat.view(np.int64)
    order = np.lexsort((bits, rep))
    rep_o, bits_o = rep[order], bits[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (rep_o[1:] != rep_o[:-1]) | (bits_o[1:] != bits_o[:-1])
    first = order[new]                                                  # one paper per distinct (b, theta)
    inverse = np.empty(order.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    sc = expected_score(flat[first][:, None], tau[rep[first]])          # (U, nr)
    return sc.mean(axis=1)[inverse].reshape(B, n)
