"""PCM: partial credit model adjustment (PCM.BAS; Wright & Masters 1982, PAIR).

Each rater ``i`` is an "item" with PCM step difficulties ``d[i, 1..M]``; a paper's
quality ``theta`` is estimated from its ratings, and the adjusted scores are PCM
expected scores at that quality: a rating's adjusted score is its rater's expected
score, the paper's is the mean of the expected scores of *all* raters of the design
(PCM.BAS: ``ave / nj`` with ``nj = 9``), i.e. the TRUEGEN definition of a true score.

PAIR (pairwise conditional estimation)
--------------------------------------
For two ratings of the same paper, by raters ``i`` and ``j``, with scores summing to
``x - 1 + z``, theta cancels:

    P(i scores x, j scores z-1 | i=x-1, j=z  or  i=x, j=z-1) = 1 / (1 + exp(d[i,x] - d[j,z])) = pi

``n[i,a,j,b]`` counts ordered pairs of ratings (rater ``i`` gave ``a``, rater ``j``
gave ``b``) on the same paper; with ``n1 = n[i,x-1,j,z]``, ``n2 = n[i,x,j,z-1]`` the
pairwise log likelihood has gradient ``F = sum_{j,z} (n1 + n2) pi - n2`` in
``d[i,x]`` and curvature ``-sum (n1 + n2) pi (1 - pi)`` (a Bradley-Terry model whose
"objects" are the steps ``(i, x)``; ``n2`` counts the wins of ``(i, x)`` over ``(j, z)``).

``variant="faithful"`` (PCM.BAS as listed)
    * counts over all ordered pairs *including each rating paired with itself*;
    * Jacobi sweeps ``d[i,x] += F / (.01 + sum bign pi (1-pi))`` over j = 1..9, z = 1..M,
      all from the previous sweep's values, clipped to +-15; stop when the largest
      change is below .002 or after 50 sweeps; no centring;
    * paper quality by a bracket search (CEN = 0, del = 5, compare the likelihoods at
      CEN - del, CEN, CEN + del; exit when |CEN| > 14 or del < .001);
    * everything in single precision (float32), sums accumulated in the BASIC's order.

``variant="corrected"``
    * PAIR without self-pairs, solved by full Newton steps on the pairwise likelihood,
      identified by centring: the mean of the estimable step difficulties is 0;
    * steps whose MLE is infinite or unidentified reported (``estimable_``,
      ``pair_steps_``); a pseudo-count (``smoothing``, about one pseudo-win and one
      pseudo-loss per step) keeps every compared step finite; steps with no
      comparisons are imputed; categories nobody used are never scored;
    * paper quality by Warm's WLE (finite for every paper, including those scored all 0 or
      all M), or bounded maximum likelihood, see ``quality``.

The study's two shrinkage levels (:mod:`.shrinkage`), as for the marginal fits MML and MFRM:
``none`` is the corrected PCM's own paper score, the fair average at the WLE quality
(unshrunk); ``kelley`` the fair average at the EAP quality under a normal distribution of
quality fitted by marginal ML to the papers with the PAIR steps held
(:func:`eap_quality`).  Kelley's formula on the WLE fair averages would measure their
error in raw points, which the PCM's scale is not (on cell 2551 it made the PCM worse than
unshrunk, 0.460 against 0.452 over 50 replications); the EAP is the model's own shrinkage.
The faithful variant (PCM.BAS, the 1990 listing) has no such level: its ``kelley`` is Kelley's
regressed score of its CEN fair averages, as for the classical methods.
"""

from __future__ import annotations

import numpy as np

from ..network import require_connected
from ..ratings import Adjusted, Ratings
from ..vocabulary import DEFAULT_VARIANT
from .base import RaterAdjuster
from .quality import check_quality, eap_normal, expected_score, pcm_tau, quality_by_pattern

F32 = np.float32

#: PCM.BAS constants: ``eps = .002: MaxIt = 50: big = EXP(20)``.
FAITHFUL_EPS = F32(0.002)
FAITHFUL_MAX_IT = 50
FAITHFUL_BIG = F32(np.exp(20.0))


# ---------------------------------------------------------------------------------
# shared: ratings padded per paper, pair counts
# ---------------------------------------------------------------------------------
def padded_by_paper(ratings: Ratings):
    """Per-paper (rater, score, rating index) arrays, padded with -1, in input order.

    Returns ``(rater_pad, score_pad, index_pad)``, each ``(n_papers, k_max)`` int64,
    where ``k_max`` is the largest number of ratings of a paper.  Within a paper the
    ratings keep the order they have in ``ratings`` (the .OBS order of PCM.BAS).
    """
    order = np.argsort(ratings.paper, kind="stable")
    counts = ratings.ratings_per_paper()
    k_max = int(counts.max()) if counts.size else 0
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pos = np.arange(order.size) - np.repeat(starts, counts)
    paper_sorted = ratings.paper[order]
    shape = (ratings.n_papers, k_max)
    rater_pad = np.full(shape, -1, dtype=np.int64)
    score_pad = np.full(shape, -1, dtype=np.int64)
    index_pad = np.full(shape, -1, dtype=np.int64)
    rater_pad[paper_sorted, pos] = ratings.rater[order]
    score_pad[paper_sorted, pos] = ratings.score[order]
    index_pad[paper_sorted, pos] = order
    return rater_pad, score_pad, index_pad


