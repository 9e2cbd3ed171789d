"""Paper qualities (person measures) from Rasch-family rater parameters, all papers at once:
the one person-quality solver (CML, MML, the rater report and the corrected PCM, per data set
and batched over Monte Carlo replications) and the one place for PCM category probabilities.

Rater ``j`` is described by cumulative parameters ``tau[j, x]`` (``tau[j, 0] = 0``,
``tau[j, x] = sum_{k<=x} delta[j, k]``; ``+inf`` for a category the rater cannot give;
:func:`pcm_tau` turns PCM step difficulties and a range of used categories into them):

    P(x | theta) = exp(x theta - tau[j, x]) / sum_h exp(h theta - tau[j, h]).

For a paper with ratings ``x_i`` by raters ``j_i`` and total ``r = sum x_i``:

* MLE solves ``r = sum_i E_i(theta)``; infinite for extreme totals (with ``bound``: the
  maximum on ``[-bound, bound]``, i.e. the bound).
* WLE (Warm 1989) solves ``r - sum_i E_i(theta) + J(theta) / (2 I(theta)) = 0`` with
  ``I = sum_i Var_i`` (the test information) and ``J = dI/dtheta = sum_i mu3_i`` (third
  central moments); finite for every total, including all-0 and all-M papers.

Both are found by a vectorised safeguarded Newton iteration (bisection inside a bracket
whenever Newton leaves it or the last step did not halve the estimating function), so every paper is solved in the same few array operations.
Each paper's iterates depend on its own ratings only (element-wise operations, per-paper
``bincount`` sums in rating order, sums along the category axis), so the papers of many
replications solved in one call (global paper and rater numbers) get the same numbers to
the bit as each replication alone.  The standard error is ``1 / sqrt(I(theta))``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["category_probabilities", "log_category_probabilities", "moments", "estimate_quality",
           "eap_normal", "expected_score", "mean_expected_score", "pcm_tau"]


def last_axis_sum(a):
    """``np.sum(a, axis=-1)`` of a float array with a short last axis, bit for bit, by whole
    columns: numpy adds a row of fewer than 8 numbers one after the other, and a row of 8 to
    15 as ``((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7))`` then the rest one by one (its pairwise
    summation), after its identity +0; a reduction over a short contiguous axis costs numpy
    a loop per row.
    ``tests/methods/test_quality.py`` checks the identity on random rows of every length."""
    K = a.shape[-1]
    if K == 0 or K >= 16:
        return np.sum(a, axis=-1)
    if K < 8:
        s = a[..., 0] + 0.0
        start = 1
    else:
        s = (a[..., 0] + a[..., 1]) + (a[..., 2] + a[..., 3])
        s += (a[..., 4] + a[..., 5]) + (a[..., 6] + a[..., 7])
        start = 8
    for k in range(start, K):
        s += a[..., k]
    if K >= 8:
        s += 0.0  # numpy starts from its identity, +0: a sum of -0s is +0
    return s


def last_axis_max(a):
    """``np.max(a, axis=-1)`` by whole columns (a maximum is exact in any order; only the
    sign of a zero maximum may differ, which ``x - max`` and ``exp`` do not see)."""
    if a.shape[-1] == 0:
        return np.max(a, axis=-1)
    m = a[..., 0].copy()
    for k in range(1, a.shape[-1]):
        np.maximum(m, a[..., k], out=m)
    return m


def category_probabilities(theta, tau):
    """P(x | theta) for cumulative parameters ``tau`` (..., K); +inf in tau gives P = 0.

    ``theta`` broadcasts against ``tau[..., 0]``; rows of tau that are all +inf give nan.
    """
    tau = np.asarray(tau, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)[..., None]
    x = np.arange(tau.shape[-1], dtype=np.float64)
    eta = x * theta - tau
    top = last_axis_max(eta)[..., None]
    with np.errstate(invalid="ignore"):  # a rater with no category at all: nan probabilities
        p = np.exp(eta - np.where(np.isfinite(top), top, 0.0))
        p /= last_axis_sum(p)[..., None]
        return p


def log_category_probabilities(theta, tau):
    """log P(x | theta) for cumulative parameters ``tau`` (..., K), broadcasting as
    :func:`category_probabilities` (+inf in tau gives -inf, a row all +inf nan); stays finite where P
    underflows (the marginal likelihood of :mod:`.mml` sums these over a paper's ratings at every
    quadrature node)."""
    tau = np.asarray(tau, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)[..., None]
    K = tau.shape[-1]
    eta = np.arange(K, dtype=np.float64) * theta - tau
    if eta.size and eta.max() < 700.0 and not np.any(tau[..., 0]):
        # eta[..., 0] = 0, so the sum is >= 1 and exp can neither overflow nor leave 0 (a rater whose
        # lowest category is above 0 has +inf there): no per-row maximum (a slow reduction over a
        # short last axis); the sum as a matrix-vector product
        eta -= np.log(np.exp(eta) @ np.ones(K))[..., None]
        return eta
    with np.errstate(invalid="ignore"):   # a rater with no category at all (tau all +inf): nan, as above
        eta -= np.max(eta, axis=-1, keepdims=True)
    eta -= np.log(np.exp(eta).sum(axis=-1, keepdims=True))
    return eta


def moments(p, order=4):
    """Mean, variance, third and fourth central moments of a category distribution (..., K);
    ``order=2``: the mean and variance only.

    Sums along the category axis (not a BLAS product, whose rounding depends on the shape of
    the whole array): a paper's moments do not depend on which other papers are in the call."""
    x = np.arange(p.shape[-1], dtype=np.float64)
    m = last_axis_sum(p * x)
    d = x - m[..., None]
    d2 = d * d
    if order == 2:
        return m, last_axis_sum(p * d2)
    return m, last_axis_sum(p * d2), last_axis_sum(p * d2 * d), last_axis_sum(p * d2 * d2)


