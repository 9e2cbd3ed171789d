"""PAIR-PCM fitted to a batch of replications at once (the Monte Carlo fast path, issue 11).

The functions here run :mod:`ratercal_cli.methods.pcm` on ``B`` replications of one cell
together and give the numbers its estimator gives one replication at a time, bit for bit:

* pair counts: one ``bincount`` over ``replication * size + cell`` (integers);
* faithful PAIR sweeps (PCM.BAS): the same float32 Jacobi sweep on a ``(B, K, K)`` stack,
  each replication stopping at its own sweep;
* paper qualities: the papers of all replications are the "papers" of one call of the
  per-paper solvers (each paper looks up its own replication's steps), so the bracket
  search of PCM.BAS and the corrected ML/WLE Newton steps run once for the batch.
"""

from __future__ import annotations

import numpy as np

from .pcm import (F32, FAITHFUL_EPS, FAITHFUL_MAX_IT, _faithful_numerators, faithful_quality)


def pair_counts_batch(batch, self_pairs):
    """:func:`~ratercal_cli.methods.pcm.pair_counts` of every replication:
    ``(B, nr, M+1, nr, M+1)`` int64."""
    B, nr, m1 = batch.size, batch.n_raters, batch.max_score + 1
    size = nr * m1 * nr * m1
    flat = np.zeros(B * size, dtype=np.int64)
    base = (np.arange(B) * size)[:, None]
    r, s = batch.rater, batch.score
    k = r.shape[2]
    for p in range(k):
        for q in range(k):
            if p == q and not self_pairs:
                continue
            idx = base + ((r[:, :, p] * m1 + s[:, :, p]) * nr + r[:, :, q]) * m1 + s[:, :, q]
            flat += np.bincount(idx.ravel(), minlength=B * size)
    return flat.reshape(B, nr, m1, nr, m1)


def step_pair_matrices_batch(counts):
    """``(N1, N2)`` of :func:`~ratercal_cli.methods.pcm._step_pair_matrices`, per replication."""
    B, nr, m1 = counts.shape[0], counts.shape[1], counts.shape[2]
    m = m1 - 1
    n1 = counts[:, :, 0:m, :, 1:m1].reshape(B, nr * m, nr * m)
    n2 = counts[:, :, 1:m1, :, 0:m].reshape(B, nr * m, nr * m)
    return n1, n2


def faithful_pair_batch(counts, eps=FAITHFUL_EPS, max_it=FAITHFUL_MAX_IT):
    """:func:`~ratercal_cli.methods.pcm.faithful_pair` on a stack of counts: the same
    float32 sweeps, each replication frozen once it stops.  Returns ``d`` float32
    ``(B, nr, M)``.

    PCM.BAS adds ``bign * pi`` and ``-n2`` over every step ``(j, z)``; a pair of steps never
    compared adds ``+0`` to a sum that is never ``-0``, which changes nothing, so only the
    compared pairs are kept, in the BASIC's order (padded at the end with more ``+0``), and
    each sum is a reduction over the outer axis of the transposed terms: one addition after
    the other, as the BASIC and ``faithful_pair``'s cumulative sum do."""
    B, nr, m = counts.shape[0], counts.shape[1], counts.shape[2] - 1
    n1, n2 = step_pair_matrices_batch(counts)
    k = nr * m
    bign = (n1 + n2).astype(F32)
    neg_n2 = (-n2).astype(F32)
    nz = bign > 0
    width = max(int(nz.sum(axis=2).max()) if k else 0, 1)
    cols = np.argsort(~nz, axis=2, kind="stable")[:, :, :width]      # compared steps, in order
    valid = np.take_along_axis(nz, cols, axis=2)
    big_t = np.where(valid, np.take_along_axis(bign, cols, axis=2), F32(0)).transpose(0, 2, 1)
    n2_t = np.where(valid, np.take_along_axis(neg_n2, cols, axis=2), F32(0)).transpose(0, 2, 1)
    # flat index into d (B*K) of the other step of each term, (B, width, K)
    gcols = np.ascontiguousarray(cols.transpose(0, 2, 1)) + (np.arange(B) * k)[:, None, None]
    d = np.zeros((B, k), dtype=F32)
    sweeps = np.zeros(B, dtype=np.int64)
    one = F32(1.0)
    active = np.arange(B)
    while active.size:
        a_n = active.size
        da = d[active]
        other = np.take(d.reshape(-1), gcols[active])                     # d(j, z) of each term
        pi_t = one / (one + np.exp(da[:, None, :] - other))
        t = big_t[active] * pi_t
        seq_f = np.empty((a_n, 2 * width, k), dtype=F32)
        seq_f[:, 0::2] = t
        seq_f[:, 1::2] = n2_t[active]
        f = np.add.reduce(seq_f, axis=1, dtype=F32)
        seq_f1 = np.empty((a_n, width + 1, k), dtype=F32)
        seq_f1[:, 0] = F32(0.01)
        seq_f1[:, 1:] = t * (one - pi_t)
        f1 = np.add.reduce(seq_f1, axis=1, dtype=F32)
        a = da + f / f1
        dt = np.where(a < F32(-15), F32(-15), np.where(a > F32(15), F32(15), a)).astype(F32)
        dmax = np.abs(dt - da).max(axis=1) if k else np.zeros(a_n, dtype=F32)
        d[active] = dt
        sweeps[active] += 1
        done = (dmax < eps) | (sweeps[active] >= max_it)
        active = active[~done]
    return d.reshape(B, nr, m)


