"""EQP: equipercentile equating (EQPEQ.BAS), with a corrected variant and presmoothing.

EQPEQ.BAS counts ``w%(j, K)``, the number of rater ``j``'s ratings at or below
``K`` (``j = 0``: all ratings), and for a rating ``x`` by rater ``aj``::

    s = w%(aj, x) / w%(aj, mp)           ' rater's proportion at or below x
    t = w%(0, 0) / bign                  ' overall proportion of 0s
    IF s <= t THEN adj = 0 ELSE
        a = -1
        WHILE t < s: r = t: a = a + 1: t = w%(0, a) / bign: WEND
        adj = a + (s - r) / (t - r) - 1
    END IF

i.e. the overall cumulative proportions ``F(0..M)`` are joined by straight lines
and ``adj`` is the score where that line reaches ``s``: with ``a`` the first score
with ``F(a) >= s``, ``adj = a - 1 + (s - F(a-1)) / (F(a) - F(a-1))``.  Where
``F`` is flat (unused overall categories) the loop stops at the lowest score.
This is the "at or below" definition of the Chapter 3 example (p. 12): 23 % of
rater A's scores are 3 or less, overall 19 % are 3 or less and 27 % 4 or less,
so a 3 from rater A becomes 3.5.

The corrected variant uses mid-percentile ranks, ``PR(x) = P(X < x) + P(X = x)/2``
(Kolen & Brennan 2014, ch. 2), for the rater and the overall distribution, and
inverts the overall ``PR`` by linear interpolation between the points
``(x, PR(x))``; ranks below ``PR(0)`` map to 0, above ``PR(M)`` to M, and a rank
on a flat stretch (two or more adjacent unused overall categories) to the middle
of the stretch.  ``presmoothing=C`` first replaces each rater's and the overall
frequency distribution by a log-linear fit of degree ``C`` (Holland & Thayer
2000), which keeps the total and the first ``C`` moments and makes every
category's frequency positive (Denny 1990, ch. 5, suggests smoothing).
"""

from __future__ import annotations

import numpy as np

from ..arguments import check_count
from ..errors import MethodError
from ..vocabulary import DEFAULT_VARIANT
from ._single import F32, at_rater, sums_by
from .base import RaterAdjuster

DEFINITIONS = ("at_or_below", "mid")


def loglinear_presmooth(freq, degree, max_iter=100, tol=1e-10):
    """Log-linear presmoothing of a frequency distribution on scores ``0..K-1``.

    Fits ``log mu_x = b0 + b1 x + ... + bC x^C`` by Poisson maximum likelihood
    with Newton-Raphson (and step halving), Holland & Thayer (2000).  At the
    maximum ``sum_x x^k mu_x = sum_x x^k n_x`` for ``k = 0..C``: the total and the
    first ``C`` moments are kept.

    The ML fit exists only if the data use at least ``C + 1`` distinct scores;
    with fewer, the degree drops to (distinct scores - 1), and a distribution
    on a single score is returned unchanged.  ``degree >= K - 1`` returns the
    observed frequencies (the saturated model).
    """
    n = np.asarray(freq, dtype=np.float64)
    if n.ndim != 1:
        raise ValueError("freq must be 1-d")
    degree = int(degree)
    if degree < 1:
        raise ValueError("presmoothing degree must be at least 1")
    k = n.size
    used = int(np.count_nonzero(n > 0))
    c = min(degree, used - 1, k - 1)
    if c <= 0 or c >= k - 1:
        return n.copy()
    total = n.sum()
    x = np.arange(k, dtype=np.float64)
    u = (x - x.mean()) / x.std()
    basis, _ = np.linalg.qr(np.vander(u, c + 1, increasing=True))
    # start: least-squares fit to log(n + 1/2)
    beta = basis.T @ np.log(n + 0.5)

    def loglik(eta):
        return float(n @ eta - np.exp(eta).sum())

    eta = basis @ beta
    ll = loglik(eta)
    for _ in range(max_iter):
        mu = np.exp(eta)
        grad = basis.T @ (n - mu)
        if np.max(np.abs(grad)) <= tol * total:
            return mu
        hess = basis.T @ (mu[:, None] * basis)
        step = np.linalg.solve(hess, grad)
        lam = 1.0
        while True:
            new_eta = np.minimum(basis @ (beta + lam * step), 700.0)
            new_ll = loglik(new_eta)
            if new_ll >= ll - 1e-12 * abs(ll) or lam < 1e-8:
                break
            lam /= 2
        beta, eta, ll = beta + lam * step, new_eta, new_ll
    mu = np.exp(eta)
    if np.max(np.abs(basis.T @ (n - mu))) > 1e-6 * total:
        raise MethodError(f"log-linear presmoothing (degree {c}) did not converge in {max_iter} iterations")
    return mu