def pair_counts(ratings: Ratings, self_pairs: bool) -> np.ndarray:
    """``n[i, a, j, b]``: ordered pairs of ratings of one paper, rater i gave a, j gave b.

    PCM.BAS (``FOR j1 = 1 TO mj: FOR j2 = 1 TO mj: nk%(r1, s1, r2, s2) += 1``) pairs
    each rating with itself too (``self_pairs=True``); the corrected count does not.
    Shape ``(n_raters, M+1, n_raters, M+1)``, int64.
    """
    r_pad, s_pad, _ = padded_by_paper(ratings)
    return stacked_pair_counts(r_pad[None], s_pad[None], ratings.n_raters, ratings.max_score + 1, self_pairs)[0]


def stacked_pair_counts(rater, score, nr, m1, self_pairs):
    """:func:`pair_counts` of a stack of data sets given as papers x rating slots, ``rater``
    and ``score`` ``(B, n, k)`` (rater ``-1``: an empty slot): ``(B, nr, m1, nr, m1)``, by one
    ``bincount`` over ``data set * cells + cell`` per pair of slots."""
    B = rater.shape[0]
    size = nr * m1 * nr * m1
    flat = np.zeros(B * size, dtype=np.int64)
    base = (np.arange(B) * size)[:, None]
    k = rater.shape[2]
    for p in range(k):
        for q in range(k):
            if p == q and not self_pairs:
                continue
            ok = (rater[:, :, p] >= 0) & (rater[:, :, q] >= 0)
            idx = base + ((rater[:, :, p] * m1 + score[:, :, p]) * nr + rater[:, :, q]) * m1 + score[:, :, q]
            flat += np.bincount(idx[ok], minlength=B * size)
    return flat.reshape(B, nr, m1, nr, m1)


def step_pair_matrices(counts):
    """``(N1, N2)`` of shape ``(..., nr*M, nr*M)`` from counts ``(..., nr, M+1, nr, M+1)``:
    rows step (i, x), columns step (j, z), both in the BASIC's loop order (rater outer, step
    inner); ``N1 = n[i, x-1, j, z]``, ``N2 = n[i, x, j, z-1]`` (``N2`` = wins of row over column)."""
    nr, m1 = counts.shape[-4], counts.shape[-3]
    m = m1 - 1
    lead = counts.shape[:-4]
    n1 = counts[..., 0:m, :, 1:m1].reshape(lead + (nr * m, nr * m))
    n2 = counts[..., 1:m1, :, 0:m].reshape(lead + (nr * m, nr * m))
    return n1, n2


# ---------------------------------------------------------------------------------
# faithful: PCM.BAS in float32
# ---------------------------------------------------------------------------------
def faithful_pair(counts, eps=FAITHFUL_EPS, max_it=FAITHFUL_MAX_IT):
    """PCM.BAS's PAIR sweeps on ``counts`` (from ``pair_counts(..., self_pairs=True)``, or a
    stack ``(B, ...)`` of them: the Monte Carlo replications of a cell).

    Per sweep, for every ``(i, x)`` from the previous sweep's ``d``::

        F = 0: f1 = .01
        FOR j = 1 TO nj: FOR z = 1 TO mp
            n1 = nk%(i, x-1, j, z): n2 = nk%(i, x, j, z-1): bign = n1 + n2
            pi = 1 / (1 + EXP(d(i, x) - d(j, z)))
            F = F + bign * pi - n2: f1 = f1 + bign * pi * (1 - pi)
        a = d(i, x) + F / f1: dt(i, x) = a clipped to [-15, 15]

    then ``d = dt`` and stop when ``max |dt - d| < eps`` or after ``max_it`` sweeps (each
    data set of a stack at its own sweep).  Singles throughout, the sums in the BASIC's
    order: a pair of steps never compared adds ``+0`` to a sum that is never ``-0``, which
    changes nothing, so only the compared pairs are kept, in the BASIC's order (padded at
    the end with more ``+0``), and each sum is a reduction over the outer axis of the
    interleaved terms ``bign*pi, -n2``: one addition after the other, as the BASIC adds.
    Returns ``(d, sweeps, max_change)``: ``d`` float32 ``(n_raters, M)`` (``(B, n_raters,
    M)``, with per-data-set arrays of sweeps and changes, for a stack).
    """
    counts = np.asarray(counts)
    single = counts.ndim == 4
    if single:
        counts = counts[None]
    B, nr, m = counts.shape[0], counts.shape[1], counts.shape[2] - 1
    n1, n2 = step_pair_matrices(counts)
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
    change = np.full(B, np.inf, dtype=F32)
    one = F32(1.0)
    active = np.arange(B)
    # the terms of every sweep, interleaved as the BASIC adds them: the -n2 and the 0.01 are
    # the same each sweep, so they are written once (again when data sets stop)
    seq_f = np.empty((B, 2 * width, k), dtype=F32)
    seq_f[:, 1::2] = n2_t
    seq_f1 = np.empty((B, width + 1, k), dtype=F32)
    seq_f1[:, 0] = F32(0.01)
    big_a, gcols_a = big_t, gcols
    while active.size:
        da = d[active]
        other = np.take(d.reshape(-1), gcols_a)                           # d(j, z) of each term
        pi_t = np.subtract(da[:, None, :], other, out=other)              # 1 / (1 + EXP(d - d)), in place
        np.exp(pi_t, out=pi_t)
        pi_t += one
        np.divide(one, pi_t, out=pi_t)
        t = np.multiply(big_a, pi_t, out=seq_f[:, 0::2])
        f = np.add.reduce(seq_f, axis=1, dtype=F32)
        np.subtract(one, pi_t, out=pi_t)
        np.multiply(t, pi_t, out=seq_f1[:, 1:])
        f1 = np.add.reduce(seq_f1, axis=1, dtype=F32)
        a = da + f / f1
        dt = np.clip(a, F32(-15), F32(15), out=a)   # = a outside the bounds' reach; nan stays nan
        dmax = np.abs(dt - da).max(axis=1) if k else np.zeros(active.size, dtype=F32)
        d[active] = dt
        sweeps[active] += 1
        change[active] = dmax
        done = (dmax < eps) | (sweeps[active] >= max_it)
        if done.any():
            keep = ~done
            active = active[keep]
            seq_f, seq_f1 = seq_f[keep], seq_f1[keep]
            big_a, gcols_a = big_a[keep], gcols_a[keep]
    d = d.reshape(B, nr, m)
    if single:
        return d[0], int(sweeps[0]), float(change[0])
    return d, sweeps, change


