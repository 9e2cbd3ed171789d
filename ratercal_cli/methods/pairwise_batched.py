"""De Gruijter's pairwise methods (OLS, TLS, RAS) on a batch of replications (issue 11).

The same numbers as :mod:`ratercal_cli.methods.pairwise` gives replication by replication:
the rating pairs of OLS.BAS's loading loop (each paper's ratings by rater number, then
``j1 < j2``), the teams in order of first appearance, the team statistics summed in pair
order, and the solve: the faithful listing's single-precision Gauss-Jordan inverse and
ordered sums on a stack of replications, the corrected normal equations by a stacked
LAPACK solve.  Replications on a rare branch (a rank-deficient or zero-pivot faithful
system, raters not linked) return None and are fitted by the estimator itself.
"""

from __future__ import annotations

import numpy as np

from ._single import F32, batch_paper_mean
from .pairwise import ZERO_CORRECTION, _single, faithful_design


def _pairs(batch):
    """Per replication, the rating pairs in OLS.BAS's order: ``(low, high, s_low, s_high)``,
    each ``(B, P)``."""
    order = np.argsort(batch.rater, axis=2, kind="stable")
    r = np.take_along_axis(batch.rater, order, axis=2)
    s = np.take_along_axis(batch.score, order, axis=2)
    k = r.shape[2]
    j1, j2 = np.triu_indices(k, 1)
    B = batch.size
    return (r[:, :, j1].reshape(B, -1), r[:, :, j2].reshape(B, -1),
            s[:, :, j1].reshape(B, -1), s[:, :, j2].reshape(B, -1))


def _teams(low, high, nr):
    """Teams of every replication in order of first appearance.

    Returns ``(key (B, T), size (B, T), team_of_pair (B, P), n_teams (B,))``: ``key`` is
    ``low * nr + high`` of each team (padding: ``nr * nr``, size 0)."""
    B, P = low.shape
    nk = nr * nr
    key = low * nr + high
    glob = (np.arange(B)[:, None] * nk + key).ravel()
    first = np.full(B * nk, P, dtype=np.int64)
    np.minimum.at(first, glob, np.tile(np.arange(P), B))
    first = first.reshape(B, nk)
    order = np.argsort(first, axis=1, kind="stable")          # teams by first appearance
    present = np.take_along_axis(first, order, axis=1) < P
    n_teams = present.sum(axis=1)
    T = int(n_teams.max())
    tkey = np.where(present[:, :T], order[:, :T], nk)
    rank = np.empty((B, nk), dtype=np.int64)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(nk), (B, nk)), axis=1)
    team = np.take_along_axis(rank, key, axis=1)                # (B, P) rank of each pair's team
    size = np.bincount((np.arange(B)[:, None] * T + team).ravel(), minlength=B * T).reshape(B, T)
    return tkey, size, team, n_teams


def _team_sums(team, values, T):
    B = team.shape[0]
    return np.bincount((np.arange(B)[:, None] * T + team).ravel(), weights=np.asarray(values, np.float64).ravel(),
                       minlength=B * T).reshape(B, T)


def _statistic(code, variant, s_low, s_high, team, size, m):
    T = size.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        if code in ("OLS", "TLS"):
            diff = _team_sums(team, s_low - s_high, T)
            if variant == "faithful":
                return _single(diff) / size.astype(F32)
            return diff / size
        num = _team_sums(team, s_high * (m - s_low), T)
        den = _team_sums(team, s_low * (m - s_high), T)
        finite = (num > 0) & (den > 0)
        if variant == "faithful":
            d = np.where(finite, np.log(np.where(finite, num / np.where(finite, den, 1.0), 1.0)), 0.0)
            return _single(d)
        num = np.where(finite, num, num + ZERO_CORRECTION)
        den = np.where(finite, den, den + ZERO_CORRECTION)
        return np.log(num / den)


def _gauss_jordan_batch(x):
    """:func:`~ratercal_cli.methods.pairwise.gauss_jordan_inverse_single` on a stack;
    ``ok`` is False for matrices that meet a zero pivot (their inverse is not computed)."""
    a = _single(x)
    B, n = a.shape[0], a.shape[1]
    b = np.broadcast_to(np.eye(n, dtype=F32), (B, n, n)).copy()
    ok = np.ones(B, dtype=bool)
    for row in range(n):
        ok &= a[:, row, row] != 0
        d = np.where(ok, a[:, row, row], F32(1))[:, None]
        a[:, row] = a[:, row] / d
        b[:, row] = b[:, row] / d
        m = a[:, :, row].astype(np.float64)
        m[:, row] = 0.0
        a = _single(a - m[:, :, None] * a[:, row, None, :].astype(np.float64))
        b = _single(b - m[:, :, None] * b[:, row, None, :].astype(np.float64))
    return b, ok