def cumulative_at_or_below(freq):
    """``F(x) = P(X <= x)`` along the last axis (EQPEQ.BAS ``w%(j, x) / w%(j, mp)``)."""
    cum = np.cumsum(np.asarray(freq, dtype=np.float64), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return cum / cum[..., -1:]


def mid_percentile_ranks(freq):
    """``PR(x) = P(X < x) + P(X = x) / 2`` along the last axis."""
    f = np.asarray(freq, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = f / f.sum(axis=-1, keepdims=True)
    return np.cumsum(p, axis=-1) - p / 2


def _search(G, p, side):
    """``np.searchsorted(G, p, side)`` of an increasing line ``G`` ``(K,)``, or row by row of a
    stack ``(B, K)`` against ``p`` ``(B, ...)``: the number of points of ``G`` below ``p`` (at or
    below: ``side="right"``); a nan ``p`` sorts last, as in ``searchsorted``."""
    g = G.reshape(G.shape[:-1] + (1,) * (p.ndim - G.ndim + 1) + G.shape[-1:])
    q = p[..., None]
    out = ((g < q) if side == "left" else (g <= q)).sum(axis=-1)
    return np.where(np.isnan(p), G.shape[-1], out)


def _at(G, idx, p):
    """``G[idx]``, row by row for a stack (``G`` ``(B, K)``, ``idx`` ``(B, ...)``); ``idx`` an
    int, a point of every line broadcasting against ``p``."""
    if isinstance(idx, int):
        return G[..., idx].reshape(G.shape[:-1] + (1,) * (p.ndim - G.ndim + 1))
    if G.ndim == 1:
        return G[idx]
    flat = idx.reshape(idx.shape[0], -1)
    return np.take_along_axis(G, flat, axis=1).reshape(idx.shape)


def basic_inverse_single(F0, s):
    """EQPEQ.BAS's loop in single precision: the score where the overall
    at-or-below line ``F0`` reaches each ``s`` (0 where ``s <= F0[0]``); ``F0`` ``(M+1,)``, or
    a stack ``(B, M+1)`` of lines with ``s`` ``(B, ...)``."""
    F0 = np.asarray(F0, dtype=F32)
    s = np.asarray(s, dtype=F32)
    a = np.clip(_search(F0, s, "left"), 1, F0.shape[-1] - 1)  # first a with F0[a] >= s
    r, t = _at(F0, a - 1, s), _at(F0, a, s)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = ((s - r).astype(F32) / (t - r).astype(F32)).astype(F32)
    adj = ((a.astype(F32) + q).astype(F32) - F32(1)).astype(F32)
    return np.where(s <= _at(F0, 0, s), F32(0), adj)


def interpolate_inverse(G, p, ties="lowest"):
    """Score where the increasing polygon through ``(x, G[x])``, ``x = 0..M``,
    reaches rank ``p`` (double precision); ``G`` ``(M+1,)``, or a stack ``(B, M+1)`` with ``p``
    ``(B, ...)``.

    ``p <= G[0]`` -> 0 (or the middle of the scores tied at ``G[0]``),
    ``p >= G[M]`` -> M (or the middle of the tie there); on a flat stretch
    ``ties="lowest"`` takes the lowest score (EQPEQ.BAS), ``"middle"`` the middle.
    """
    G = np.asarray(G, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    m = G.shape[-1] - 1
    lo = _search(G, p, "left")  # first index with G >= p
    hi = _search(G, p, "right") - 1  # last index with G <= p
    a = np.clip(lo, 1, m)
    r, t = _at(G, a - 1, p), _at(G, a, p)
    with np.errstate(invalid="ignore", divide="ignore"):
        adj = a - 1 + (p - r) / (t - r)
    adj = np.where(p <= _at(G, 0, p), 0.0, adj)
    adj = np.where(p >= _at(G, m, p), float(m), adj)
    exact = (lo <= hi) & (lo <= m)  # p equals G at scores lo..hi
    if ties == "middle":
        adj = np.where(exact, (lo + np.minimum(hi, m)) / 2.0, adj)
    else:
        adj = np.where(exact, lo.astype(np.float64), adj)
    return adj


class EquipercentileEquating(RaterAdjuster):
    """Equipercentile equating: ``adj = G0^{-1}(G_j(x))`` by linear interpolation.

    Parameters
    ----------
    variant : ``"faithful"``: EQPEQ.BAS in single precision (with the default
        definition); ``"corrected"``: double precision, default mid-percentiles.
    definition : ``"at_or_below"`` (``G = P(X <= x)``, EQPEQ.BAS and the Chapter 3
        example) or ``"mid"`` (``G = P(X < x) + P(X = x)/2``).  Default: the
        former for faithful, the latter for corrected.
    presmoothing : ``None`` or the degree ``C`` of a log-linear presmoothing of
        each rater's and the overall score frequencies (see
        :func:`loglinear_presmooth`).

    Fitted attributes
    -----------------
    freq_ : (n_raters, M+1) score frequencies per rater (smoothed if asked);
    overall_freq_ : (M+1,) over all ratings (smoothed separately);
    rank_, overall_rank_ : the ``G`` values; table_ : (n_raters, M+1), the
    adjusted score of each rater's each score (nan for raters without ratings).
    """

    @property
    def code(self):
        return "SEQP" if self.presmoothing else "EQP"

    def __init__(self, variant: str = DEFAULT_VARIANT, definition=None, presmoothing=None):
        self.variant = variant
        self.definition = definition
        self.presmoothing = presmoothing

    def _definition(self):
        d = self.definition or ("at_or_below" if self.variant == "faithful" else "mid")
        if d not in DEFINITIONS:
            raise ValueError(f"definition must be one of {DEFINITIONS}, not {d!r}")
        return d

    def _fit(self, ratings):
        self._fit_arrays(ratings.rater, ratings.score, ratings.n_raters, ratings.max_score)

    def _adjust_ratings(self, ratings):
        if ratings.max_score + 1 != self.table_.shape[-1]:
            raise MethodError(f"EQP was fitted on scale 0..{self.table_.shape[-1] - 1}, "
                              f"these ratings are on 0..{ratings.max_score}")
        return self._adjust_arrays(ratings.rater, ratings.score, ratings.max_score)

    # -- the arithmetic, on one data set (L,) or a stack of replications (B, L) ---------
    def _fit_arrays(self, rater, score, n_raters, max_score):
        """The fitted attributes from per-rating arrays; with ``(B, L)`` arrays (the Monte Carlo
        fast path; not with presmoothing) every attribute gets the leading replication axis."""
        definition = self._definition()
        m1 = max_score + 1
        counts = sums_by(rater * m1 + score, n_raters * m1).astype(np.int64)
        counts = counts.reshape(counts.shape[:-1] + (n_raters, m1))
        n = counts.sum(axis=-1)
        freq = counts.astype(np.float64)
        overall = counts.sum(axis=-2).astype(np.float64)
        if self.presmoothing is not None:
            c = check_count(self.presmoothing, "presmoothing", minimum=1)
            freq = np.array([loglinear_presmooth(f, c) if f.sum() > 0 else f for f in freq])
            overall = loglinear_presmooth(overall, c)
        self.n_, self.freq_, self.overall_freq_ = n, freq, overall

        if definition == "at_or_below":
            if self.variant == "faithful":
                # s = w%(aj, x) / w%(aj, mp);  t = w%(0, a) / bign   (singles)
                cum = np.cumsum(freq, axis=-1).astype(F32)
                cum0 = np.cumsum(overall, axis=-1).astype(F32)
                with np.errstate(invalid="ignore", divide="ignore"):
                    rank = (cum / cum[..., -1:]).astype(F32)
                    overall_rank = (cum0 / cum0[..., -1:]).astype(F32)
                table = basic_inverse_single(overall_rank, rank)
            else:
                rank = cumulative_at_or_below(freq)
                overall_rank = cumulative_at_or_below(overall)
                table = interpolate_inverse(overall_rank, rank, "lowest")
        else:
            dtype = F32 if self.variant == "faithful" else np.float64
            rank = mid_percentile_ranks(freq).astype(dtype)
            overall_rank = mid_percentile_ranks(overall).astype(dtype)
            table = interpolate_inverse(overall_rank, rank, "middle")
            table = table.astype(dtype)
        table = np.asarray(table, dtype=np.float64)
        table[n == 0] = np.nan
        self.rank_, self.overall_rank_, self.table_ = rank, overall_rank, table

    def _adjust_arrays(self, rater, score, max_score=None):
        m1 = self.table_.shape[-1]
        return at_rater(self.table_.reshape(self.table_.shape[:-2] + (-1,)), rater * m1 + score)