def _faithful_numerators(u, drow):
    """PCM.BAS's ``e(0..mp)`` for quality(ies) ``u`` and rows of steps ``drow``::

        e(0) = 1: FOR j = 1 TO mp: e(j) = e(j-1) * EXP(u - d(r, j))
            IF e(j) > big THEN FOR L = 0 TO j: e(L) = e(L) / big: NEXT L

    ``u`` shape ``S``, ``drow`` shape ``(M,) + S`` (category-major), float32; returns
    ``e`` of shape ``(M+1,) + S`` and ``T`` (``FOR L = 0 TO mp: T = T + e(L)``).
    """
    m = drow.shape[0]
    # One division by EXP(20) does not bound e(j) when EXP(u - d) is itself huge, so
    # a single can overflow.  QuickBASIC would stop with "Overflow"; here the value
    # becomes inf, the likelihoods compare as neither rising nor falling and the
    # search halves del.  It never happens on the 1990 data sets.
    with np.errstate(over="ignore", invalid="ignore"):
        ex = np.subtract(u[None], drow, dtype=F32)
        np.exp(ex, out=ex)
        e = np.empty((m + 1,) + u.shape, dtype=F32)
        e[0] = F32(1.0)
        flat = e.reshape(m + 1, -1)
        for j in range(1, m + 1):
            np.multiply(e[j - 1], ex[j - 1], out=e[j])
            big = flat[j] > FAITHFUL_BIG
            n_big = np.count_nonzero(big)
            if not n_big:
                continue
            if n_big * 8 < big.size:  # few columns: divide only those
                cols = np.flatnonzero(big)
                flat[: j + 1, cols] /= FAITHFUL_BIG
            else:  # dividing by 1 is exact: only the flagged columns change
                flat[: j + 1] /= np.where(big, FAITHFUL_BIG, F32(1))
        t = e[0].copy()
        for j in range(1, m + 1):
            t += e[j]
    return e, t


def faithful_quality(d, rater_pad, score_pad, eps=FAITHFUL_EPS):
    """PCM.BAS's bracket search for every paper at once (one loop over iterations)::

        CEN = 0: del = 5
        DO
          FOR i = 1 TO 3: u(i) = CEN + (i - 2) * del: p(i) = 1
            FOR m = 1 TO mj: p(i) = p(i) * e(s%(xi, m)) / T      (e, T at u(i), rater m)
          IF ABS(CEN) > 14 THEN EXIT DO
          IF p(1) < p(2) AND p(2) < p(3) THEN CEN = u(3)
          ELSEIF p(1) > p(2) AND p(2) > p(3) THEN CEN = u(1)
          ELSE del = del / 2
        LOOP UNTIL del < eps / 2

    ``d`` float32 ``(n_raters, M)``; ``rater_pad``/``score_pad`` from
    :func:`padded_by_paper`.  Returns ``(cen, iterations)``, ``cen`` float32 per paper.
    """
    d = np.asarray(d, dtype=F32)
    # papers rated by the same raters in the same order with the same scores search alike:
    # search each distinct paper once
    first, inverse = distinct_rows(rater_pad, score_pad)
    if first is not None and first.size < 0.9 * rater_pad.shape[0]:
        cen, it = _faithful_search(d, rater_pad[first], score_pad[first], eps)
        return cen[inverse], it
    return _faithful_search(d, rater_pad, score_pad, eps)


