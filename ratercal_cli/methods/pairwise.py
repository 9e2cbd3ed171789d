"""De Gruijter's (1984) pairwise methods: OLS, TLS (truncated OLS) and RAS (Rasch extension).

Both fit rater parameters from *teams*: the pairs of raters who scored the same
papers (OLS.BAS, RASCHEXT.BAS, dissertation Appendix A pp. 118-125).  Per team
(lower rater number ``l`` first, higher ``h``) with ``N`` shared papers:

* OLS: ``d = mean(s_l - s_h)``, the additive model ``s = a_paper + theta_rater + e``
  gives ``d = theta_l - theta_h`` (theta = leniency).
* RAS: ``d = ln(sum s_h (M - s_l) / sum s_l (M - s_h))`` (0 when either sum is 0).
  Under the Rasch extension ``E s = M exp(beta - b) / (1 + exp(beta - b))``
  (Choppin 1982; dissertation p. 15) each paper's ratio
  ``E s_h (M - s_l) / E s_l (M - s_h)`` equals ``exp(b_l - b_h)``, so ``d = b_l - b_h``
  (b = stringency).

The parameters solve the weighted least squares ``(A'NA) theta = A'N d`` with
``N = diag(team sizes)`` and a sum-to-zero constraint.

variant="faithful" (what the listings compute)
    The design row puts **+1 for both raters** of a team; the last rater (BASIC
    rater 9, index ``n_raters - 1``) is eliminated through ``theta_9 = -sum theta_1..8``
    by adding -1 to every column.  ``A'NA`` is inverted by the listing's Gauss-Jordan
    routine, all in single precision.  OLS ``adj = s + theta_r`` (``adj = s + Theta(r, 1)``),
    TLS clips it to [0, M], RAS ``adj = e^b s / (1 - s/M (1 - e^b))``.
variant="corrected"
    Rows +1 / -1 (``theta_l - theta_h = d``), sum-to-zero over the raters that have
    ratings, any number of raters; raters not linked to the others raise
    :class:`MethodError`.  OLS ``adj = s - theta_r`` (clipped for TLS).  RAS keeps the
    listed adjustment, which with +1/-1 rows maps a score of rater r to the expected
    score of an average rater (b = 0) for the same paper: ``b`` is then the
    stringency, so the formula's ``+b`` has the right sign.  A RAS team with a zero
    sum (ratio 0/x or x/0, no finite estimate) gets 1/2 added to both sums
    (Haldane-Anscombe) instead of the listing's ``d = 0``.
"""

from __future__ import annotations

import numpy as np

from ..errors import MethodError
from ..network import rating_pairs, require_connected
from ..ratings import Ratings
from ..vocabulary import DEFAULT_VARIANT
from ._single import sums_by
from .base import RaterAdjuster, clip_to_scale

F32 = np.float32
#: Corrected RAS: added to both sums of a team when either is 0 (Haldane-Anscombe).
ZERO_CORRECTION = 0.5


# -- single-precision pieces of OLS.BAS / RASCHEXT.BAS ------------------------------

def _single(x):
    """Round (a float64 computation) to a single, as a BASIC assignment does."""
    return np.asarray(x, dtype=np.float64).astype(F32)


def faithful_design(low, high, n_raters):
    """The listings' design matrix ``a(K, nj - 1)`` (OLS.BAS, "FOR i = 1 TO K").

    ``IF t(i) < nj THEN a(i, t(i)) = a(i, t(i)) + 1 ELSE FOR j = 1 TO nj1: a(i, j) = a(i, j) - 1``
    for both ``t1`` and ``t2``: +1 for each rater of the team, -1 in every column for
    the last rater.  ``low``, ``high`` are 0-based rater indices.
    """
    k, njl = low.size, n_raters - 1
    a = np.zeros((k, njl), dtype=np.float64)
    rows = np.arange(k)
    for t in (low, high):
        own = t < njl
        np.add.at(a, (rows[own], t[own]), 1.0)
        a[~own] -= 1.0
    return a