def faithful_expected_batch(d, cen):
    """:func:`~ratercal_cli.methods.pcm.faithful_expected` with each replication's steps:
    ``d`` float32 ``(B, nr, M)``, ``cen`` float32 ``(B, n)``; returns ``sc`` ``(B, n, nr)``."""
    B, nr, m = d.shape
    n = cen.shape[1]
    u = np.broadcast_to(cen.reshape(B * n)[:, None], (B * n, nr))
    drow = np.broadcast_to(np.transpose(d, (2, 0, 1))[:, :, None, :], (m, B, n, nr)).reshape(m, B * n, nr)
    e, t = _faithful_numerators(u, drow)
    sc = np.zeros(u.shape, dtype=F32)
    for j in range(1, m + 1):
        sc += (e[j] / t) * F32(j)
    return sc.reshape(B, n, nr)


def faithful_pcm_papers(batch):
    """Paper scores of the faithful PCM (PCM.BAS) for every replication, ``(B, n)``."""
    B, n, nr = batch.size, batch.n_papers, batch.n_raters
    d = faithful_pair_batch(pair_counts_batch(batch, self_pairs=True))
    # every paper of every replication at once, each with its own replication's steps
    r_glob = (np.arange(B)[:, None, None] * nr + batch.rater).reshape(B * n, -1)
    cen, _ = faithful_quality(d.reshape(B * nr, -1), r_glob, batch.score.reshape(B * n, -1))
    sc = faithful_expected_batch(d, cen.reshape(B, n))
    ave = np.cumsum(sc.astype(F32), axis=2, dtype=F32)[:, :, -1]
    return (ave / F32(nr)).astype(np.float64)


# ----------------------------------------------------------------------------- corrected

def _range_moments_batch(theta, delta, lo, hi, B):
    """:func:`~ratercal_cli.methods.pcm.range_moments` for the ratings of ``B``
    replications laid end to end (``theta`` ``(B*L,)``, ``delta`` ``(B*L, M)``, ``lo``/``hi``
    per rating, ``(B*L, 1)``): the same element-wise steps; the BLAS product ``p @ x`` per
    replication, on the ``(L, M+1)`` block the estimator multiplies."""
    delta = np.where(np.isfinite(delta), delta, 0.0)
    steps = np.asarray(theta, dtype=np.float64)[..., None] - delta
    m = delta.shape[-1]
    logn = np.concatenate([np.zeros(steps.shape[:-1] + (1,)), np.cumsum(steps, axis=-1)], axis=-1)
    cat = np.arange(m + 1)
    outside = (cat < lo) | (cat > hi)
    logn = np.where(outside, -np.inf, logn)
    logn = logn - logn.max(axis=-1, keepdims=True)
    p = np.exp(logn)
    p /= p.sum(axis=-1, keepdims=True)
    x = np.arange(p.shape[-1], dtype=np.float64)
    pb = p.reshape(B, -1, m + 1)
    mean = np.concatenate([pb[b] @ x for b in range(B)])
    dev = x - mean[..., None]
    var = (p * dev * dev).sum(axis=-1)
    third = (p * dev * dev * dev).sum(axis=-1)
    return mean, var, third