def distinct_rows(rater_pad, score_pad):
    """``(first, inverse)`` of the distinct rows of ``(rater_pad, score_pad)`` (as
    ``np.unique(..., return_index=True, return_inverse=True)``), through one int64 key per
    row; ``(None, None)`` when the key would not fit in 62 bits."""
    if not rater_pad.size:
        return None, None
    radix_r = int(rater_pad.max()) + 2
    radix_s = int(score_pad.max()) + 2
    if rater_pad.min() < -1 or score_pad.min() < -1 or \
            rater_pad.shape[1] * np.log2(float(radix_r) * radix_s) > 62:
        return None, None
    key = np.zeros(rater_pad.shape[0], dtype=np.int64)
    for j in range(rater_pad.shape[1]):
        key = (key * radix_r + (rater_pad[:, j] + 1)) * radix_s + (score_pad[:, j] + 1)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _faithful_search(d, rater_pad, score_pad, eps):
    """The bracket search of :func:`faithful_quality` on every row given."""
    n_papers, k = rater_pad.shape
    m_steps = d.shape[1]
    cen = np.zeros(n_papers, dtype=F32)
    dl = np.full(n_papers, F32(5.0), dtype=F32)
    active = np.arange(n_papers)
    half_eps = eps / F32(2)

    d_t = np.ascontiguousarray(d.T)  # (M, raters): the steps of the raters of many papers in one gather
    layout = {}   # (papers still searched, trials) -> their gathered steps and score positions

    def gathered(rows, n_u):
        """The steps (M, n, k, A) of the papers' raters and where each paper's scores sit in
        ``e``, for papers ``rows``: the same until a paper finishes (``rows`` only shrinks)."""
        key = (rows.size, n_u)
        if key not in layout:
            layout.clear()
            r, sc = rater_pad[rows].T, score_pad[rows].T                     # (k, A)
            ok = r >= 0
            shape = (n_u,) + r.shape                                         # (n, k, A)
            drow = np.broadcast_to(d_t[:, np.where(ok, r, 0)][:, None], (m_steps,) + shape)   # (M, n, k, A)
            size = ok.size * n_u                                             # e(s) of each column
            pick = np.broadcast_to(np.where(ok, sc, 0) * size, shape).reshape(-1) + np.arange(size)
            layout[key] = (shape, drow, pick, ok, [bool(ok[m].all()) for m in range(k)])
        return layout[key]

    def likelihood(rows, u):
        """p(i) for trial qualities ``u`` (n, A) of papers ``rows``, (n, A).  Arrays are
        laid out (category, trial, slot, paper), papers innermost, so every element-wise
        step runs along one long contiguous axis."""
        shape, drow, pick, ok, full = gathered(rows, u.shape[0])
        e, t = _faithful_numerators(np.broadcast_to(u[:, None, :], shape), drow)
        es = np.take(e.reshape(-1), pick).reshape(shape)                    # (n, k, A)
        p = np.ones(u.shape, dtype=F32)
        with np.errstate(over="ignore", invalid="ignore"):  # inf / inf: see _faithful_numerators
            for m in range(k):  # p(i) = p(i) * e(s) / T, left to right
                if full[m]:
                    p = (p * es[:, m]) / t[:, m]
                else:
                    p = np.where(ok[m], (p * es[:, m]) / t[:, m], p)
        return p

    # The middle likelihood of an iteration is always one the previous iteration
    # computed at the same u (u(3) after a move up, u(1) after a move down, u(2)
    # after halving), so only the two ends are new.
    pmid = likelihood(active, cen[None, :])[0]
    it = 0
    while active.size:
        it += 1
        c, dd = cen[active], dl[active]
        u = np.stack([c - dd, c + dd])
        ends = likelihood(active, u)
        p1, p2, p3 = ends[0], pmid[active], ends[1]
        stop = np.abs(c) > F32(14)
        up = (p1 < p2) & (p2 < p3)
        down = ~up & (p1 > p2) & (p2 > p3)
        move = ~stop
        new_c = np.where(up, u[1], np.where(down, u[0], c))
        new_d = np.where(up | down, dd, dd / F32(2)).astype(F32)
        pmid[active] = np.where(up, p3, np.where(down, p1, p2))
        cen[active] = np.where(move, new_c, c)
        dl[active] = np.where(move, new_d, dd)
        done = stop | (move & (new_d < half_eps))
        active = active[~done]
    return cen, it


def faithful_expected(d, cen):
    """PCM.BAS's expected score of every rater at each paper's CEN (float32)::

        sc(i) = 0: FOR L = 1 TO mp: sc(i) = sc(i) + e(L) / T * L
        ave = ave + sc(i)     ... PRINT #2, ave / nj

    ``d`` ``(n_raters, M)`` and ``cen`` ``(n_papers,)``, or stacks ``(B, n_raters, M)`` and
    ``(B, n_papers)``.  Returns ``(sc, paper)``: ``sc`` ``(..., n_papers, n_raters)``,
    ``paper = ave / nj`` ``(..., n_papers)``.
    """
    d = np.asarray(d, dtype=F32)
    cen = np.asarray(cen, dtype=F32)
    single = d.ndim == 2
    if single:
        d, cen = d[None], cen[None]
    B, nr, m = d.shape
    shape = (B, nr, cen.shape[1])                                   # papers innermost
    e, t = _faithful_numerators(np.broadcast_to(cen[:, None, :], shape),
                                np.broadcast_to(np.transpose(d, (2, 0, 1))[..., None], (m,) + shape))
    sc = np.zeros(shape, dtype=F32)
    for j in range(1, m + 1):
        sc += (e[j] / t) * F32(j)
    ave = np.zeros((B, shape[2]), dtype=F32)
    for i in range(nr):
        ave += sc[:, i]
    sc, paper = sc.transpose(0, 2, 1), (ave / F32(nr)).astype(F32)
    return (sc[0], paper[0]) if single else (sc, paper)


# ---------------------------------------------------------------------------------
# corrected: PAIR by Newton with centring, bounded ML / WLE quality
# ---------------------------------------------------------------------------------
def estimable_steps(wins):
    """Which steps PAIR can estimate, from the win matrix ``W = N2`` (steps x steps).

    Returns ``(status, main)``: ``status`` float per step, ``0`` where estimable,
    ``+inf`` where the MLE diverges upwards (the step was never crossed, or only
    crossed against steps that are themselves infinite: no wins left), ``-inf`` where it
    diverges downwards (never failed), ``nan`` where there is no information (no
    comparisons, or a comparison component separate from the main one); ``main`` is
    the boolean mask of the estimable steps: the largest strongly connected component
    of the win digraph after removing the infinite ones (Ford 1957: the
    Bradley-Terry MLE is finite iff the win digraph is strongly connected).
    """
    k = wins.shape[0]
    status = np.zeros(k)
    comp = wins + wins.T
    alive = comp.sum(axis=1) > 0
    status[~alive] = np.nan
    while True:
        sub = wins[np.ix_(alive, alive)]
        w = np.zeros(k)
        lo = np.zeros(k)
        w[alive] = sub.sum(axis=1)
        lo[alive] = sub.sum(axis=0)
        nowin = alive & (w == 0)
        noloss = alive & (lo == 0)
        if not (nowin | noloss).any():
            break
        status[nowin & noloss] = np.nan
        status[nowin & ~noloss] = np.inf
        status[noloss & ~nowin] = -np.inf
        alive &= ~(nowin | noloss)
    main = np.zeros(k, dtype=bool)
    if alive.any():
        idx = np.flatnonzero(alive)
        from scipy.sparse import csr_matrix  # lazily: scipy.sparse costs 0.3 s to import
        from scipy.sparse.csgraph import connected_components

        graph = csr_matrix(wins[np.ix_(idx, idx)] > 0)
        n_comp, labels = connected_components(graph, directed=True, connection="strong")
        main[idx[_largest(labels, n_comp, np.bincount(labels, minlength=n_comp), wins[np.ix_(idx, idx)])]] = True
        status[alive & ~main] = np.nan
    return status, main


