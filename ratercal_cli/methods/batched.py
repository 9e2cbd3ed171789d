"""Methods fitted to a whole batch of replications at once (the Monte Carlo fast path, issue 11).

:func:`paper_scores` gives, for a :class:`~ratercal_cli.generators.batched.CellBatch`
(``B`` replications of one cell, kept ratings as ``(B, n, k)`` arrays), every replication's
paper scores under one method and variant: exactly the numbers the estimator's
``fit_transform(ratings).paper`` gives replication by replication.  To be bit-identical the
batched code performs the same floating-point operations in the same order:

* element-wise steps are the estimators' own, over a leading replication axis;
* per-rater and per-paper sums are ``np.bincount`` over ``replication * size + index``
  (``bincount`` adds in input order, as it does for one replication) or the BASIC's
  left-to-right float32 accumulations;
* whole-replication sums (pairwise summation) reduce the contiguous last axis of a
  ``(B, L)`` array, which numpy sums exactly as the 1-d array of one replication;
* BLAS/LAPACK calls whose result could depend on the layout run per replication or
  stacked on identical per-matrix shapes.

A method without a batched form here, or a replication the batched form does not cover
(a rare branch such as a zero pivot), is fitted by its estimator, one replication at a time:
:func:`paper_scores` is always correct, and only faster where a batched form exists.
``tests/methods/test_batched.py`` compares both paths exactly on every kind of cell.
"""

from __future__ import annotations

import numpy as np

from ._single import F32, batch_paper_mean


# ----------------------------------------------------------------------------- helpers

def _by_rater(batch, values=None):
    """Per (replication, rater) sums of ``values`` (default: counts), ``(B, nr)`` float64,
    added in rating order like ``np.bincount(ratings.rater, ...)`` of one replication."""
    B, nr = batch.size, batch.n_raters
    key = (np.arange(B)[:, None, None] * nr + batch.rater).ravel()
    w = None if values is None else np.asarray(values, dtype=np.float64).ravel()
    return np.bincount(key, weights=w, minlength=B * nr).reshape(B, nr).astype(np.float64)


def _clip(x, batch):
    return np.clip(x, 0, batch.max_score)


# ----------------------------------------------------------------------------- NO, MN, LI

def _no(batch, variant):
    return batch.score.astype(np.float64)


def _mn(batch, variant, truncate):
    """:class:`~ratercal_cli.methods.mean.MeanEquating` with its default ``min_ratings``."""
    n = _by_rater(batch)
    s = _by_rater(batch, batch.score)
    L = batch.n_papers * batch.per_paper
    s0 = batch.score.reshape(batch.size, L).sum(axis=1).astype(np.float64)
    r_idx = np.arange(batch.size)[:, None, None], batch.rater
    if variant == "faithful":
        n32, s32 = n.astype(F32), s.astype(F32)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (s32 / n32).astype(F32)
        grand = (s0.astype(F32) / F32(L)).astype(F32)
        x = batch.score.astype(F32)
        adj = ((x - mean[r_idx]).astype(F32) + grand[:, None, None]).astype(F32)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = s / n
        grand = s0 / float(L)
        shift = np.where(n >= 2, grand[:, None] - mean, 0.0)
        adj = batch.score + shift[r_idx]
    return _clip(adj, batch) if truncate else adj