def expected_score(theta, tau):
    """E[X | theta] under cumulative parameters tau (broadcasting)."""
    return category_probabilities(theta, tau) @ np.arange(np.shape(tau)[-1], dtype=np.float64)


#: Cells (qualities x raters x categories) of one block of :func:`mean_expected_score`: its arrays (2 MB)
#: stay in the cache; blocks of 4M cells took 2.5 times as long (0.15 against 0.06 s for 4,000 qualities
#: of 200 raters on 0-5), the same numbers to the bit
FAIR_BLOCK_CELLS = 1 << 18
#: Grid spacing (logits) of the interpolated fair scores (:func:`mean_expected_score`), and the
#: number of distinct qualities per grid point above which they are interpolated
FAIR_GRID_STEP = 1.0 / 256
FAIR_INTERPOLATE_RATIO = 4


def _mean_expected_exact(theta, tau, moments_too=False):
    """mean_j E[X | theta, tau[j]] (and mean_j Var) at 1-d ``theta``, a block of qualities at a time.
    With the variances (the interpolation's grid) ``tau`` is taken column by column (Fortran order), so
    that the blocks' qualities x raters x categories arrays, laid out as it is, hold each category's
    qualities x raters in one piece: the sums and maxima over the categories (:func:`last_axis_sum`,
    :func:`moments`) then read whole arrays, not every K-th number (the same numbers to the bit; 2,755
    qualities of 200 raters on 0-5, the fair scores of 1M ratings: 0.028 s where 0.041).  (Not without
    them: :func:`expected_score`'s product over the categories is BLAS's, whose sums differ in the last
    bit on that layout, as numpy's own sums over 16 categories or more.)"""
    if moments_too and tau.shape[1] < 16:
        tau = np.asfortranarray(tau)
    out = np.empty(theta.size)
    var = np.empty(theta.size) if moments_too else None
    step = max(1, FAIR_BLOCK_CELLS // max(tau.shape[0] * tau.shape[1], 1))
    for a in range(0, theta.size, step):
        if moments_too:
            m, v = moments(category_probabilities(theta[a:a + step, None], tau), order=2)
            out[a:a + step], var[a:a + step] = m.mean(axis=-1), v.mean(axis=-1)
        else:
            out[a:a + step] = expected_score(theta[a:a + step, None], tau).mean(axis=-1)
    return out, var


#: the interpolation's grid (:func:`mean_expected_score`) by :func:`_mean_moments_by_products` where no
#: product of exps can leave float64's range: ``x |theta| + |tau[j, x]|`` at most PRODUCT_EXPONENT (e^690
#: times the K x K of the weights ``x^2`` summed is far under 1.8e308); else :func:`_mean_expected_exact`
PRODUCT_EXPONENT = 690.0


def _mean_moments_by_products(theta, tau):
    """:func:`_mean_expected_exact` with the variances (``mean_j E[X | theta, tau[j]]``, ``mean_j Var``) at
    1-d ``theta``, the categories' exps taken as products: ``exp(x theta - tau[j, x])`` is
    ``exp(x theta) exp(-tau[j, x])``, exps of a qualities x categories and a raters x categories table, so
    that the sums over the categories ``S_k = sum_x x^k exp(x theta - tau[j, x])`` (k = 0, 1, 2) are products
    of matrices, ``E = S_1 / S_0`` and ``Var = S_2 / S_0 - E^2`` (the probabilities ``exp(...) / S_0``).
    Where each quality, rater and category took its exp (~6 ns here, no AVX-512) and a dozen passes of
    numpy: the fair scores' grid of 1M ratings, 3,414 qualities of 200 raters on 0-5 (21 of 200 raters a
    paper), 0.10 -> 0.007 s.  The means within 2e-15 of the formula's on 0-5, 4e-14 on 0-100; the
    variances (the interpolation's slopes, which it weighs by the grid's spacing, 0.004 or less) within
    2e-10 of theirs, relative; 1M ratings' written fair scores byte-identical.  Only where
    :data:`PRODUCT_EXPONENT` bounds every exponent (the caller sees to it), a block of ~2^20 qualities x
    raters at a time; +inf in ``tau`` (a category a rater cannot give) is a product 0, as its probability."""
    K = tau.shape[1]
    x = np.arange(K, dtype=np.float64)
    c = (K - 1) / 2.0   # (the moments about the scale's middle: the variance's S_2 / S_0 - E^2 cancels less)
    b = np.exp(-tau).T   # (K, J)
    f, var = np.empty(theta.size), np.empty(theta.size)
    step = max(1, (1 << 20) // max(tau.shape[0], 1))
    for a0 in range(0, theta.size, step):
        a = np.exp(theta[a0:a0 + step, None] * x)   # (qualities, K)
        s0 = a @ b
        m = ((a * (x - c)) @ b) / s0
        f[a0:a0 + step] = (m + c).mean(axis=1)
        var[a0:a0 + step] = (((a * ((x - c) ** 2)) @ b) / s0 - m * m).mean(axis=1)
    return f, var


def _products_in_range(theta, tau) -> bool:
    """Can :func:`_mean_moments_by_products` take ``tau`` at qualities within +-max |theta| (no nan, no -inf
    in ``tau``, every exponent within :data:`PRODUCT_EXPONENT`)?"""
    finite = np.isfinite(tau)
    if not (finite | (tau == np.inf)).all() or not finite.any() or not theta.size:
        return False
    top = (tau.shape[1] - 1) * float(np.abs(theta).max()) + float(np.abs(tau[finite]).max())
    return top <= PRODUCT_EXPONENT


def mean_expected_score(theta, tau):
    """``mean_j E[X | theta, tau[j]]``: the mean over raters ``tau`` (J, K) of the expected score
    at each quality ``theta`` (any shape; the fair score of the Rasch adjusters).  Once per
    distinct quality (papers with the same raters and scores share it), a block of qualities at
    a time: qualities x raters x categories is never held at once, and every value comes from
    the same element-wise operations as on the whole array, so the result is the same to the bit.

    With many more distinct qualities than points of a grid over their range at FAIR_GRID_STEP
    (a file of a million ratings), the function is interpolated instead: cubic Hermite between
    grid points, with its exact values and slopes there (the slope of an expected score is its
    variance), which is within ``h^4 / 384`` times the fourth derivative of the exact value:
    about 1e-11 (the spacing shrinks with a wider scale; ``tests/methods/test_quality.py``); the values and
    slopes at the grid's points by products of matrices where the exps' range allows
    (:func:`_mean_moments_by_products`), the values within 1e-14 of the exact ones.
    The interpolation is element-wise, so it runs on the qualities as given: sorting them for
    their distinct values (7M of them for the posterior SDs of a 1M-rating file) cost more than it."""
    theta = np.asarray(theta, dtype=np.float64)
    flat = theta.ravel()
    ok = np.isfinite(flat)
    fin = flat if ok.all() else flat[ok]
    lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 0.0)
    # the fourth derivative grows like the fifth power of the scale's width: a finer grid for a wider scale
    h = FAIR_GRID_STEP * min(1.0, (5.0 / max(tau.shape[1] - 1, 1)) ** 1.25)
    n_grid = int(np.ceil((hi - lo) / h)) + 2 if fin.size else 0
    if not _distinct_at_least(fin, max(FAIR_INTERPOLATE_RATIO * n_grid, 2)):
        uniq, inv = np.unique(flat, return_inverse=True)
        return _mean_expected_exact(uniq, tau)[0][inv.ravel()].reshape(theta.shape)
    grid = lo + h * np.arange(n_grid)
    f, d = (_mean_moments_by_products(grid, tau) if _products_in_range(grid, tau) else
            _mean_expected_exact(grid, tau, moments_too=True))
    out = np.empty(flat.size)
    if not ok.all():   # nan or infinite qualities: exact (once each)
        uniq, inv = np.unique(flat[~ok], return_inverse=True)
        out[~ok] = _mean_expected_exact(uniq, tau)[0][inv.ravel()]
    at = np.flatnonzero(ok) if not ok.all() else None
    for a in range(0, fin.size, FAIR_CHUNK):
        x = fin[a:a + FAIR_CHUNK]
        i = np.minimum(((x - lo) / h).astype(np.int64), n_grid - 2)
        t = (x - grid[i]) / h
        h00, h10 = (1 + 2 * t) * (1 - t) ** 2, t * (1 - t) ** 2
        h01, h11 = t * t * (3 - 2 * t), t * t * (t - 1)
        val = h00 * f[i] + h10 * h * d[i] + h01 * f[i + 1] + h11 * h * d[i + 1]
        if at is None:
            out[a:a + FAIR_CHUNK] = val
        else:
            out[at[a:a + FAIR_CHUNK]] = val
    return out.reshape(theta.shape)


#: qualities a chunk of the interpolation of :func:`mean_expected_score` (its dozen temporaries stay in
#: the cache: 6M qualities in 0.22 s where chunks of 1M took 0.33 s)
FAIR_CHUNK = 1 << 16


def _distinct_at_least(x, k) -> bool:
    """Has ``x`` at least ``k`` distinct values?  From a prefix of it where that already shows
    (the usual case when it does: no sort of the whole array)."""
    if x.size < k:
        return False
    head = np.unique(x[:4 * k])
    if head.size >= k or 4 * k >= x.size:
        return head.size >= k
    return np.unique(x).size >= k


def pcm_tau(steps, lo=0, hi=None):
    """Cumulative parameters of PCM step difficulties ``steps`` (..., M) scored on the
    categories ``lo..hi`` only (scalars or arrays broadcasting against ``steps[..., 0]``):
    ``tau[x] = sum_{lo<k<=x} steps[k]`` for ``lo <= x <= hi``, ``+inf`` outside (steps
    outside the range may be infinite: they are never used).  Returns (..., M+1)."""
    steps = np.asarray(steps, dtype=np.float64)
    m = steps.shape[-1]
    hi = m if hi is None else hi
    lo = np.asarray(lo)[..., None]
    hi = np.asarray(hi)[..., None]
    k = np.arange(1, m + 1)
    inner = (k > lo) & (k <= hi)
    tau = np.concatenate([np.zeros(steps.shape[:-1] + (1,)),
                          np.cumsum(np.where(inner, steps, 0.0), axis=-1)], axis=-1)
    x = np.arange(m + 1)
    return np.where((x >= lo) & (x <= hi), tau, np.inf)


def score_range(tau):
    """Lowest and highest category each rater can give (finite tau), (J,) each."""
    ok = np.isfinite(tau)
    K = tau.shape[-1]
    lo = np.argmax(ok, axis=-1)
    hi = K - 1 - np.argmax(ok[..., ::-1], axis=-1)
    return lo, hi


#: The paper-quality estimates a method may use, named alike by every estimator's ``quality=``:
#: maximum likelihood, Warm's weighted likelihood, the posterior mean (the marginal ML fits).
QUALITY_ESTIMATES = ("mle", "wle", "eap")


#: The fair score's rater (MML's, MFRM's and the CML's ``fair``): the average rater's expected score, or the mean
#: of the raters' expected scores.
FAIR_RATERS = ("average-rater", "mean-rater")


def check_quality(quality, allowed) -> str:
    """``quality`` if it is one of ``allowed`` (a subset of :data:`QUALITY_ESTIMATES`), else an
    :class:`~ratercal_cli.errors.ArgumentError` (a ValueError) naming ``quality``, as the README says bad
    arguments are (it was a bare ValueError)."""
    if quality not in allowed:
        from ..errors import ArgumentError

        raise ArgumentError("quality", f"must be {' or '.join(repr(q) for q in allowed)}, not {quality!r}")
    return quality


def estimate_quality(paper, rater, score, n_papers, tau, quality="wle", bound=None, tol=1e-10,
                     max_iter=200, with_se=True):
    """Quality of every paper by WLE (``quality="wle"``, Warm 1989) or MLE (``"mle"``).

    paper, rater, score : per-rating int arrays; tau : (J, K) cumulative parameters.
    Ratings by raters with no finite category are ignored; scores are clipped into the
    rater's range of categories (only papers already at the extreme are affected).
    ``bound``: search ``[-bound, bound]`` only; a paper whose equation has no root inside
    (MLE: every extreme total) gets the bound on the side its likelihood rises (the
    corrected PCM).  Without it the bracket is ``+-(largest |step| + 40)`` and MLE gives
    ``+-inf`` for extreme totals.  Batched use: number the papers and raters of all data
    sets globally (``tau`` stacked) and pass ``bound``: each paper is solved as alone.
    Returns ``(theta, se, extreme)``: ``theta`` is nan for papers with no usable rating
    (0 with ``bound``); ``extreme`` is -1/+1 for papers at the lowest or highest total
    their raters could give, 0 otherwise; ``se`` is None with ``with_se=False`` (one pass
    over the ratings fewer).
    """
    mle = check_quality(quality, ("wle", "mle")) == "mle"
    tau = np.asarray(tau, dtype=np.float64)
    t = _Totals(np.asarray(paper, dtype=np.int64), np.asarray(rater, dtype=np.int64), score, n_papers, tau)
    if bound is None:
        finite_steps = np.diff(np.where(np.isfinite(tau), tau, np.nan), axis=1)
        span = np.nanmax(np.abs(finite_steps)) if np.isfinite(finite_steps).any() else 0.0
        half = span + 40.0
    else:
        half = float(bound)
    lo_b = np.full(n_papers, -half)
    hi_b = np.full(n_papers, half)
    theta = t.start(half)
    f_and_df = t.estimating_function(mle)
    active = t.rated.copy()
    if bound is not None:
        # no root inside [-bound, bound]: the bound where the likelihood rises
        top = t.rated & (t.extreme > 0) & mle
        bottom = t.rated & (t.extreme < 0) & mle
        if not (top | bottom)[t.rated].all():
            F_hi, _, _ = f_and_df(hi_b)
            F_lo, _, _ = f_and_df(lo_b)
            top |= t.rated & (F_hi >= 0)
            bottom |= t.rated & ~top & (F_lo <= 0)
        theta[top], theta[bottom] = half, -half
        active &= ~(top | bottom)
    elif mle:
        active &= t.extreme == 0
    theta = _solve(f_and_df, theta, active, lo_b, hi_b, t.paper, tol, max_iter)
    se = None
    if with_se:
        _, _, info = f_and_df(theta)
        se = 1.0 / np.sqrt(np.maximum(info, 1e-300))
    if mle and bound is None:
        theta = np.where(t.extreme < 0, -np.inf, np.where(t.extreme > 0, np.inf, theta))
        se = None if se is None else np.where(t.extreme != 0, np.inf, se)
    theta = np.where(t.rated, theta, np.nan if bound is None else 0.0)
    return theta, None if se is None else np.where(t.rated, se, np.nan), t.extreme


def quality_by_pattern(patterns, n_papers, tau, quality="wle", **kw):
    """:func:`estimate_quality` of every paper, solved once for each pattern of ratings (a paper's
    quality depends on nothing else): ``patterns`` is ``(papers, pattern of each, (pattern, rater,
    score) of the patterns' ratings)``, :func:`.mml_engine.rating_patterns`' (then the same to the bit as solved
    per paper) or :attr:`.mml.MMLFit.patterns``; ``kw``: :func:`estimate_quality`'s ``bound``, ``tol``,
    ``max_iter``, ``with_se``.  Returns ``(theta, se, extreme)`` per paper (``se`` None without it); papers
    without ratings nan (with a ``bound``, 0, as :func:`estimate_quality` gives them), nan and 0."""
    papers, pattern, (pat, rater, score) = patterns
    res = estimate_quality(pat, rater, score, int(pattern.max(initial=-1)) + 1, tau, quality=quality, **kw)
    unrated = np.nan if kw.get("bound") is None else 0.0
    out = (np.full(n_papers, unrated), None if res[1] is None else np.full(n_papers, np.nan),
           np.zeros(n_papers, dtype=res[2].dtype))
    for o, x in zip(out, res):
        if o is not None:
            o[papers] = x[pattern]
    return out


def extreme_papers(paper, rater, score, n_papers, tau) -> np.ndarray:
    """-1/0/+1 per paper: at the lowest or highest total its raters could give (their categories of ``tau``),
    as :func:`estimate_quality` finds them, without solving for any quality (a report of the marginal model
    reads its measures at the EAP, and only asks which papers are extreme: the WLE of every paper was 2-4 s of
    ``check`` at 1M ratings)."""
    return _Totals(np.asarray(paper, dtype=np.int64), np.asarray(rater, dtype=np.int64), score, n_papers,
                   np.asarray(tau, dtype=np.float64)).extreme


class _Totals:
    """The papers' totals of :func:`estimate_quality`: the usable ratings (raters with a finite
    category, scores clipped into the rater's range), each paper's count ``n``, total ``r``,
    lowest and highest possible totals, ``extreme`` (-1/0/+1) and ``rated``."""

    def __init__(self, paper, rater, score, n_papers, tau):
        lo, hi = score_range(tau)
        usable = np.isfinite(tau).any(axis=1)[rater]
        self.paper, self.rater = paper[usable], rater[usable]
        rater = self.rater
        self.score = score = np.clip(np.asarray(score, dtype=np.int64)[usable], lo[rater], hi[rater])
        self.tau_r = tau[rater]  # (n, K)
        self.n_papers = n_papers
        self.n = np.bincount(self.paper, minlength=n_papers)
        self.r = np.bincount(self.paper, weights=score, minlength=n_papers)
        self.rmin = np.bincount(self.paper, weights=lo[rater], minlength=n_papers)
        self.rmax = np.bincount(self.paper, weights=hi[rater], minlength=n_papers)
        extreme = np.where(self.r <= self.rmin, -1, np.where(self.r >= self.rmax, 1, 0))
        self.rated = self.n > 0
        extreme[~self.rated] = 0
        self.extreme = extreme

    def start(self, half):
        """The logit of each paper's position within its possible totals, in units of the raters'
        average step spacing (cuts the iterations about in half against theta = 0)."""
        n, r, rmin, rmax = self.n, self.r, self.rmin, self.rmax
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = (r - rmin + 0.5) / (rmax - rmin + 1.0)
            spread = np.where(n > 0, (rmax - rmin) / np.maximum(n, 1), 1.0)
            theta = np.where(self.rated, np.log(frac / (1 - frac)) * np.maximum(spread, 1.0) / 2.0, 0.0)
        return np.clip(np.nan_to_num(theta), -half / 2, half / 2)

    def estimating_function(self, mle):
        """``f_and_df(theta, sel=None)``: the estimating function F (decreasing in theta), dF and the
        information, per paper (only the papers with ratings in ``sel`` are computed; the others
        are 0); ML's score equation, or Warm's with the bias term ``J3 / (2 I)``."""
        paper, tau_r, r, n_papers = self.paper, self.tau_r, self.r, self.n_papers

        def f_and_df(th, sel=None):
            pp, tr = (paper, tau_r) if sel is None else (paper[sel], tau_r[sel])
            p = category_probabilities(th[pp], tr)
            if mle:
                m, v = moments(p, order=2)
                info = np.bincount(pp, weights=v, minlength=n_papers)
                return r - np.bincount(pp, weights=m, minlength=n_papers), -info, info
            m, v, m3, m4 = moments(p)
            E = np.bincount(pp, weights=m, minlength=n_papers)
            info = np.bincount(pp, weights=v, minlength=n_papers)
            J3 = np.bincount(pp, weights=m3, minlength=n_papers)
            K4 = np.bincount(pp, weights=m4 - 3.0 * v * v, minlength=n_papers)
            safe = np.maximum(info, 1e-100)
            F = r - E + J3 / (2.0 * safe)
            dF = -info + (K4 * safe - J3 * J3) / (2.0 * safe * safe)
            return F, dF, info

        return f_and_df


def _solve(f_and_df, theta, active, lo_b, hi_b, paper, tol, max_iter):
    """The root of each active paper's estimating function, safeguarded Newton: a Newton step where
    it stays in the bracket ``[lo_b, hi_b]`` and the last step at least halved ``|F|``, else
    bisection (Newton alone can cycle between two points far from the root)."""
    n_papers = theta.size
    f_prev = np.full(n_papers, np.inf)
    for _ in range(max_iter):
        if not active.any():
            break
        F, dF, _info = f_and_df(theta, active[paper])
        done = ~active | (np.abs(F) < tol)
        # F decreases in theta: keep the root inside [lo_b, hi_b]
        lo_b = np.where(active & (F > 0), theta, lo_b)
        hi_b = np.where(active & (F < 0), theta, hi_b)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = theta - F / dF
        ok = (dF < 0) & (newton > lo_b) & (newton < hi_b) & (np.abs(F) <= 0.5 * f_prev)
        f_prev = np.abs(F)
        nxt = np.where(ok, newton, 0.5 * (lo_b + hi_b))
        stop = done | (hi_b - lo_b < tol)
        theta = np.where(stop, theta, nxt)
        active &= ~stop
    return theta


#: :func:`eap_normal`: the grid's spacing (logits) and how far it reaches past the papers' WLEs
EAP_STEP = 0.1
EAP_REACH = 4.0


def eap_normal(paper, rater, score, n_papers, tau, start, tol=1e-9, max_iter=500):
    """EAP quality of every paper under a normal distribution of quality fitted to the papers by
    marginal maximum likelihood, the raters' parameters ``tau`` (J, K) held fixed: the posterior
    mean a marginal fit (:mod:`.mml`) reports, for a method whose rater parameters come from a
    fit without a distribution of quality (the corrected PCM's PAIR steps).

    ``N(mu, sigma^2)`` is fitted by EM (Bock & Aitkin 1981): each paper's posterior on a fixed
    grid of qualities (spacing EAP_STEP: the trapezoidal rule's error ``exp(-2 pi^2 (sd / h)^2)``
    is below 1e-70 for a posterior sd over 0.3 logits), then ``mu`` = the mean of the papers'
    posterior means, ``sigma^2`` = the mean of their posterior second moments about ``mu``,
    until neither moves by ``tol``.  ``start`` (one per paper, e.g. the WLE) gives the first
    ``mu, sigma`` and the grid's reach: EAP_REACH logits past the lowest and highest start and
    7 sd past their mean.  Ratings as :func:`estimate_quality` takes them (scores clipped into
    the rater's categories; a score in a category the rater cannot give, in a gap of its range,
    left out).  Returns ``(eap, sd, mu, sigma)``; papers without ratings nan.
    """
    tau = np.asarray(tau, dtype=np.float64)
    t = _Totals(np.asarray(paper, dtype=np.int64), np.asarray(rater, dtype=np.int64), score, n_papers, tau)
    rated = t.rated
    eap = np.full(n_papers, np.nan)
    sd = np.full(n_papers, np.nan)
    start = np.asarray(start, dtype=np.float64)[rated]
    if not start.size:
        return eap, sd, np.nan, np.nan
    mu, sigma = float(start.mean()), float(max(start.std(), 0.1))
    lo = min(start.min() - EAP_REACH, mu - 7 * sigma)
    hi = max(start.max() + EAP_REACH, mu + 7 * sigma)
    grid = lo + EAP_STEP * np.arange(int(np.ceil((hi - lo) / EAP_STEP)) + 1)
    # log-likelihood of every paper at every grid point: a sum over its ratings, in rating order
    Q = grid.size
    with np.errstate(divide="ignore"):   # a category a rater cannot give: log 0, never looked up
        logp = np.log(category_probabilities(grid[:, None], tau))                              # (Q, J, K)
        # a category the rater can give whose probability underflows to 0 far from its steps (a CML
        # step limited to a large value): its log from the log-sum-exp, so that no paper has a
        # likelihood of 0 at every grid point (its posterior would be nan); a value that small
        # leaves every other paper's sums as they are
        lost = np.isneginf(logp) & np.isfinite(tau)[None]
        if lost.any():
            eta = np.arange(tau.shape[1]) * grid[:, None, None] - tau[None]
            top = eta.max(axis=-1, keepdims=True)
            exact = eta - top - np.log(np.exp(eta - top).sum(axis=-1, keepdims=True))
            logp[lost] = exact[lost]
    lp = logp[:, t.rater, t.score]                                                             # (Q, ratings)
    # a score in a category inside the rater's range that the rater cannot give (a CML step that
    # cannot be estimated leaves a gap): no likelihood at any quality; it informs nothing here, as a
    # rater with no category at all informs nothing in estimate_quality
    lp[:, ~np.isfinite(tau[t.rater, t.score])] = 0.0
    key = (np.arange(Q)[:, None] * n_papers + t.paper[None, :]).ravel()
    ll = np.bincount(key, weights=lp.ravel(), minlength=Q * n_papers).reshape(Q, n_papers)[:, rated].T
    like = np.exp(ll - ll.max(axis=1, keepdims=True))                      # (papers, Q)
    for _ in range(max_iter):
        post = like * np.exp(-0.5 * ((grid - mu) / sigma) ** 2)
        post /= post.sum(axis=1, keepdims=True)
        m = post @ grid
        new_mu = float(m.mean())
        # the variance can round below 0 when the posteriors pile on one node; sqrt would give nan
        # and max(nan, 1e-3) keeps the nan, making every EAP nan; compared at the floor, so a fit at
        # the floor stops instead of running to max_iter
        variance = (post @ (grid * grid)).mean() - 2 * new_mu * m.mean() + new_mu * new_mu
        new_sigma = max(float(np.sqrt(max(variance, 0.0))), 1e-3)
        done = abs(new_mu - mu) < tol and abs(new_sigma - sigma) < tol
        mu, sigma = new_mu, new_sigma
        if done:
            break
    post = like * np.exp(-0.5 * ((grid - mu) / sigma) ** 2)
    post /= post.sum(axis=1, keepdims=True)
    m = post @ grid
    eap[rated] = m
    sd[rated] = np.sqrt(np.maximum(post @ (grid * grid) - m * m, 0.0))
    return eap, sd, mu, sigma