class _Pairs:
    """The true entries of a stack of ``(k, k)`` masks ``(G, k, k)``, to gather and scatter
    the entries of any subset of the stack (rows in increasing order) without scanning it."""

    def __init__(self, mask, k):
        self.k, self.G = k, mask.shape[0]
        self.pos = np.flatnonzero(mask)                   # in the whole stack
        self.row, local = np.divmod(self.pos, k * k)
        self.i, self.j = np.divmod(local, k)
        self.local = local
        base = self.row * k
        self.whole = (self.pos, base + self.i, base + self.j, self.pos)

    def select(self, rows):
        """``(flat, i, j, pos)`` for the sub-stack ``rows``: flat positions in it, the flat
        positions of the two steps of each pair in its ``(len(rows), k)`` steps, and the
        positions in the whole stack."""
        if len(rows) == self.G:
            return self.whole
        rank = np.full(self.G, -1)
        rank[rows] = np.arange(len(rows))
        rank_row = rank[self.row]
        sel = rank_row >= 0
        rank_row = rank_row[sel]
        base = rank_row * self.k
        return rank_row * (self.k * self.k) + self.local[sel], base + self.i[sel], base + self.j[sel], self.pos[sel]


def _pair_newton_step(d, w, n, selected):
    """The Newton step ``(Lap + 11'/K)^-1 F`` of :func:`pair_newton` for the steps ``d``
    ``(G, k)`` of a stack with wins ``w`` and comparisons ``n`` ``(G, k, k)``; ``selected``: the
    compared pairs' positions, :meth:`_Pairs.select`."""
    k = d.shape[1]
    flat, i, j, _ = selected
    pi = np.zeros(n.size)
    dflat = d.reshape(-1)
    pi[flat] = 1.0 / (1.0 + np.exp(dflat[i] - dflat[j]))
    pi = pi.reshape(n.shape)
    grad = (n * pi).sum(axis=2) - w.sum(axis=2)
    q = n * pi * (1.0 - pi)
    lap = np.zeros_like(q)
    diag = np.arange(k)
    lap[:, diag, diag] = q.sum(axis=2)
    lap = lap - q
    return np.linalg.solve(lap + np.full((k, k), 1.0 / k), grad[:, :, None])[:, :, 0]


def pair_newton(wins, tol=1e-9, max_iter=100):
    """Maximise the pairwise (Bradley-Terry) log likelihood of strongly connected steps.

    ``L(d) = sum_ab W[a,b] log pi_ab``, ``pi_ab = 1/(1+exp(d_a - d_b))``; gradient
    ``F_a = sum_b N_ab pi_ab - W_ab`` (``N = W + W'``), Hessian ``-Lap`` with
    ``Lap`` the Laplacian of weights ``N pi (1-pi)``.  Newton steps
    ``d += (Lap + 11'/K)^-1 F`` keep ``sum d = 0`` (the centring), halved while the
    likelihood falls.  ``wins`` ``(k, k)``, or a stack ``(G, k, k)`` of equal-sized win
    matrices (the Monte Carlo replications: stacked LAPACK solves, each data set stopping
    at its own iteration, the same numbers as alone).  Returns ``(d, iterations,
    converged)`` (arrays of them for a stack).
    """
    wins = np.asarray(wins)
    single = wins.ndim == 2
    if single:
        wins = wins[None]
    G, k = wins.shape[0], wins.shape[1]
    d = np.zeros((G, k))
    iterations = np.zeros(G, dtype=np.int64)
    converged = np.ones(G, dtype=bool)
    if k < 2:
        return (d[0], 0, True) if single else (d, iterations, converged)
    converged[:] = False
    w = wins.astype(np.float64)
    n = wins + wins.transpose(0, 2, 1)
    kk = k * k
    # The terms of a pair never compared are +0 whatever the steps (a zero count times a
    # finite number): only the others are computed, into arrays of zeros that the sums
    # still add whole, so the numbers are those of the dense sums.
    won, compared = _Pairs(w > 0, k), _Pairs(n > 0, k)
    w_flat = w.reshape(-1)

    def loglik(x, rows):
        """The log-likelihood of steps ``x`` of the data sets ``rows`` of the stack."""
        flat, i, j, pos = won.select(rows)
        terms = np.zeros(len(rows) * kk)
        xf = x.reshape(-1)
        terms[flat] = w_flat[pos] * np.logaddexp(0.0, xf[i] - xf[j])
        return -terms.reshape(len(rows), kk).sum(axis=1)

    ll = loglik(d, np.arange(G))
    active = np.arange(G)
    for _ in range(max_iter):
        if not active.size:
            break
        da = d[active]
        step = _pair_newton_step(da, w[active], n[active], compared.select(active))
        a_n = active.size
        t = np.ones(a_n)
        new = np.empty_like(da)
        new_ll = np.empty(a_n)
        ll_a = ll[active]
        searching = np.arange(a_n)
        while searching.size:
            cand = da[searching] + t[searching, None] * step[searching]
            cll = loglik(cand, active[searching])
            new[searching], new_ll[searching] = cand, cll
            stop = (cll >= ll_a[searching] - 1e-12 * np.abs(ll_a[searching])) | (t[searching] < 1e-4)
            t[searching[~stop]] /= 2
            searching = searching[~stop]
        d[active] = new - new.mean(axis=1, keepdims=True)
        ll[active] = new_ll
        iterations[active] += 1
        conv = np.abs(t[:, None] * step).max(axis=1) < tol
        converged[active[conv]] = True
        active = active[~conv]
    if single:
        return d[0], int(iterations[0]), bool(converged[0])
    return d, iterations, converged


