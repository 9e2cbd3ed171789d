"""Conditional maximum likelihood (CML) for the partial credit and rating scale models.

Raters are the "items" and papers the "persons" of Rasch measurement.  Rater ``j`` gives
a paper of quality ``theta`` the score ``x`` with probability

    P(x) = exp(x theta - tau[j, x]) / sum_h exp(h theta - tau[j, h]),
    tau[j, x] = sum_{k <= x} delta[j, k]                       (tau[j, 0] = 0)

PCM (Masters 1982): every ``delta[j, k]`` free.  RSM (Andrich 1978):
``delta[j, k] = beta[j] + kappa[k]``, one threshold structure for every rater.

Given the paper's raters ``S`` and its total ``r``, theta drops out (Andersen 1973):

    P(x | r, S) = prod_{j in S} eps[j, x_j] / gamma_r(S),   eps[j, x] = exp(-tau[j, x]),

``gamma_r(S)`` the elementary symmetric function (ESF) of order r: the coefficient of
``t**r`` in ``prod_{j in S} sum_x eps[j, x] t**x``.  Papers are grouped by their rater set
so that each set's ESFs (and the leave-one-out and leave-two-out ESFs that the gradient
and Hessian need) are computed once and shared; groups of equal size are vectorised
together.  The conditional log-likelihood is maximised by Newton's method with the
analytic gradient and Hessian (the conditional covariance of the category indicators).

What cannot be estimated is reported as such (``nan`` in ``steps_``), not as a large
number:

* a category a rater never used: ``eps = 0`` (tau = +inf), so the two steps into and out
  of it are not estimable (their sum is);
* a category used only on *extreme* papers (total at the minimum or maximum the paper's
  raters could give): such papers carry no conditional information, so it is treated as
  unused; this is repeated until stable (dropping a top category can make more papers
  extreme);
* a rater left with fewer than two categories has no estimable step.

Identification: the conditional likelihood is unchanged by ``tau[j, x] += c x`` (a shift
of the quality scale) and, in the RSM, by ``beta -= d, kappa += d``.  Estimates are
reported centred: the mean of all estimable steps ``delta[j, k]`` is 0 (RSM: ``sum beta =
0`` and ``sum kappa = 0``, which also centres the steps).  psychotools' ``pcmodel`` fixes
``tau[1, 1] = 0`` instead; compare after centring both on the common steps.

Rater sets whose papers do not link all raters (a disconnected design) are refused: the
raters of different components cannot be put on one scale.  So are fits where no step can
be estimated, or no more than half of the steps keep their differences while the rest run off
against them (e.g. the 2+ design, which keeps mostly pairs within a point of each other: given
the total, the split is then always the closest one, and the thresholds spread apart for ever).

Checked (tests/methods/test_cml.py) against psychotools 0.7-2 ``pcmodel``/``rsmodel`` and a
patched eRm 1.0-2 ``PCM`` on a simulated 500-paper 0-9 set with two of nine raters per
paper: the same conditional log-likelihood and centred steps within 1e-4 logits; about
0.03-0.05 s here against about 1.5 s for ``pcmodel`` and 100 s for eRm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import math

import numpy as np
from scipy import sparse
from scipy.linalg import cho_factor, cho_solve

from ..errors import MethodError
from ..parallel import one_blas_thread
from ..ratings import Adjusted, Ratings
from .base import DeferredFit, RaterAdjuster, fair_score_adjusted

__all__ = ["CMLFit", "fit_cml", "conditional_loglik", "ConditionalPCM", "estimable_categories", "conditional_work",
           "set_work", "too_costly"]

#: the most work (:func:`conditional_work`) of a conditional fit that ``check`` makes; beyond it ``check`` (its
#: Rasch fit per rater, rater report, assignment evidence and bias tables) fits the same models by marginal ML,
#: in time linear in the ratings (:func:`too_costly`).  ~2e-8 s of CPU a unit for one fit (measured: 21 of 200
#: raters a paper, 4,200 ratings, 2.3e8 units, 4.9 s; 3 of 200, 100,000 ratings, 1.2e8 units, 2.4 s; 1M ratings,
#: 1.2e9 units, ~20 s a fit, two a check, where the marginal fits took ~1 s): about 5 s a fit
CHECK_WORK = 2.5e8


# ---------------------------------------------------------------------------------------
# polynomial (ESF) helpers, batched over the leading axes
# ---------------------------------------------------------------------------------------
#: two polynomials both at least this long, in at most as many rows as the shorter has terms, are multiplied row by
#: row by numpy's convolution (a loop in C) rather than by a numpy operation a term (a loop in Python): a complete panel
#: of raters is one set of raters whose products are hundreds of terms long (100 raters on 0-5: an edge tester's
#: check spent 170 of its 173 s here); the short products of two or three raters a paper are as they were
CONVOLVE_FROM = 32


def _polymul(a, b):
    """Batched polynomial product over the last axis: (..., na) x (..., nb) -> (..., na+nb-1)."""
    na, nb = a.shape[-1], b.shape[-1]
    lead = a.shape[:-1] if a.shape[:-1] == b.shape[:-1] else np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    shape = lead + (na + nb - 1,)
    if min(na, nb) >= CONVOLVE_FROM and math.prod(lead) <= min(na, nb):
        if a.shape[:-1] != lead or b.shape[:-1] != lead:
            a, b = np.broadcast_to(a, lead + (na,)), np.broadcast_to(b, lead + (nb,))
        out = np.empty(shape)
        for k in np.ndindex(lead):   # (one row, a panel's one set of raters, nearly always)
            out[k] = np.convolve(a[k], b[k])
        return out
    out = np.zeros(shape)
    if nb <= na:
        for i in range(nb):
            out[..., i:i + na] += a * b[..., i:i + 1]
    else:
        for i in range(na):
            out[..., i:i + nb] += b * a[..., i:i + 1]
    return out


def _esf_products(E):
    """ESFs of a batch of rater sets.

    E : (G, s, K) polynomial coefficients ``eps[j, x]`` of the s raters of each of G sets.
    Returns ``full`` (G, s(K-1)+1), ``loo`` (G, s, (s-1)(K-1)+1) leaving rater i out, and
    ``lto`` (G, s, s, (s-2)(K-1)+1) leaving raters i and k out (zero on the diagonal),
    from prefix, middle and suffix products (no polynomial division, so no cancellation).
    """
    G, s, K = E.shape

    def mul(a, b):  # None is the polynomial 1 (a product with it is the other factor, exactly)
        return b if a is None else a if b is None else _polymul(a, b)

    def poly(a):
        return np.ones((G, 1)) if a is None else a

    prefix = [None]
    for i in range(s):
        prefix.append(mul(prefix[-1], E[:, i]))
    suffix = [None]
    for i in range(s - 1, 0, -1):
        suffix.append(mul(suffix[-1], E[:, i]))
    suffix = [None] + suffix[::-1]  # suffix[i] = prod_{k >= i}, i >= 1
    full = prefix[s]
    loo = np.stack([poly(mul(prefix[i], suffix[i + 1])) for i in range(s)], axis=1)
    lto = None
    if s >= 2:
        L = (s - 2) * (K - 1) + 1
        lto = np.zeros((G, s, s, L))
        for i in range(s):
            mid = None
            for k in range(i + 1, s):
                p = poly(mul(mul(prefix[i], mid), suffix[k + 1]))
                lto[:, i, k] = p
                lto[:, k, i] = p
                mid = mul(mid, E[:, k])
    return full, loo, lto


# ---------------------------------------------------------------------------------------
# data preparation
# ---------------------------------------------------------------------------------------
def estimable_categories(ratings: Ratings, model: str = "pcm"):
    """Which categories each rater has, and which papers inform the conditional likelihood.

    Returns ``(cats, informative)``: ``cats`` (J, M+1) bool, category x of rater j can be
    estimated (for the RSM a category is kept for every rater when any rater used it on
    an informative paper); ``informative`` (n_papers,) bool, the paper has two or more
    raters with categories, all its scores are within its raters' ranges, and its total
    is strictly between the least and the most those raters could give.  Iterated to a
    fixed point (a category seen only on extreme papers is dropped).
    """
    J, K = ratings.n_raters, ratings.max_score + 1
    paper, rater, score = ratings.paper, ratings.rater, ratings.score
    keep = np.ones(ratings.n_ratings, dtype=bool)
    while True:
        counts = np.zeros((J, K))
        np.add.at(counts, (rater[keep], score[keep]), 1.0)
        cats = counts > 0
        if model == "rsm":
            cats = np.broadcast_to(cats.any(axis=0), (J, K)).copy()
            cats[counts.sum(axis=1) == 0] = False
        ncat = cats.sum(axis=1)
        cats[ncat < 2] = False
        has = cats.any(axis=1)
        lo = np.where(has, np.argmax(cats, axis=1), 0)
        hi = np.where(has, K - 1 - np.argmax(cats[:, ::-1], axis=1), 0)
        rated = has[rater]
        inside = (score >= lo[rater]) & (score <= hi[rater])
        npap = ratings.n_papers
        n_in = np.bincount(paper, weights=rated, minlength=npap)
        bad = np.bincount(paper, weights=rated & ~inside, minlength=npap) > 0
        tot = np.bincount(paper, weights=np.where(rated, score, 0), minlength=npap)
        tlo = np.bincount(paper, weights=np.where(rated, lo[rater], 0), minlength=npap)
        thi = np.bincount(paper, weights=np.where(rated, hi[rater], 0), minlength=npap)
        informative = (n_in >= 2) & ~bad & (tot > tlo) & (tot < thi)
        new_keep = informative[paper] & rated
        if np.array_equal(new_keep, keep):
            return cats, informative
        keep = new_keep


@dataclass
class _Groups:
    """Informative papers grouped by rater set, then by (set, total) 'units'."""

    sizes: list  # per set size s: dict(items (G,s), unit_group (U,), unit_r (U,), unit_w (U,))
    counts: np.ndarray  # (J, K) category counts over informative ratings
    n_papers: int


def conditional_work(ratings: Ratings) -> tuple[float, int, int]:
    """(work, distinct rater sets, most raters of a set): the conditional likelihood's information sums,
    for each distinct set of raters that scored papers together, a block of (raters x steps)^2 entries
    at each of the set's (raters x steps + 1) totals, at every evaluation: work = sum over the sets of
    (s M)^2 (s M + 1).  It grows with the ratings where sets repeat or are small (two or three of 200
    raters a paper), but where every paper has its own set of many raters (21 of 200: 1.2M units a
    paper, 2.2 ms of CPU) with the papers times the cube of the raters a paper."""
    order = np.lexsort((ratings.rater, ratings.paper))
    p, r = ratings.paper[order], ratings.rater[order]
    keep = np.r_[True, (p[1:] != p[:-1]) | (r[1:] != r[:-1])] if p.size else np.zeros(0, dtype=bool)
    p, r = p[keep], r[keep]
    _, start, size = np.unique(p, return_index=True, return_counts=True)
    work, n_sets, M = 0.0, 0, ratings.max_score
    for k in np.unique(size):
        rows = r[start[size == k][:, None] + np.arange(k)[None, :]]
        n = np.unique(rows, axis=0).shape[0] if k > 1 else np.unique(rows).size
        n_sets += n
        work += set_work(n, k, M)
    return work, n_sets, int(size.max(initial=0))


def set_work(n_sets, size: int, M: int) -> float:
    """The information's work at ``n_sets`` rater sets of ``size`` raters (:func:`conditional_work`): a block of
    (size M)^2 entries at each of a set's size M + 1 totals."""
    return float(n_sets) * float(size * M) ** 2 * (size * M + 1)


