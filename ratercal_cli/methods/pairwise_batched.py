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

from ..network import all_linked
from ._single import batch_paper_mean
from .pairwise import faithful_design, faithful_solve, normal_equations, solve_sum_zero


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


def _design(tkey, nr):
    """The listing's design row of each team key (padding keys ``nr * nr``: a row of 0s)."""
    keys = np.arange(nr * nr + 1)
    a_all = faithful_design(np.minimum(keys // nr, nr - 1), keys % nr, nr)
    a_all[nr * nr] = 0.0
    return a_all[tkey]


def _connected(tkey, active, nr):
    """Every rater with ratings linked to the others through the teams (per replication)."""
    B = tkey.shape[0]
    adj = np.zeros((B, nr * nr + 1), dtype=bool)
    adj[np.arange(B)[:, None], tkey] = True
    return all_linked(adj[:, :nr * nr].reshape(B, nr, nr), active)


def pairwise_papers(code, variant, batch):
    """Paper scores of OLS/TLS/RAS for every replication, ``(B, n)``, and the mask of
    replications computed here (the others, on a rare branch, are refit one by one): the
    estimator's team statistic, solve and adjustment on the stacked teams."""
    from . import make_method

    est = make_method(code, variant)
    nr, m = batch.n_raters, batch.max_score
    low, high, s_low, s_high = _pairs(batch)
    tkey, size, team, _ = _teams(low, high, nr)
    with np.errstate(invalid="ignore", divide="ignore"):   # padding teams: no statistic
        d = est._team_statistic(s_low, s_high, team, tkey.shape[1], m)
    d = np.where(size > 0, d, 0).astype(d.dtype)
    B = batch.size
    if variant == "faithful":
        params, full_rank, inverted = faithful_solve(_design(tkey, nr), size, d)
        ok = full_rank & inverted
    else:
        counts = np.bincount((np.arange(B)[:, None, None] * nr + batch.rater).ravel(), minlength=B * nr)
        active = counts.reshape(B, nr) > 0
        ok = _connected(tkey, active, nr)
        real = tkey < nr * nr
        lap, rhs = normal_equations(np.where(real, tkey // nr, 0), np.where(real, tkey % nr, 0),
                                    np.where(real, size, 0), np.where(real, d, 0.0), nr)
        params = np.zeros((B, nr))
        params[ok] = solve_sum_zero(lap[ok], rhs[ok], active[ok])
    theta = params[np.arange(B)[:, None, None], batch.rater]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):   # rows not ok are refit
        return batch_paper_mean(est._adjust_arrays(theta, batch.score, m), variant), ok