def ml_quality_batch(batch, steps, lo, hi, bound=15.0, estimator="ml", tol=1e-10, max_iter=100):
    """:func:`~ratercal_cli.methods.pcm.ml_quality` for every paper of every replication at
    once, each with its replication's ``steps`` ``(B, nr, M)`` and category range ``lo``,
    ``hi`` ``(B,)``: the same per-paper Newton/bisection steps (the sums over a paper's
    ratings by ``bincount`` in rating order).  Returns ``theta`` ``(B, n)``.

    The one place the batched PCM computes person qualities: a merged quality solver
    replaces the body here."""
    B, n, k = batch.rater.shape
    N = B * n
    paper = np.repeat(np.arange(N), k)
    x = batch.score.reshape(-1).astype(np.float64)
    drow = steps[np.arange(B)[:, None, None], batch.rater].reshape(N * k, -1)
    lo_r = np.repeat(np.asarray(lo), n * k)[:, None]
    hi_r = np.repeat(np.asarray(hi), n * k)[:, None]

    def eq(theta):
        mean, var, third = _range_moments_batch(theta[paper], drow, lo_r, hi_r, B)
        g = np.bincount(paper, weights=x - mean, minlength=N)
        info = np.bincount(paper, weights=var, minlength=N)
        if estimator == "wle":
            k3 = np.bincount(paper, weights=third, minlength=N)
            g = g + k3 / (2.0 * np.maximum(info, 1e-300))
        return g, info

    lo_t = np.full(N, -float(bound))
    hi_t = np.full(N, float(bound))
    g_lo, _ = eq(lo_t)
    g_hi, _ = eq(hi_t)
    theta = np.zeros(N)
    top = g_hi >= 0
    bottom = ~top & (g_lo <= 0)
    theta[top], theta[bottom] = bound, -bound
    fixed = top | bottom
    it = 0
    while not fixed.all() and it < max_iter:
        it += 1
        g, info = eq(theta)
        root = np.abs(g) < tol
        lo_t = np.where((g > 0) & ~fixed, theta, lo_t)
        hi_t = np.where((g < 0) & ~fixed, theta, hi_t)
        new = theta + g / np.maximum(info, 1e-12)
        bad = ~np.isfinite(new) | (new < lo_t) | (new > hi_t)
        new = np.where(bad, 0.5 * (lo_t + hi_t), new)
        new = np.where(root, theta, new)
        conv = root | (np.abs(new - theta) < tol)
        theta = np.where(fixed, theta, new)
        fixed |= conv
    return theta.reshape(B, n)


def corrected_pcm_papers(batch):
    """Paper scores of the corrected PCM for every replication: the PAIR steps per
    replication by the estimator (``_fit_corrected``), the qualities and expected scores
    of all replications at once.  Returns ``(P (B, n), {b: exception})``."""
    from .base import FIT_FAILURES
    from .pcm import PartialCreditModel

    B, n, nr = batch.size, batch.n_papers, batch.n_raters
    m = batch.max_score
    steps = np.zeros((B, nr, m))
    lo, hi = np.zeros(B, dtype=np.int64), np.full(B, m, dtype=np.int64)
    failed, est = {}, None
    for b in range(B):
        est = PartialCreditModel("corrected")
        try:
            est._fit_corrected(batch.ratings(b))
        except FIT_FAILURES as exc:
            failed[b] = exc
            continue
        steps[b] = est.steps_
        lo[b], hi[b] = est.category_range_
    theta = ml_quality_batch(batch, steps, lo, hi, bound=est.theta_bound, estimator=est.estimator)
    # expected score of every rater at each paper's quality (range_moments on (n, nr) per replication)
    th = np.broadcast_to(theta[:, :, None], (B, n, nr)).reshape(B * n, nr)
    st = np.broadcast_to(steps[:, None], (B, n, nr, m)).reshape(B * n, nr, m)
    lo_p = np.repeat(lo, n)[:, None, None]
    hi_p = np.repeat(hi, n)[:, None, None]
    delta = np.where(np.isfinite(st), st, 0.0)
    s = th[..., None] - delta
    logn = np.concatenate([np.zeros(s.shape[:-1] + (1,)), np.cumsum(s, axis=-1)], axis=-1)
    cat = np.arange(m + 1)
    logn = np.where((cat < lo_p) | (cat > hi_p), -np.inf, logn)
    logn = logn - logn.max(axis=-1, keepdims=True)
    p = np.exp(logn)
    p /= p.sum(axis=-1, keepdims=True)
    sc = np.matmul(p, np.arange(m + 1, dtype=np.float64))      # (B*n, nr): n stacked (nr, M+1) products
    P = sc.mean(axis=1).reshape(B, n)
    for b in failed:
        P[b] = np.nan
    return P, failed
