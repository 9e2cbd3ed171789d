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
    float32 sweeps (cumulative sums in the BASIC's order along the last axis), each
    replication frozen once it stops.  Returns ``d`` float32 ``(B, nr, M)``."""
    B, nr, m = counts.shape[0], counts.shape[1], counts.shape[2] - 1
    n1, n2 = step_pair_matrices_batch(counts)
    bign = (n1 + n2).astype(F32)
    neg_n2 = (-n2).astype(F32)
    k = nr * m
    d = np.zeros((B, k), dtype=F32)
    sweeps = np.zeros(B, dtype=np.int64)
    one = F32(1.0)
    active = np.arange(B)
    while active.size:
        a_n = active.size
        da = d[active]
        pi = one / (one + np.exp(da[:, :, None] - da[:, None, :]))
        t = bign[active] * pi
        seq_f = np.empty((a_n, k, 2 * k), dtype=F32)
        seq_f[:, :, 0::2] = t
        seq_f[:, :, 1::2] = neg_n2[active]
        f = np.cumsum(seq_f, axis=2, dtype=F32)[:, :, -1]
        seq_f1 = np.empty((a_n, k, k + 1), dtype=F32)
        seq_f1[:, :, 0] = F32(0.01)
        seq_f1[:, :, 1:] = t * (one - pi)
        f1 = np.cumsum(seq_f1, axis=2, dtype=F32)[:, :, -1]
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