def _solve_faithful(tkey, size, d, nr):
    """OLS.BAS's ``Theta = (A'NA)^-1 A'N d`` per replication; None where the batched form
    does not apply (rank deficiency, zero pivot: the estimator then explains)."""
    B, T = tkey.shape
    keys = np.arange(nr * nr + 1)
    a_all = faithful_design(np.minimum(keys // nr, nr - 1), keys % nr, nr)   # design row of each key
    a_all[nr * nr] = 0.0                                                     # padding
    a = a_all[tkey]                                                          # (B, T, nr-1)
    ata = np.einsum("btj,bt,btk->bjk", a, size.astype(np.float64), a)        # small integers: exact
    nd = _single(size * np.asarray(d, dtype=F32).astype(np.float64))
    atnd = np.cumsum(a * nd[:, :, None], axis=1, dtype=F32)[:, -1]           # A'Nd in team order, singles
    ok = np.linalg.matrix_rank(ata) == nr - 1
    inv, ok_gj = _gauss_jordan_batch(ata)
    ok &= ok_gj
    acc = np.zeros((B, nr - 1), dtype=F32)
    vec = atnd.astype(np.float64)
    for k in range(nr - 1):                                                  # SUB matmult
        acc = _single(acc + inv[:, :, k].astype(np.float64) * vec[:, k, None])
    last = np.cumsum(-acc, axis=1, dtype=F32)[:, -1]
    return np.concatenate([acc, last[:, None]], axis=1).astype(np.float64), ok


def _connected(tkey, active, nr):
    """Every rater with ratings linked to the others through the teams (per replication)."""
    B, T = tkey.shape
    adj = np.zeros((B, nr * nr + 1), dtype=bool)
    adj[np.arange(B)[:, None], tkey] = True
    adj = adj[:, :nr * nr].reshape(B, nr, nr)
    reach = (adj | adj.transpose(0, 2, 1) | np.eye(nr, dtype=bool)).astype(np.float64)
    for _ in range(int(np.ceil(np.log2(max(nr, 2)))) + 1):
        reach = (reach @ reach > 0).astype(np.float64)
    first = np.argmax(active, axis=1)
    from_first = reach[np.arange(B), first] > 0
    return np.all(from_first | ~active, axis=1)


def _solve_corrected(tkey, size, d, active, nr):
    """Normal equations ``(L + 11') theta = A'Nd`` over the raters with ratings; None rows
    where the raters are not linked or the active sets differ from the batch's common one."""
    B, T = tkey.shape
    real = tkey < nr * nr
    low, high = np.where(real, tkey // nr, 0), np.where(real, tkey % nr, 0)
    w = np.where(real, size, 0).astype(np.float64)
    wd = w * np.where(real, d, 0.0)
    base = (np.arange(B) * nr)[:, None]
    base2 = (np.arange(B) * nr * nr)[:, None]

    def bc(idx, wt, n):
        return np.bincount(idx.ravel(), wt.ravel(), B * n)

    lap = (bc(base2 + low * nr + low, w, nr * nr) + bc(base2 + high * nr + high, w, nr * nr)
           - bc(base2 + low * nr + high, w, nr * nr) - bc(base2 + high * nr + low, w, nr * nr)).reshape(B, nr, nr)
    rhs = (bc(base + low, wd, nr) - bc(base + high, wd, nr)).reshape(B, nr)
    ok = _connected(tkey, active, nr)
    params = np.zeros((B, nr))
    patterns = {}
    for b in np.flatnonzero(ok):
        patterns.setdefault(active[b].tobytes(), []).append(b)
    for rows in patterns.values():
        rows = np.array(rows)
        idx = np.flatnonzero(active[rows[0]])
        A = lap[rows][:, idx][:, :, idx] + 1.0
        params[rows[:, None], idx[None, :]] = np.linalg.solve(A, rhs[rows][:, idx, None])[:, :, 0]
    return params, ok


def pairwise_papers(code, variant, batch):
    """Paper scores of OLS/TLS/RAS for every replication, ``(B, n)``, and the mask of
    replications computed here (the others: None rows to refit one by one)."""

    nr, m = batch.n_raters, batch.max_score
    low, high, s_low, s_high = _pairs(batch)
    tkey, size, team, _ = _teams(low, high, nr)
    d = _statistic(code, variant, s_low, s_high, team, size, m)
    d = np.where(size > 0, d, 0).astype(d.dtype)         # padding teams: no statistic
    B = batch.size
    r_idx = np.arange(B)[:, None, None], batch.rater
    if variant == "faithful":
        params, ok = _solve_faithful(tkey, size, d, nr)
    else:
        counts = np.bincount((np.arange(B)[:, None, None] * nr + batch.rater).ravel(), minlength=B * nr)
        params, ok = _solve_corrected(tkey, size, d, counts.reshape(B, nr) > 0, nr)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):   # rows not ok are refit
        return batch_paper_mean(_adjust(code, variant, params[r_idx], batch.score, m), variant), ok


def _adjust(code, variant, theta, s, m):
    """The listings' adjusted ratings (see :class:`PairwiseLeastSquares`, :class:`RaschExtension`)."""
    if code in ("OLS", "TLS"):
        if variant == "faithful":
            adj = (s.astype(F32) + theta.astype(F32)).astype(np.float64)
        else:
            adj = s - theta
        if code == "TLS":
            adj = np.clip(adj, 0, m)
    else:
        sf = s.astype(np.float64)
        if variant == "faithful":
            e = _single(np.exp(theta.astype(F32).astype(np.float64))).astype(np.float64)
            adj = _single(e * sf / (1 - sf / float(m) * (1 - e))).astype(np.float64)
        else:
            e = np.exp(theta)
            adj = e * sf / (1 - sf / float(m) * (1 - e))
    return adj