#: CPU seconds of a marginal fit (:mod:`.mml`), roughly: a rating's share of its evaluations and, for its ``P``
#: parameters, its P x P information's factors (measured: 1M ratings, 200 raters, the PCM's 1,000 parameters, ~1 s;
#: 800 raters, 4,000 parameters, ~18 s)
MARGINAL_RATING_S = 1e-6
MARGINAL_PARAMETER_S = 3e-10


def too_costly(ratings: Ratings, parameters: int | None = None, work=None) -> str | None:
    """Why ``check`` fits a Rasch model to ``ratings`` by marginal rather than conditional ML (a phrase, to which
    the caller adds what it fitted instead), or None where the conditional fit's work (:func:`conditional_work`,
    ~2e-8 s of CPU a unit; ``work``: its result where the caller has it, 0.4 s at 1M ratings) is within
    CHECK_WORK or where the marginal fit of ``parameters`` would cost more (MARGINAL_RATING_S,
    MARGINAL_PARAMETER_S: the PCM of 800 raters, 4,000 parameters, at 2 raters a paper: ~20 s by MML where ~6 s
    by CML)."""
    work, n_sets, most = conditional_work(ratings) if work is None else work
    if work <= CHECK_WORK:
        return None
    sec = 2e-8 * work
    if parameters is not None and MARGINAL_RATING_S * ratings.n_ratings + MARGINAL_PARAMETER_S * float(parameters) ** 3 >= sec:
        return None
    took = f"{sec:.0f} s" if sec < 120 else f"{sec / 60:.0f} minutes"
    return (f"conditional ML would take about {took} of CPU a fit ({n_sets:,} distinct sets of up to {most} raters "
            f"scored the papers, and its information is a (raters x steps)^2 block at every total of every set)")


def _group(ratings: Ratings, cats, informative) -> _Groups:
    J, K = cats.shape
    has = cats.any(axis=1)
    m = informative[ratings.paper] & has[ratings.rater]
    paper, rater, score = ratings.paper[m], ratings.rater[m], ratings.score[m]
    order = np.lexsort((rater, paper))
    paper, rater, score = paper[order], rater[order], score[order]
    counts = np.zeros((J, K))
    np.add.at(counts, (rater, score), 1.0)
    # papers' rater sets as rows of a (P, smax) table
    upap, start, size = np.unique(paper, return_index=True, return_counts=True)
    total = np.add.reduceat(score, start) if upap.size else np.zeros(0, dtype=np.int64)
    out = []
    for s in np.unique(size):
        sel = size == s
        rows = start[sel][:, None] + np.arange(s)[None, :]
        sets = rater[rows]  # (P_s, s), sorted within row
        if float(J) ** s < 2.0 ** 62:   # the rows as numbers in base J: same order, a much faster sort
            code = sets[:, 0].astype(np.int64)
            for c in range(1, s):
                code = code * J + sets[:, c]
            ucode, gidx = np.unique(code, return_inverse=True)
            items = np.empty((ucode.size, s), dtype=sets.dtype)
            for c in range(s - 1, -1, -1):
                ucode, items[:, c] = np.divmod(ucode, J)
        else:
            items, gidx = np.unique(sets, axis=0, return_inverse=True)
        gidx = gidx.ravel()
        r = total[sel]
        key = gidx * (s * (K - 1) + 1) + r
        ukey, w = np.unique(key, return_counts=True)
        ug = ukey // (s * (K - 1) + 1)
        gstart = np.flatnonzero(np.r_[True, ug[1:] != ug[:-1]])  # units are sorted by group
        flat = (items[:, :, None] * K + np.arange(K)[None, None, :]).reshape(len(items), s * K)
        ur = ukey % (s * (K - 1) + 1)
        kk = np.arange(K)
        # gathers used every iteration, as flat indices; out-of-range points at an appended 0
        L1 = (s - 1) * (K - 1) + 1
        off1 = ur[:, None] - kk[None, :]  # (U, K): gamma_{r-x}(S \ i)
        idx1 = (ug[:, None, None] * s + np.arange(s)[None, :, None]) * L1 + off1[:, None, :]
        idx1 = np.where(((off1 >= 0) & (off1 < L1))[:, None, :], idx1, len(items) * s * L1)
        pairs = [(i, k) for i in range(s) for k in range(i + 1, s)]
        out.append(dict(items=items, unit_group=ug, unit_r=ur, unit_w=w.astype(float), gstart=gstart,
                        gflat=flat.ravel(), idx1=idx1, pairs=pairs,
                        eidx=(ug[:, None] * s + np.arange(s)[None, :])))
    return _Groups(out, counts, int(upap.size))


def _check_connected(groups: _Groups, has, rater_ids, name="CML"):
    """Refuse raters in groups that share no informative paper, naming them by label."""
    from ..network import min_label_components

    low = [g["items"][:, 0].repeat(g["items"].shape[1] - 1) for g in groups.sizes]
    high = [g["items"][:, 1:].ravel() for g in groups.sizes]
    labels = min_label_components(has.size, np.concatenate(low), np.concatenate(high))
    roots = set(labels[has].tolist())
    if len(roots) > 1:
        comps = {}
        for j in np.flatnonzero(has):
            comps.setdefault(labels[j], []).append(str(rater_ids[j]))
        desc = "; ".join("raters " + ", ".join(v) for v in comps.values())
        raise MethodError(f"{name}: the raters fall into {len(roots)} groups that share no informative papers ({desc}); "
                          "they cannot be calibrated on one scale")


# ---------------------------------------------------------------------------------------
# likelihood, gradient and Hessian in tau
# ---------------------------------------------------------------------------------------
def _eps(tau, cats):
    """eps = exp(-tau) on estimable categories, 0 elsewhere; each rater scaled to max 1.

    The per-rater factor cancels in P(x | r, S).  Returns eps and the log of the factors.
    """
    t = np.where(cats, tau, np.inf)
    tmin = np.min(np.where(cats, t, np.inf), axis=1, keepdims=True)
    tmin = np.where(np.isfinite(tmin), tmin, 0.0)
    return np.exp(-(t - tmin)), tmin[:, 0]


#: block entries of a chunk of rater sets in :func:`_information_blocks` (~1 MB an array): at 3 of 200 raters
#: a paper (18 x 18 blocks, 300,000 ratings) 404 sets a chunk, an information 0.69 -> 0.57 s of CPU (PCM;
#: RSM 0.66 -> 0.53, min of 3) against 4,096 sets (10 MB arrays)
_CHUNK_ENTRIES = 2 ** 17


