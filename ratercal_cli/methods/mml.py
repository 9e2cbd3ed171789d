"""Marginal maximum likelihood (MML) for the partial credit and rating scale models of raters,
and their many-facet form (Linacre's MFRM), with a normal distribution of paper quality.

Rating ``i`` of paper ``p`` by rater ``j`` (in level ``f`` of an optional further facet, e.g.
the task or domain) is ``x`` in 0..M with, for the "item" ``u = (j, f)``,

    P(x | theta_p) = exp(x theta_p - tau[u, x]) / sum_h exp(h theta_p - tau[u, h])
    PCM  (``model="pcm"``, rater-specific thresholds, Masters 1982):
         tau[u, x] = sum_{k<=x} delta[j, k] + x gamma[f]
    RSM  (``model="rsm"``, shared thresholds + rater severity, Andrich 1978; Linacre 1989):
         tau[u, x] = x (beta[j] + gamma[f]) + sum_{k<=x} kappa[k]

with ``theta_p ~ N(0, sigma^2)`` (sigma estimated), ``sum gamma = 0`` and ``sum kappa = 0``.
The marginal log-likelihood (Bock & Aitkin 1981)

    log L = sum_p log  integral  prod_{i in p} P(x_i | theta) N(theta; 0, sigma^2) d theta

is computed by Gauss-Hermite quadrature, by default adaptive (Schilling & Bock 2005: each
paper's nodes at its posterior mean, spread by its posterior sd: 21 nodes integrate a paper
with a near-normal posterior to 1e-9, where fixed nodes ``N(0, sigma^2)`` (``adaptive=False``)
need hundreds).  The hard case is a paper at the top (bottom) of a wide scale: its posterior
is the normal tail cut sharply by the likelihood, integrated by 21 nodes to about 1e-3 in
log L (61: 1e-5); on 100-paper 0-9 sets this moves such papers' EAP by up to a few hundredths
against 61 nodes (``n_nodes``).

log L is maximised by Newton-Raphson with the analytic gradient (Fisher's identity) and the
observed information of Louis (1982), every step halved until log L rises; where that
information is not positive definite (far from the maximum) the step is Bock and Aitkin's EM
step instead (E step: each paper's posterior weights at the nodes; M step: one Newton step on
the expected complete-data log-likelihood, Lange's 1995 EM gradient).  The nodes follow the
posteriors between iterations.  From a start of sigma = 2 this takes 7-25 iterations; where
21 nodes integrate too roughly for Newton's method to settle (a few percent of 100-paper 0-9
sets, with large sigma and many top or bottom papers), the fit goes on with 61 nodes after 40.

Weak priors keep every estimate finite whatever the data (penalised ML; they move estimable
parameters by a small fraction of their SE: 0.05 logits, 0.07 SE, for a step into a category
given 3 times in the 150-paper reference set, far less with more data): the difference of
adjacent thresholds ``delta[j, k+1] - delta[j, k]`` (RSM: ``kappa[k+1] - kappa[k]``) ~ N(0, 5^2),
rater severities and facet effects ~ N(0, 10^2).  A category a rater never used (RSM: no rater
used) has thresholds resting on that prior; the fit says so in ``warnings_``.  A PCM rater's
severity is the mean of its steps between the lowest and highest category it gave
(``(tau[hi] - tau[lo]) / (hi - lo)``; CML and Facets drop unused end categories too), so it
does not move with prior-borne steps.

Reported on Facets' scale: raters centred (mean severity 0), the paper distribution's mean
moved accordingly (``theta_mean_``).  Model standard errors are from the inverse observed
information (Louis) of the penalised marginal log-likelihood, by the delta method for the
centred quantities.  Papers: EAP (posterior mean, posterior sd) and Warm's WLE
(:func:`.quality.estimate_quality`, with SE ``1/sqrt(I)``).

Checked (tests/methods/test_mml.py): estimates, log L and SEs against an independent fit in R
(``integrate`` + ``optim`` + ``optimHess``, tests/results/make_mml_reference.R) to 1e-5; log L
against ``scipy.integrate.quad``; the Louis Hessian against a numerical one; recovery of
simulated parameters; steps within 0.02 logits (RMS) of CML (:mod:`.cml`) on a complete design.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.sparse import csr_matrix

from ..errors import MethodError
from ..ratings import Adjusted, Ratings
from .base import RaterAdjuster, fair_score_adjusted
from .quality import (category_probabilities, estimate_quality, expected_score, log_category_probabilities,
                      mean_expected_score, moments)

__all__ = ["MMLFit", "fit_mml", "marginal_loglik", "MarginalRaterModel", "PRIOR_STEP_SD", "PRIOR_LOCATION_SD"]

#: sd of the weak normal prior on the difference of adjacent thresholds (logits)
PRIOR_STEP_SD = 5.0
#: sd of the weak normal prior on rater severities and facet effects (logits)
PRIOR_LOCATION_SD = 10.0

#: the largest change of a parameter in one iteration (logits)
MAX_STEP = 8.0
#: iterations with ``n_nodes`` nodes before going on with ESCALATE_NODES (adaptive quadrature only)
ESCALATE_AFTER = 40
ESCALATE_NODES = 61
#: the start of sigma
SIGMA0 = 2.0
_LOG2PI = np.log(2.0 * np.pi)
_SQ2 = np.sqrt(2.0)
_TRACE = None  # a list to which fit_mml appends (iteration, newton, log L, decrement, node shift, sigma)


# ---------------------------------------------------------------------------------------
# the marginal likelihood at given quadrature nodes
# ---------------------------------------------------------------------------------------
@dataclass
class _Eval:
    ll: float
    w: np.ndarray            # (N, Q) posterior weights
    theta: np.ndarray        # (N, Q) nodes
    g_tau: np.ndarray = None  # (U, M)
    g_ls: float = 0.0
    H: np.ndarray = None     # (U*M+1, U*M+1) Louis Hessian of log L in (tau, log sigma)
    H_em: np.ndarray = None  # the complete-data (EM) Hessian


class _Engine:
    """Ratings sorted by paper; log L, gradient and Hessian in (tau[u, 1..M], log sigma)."""

    def __init__(self, paper, item, score, n_items, K, n_nodes=11):
        paper = np.asarray(paper, dtype=np.int64)
        order = np.argsort(paper, kind="stable")
        self.order = order
        paper = paper[order]
        self.item = np.asarray(item, dtype=np.int64)[order]
        self.x = np.asarray(score, dtype=np.int64)[order]
        self.papers, self.p = np.unique(paper, return_inverse=True)  # used papers, compact index
        self.p = self.p.ravel()
        n = self.x.size
        self.n, self.N, self.U, self.K, self.M = n, self.papers.size, n_items, K, K - 1
        self.starts = np.flatnonzero(np.r_[True, self.p[1:] != self.p[:-1]])
        self.ar = np.arange(n)
        self.Eu = csr_matrix((np.ones(n), (self.item, self.ar)), shape=(n_items, n))
        a, b = [], []
        idx = np.arange(n)
        for d in range(1, int(np.bincount(self.p).max()) if n else 1):
            same = self.p[:-d] == self.p[d:]
            a.append(idx[:-d][same])
            b.append(idx[d:][same])
        self.a = np.concatenate(a) if a else np.zeros(0, np.int64)
        self.b = np.concatenate(b) if b else np.zeros(0, np.int64)
        key = self.item[self.a] * n_items + self.item[self.b]
        self.Ep = csr_matrix((np.ones(self.a.size), (key, np.arange(self.a.size))), shape=(n_items ** 2, self.a.size))
        t, w = np.polynomial.hermite.hermgauss(n_nodes)
        self.t, self.logw = t, np.log(w) + t * t  # physicists' Gauss-Hermite, e^{t^2} folded in

    def nodes(self, mu, s):
        return mu[:, None] + (s * _SQ2)[:, None] * self.t[None, :]

    def evaluate(self, tau, log_sigma, mu, s, level=0) -> _Eval:
        """log L at nodes ``mu + s sqrt(2) t`` per paper; level 1 adds the gradient, 2 the Hessians."""
        theta = self.nodes(mu, s)
        sig2 = np.exp(2.0 * log_sigma)
        L = self.logw[None, :] + np.log(s * _SQ2)[:, None] - 0.5 * _LOG2PI - log_sigma - 0.5 * theta * theta / sig2
        logP = log_category_probabilities(theta[self.p], tau[self.item][:, None, :])  # (n, Q, K)
        L = L + np.add.reduceat(logP[self.ar, :, self.x], self.starts, axis=0)
        top = L.max(axis=1, keepdims=True)
        llp = top[:, 0] + np.log(np.exp(L - top).sum(axis=1))
        w = np.exp(L - llp[:, None])
        ev = _Eval(ll=float(llp.sum()), w=w, theta=theta)
        if level == 0:
            return ev
        n, M, U = self.n, self.M, self.U
        P = np.exp(logP)
        Wi = w[self.p]
        Pbar = np.einsum("nq,nqk->nk", Wi, P)
        G = Pbar.copy()
        G[self.ar, self.x] -= 1.0
        ev.g_tau = np.asarray(self.Eu @ G)[:, 1:]
        c = theta * theta / sig2 - 1.0  # d log N(theta; 0, sigma^2) / d log sigma
        ev.g_ls = float((w * c).sum())
        if level == 1:
            return ev
        Pb = Pbar[:, 1:]
        Pq = P[:, :, 1:]
        # one rating: E_w[d2 log P] = -(diag Pbar - S), S = sum_q w P P'; its posterior covariance
        # S - Pbar Pbar' (Louis) appears once in the complete-data (EM) and twice in the observed form
        selfcov = np.matmul((Pq * Wi[:, :, None]).transpose(0, 2, 1), Pq) - Pb[:, :, None] * Pb[:, None, :]
        em = -(np.einsum("nh,hg->nhg", Pb, np.eye(M)) - Pb[:, :, None] * Pb[:, None, :]) + selfcov
        own = em + selfcov
        blocks = np.zeros((U, U, M, M))
        if self.a.size:
            Da = (P[self.a][:, :, 1:] - Pbar[self.a][:, None, 1:]) * Wi[self.a][:, :, None]
            Db = P[self.b][:, :, 1:] - Pbar[self.b][:, None, 1:]
            C = np.matmul(Da.transpose(0, 2, 1), Db)  # posterior covariance of two ratings' scores
            blocks = np.asarray(self.Ep @ C.reshape(-1, M * M)).reshape(U, U, M, M)
            blocks = blocks + blocks.transpose(1, 0, 3, 2)
        diag = np.asarray(self.Eu @ own.reshape(n, M * M)).reshape(U, M, M)
        blocks[np.arange(U), np.arange(U)] += diag
        D = U * M
        H = np.zeros((D + 1, D + 1))
        H[:D, :D] = blocks.transpose(0, 2, 1, 3).reshape(D, D)
        ct = c - (w * c).sum(axis=1, keepdims=True)
        H[:D, D] = H[D, :D] = np.asarray(self.Eu @ np.einsum("nq,nqk->nk", Wi * ct[self.p], P[:, :, 1:])).ravel()
        Hss = float((w * (-2.0 * theta * theta / sig2)).sum())
        H[D, D] = Hss + float((w * ct * ct).sum())
        ev.H = H
        em = np.asarray(self.Eu @ em.reshape(n, M * M)).reshape(U, M, M)
        Hem = np.zeros((D + 1, D + 1))
        for u in range(U):
            Hem[u * M:(u + 1) * M, u * M:(u + 1) * M] = em[u]
        Hem[D, D] = Hss
        ev.H_em = Hem
        return ev

    def posterior_moments(self, ev: _Eval):
        mu = (ev.w * ev.theta).sum(axis=1)
        sd = np.sqrt(np.maximum((ev.w * (ev.theta - mu[:, None]) ** 2).sum(axis=1), 0.0))
        return mu, sd

    def grid_moments(self, tau, log_sigma, n_grid=61):
        """Posterior mean and sd of every paper on a fixed grid of ``n_grid`` points over +-6 sigma
        (the start of the adaptive nodes)."""
        sig = np.exp(log_sigma)
        grid = np.linspace(-6.0, 6.0, n_grid) * sig
        logP = log_category_probabilities(grid[None, :], tau[self.item][:, None, :])
        L = np.add.reduceat(logP[self.ar, :, self.x], self.starts, axis=0) - 0.5 * (grid / sig) ** 2
        L -= L.max(axis=1, keepdims=True)
        w = np.exp(L)
        w /= w.sum(axis=1, keepdims=True)
        mu = w @ grid
        sd = np.sqrt(np.maximum(w @ grid ** 2 - mu ** 2, 0.0))
        return mu, np.maximum(sd, grid[1] - grid[0])


# ---------------------------------------------------------------------------------------
# parametrisation: phi -> tau[u, 1..M] (linear), and the priors
# ---------------------------------------------------------------------------------------
@dataclass
class _Design:
    A: np.ndarray        # (U*M, P): tau[u, 1..M] = (A @ phi)[u*M:(u+1)*M]
    Omega: np.ndarray    # (P, P): prior precision, penalty 0.5 phi' Omega phi
    # reported quantities as linear maps of phi (rows), before centring
    steps: np.ndarray    # (J*M, P): rater j's step k at the facets' mean
    severity: np.ndarray  # (J, P)
    kappa: np.ndarray    # (M, P) RSM shared thresholds (zero rows for the PCM)
    gamma: np.ndarray    # (F, P)


def _sum_zero(n):
    """(n, n-1): n effects summing to zero from n-1 free ones (the last = -sum of the others)."""
    C = np.zeros((n, max(n - 1, 0)))
    if n > 1:
        C[:-1] = np.eye(n - 1)
        C[-1] = -1.0
    return C


def _design(model, items, J, F, K, step_sd, location_sd, used=None) -> _Design:
    """items: (U, 2) rater and facet level of each item; used: (J, K) bool, categories each rater
    gave (the PCM's severity is the mean of the steps between a rater's lowest and highest)."""
    M = K - 1
    U = items.shape[0]
    cum = np.tril(np.ones((M, M)))  # steps -> cumulative
    dif = np.eye(M) - np.eye(M, k=-1)  # cumulative -> steps
    second = (np.eye(M) - np.eye(M, k=1))[:-1]  # steps -> adjacent differences (M-1, M)
    Cg = _sum_zero(F)
    x = np.arange(1, M + 1, dtype=np.float64)
    if model == "pcm":
        P = J * M + Cg.shape[1]
        A = np.zeros((U * M, P))
        for u, (j, f) in enumerate(items):
            A[u * M:(u + 1) * M, j * M:(j + 1) * M] = np.eye(M)
            A[u * M:(u + 1) * M, J * M:] = np.outer(x, Cg[f])
        steps = np.zeros((J * M, P))
        for j in range(J):
            steps[j * M:(j + 1) * M, j * M:(j + 1) * M] = dif
        severity = np.zeros((J, P))
        for j in range(J):
            cats = np.flatnonzero(used[j]) if used is not None else np.arange(K)
            lo, hi = (cats[0], cats[-1]) if cats.size > 1 else (0, M)
            # mean of steps lo+1..hi = (tau[hi] - tau[lo]) / (hi - lo): estimable whatever the
            # steps into unused end categories do
            severity[j] = steps[j * M + lo:j * M + hi].mean(axis=0)
        kappa = np.zeros((M, P))
        smooth = [second @ steps[j * M:(j + 1) * M] for j in range(J)]
        gamma = np.zeros((F, P))
        gamma[:, J * M:] = Cg
    elif model == "rsm":
        Ck = _sum_zero(M)
        nk = Ck.shape[1]
        P = J + nk + Cg.shape[1]
        A = np.zeros((U * M, P))
        for u, (j, f) in enumerate(items):
            A[u * M:(u + 1) * M, j] = x
            A[u * M:(u + 1) * M, J:J + nk] = cum @ Ck
            A[u * M:(u + 1) * M, J + nk:] = np.outer(x, Cg[f])
        severity = np.zeros((J, P))
        severity[np.arange(J), np.arange(J)] = 1.0
        kappa = np.zeros((M, P))
        kappa[:, J:J + nk] = Ck
        steps = np.zeros((J * M, P))
        for j in range(J):
            steps[j * M:(j + 1) * M] = severity[j][None, :] + kappa
        smooth = [second @ kappa]
        gamma = np.zeros((F, P))
        gamma[:, J + nk:] = Cg
    else:
        raise ValueError(f"model must be 'pcm' or 'rsm', not {model!r}")
    R = np.vstack(smooth) / step_sd
    L = np.vstack([severity, gamma]) / location_sd
    Omega = R.T @ R + L.T @ L
    return _Design(A=A, Omega=Omega, steps=steps, severity=severity, kappa=kappa, gamma=gamma)


# ---------------------------------------------------------------------------------------
# the fit
# ---------------------------------------------------------------------------------------
@dataclass
class MMLFit:
    """What :func:`fit_mml` estimates (raters as in the ratings, rows of unrated raters nan).

    Centred so that the raters' mean severity is 0 (the paper distribution has mean
    ``theta_mean`` and sd ``sigma``).  ``steps`` (J, M) rater j's step k (RSM: beta_j + kappa_k),
    ``thresholds`` (PCM: (J, M) steps minus the rater's severity; RSM: (M,) kappa), ``severity``
    (J,), ``facet`` (F,) effects of the further facet (sum 0; empty without one), each with a
    model SE ``*_se``; ``tau`` (J, K) cumulative parameters of each rater at the facets' mean,
    ``item_tau`` (U, K) of each (rater, facet level) item with ``items`` (U, 2); ``eap``/``eap_sd``
    per paper (nan: no ratings); ``loglik`` the marginal log-likelihood (without the priors);
    ``cov`` the covariance of the free parameters and log sigma.
    """

    model: str
    steps: np.ndarray
    steps_se: np.ndarray
    thresholds: np.ndarray
    thresholds_se: np.ndarray
    severity: np.ndarray
    severity_se: np.ndarray
    facet: np.ndarray
    facet_se: np.ndarray
    sigma: float
    sigma_se: float
    theta_mean: float
    tau: np.ndarray
    item_tau: np.ndarray
    items: np.ndarray
    eap: np.ndarray
    eap_sd: np.ndarray
    loglik: float
    n_iter: int
    converged: bool
    cov: np.ndarray
    unused: np.ndarray   # (J, K) bool: category never given (RSM: by no rater) -> prior-borne thresholds
    notes: list
    n_nodes: int = 0     # quadrature nodes of the final iterations (21, or 61 after escalating)


def _items(ratings: Ratings, facet):
    """Item (rater, facet level) of every rating, the items (U, 2), active raters and F."""
    seen = np.flatnonzero(ratings.ratings_per_rater() > 0)
    rmap = np.full(ratings.n_raters, -1)
    rmap[seen] = np.arange(seen.size)
    if facet is None:
        f = np.zeros(ratings.n_ratings, dtype=np.int64)
        F = 1
    else:
        f = np.asarray(facet, dtype=np.int64)
        if f.shape != ratings.rater.shape or (f.size and f.min() < 0):
            raise ValueError("facet must give a non-negative level per rating")
        F = int(f.max()) + 1 if f.size else 1
    key = rmap[ratings.rater] * F + f
    ukeys, item = np.unique(key, return_inverse=True)
    items = np.column_stack([ukeys // F, ukeys % F])
    return item.ravel(), items, seen, F


def fit_mml(ratings: Ratings, model: str = "pcm", facet=None, n_nodes: int = 21, adaptive: bool = True,
            max_iter: int = 200, tol: float = 1e-9, node_tol: float = 1e-2, step_sd: float = PRIOR_STEP_SD,
            location_sd: float = PRIOR_LOCATION_SD) -> MMLFit:
    """Fit the PCM (``model="pcm"``) or RSM/MFRM (``"rsm"``) by MML (module docstring).

    ``facet``: optional int level (0..F-1) per rating of a further facet.  Raises
    :class:`MethodError` only for designs that cannot be put on one scale (raters not
    linked through shared papers) or with no ratings; otherwise always returns estimates
    (``converged`` False and a note when ``max_iter`` was reached).
    """
    from ..network import require_connected

    if ratings.n_ratings == 0:
        raise MethodError(f"MML ({model.upper()}): no ratings")
    require_connected(ratings, f"MML ({model.upper()})")
    K = ratings.max_score + 1
    M = K - 1
    item, items, seen, F = _items(ratings, facet)
    J = seen.size
    U = items.shape[0]
    counts = np.zeros((J, K))
    np.add.at(counts, (np.searchsorted(seen, ratings.rater), ratings.score), 1.0)
    des = _design(model, items, J, F, K, step_sd, location_sd, used=counts > 0)
    eng = _Engine(ratings.paper, item, ratings.score, U, K, n_nodes)

    # start: sigma = SIGMA0 and each rater's adjacent-category log odds (RSM: all raters'), stretched
    # by sqrt(1 + 0.346 sigma^2), the attenuation of logits by a normal quality (0.346 = (16 sqrt 3 / 15 pi)^2)
    stretch = np.sqrt(1.0 + 0.346 * SIGMA0 ** 2)
    if model == "pcm":
        tau0 = -np.log((counts + 0.5) / (counts[:, :1] + 0.5))[:, 1:] * stretch
        target = tau0[items[:, 0]].ravel()
    else:
        tot = counts.sum(axis=0) + 0.5
        target = np.tile(-np.log(tot / tot[0])[1:] * stretch, U)
    phi = np.linalg.lstsq(des.A, target, rcond=None)[0]
    psi = np.r_[phi, np.log(SIGMA0)]
    Ptot = psi.size

    def tau_of(psi):
        t = np.zeros((U, K))
        t[:, 1:] = (des.A @ psi[:-1]).reshape(U, M)
        return t

    def penalised(ev, psi, level):
        phi = psi[:-1]
        ll = ev.ll - 0.5 * phi @ des.Omega @ phi
        if level == 0:
            return ll, None, None, None
        g = np.r_[des.A.T @ ev.g_tau.ravel() - des.Omega @ phi, ev.g_ls]
        AA = np.zeros((U * M + 1, Ptot))
        AA[:U * M, :-1] = des.A
        AA[-1, -1] = 1.0
        Om = np.zeros((Ptot, Ptot))
        Om[:-1, :-1] = des.Omega
        return ll, g, AA.T @ ev.H @ AA - Om, AA.T @ ev.H_em @ AA - Om

    if adaptive:
        mu, s = eng.grid_moments(tau_of(psi), psi[-1])
    # Where 21 nodes leave the integral of skewed posteriors (top or bottom papers on a wide scale,
    # large sigma) rough, log L is not smooth enough for Newton's method to settle: after
    # ESCALATE_AFTER iterations without convergence the fit goes on from where it is with
    # ESCALATE_NODES nodes (about 3% of the 100-paper 0-9 sets of the study).
    plan = [n_nodes]
    if adaptive and ESCALATE_NODES > n_nodes:
        plan.append(ESCALATE_NODES)
    converged = False
    it = 0
    for stage, q in enumerate(plan):
        if q != eng.t.size:
            eng = _Engine(ratings.paper, item, ratings.score, U, K, q)
        last = stage == len(plan) - 1
        stop = max_iter if last else min(max_iter, it + ESCALATE_AFTER)
        shift = np.inf
        while it < stop:
            it += 1
            if not adaptive:
                mu, s = np.zeros(eng.N), np.full(eng.N, np.exp(psi[-1]))
            ev = eng.evaluate(tau_of(psi), psi[-1], mu, s, level=2)
            ll, g, H, Hem = penalised(ev, psi, 2)
            try:  # Newton-Raphson on log L (Louis information) ...
                d = cho_solve(cho_factor(-H), g)
                newton = True
            except np.linalg.LinAlgError:  # ... or the EM step where that is not positive definite
                neg = -Hem
                d = cho_solve(cho_factor(neg + 1e-9 * np.trace(neg) / Ptot * np.eye(Ptot)), g)
                newton = False
            dec = float(g @ d)  # twice the predicted gain of the Newton step
            if _TRACE is not None:
                _TRACE.append((it, newton, ll, dec, shift, float(np.exp(psi[-1])), q))
            if newton and dec < tol * max(eng.N, 1) and shift < node_tol:
                converged = True
                break
            big = np.max(np.abs(d[:-1]), initial=0.0)
            if big > MAX_STEP:  # at most MAX_STEP logits a step, and a factor e on sigma
                d = d * (MAX_STEP / big)
            if abs(d[-1]) > 1.0:
                d = d / abs(d[-1])
            step = 1.0
            while True:
                new = psi + step * d
                ev_new = eng.evaluate(tau_of(new), new[-1], mu, s, level=0)
                ll_new = penalised(ev_new, new, 0)[0]
                if ll_new >= ll - 1e-12 * abs(ll) or step < 1e-6:
                    break
                step /= 2.0
            if ll_new < ll - 1e-12 * abs(ll):  # no ascent left at numerical precision
                converged = newton and shift < 10 * node_tol
                break
            psi = new
            if adaptive:
                mu_new, s_new = eng.posterior_moments(ev_new)
                s_new = np.maximum(s_new, 1e-3 * np.exp(psi[-1]))
                shift = float(np.max(np.abs(mu_new - mu) / s_new, initial=0.0))
                mu, s = mu_new, s_new
            else:
                shift = 0.0
        if converged:
            break
    # final: nodes at the last posterior, information there
    if not adaptive:
        mu, s = np.zeros(eng.N), np.full(eng.N, np.exp(psi[-1]))
    ev = eng.evaluate(tau_of(psi), psi[-1], mu, s, level=2)
    ll_pen, g, H, _ = penalised(ev, psi, 2)
    w_, V = np.linalg.eigh(-H)
    keep = w_ > w_.max() * 1e-12
    cov = (V[:, keep] / w_[keep]) @ V[:, keep].T

    # reported quantities, centred on the raters' mean severity
    phi = psi[:-1]
    c_row = des.severity.mean(axis=0)  # mean severity as a row over phi
    sev_rows = des.severity - c_row
    step_rows = des.steps - c_row
    if model == "pcm":
        thr_rows = des.steps - np.repeat(des.severity, M, axis=0)
    else:
        thr_rows = des.kappa

    def est(rows):
        return rows @ phi, np.sqrt(np.maximum(np.einsum("ip,pq,iq->i", rows, cov[:-1, :-1], rows), 0.0))

    sev, sev_se = est(sev_rows)
    stp, stp_se = est(step_rows)
    thr, thr_se = est(thr_rows)
    gam, gam_se = est(des.gamma)
    c = float(c_row @ phi)
    Jall = ratings.n_raters

    def per_rater(v, width=None):
        out = np.full((Jall,) + ((width,) if width else ()), np.nan)
        out[seen] = v.reshape((J, width) if width else (J,))
        return out

    tau_r = np.full((Jall, K), np.nan)
    tau_r[seen, 0] = 0.0
    tau_r[seen, 1:] = np.cumsum(stp.reshape(J, M), axis=1)
    item_tau = tau_of(psi) - c * np.arange(K)[None, :]
    ev_post = eng.posterior_moments(ev)
    eap = np.full(ratings.n_papers, np.nan)
    eap_sd = np.full(ratings.n_papers, np.nan)
    eap[eng.papers] = ev_post[0] - c
    eap_sd[eng.papers] = ev_post[1]
    sigma = float(np.exp(psi[-1]))
    unused = np.zeros((Jall, K), dtype=bool)
    notes = []
    prior = f"rest on the weak prior N(0, {step_sd:g}^2) on adjacent threshold differences"
    if model == "pcm":
        unused[seen] = counts == 0
        which = [f"{ratings.rater_ids[j]}: {','.join(str(k) for k in np.flatnonzero(counts[jj] == 0))}"
                 for jj, j in enumerate(seen) if (counts[jj] == 0).any()]
        if which:
            notes.append(f"categories never given by rater ({'; '.join(which)}): the thresholds next to them {prior}")
    else:
        none = counts.sum(axis=0) == 0
        unused[seen] = none[None, :]
        if none.any():
            ks = ",".join(str(k) for k in np.flatnonzero(none))
            notes.append(f"categories {ks} given by no rater: the shared thresholds next to them {prior}")
    if not converged:
        notes.append(f"MML ({model.upper()}): not converged after {it} iterations; estimates are the last iterate")
    return MMLFit(model=model, steps=per_rater(stp, M), steps_se=per_rater(stp_se, M),
                  thresholds=per_rater(thr, M) if model == "pcm" else thr,
                  thresholds_se=per_rater(thr_se, M) if model == "pcm" else thr_se,
                  severity=per_rater(sev), severity_se=per_rater(sev_se), facet=gam, facet_se=gam_se,
                  sigma=sigma, sigma_se=float(sigma * np.sqrt(max(cov[-1, -1], 0.0))), theta_mean=-c,
                  tau=tau_r, item_tau=item_tau, items=np.column_stack([seen[items[:, 0]], items[:, 1]]),
                  eap=eap, eap_sd=eap_sd, loglik=float(ev.ll), n_iter=it, converged=converged, cov=cov,
                  unused=unused, notes=notes, n_nodes=int(eng.t.size))


def _posterior(eng: _Engine, tau, log_sigma, refine: int = 8):
    """Adaptive nodes at fixed parameters: each paper's posterior mean and sd, and the last
    evaluation (from a 61-point grid, ``refine`` times re-centred)."""
    sigma = np.exp(log_sigma)
    mu, s = eng.grid_moments(tau, log_sigma)
    for _ in range(refine):
        mu, s = eng.posterior_moments(eng.evaluate(tau, log_sigma, mu, s))
        s = np.maximum(s, 1e-3 * sigma)
    ev = eng.evaluate(tau, log_sigma, mu, s)
    return eng.posterior_moments(ev) + (ev,)


def marginal_loglik(ratings: Ratings, tau, sigma, n_nodes: int = 21, adaptive: bool = True, refine: int = 8):
    """The marginal log-likelihood of ``ratings`` at rater parameters ``tau`` (n_raters, K)
    (cumulative, ``tau[:, 0] = 0``) and quality ``N(0, sigma^2)``, by the quadrature of the fit
    (adaptive nodes refined ``refine`` times from a 61-point grid)."""
    tau = np.asarray(tau, dtype=np.float64)
    eng = _Engine(ratings.paper, ratings.rater, ratings.score, ratings.n_raters, ratings.max_score + 1, n_nodes)
    if not adaptive:
        return eng.evaluate(tau, float(np.log(sigma)), np.zeros(eng.N), np.full(eng.N, float(sigma))).ll
    return _posterior(eng, tau, float(np.log(sigma)), refine)[2].ll


# ---------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------
class MarginalRaterModel(RaterAdjuster):
    """PCM (``MML``) or many-facet rating scale model (``MFRM``) by MML; each rating becomes its
    paper's fair score.

    fit: :func:`fit_mml`; optional ``facet`` (a level 0..F-1 per rating) adds a further facet.
    Paper quality by EAP (``quality="eap"``, the default: the posterior mean under the fitted
    normal distribution, finite for every paper) or Warm's WLE (``"wle"``, as :class:`.cml.ConditionalPCM`).
    transform: a paper's fair score is the expected score at its quality of

    * ``fair="mean-rater"`` (default, as CML): the mean over the fitted raters of each rater's
      expected score (at the further facet's mean), the study's definition of a true score;
    * ``fair="average-rater"``: a rater of severity 0 (Facets' fair average); PCM: with the raters'
      mean steps.

    Fitted attributes (a Facets-style report reads these; raters' rows nan where they have no
    ratings): ``severity_``/``severity_se_`` (logits, centred), ``steps_``/``steps_se_`` (J, M),
    ``thresholds_``/``thresholds_se_`` (PCM: (J, M) steps about the rater's severity; MFRM: (M,)
    shared), ``facet_``/``facet_se_``, ``sigma_``/``sigma_se_``, ``theta_mean_``, ``tau_`` (J, K),
    ``quality_eap_``/``quality_eap_se_`` (posterior sd), ``quality_wle_``/``quality_wle_se_``,
    ``extreme_`` (-1/0/+1 per paper), ``quality_``/``quality_se_`` (the one used),
    ``rating_expected_``/``rating_variance_`` (per rating, at the paper's WLE, as Facets' residuals
    use the paper's measure), ``rater_fit_`` (infit/outfit over non-extreme papers),
    ``loglik_``, ``converged_``, ``n_iter_``, ``n_nodes_`` (quadrature nodes at the end), ``notes_`` and
    ``warnings_`` (unused categories),
    ``result_`` (the :class:`MMLFit`).
    """

    needs_multiple_raters = True

    @property
    def code(self):
        return "MFRM" if self.model == "rsm" else "MML"

    def __init__(self, model: str = "pcm", quality: str = "eap", fair: str = "mean-rater", n_nodes: int = 21,
                 adaptive: bool = True):
        self.model = model
        self.quality = quality
        self.fair = fair
        self.n_nodes = n_nodes
        self.adaptive = adaptive

    def _fit(self, ratings: Ratings, facet=None) -> None:
        if self.quality not in ("eap", "wle"):
            raise ValueError(f"quality must be 'eap' or 'wle', not {self.quality!r}")
        if self.fair not in ("average-rater", "mean-rater"):
            raise ValueError(f"fair must be 'average-rater' or 'mean-rater', not {self.fair!r}")
        from ..fit_stats import rater_fit

        facet = None if facet is None else np.asarray(facet, dtype=np.int64)
        res = fit_mml(ratings, model=self.model, facet=facet, n_nodes=self.n_nodes, adaptive=self.adaptive)
        self.result_ = res
        for name in ("steps", "steps_se", "thresholds", "thresholds_se", "severity", "severity_se", "facet",
                     "facet_se", "sigma", "sigma_se", "theta_mean", "tau", "loglik", "converged", "n_iter", "n_nodes"):
            setattr(self, name + "_", getattr(res, name))
        self.notes_ = list(res.notes)
        self.warnings_ = [n for n in res.notes if n.startswith("categories ")]
        item = self._item_of(ratings, facet)
        theta_w, se_w, extreme = estimate_quality(ratings.paper, item, ratings.score, ratings.n_papers,
                                                  res.item_tau, method="wle")
        self.quality_eap_, self.quality_eap_se_ = res.eap, res.eap_sd
        self.quality_wle_, self.quality_wle_se_, self.extreme_ = theta_w, se_w, extreme
        if self.quality == "eap":
            self.quality_, self.quality_se_ = res.eap, res.eap_sd
        else:
            self.quality_, self.quality_se_ = theta_w, se_w
        p = category_probabilities(theta_w[ratings.paper], res.item_tau[item])
        self.rating_expected_, self.rating_variance_ = moments(p)[:2]
        self.rater_fit_ = rater_fit(p, ratings.score, ratings.rater, ratings.n_raters,
                                    mask=extreme[ratings.paper] == 0)

    def _item_of(self, ratings: Ratings, facet):
        """Index into ``result_.item_tau`` of every rating ((rater, facet level) of the fit)."""
        items = self.result_.items
        F = int(items[:, 1].max()) + 1
        lookup = np.full(ratings.n_raters * F, -1)
        lookup[items[:, 0] * F + items[:, 1]] = np.arange(items.shape[0])
        f = np.zeros(ratings.n_ratings, dtype=np.int64) if facet is None else np.asarray(facet, dtype=np.int64)
        if f.size and (f.min() < 0 or f.max() >= F):
            raise MethodError(f"{self.code}: facet levels outside the fitted 0..{F - 1}")
        item = lookup[ratings.rater * F + f]
        if (item < 0).any():
            raise MethodError(f"{self.code}: {int((item < 0).sum())} ratings by a rater in a facet level the fit "
                              "never saw")
        return item

    def average_tau(self):
        """Cumulative parameters (K,) of the average rater (severity 0, the mean steps)."""
        steps = self.thresholds_ if self.model == "rsm" else np.nanmean(self.steps_, axis=0)
        return np.r_[0.0, np.cumsum(steps)]

    def fair_scores(self, theta):
        """Fair score at each quality ``theta`` (see the class docstring)."""
        theta = np.asarray(theta, dtype=np.float64)
        if self.fair == "average-rater":
            return expected_score(theta, self.average_tau())
        return mean_expected_score(theta, self.tau_[np.isfinite(self.tau_).all(axis=1)])

    def paper_quality(self, ratings: Ratings, facet=None):
        """(quality, se) of every paper of ``ratings`` under the fitted model (nan: no ratings)."""
        item = self._item_of(ratings, facet)
        tau = self.result_.item_tau
        if self.quality == "wle":
            theta, se, _ = estimate_quality(ratings.paper, item, ratings.score, ratings.n_papers, tau, method="wle")
            return theta, se
        theta = np.full(ratings.n_papers, np.nan)
        se = np.full(ratings.n_papers, np.nan)
        if ratings.n_ratings:
            K = tau.shape[1]
            eng = _Engine(ratings.paper, item, ratings.score, tau.shape[0], K, self.n_nodes_)
            # the fit's scale has mean 0: shift the centred parameters back
            mu, sd, _ = _posterior(eng, tau - self.theta_mean_ * np.arange(K), float(np.log(self.sigma_)))
            theta[eng.papers] = mu + self.theta_mean_
            se[eng.papers] = sd
        return theta, se

    def _transform(self, ratings: Ratings, training: bool, facet=None) -> Adjusted:
        """Every rating of a paper gets the paper's fair score (the fit's qualities for its own data)."""
        theta = self.quality_ if training else self.paper_quality(ratings, facet)[0]
        return fair_score_adjusted(ratings, self.fair_scores(theta))