def ml_quality(ratings: Ratings, delta, lo=0, hi=None, bound=15.0, quality="wle",
               tol=1e-10, max_iter=100):
    """Warm's WLE (or bounded ML) paper quality on ``[-bound, bound]`` with steps ``delta``
    scored on the categories ``lo..hi``: :func:`.quality.estimate_quality` (the one person
    solver) on :func:`.quality.pcm_tau`, once for each pattern of ratings (:func:`.quality.quality_by_pattern`:
    the same to the bit; at 1M ratings, 2 of 200 raters a paper, 170,000 patterns of 500,000 papers, 2.2 s
    of ``adjust -m PCM``'s 7.4 where every paper was solved).  A paper whose equation has no root inside (ML:
    all its scores extreme) gets the bound on the side the likelihood rises; a paper with
    no ratings gets 0.  Returns ``theta``."""
    from .mml_engine import rating_patterns

    if hi is None:
        hi = ratings.max_score
    theta, _, _ = quality_by_pattern(rating_patterns(ratings.paper, ratings.rater, ratings.score), ratings.n_papers,
                                     pcm_tau(delta, lo, hi), quality=quality, bound=bound, tol=tol,
                                     max_iter=max_iter, with_se=False)
    return theta


def eap_quality(ratings: Ratings, steps, lo, hi, start):
    """The corrected PCM's EAP paper qualities (its ``kelley`` level): the posterior means under a
    normal distribution fitted by marginal ML with the steps ``steps`` on categories ``lo..hi``
    held (:func:`.quality.eap_normal`, started from the qualities ``start``, the WLEs)."""
    return eap_normal(ratings.paper, ratings.rater, ratings.score, ratings.n_papers, pcm_tau(steps, lo, hi),
                      start)[0]