def _information_blocks(E, loo, lto, ug, ur, w, gam, wp_sum, pairs):
    """Each rater set's block of the information, summed over its papers: (a, b, blocks) for the
    sets a..b-1 in turn, blocks (b - a, s*K, s*K) (chunks of sets: no (G, sK, sK) array at once; of
    about _CHUNK_ENTRIES block entries each, so that the chunk's several arrays of that size stay in
    the processor's cache).

    Cov(I[X_i = x], I[X_k = h] | r) = P(X_i = x, X_k = h | r) - P_ix P_kh, the joint probability
    ``eps_ix eps_kh gamma_{r-x-h}(S \\ {i,k}) / gamma_r`` (i != k) or ``P_ix [x = h]``, with
    ``P_ix = eps_ix gamma_{r-x}(S \\ i) / gamma_r``.  Summed over a set's totals r (weights w, papers
    per (set, total)) before the products with eps: with per-total weights ``w / gamma_r`` and
    ``w / gamma_r**2``, the products term is ``eps eps' (L' diag(w / gamma**2) L)`` for the table
    ``L[r, (i, x)] = gamma_{r-x}(S \\ i)``, and the joint term depends on r and x + h only.
    ``wp_sum`` (G, s, K) is the sum of ``w P_ix`` over the set's totals (the diagonal)."""
    from numpy.lib.stride_tricks import sliding_window_view

    G, s, K = E.shape
    T = s * (K - 1) + 1
    c = np.zeros((G, T))
    c[ug, ur] = w / gam
    q = np.zeros((G, T))
    q[ug, ur] = w / gam ** 2
    L1 = loo.shape[-1]
    padded = np.zeros((G, s, L1 + 2 * (K - 1)))
    padded[:, :, K - 1:K - 1 + L1] = loo
    table = sliding_window_view(padded, K, axis=2)[..., ::-1]  # (G, s, T, K): gamma_{t-x}(S \\ i)
    xh = np.arange(K)[:, None] + np.arange(K)[None, :]
    ii = np.arange(s * K)
    chunk = max(1, _CHUNK_ENTRIES // (s * K) ** 2)
    for a in range(0, G, chunk):
        b = min(G, a + chunk)
        X = np.ascontiguousarray(table[a:b].transpose(0, 2, 1, 3)).reshape(b - a, T, s * K)
        Ef = E[a:b].reshape(b - a, s * K)
        blk = np.matmul((X * q[a:b, :, None]).transpose(0, 2, 1), X)
        blk *= -Ef[:, :, None]
        blk *= Ef[:, None, :]
        blk[:, ii, ii] += wp_sum[a:b].reshape(b - a, s * K)
        if pairs:
            L2 = lto.shape[-1]
            joint = np.zeros((b - a, s, s, 2 * K - 1))   # sum_r (w / gamma_r) gamma_{r-m}(S \\ {i,k}), m = x + h
            for l_ in range(L2):
                joint += c[a:b, None, None, l_:l_ + 2 * K - 1] * lto[a:b, :, :, l_:l_ + 1]
            b5 = blk.reshape(b - a, s, K, s, K)
            for i, k in pairs:
                P2 = joint[:, i, k][:, xh] * (E[a:b, i, :, None] * E[a:b, k, None, :])
                b5[:, i, :, k, :] += P2
                b5[:, k, :, i, :] += P2.transpose(0, 2, 1)
        yield a, b, blk


class _Target:
    """The parameters the information is assembled over: ``P`` of them, and for each rater set the
    map from its raters' categories (s K rows of tau) to them, as ``local(g) -> (Aloc, pidx)``: a
    local design ``Aloc`` (s K, m) shared by the sets of that size (None: the identity) and each
    set's parameter for each of the m local columns (G, m; -1: none).  A set's block ``B`` of the
    information in tau adds ``Aloc' B Aloc`` at those parameters.  :func:`_tau_target`: tau itself;
    a fit's phi: :meth:`_Problem.target`."""

    def __init__(self, P, local):
        self.P, self._local, self._cache = P, local, {}

    def scatter(self, g):
        """(Aloc, each set's parameter for each local column (G, m; -1: none), in 32-bit integers where
        they suffice)."""
        s = g["items"].shape[1]
        if s not in self._cache:
            Aloc, pidx = self._local(g["items"])
            self._cache[s] = (Aloc, pidx.astype(np.int32 if self.P * self.P < 2 ** 31 else np.int64))
        return self._cache[s]

    def indices(self, pidx, a, b):
        """Flat indices into the (P, P) information of the (m, m) reduced blocks of the sets a..b-1
        (P*P for none): made for each chunk of sets, not kept (at 3 of 200 raters a paper, 1M ratings,
        the PCM's would take 400 MB)."""
        p = pidx[a:b]
        ok = p >= 0
        hidx = p[:, :, None] * p.dtype.type(self.P) + p[:, None, :]
        hidx[~(ok[:, :, None] & ok[:, None, :])] = self.P * self.P
        return hidx.ravel()


def _tau_target(J, K):
    """The information over tau itself (J K parameters)."""
    return _Target(J * K, lambda items: (None, (items[:, :, None] * K + np.arange(K)).reshape(len(items), -1)))


def _loglik_grad_hess_core(tau, cats, groups: _Groups, order=2, target=None):
    """Conditional log-likelihood, its gradient (J, K) in tau and information (P, P) over the
    parameters of ``target`` (:class:`_Target`; default tau itself, P = J K).

    d logL / d tau[j, x] = -n[j, x] + sum_v P_v(X_j = x | r_v)
    -d2 logL / d tau d tau' = sum_v Cov_v(I[X_j = x], I[X_k = h] | r_v)

    Sums over papers run over units (rater set, total) weighted by their paper counts and
    are reduced per rater set (:func:`_information_blocks`) before being scattered into the
    rater-level arrays.
    """
    J, K = cats.shape
    target = target or _tau_target(J, K)
    eps, shift = _eps(tau, cats)
    counts = groups.counts
    ll = -np.sum(np.where(counts > 0, counts * (tau - shift[:, None]), 0.0))
    grad = -counts.ravel()
    P = target.P
    if order >= 2:
        from ..config import require_memory

        # (four P x P arrays at once: the information, a set's part of it, the penalised matrix and its factor; at two
        # a verifier's 40,000 raters passed with 20.7 of 22 GiB and the kernel ended check at 23.8 GB, no word)
        require_memory(4 * 8.0 * P * P, f"the conditional model's information of {P:,} parameters ({P:,} x {P:,})",
                       "-m RSM (one set of thresholds for every rater) or check's --no-rasch do with less")
    hess = np.zeros(P * P + 1) if order >= 2 else None   # the last: where non-parameters go
    first = True
    bar = _information_bar(groups, K) if order >= 2 else None
    try:
        for g in groups.sizes:
            items, ug, ur, w, gstart = g["items"], g["unit_group"], g["unit_r"], g["unit_w"], g["gstart"]
            E = eps[items]  # (G, s, K)
            G, s = items.shape
            full, loo, lto = _esf_products(E)
            gam = full[ug, ur]  # (U,)
            if not np.all(gam > 0) or not np.all(np.isfinite(gam)):
                raise MethodError("CML: elementary symmetric functions under- or overflowed")
            ll -= np.dot(w, np.log(gam))
            # P(X_i = x | r) = eps[i, x] * gamma_{r-x}(S \ i) / gamma_r(S)     (U, s, K)
            Eu = E.reshape(G * s, K)[g["eidx"]]
            P1 = np.append(loo.ravel(), 0.0)[g["idx1"]] * Eu / gam[:, None, None]
            wP1 = w[:, None, None] * P1
            wp_sum = np.add.reduceat(wP1, gstart, axis=0)  # (G, s, K)
            grad += np.bincount(g["gflat"], weights=wp_sum.ravel(), minlength=J * K)
            if order < 2:
                continue
            Aloc, pidx = target.scatter(g)
            m = s * K if Aloc is None else Aloc.shape[1]
            # each set size summed on its own, then added (as a bincount per size did: the same roundings,
            # which matter along a diverging estimate's direction of almost no information)
            part = hess if first else np.zeros_like(hess)
            for a, b, block in _information_blocks(E, loo, lto, ug, ur, w, gam, wp_sum, g["pairs"]):
                if Aloc is not None:   # Aloc' B Aloc, as two products over the chunk's sets at once
                    block = (block.reshape(-1, s * K) @ Aloc).reshape(b - a, s * K, m)
                    block = np.ascontiguousarray(block.transpose(0, 2, 1)).reshape(-1, s * K) @ Aloc
                np.add.at(part, target.indices(pidx, a, b), block.ravel())
                if bar is not None:
                    bar.update(b - a)
            if part is not hess:
                hess += part
            first = False
    finally:
        if bar is not None:
            bar.close()
    grad = grad.reshape(J, K)
    if hess is not None:
        hess = hess[:P * P].reshape(P, P)
    return ll, grad, hess


#: an information of at least this much work (:func:`conditional_work`'s units, ~2e-8 s of CPU each) shows a
#: progress bar over its rater sets (on a terminal; in the app, its job's progress and Cancel): 21 of 200 raters
#: a paper, 1M ratings, one information is ~2.5 CPU minutes of a fit's ~19 (``adjust -m CML`` ran silent)
PROGRESS_WORK = CHECK_WORK


def _information_bar(groups: _Groups, K: int):
    """A progress bar over the rater sets of an information of at least PROGRESS_WORK, else None."""
    sets = [g["items"].shape for g in groups.sizes]
    work = sum(set_work(G, s, K - 1) for G, s in sets)
    if work < PROGRESS_WORK:
        return None
    from ..progress import progress

    return progress(total=sum(G for G, _ in sets), desc="CML information", unit="set")


def _loglik_grad_hess(tau, cats, groups: _Groups, order=2, target=None):
    """:func:`_loglik_grad_hess_core`, raising MethodError when anything over- or underflowed."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        ll, grad, hess = _loglik_grad_hess_core(tau, cats, groups, order, target)
    if not (np.isfinite(ll) and np.all(np.isfinite(grad)) and (hess is None or np.all(np.isfinite(hess)))):
        raise MethodError("CML: elementary symmetric functions under- or overflowed")
    return ll, grad, hess


def conditional_loglik(ratings: Ratings, tau, model: str = "pcm") -> float:
    """The conditional log-likelihood of ``ratings`` at cumulative parameters ``tau`` (J, M+1).

    Only informative papers and estimable categories enter (see :func:`estimable_categories`);
    ``tau[j, 0]`` need not be 0 (a constant per rater cancels).
    """
    cats, informative = estimable_categories(ratings, model)
    groups = _group(ratings, cats, informative)
    tau = np.where(cats, np.asarray(tau, dtype=float), 0.0)
    return float(_loglik_grad_hess(tau, cats, groups, order=1)[0])


# ---------------------------------------------------------------------------------------
# the fit
# ---------------------------------------------------------------------------------------
@dataclass
class CMLFit:
    """Result of :func:`fit_cml` (J raters, scale 0..M).

    steps : (J, M) centred step parameters ``delta[j, k]`` (k = 1..M in column k-1), nan
        where not estimable.
    steps_se : (J, M) their standard errors (inverse of the observed information), nan
        where not estimable.
    tau : (J, M+1) cumulative parameters on the centred scale, ``tau[j, lo_j] = 0`` at the
        rater's lowest estimable category; +inf for categories that cannot be estimated;
        diverging steps capped (see :func:`fit_cml`).
    categories : (J, M+1) bool, estimable categories.
    beta, kappa : RSM rater locations (sum 0) and thresholds (sum 0); nan for the PCM.
    loglik : conditional log-likelihood at the estimate.
    informative : (n_papers,) bool, papers that entered the conditional likelihood.
    n_iter, converged : Newton iterations and whether the gradient vanished.
    diverged : (J, M) bool, steps whose estimate runs off to infinity (reported as nan).
    notes : one line per rater with steps that cannot be estimated, and why.
    resting : (J, M+1) bool, categories that a limited non-estimable step makes (almost)
        impossible: a rating there rests on that step (:func:`_cap_diverged`).
    information : the observed information over the free parameters (``tau = A phi``,
        :func:`_design`) at the estimate.
    cov : its pseudo-inverse, the covariance of phi the standard errors are of (None without them).
    """

    steps: np.ndarray
    steps_se: np.ndarray
    tau: np.ndarray
    categories: np.ndarray
    beta: np.ndarray
    kappa: np.ndarray
    loglik: float
    informative: np.ndarray
    n_iter: int
    converged: bool
    diverged: np.ndarray = None
    notes: list = field(default_factory=list)
    resting: np.ndarray = None
    information: np.ndarray = None
    cov: np.ndarray = None


def _design(cats, model):
    """The linear map phi -> tau: ``tau[j, x] = coef[j, x] phi[own[j, x]] + phi[shared[x]]`` (a term
    left out where its index is -1).  Returns ``(own, coef, shared)``, (J, K), (J, K), (K,).

    PCM: phi = tau[j, x] for estimable x above the rater's lowest category (``own``, coef 1; no
    shared parameters).
    RSM: phi = (beta_j for raters with categories, K_x = cumulative kappa for estimable x above
    the lowest used category c0); tau[j, x] = (x - c0) beta_j + K_x.
    """
    J, K = cats.shape
    has = cats.any(axis=1)
    own = np.full((J, K), -1)
    shared = np.full(K, -1)
    if model == "pcm":
        lo = np.where(has, np.argmax(cats, axis=1), 0)
        free = cats & (np.arange(K)[None, :] > lo[:, None])
        own[free] = np.arange(free.sum())
        return own, free.astype(float), shared
    anycat = cats.any(axis=0)
    c0 = int(np.argmax(anycat)) if anycat.any() else 0
    nb = int(has.sum())
    own[cats] = np.broadcast_to((np.cumsum(has) - 1)[:, None], (J, K))[cats]
    coef = np.where(cats, np.arange(K)[None, :] - c0, 0.0)
    xs = np.flatnonzero(anycat & (np.arange(K) > c0))
    shared[xs] = nb + np.arange(xs.size)
    return own, coef, shared


def _centre(tau, cats, model, exclude=None):
    """Centre: steps of estimable adjacent categories have mean 0; tau[j, lo_j] = 0.

    Steps in ``exclude`` (diverging estimates) are left out of the mean."""
    J, K = cats.shape
    t = np.where(cats, tau, np.nan)
    has = cats.any(axis=1)
    lo = np.where(has, np.argmax(cats, axis=1), 0)
    t = t - np.where(has, t[np.arange(J), lo], 0.0)[:, None]
    steps = np.diff(t, axis=1)  # nan where either category is not estimable
    finite = np.isfinite(steps)
    if exclude is not None:
        finite &= ~exclude
    c = steps[finite].mean() if finite.any() else 0.0
    steps = steps - c
    t = t - c * (np.arange(K)[None, :] - lo[:, None])
    return steps, t


def _cap_diverged(tau, cats, diverged, bound, side=None):
    """(tau, resting): tau with every diverging step, and every difference across categories the
    rater never used, limited to +-bound per step spanned; +inf off ``cats``.  One that runs off (a
    difference whose upper category has ``side`` +-1) is set at the limit on that side: where it
    stopped is a matter of the path.  ``resting`` (J, K)
    marks the categories made (almost) impossible by such a limit: a rating there rests on a step
    that cannot be estimated.

    Where a diverging estimate stops is arbitrary (it depends on the stopping rule), so the
    parameters used for qualities, fair scores and fit take such steps at ``bound`` logits:
    the category stays (almost) impossible in that direction, but no paper's quality is
    dragged to where an essentially impossible rating would become likely.  The same holds for
    the sum of the steps across an unused category: estimable in principle, it runs off when the
    categories on its two sides are never compared on an informative paper (a rater's only 0,
    on a paper rated 1, 0, 0, beside ratings of 2 and more: the sum of steps 1-2 was -34 logits
    and that paper's quality -17).  ``tau[b] - tau[a] -> -inf`` makes category ``a`` impossible,
    ``+inf`` category ``b``.
    """
    J, K = cats.shape
    out = np.full((J, K), np.inf)
    resting = np.zeros((J, K), dtype=bool)
    for j in range(J):
        cj = np.flatnonzero(cats[j])
        if cj.size == 0:
            continue
        out[j, cj[0]] = 0.0
        for a, b in zip(cj[:-1], cj[1:]):
            diff = tau[j, b] - tau[j, a]
            if diverged[j, a:b].any() or b - a > 1:
                lim = (b - a) * bound
                if side is not None and side[j, b] != 0:
                    diff = float(side[j, b]) * lim
                resting[j, a] |= bool(diff <= -lim)
                resting[j, b] |= bool(diff >= lim)
                diff = float(np.clip(diff, -lim, lim))
            out[j, b] = out[j, a] + diff
    return out, resting


class _BlockJacobi:
    """The diagonal blocks ``D`` of a penalised information ``pen`` over each rater's own parameters
    (shared ones, the RSM's thresholds, one more block): ``D^-1`` preconditions the conjugate-gradient
    Newton step (:func:`_direction`), and ``pen``'s smallest eigenvalue is at least
    ``mu_min(L^-1 pen L^-T) * min eig(D)`` (``D = L L'``; :meth:`lower_bound`).  Raters interact only
    through shared papers, so ``L^-1 pen L^-T`` is close to the identity (at 1M ratings and 800 raters
    its eigenvalues but the penalty's lie in 0.34-1.1): both take a few products with ``pen``.
    Raises LinAlgError if a block is not positive definite (then neither is ``pen``)."""

    def __init__(self, pen, owner):
        n = pen.shape[0]
        _, blk, cnt = np.unique(owner, return_inverse=True, return_counts=True)
        order = np.argsort(blk, kind="stable")
        pos = np.arange(n) - np.r_[0, np.cumsum(cnt)[:-1]][blk[order]]
        idx = np.full((cnt.size, cnt.max()), n)     # each block's parameters; n pads
        idx[blk[order], pos] = order
        pad = idx == n
        safe = np.where(pad, 0, idx)
        B = pen[safe[:, :, None], safe[:, None, :]]
        B[pad[:, :, None] | pad[:, None, :]] = 0.0
        B[pad[:, :, None] & np.eye(idx.shape[1], dtype=bool)] = np.max(np.diag(pen))  # padding: no smaller eigenvalue
        self.n, self.idx = n, idx
        self.Linv = np.linalg.inv(np.linalg.cholesky(B))
        self.Binv = np.einsum("bki,bkj->bij", self.Linv, self.Linv)   # B^-1 = L^-T L^-1
        self.min_block = float(np.linalg.eigvalsh(B).min())

    def _apply(self, mats, v):
        out = np.zeros(self.n + 1)
        out[self.idx] = np.einsum("bij,bj->bi", mats, np.append(v, 0.0)[self.idx])
        return out[:self.n]

    def solve(self, v):
        """D^-1 v."""
        return self._apply(self.Binv, v)

    def lower_bound(self, pen):
        """A lower bound of pen's smallest eigenvalue: that of ``L^-1 pen L^-T`` (Lanczos, ARPACK: the
        Ritz value less its residual's norm) times the blocks' smallest; -inf if Lanczos has not
        converged within ~100 products with ``pen`` (a factorisation costs about as much)."""
        from scipy.sparse.linalg import ArpackError, LinearOperator, eigsh

        LinvT = self.Linv.transpose(0, 2, 1)

        def scaled(v):
            return self._apply(self.Linv, pen @ self._apply(LinvT, v))

        op = LinearOperator((self.n, self.n), matvec=scaled, dtype=float)
        try:
            mu, v = eigsh(op, k=1, which="SA", tol=1e-6, maxiter=5, v0=np.ones(self.n))
        except ArpackError:   # ArpackNoConvergence included
            return -np.inf
        v = v[:, 0]
        return (mu[0] - np.linalg.norm(scaled(v) - mu[0] * v)) * self.min_block


def _direction(pen, gphi, owner):
    """``pen^-1 gphi`` and what :func:`_below` can use: ``(d, factor, blocks)``.  Up to
    ``_ITERATIVE_FROM`` parameters by a Cholesky factorisation (``factor``); from there by conjugate
    gradients preconditioned with the per-rater blocks (``blocks``, :class:`_BlockJacobi`): with
    hundreds of raters a factorisation of ``pen`` costs as much as ~100 iterations, and ~15 reach
    1e-13 (then the factorisation all the same).  CG gives up after ``_CG_ITERATIONS``: where ``pen`` is
    ill conditioned (an estimate running off, its information falling towards round-off) it would go on
    for up to 10 x the parameters' products with ``pen`` each Newton step where the factorisation costs
    ~100.  Raises LinAlgError if ``pen`` is not positive definite."""
    if pen.shape[0] < _ITERATIVE_FROM:
        factor = cho_factor(pen, check_finite=False)
        return cho_solve(factor, gphi, check_finite=False), factor, None
    from scipy.sparse.linalg import LinearOperator, cg

    blocks = _BlockJacobi(pen, owner)
    n = pen.shape[0]
    d, info = cg(pen, gphi, M=LinearOperator((n, n), matvec=blocks.solve, dtype=float), rtol=1e-13, atol=0.0,
                 maxiter=_CG_ITERATIONS)
    if info != 0:
        factor = cho_factor(pen, check_finite=False)
        return cho_solve(factor, gphi, check_finite=False), factor, blocks
    return d, None, blocks


def _below(pen, t, factor=None, blocks=None):
    """Has the symmetric ``pen`` an eigenvalue below ``t``?  ``pen`` is the information with the
    identification's null directions penalised, so this asks whether the information has a
    direction below ``t`` besides those (what comparing eigenvalue counts asked).

    Small matrices: ``pen - t I`` is then not positive definite and its Cholesky factorisation
    fails.  Large ones (hundreds of raters), given ``factor``, pen's own Cholesky factorisation
    (:func:`scipy.linalg.cho_factor`) made for the Newton step: the largest eigenvalue of
    ``pen^-1`` by Lanczos iterations (ARPACK), each two triangular solves, instead of a second
    factorisation (one costs as much as ~100 solves).  Given ``blocks`` (:class:`_BlockJacobi`) and
    no factorisation: no, if their lower bound is above ``2 t``; else as with a factorisation."""
    n = pen.shape[0]
    if factor is None and blocks is not None and n > _LANCZOS_FROM:
        if blocks.lower_bound(pen) > 2.0 * t:
            return False
        try:
            factor = cho_factor(pen, check_finite=False)
        except np.linalg.LinAlgError:
            return True
    if factor is not None and n > _LANCZOS_FROM:
        from scipy.sparse.linalg import LinearOperator, eigsh

        op = LinearOperator((n, n), matvec=lambda v: cho_solve(factor, v, check_finite=False), dtype=float)
        top = eigsh(op, k=1, which="LA", tol=1e-10, return_eigenvectors=False, v0=np.ones(n))[0]
        return bool(top > 1.0 / t)
    shifted = pen.copy()
    shifted[np.diag_indices(n)] -= t
    try:
        cho_factor(shifted, check_finite=False)
    except np.linalg.LinAlgError:
        return True
    return False


#: from this many free parameters on, :func:`_below` uses Lanczos iterations on the factorisation
_LANCZOS_FROM = 400
#: from this many free parameters on, a Newton step is solved by conjugate gradients (:func:`_direction`)
_ITERATIVE_FROM = 1500
#: ... in at most this many iterations, else by the factorisation (which costs about half as many)
_CG_ITERATIONS = 200


@one_blas_thread
def fit_cml(ratings: Ratings, model: str = "pcm", tol: float = 1e-9, max_iter: int = 100,
            start=None, max_se: float = 10.0, cap_margin: float = 2.0, standard_errors: bool = True) -> CMLFit:
    """Maximise the conditional likelihood of the PCM (``model="pcm"``) or RSM (``"rsm"``).

    Newton's method on the free parameters phi (tau = A phi), gradient ``A' g`` and Hessian
    ``A' H A`` from :func:`_loglik_grad_hess` (assembled over phi directly, :class:`_Target`), the
    identification's null directions penalised (:func:`_identification`), each step solved by a
    Cholesky factorisation or, from ``_ITERATIVE_FROM`` parameters on, by preconditioned conjugate
    gradients (:func:`_direction`); step halving if the likelihood falls.
    Stops when the largest |gradient| is below ``tol`` times the number of informative
    papers (or after ``max_iter`` iterations; ``converged`` says which).  ``standard_errors=False``
    leaves out the steps' standard errors (``steps_se`` None): their covariance is an inversion of
    the information, (raters x categories)^2, the largest single cost with hundreds of raters.

    A step moved by a direction whose information is below ``1 / max_se**2`` is an
    estimate running off to infinity (the conditional MLE does not exist for it): it is reported as nan, left out
    of the centring, and named in ``notes``; the fitted ``tau`` keeps the limiting values.  Which steps
    those are depends on the weak directions' subspace only (:func:`_moved_alike`); unless more than half
    of the steps keep their differences the fit is refused (MethodError).  While estimates diverge,
    Newton goes on to 1e-3 of ``tol`` (or until log L stops rising), so that the others are at their
    limits' maximum to ~1e-9 however the rounding went.

    Steps: :func:`_cml_problem` (estimable categories, rater-set groups, design),
    :func:`_cml_start`, :func:`_cml_newton`, :func:`_cml_steps` (diverging steps, centring, SEs,
    limits), :func:`_rsm_parts` and :func:`_cml_notes`.

    The linear algebra runs on one BLAS thread (:func:`~ratercal_cli.parallel.one_blas_thread`): it is
    batched products of each rater set's small blocks and, with hundreds of raters, a factorisation per
    Newton step (issue 21: at 200,000 ratings and 800 raters, load 4 on 2 cores, the PCM 18.1 s with two
    threads, 11.9 s with one).
    """
    if model not in ("pcm", "rsm"):
        raise ValueError(f"model must be 'pcm' or 'rsm', not {model!r}")
    pb = _cml_problem(ratings, model)
    phi = _cml_start(pb, start)
    phi, ll, Hphi, it, converged, null = _cml_newton(pb, phi, tol, max_iter, max_se, standard_errors)
    steps, se, tau_c, diverged, resting, cov = _cml_steps(pb, phi, Hphi, max_se, cap_margin, null, standard_errors)
    beta, kappa = _rsm_parts(steps, pb.has, model)
    notes = _cml_notes(ratings, pb, steps, diverged)
    return CMLFit(steps=steps, steps_se=se, tau=tau_c, categories=pb.cats, diverged=diverged,
                  beta=beta, kappa=kappa, loglik=float(ll), informative=pb.informative,
                  n_iter=it, converged=converged, notes=notes, resting=resting, information=Hphi, cov=cov)


@dataclass
class _Problem:
    """What a CML fit works on: the model, sizes, estimable categories, informative papers, the
    rater-set groups, raters with categories and the design (tau = A phi, :func:`_design`)."""
    model: str
    J: int
    K: int
    cats: np.ndarray
    informative: np.ndarray
    groups: _Groups
    has: np.ndarray
    own: np.ndarray
    coef: np.ndarray
    shared: np.ndarray

    def __post_init__(self):
        rows = np.arange(self.J * self.K)
        own, coef = self.own.ravel(), self.coef.ravel()
        shared = np.broadcast_to(self.shared, (self.J, self.K)).ravel()
        on = (own >= 0) & (coef != 0)
        sh = (shared >= 0) & self.cats.ravel()
        n = int(max(own.max(initial=-1), shared.max(initial=-1)) + 1)
        #: tau = A phi, (J K, P) sparse: each row at most two entries
        self.A = sparse.csr_matrix((np.r_[coef[on], np.ones(sh.sum())], (np.r_[rows[on], rows[sh]],
                                                                         np.r_[own[on], shared[sh]])),
                                   shape=(self.J * self.K, n))
        self.target = _Target(n, self._local)
        #: each parameter's rater (J: shared by all, the RSM's K_x)
        self.owner = np.full(n, self.J)
        self.owner[own[own >= 0]] = rows[own >= 0] // self.K

    def _local(self, items):
        """The design on one rater set's rows (:class:`_Target`).  PCM: the identity, the parameter
        of (j, x) or -1.  RSM: columns beta of the set's s raters (coefficients x - c0) and the K
        shared K_x (every rater in a set has categories, all of them the same ones)."""
        G, s = items.shape
        if self.model == "pcm":
            return None, self.own[items].reshape(G, s * self.K)
        K = self.K
        Aloc = np.zeros((s * K, s + K))
        j0 = items[0, 0]
        for i in range(s):
            Aloc[i * K:(i + 1) * K, i] = self.coef[j0]
            Aloc[i * K:(i + 1) * K, s:] = np.diag((self.shared >= 0) & self.cats[j0])
        pidx = np.column_stack([self.own[items, np.argmax(self.cats[j0])], np.broadcast_to(self.shared, (G, K))])
        return Aloc, pidx

    def tau(self, phi):
        return (self.A @ phi).reshape(self.J, self.K)

    def evaluate(self, phi, order=2):
        """log L, its gradient over phi and (order 2) the information over phi at ``phi``."""
        ll, g, H = _loglik_grad_hess(self.tau(phi), self.cats, self.groups, order, self.target)
        return ll, self.A.T @ g.ravel(), H


def _cml_problem(ratings: Ratings, model: str) -> _Problem:
    cats, informative = estimable_categories(ratings, model)
    if not informative.any():
        raise MethodError(f"CML ({model.upper()}): no paper has two or more raters with a non-extreme total; nothing to "
                          "estimate")
    groups = _group(ratings, cats, informative)
    has = cats.any(axis=1)
    _check_connected(groups, has, ratings.rater_ids, model.upper() if model == "rsm" else "CML")
    return _Problem(model, ratings.n_raters, ratings.max_score + 1, cats, informative, groups, has,
                    *_design(cats, model))


def _cml_start(pb: _Problem, start=None):
    """phi from ``start`` (cumulative tau) or the adjacent-category log odds of each rater's counts
    (pcmodel's start; for the RSM the phi nearest them in least squares, by LSQR on the sparse design:
    from zeros, at 3 of 200 raters a paper, its Newton took two more steps, each a full information)."""
    if start is not None:
        return np.linalg.lstsq(pb.A.toarray(), np.where(pb.cats, start, 0.0).ravel(), rcond=None)[0]
    n = pb.groups.counts + 0.5 * pb.cats
    t0 = np.zeros((pb.J, pb.K))
    for j in np.flatnonzero(pb.has):
        cj = np.flatnonzero(pb.cats[j])
        t0[j, cj] = -(np.log(n[j, cj]) - np.log(n[j, cj[0]]))
    if pb.model == "pcm":
        return pb.A.T @ t0.ravel()
    from scipy.sparse.linalg import lsqr

    return lsqr(pb.A, t0.ravel())[0]


def _cml_newton(pb: _Problem, phi, tol, max_iter, max_se, information=True):
    """Newton's method (module docstring of :func:`fit_cml`): (phi, log L, information, iterations,
    converged); without ``information``, that of the point before the final step where the step was
    under _FINAL_STEP logits (what no SE reads: one full evaluation less)."""
    scale = max(pb.groups.n_papers, 1)
    ll, gphi, Hphi = pb.evaluate(phi)
    # the identification's null directions of the information: those of the model
    # (:func:`_identification`), never more.  (Taking every direction of eigenvalue 0 once the
    # penalised information's factorisation failed took a diverging estimate's direction for one
    # of them, whose information vanishes in round-off; whether it did hung on the last bits, and
    # with it whether the divergence was seen: a 2+ set's RSM then reported steps of -123 logits.)
    null = _identification(pb)
    # With a diverging estimate the gradient falls only like exp(-t), and the other estimates, tied
    # to it, are off by about gradient / information when it stops: there, go on to 1e-3 of the
    # tolerance (a few more steps) unless a step no longer raises log L.
    it, diverging, gained, rate = 0, False, True, 1.0
    while it < max_iter:
        gmax = np.max(np.abs(gphi), initial=0.0)
        if gmax < tol * scale and (not diverging or not gained or gmax < 1e-3 * tol * scale):
            return phi, ll, Hphi, it, True, null
        before = ll
        it += 1
        pen = _penalised(Hphi, null, np.mean(np.diag(Hphi)))
        factor = blocks = None
        try:
            d, factor, blocks = _direction(pen, gphi, pb.owner)  # Hphi is -d2 logL: this is an ascent step
            if it <= 2 and _below(pen, _NOISE * float(np.max(np.diag(pen), initial=1.0)), factor, blocks):
                # a direction the data say nothing of (a category that only one split of a paper's total
                # allows): the factorisation's step along it is noise over noise, and where it ended hung on
                # the raters' order (2 raters, 7 papers, 0-8: renaming one moved a paper's score by 0.8);
                # the pseudo-inverse's stays at the start, which is each rater's own counts (from it > 2
                # the weak directions' test below does as much)
                d = _pseudo_step(Hphi, gphi)[0]
        except np.linalg.LinAlgError:
            d = _pseudo_step(Hphi, gphi)[0]
        # An estimate running off to infinity gains about one logit per Newton step (the
        # likelihood approaches its limit like exp(-t)); move along such weak directions
        # (information below 1 / max_se**2) eight times as far when that still raises the
        # likelihood.  The step then from the eigen-decomposition, without the directions whose
        # information is at round-off level (there the factorisation's step is noise over noise,
        # tens of logits either way).
        # (the eigen-decomposition only when :func:`_below` says there is such a direction: with
        # hundreds of raters one eigh costs many Newton steps)
        if it > 2 and _below(pen, 1.0 / max_se ** 2, factor, blocks):
            diverging = True
            d, w, V = _pseudo_step(Hphi, gphi)
            boosted = _boost(pb, phi, d, ll, w, V, null, max_se)
            if boosted is not None:
                phi, ll, gphi, Hphi = boosted
                gained = ll > before
                continue
        # Without SEs (``information`` False: it then only tells weak directions, :func:`_cml_steps`), where
        # the gradient, falling at the last step's rate, will be under the tolerance after this step, the
        # point it reaches is evaluated without the information (which costs ~4 gradients: 0.6 s against
        # 0.15 at 3 of 200 raters a paper, 300,000 ratings); if it ends the iterations, the fit keeps the
        # information of the point before, which the step moved by under _FINAL_STEP logits (as
        # mml._newton's SEs do); else the information there after all.
        last = not information and not diverging and rate ** 1.5 * gmax < tol * scale
        try:
            phi_new, ll, g_new, H_new = _halving_step(pb, phi, d, ll, 1 if last else 2)
        except MethodError:
            if not diverging:
                raise
            # the diverging estimates are so far out that a step along them under- or overflows: their
            # pull on the others is long below the tolerance; whether the rest is estimable is for
            # :func:`_cml_steps` (where the overflow strikes is a matter of the path, not of the data)
            return phi, ll, Hphi, it, False, null
        rate = np.max(np.abs(g_new), initial=0.0) / max(gmax, 1e-300)
        if last:
            if rate * gmax < tol * scale and np.max(np.abs(phi_new - phi), initial=0.0) < _FINAL_STEP:
                return phi_new, ll, Hphi, it, True, null
            ll, g_new, H_new = pb.evaluate(phi_new)
        phi, gphi, Hphi = phi_new, g_new, H_new
        gained = ll > before
    return phi, ll, Hphi, it, False, null


def _penalised(H, null, c):
    """``H + c null null'``: the information with the identification's null directions (orthonormal columns)
    penalised by ``c``, as one new P x P array (``H + null @ null.T * c`` made three: 128 MB each at the 4,000
    parameters of a PCM of 800 raters, and the pages of each fresh one are the kernel's work to map and zero)."""
    pen = (null * c) @ null.T
    pen += H
    return pen


#: the most a final step may move a parameter (logits) for a fit without SEs to keep the information before it.
#: That information only tells weak directions there (below 1 / max_se**2 = 0.01, or _RUNOFF of that, where an
#: estimate with any data has tens or hundreds), and a tenth of a logit moves a category's information by a
#: tenth of itself at most (d log p(1-p) / d tau <= 1).  At 1e-3, the final step of the PCM of 800 raters on
#: 0-5 at 2 raters a paper, 1M ratings (``check``'s per-rater fit), moved a threshold of a rarely given
#: category by 0.027 logits, and its information was computed afresh: 1.2 s of the fit's 7.8.
_FINAL_STEP = 0.1


def _inverse(factor):
    """The inverse of a symmetric positive definite matrix from its :func:`cho_factor` (LAPACK potri)."""
    from scipy.linalg import lapack

    c, lower = factor
    inv, info = lapack.dpotri(c, lower=lower)
    if info != 0:
        raise np.linalg.LinAlgError(f"potri: {info}")
    inv = np.tril(inv) if lower else np.triu(inv)
    return inv + inv.T - np.diag(np.diag(inv))


def _identification(pb: _Problem):
    """Orthonormal columns spanning the parameter directions that leave the conditional
    likelihood unchanged: a shift of the quality scale (``tau[j, x] += c x``; a constant per rater
    cancels) and, for the RSM, ``beta -= d, kappa += d`` (``tau`` itself unchanged)."""
    J, K, cats = pb.J, pb.K, pb.cats
    x = np.arange(K)[None, :]
    if pb.model == "pcm":
        lo = np.where(pb.has, np.argmax(cats, axis=1), 0)
        cand = [pb.A.T @ np.where(cats, x - lo[:, None], 0).ravel().astype(float)]
    else:
        anycat = cats.any(axis=0)
        c0 = int(np.argmax(anycat)) if anycat.any() else 0
        xs = np.flatnonzero(anycat[c0 + 1:]) + c0 + 1     # the K_x columns of _design, in order
        nb = int(pb.has.sum())
        cand = [np.r_[np.ones(nb), np.zeros(xs.size)], np.r_[np.ones(nb), -(xs - c0).astype(float)]]
    return np.linalg.qr(np.column_stack(cand))[0]


def _pseudo_step(Hphi, gphi):
    """The Newton step by the pseudo-inverse of the information, leaving out the directions whose
    eigenvalue is below 1e-11 of the largest (the identification's, and a diverging estimate's once
    its information is lost in round-off); and the eigen-decomposition (w, V)."""
    w, V = np.linalg.eigh(Hphi)
    keep = w > w.max() * _NOISE
    return V[:, keep] @ ((V[:, keep].T @ gphi) / w[keep]), w, V


#: eigenvalues of the information below this fraction of the largest are round-off (no step along them)
_NOISE = 1e-11
#: information below ``_RUNOFF / max_se**2`` (an SE over 100 max_se): an estimate running off (:func:`_cml_steps`)
_RUNOFF = 1e-4


def _boost(pb: _Problem, phi, d, ll, w, V, null, max_se):
    """The step moved eight times as far along the weak directions, if that raises log L."""
    Vw = V[:, (w < 1.0 / max_se ** 2) & (w > w.max() * _NOISE)]
    if Vw.shape[1] == 0:
        return None
    phi_new = phi + d + 7.0 * (Vw @ (Vw.T @ d))
    try:
        ll_new, g_new, H_new = pb.evaluate(phi_new)
    except MethodError:  # ESFs under- or overflowed that far out: no boost
        return None
    return (phi_new, ll_new, g_new, H_new) if ll_new >= ll else None


def _halving_step(pb: _Problem, phi, d, ll, order=2):
    """phi + step d, the step halved while log L falls (down to 1e-4); the information there at ``order`` 2."""
    step = 1.0
    while True:
        phi_new = phi + step * d
        try:
            ll_new, g_new, H_new = pb.evaluate(phi_new, order)
        except MethodError:
            if step < 1e-4:
                raise MethodError(
                    f"CML ({pb.model.upper()}): the estimates run off to infinity until the elementary symmetric "
                    "functions overflow; no usable estimate (raters who never differ by more than a point, "
                    "as the 2+ design keeps?)") from None
            ll_new = -np.inf
        if ll_new >= ll - 1e-12 * abs(ll) or step < 1e-4:
            return phi_new, ll_new, g_new, H_new
        step /= 2  # the Newton step went too far: halve it


def _cml_steps(pb: _Problem, phi, Hphi, max_se, cap_margin, null, standard_errors=True):
    """Centred steps with SEs (nan where not estimable; None without ``standard_errors``), the fitted
    tau with diverging and unestimable differences limited, the diverging steps, the categories
    resting on a limit and the covariance of phi the SEs are of (None without them)."""
    J, K, cats = pb.J, pb.K, pb.cats
    tau = pb.tau(phi)
    # covariance of phi: pseudo-inverse of the information (null directions excluded).  Without a
    # direction of information below 1 / max_se**2 besides the identification's (``null``), it is
    # the inverse of the penalised information less the penalty's part (a Cholesky factorisation);
    # else from the eigen-decomposition, whose weak directions are then examined below.  Without
    # SEs and with hundreds of raters, no factorisation unless :func:`_below` needs one.
    c = np.mean(np.diag(Hphi))
    pen = _penalised(Hphi, null, c)
    factor = blocks = None
    try:
        if standard_errors or pen.shape[0] < _ITERATIVE_FROM:
            factor = cho_factor(pen, check_finite=False)
        else:
            blocks = _BlockJacobi(pen, pb.owner)
        weak = _below(pen, 1.0 / max_se ** 2, factor, blocks)
    except np.linalg.LinAlgError:
        weak = True
    if weak:
        w, V = np.linalg.eigh(Hphi)
        keep = w > w.max() * 1e-11
        cov_phi = (V[:, keep] / w[keep]) @ V[:, keep].T
        runoff = V[:, w < _RUNOFF / max_se ** 2]
        weakdir = V[:, (w >= _RUNOFF / max_se ** 2) & (w < 1.0 / max_se ** 2)]
    else:
        cov_phi = _inverse(factor) - null @ null.T / c if standard_errors else None
        runoff = weakdir = np.zeros((pen.shape[0], 0))
    # raw step = tau[j, k] - tau[j, k-1], as a sparse (J (K-1), J K) difference matrix
    rows = np.arange(J * (K - 1))
    col = (rows // (K - 1)) * K + rows % (K - 1) + 1
    D = sparse.csr_matrix((np.r_[np.ones(rows.size), -np.ones(rows.size)], (np.r_[rows, rows], np.r_[col, col - 1])),
                          shape=(J * (K - 1), J * K))
    DA = (D @ pb.A).tocsr()
    steps, tau_c = _centre(tau, cats, pb.model)
    # An estimate running off to infinity (e.g. a category given only where the other rater's
    # score left no alternative) shows as a direction of almost no information that moves some
    # steps against the rest: below 1e-4 / max_se**2 (``runoff``, with the identification's
    # directions, of 0; Newton has pushed a diverging estimate until its information is ~1e-9).
    # Which steps: those outside the largest group that these directions move alike
    # (:func:`_moved_alike`), a question of their subspace, not of the eigenvectors chosen in it
    # (several such eigenvalues at round-off level make those any rotation of each other); the same
    # for each difference across categories a rater never used (tau[j, b] - tau[j, a], b > a + 1, per
    # step spanned).  Each runs off to the side where these directions carried it from the kept group
    # (``side``, at the difference's upper category; where Newton stopped it may still be on the
    # other).  Finite directions of information below 1 / max_se**2 (``weakdir``: SEs above max_se;
    # estimable directions, even a category used once, have information of order 0.1-1) flag the
    # steps each moves by over a tenth of its largest move against the median step as not
    # estimable too; they do not run off (their values are converged) and are only limited.
    diverged = np.zeros(J * (K - 1), dtype=bool)
    side = np.zeros((J, K))
    finflat = np.isfinite(steps).ravel()
    fin = np.flatnonzero(finflat)
    if runoff.shape[1] and finflat.any():
        ga, gb = _gaps(cats)
        G = (pb.A[gb] - pb.A[ga]).multiply(1.0 / ((gb - ga) % K)[:, None]).tocsr()
        R, RG = np.asarray(DA[finflat] @ runoff), np.asarray(G @ runoff)
        kept, gkept = _moved_alike(R, RG)
        diverged[fin] = ~kept
        if kept.any():
            u, centre = runoff.T @ phi, R[kept].mean(axis=0)
            side.ravel()[(fin // (K - 1)) * K + fin % (K - 1) + 1] = np.where(kept, 0.0, np.sign((R - centre) @ u))
            side.ravel()[gb] = np.where(gkept, 0.0, np.sign((RG - centre) @ u))
    if weakdir.shape[1] and finflat.any():
        delta = np.asarray(DA[finflat] @ weakdir)
        delta -= np.median(delta, axis=0, keepdims=True)  # a shift of all steps is no change
        size = np.abs(delta).max(axis=0)
        diverged[fin] |= ((np.abs(delta) > 0.1 * size) & (size > 1e-6)).any(axis=1)
    diverged = diverged.reshape(J, K - 1)
    steps, tau_c = _centre(tau, cats, pb.model, exclude=diverged)
    finite = np.isfinite(steps) & ~diverged
    if not finite.any():
        raise MethodError(
            f"CML ({pb.model.upper()}): no step can be estimated: every estimate diverges (no more than half of "
            f"them keep their differences) or its category is unused ({int(diverged.sum())} diverging, "
            f"{int((~np.isfinite(steps)).sum())} unused); too few "
            "papers per rater pair, or raters who never differ by more than a point (as the 2+ design keeps)")
    fin = finite.ravel()
    steps = np.where(finite, steps, np.nan)
    tau_c, resting = _cap_diverged(tau_c, cats, diverged, np.max(np.abs(steps[finite])) + cap_margin, side)
    if not standard_errors:
        return steps, None, tau_c, diverged, resting, None
    # diag(C cov C') for the centred steps' rows C_i = DA_i - m (m the mean row of DA over the
    # finite steps): DA_i cov DA_i' - 2 DA_i cov m + m' cov m
    m = np.asarray(DA[fin].mean(axis=0)).ravel()
    cm = cov_phi @ m
    var = np.asarray(DA.multiply(DA @ cov_phi).sum(axis=1)).ravel() - 2.0 * (DA @ cm) + m @ cm
    se = np.sqrt(np.maximum(np.where(fin, var, 0.0), 0.0)).reshape(J, K - 1)
    se[~finite] = np.nan
    return steps, se, tau_c, diverged, resting, cov_phi


def _gaps(cats):
    """Flat indices (into J x K) of the category pairs a < b that are consecutive among a rater's
    estimable categories with unused ones between them: (a, b)."""
    J, K = cats.shape
    a, b = [], []
    for j in range(J):
        cj = np.flatnonzero(cats[j])
        wide = np.flatnonzero(np.diff(cj) > 1)
        a.extend(j * K + cj[wide])
        b.extend(j * K + cj[wide + 1])
    return np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)


def _moved_alike(R, extra=None, rel=1e-3):
    """The steps that keep their differences: the group of more than half of them that the weak
    directions move alike (rows of ``R``, steps x weak directions, each step's movement along each,
    equal to within ``rel`` of their largest spread), or none.  With no such majority the estimates
    run off against each other (e.g. each of the RSM's thresholds against the others on a 2+ set,
    its raters' steps moved alike: which group to call finite would be arbitrary, and the fitted
    scale would be the limits').  Equal rows keep their differences along every weak direction, the others run
    off against them.  Distances between rows do not change with the basis of the weak subspace
    (several weak eigenvalues at round-off level make its eigenvectors any rotation of each other,
    so a test on each eigenvector's components decided by round-off), nor with a shift of all steps
    (the identification's direction, also in it).  With ``extra`` (rows as R's, e.g. a difference
    across unused categories per step spanned) also which of those move with the group: ``(kept,
    extra_kept)``."""
    n = R.shape[0]
    spread = np.sqrt(((R - R.mean(axis=0)) ** 2).sum(axis=1)).max(initial=0.0)
    group = np.full(n, -1)
    for i in range(n):
        if group[i] < 0:
            group[(group < 0) & (np.sqrt(((R - R[i]) ** 2).sum(axis=1)) <= rel * spread)] = i
    size = np.bincount(group, minlength=n)
    kept = group == np.argmax(size) if 2 * size.max() > n else np.zeros(n, dtype=bool)
    if spread <= 1e-6:
        kept = np.ones(n, dtype=bool)
    if extra is None:
        return kept
    if not kept.any():
        return kept, np.zeros(extra.shape[0], dtype=bool)
    centre = R[kept].mean(axis=0)
    return kept, np.sqrt(((extra - centre) ** 2).sum(axis=1)) <= rel * max(spread, 1e-6)


def rsm_severity_se(res: CMLFit) -> np.ndarray:
    """S.E. of the centred CML rater locations ``beta_j - mean(beta)`` (RSM, ``res`` its fit; nan for a rater
    without one): ``sqrt(c' H^+ c)`` from the conditional information ``H`` at the estimate (over phi: beta of
    the raters with categories, then the cumulative kappa, :func:`_design`; its identification's null
    direction is orthogonal to every such contrast)."""
    se = np.full(res.beta.size, np.nan)
    got = _beta_cov(res)
    if got is None:
        return se
    rows, sub = got
    # c_j = e_j - mean: c_j' cov c_j = cov_jj - 2 mean_k cov_jk + mean_kl cov_kl
    se[rows] = np.sqrt(np.maximum(np.diag(sub) - 2.0 * sub.mean(axis=1) + sub.mean(), 0.0))
    return se


def _beta_cov(res: CMLFit):
    """``(rows, cov)``: the raters with a location and the covariance of their ``beta`` (the pseudo-inverse
    of the conditional information, its identification's null direction left out), or None: the fit's own
    (``res.cov``, its steps' S.E.s'; made again by an eigendecomposition it took 25 s of check's 127 at 5,000
    raters), or, for a fit made without S.E.s, from its information."""
    rows = np.flatnonzero(np.isfinite(res.beta))
    if res.information is None or not rows.size:
        return None
    cov = res.cov
    if cov is None:
        w, V = np.linalg.eigh(res.information)
        keep = w > w.max() * _NOISE
        cov = (V[:, keep] / w[keep]) @ V[:, keep].T
    has = np.flatnonzero(res.categories.any(axis=1))   # phi's first columns: beta of these raters
    idx = np.searchsorted(has, rows)
    return rows, cov[np.ix_(idx, idx)]


def rsm_severity_wald(res: CMLFit) -> tuple[float, int] | None:
    """``(W, df)``: the Wald test that the raters' RSM locations are all equal, ``W = b' (P cov P)^+ b`` over the
    centred locations ``b = P beta`` (``P = I - 11'/J``) with their covariance, ``df`` its rank (J - 1); None
    without an information.  Facets' fixed (all same) chi-square weighs each location by its own S.E. alone,
    as if the raters' estimates were independent; those of raters compared on shared papers are not (each
    centred location moves against the others'), and it called identical raters differing in 10% of files
    at p < .05 (300 files of the rating scale model, 2 or 3 of 8 raters a paper) where this test 4.0-4.3%.  None
    past WALD_MAX_RATERS raters (the decision then counts the fixed chi-square)."""
    from ..fit_stats import WALD_MAX_RATERS, wald_all_equal

    got = _beta_cov(res)
    if got is None or not 2 <= got[0].size <= WALD_MAX_RATERS:
        return None
    rows, sub = got
    return wald_all_equal(res.beta[rows], sub)


def _rsm_parts(steps, has, model):
    """RSM: steps = beta_j + kappa_k, as rater means and step means of the centred steps (nan for the PCM)."""
    J, M = steps.shape
    beta = np.full(J, np.nan)
    kappa = np.full(M, np.nan)
    if model != "rsm":
        return beta, kappa

    def _mean(a, axis):
        ok = np.isfinite(a)
        n = ok.sum(axis=axis)
        return np.where(n > 0, np.where(ok, a, 0.0).sum(axis=axis) / np.maximum(n, 1), np.nan)

    rows = has & np.isfinite(steps).any(axis=1)
    beta[rows] = _mean(steps[rows], 1)
    beta[rows] -= beta[rows].mean()
    kappa = _mean(steps[rows] - beta[rows, None], 0)
    return beta, kappa


def _cml_notes(ratings: Ratings, pb: _Problem, steps, diverged):
    """One line per rater with steps that cannot be estimated, and why (RSM: the thresholds once)."""
    has, model = pb.has, pb.model
    finite = np.isfinite(steps) & ~diverged
    notes = []
    rated = ratings.ratings_per_rater()
    for j in range(pb.J):
        if rated[j] and not has[j]:
            notes.append(f"rater {ratings.rater_ids[j]}: fewer than two categories on informative papers; no steps")
        elif has[j] and not finite[j].all() and model == "pcm":
            unused = [str(k + 1) for k in np.flatnonzero(~finite[j] & ~diverged[j])]
            div = [str(k + 1) for k in np.flatnonzero(diverged[j])]
            if unused:
                notes.append(f"rater {ratings.rater_ids[j]}: steps {','.join(unused)} not estimable "
                             "(category unused, or used only on extreme papers)")
            if div:
                notes.append(f"rater {ratings.rater_ids[j]}: steps {','.join(div)} not estimable "
                             "(the estimate diverges)")
    if model == "rsm" and has.any():
        # the RSM's thresholds are common to all raters: report them once
        div = diverged[has].any(axis=0)
        unused = ~np.isfinite(steps[has]).any(axis=0) & ~div
        if unused.any():
            notes.append(f"thresholds {','.join(str(k + 1) for k in np.flatnonzero(unused))} not estimable "
                         "(category unused, or used only on extreme papers)")
        if div.any():
            notes.append(f"thresholds {','.join(str(k + 1) for k in np.flatnonzero(div))} not estimable "
                         "(the estimate diverges)")
    return notes


# ---------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------
class ConditionalPCM(DeferredFit, RaterAdjuster):
    """PCM or RSM by CML; each rating becomes its paper's fair score (Linacre's fair average).

    fit: :func:`fit_cml` gives the raters' steps; each paper's quality theta by WLE (Warm;
    finite for all-0 and all-M papers) or MLE (``quality="mle"``; extreme papers get the
    WLE instead, since their MLE is infinite).
    transform: a paper's fair score is the expected score at its theta of

    * ``fair="mean-rater"`` (default): the mean over raters with estimable steps of each
      rater's expected score (how PCM.BAS scores a paper, and how the study defines true
      scores);
    * ``fair="average-rater"``: a rater with the mean of the raters' estimable steps (RSM: the
      rater with beta = 0 and the common thresholds kappa), Linacre's fair average.  For the
      PCM a step that only some raters reach (e.g. into 0 or M) is averaged over those raters
      only, which biases it; on the 500x2 0-9 set its RMSE against the true scores is 0.87
      against 0.67 for "mean-rater".

    Every rating of the paper gets the paper's fair score; the paper score is that value.
    ``fit`` refuses (MethodError) data where some paper is scored only by raters with no
    estimable step; ``transform`` gives such papers of new data nan.

    One version (the 1990 study did not run CML): no ``variant`` parameter.

    ``standard_errors=False`` leaves ``steps_se_`` None (:func:`fit_cml`; ``check``'s per-rater fit
    table, which shows no SE, fits so).

    Fitted attributes: ``steps_`` (J, M, centred, nan = not estimable), ``steps_se_``,
    ``tau_``, ``beta_``/``kappa_`` (RSM), ``quality_``/``quality_se_`` of the fitted papers,
    ``rater_fit_`` (:class:`~ratercal_cli.fit_stats.RaterFit`, over non-extreme papers; computed when first
    read),
    ``average_tau_`` (the average rater), ``notes_`` (steps that cannot be estimated, and why),
    ``resting_papers_`` (papers whose quality rests on such a step, bounded: :func:`_cap_diverged`;
    named in ``warnings_``, which ``adjust`` prints), ``result_`` (the :class:`CMLFit`).
    """

    @property
    def code(self):
        return "RSM" if self.model == "rsm" else "CML"

    @property
    def severity_(self):
        """The RSM's rater severities (``beta_``: logits, + = more severe, centred); None for the PCM, whose
        raters have steps, not one location."""
        return self.beta_ if self.model == "rsm" else None

    @property
    def severity_se_(self):
        """Their standard errors from the conditional information (:func:`rsm_severity_se`); None for the PCM."""
        return rsm_severity_se(self.result_) if self.model == "rsm" else None
    needs_multiple_raters = True
    deferred_attributes = ("rater_fit_",)

    def __init__(self, model: str = "pcm", quality: str = "wle", fair: str = "mean-rater",
                 standard_errors: bool = True):
        self.model = model
        self.quality = quality
        self.fair = fair
        self.standard_errors = standard_errors

    def _fit(self, ratings: Ratings) -> None:
        from ..arguments import check_choice
        from .quality import FAIR_RATERS, check_quality

        check_quality(self.quality, ("wle", "mle"))
        check_choice(self.fair, FAIR_RATERS, "fair")   # (a bare ValueError, where MML's named the argument)
        res = fit_cml(ratings, model=self.model, standard_errors=self.standard_errors)
        self.result_ = res
        self.steps_, self.steps_se_, self.tau_ = res.steps, res.steps_se, res.tau
        self.beta_, self.kappa_ = res.beta, res.kappa
        self.notes_ = list(res.notes)
        self.average_tau_ = self._average_tau(res)
        theta, se = self._quality(ratings)
        lost = np.isnan(theta) & (ratings.ratings_per_paper() > 0)
        if lost.any():
            none = [str(ratings.rater_ids[j]) for j in range(ratings.n_raters)
                    if ratings.ratings_per_rater()[j] and not np.isfinite(self.tau_[j]).any()]
            raise MethodError(
                f"CML ({self.model.upper()}): {int(lost.sum())} papers are scored only by raters with no estimable "
                f"step (raters {','.join(none)}; {int(res.informative.sum())} of {ratings.n_papers} papers inform "
                "the conditional likelihood)")
        self.quality_, self.quality_se_ = theta, se
        self._flag_resting(ratings, res)
        self._defer((ratings, theta))

    def _fit_deferred(self, state) -> None:
        """``rater_fit_``, when first read (:class:`.base.DeferredFit`: 0.3-0.5 s at 1M ratings that ``adjust``,
        and the assignment check of named MML/MFRM, do not need)."""
        from ..fit_stats import rater_fit
        from .quality import category_probabilities

        ratings, theta = state
        p = category_probabilities(theta[ratings.paper], self.tau_[ratings.rater])
        usable = self.result_.informative[ratings.paper] & np.isfinite(self.tau_).any(axis=1)[ratings.rater]
        score = np.clip(ratings.score, *_range(self.tau_, ratings.rater))
        self.rater_fit_ = rater_fit(p, score, ratings.rater, ratings.n_raters, mask=usable)

    def _flag_resting(self, ratings: Ratings, res: CMLFit):
        """``resting_papers_``: papers with a rating in a category that only a limited non-estimable
        step keeps possible (their quality is bounded by that limit, not measured); a warning names them."""
        rest = res.resting[ratings.rater, ratings.score]
        papers = np.zeros(ratings.n_papers, dtype=bool)
        papers[ratings.paper[rest]] = True
        self.resting_papers_ = papers
        self.warnings_ = []
        if papers.any():
            ids = [str(ratings.paper_ids[p]) for p in np.flatnonzero(papers)]
            shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
            line = (f"{len(ids)} paper(s) whose adjusted score rests on a step that cannot be estimated (a "
                    f"category given there and almost nowhere else; the step is limited, so the quality is a "
                    f"bound, not a measure): {shown}; MML estimates them")
            self.warnings_.append(line)
            self.notes_.append(line)

    def _average_tau(self, res: CMLFit):
        """Cumulative parameters of the average rater (K,), +inf for unreachable categories."""
        K = res.tau.shape[1]
        if self.model == "rsm":
            steps = np.where(np.isfinite(res.kappa), res.kappa, np.nan)
        else:
            fin = np.isfinite(res.steps)
            n = fin.sum(axis=0)
            steps = np.where(n > 0, np.where(fin, res.steps, 0.0).sum(axis=0) / np.maximum(n, 1), np.nan)
        # steps no rater can take: drop the categories beyond them at the ends of the scale;
        # interpolate a missing step in the middle
        ok = np.isfinite(steps)
        tau = np.full(K, np.inf)
        if not ok.any():
            return tau
        k0, k1 = np.flatnonzero(ok)[[0, -1]]
        idx = np.arange(K - 1)
        inner = np.interp(idx, idx[ok], steps[ok])
        tau[k0] = 0.0
        tau[k0 + 1:k1 + 2] = np.cumsum(inner[k0:k1 + 1])
        return tau

    def _quality(self, ratings: Ratings):
        """WLE (MLE) of every paper and its SE, solved once per pattern of ratings (issue 32: 2 s of
        the assignment check's CML fit at 1M ratings per paper, 450k papers but a few thousand patterns)."""
        from .mml_engine import rating_patterns
        from .quality import quality_by_pattern

        patterns = rating_patterns(ratings.paper, ratings.rater, ratings.score)
        theta, se, extreme = quality_by_pattern(patterns, ratings.n_papers, self.tau_, quality="wle")
        if self.quality == "mle":
            t2, s2, _ = quality_by_pattern(patterns, ratings.n_papers, self.tau_, quality="mle")
            mid = extreme == 0
            theta = np.where(mid, t2, theta)
            se = np.where(mid, s2, se)
        return theta, se

    def fair_scores(self, theta):
        """Fair score at each quality ``theta`` (see the class docstring)."""
        from .quality import expected_score, mean_expected_score

        theta = np.asarray(theta, dtype=np.float64)
        if self.fair == "average-rater":
            return expected_score(theta, self.average_tau_)
        return mean_expected_score(theta, self.tau_[np.isfinite(self.tau_).any(axis=1)])

    def paper_scores_by_shrinkage(self, ratings: Ratings) -> dict:
        """The study's shrinkage levels of the papers' fair scores on the data just fitted
        (:mod:`.shrinkage`), as the other Rasch fits give them: ``none`` at the fitted quality
        (WLE by default), ``kelley`` at the EAP under a normal distribution fitted by marginal
        ML with the CML steps held (:func:`.quality.eap_normal`)."""
        return {"none": self._transform_thin(ratings, True, {}).paper,
                "kelley": self._transform_thin(ratings, True, {"eap": True}).paper}

    def _transform(self, ratings: Ratings, training: bool, eap: bool = False) -> Adjusted:
        """Each rating becomes its paper's fair score (the fit's qualities for its own data);
        ``eap``: at the EAP qualities of ``ratings`` instead (:meth:`paper_scores_by_shrinkage`)."""
        theta = self.quality_ if training else self._quality(ratings)[0]
        if eap:
            from .quality import eap_normal

            theta = eap_normal(ratings.paper, ratings.rater, ratings.score, ratings.n_papers, self.tau_, theta)[0]
        return fair_score_adjusted(ratings, self.fair_scores(theta))


def _range(tau, rater):
    from .quality import score_range

    lo, hi = score_range(tau)
    return lo[rater], hi[rater]