def gauss_jordan_single(x):
    """SUB inverse of OLS.BAS: Gauss-Jordan in singles, swapping rows only on a zero pivot, of a
    matrix ``(n, n)`` or each matrix of a stack ``(..., n, n)``.

    Returns ``(inverse, inverted)``: ``inverted`` is False where the BASIC prints "no inverse
    exists" (that matrix's ``inverse`` is meaningless)."""
    a = _single(x)
    n = a.shape[-1]
    lead = a.shape[:-2]
    a = a.reshape((-1, n, n))
    b = np.broadcast_to(np.eye(n, dtype=F32), a.shape).copy()
    ok = np.ones(a.shape[0], dtype=bool)
    for row in range(n):
        for i in np.flatnonzero(ok & (a[:, row, row] == 0)):
            below = np.flatnonzero(a[i, row + 1:, row] != 0)
            if below.size == 0:
                ok[i] = False
                continue
            row2 = row + 1 + below[0]
            a[i, [row, row2]] = a[i, [row2, row]]
            b[i, [row, row2]] = b[i, [row2, row]]
        d = np.where(ok, a[:, row, row], F32(1))[:, None]
        a[:, row] = a[:, row] / d
        b[:, row] = b[:, row] / d
        m = a[:, :, row].astype(np.float64)
        m[:, row] = 0.0
        a = _single(a - m[:, :, None] * a[:, row, None, :].astype(np.float64))
        b = _single(b - m[:, :, None] * b[:, row, None, :].astype(np.float64))
    return b.reshape(lead + (n, n)), ok.reshape(lead)


def gauss_jordan_inverse_single(x):
    """:func:`gauss_jordan_single` of one matrix; raises :class:`MethodError` where the BASIC
    prints "no inverse exists"."""
    inv, ok = gauss_jordan_single(x)
    if not ok:
        raise MethodError("no inverse exists")
    return inv


def _matvec_single(mat, vec):
    """SUB matmult for a vector: ``C(i) = C(i) + a(i, K) * b(K)``, K in order, stored as single
    (a matrix and a vector, or stacks of them)."""
    acc = np.zeros(mat.shape[:-1], dtype=F32)
    vec = vec.astype(np.float64)
    for k in range(mat.shape[-1]):
        acc = _single(acc + mat[..., :, k].astype(np.float64) * vec[..., k, None])
    return acc


def faithful_solve(a, n, d):
    """OLS.BAS's ``Theta = (A'NA)^-1 A'N d`` and ``Theta(nj) = -sum Theta(1..nj-1)`` in singles,
    for one design ``a`` ``(K, nj - 1)`` (:func:`faithful_design`) with team sizes ``n`` and
    statistics ``d`` ``(K,)``, or a stack of them (``(B, K, nj - 1)``, ``(B, K)``; teams of
    size 0 add nothing).  Returns ``(theta (..., nj), full_rank, inverted)``: where either
    is False the listing stops and ``theta`` is meaningless."""
    ata = np.einsum("...tj,...t,...tk->...jk", a, n.astype(np.float64), a)  # small integers: exact
    full_rank = np.linalg.matrix_rank(ata) == a.shape[-1]
    nd = _single(n * np.asarray(d, dtype=F32).astype(np.float64))
    atnd = np.cumsum(a * nd[..., None], axis=-2, dtype=F32)[..., -1, :]  # A'Nd, summed in order, singles
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # singular systems: not used
        inv, inverted = gauss_jordan_single(ata)
        theta = _matvec_single(inv, atnd)
    last = np.cumsum(-theta, axis=-1, dtype=F32)[..., -1]
    return np.concatenate([theta, last[..., None]], axis=-1).astype(np.float64), full_rank, inverted


def normal_equations(low, high, n, d, n_raters):
    """The corrected least squares' ``L = A'NA`` (+1/-1 rows: a weighted graph Laplacian) and
    ``A'N d`` of the teams ``(low, high)`` with sizes ``n`` and statistics ``d``, of one design
    ``(K,)`` or a stack ``(B, K)``: ``(L (..., nr, nr), rhs (..., nr))``."""
    nr = n_raters
    nn = nr * nr
    from ..config import require_memory

    require_memory(5 * 8.0 * nn * max(int(np.prod(np.shape(low)[:-1])), 1),
                   f"the least squares' equations of {nr:,} raters ({nr:,} x {nr:,})",
                   "the methods that move each rater's scores alone (NO, MN, TMN, LI, TLI, EQP) do without them")
    w = n.astype(np.float64)
    wd = w * np.asarray(d, dtype=np.float64)
    lap = (sums_by(low * nr + low, nn, w) + sums_by(high * nr + high, nn, w)
           - sums_by(low * nr + high, nn, w) - sums_by(high * nr + low, nn, w))
    rhs = sums_by(low, nr, wd) - sums_by(high, nr, wd)
    return lap.reshape(lap.shape[:-1] + (nr, nr)), rhs