# ---------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------
class PartialCreditModel(RaterAdjuster):
    """PCM adjustment: PAIR rater steps, per-paper quality, expected scores.

    Parameters
    ----------
    variant : ``"faithful"`` (PCM.BAS) or ``"corrected"``.
    quality : corrected only: ``"wle"`` (Warm's weighted likelihood, the default: finite
        and unshrunk for every paper, all-extreme ones included) or ``"mle"`` (bounded
        maximum likelihood: an all-extreme paper sits at the bound, its fair score at the
        end of the scale; the corrected PCM's quality before issue 23); the paper-quality
        option is spelled so by every estimator (``CML``: ``"wle"``/``"mle"``, ``MML``:
        ``"eap"``/``"wle"``).
    theta_bound : corrected only: quality is searched in ``[-theta_bound, theta_bound]``.
    smoothing : corrected only: pseudo-count added to both directions of every pair of
        steps that were compared (Bradley-Terry smoothing); it keeps the steps of small
        data sets finite and estimated (steps crossed only one way, steps in small
        strongly connected components) instead of imputed.  0: estimate only the
        estimable steps (strict PAIR ML).
    tol, max_iter : corrected only: convergence of the PAIR Newton iterations.

    Attributes (after ``fit``)
    --------------------------
    steps_ : ``(n_raters, M)`` step difficulties used for scoring. Faithful: PCM.BAS's
        ``d``. Corrected: (smoothed) PAIR estimates on the ``fitted_`` steps, centred
        (identification: their mean is 0); other steps imputed as the step's mean over
        raters plus the rater's mean offset on its fitted steps (interpolated across
        steps where no rater has one); +-inf only outside the categories anyone used.
    pair_steps_ : corrected: the PAIR estimates where estimable, else ``+inf`` (never
        crossed), ``-inf`` (never failed) or ``nan`` (no information, or a comparison
        component apart from the main one).
    estimable_ : ``(n_raters, M)`` bool: the unsmoothed PAIR MLE is finite (the step
        is in the main strongly connected component of the win digraph); faithful:
        all True (PCM.BAS never asks).
    fitted_ : corrected: steps that got a PAIR value (see ``smoothing``).
    category_range_ : ``(lo, hi)`` categories that can be scored (corrected: the range
        of scores used in the fitted data; faithful: ``(0, M)``).
    quality_ : quality estimate of each paper of the fitted data (CEN for faithful).
    n_iter_, converged_ : PAIR sweeps / Newton iterations and whether they converged.
    """

    code = "PCM"
    needs_multiple_raters = True

    def __init__(self, variant: str = DEFAULT_VARIANT, quality: str = "wle", theta_bound: float = 15.0,
                 smoothing: float = 1.0, tol: float = 1e-9, max_iter: int = 100):
        self.variant = variant
        self.smoothing = smoothing
        self.quality = quality
        self.theta_bound = theta_bound
        self.tol = tol
        self.max_iter = max_iter

    # -- fit -------------------------------------------------------------------------
    def _fit(self, ratings: Ratings) -> None:
        check_quality(self.quality, ("mle", "wle"))
        if self.variant == "faithful":
            self._fit_faithful(ratings)
        else:
            self._fit_corrected(ratings)
        self.quality_ = self.paper_quality(ratings)

    def _fit_faithful(self, ratings):
        counts = pair_counts(ratings, self_pairs=True)
        d, sweeps, dmax = faithful_pair(counts)
        self._d32_ = d
        self.steps_ = d.astype(np.float64)
        self.estimable_ = np.ones(d.shape, dtype=bool)
        self.category_range_ = (0, ratings.max_score)
        self.n_iter_ = sweeps
        self.converged_ = bool(dmax < FAITHFUL_EPS)
        self.max_change_ = dmax

    def _fit_corrected(self, ratings):
        require_connected(ratings, "PCM")
        nr, m = ratings.n_raters, ratings.max_score
        counts = pair_counts(ratings, self_pairs=False)
        _, wins = step_pair_matrices(counts)
        lo, hi = used_range(ratings.score, m)
        # steps outside the used categories cannot be scored: leave them out of the fit
        x = np.tile(np.arange(1, m + 1), nr)
        inside = scorable_steps(nr, m, lo, hi)
        status, main = estimable_steps(wins * inside[:, None] * inside[None, :])
        status[~inside] = np.where(x[~inside] <= lo, -np.inf, np.inf)
        fitted = _fitted_steps(wins * inside[:, None] * inside[None, :], main, self.smoothing)
        w = wins[np.ix_(fitted, fitted)].astype(np.float64)
        if self.smoothing:
            w = w + _pseudo_counts(w, self.smoothing)
        est, n_iter, conv = pair_newton(w, tol=self.tol, max_iter=self.max_iter)
        values = np.full(nr * m, np.nan)
        values[fitted] = est
        pair = np.where(main, values, status).reshape(nr, m)
        self.pair_steps_ = pair
        self.estimable_ = main.reshape(nr, m)
        self.fitted_ = fitted.reshape(nr, m)
        self.category_range_ = (lo, hi)
        self.steps_ = _impute_steps(values.reshape(nr, m), self.fitted_, lo, hi)
        self.n_iter_ = n_iter
        self.converged_ = conv

    # -- quality and expected scores --------------------------------------------------
    def paper_quality(self, ratings: Ratings) -> np.ndarray:
        """Per-paper quality estimate (faithful: PCM.BAS's CEN; corrected: WLE or bounded ML)."""
        if self.variant == "faithful":
            r_pad, s_pad, _ = padded_by_paper(ratings)
            theta, _ = faithful_quality(self._d32_, r_pad, s_pad)
        else:
            lo, hi = self.category_range_
            theta = ml_quality(ratings, self.steps_, lo, hi, bound=self.theta_bound,
                               quality=self.quality)
        return theta

    def expected_scores(self, ratings: Ratings) -> np.ndarray:
        """``(n_papers, n_raters)``: every rater's expected score at each paper's quality."""
        return self._expected_at(self.paper_quality(ratings))

    def _expected_at(self, theta) -> np.ndarray:
        """``(len(theta), n_raters)``: every rater's expected score at each quality."""
        if self.variant == "faithful":
            sc, _ = faithful_expected(self._d32_, theta)
            return sc
        return expected_score(np.asarray(theta)[:, None], pcm_tau(self.steps_, *self.category_range_))

    #: qualities x raters per block of expected scores: memory is a block x raters x categories,
    #: not papers x raters x categories (5M ratings with 200 raters: 2.5M x 200 x 6), and a block's arrays
    #: (1.5 MB at 6 categories) stay in the processor's cache through the passes over them: at 1M ratings,
    #: 200 raters, blocks of 2^20 (50 MB arrays) took 6.1-6.3 s of ``adjust -m PCM``, 2^15 4.3-4.6 s
    #: (2^17 4.5-4.8, 2^13 4.4-4.5), the same numbers to the bit
    chunk_cells = 1 << 15

    def _scores_by_chunk(self, ratings: Ratings, theta):
        """``(rating, paper)`` adjusted scores.  The expected scores are made once per
        distinct quality (papers with the same raters and scores share it), a block of
        qualities at a time; every value comes from the same element-wise operations as
        on the whole ``(n_papers, n_raters)`` array, so the results are the same to the bit."""
        uniq, inv = np.unique(theta, return_inverse=True)
        inv = inv.ravel()
        n_u, nr = uniq.size, self.steps_.shape[0]
        step = max(1, self.chunk_cells // max(nr, 1))
        key = inv[ratings.paper]                     # each rating's quality, as an index
        order = np.argsort(key, kind="stable")
        bounds = np.searchsorted(key[order], np.arange(0, n_u + step, step))
        rating = np.empty(ratings.n_ratings, dtype=np.float64)
        paper_u = np.empty(n_u, dtype=np.float64)
        for k, a in enumerate(range(0, n_u, step)):
            b = min(n_u, a + step)
            sc = self._expected_at(uniq[a:b])
            idx = order[bounds[k]:bounds[k + 1]]
            rating[idx] = sc[key[idx] - a, ratings.rater[idx]]
            if self.variant == "faithful":
                ave = np.cumsum(sc.astype(F32), axis=1, dtype=F32)[:, -1]
                paper_u[a:b] = (ave / F32(sc.shape[1])).astype(np.float64)
            else:
                paper_u[a:b] = sc.mean(axis=1)
        return rating, paper_u[inv]

    def paper_scores_by_shrinkage(self, ratings: Ratings) -> dict:
        """The study's shrinkage levels of the papers' scores on the data just fitted
        (:mod:`.shrinkage`): corrected, ``none`` at the fitted quality (WLE by default) and
        ``kelley`` at the EAP (:func:`eap_quality`); faithful, ``none`` only (its ``kelley`` is
        Kelley's formula, which :func:`.shrinkage.shrunk_papers` applies).  Thin raters' ratings
        count as in :meth:`fit_transform`."""
        own = {"none": self._transform_thin(ratings, True, {}).paper}
        if self.variant != "faithful":
            own["kelley"] = self._transform_thin(ratings, True, {"eap": True}).paper
        return own

    def _transform(self, ratings: Ratings, training: bool, eap: bool = False) -> Adjusted:
        """A rating's adjusted score: its rater's expected score at the paper's quality (PCM.BAS
        ``PRINT #2, r; sc(r);``); the paper's: the mean over all ``n_raters`` raters of the expected
        score (``PRINT #2, ave / nj``, in single precision for the faithful variant).  The fit's
        qualities serve its own data; ``eap`` (corrected): at the EAP qualities of ``ratings``
        (:func:`eap_quality`) instead."""
        theta = self.quality_ if training else self.paper_quality(ratings)
        if eap:
            theta = eap_quality(ratings, self.steps_, *self.category_range_, theta)
        rating, paper = self._scores_by_chunk(ratings, theta)
        rated = ratings.ratings_per_paper() > 0   # a paper without ratings (of a subset): nan, as in the base class
        return Adjusted(rating=rating, paper=paper if rated.all() else np.where(rated, paper, np.nan))


def _pseudo_counts(wins, smoothing):
    """Pseudo-wins each way for every compared pair ``(a, b)``:
    ``smoothing * (1/deg_a + 1/deg_b) / 2`` (``deg`` = number of steps compared with),
    so that each step gets about ``smoothing`` pseudo-wins and pseudo-losses in all
    (``wins`` ``(K, K)``, or a stack ``(B, K, K)``)."""
    comp = (wins + np.swapaxes(wins, -1, -2)) > 0
    deg = comp.sum(axis=-1)
    inv = np.where(deg > 0, 1.0 / np.maximum(deg, 1), 0.0)
    return smoothing * comp * (inv[..., :, None] + inv[..., None, :]) / 2


def used_range(score, max_score):
    """``(lo, hi)``: the lowest and highest score used (``(0, M)`` without scores), of one data
    set's scores ``(L,)`` or of each replication of a stack ``(B, L)`` (then two ``(B,)`` arrays)."""
    score = np.asarray(score)
    lead = score.shape[:-1]
    used = np.zeros(lead + (max_score + 1,), dtype=bool)
    np.put_along_axis(used, score.reshape(lead + (-1,)), True, axis=-1)
    none = ~used.any(axis=-1)
    lo = np.where(none, 0, np.argmax(used, axis=-1))
    hi = np.where(none, max_score, max_score - np.argmax(used[..., ::-1], axis=-1))
    return (int(lo), int(hi)) if not lead else (lo, hi)


def scorable_steps(n_raters, max_score, lo, hi):
    """Which steps ``(rater, x)``, flattened rater by rater, lie inside the used categories
    ``lo < x <= hi`` (``lo``, ``hi`` scalars or ``(B,)``: then ``(B, n_raters * M)``)."""
    x = np.tile(np.arange(1, max_score + 1), n_raters)
    lo, hi = np.asarray(lo)[..., None], np.asarray(hi)[..., None]
    return (x > lo) & (x <= hi)


def _fitted_steps(wins, main, smoothing):
    """Steps given a PAIR value: the estimable ones; with ``smoothing > 0`` every step
    of the largest connected comparison component (the pseudo-counts make it strongly
    connected, so the smoothed MLE is finite)."""
    if not smoothing:
        return main
    comp = (wins + wins.T) > 0
    has = comp.any(axis=1)
    fitted = np.zeros(wins.shape[0], dtype=bool)
    if has.any():
        idx = np.flatnonzero(has)
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components

        n_comp, labels = connected_components(csr_matrix(comp[np.ix_(idx, idx)]), directed=False)
        sizes = np.bincount(labels, weights=comp[np.ix_(idx, idx)].sum(axis=1), minlength=n_comp)
        fitted[idx[_largest(labels, n_comp, sizes, wins[np.ix_(idx, idx)])]] = True
    return fitted


def _largest(labels, n_comp, sizes, wins):
    """The mask of the largest component (by ``sizes``, then by the comparisons within it), or none where two
    tie on both: np.argmax took the first, so the raters' order chose between two equal parts of the
    comparisons (2 raters, 3 papers: renaming one moved a paper's PCM score by 0.03; the property suite's
    PCM_TIE), where nothing in the data prefers either."""
    within = np.bincount(labels, weights=(wins + wins.T).sum(axis=1) * 1.0, minlength=n_comp)
    top = np.flatnonzero(sizes == sizes.max())
    top = top[within[top] == within[top].max()]
    return labels == top[0] if top.size == 1 else np.zeros(labels.size, dtype=bool)


def _impute_steps(pair, main, lo, hi):
    """Steps for scoring: estimates where estimable, else step mean + rater offset.

    ``pooled[x]`` = mean over raters of the estimable ``d[., x]`` (linear
    interpolation over ``x`` where no rater has one); a rater's offset = mean of
    ``d[i, x] - pooled[x]`` over its estimable steps (0 if none).  Steps ``x <= lo``
    are ``-inf`` and ``x > hi`` are ``+inf``: categories nobody used are never scored.
    """
    nr, m = pair.shape
    vals = np.where(main, pair, 0.0)
    n_est = main.sum(axis=0)
    steps_x = np.arange(1, m + 1)
    pooled = np.zeros(m)
    have = n_est > 0
    pooled[have] = vals[:, have].sum(axis=0) / n_est[have]
    if have.any():
        pooled[~have] = np.interp(steps_x[~have], steps_x[have], pooled[have])
    dev = np.where(main, pair - pooled, 0.0)
    n_i = main.sum(axis=1)
    offset = np.where(n_i > 0, dev.sum(axis=1) / np.maximum(n_i, 1), 0.0)
    out = np.where(main, pair, pooled[None, :] + offset[:, None])
    out[:, steps_x <= lo] = -np.inf
    out[:, steps_x > hi] = np.inf
    return out