def _li(batch, variant, truncate):
    """:class:`~ratercal_cli.methods.linear.LinearEquating` with its default ``ddof``,
    ``zero_sd`` and ``min_ratings``."""
    B = batch.size
    L = batch.n_papers * batch.per_paper
    r_idx = np.arange(B)[:, None, None], batch.rater
    n = _by_rater(batch)
    s = _by_rater(batch, batch.score)
    n_int = n.astype(np.int64)
    if variant == "faithful":
        ddof, rule_slope, min_r = 0, 0.0, 1
        ss = _by_rater(batch, batch.score.astype(np.float64) ** 2)
        xf = batch.score.reshape(B, L).astype(np.float64)
        n0, s0, ss0 = F32(L), xf.sum(axis=1).astype(F32), (xf * xf).sum(axis=1).astype(F32)
        n32, s32, ss32 = n.astype(F32), s.astype(F32), ss.astype(F32)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (s32 / n32).astype(F32)
            grand_mean = (s0 / n0).astype(F32)

            def sd_single(n, s, ss):
                q = ((s * s).astype(F32) / n).astype(F32)
                v = ((ss - q).astype(F32) / (n - F32(ddof))).astype(F32)
                return np.sqrt(np.maximum(v, F32(0))).astype(F32)

            sd = sd_single(n32, s32, ss32)
            grand_sd = sd_single(np.full(B, n0, dtype=F32), s0, ss0)
        dtype = F32
    else:
        ddof, rule_slope, min_r = 1, 1.0, 2
        x = batch.score.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = s / n
            dev2 = _by_rater(batch, (x - mean[r_idx]) ** 2)
            sd = np.sqrt(dev2 / (n - ddof))
            xf = x.reshape(B, L)
            grand_mean = xf.sum(axis=1) / float(L)
            grand_sd = np.sqrt(((xf - grand_mean[:, None]) ** 2).sum(axis=1) / (float(L) - ddof))
        dtype = np.float64
    sd = np.where(n_int > ddof, sd, 0).astype(dtype)
    mean = np.where(n_int == 0, np.nan, mean).astype(dtype)
    sd = np.where(n_int == 0, np.nan, sd).astype(dtype)
    used = n_int >= min_r
    zero = used & (sd == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = grand_sd.astype(np.float64)[:, None] / sd.astype(np.float64)
    slope = np.where(used, slope, 1.0)
    slope = np.where(zero, rule_slope, slope)
    intercept = grand_mean.astype(np.float64)[:, None] - slope * mean.astype(np.float64)
    intercept = np.where(used, intercept, 0.0)
    intercept = np.where(n_int == 0, np.nan, intercept)
    slope = np.where(n_int == 0, np.nan, slope)
    if variant == "faithful":
        x = batch.score.astype(F32)
        sd_r = sd[r_idx]
        with np.errstate(invalid="ignore", divide="ignore"):
            z = ((x - mean[r_idx]).astype(F32) / sd_r).astype(F32)
        adj = ((z * grand_sd[:, None, None]).astype(F32) + grand_mean[:, None, None]).astype(F32)
        special = (sd_r == 0) | (n_int[r_idx] < min_r)
        if special.any():
            line = (intercept[r_idx] + slope[r_idx] * batch.score).astype(F32)
            adj = np.where(special, line, adj)
    else:
        adj = intercept[r_idx] + slope[r_idx] * batch.score
    return _clip(adj, batch) if truncate else adj


# ----------------------------------------------------------------------------- EQP

def _search(G, p, side):
    """``np.searchsorted(G[b], p[b], side)`` for every replication ``b`` (``G`` sorted
    ``(B, K)``, ``p`` ``(B, ...)``; nan sorts last, as in ``searchsorted``)."""
    g = G.reshape(G.shape[0], *([1] * (p.ndim - 1)), G.shape[1])
    q = p[..., None]
    cnt = (g < q) if side == "left" else (g <= q)
    out = cnt.sum(axis=-1)
    return np.where(np.isnan(p), G.shape[1], out)


def _gather(G, idx):
    """``G[b, idx[b, ...]]``."""
    flat = idx.reshape(idx.shape[0], -1)
    return np.take_along_axis(G, flat, axis=1).reshape(idx.shape)


def _eqp(batch, variant):
    """:class:`~ratercal_cli.methods.equipercentile.EquipercentileEquating` (no presmoothing)."""
    B, nr, m1 = batch.size, batch.n_raters, batch.max_score + 1
    key = ((np.arange(B)[:, None, None] * nr + batch.rater) * m1 + batch.score).ravel()
    counts = np.bincount(key, minlength=B * nr * m1).reshape(B, nr, m1)
    n = counts.sum(axis=2)
    freq = counts.astype(np.float64)
    overall = counts.sum(axis=1).astype(np.float64)
    m = m1 - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "faithful":
            cum = np.cumsum(freq, axis=2).astype(F32)
            cum0 = np.cumsum(overall, axis=1).astype(F32)
            rank = (cum / cum[:, :, -1:]).astype(F32)
            F0 = (cum0 / cum0[:, -1:]).astype(F32)
            a = np.clip(_search(F0, rank, "left"), 1, m)
            r, t = _gather(F0, a - 1), _gather(F0, a)
            q = ((rank - r).astype(F32) / (t - r).astype(F32)).astype(F32)
            adj = ((a.astype(F32) + q).astype(F32) - F32(1)).astype(F32)
            table = np.where(rank <= F0[:, 0, None, None], F32(0), adj)
        else:
            p = freq / freq.sum(axis=-1, keepdims=True)
            rank = np.cumsum(p, axis=-1) - p / 2
            p0 = overall / overall.sum(axis=-1, keepdims=True)
            G = np.cumsum(p0, axis=-1) - p0 / 2
            lo = _search(G, rank, "left")
            hi = _search(G, rank, "right") - 1
            a = np.clip(lo, 1, m)
            r, t = _gather(G, a - 1), _gather(G, a)
            adj = a - 1 + (rank - r) / (t - r)
            adj = np.where(rank <= G[:, 0, None, None], 0.0, adj)
            adj = np.where(rank >= G[:, m][:, None, None], float(m), adj)
            exact = (lo <= hi) & (lo <= m)
            table = np.where(exact, (lo + np.minimum(hi, m)) / 2.0, adj)
    table = np.asarray(table, dtype=np.float64)
    table = np.where((n == 0)[:, :, None], np.nan, table)
    return table[np.arange(B)[:, None, None], batch.rater, batch.score]


# ----------------------------------------------------------------------------- dispatch

#: code -> function(batch, variant) giving the adjusted ratings ``(B, n, k)``
_RATING_FITS = {
    "NO": _no,
    "MN": lambda b, v: _mn(b, v, False),
    "TMN": lambda b, v: _mn(b, v, True),
    "LI": lambda b, v: _li(b, v, False),
    "TLI": lambda b, v: _li(b, v, True),
    "EQP": _eqp,
}
def _pcm(batch, variant):
    from .pcm_batched import corrected_pcm_papers, faithful_pcm_papers

    if variant == "faithful":
        return faithful_pcm_papers(batch), {}
    return corrected_pcm_papers(batch)


def _pairwise(code):
    def fit(batch, variant):
        from .pairwise_batched import pairwise_papers

        P, ok = pairwise_papers(code, variant, batch)
        failed = {}
        for b in np.flatnonzero(~ok):      # a rare branch: the estimator itself
            out = _one(code, variant, batch, b)
            if isinstance(out, BaseException):
                failed[b] = out
                P[b] = np.nan
            else:
                P[b] = out
        return P, failed
    return fit


#: code -> function(batch, variant) giving ``(paper scores (B, n), {b: exception})``, or
#: None where that variant has no batched form
_PAPER_FITS = {"PCM": _pcm, "OLS": _pairwise("OLS"), "TLS": _pairwise("TLS"), "RAS": _pairwise("RAS")}


def batched_codes():
    """The method codes with a batched form."""
    return tuple(_RATING_FITS) + tuple(_PAPER_FITS)


def _one(code, variant, batch, b):
    """Replication ``b`` fitted by the estimator itself (through the one apply service): paper
    scores or the exception."""
    from .apply import apply_methods

    applied = apply_methods(batch.ratings(b), [code], variant)
    if code in applied.adjusted:
        return np.asarray(applied.adjusted[code].paper, dtype=np.float64)
    return applied.errors[code]


def paper_scores(code, variant, batch):
    """Paper scores of every replication of ``batch`` under ``code``/``variant``.

    Returns ``(P, failed)``: ``P`` ``(B, n)`` float64 (rows of failed replications are
    nan) and ``failed`` a dict ``{b: exception}`` of replications the method could not
    fit (the estimator's own exception and message)."""
    code = code.upper()
    failed = {}
    if code in _RATING_FITS:
        return batch_paper_mean(_RATING_FITS[code](batch, variant), variant), failed
    if code in _PAPER_FITS:
        out = _PAPER_FITS[code](batch, variant)
        if out is not None:
            return out
    P = np.full((batch.size, batch.n_papers), np.nan)
    for b in range(batch.size):
        out = _one(code, variant, batch, b)
        if isinstance(out, BaseException):
            failed[b] = out
        else:
            P[b] = out
    return P, failed