def solve_sum_zero(lap, rhs, active):
    """``(L + 11') theta = A'Nd`` over the raters with ratings (``active``), 0 for the others: since
    ``1'A'Nd = 0`` its solution has sum 0 and solves ``L theta = A'Nd``.  One system or a stack
    (the systems with the same active raters solved by one stacked LAPACK call)."""
    nr = lap.shape[-1]
    lead = lap.shape[:-2]
    lap, rhs, active = lap.reshape(-1, nr, nr), rhs.reshape(-1, nr), active.reshape(-1, nr)
    params = np.zeros(rhs.shape)
    patterns = {}
    for b in range(active.shape[0]):
        patterns.setdefault(active[b].tobytes(), []).append(b)
    for rows in patterns.values():
        rows = np.array(rows)
        idx = np.flatnonzero(active[rows[0]])
        A = lap[rows][:, idx][:, :, idx] + 1.0
        params[rows[:, None], idx[None, :]] = np.linalg.solve(A, rhs[rows][:, idx, None])[:, :, 0]
    return params.reshape(lead + (nr,))


# -- the estimators ------------------------------------------------------------------

class _PairwiseDesign(RaterAdjuster):
    """Shared fit: teams, team statistics ``d``, weights ``N``, and the solve.

    Fitted attributes
    -----------------
    teams_ : (K, 2) int, rater indices (lower first) of each team, in order of first appearance.
    team_n_ : (K,) int, papers per team (the weights N).
    team_d_ : (K,) float, the team statistic d.
    params_ : (n_raters,) float, the rater parameters (``theta_`` / ``b_`` alias them).
    fitted_ : (n_raters,) bool, raters that have a parameter.
    """

    needs_multiple_raters = True

    def _team_statistic(self, s_low, s_high, team, n_teams, max_score):
        """Return the team statistic ``d`` (one value per team)."""
        raise NotImplementedError  # pragma: no cover

    def _fit(self, ratings: Ratings) -> None:
        first, second = rating_pairs(ratings)
        low, high = ratings.rater[first], ratings.rater[second]
        if self.variant == "corrected":  # a rater paired with themself says nothing
            keep = low != high
            first, second, low, high = first[keep], second[keep], low[keep], high[keep]
        if first.size == 0:
            raise MethodError(f"{self.code}: no paper is scored by two different raters")
        nr = ratings.n_raters
        keys, first_at, inverse = np.unique(low * nr + high, return_index=True, return_inverse=True)
        rank = np.empty(keys.size, dtype=np.int64)
        rank[np.argsort(first_at, kind="stable")] = np.arange(keys.size)
        team = rank[inverse.ravel()]
        key = np.empty(keys.size, dtype=np.int64)
        key[rank] = keys
        t_low, t_high = key // nr, key % nr
        n = np.bincount(team, minlength=keys.size)
        d = self._team_statistic(
            ratings.score[first], ratings.score[second], team, keys.size, ratings.max_score)
        self.teams_ = np.column_stack([t_low, t_high])
        self.team_n_ = n
        self.team_d_ = np.asarray(d, dtype=np.float64)
        if self.variant == "faithful":
            params = self._solve_faithful(t_low, t_high, n, d, ratings)
            fitted = np.ones(nr, dtype=bool)
        else:
            params, fitted = self._solve_corrected(t_low, t_high, n, d, ratings)
        self.params_ = params
        self.fitted_ = fitted

    def _solve_faithful(self, low, high, n, d, ratings):
        """``Theta = (A'NA)^-1 A'N d`` as OLS.BAS computes it; ``Theta(nj) = -sum Theta(1..nj-1)``."""
        nj = ratings.n_raters
        if nj < 2:
            raise MethodError(f"{self.code} (faithful) needs at least two raters")
        a = faithful_design(low, high, nj)
        theta, full_rank, inverted = faithful_solve(a, n, d)
        if not full_rank:
            empty = np.flatnonzero(~a.any(axis=0))
            why = (f" (its column for rater(s) {', '.join(str(ratings.rater_ids[i]) for i in empty)} is all 0)"
                   if empty.size else "")
            raise MethodError(
                f"{self.code} (faithful): the listing's design matrix (+1 for both raters of a pair) "
                f"is singular for these data{why}; use variant='corrected'")
        if not inverted:
            raise MethodError(f"{self.code} (faithful): no inverse exists for A'NA; "
                              "use variant='corrected'")
        return theta

    def _solve_corrected(self, low, high, n, d, ratings):
        """Minimise ``sum N (d - (theta_l - theta_h))^2`` with ``sum theta = 0`` over raters with ratings."""
        require_connected(ratings, self.code, links=(low, high))
        lap, rhs = normal_equations(low, high, n, d, ratings.n_raters)
        active = np.bincount(ratings.rater, minlength=ratings.n_raters) > 0
        return solve_sum_zero(lap, rhs, active), active

    def _fitted_params(self, ratings):
        """Each rating's rater parameter (the base class refused unknown raters)."""
        return self.params_[ratings.rater]


class PairwiseLeastSquares(_PairwiseDesign):
    """OLS / TLS (OLS.BAS): additive rater effects from pairwise mean differences.

    ``d = mean(s_low - s_high)``; faithful ``adj = s + theta_r``, corrected
    ``adj = s - theta_r``; ``truncate=True`` (TLS) clips to [0, M].
    ``theta_`` is the rater effect (corrected: leniency, sum zero over raters).
    """

    def __init__(self, variant: str = DEFAULT_VARIANT, truncate: bool = False):
        self.variant = variant
        self.truncate = truncate

    @property
    def code(self):
        return "TLS" if self.truncate else "OLS"

    @property
    def theta_(self):
        return self.params_

    def _team_statistic(self, s_low, s_high, team, n_teams, max_score):
        """``d = mean(s_low - s_high)`` per team (``team`` of each pair ``(P,)``, or a stack ``(B, P)``)."""
        diff = sums_by(team, n_teams, s_low - s_high)
        n = sums_by(team, n_teams)
        if self.variant == "faithful":  # d(i, 1) = d(i, 1) / N(i, i), singles
            return _single(diff) / n.astype(F32)
        return diff / n

    def _adjust_ratings(self, ratings: Ratings) -> np.ndarray:
        return self._adjust_arrays(self._fitted_params(ratings), ratings.score, ratings.max_score)

    def _adjust_arrays(self, theta, score, max_score):
        """Adjusted ratings from each rating's rater parameter ``theta`` (any shape)."""
        if self.variant == "faithful":  # adj = s + Theta(r, 1)
            adj = (score.astype(F32) + theta.astype(F32)).astype(np.float64)
        else:
            adj = score - theta
        return clip_to_scale(adj, max_score) if self.truncate else adj


class RaschExtension(_PairwiseDesign):
    """RAS (RASCHEXT.BAS): Rasch-extension rater parameters from pairwise log ratios.

    ``d = ln(sum s_high (M - s_low) / sum s_low (M - s_high))`` (0 when a sum is 0);
    ``adj = e^b s / (1 - s/M (1 - e^b))``.  ``b_`` is the rater parameter (corrected:
    stringency, sum zero over raters).
    """

    code = "RAS"

    def __init__(self, variant: str = DEFAULT_VARIANT):
        self.variant = variant

    @property
    def b_(self):
        return self.params_

    def _team_statistic(self, s_low, s_high, team, n_teams, max_score):
        """``d`` per team (``team`` of each pair ``(P,)``, or a stack ``(B, P)``)."""
        m = max_score
        num = sums_by(team, n_teams, s_high * (m - s_low))
        den = sums_by(team, n_teams, s_low * (m - s_high))
        finite = (num > 0) & (den > 0)
        if self.variant == "faithful":  # IF num(i) = 0 OR den(i) = 0 THEN d(i, 1) = 0 ELSE LOG(num / den)
            ratio = np.where(finite, num, 1.0) / np.where(finite, den, 1.0)
            return _single(np.where(finite, np.log(ratio), 0.0))
        # corrected: a zero sum makes the ratio 0 or infinite; add 1/2 to both sums of
        # such a team (Haldane-Anscombe), keeping its direction and the team's links
        num = np.where(finite, num, num + ZERO_CORRECTION)
        den = np.where(finite, den, den + ZERO_CORRECTION)
        return np.log(num / den)

    def _adjust_ratings(self, ratings: Ratings) -> np.ndarray:
        return self._adjust_arrays(self._fitted_params(ratings), ratings.score, ratings.max_score)

    def _adjust_arrays(self, b, score, max_score):
        """Adjusted ratings from each rating's rater parameter ``b`` (any shape)."""
        s = score.astype(np.float64)
        m = float(max_score)
        if self.variant == "faithful":
            e = _single(np.exp(b.astype(F32).astype(np.float64))).astype(np.float64)
            return _single(e * s / (1 - s / m * (1 - e))).astype(np.float64)
        e = np.exp(b)
        return e * s / (1 - s / m * (1 - e))
