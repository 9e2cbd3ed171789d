"""Marginal maximum likelihood (MML) for the partial credit and rating scale models of raters,
and their many-facet form (Linacre's MFRM), with a normal distribution of paper quality.

Rating ``i`` of paper ``p`` by rater ``j`` (in levels ``f1, f2, ...`` of optional further facets,
e.g. the task, the domain of a rubric) is ``x`` in 0..M with, for the "item" ``u = (j, f1, ...)``,

    P(x | theta_p) = exp(x theta_p - tau[u, x]) / sum_h exp(h theta_p - tau[u, h])
    PCM  (``model="pcm"``, rater-specific thresholds, Masters 1982):
         tau[u, x] = sum_{k<=x} delta[j, k] + x sum_f gamma_f[l_f]
    RSM  (``model="rsm"``, shared thresholds + rater severity, Andrich 1978; Linacre 1989):
         tau[u, x] = x (beta[j] + sum_f gamma_f[l_f]) + sum_{k<=x} kappa[g, k]

with ``theta_p ~ N(0, sigma^2)`` (sigma estimated), each facet summing to 0 and ``sum kappa = 0``;
``g`` is 0 (shared thresholds) or the item's level of the facet named by ``threshold_facet``.

**For the many-facet models built on this** (anchors, more facets, bias terms): the
parameters are the named blocks of :class:`.mml_layout.Layout` (``steps`` or ``severity`` +
``thresholds``, ``facet0``, ``facet1``, ..., ``theta_mean``, ``log_sigma``); ``fit_mml(...,
anchor=f)`` calls ``f(layout)`` before fitting, and ``layout.fix(block, index, value)`` holds any
entry at a value (``layout.free("theta_mean")`` lets the paper mean move once raters are
anchored; an anchored block drops its sum-zero constraint).  Estimates of every block are in
``MMLFit.effects`` (name -> (estimate, SE)); ``MMLFit.layout.value`` the natural vector.  A new
kind of term is a new block with its columns of the layout's ``B`` (``tau = B @ value``) and,
if wanted, rows of its ``penalty``: the engine (:mod:`.mml_engine`) sees only ``tau``.

The marginal log-likelihood (Bock & Aitkin 1981)

    log L = sum_p log  integral  prod_{i in p} P(x_i | theta) N(theta; 0, sigma^2) d theta

is computed on an equally spaced grid of ``theta = sigma z`` over +-7 sigma (the trapezoidal
rule, :mod:`.mml_engine`), shared by every paper, so that ``log P`` is one table of items x
categories x nodes and a paper's likelihood a sum of its rows; papers with the same items and total
score (a class: their posteriors are the same) are computed once.  The grid's spacing is set by the papers' posteriors (at most the 1% quantile of
their sd / ``NODE_RATIO``; at least MIN_NODES nodes): the trapezoidal rule's error falls like
``exp(-2 pi^2 (sd / spacing)^2)``, so log L is exact to about 1e-10 both for near-normal posteriors
and for a top paper on a wide scale (its posterior a normal tail cut by the likelihood), and a
rubric's many ratings a paper (narrow posteriors) get a finer grid.  This is the likelihood of
Python's ``mirt`` (``fit_mfrm``), which uses the same rule over +-6 sigma.

log L is maximised by Newton-Raphson with the analytic gradient (Fisher's identity) and the
observed information of Louis (1982), every step halved until log L rises; where that
information is not positive definite (far from the maximum) the step is the EM gradient step
(the expected complete-data information, Lange 1995).  The information is computed at the
start, carried forward by BFGS updates from the change of the gradient (a gradient costs a
fraction of the information, also after a step that had to be halved) and afresh only where
the updates stall (past 120,000 ratings for 200 raters' PCM, the information of a sample of the
papers: the full one costs 10-25 gradients at 3-21 raters a paper); convergence is confirmed with the full
information (above FACTOR_BLOCK parameters by conjugate gradients on it, :func:`_confirm`, not its factor),
and that last information gives the standard errors, except where a sample steers:
there the iterations go on (a few more gradients) until the sample's information's Newton
decrement is under ``SAMPLE_TOL`` of the tolerance, and the full information is computed only when
a standard error is asked for (:class:`MMLFit`; ``adjust`` asks for none).  There the sample's
papers alone are fitted first, to about as near as their optimum is to every paper's, so that the
iterations far from the optimum cost a sample's evaluations (:func:`_fit_on_grids`), and the
sample's information that steers every paper's iterations is scaled to every paper's complete-data
information (which every paper's gradient gives: :meth:`_Objective.scaled_to_complete`), nearer every
paper's information where the sample holds few ratings of a rater's category, and left the sample's own
along the shift of every threshold (where the information is a small difference of two large parts).  From the best
of a few starts this takes 10-22 iterations (at 1M ratings 12-15, the sample's papers' and every
paper's: 7-10 gradients of every paper, the most at 21 of 200 raters a paper and for a rubric's
MFRM); the
grid is chosen at the start and follows the posteriors as the estimates move (made
``GRID_MARGIN`` finer than they need, so that it is not remade at every step).

Weak priors keep every estimate finite whatever the data (penalised ML; they move estimable
parameters by a small fraction of their SE: 0.05 logits, 0.07 SE, for a step into a category
given 3 times in the 150-paper reference set, far less with more data): the difference of
adjacent thresholds ``delta[j, k+1] - delta[j, k]`` (RSM: ``kappa[k+1] - kappa[k]``) ~ N(0, 5^2),
rater severities and facet effects ~ N(0, 10^2).  A category a rater never used (RSM: no rater
used) has thresholds resting on that prior; the fit says so in ``warnings_``.  A PCM rater's
severity is the mean of its steps between the lowest and highest category it gave
(``(tau[hi] - tau[lo]) / (hi - lo)``; CML and Facets drop unused end categories too), so it
does not move with prior-borne steps, less the panel's mean step over those same categories
(:func:`_panel_offsets`: a rater who never gave the top score is not made milder by lacking
the top step).

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

import copy
from dataclasses import dataclass
from functools import cached_property, partial

import numpy as np
from scipy import sparse

from ..arguments import check_choice, check_count, check_positive
from ..fit_stats import WALD_MAX_RATERS, wald_all_equal
from ..errors import MethodError
from ..parallel import one_blas_thread
from ..ratings import Adjusted, Ratings
from .base import DeferredFit, RaterAdjuster, fair_score_adjusted
from .mml_engine import NEAR_TAIL, SPAN, GridEngine, distinct_keys, unique_rows
from .mml_layout import Layout, make_layout
from .quality import (FAIR_RATERS, category_probabilities, check_quality, estimate_quality, expected_score,
                      mean_expected_score, moments, quality_by_pattern)

__all__ = ["MMLFit", "fit_mml", "marginal_loglik", "MarginalRaterModel", "PRIOR_STEP_SD", "PRIOR_LOCATION_SD",
           "Layout", "required_grid"]

#: sd of the weak normal prior on the difference of adjacent thresholds (logits)
PRIOR_STEP_SD = 5.0
#: sd of the weak normal prior on rater severities and facet effects (logits)
PRIOR_LOCATION_SD = 10.0

#: the largest change of a parameter in one iteration (logits)
MAX_STEP = 8.0
#: the grid: at least MIN_NODES, at most MAX_NODES nodes, spacing at most the 1% quantile of the
#: papers' posterior sd (in units of sigma) / NODE_RATIO
MIN_NODES = 31
MAX_NODES = 401
NODE_RATIO = 1.25
#: the informations (the Newton steps' Hessians and the standard errors) on a coarser grid: spacing at
#: most the 1% quantile of the posterior sds / INFO_NODE_RATIO (the trapezoidal rule's relative error
#: ~exp(-2 pi^2 INFO_NODE_RATIO^2) = 1e-7 a paper: nothing an SE shows), ~0.7 x the fit's nodes, where the
#: log L and the gradient that decide the estimates keep theirs
INFO_NODE_RATIO = 0.9
#: ... and the informations that only steer (a sample's, :func:`_fit_on_grids`, :meth:`_Objective._hessians`)
#: at most the 1% quantile / SAMPLE_INFO_NODE_RATIO: an error ~exp(-2 pi^2 0.7^2) = 6e-5 a paper, far
#: under the sample's own (its information 0.9-1.1 x every paper's); 21 of 200 raters a paper, 1M ratings:
#: 119 and 63 nodes where 152 and 81, the same iterations on every shape of issue 32 but 1 more of the
#: complete panel's RSM and 3 fewer of the rubric's
SAMPLE_INFO_NODE_RATIO = 0.7
#: ... and over where the posteriors lie within SAMPLE_INFO_TAIL of their sds (not the engine's whole range,
#: made for TAIL sds and the iterations' moves): the mass left out, 1e-15 of a normal posterior's and ~1e-7 of
#: a paper's rated all top or bottom (its far tail the prior's), far under the spacing's 6e-5; 21 of 200
#: raters a paper, 1M ratings: the sample's first information 119 -> 98 nodes (MFRM 110 -> 67, 0.093 ->
#: 0.062 s), the same iterations on 2, 3 and 21 of 200, estimates as near the tight fit (4.4e-8, 2e-10)
SAMPLE_INFO_TAIL = 8.0
#: the grid of the sample's phase (:func:`_fit_on_grids`: its log L and gradients, and so its informations'
#: range) at most the 1% quantile of the posteriors' sd / SAMPLE_NODE_RATIO, where every paper's keeps NODE_RATIO's:
#: the sample's log L is off by ~6e-5 a paper (relative, smooth in the parameters) where its phase stops at a
#: decrement of ~1 a parameter.  21 of 200 raters a paper, 1M ratings: its evaluations on 94, 57, 86, 66 nodes
#: where 166, 100, 145, 117 (0.20 -> 0.13 s of log L and gradients), every paper's iterations the same on every
#: shape of issue 32 (MML and MFRM), the outputs the same to the printed digit
SAMPLE_NODE_RATIO = 0.7
#: ... and the start's second grid (the first, MIN_NODES, misjudges narrow posteriors) at most START_GROWTH
#: times the first's nodes: 124 where 401 at 21 of 200 raters a paper (0.029 -> 0.013 s), then the grid
#: the posteriors there ask for
START_GROWTH = 4
#: a grid made during the iterations is this much finer than required, so that posteriors
#: narrowing a little as the estimates settle do not ask for a new grid at every step
GRID_MARGIN = 1.05
#: a grid with more than COARSEN times the nodes the posteriors need is made anew (coarser)
COARSEN = 1.15
#: new grids at most this many times a fit
MAX_REGRIDS = 5
#: BFGS steps go on while the Newton decrement falls at least this much a step (SAMPLE_REUSE_GAIN
#: where the information is the sample's, a fifth of a full one's cost or less)
REUSE_GAIN = 2.0
SAMPLE_REUSE_GAIN = 4.0
#: past 2 x SAMPLE_RATINGS ratings, the information that steers the iterations (not the one that
#: gives the SEs) is that of every k-th paper's ratings, scaled up
#: (about SAMPLE_RATINGS of them; the information of every paper costs 10 gradients at 3 of 200
#: raters a paper, 25 at 21 of 200)
SAMPLE_RATINGS = 25_000
#: ... and at least this many a parameter (the PCM of 200 raters on 0-5 has 1,000: a sample of 25,000
#: ratings, a few of each rater's rare categories, steered its fit at 21 of 200 raters a paper back and
#: forth for 20 iterations, before the sample's information was scaled to every paper's complete-data
#: information, :meth:`_Objective.scaled_to_complete`; since, 60 a parameter, k = 16 at 1M ratings, costs
#: as many gradients of every paper as 125, k = 7, at 2 and 21 of 200 raters a paper and one more at 3
#: of 200, and each of the sample's evaluations half: fit_mml 0.15-0.25 s less); after MAX_SAMPLE_INFOS
#: of its informations, every paper's steers
SAMPLE_PER_PARAMETER = 60
MAX_SAMPLE_INFOS = 4
#: ... and every paper with a rating in a cell (an item's score) of fewer than SAMPLE_RARE x k ratings, k
#: the papers a sampled one stands for: every k-th paper holds a handful of such ratings or none, and the
#: sample's information of those thresholds was mostly the prior's (its steps a logit too long, its
#: BFGS updates stalling until every paper's information was computed, 1.5-3 s at 1M ratings, scores 0-7)
SAMPLE_RARE = 5
#: where the sample steers, convergence is a Newton decrement under SAMPLE_TOL x the full information's
#: tolerance: the last step, by the sample's information (or its BFGS update), leaves an error of about
#: its relative error times the step, so it is taken from closer (1-2 more gradients at 3 of 200 raters
#: a paper, 1M ratings, where the every-paper information that confirmed convergence cost 1.2 s;
#: estimates within 5e-8 logits of a fit to a decrement of 1e-13 x n on the full information, on every
#: shape of issue 32 at 1M ratings, 7e-11 to 5e-8; at 130k and 300k ratings 8e-12 to 5e-8)
SAMPLE_TOL = 1e-6
#: ... and the last step under SAMPLE_STEP_TOL logits in every coordinate: the decrement by the sample's
#: matrix can be small while a step is not, where that matrix is far from every paper's information
#: in a few directions (thresholds of categories a rater seldom gives, of which the sample holds a
#: handful): the fit stopped 2.6e-6 to 4e-6 logits from the optimum there (scores 0-7, 60k-1M ratings);
#: the step's error is a fraction of it (1e-7 now, 1-3 more gradients)
SAMPLE_STEP_TOL = 1e-6
#: the sample's papers alone are fitted first (:func:`_fit_on_grids`), to a decrement (every paper's
#: scale) of SAMPLE_PHASE_TOL x (s - 1) a parameter (at least SAMPLE_PHASE_TOL), s the papers' weight over
#: the sample's (:meth:`_Objective.on_sample`).  The RSM's sample is every k-th paper, s = k: about the
#: distance from their optimum to every paper's (the difference of two estimates, of k - 1 and 1 parts of
#: the papers), so that nearer is not worth the sample's evaluations.  The PCM's is weighted (k a sampled
#: paper, 1 a paper of a rare cell, :func:`_sample_engine`), s ~ 1: SAMPLE_PHASE_TOL a parameter, and that
#: is kept as measured (1M ratings: k - 1 = 15 a parameter took 12-13 gradients of every paper where 8 at
#: 2 and 3 of 200 raters a paper, 10 where 9 at 21 of 200; 0.1 a parameter none fewer; the RSM at 1 a
#: parameter, where 38, one more at 2 of 200, one fewer on the rubric, the same on the other shapes)
SAMPLE_PHASE_TOL = 1.0
#: every paper's iterations start on the matrix of the sample's phase (its information, taken far from
#: the optimum, and BFGS updates of the sample's log L); once their Newton decrement is under
#: SAMPLE_REFRESH a parameter, the sample's information is taken afresh there, scaled to every paper's
#: complete-data information (:meth:`_Objective.scaled_to_complete`): each step then ~500 times nearer in
#: decrement, where the carried matrix made it ~12 times (3 of 200 raters a paper, 1M ratings, a sample
#: of every 7th paper: 7 gradients of every paper and one more sample's information, where 13 gradients)
SAMPLE_REFRESH = 0.1
#: ... that is the PCM's (the models named here); the RSM's (MFRM's) every-paper iterations take the
#: sample's information, scaled, afresh at their start: there the carried matrix gained 1.1-1.4 times in
#: decrement a step (3 of 200 raters a paper, 1M ratings: 2519, 1950, then afresh), where the information
#: afresh gains ~200 from the start (5935, 33, 0.22, ...): 1-2 gradients of every paper fewer on every shape
#: of issue 32 at 100k-1M ratings, 19 fewer on two blocks of raters joined by 4 papers.  (The PCM's
#: thresholds of categories a rater seldom gives move by a logit or two from the sample's optimum to
#: every paper's, and the information taken there steers worse than the carried matrix: 12-13 gradients
#: where 8-9 at 2, 3 and 21 of 200 raters a paper.)  The others' grid is chosen by the sample's posteriors at
#: the end of its phase (one more evaluation of the sample's log L), not before its last step, which moves
#: the RSM's far (its phase ends at (k - 1) a parameter, SAMPLE_PHASE_TOL): 21 of 200 raters a paper, 1M and
#: 300k ratings, every paper's iterations began on 132 nodes and were made anew on 116 after a step (a
#: gradient of every paper more, 9 where 8); the other shapes' the same.  (The PCM's, near its optimum when
#: its phase ends, got grids 5% finer: kept.)
SAMPLE_CARRY_MODELS = ("pcm",)
#: Tried for the PCM's every-paper gradients (8, 8, 9 at 2, 3, 21 of 200 raters a paper, 1M ratings), none
#: fewer: Anderson acceleration (memory 6) or an exact line search (from each step's change of gradient)
#: in place of the BFGS updates after the refresh; the refresh at 0.5 a parameter; the full phase's own
#: BFGS pairs kept over the refresh; a sample stratified by pattern (the gap from its optimum to every
#: paper's the same, decrement 1.39e4 where 1.35e4); the exact curvature along the shift of all thresholds
#: (at 21 of 200 the two eigenvalues of the steering matrix's inverse times the information farthest from
#: 1, 0.82 and 1.23, were along it) from one more gradient: a step fewer, a gradient more (since, the
#: sample's own curvature there, for no gradient: :meth:`_Objective.scaled_to_complete`); every paper's
#: information itself at the refresh: a gradient fewer (at the point the carried matrix's step goes to,
#: two), for 1.5 s; the refresh at 0.01-0.03 a parameter, at the first of every paper's iterations or at
#: the point the carried matrix's step goes to, more papers of rare cells (SAMPLE_RARE 10): none fewer; a
#: larger sample (250 a parameter: the eigenvalues 0.93-1.08) a gradient fewer, for 0.6 s more of its
#: informations (0.55 and 0.40 s where 0.21 and 0.10).  A stop when the
#: contraction (from successive decrements) times the step is under 2e-8: one gradient fewer for the RSM
#: at 21 of 200, complete 21 and the rubric, but estimates up to 4.2e-8 from a tight fit (the prediction
#: off by 2x): not taken.
#: rows of the blocks of a Cholesky factor's substitutions (:class:`_Cholesky`)
CHOLESKY_BLOCK = 64
#: a matrix of more rows than this is factored in place, by blocks of this many rows (:func:`_factor_in_place`;
#: numpy's Cholesky of the whole, as below it, takes two more arrays as large, its copy of the matrix and
#: its result: 1.8 GiB each at the 15,000 parameters of a PCM of 5,000 raters on 1-4)
FACTOR_BLOCK = 1024
#: a fit of P free coordinates holds at once one P x P array (the information, factored in place) or, where
#: a sample's phase carries its matrix into every paper's (SAMPLE_CARRY_MODELS), two; beside them blocks of
#: FACTOR_BLOCK rows: a fit that would need more than the process can have is refused before it starts
#: (:func:`_require_memory`), where numpy's MemoryError or the kernel would end it hours in
FIT_BLOCKS = 3
#: convergence, once BFGS updates take the iterations there, is confirmed by the information itself: above
#: FACTOR_BLOCK parameters by conjugate gradients on it (:func:`_confirm`), to a residual of CONFIRM_TOL of the
#: gradient, in at most CONFIRM_ITERATIONS products with it (P^2 flops each, where a factor is P^3 / 3: the
#: PCM of 2,000 raters on 1-4, 6,001 parameters, 19 products, 0.3 s, where its factor took 3.0 s; the Newton
#: step within 1.6e-15 of the factor's, relatively)
CONFIRM_TOL = 1e-13
CONFIRM_ITERATIONS = 100
#: a fit of more free coordinates than this is refused before it starts (:func:`_require_memory`): its information's
#: factor is P^3 / 3 operations a step, 3.0 s at the 6,001 of a PCM of 2,000 raters on 1-4, about 50 s at the 15,001
#: of 5,000 raters on 1-4 (benchmarks/README.md: it completes, 2.5 GB);
#: at 5,000 raters on 0-5 (25,001) an edge tester's fit had not ended after 300 s, nor said anything
MAX_PARAMETERS = 16_000
#: rows of the delta method's ``A cov A'`` at a time (:meth:`MMLFit._se`: a rows x parameters array each)
SE_ROWS = 1024
#: the start of sigma: the best of START_SIGMAS (in ascending order), found by climbing from SIGMA0 (:func:`_best_start`)
SIGMA0 = 2.0
START_SIGMAS = (0.7, 1.0, 1.4, 2.0, 2.8)


# ---------------------------------------------------------------------------------------
# the fit
# ---------------------------------------------------------------------------------------
@dataclass
class MMLFit:
    """What :func:`fit_mml` estimates (raters as in the ratings, rows of unrated raters nan).

    Centred so that the raters' mean severity is 0 (the paper distribution has mean
    ``theta_mean`` and sd ``sigma``) unless the layout is anchored (then on the anchors' scale).
    ``steps`` (J, M) rater j's step k (RSM: beta_j + kappa_k) at the facets' mean,
    ``thresholds`` (PCM: (J, M) steps minus the rater's severity; RSM: (M,) kappa, or (G, M) with
    thresholds per level of a facet), ``severity`` (J,), ``facet`` (L,) effects of the first
    further facet (empty without one), each with a model SE ``*_se``; ``estimates`` every block of
    the layout by name on the reported scale, ``effects`` the same as (estimate, SE); ``tau`` (J, K)
    cumulative parameters of each rater at the facets' mean, ``item_tau`` (U, K) of each item with
    ``items`` (U, 1 + F: rater, facet levels); ``eap``/``eap_sd`` per paper (nan: no ratings);
    ``loglik`` the marginal log-likelihood (without the priors); ``cov`` the covariance of the
    layout's free coordinates (:meth:`.mml_layout.Layout.free_map`) at ``phi``; ``layout`` with
    ``value`` the estimates (natural, before centring); ``patterns`` the papers with ratings, each
    one's pattern (papers with the same items and total score share one: a Rasch model's class,
    :class:`.mml_engine.GridEngine`) and the patterns' ratings (pattern, item, score: those of one
    of its papers): what depends on a paper only through its items and total (the posterior, the
    WLE) is computed once a pattern; what needs each rating's own score takes it from the ratings.

    The standard errors (``*_se``, ``effects``, ``cov``) are computed when first asked for, as
    statsmodels' results compute ``bse``: ``information`` is the observed information (-H, free
    coordinates), or a function giving it: the fit's last factor's (:meth:`_Cholesky.matrix`, from the
    array it was factored in) or, where the fit did not need every paper's (past 2 x SAMPLE_RATINGS ratings the
    iterations are steered by a sample's, :func:`_newton`), a function that computes it at the
    estimates: at a million ratings it costs as much as the fit's iterations, and ``adjust``
    shows no rater's SE.
    """

    model: str
    steps: np.ndarray
    thresholds: np.ndarray
    severity: np.ndarray
    facet: np.ndarray
    sigma: float
    theta_mean: float
    tau: np.ndarray
    item_tau: np.ndarray
    items: np.ndarray
    n_iter: int
    converged: bool
    unused: np.ndarray   # (J, K) bool: category never given (RSM: by no rater) -> prior-borne thresholds
    notes: list
    n_nodes: int = 0     # grid nodes of the final iterations
    estimates: dict = None
    layout: Layout = None
    patterns: tuple = None   # (papers, class of each, (class, item, score) of one paper's ratings a class)
    information: object = None   # -H (P, P) of the free coordinates, or a function giving it
    phi: np.ndarray = None       # the free coordinates' estimates
    seen: np.ndarray = None      # the raters with ratings (the rows of the per-rater arrays)
    #: g -> each pattern's posterior expectation of g(theta) (patterns x k), g a function of the reported
    #: quality at the nodes of the grid the fit ended on (nodes -> nodes x k); also the fit's last pass over
    #: every paper, which ``eap``, ``eap_sd`` and ``loglik`` read: :class:`_FinalPass`
    posterior: object = None

    @cached_property
    def _paper_posteriors(self):
        return self.posterior.papers()

    eap = property(lambda self: self._paper_posteriors[0], doc="each paper's EAP (posterior mean; nan: no ratings)")
    eap_sd = property(lambda self: self._paper_posteriors[1], doc="each paper's posterior sd (nan: no ratings)")
    loglik = property(lambda self: float(self.posterior.evaluation().ll),
                      doc="the marginal log-likelihood at the estimates (without the priors)")

    @cached_property
    @one_blas_thread
    def cov(self) -> np.ndarray:
        info = self.information() if callable(self.information) else self.information
        self.information = info   # (and the engines the function held are let go)
        w_, V = np.linalg.eigh(info)
        keep = w_ > w_.max() * 1e-12
        return (V[:, keep] / w_[keep]) @ V[:, keep].T

    def _se(self, rows):
        """Delta-method SEs of ``rows @ value`` (rows over the layout's natural vector: :class:`_Rows` or
        sparse): with ``rows C = A + 1 b'`` (C: the free map), ``diag(A cov A') + 2 A cov b + b' cov b``,
        ``A cov A'`` a block of rows at a time (never rows x P)."""
        rows = rows if isinstance(rows, _Rows) else _Rows(rows)
        C = self.layout.free_map()[0]
        A, b = (rows.S @ C).tocsr(), C.T @ rows.shift
        cov = self.cov
        cb = cov @ b
        var = 2.0 * (A @ cb) + float(b @ cb)
        for a in range(0, A.shape[0], SE_ROWS):
            Ab = A[a:a + SE_ROWS]
            var[a:a + Ab.shape[0]] += np.asarray(Ab.multiply(Ab @ cov).sum(axis=1)).ravel()
        return np.sqrt(np.maximum(var, 0.0))

    @cached_property
    def _standard_errors(self) -> dict:
        lay = self.layout
        J, M = lay.J, lay.M
        rows = reported_rows(lay)
        G = rows["G"]

        def per_rater(x, width=None):
            out = np.full((self.tau.shape[0],) + ((width,) if width else ()), np.nan)
            out[self.seen] = x.reshape((J, width) if width else (J,))
            return out

        thr = self._se(rows["thresholds"])
        thr = per_rater(thr, M) if lay.model == "pcm" else thr.reshape(M) if G == 1 else thr.reshape(G, M)
        effects = {b: (self.estimates[b], self._se(_block_rows(lay, b))) for b in lay.blocks}
        return {"severity": per_rater(self._se(rows["severity"])), "steps": per_rater(self._se(rows["steps"]), M),
                "thresholds": thr, "effects": effects,
                "facet": effects.get("facet0", (None, np.zeros(0)))[1],
                "sigma": float(self.sigma * self._se(_block_rows(lay, "log_sigma"))[0])}

    severity_se = property(lambda self: self._standard_errors["severity"], doc="(J,) SEs of ``severity``")

    def severity_wald(self, max_raters: int = WALD_MAX_RATERS) -> tuple[float, int] | None:
        """``(W, df)``: the Wald test that the raters' severities are all equal, with their covariance
        (``(rows C) cov (rows C)'``, :func:`reported_rows`), as :func:`.cml.rsm_severity_wald` for the CML's; None
        for fewer than two raters or more than ``max_raters`` (a raters x parameters array)."""
        lay = self.layout
        if not 2 <= lay.J <= max_raters:
            return None
        rows = reported_rows(lay)["severity"]
        C = lay.free_map()[0]
        F = np.asarray((rows.S @ C).todense()) + (C.T @ rows.shift)[None, :]
        return wald_all_equal(self.severity[self.seen], F @ self.cov @ F.T)
    steps_se = property(lambda self: self._standard_errors["steps"], doc="(J, M) SEs of ``steps``")
    thresholds_se = property(lambda self: self._standard_errors["thresholds"], doc="SEs of ``thresholds``")
    facet_se = property(lambda self: self._standard_errors["facet"], doc="(L,) SEs of ``facet``")
    sigma_se = property(lambda self: self._standard_errors["sigma"], doc="SE of ``sigma``")
    effects = property(lambda self: self._standard_errors["effects"],
                       doc="every block of the layout by name: (estimate, SE) on the reported scale")


def _block_rows(lay: Layout, name):
    """Rows over the natural vector picking block ``name`` (sparse)."""
    idx = lay.index(name)
    return sparse.csr_matrix((np.ones(idx.size), (np.arange(idx.size), idx)), shape=(idx.size, lay.n))


class _Rows:
    """Rows over the natural vector, a sparse part ``S`` each row plus one dense row ``shift`` (the
    centring on the raters' mean severity, which every row of a rater holds): ``S + 1 shift'``, not the
    dense array (each of the PCM's steps', thresholds' and severities' rows 288 MiB at 2,000 raters on
    1-4, 1.8 GiB at 5,000).  ``rows @ value`` and ``rows[k]`` (a dense row) as the array's."""

    def __init__(self, S, shift=None):
        self.S = sparse.csr_matrix(S)
        self.shift = np.zeros(self.S.shape[1]) if shift is None else np.asarray(shift, dtype=np.float64)

    def __matmul__(self, v):
        return self.S @ v + float(self.shift @ v)

    def __getitem__(self, k):
        return self.S[k].toarray().ravel() + self.shift

    def toarray(self):
        return self.S.toarray() + self.shift[None, :]


def _items(ratings: Ratings, facet):
    """Item of every rating, the items (U, 1 + F: compact rater, facet levels), the active raters
    and the facets' numbers of levels.  ``facet``: None, a level per rating, or (n, F) levels."""
    seen = np.flatnonzero(ratings.ratings_per_rater() > 0)
    rmap = np.full(ratings.n_raters, -1)
    rmap[seen] = np.arange(seen.size)
    if facet is None:
        f = np.zeros((ratings.n_ratings, 0), dtype=np.int64)
    else:
        f = np.asarray(facet, dtype=np.int64)
        f = f.reshape(f.shape[0], -1) if f.ndim else f
        if f.shape[0] != ratings.n_ratings or (f.size and f.min() < 0):
            raise ValueError("facet must give a non-negative level per rating (one column per facet)")
    levels = [int(f[:, c].max()) + 1 if f.size else 1 for c in range(f.shape[1])]
    if not levels:   # the items are the raters seen (what the numbering below gives, without its passes)
        return rmap[ratings.rater], np.arange(seen.size)[:, None], seen, levels
    key = np.column_stack([rmap[ratings.rater], f])
    dims = (max(seen.size, 1), *levels)
    if float(np.prod(dims, dtype=np.float64)) < 2.0 ** 62:   # the items numbered as unique_rows does, by one key
        ukey, item = distinct_keys(np.ravel_multi_index(tuple(key.T), dims), int(np.prod(dims)))
        return item, np.column_stack(np.unravel_index(ukey, dims)), seen, levels
    first, item, _ = unique_rows(key, max(seen.size, *levels, 1))
    return item, key[first], seen, levels


class _Objective:
    """The penalised log L of a layout over its free coordinates ``phi`` (value = C phi + offset)."""

    def __init__(self, eng: GridEngine, layout: Layout, sample: GridEngine | None = None, info_grid: bool = False):
        self.eng, self.layout, self.sample, self.info_grid = eng, layout, sample, info_grid
        self.C, self.offset = layout.free_map()
        U, M = eng.U, eng.M
        ls = layout.blocks["log_sigma"].start
        E = sparse.vstack([layout.B, sparse.csr_matrix(([1.0], ([0], [ls])), shape=(1, layout.n))]).tocsr()
        self.K = (E @ self.C).tocsr()            # free -> (tau[:, 1:], log sigma)
        self.R = sparse.csr_matrix(layout.penalty)
        self.RC = (self.R @ self.C).tocsr()
        self.pen = (self.RC.T @ self.RC).tocsr()   # (sparse: subtracted at its entries, :meth:`_project`)
        self.pen.sum_duplicates()
        self.U, self.M, self.ls = U, M, ls
        self.scale = 1.0   # log L (and its derivatives) times this: the sample's objective stands for every paper's
        #: the sample's phase (:meth:`on_sample`): its grid SAMPLE_NODE_RATIO's, and a grid made coarser after a step
        #: taken without evaluating the point again (:func:`_newton`)
        self.sample_phase = False
        self._item_rows()

    def _item_rows(self):
        """K's rows of each item as a dense (M, w) block over its w free coordinates (``cols``,
        padded with P), and its log sigma row ``ks``: what :meth:`.BlockHessian.project` takes."""
        U, M = self.U, self.M
        P = self.K.shape[1]
        Kt = self.K[:-1].tocoo()
        it = Kt.row // M
        key = it.astype(np.int64) * (P + 1) + Kt.col
        ukey = np.unique(key)
        item_of, col_of = ukey // (P + 1), ukey % (P + 1)
        first = np.searchsorted(item_of, np.arange(U))
        rank = np.arange(ukey.size) - first[item_of]
        w = int(rank.max()) + 1 if rank.size else 1
        self.cols = np.full((U, w), P, dtype=np.int64)
        self.cols[item_of, rank] = col_of
        self.Ku = np.zeros((U, M, w))
        pos = np.searchsorted(ukey, key)
        self.Ku[it, Kt.row % M, rank[pos]] = Kt.data
        self.ks = self.K[-1].toarray().ravel()
        self.P = P

    def value(self, phi):
        return self.C @ phi + self.offset

    @cached_property
    def _tau_normal(self):
        """The free coordinates that move tau (all but log sigma's) and the factor of their normal
        equations' matrix K'K (K's rows of tau), for :meth:`least_squares`: by its diagonal blocks
        (:class:`_DiagonalBlocks`) where no entry couples them and they are small (the PCM's, a rater's
        steps each: 1 ms where a Cholesky factor of the whole took 15 at 1,000 parameters), else
        :class:`_Cholesky`; with a ridge of 1e-12 of its mean diagonal where the layout leaves a direction
        of them free of the tau (none of the default layouts: the start is then near the least squares
        solution nearest 0, as LSQR's was)."""
        Kt = self.K[:-1].tocsc()
        used = np.flatnonzero(np.diff(Kt.indptr))
        Ku = Kt[:, used]
        N = (Ku.T @ Ku).tocsr()
        # blocks [a, b) of rows no entry couples to another's: every entry of rows < b in a column < b
        reach = np.maximum.accumulate(np.maximum.reduceat(N.indices, N.indptr[:-1])) if used.size else used
        ends = np.flatnonzero(reach == np.arange(used.size)) + 1
        small = used.size and np.diff(np.r_[0, ends]).max() <= CHOLESKY_BLOCK
        D = N.toarray()
        factor = (lambda A: _DiagonalBlocks(A, ends)) if small else _Cholesky
        try:
            return used, Ku, factor(D)
        except np.linalg.LinAlgError:
            return used, Ku, factor(D + 1e-12 * max(np.trace(D) / max(used.size, 1), 1.0) * np.eye(used.size))

    def least_squares(self, target):
        """The free coordinates whose tau (``tau[:, 1:]`` raveled) is nearest ``target`` in least squares, 0
        for those that move no tau (log sigma), by the normal equations (:attr:`_tau_normal`, factored
        once for every start)."""
        used, Ku, factor = self._tau_normal
        phi = np.zeros(self.K.shape[1])
        phi[used] = factor.solve(Ku.T @ target)
        return phi

    def tau(self, phi):
        v = self.value(phi)
        t = np.zeros((self.U, self.M + 1))
        t[:, 1:] = (self.layout.B @ v).reshape(self.U, self.M)
        return t, float(v[self.ls])

    def __call__(self, phi, level=0, moments=False, approx=False, on_sample=False):
        """(penalised log L, gradient, Hessian, complete-data Hessian, evaluation).  ``approx``
        (level 2): the Hessians of the sample engine's papers, scaled to all (where there is one);
        ``on_sample`` (level 0): the log L of the sample's papers (a start's, against another's)."""
        v = self.value(phi)
        tau, ls = self.tau(phi)
        sample = self.sample if approx and level == 2 else None
        if on_sample and level == 0 and self.sample is not None:
            self._same_grid()
            ev = self.sample.evaluate(tau, ls)
            rv = self.R @ v
            return ev.ll - 0.5 * float(rv @ rv), None, None, None, ev
        coarse = level == 2 and self.info_grid
        ev = self.eng.evaluate(tau, ls, level=1 if sample is not None or coarse else level, moments=moments)
        rv = self.R @ v
        ll = self.scale * ev.ll - 0.5 * float(rv @ rv)
        if level == 0:
            return ll, None, None, None, ev
        g = self.scale * (self.K.T @ ev.g) - self.RC.T @ rv
        if level == 1:
            return ll, g, None, None, ev
        H, Hem = self._hessians(tau, ls, ev, sample)
        return ll, g, H, Hem, ev

    def hessians(self, phi, ev, approx=False):
        """The Hessians (:meth:`_hessians`) at ``phi``, where ``ev`` is the engine's evaluation (its
        log L and gradient already known: they are not computed again)."""
        tau, ls = self.tau(phi)
        return self._hessians(tau, ls, ev, self.sample if approx else None)

    def on_sample(self) -> "_Objective":
        """The objective of the sample's papers alone, their log L scaled to every paper's (its optimum
        near the full one's, its Hessian the one that steers the full fit: :func:`_fit_on_grids`)."""
        sub = copy.copy(self)
        sub.eng, sub.sample = self.sample, None
        sub.scale = self.eng.mult.sum() / self.sample.mult.sum()
        sub.sample_phase = True
        return sub

    def _hessians(self, tau, ls, ev, sample=None):
        """The Louis and complete-data Hessians of the penalised log L (free coordinates): the sample's
        scaled to every paper (``sample`` given), else every paper's, on the information's grid
        (:func:`info_grid`, from the posteriors of ``ev``; coarser where it steers, SAMPLE_INFO_NODE_RATIO, and over
        where they lie, SAMPLE_INFO_TAIL: the sample's, or of the sample's papers alone, ``scale`` other than 1) or,
        without one, ``ev``'s own (level 2)."""
        scale, hev = self.scale, ev
        steers = sample is not None or self.scale != 1.0
        ratio, tail = (SAMPLE_INFO_NODE_RATIO, SAMPLE_INFO_TAIL) if steers else (INFO_NODE_RATIO, None)
        grid = info_grid(self.eng, ev, ratio, tail) if self.info_grid else None
        if sample is not None:
            self._same_grid()
            if grid is not None:
                sample.set_nodes(*grid)
            hev = sample.evaluate(tau, ls, level=2)
            scale = self.eng.mult.sum() / sample.mult.sum()
        elif grid is not None:
            keep = self.eng.z, self.eng.logw, self.eng.Q
            self.eng.set_nodes(*grid)
            try:
                hev = self.eng.evaluate(tau, ls, level=2)
            finally:
                self.eng.z, self.eng.logw, self.eng.Q = keep
        elif hev.H is None:
            hev = self.eng.evaluate(tau, ls, level=2)
        H = self._project(hev.H, scale)
        Hem = _CompleteData(self, hev.H_em, scale)
        if sample is not None:
            return self.scaled_to_complete(H, Hem, ev)
        return H, Hem

    def _project(self, h, scale):
        """``scale K' h K - pen`` (P, P) of a Hessian ``h`` of the engine (:meth:`.BlockHessian.project`),
        scaled and the priors subtracted in place: one P x P array (the memory of a PCM of thousands of
        raters, 288 MiB at 6,000 parameters)."""
        H = h.project(self.Ku, self.cols, self.ks, self.P)
        H *= scale
        pen = self.pen.tocoo()
        H[pen.row, pen.col] -= pen.data
        return H

    def scaled_to_complete(self, H, Hem, ev):
        """A sample's Hessians (:meth:`_hessians`) scaled to every paper's complete-data information:
        ``T H T`` with ``T`` the diagonal of ``sqrt(Hem_all / Hem)`` (``Hem_all`` every paper's
        complete-data Hessian, item by item, EM's: any evaluation of every paper's gradient, ``ev``,
        gives it for a few flops), and ``Hem_all`` as the complete-data Hessian.  The sample holds a
        handful of ratings of a rater's rare categories, and its information of their thresholds is off
        by about its complete-data part's relative error; scaled, the eigenvalues of its inverse times
        every paper's information (at the optimum, 1M ratings, PCM, SAMPLE_PER_PARAMETER 125) are
        0.91-1.10 at 3 of 200 raters a paper (0.82-1.35 unscaled), 0.89-1.13 at 21 of 200 (0.75-1.38),
        0.91-1.13 on the rubric (0.88-1.04; 98% of them 0.99-1.02, 0.88-1.03).  (Replacing the complete-data part, ``H - Hem +
        Hem_all``, did as well at 3 of 200 but was not negative definite on the rubric: along the shift
        of every item the information is a small difference of the two parts.)

        Along that shift (:attr:`_shift`: every paper's quality moved the other way) the information is
        ``sum_p (1 - var_p(z))`` a paper (less the priors'), a difference of two parts some hundred times
        larger at 21 raters a paper, and the scaling, a different ratio in each coordinate, took it off: the
        extreme eigenvalues above (SAMPLE_PER_PARAMETER 60: 0.82 and 1.23 at 21 of 200, 0.79 and 1.30 for the
        RSM) lay along it.  The sample's own curvature there (``H d`` before the scaling, its papers' weighted
        sum of their exact informations) is every paper's to 1e-4 (``d'H d``) and to 0.018 of the whole
        vector in the information's metric, where the scaled one's was 0.21: the scaled matrix is made that
        along it (:func:`_along`).  Then 0.93-1.14 at 21 of 200 (MFRM 0.79-1.30 -> 0.91-1.10), 0.97-1.06 for the
        rubric's PCM (0.92-1.14), 3 of 200 and the rubric's RSM as they were (0.87-1.14, 0.90-1.15): a gradient of every paper fewer for the RSM at 21
        of 200 (8 -> 7), the PCM's last decrement there 50 times smaller (3.8e-9 -> 7e-11 after the 5th step;
        its estimates 1.6e-9 from a tight fit where 4.4e-8), the other shapes the same.  (Correcting each
        item pair's block by the ratio of every paper's count of papers rated by both to the sample's,
        known from the design, put them within 6% of every paper's where 25% (10-90%), but broke the
        papers' balance along the shift and along the shifts of groups of raters: 0.68-1.66, and with
        the shift made exact 0.93-1.15; the sample's own curvature also along log sigma, each category's
        step of every rater or the shifts of groups of raters: no better or worse.)"""
        full = _CompleteData(self, ev.H_em, self.scale)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.sqrt(full.diagonal() / Hem.diagonal())
        t = np.where(np.isfinite(t) & (t > 0), t, 1.0)
        d = self._shift
        h = None if d is None else H @ d   # (the sample's own curvature along the shift, before the scaling)
        H *= t[:, None]   # (in place)
        H *= t[None, :]
        if h is not None:
            _along(H, d, h)
        return H, full

    @cached_property
    def _shift(self):
        """The free coordinates of the shift of every item's thresholds (``tau[u, k] += k``, every paper's
        quality the other way), or None where the layout has no such direction (anchored)."""
        k = np.tile(np.arange(1, self.M + 1, dtype=np.float64), self.U)
        d = self.least_squares(k)
        if not np.abs(self.K[:-1] @ d - k).max(initial=0.0) <= 1e-9 * self.M:
            return None
        return d

    def information(self, phi, ev):
        """-H of every paper at ``phi`` (``ev``: an evaluation there, whose posteriors choose the grid)."""
        tau, ls = self.tau(phi)
        if not self.info_grid:
            ev = self.eng.evaluate(tau, ls, level=2)
        H = self._hessians(tau, ls, ev)[0]
        return np.negative(H, out=H)

    def _same_grid(self):
        self.sample.z, self.sample.logw, self.sample.Q = self.eng.z, self.eng.logw, self.eng.Q

    @property
    def can_approx(self) -> bool:
        return self.sample is not None


class _CompleteData:
    """The complete-data Hessian ``scale K' h K - pen`` of an information (:meth:`_Objective._hessians`),
    made a P x P array (:meth:`dense`, or as numpy's array) only where it is used: the EM step's matrix
    where -H is not positive definite (:func:`_factor`), far from the optimum; :meth:`diagonal` alone for
    :meth:`_Objective.scaled_to_complete`.  (Projected at every information, it was one more P x P array
    and as many seconds as the information's own projection at 6,000 parameters.)"""

    def __init__(self, obj: _Objective, h, scale):
        self.obj, self.h, self.scale = obj, h, scale

    def dense(self):
        return self.obj._project(self.h, self.scale)

    def diagonal(self):
        obj = self.obj
        return self.scale * self.h.project(obj.Ku, obj.cols, obj.ks, obj.P, diagonal=True) - obj.pen.diagonal()

    def __array__(self, dtype=None, copy=None):
        return self.dense() if dtype is None else self.dense().astype(dtype)


def _start(obj: _Objective, counts, items, sigma0=SIGMA0):
    """Free coordinates where the fit starts: sigma = SIGMA0 and each item's cumulative log odds of
    its categories against its lowest (counts + 0.5), stretched by sqrt(1 + 0.346 sigma^2), the
    attenuation of logits by a normal quality (0.346 = (16 sqrt 3 / 15 pi)^2), fitted by least
    squares to the layout (so severities, facets and thresholds all start from the data)."""
    stretch = np.sqrt(1.0 + 0.346 * sigma0 ** 2)
    n = obj.eng.n_obs + 0.5
    target = (-np.log(n / n[:, :1])[:, 1:] * stretch).ravel()
    phi = obj.least_squares(target - obj.layout.B @ obj.offset)
    ls = obj.layout.index("log_sigma")[0]
    col = obj.C[ls].indices
    if col.size:   # log sigma free
        phi[col[0]] = np.log(sigma0)
    return phi


def _newton(obj: _Objective, phi, max_iter, stop, regrid: bool, carry=None, confirm: bool = True):
    """Newton-Raphson on the penalised log L (Louis information; the EM step where it is not
    negative definite), each step at most MAX_STEP logits and halved until log L rises.  The
    information is computed at the start and again only where a step failed or where the
    decrement fell by less than REUSE_GAIN in a step; in between it is carried forward by the BFGS
    update from the change of the gradient, after a halved step too (a gradient costs a fraction
    of the information: a 1M-rating rubric's 0.17 s against 2.7 s; from a Newton start the update
    keeps the convergence superlinear).  With
    ``regrid``, the grid follows the posteriors: where those at a new point need another grid
    (:func:`required_grid`), the iterations go on on that grid (log L and its gradient there; the
    information carried over; in the sample's phase, where the grid that resolved them is made coarser, the
    point's log L and gradient are the finer grid's, not evaluated again: 2 of its 8 gradients at 21 of 200
    raters a paper, 1M ratings).  Convergence (a Newton decrement under ``stop``) is
    confirmed with the information itself (unless not ``confirm``), which the report uses for the
    standard errors (at the last point but the final, tiny step).  Where the objective has a sample
    engine (past 2 x SAMPLE_RATINGS ratings), the informations that steer the iterations are the
    sample's (scaled to every paper: a fraction of the cost, 10-25 gradients' worth at 3 and 21 of
    200 raters a paper; computed at a point whose gradient is known, they need no evaluation of
    every paper; and scaled to every paper's complete-data information, :meth:`_Objective.scaled_to_complete`)
    and are taken afresh sooner (SAMPLE_REUSE_GAIN), and once where a matrix carried from the sample's
    phase (``carry``) brings the decrement under SAMPLE_REFRESH a parameter; convergence is then a decrement
    under ``stop`` by the sample's information or its update, and a step under SAMPLE_STEP_TOL, with no full information (the
    standard errors compute it when asked for).  ``carry``: (factor, updates, newton, kind) of the
    matrix to start from (:func:`_fit_on_grids`: the sample's).  Returns (phi, converged,
    iterations, a function giving the full information -H at the last point (:meth:`_Cholesky.matrix`:
    call it once the factor is no longer used) or None, (factor, updates, newton, kind,
    the last evaluation))."""
    it, grids = 0, 0
    # kind of the matrix: "full" (the information at phi), "approx" (the sample's, :class:`_Objective`), "bfgs" (updated)
    factor, updates, newton, kind = carry if carry is not None else (None, [], False, "full")
    info, last_dec, full_next, n_sample = None, np.inf, not obj.can_approx, 0
    ll = g = ev = None
    carried = carry is not None and obj.can_approx   # the matrix is the sample's phase's
    confirming = False   # the information is taken to confirm convergence
    while it < max_iter:
        it += 1
        if factor is None:   # (the last matrices let go before the next are made: P x P arrays each)
            info = state = None
        if factor is None and g is None and full_next:
            ll, g, H, Hem, ev = obj(phi, level=2)
        elif factor is None or g is None:
            if g is None:
                ll, g, _, _, ev = obj(phi, level=1)
            if factor is None:
                H, Hem = obj.hessians(phi, ev, approx=not full_next)
        if factor is None:
            if confirming:   # (where conjugate gradients confirm it, no factor: the information returned as it is)
                confirming, d = False, _confirm(H, g, stop)
                if d is not None:
                    return phi + d, True, it, H, (None, [], True, "full", ev)
            factor, newton = _factor(H, Hem)   # (H negated and factored in place: the information kept in it)
            carried = False
            info, kind, updates = (factor.matrix if newton else None), ("full" if full_next else "approx"), []
            H = Hem = None
            n_sample += kind == "approx"
            full_next = not obj.can_approx or n_sample >= MAX_SAMPLE_INFOS
        d = _bfgs_solve(factor, updates, g)
        if updates and not np.isfinite(d).all():   # the updates overflowed (no curvature left along a
            factor = None                          # diverging estimate): the information afresh
            continue
        dec = float(g @ d)   # twice the predicted gain of the Newton step
        state = (factor, updates, newton, kind, ev)
        near = kind == "full" or not obj.can_approx or np.max(np.abs(d), initial=0.0) < SAMPLE_STEP_TOL
        if newton and dec < stop and near:
            if kind == "full" or obj.can_approx or not confirm:   # converged: the last (tiny) step taken too
                return phi + d, True, it, info if kind == "full" else None, state
            factor, full_next, confirming = None, True, True   # confirmed by the information itself
            continue
        if kind == "bfgs" and dec > last_dec / (SAMPLE_REUSE_GAIN if obj.can_approx else REUSE_GAIN):   # the updates stall (flat directions): the information
            factor = None
            continue
        if carried and dec < SAMPLE_REFRESH * phi.size:   # near enough: the sample's information here
            factor = None
            continue
        last_dec = dec
        big = np.max(np.abs(d), initial=0.0)
        if big > MAX_STEP:
            d = d * (MAX_STEP / big)
        step = 1.0
        while True:   # (the gradient at once: the full step is the usual outcome)
            new = phi + step * d
            ll_new, g_new, _, _, ev_new = obj(new, level=1)
            if ll_new >= ll - 1e-12 * abs(ll) or step < 1e-6:
                break
            step /= 2.0
        if not ll_new >= ll - 1e-12 * abs(ll):   # no ascent left at numerical precision (or a step past it: nan)
            if kind != "full":
                factor, full_next = None, full_next or kind == "approx"   # try again with the information here
                continue
            return phi, newton, it, info if newton else None, state
        ll, ev = ll_new, ev_new
        ratio = SAMPLE_NODE_RATIO if obj.sample_phase else NODE_RATIO
        fine = _grid_suffices(obj.eng, ev, ratio)
        if regrid and grids < MAX_REGRIDS and not (fine and not _grid_excess(obj.eng, ev, ratio)):
            obj.eng.set_nodes(*required_grid(ev, GRID_MARGIN, ratio))   # the posteriors moved: log L and gradient on their grid
            grids += 1
            if not (fine and obj.sample_phase):   # (made coarser in the sample's phase: the finer grid's kept)
                ll, g_new, _, _, ev = obj(new, level=1)
        s_, y_ = new - phi, g - g_new             # the step, and the change of -gradient
        phi, g = new, g_new
        if not newton or not y_ @ s_ > 0:
            factor = None   # the information afresh at the new point
            continue
        updates.append((s_, y_, 1.0 / float(y_ @ s_)))
        kind = "bfgs"
    return phi, False, it, None, (factor, updates, newton, kind, ev)


def _along(H, d, h):
    """``H`` (negative definite) made ``h`` along ``d`` (``H d = h``), in place, by the BFGS update of its
    inverse's matrix with the pair (d, h): ``H - (H d)(H d)' / d'H d + h h' / h'd``, a block of rows at a time;
    left as it is where either curvature is not negative."""
    Hd = H @ d
    dHd, hd = float(d @ Hd), float(h @ d)
    if not (dHd < 0.0 and hd < 0.0):
        return
    U, V = np.column_stack([h / hd, Hd / -dHd]), np.column_stack([h, Hd])   # (H += U V': one BLAS product a
    P = H.shape[0]                                                         # block, 1.1 ms at 1,001 rows where
    for a in range(0, P, FACTOR_BLOCK):                                    # two outer products took 7)
        b = min(a + FACTOR_BLOCK, P)
        H[a:b] += U[a:b] @ V.T


def _confirm(H, g, stop):
    """``d`` of ``-H d = g`` where it confirms convergence (``g'd < stop``), for the information ``-H`` at a
    point BFGS updates took for converged: by conjugate gradients preconditioned by the inverses of its
    diagonal blocks of CHOLESKY_BLOCK rows, to a residual of CONFIRM_TOL of ``g`` (CONFIRM_ITERATIONS), where a
    factor of the information costs P^3 / 3 flops (then ``H`` is negated in place: the information).  None,
    ``H`` as it was, up to FACTOR_BLOCK parameters (its factor is cheap) and where they do not confirm it (a
    block or a curvature not positive, no convergence, or ``g'd`` at least ``stop``): then the information is
    factored, as it was before."""
    P = H.shape[0]
    if P <= FACTOR_BLOCK:
        return None
    np.negative(H, out=H)
    try:
        pre = _DiagonalBlocks(H, np.r_[np.arange(CHOLESKY_BLOCK, P, CHOLESKY_BLOCK), P])
    except np.linalg.LinAlgError:
        np.negative(H, out=H)
        return None
    g = np.asarray(g, dtype=np.float64)
    d, r = np.zeros(P), g.copy()
    z = pre.solve(r)
    p, rz, tol = z.copy(), float(r @ z), CONFIRM_TOL * float(np.linalg.norm(g))
    for _ in range(CONFIRM_ITERATIONS):
        Ap = H @ p
        curv = float(p @ Ap)
        if not curv > 0:
            break
        d += (rz / curv) * p
        r -= (rz / curv) * Ap
        if np.linalg.norm(r) <= tol:
            if float(g @ d) < stop and np.linalg.norm(g - H @ d) <= 10.0 * tol:   # (the residual itself)
                return d
            break
        z = pre.solve(r)
        rz, rz_old = float(r @ z), rz
        p = z + (rz / rz_old) * p
    np.negative(H, out=H)
    return None


def _bfgs_solve(factor, updates, g):
    """``B^-1 g`` for B the factored matrix after the BFGS updates ``(s, y, 1 / y's)`` (B s = y): the
    two-loop recursion (Nocedal & Wright 2006, algorithm 7.4) of the inverse updates, so that an
    updated B is never factored (P^3 / 3 flops an iteration: 18 ms at the PCM's 1,000 parameters)."""
    with np.errstate(over="ignore", invalid="ignore"):   # overflowed updates: nan, seen by the caller
        return _two_loop(factor, updates, np.array(g, dtype=np.float64))


def _two_loop(factor, updates, q):
    alphas = []
    for s, y, rho in reversed(updates):
        a = rho * float(s @ q)
        alphas.append(a)
        q -= a * y
    r = factor.solve(q)
    for (s, y, rho), a in zip(updates, reversed(alphas)):
        r += s * (a - rho * float(y @ r))
    return r


def _factor(H, Hem):
    """Cholesky factor of -H (Newton), or of -Hem (+ a ridge) where -H is not positive definite;
    a non-finite information (estimates run off to infinity) is a :class:`MethodError`, the
    numerical failure the fit documents, where scipy would raise a ValueError.  ``H`` is negated and
    factored in place (the information -H is the factor's :meth:`_Cholesky.matrix`; where it is not
    positive definite, ``H`` is left undefined), and ``Hem`` (an array or :class:`_CompleteData`) made
    only where it is used: no P x P array is copied."""
    if not all(np.isfinite(H[a:a + FACTOR_BLOCK]).all() for a in range(0, H.shape[0], FACTOR_BLOCK)):   # (by blocks)
        raise MethodError("the information matrix is not finite: the estimates diverged")
    np.negative(H, out=H)
    try:
        return _Cholesky(H, overwrite=True), True
    except np.linalg.LinAlgError:
        neg = Hem.dense() if isinstance(Hem, _CompleteData) else np.array(Hem, dtype=np.float64)
        if not np.isfinite(neg).all():
            raise MethodError("the information matrix is not finite: the estimates diverged") from None
        np.negative(neg, out=neg)
        P = neg.shape[0]
        neg[np.arange(P), np.arange(P)] += 1e-9 * max(np.trace(neg), 1.0) / P   # (a ridge)
        return _Cholesky(neg, overwrite=True), False


class _DiagonalBlocks:
    """Solves with a symmetric positive definite matrix ``A`` whose entries lie in the diagonal blocks
    ending at rows ``ends``: each block's inverse, taken once (after its Cholesky factor:
    :class:`numpy.linalg.LinAlgError` where it is not positive definite), the blocks of a size at once."""

    def __init__(self, A, ends):
        starts = np.r_[0, ends[:-1]]
        size = ends - starts
        self.groups = []
        for s in np.unique(size):
            idx = starts[size == s][:, None] + np.arange(s)
            B = A[idx[:, :, None], idx[:, None, :]]
            np.linalg.cholesky(B)
            self.groups.append((idx, np.linalg.inv(B)))

    def solve(self, q):
        x = np.empty(q.shape, dtype=np.float64)
        for idx, inv in self.groups:
            x[idx] = np.einsum("kij,kj->ki", inv, q[idx])
        return x


def _factor_in_place(A):
    """``A``'s lower triangle (diagonal included) overwritten by its Cholesky factor L (``A = L L'``, of the
    lower triangle: the strict upper one is neither read nor written), by blocks of FACTOR_BLOCK rows: each
    diagonal block numpy's Cholesky (:class:`numpy.linalg.LinAlgError` where not positive definite), the
    block column under it times the inverse of its factor, the lower triangle right of it less their products
    (a block of columns at a time).  Up to FACTOR_BLOCK rows, numpy's Cholesky of the whole (as before: the same
    numbers); a PCM of 2,000 raters on 1-4 (6,001 parameters) 3.0 s where numpy's 3.2, with no copy."""
    n = A.shape[0]
    for k in range(0, n, FACTOR_BLOCK):
        e = min(k + FACTOR_BLOCK, n)
        L11 = np.linalg.cholesky(A[k:e, k:e])
        # (the triangles by masks: indexing half a million entries took 8-28 ms at 1,001 rows, the Cholesky 20)
        np.copyto(A[k:e, k:e], L11, where=np.tri(e - k, dtype=bool))
        if e == n:
            return
        A[e:, k:e] = A[e:, k:e] @ np.linalg.inv(L11).T
        for j in range(e, n, FACTOR_BLOCK):
            je = min(j + FACTOR_BLOCK, n)
            Lj = A[j:je, k:e]
            D = A[j:je, j:je]
            np.subtract(D, Lj @ Lj.T, out=D, where=np.tri(je - j, dtype=bool))
            if je < n:
                A[je:, j:je] -= A[je:, k:e] @ Lj.T


class _Cholesky:
    """``A = L L'`` (numpy's Cholesky; :class:`numpy.linalg.LinAlgError` where ``A`` is not positive
    definite) and :meth:`solve`, by substitution a block of CHOLESKY_BLOCK rows at a time with the
    inverses of L's diagonal blocks (taken once, P^3 / 3 CHOLESKY_BLOCK^2 flops beside the factor's
    P^3 / 3).  scipy.linalg's cho_factor and cho_solve did this in LAPACK, but importing
    scipy.linalg cost every ``adjust -m MML/MFRM`` 0.07-0.1 s of CPU (scipy 1.17), more than the
    fit's factors and solves together (3 and 14 at 3 of 200 raters a paper, 1,000 parameters).

    ``L`` is the lower triangle of an array whose strict upper triangle is ``A``'s (:func:`_factor_in_place`):
    ``A`` itself with ``overwrite`` (no copy of it; :meth:`matrix` gives it back), else a copy."""

    def __init__(self, A, overwrite: bool = False):
        L = A if overwrite else np.array(A, dtype=np.float64)
        self.diagonal = L.diagonal().copy()
        _factor_in_place(L)
        self.L = L
        n = L.shape[0]
        self.cuts = list(zip(range(0, n, CHOLESKY_BLOCK), range(CHOLESKY_BLOCK, n + CHOLESKY_BLOCK, CHOLESKY_BLOCK)))
        self.inv = [np.linalg.inv(np.tril(L[a:b, a:b])) for a, b in self.cuts]

    def matrix(self):
        """The matrix factored, from the strict upper triangle and the diagonal kept (in the factor's array,
        which it overwrites: the factor is gone): the information the fit ends with, for its SEs."""
        A, n = self.L, self.L.shape[0]
        for a in range(0, n, FACTOR_BLOCK):
            b = min(a + FACTOR_BLOCK, n)
            A[b:, a:b] = A[a:b, b:].T
            D = A[a:b, a:b]
            np.copyto(D, D.T.copy(), where=np.tri(b - a, k=-1, dtype=bool))
        A[np.arange(n), np.arange(n)] = self.diagonal
        self.L = self.inv = None
        return A

    def solve(self, q):
        """``A^-1 q``: L y = q forward, then L' x = y backward."""
        L = self.L
        y = np.empty_like(q, dtype=np.float64)
        for (a, b), inv in zip(self.cuts, self.inv):
            y[a:b] = inv @ (q[a:b] - L[a:b, :a] @ y[:a])
        x = np.empty_like(y)
        for (a, b), inv in zip(reversed(self.cuts), reversed(self.inv)):
            x[a:b] = inv.T @ (y[a:b] - L[b:, a:b].T @ x[b:])
        return x


def required_grid(ev, finer: float = 1.0, ratio: float = NODE_RATIO) -> tuple:
    """(nodes, lo, hi): a grid over where the posteriors of evaluation ``ev`` lie (within +-SPAN) whose
    spacing resolves them: at most the 1% quantile of their sd (z units) / ``ratio`` (NODE_RATIO; the sample's
    phase: SAMPLE_NODE_RATIO) / ``finer``; MIN_NODES to MAX_NODES nodes."""
    lo, hi = max(-SPAN, ev.z_lo - 0.5), min(SPAN, ev.z_hi + 0.5)
    if not (np.isfinite(ev.z_sd_low) and ev.z_sd_low > 0 and hi > lo):
        return MAX_NODES, -SPAN, SPAN
    n = int(np.ceil((hi - lo) * ratio * finer / ev.z_sd_low)) + 1
    return int(min(max(n, MIN_NODES), MAX_NODES)), lo, hi


def _grid_suffices(eng: GridEngine, ev, ratio: float = NODE_RATIO) -> bool:
    """Does the engine's grid cover the posteriors of ``ev`` finely enough (:func:`required_grid`)?"""
    n, lo, hi = required_grid(ev, ratio=ratio)
    z = eng.z
    spacing = (z[-1] - z[0]) / max(z.size - 1, 1)
    fine = spacing <= (hi - lo) / max(n - 1, 1) * 1.0001 or eng.Q >= MAX_NODES
    return fine and z[0] <= max(-SPAN, ev.z_lo) + 1e-9 and z[-1] >= min(SPAN, ev.z_hi) - 1e-9


def info_grid(eng: GridEngine, ev, ratio: float = INFO_NODE_RATIO, tail=None) -> tuple:
    """(nodes, lo, hi): the grid of an information (the Hessians; :class:`_Objective` with
    ``info_grid``): the engine's range (``tail``: within ``tail`` sds of the posteriors of ``ev``),
    spacing at most the posteriors' 1% quantile sd / ``ratio`` (no finer than the engine's grid)."""
    lo, hi = float(eng.z[0]), float(eng.z[-1])
    if tail is not None and ev.where is not None and ev.where[0].size:
        mz, sd = ev.where
        lo, hi = max(lo, float(np.min(mz - tail * sd))), min(hi, float(np.max(mz + tail * sd)))
    if not (np.isfinite(ev.z_sd_low) and ev.z_sd_low > 0):
        return eng.Q, lo, hi
    n = int(np.ceil((hi - lo) * ratio / ev.z_sd_low)) + 1
    return int(min(max(n, MIN_NODES), eng.Q)), lo, hi


def _grid_excess(eng: GridEngine, ev, ratio: float = NODE_RATIO) -> bool:
    """Has the engine's grid more than COARSEN times the nodes the posteriors of ``ev`` need (with
    the margin of a grid made during the iterations)?  (A grid chosen where the posteriors were
    narrow, at the start's sigma, held 167 nodes at the end of a complete panel of 21 whose
    posteriors needed 111.)"""
    return eng.Q > COARSEN * required_grid(ev, GRID_MARGIN, ratio)[0]


def _best_start(obj: _Objective, starts, known=None, first: int = 0):
    """The start with the highest log L (of the sample's papers where the objective has a sample) along
    ``starts`` (in the order of their sigmas), found by climbing from the ``first``: to the neighbour below
    while its log L rises, else to the one above while it rises, the rest not evaluated.  Over the sigmas of
    START_SIGMAS log L had one peak on every shape tried (at an end: 0.7 at 2 and 3 of 200 raters a paper,
    2.8 at 21 of 200, 1M ratings, MML and MFRM alike), where the climb finds the best of them all in 3 and
    2 evaluations of the sample's papers where every start took 4 (0.02-0.025 s each at 21 of 200).  Its
    evaluation's places of the posteriors are left in the engine, where the iterations' first evaluation, at
    that start, finds its windows (:meth:`.mml_engine.GridEngine._windows`): placed by the last start's
    posteriors (another sigma), 28 of the 33 windows of the sample's papers missed at 3 of 200 raters a
    paper, 1M ratings, and were done again on the whole grid.  ``known``: the first start's log L and
    places, from an evaluation on a grid that resolved its posteriors (:func:`_fit_on_grids`: not evaluated
    again)."""
    eng = obj.sample if obj.sample is not None else obj.eng
    found = {}

    def ll(i):
        if i not in found:
            value, where = known if i == first and known is not None else (obj(starts[i], on_sample=True)[0], None)
            found[i] = value, where or (eng._where, eng._moved)
        return found[i][0]
    best = first
    ll(first)
    for step in (-1, 1):
        while 0 <= best + step < len(starts) and ll(best + step) > ll(best):
            best += step
        if best != first:
            break
    eng._where, eng._moved = found[best][1]
    return starts[best]


def _fit_on_grids(obj: _Objective, starts, n_nodes, max_iter, tol, n_scale, first: int = 0):
    """From the best of ``starts`` (by log L, :func:`_best_start` from ``starts[first]``; of the sample's
    papers where the objective has a sample), Newton on ``n_nodes`` nodes or, by default, on a grid for the
    posteriors at the first start (chosen twice: a coarse grid misjudges narrow ones; by the sample's papers where there is
    one), which then follows the posteriors (:func:`_newton`).  Where there is a sample, the sample's
    papers alone (their log L scaled to every paper's) are fitted first, to a decrement of
    SAMPLE_PHASE_TOL x (k - 1) a parameter (k papers a sampled one; the PCM's weighted sample:
    SAMPLE_PHASE_TOL), on their own grid (coarser: SAMPLE_NODE_RATIO; the start's too): the
    iterations far from the optimum, their line searches and regrids cost a sample's evaluations,
    not every paper's (at 1M ratings, 6-10 evaluations of every paper fewer, and none on a start's
    grid, made for the start's narrow posteriors: 166 nodes at 21 raters a paper where the fit
    ends on 120); every paper's then starts from there, on the grid the sample's posteriors ask
    for (seldom made again) and with the sample's last matrix (its information and BFGS updates),
    until the sample's information is taken afresh near the optimum (SAMPLE_REFRESH); the RSM's
    take it afresh at once, on the grid the sample's posteriors at the end of its phase ask for
    (SAMPLE_CARRY_MODELS)."""
    regrid = n_nodes is None
    known = None
    ratio = SAMPLE_NODE_RATIO if obj.can_approx else NODE_RATIO
    if regrid:
        for _ in range(2):
            ll0, *_, ev0 = obj(starts[first], on_sample=True)
            suffices = _grid_suffices(obj.eng, ev0, ratio)
            n, lo, hi = required_grid(ev0, ratio=ratio)
            obj.eng.set_nodes(min(n, START_GROWTH * obj.eng.Q) if obj.can_approx else n, lo, hi)
        if suffices:   # (the second grid resolved the first start's posteriors: its log L is known)
            eng = obj.sample if obj.sample is not None else obj.eng
            known = ll0, (eng._where, eng._moved)
    phi = _best_start(obj, starts, known, first)
    if not obj.can_approx:
        return _newton(obj, phi, max_iter, tol * n_scale, regrid)[:4]
    sub = obj.on_sample()
    near = SAMPLE_PHASE_TOL * max(sub.scale - 1.0, 1.0) * phi.size
    phi, _, it, _, (factor, updates, newton, kind, ev) = _newton(sub, phi, max_iter, near, regrid, confirm=False)
    fresh = obj.layout.model not in SAMPLE_CARRY_MODELS   # every paper's phase takes nothing of the sample's
    if regrid and ev is not None:   # (fresh: the posteriors at the sample's phase's end, not before its last step)
        obj.eng.set_nodes(*required_grid(obj(phi, on_sample=True)[4] if fresh else ev, GRID_MARGIN))
    carry = (factor, updates, newton, "approx" if kind == "full" else kind) if factor is not None and not fresh else None
    phi, converged, it2, info, _ = _newton(obj, phi, max(max_iter - it, 1), tol * n_scale * SAMPLE_TOL, regrid, carry)
    return phi, converged, it + it2, info


@one_blas_thread
def fit_mml(ratings: Ratings, model: str = "pcm", facet=None, n_nodes: int | None = None, max_iter: int = 200,
            tol: float = 1e-9, step_sd: float = PRIOR_STEP_SD, location_sd: float = PRIOR_LOCATION_SD,
            threshold_facet: int | None = None, anchor=None) -> MMLFit:
    """Fit the PCM (``model="pcm"``) or RSM/MFRM (``"rsm"``) by MML (module docstring).

    ``facet``: optional levels (0..L-1) per rating of further facets (a vector: one facet; (n, F):
    F facets); ``threshold_facet``: RSM thresholds per level of that facet; ``anchor``: a function
    given the default :class:`.mml_layout.Layout` (blocks named there) that fixes or frees entries
    (``lambda lay: lay.fix("severity", 3, 0.5)``).  ``n_nodes``: grid nodes (default: chosen so the
    grid resolves the papers' posteriors).  Raises :class:`MethodError` only for designs that cannot
    be put on one scale (raters not linked through shared papers) or with no ratings; otherwise
    always returns estimates (``converged`` False and a note when ``max_iter`` was reached).  The linear
    algebra runs on one BLAS thread (:func:`~ratercal_cli.parallel.one_blas_thread`).
    """
    from ..network import consecutive_links, require_connected

    name = f"MML ({model.upper()})"
    if ratings.n_ratings == 0:
        raise MethodError(f"{name}: no ratings")
    require_connected(ratings, name, links=consecutive_links(ratings.paper, ratings.rater, ratings.n_raters))
    K = ratings.max_score + 1
    item, items, seen, levels = _items(ratings, facet)
    eng = GridEngine(ratings.paper, item, ratings.score, items.shape[0], K, n_nodes or MIN_NODES)
    # each active rater's ratings of each score, its items' summed (its index among them is an item's first
    # column): from the engine's counts, not from every rating again (3 arrays the size of the ratings, 4 ms)
    counts = np.zeros((seen.size, K))
    np.add.at(counts, items[:, 0], eng.n_obs)
    layout = make_layout(model, items, seen.size, levels, K - 1, threshold_facet, used=counts > 0,
                         step_sd=step_sd, location_sd=location_sd)
    if anchor is not None:
        anchor(layout)
    sample = _sample_engine(ratings, item, eng, layout.n, per_score=layout.model == "pcm")
    _require_memory(name, layout, carried=sample is not None and layout.model in SAMPLE_CARRY_MODELS)
    if sample is not None:   # its posteriors place every paper's on the grid at the first evaluation, whose
        eng.guide, eng.window_tail = sample, NEAR_TAIL   # iterations start near the optimum: small steps
    obj = _Objective(eng, layout, sample, info_grid=n_nodes is None)
    # the start: the layout fitted to the items' log odds at the best of a few sigmas (log L alone)
    starts = [_start(obj, counts, items, s0) for s0 in START_SIGMAS]
    phi, converged, it, info = _fit_on_grids(obj, starts, n_nodes, max_iter, tol, max(eng.papers.size, 1),
                                             START_SIGMAS.index(SIGMA0))
    fit = _report(ratings, obj, phi, converged, it, counts, seen, items, step_sd, info)
    obj.sample = None   # (the fit may keep obj for its SEs: every paper's information, computed anew)
    eng.release(passes=False)   # (the patterns' rows stay for the fit's last pass, _FinalPass, which lets go of them)
    return fit


def _require_memory(name, layout: Layout, carried: bool):
    """A :class:`MethodError` where the fit's P x P arrays (FIT_BLOCKS) need more memory than this process
    can have (:func:`.config.memory_left`): a PCM of thousands of raters (each rater M thresholds) can."""
    from ..config import memory_left

    P = int(layout.free_map()[0].shape[1])
    need = 8.0 * P * ((2 if carried else 1) * P + FIT_BLOCKS * FACTOR_BLOCK)
    have = memory_left()
    what = (f"-m MFRM (the rating scale model: one set of thresholds shared by every rater, {layout.J + layout.M:,} "
            "parameters)" if layout.model == "pcm" else "fewer raters or facet levels a fit")
    if P > MAX_PARAMETERS:
        raise MethodError(f"{name}: {P:,} parameters are more than the {MAX_PARAMETERS:,} a fit takes here: each of "
                          f"its steps factors a {P:,} x {P:,} matrix, {P ** 3 / 3e12:,.0f} trillion operations "
                          f"(minutes to hours a step on one core); use {what}")
    if have is None or need <= have:
        return
    raise MethodError(f"{name}: {P:,} parameters need {need / 2 ** 30:.1f} GiB for the information matrix "
                      f"({P:,} x {P:,}), more than the {max(have, 0) / 2 ** 30:.1f} GiB this process can have; "
                      f"use {what}")


def _sample_engine(ratings: Ratings, item, eng: GridEngine, n_params: int, per_score: bool = True):
    """An engine of every k-th rated paper (about SAMPLE_RATINGS ratings, at least SAMPLE_PER_PARAMETER
    a parameter), each standing for k papers, and of every paper with a rating in a rare cell (an item's
    score it gave fewer than SAMPLE_RARE x k times: every k-th paper would hold a handful of them or
    none; not ``per_score``, the RSM's, whose items have no thresholds of their own: an item with fewer
    ratings than that), each standing for itself; for the information that steers the iterations
    (:func:`_newton`), or None where the ratings are fewer than twice that."""
    k = min(ratings.n_ratings // max(SAMPLE_RATINGS, SAMPLE_PER_PARAMETER * n_params), eng.papers.size)
    if k < 2:
        return None
    n = eng.n_obs if per_score else np.repeat(eng.n_obs.sum(axis=1, keepdims=True), eng.K, axis=1)
    rare = (n < SAMPLE_RARE * k).ravel()
    whole = np.zeros(ratings.n_papers, dtype=bool)
    if rare.any():   # (no rare cell, as for the RSM's items at 1M ratings: no pass over the ratings, 3 ms)
        whole[ratings.paper[rare[item * eng.K + ratings.score]]] = True
    keep = whole.copy()
    keep[eng.papers[::k]] = True
    sel = keep[ratings.paper]
    return GridEngine(ratings.paper[sel], item[sel], ratings.score[sel], eng.U, eng.K, eng.Q,
                      weight=np.where(whole, 1.0, k) if whole.any() else None)


def _step_rows(lay: Layout):
    """Rows over the natural vector, before centring, of each rater's steps at the facets' mean
    (J*M, n) and, for the RSM, of the thresholds (G*M, n) with G; (steps, None, 1) for the PCM."""
    J, M, n = lay.J, lay.M, lay.n
    fmean = np.zeros(n)
    for f in range(lay.items.shape[1] - 1):
        fmean[lay.index(f"facet{f}")] = 1.0 / lay.shapes[f"facet{f}"][0]
    if lay.model == "pcm":
        return _Rows(_block_rows(lay, "steps"), fmean), None, 1
    G = lay.shapes["thresholds"][0]
    thr = _block_rows(lay, "thresholds")
    thr_mean = sparse.csr_matrix((np.full(G * M, 1.0 / G), (np.tile(np.arange(M), G), lay.index("thresholds"))),
                                 shape=(M, n))   # (each threshold's mean over the groups)
    steps = lay.severity_rows[np.repeat(np.arange(J), M)] + thr_mean[np.tile(np.arange(M), J)]
    return _Rows(steps, fmean), _Rows(thr), G


#: sweeps of the additive fit of the raters' steps (:func:`_panel_offsets`; a few dozen where raters share categories)
PANEL_SWEEPS = 1000


def _panel_offsets(lay: Layout, stp) -> np.ndarray:
    """(J,) what each PCM rater's severity (the mean of its steps between the lowest and highest category it
    gave, :func:`.mml_layout._severity_rows`) holds of the categories it gave rather than of the rater: the
    mean over its steps of the panel's step there, from an additive fit ``step[j, k] = s_j + d_k`` of the
    raters' steps on the steps each rater spans (least squares, by alternating means from ``d = 0``), centred
    over the raters.  A severe rater who never gave the top score has no top step, the largest: the mean of
    its steps was lower by about half a step than a rater's who gave every score, and the severities of
    raters of 30 ratings each (2 of 8 raters a paper, 120 papers, scores 0-5 by the PCM with shared steps)
    came out at 0.5 of their true spread (a researcher's check of the library); less these, 0.9-1.0.  Zero
    where every rater spans every step (then the mean of its steps is ``s_j`` already).  Constants of the
    fit (no SE of theirs: the panel's steps are means over many raters)."""
    J, M = lay.J, lay.M
    S = lay.severity_rows.tocsr()
    rows = np.repeat(np.arange(J), np.diff(S.indptr))
    spans = np.zeros((J, M), dtype=bool)
    spans[rows, S.indices - lay.blocks["steps"].start - rows * M] = True
    if spans.all() or not spans.any():
        return np.zeros(J)
    T = np.where(spans, np.reshape(stp, (J, M)), 0.0)
    n_j, n_k = spans.sum(axis=1), spans.sum(axis=0)
    d = np.zeros(M)
    for _ in range(PANEL_SWEEPS):
        s_ = ((T - d) * spans).sum(axis=1) / np.maximum(n_j, 1)
        new = np.where(n_k > 0, ((T - s_[:, None]) * spans).sum(axis=0) / np.maximum(n_k, 1), 0.0)
        done = np.max(np.abs(new - d)) < 1e-12
        d = new
        if done:
            break
    off = (spans * d).sum(axis=1) / np.maximum(n_j, 1)
    return off - off.mean()


def reported_rows(lay: Layout) -> dict:
    """Each reported quantity as rows over the layout's natural vector (``value``), on the reported
    scale (raters centred unless anchored): ``severity`` (J, n), ``steps`` (J*M, n), ``thresholds``
    (PCM: J*M, steps about the rater's severity; RSM: G*M), each a :class:`_Rows`, ``theta_mean``
    (1, n) and ``G`` (the RSM's threshold groups).  The estimates are ``rows @ value`` and their covariance
    ``(rows C) cov (rows C)'`` (C: :meth:`.mml_layout.Layout.free_map`): the fit's standard errors and
    :meth:`.results.FitResults.cov_params` are of these rows."""
    n = lay.n
    steps, thr, G = _step_rows(lay)
    sev = lay.severity_rows
    c_row = np.zeros(n) if lay.anchored() else np.asarray(sev.mean(axis=0)).ravel()
    mu_row = np.zeros(n)
    mu_row[lay.index("theta_mean")] = 1.0
    thresholds = _Rows(steps.S - sev[np.repeat(np.arange(lay.J), lay.M)], steps.shift) if lay.model == "pcm" else thr
    return {"severity": _Rows(sev, -c_row), "steps": _Rows(steps.S, steps.shift - c_row), "thresholds": thresholds,
            "theta_mean": (mu_row - c_row)[None, :], "G": G, "centre": c_row, "mean": mu_row}


def _report(ratings, obj: _Objective, phi, converged, it, counts, seen, items, step_sd, info=None) -> MMLFit:
    """The fit's reported quantities: centred estimates, EAPs, notes (the delta-method SEs when asked
    for, :class:`MMLFit`).  ``info``: the information (-H) the fit ended with (else computed when an SE
    is asked for)."""
    lay, eng = obj.layout, obj.eng
    v = obj.value(phi)
    J, M, K = lay.J, lay.M, lay.M + 1
    rows_ = reported_rows(lay)
    G = rows_["G"]
    sev = rows_["severity"] @ v
    stp = rows_["steps"] @ v
    thr_ = rows_["thresholds"] @ v
    if lay.model == "pcm" and not lay.anchored():   # each rater against the panel's steps in its own categories
        shift_ = _panel_offsets(lay, stp)
        sev, thr_ = sev - shift_, thr_ + np.repeat(shift_, M)
    if lay.model != "pcm":
        thr_ = thr_.reshape(M) if G == 1 else thr_.reshape(G, M)
    estimates = {b: _block_rows(lay, b) @ v for b in lay.blocks}
    gam = estimates.get("facet0", np.zeros(0))
    c = float(rows_["centre"] @ v)
    shift = float(rows_["mean"] @ v) - c   # reported theta = engine theta + shift
    Jall = ratings.n_raters

    def per_rater(x, width=None):
        out = np.full((Jall,) + ((width,) if width else ()), np.nan)
        out[seen] = x.reshape((J, width) if width else (J,))
        return out

    tau_r = np.full((Jall, K), np.nan)
    tau_r[seen, 0] = 0.0
    tau_r[seen, 1:] = np.cumsum(stp.reshape(J, M), axis=1)
    tau_eff, log_sigma = obj.tau(phi)
    item_tau = tau_eff + shift * np.arange(K)[None, :]
    sigma = float(np.exp(log_sigma))
    unused, notes = _unused_notes(ratings, lay.model, counts, seen, step_sd)
    if not converged:
        notes.append(f"MML ({lay.model.upper()}): not converged after {it} iterations; estimates are the last iterate")
    items_out = np.column_stack([seen[items[:, 0]], items[:, 1:]])
    final = _FinalPass(eng, tau_eff, log_sigma, shift, ratings.n_papers)
    return MMLFit(model=lay.model, steps=per_rater(stp, M), thresholds=per_rater(thr_, M) if lay.model == "pcm" else thr_,
                  severity=per_rater(sev), facet=gam, sigma=sigma, theta_mean=shift,
                  tau=tau_r, item_tau=item_tau, items=items_out,
                  n_iter=it, converged=converged, unused=unused, notes=notes, n_nodes=int(eng.Q),
                  estimates=estimates, layout=lay, patterns=(eng.papers, eng.pattern, _PatternRatings(eng)),
                  information=partial(_information, obj, phi, final) if info is None else info, phi=phi, seen=seen,
                  posterior=final)


class _PatternRatings:
    """The third of :attr:`MMLFit.patterns`, the patterns' ratings ``(pattern, item, score)``
    (:meth:`.mml_engine.GridEngine.pattern_ratings`), made when first unpacked: only Warm's WLE reads
    them, which ``adjust`` does not (3 arrays the size of the ratings: 7-16 ms at 1M ratings)."""

    def __init__(self, eng: GridEngine):
        self.eng, self.ratings = eng, None

    def __iter__(self):
        if self.ratings is None:
            self.ratings, self.eng = self.eng.pattern_ratings(), None
        return iter(self.ratings)


class _FinalPass:
    """The fit's last pass over every paper at its estimates (:attr:`MMLFit.posterior`): log L and each
    pattern's posterior mean and sd (``loglik``, ``eap``, ``eap_sd``), made when first asked for, on the
    grid the fit ended on and its windows (:meth:`.mml_engine.GridEngine._windows`) as they were then, and
    kept.  Called with ``g`` (a function of the reported quality ``sigma z + shift`` at the grid's nodes:
    nodes -> nodes x k), each pattern's posterior expectations of it (patterns x k), taken in that same
    pass where ``g`` asks first (or :meth:`along` named it before), and kept for a ``g`` with the same
    values at the nodes: the EAPs and the paper SEs' fair-score moments
    (:meth:`MarginalRaterModel.fair_score_sd`) are one pass over every paper, where they were two
    (0.07 s at 1M ratings, 3 of 200 raters a paper).  Another ``g`` is a pass of its own, on the same
    nodes."""

    def __init__(self, eng: GridEngine, tau, log_sigma, shift, n_papers):
        self.eng, self.tau, self.log_sigma, self.shift, self.n_papers = eng, tau, log_sigma, shift, n_papers
        self.state = eng.z, eng.logw, eng.Q, eng.places()   # (the grid and its windows' places)
        self.ev = self._g = self._G = self._E = None

    def theta(self):
        """The reported quality at the grid's nodes."""
        return np.exp(self.log_sigma) * self.state[0] + self.shift

    def _pass(self, G=None):
        eng = self.eng
        keep = eng.z, eng.logw, eng.Q
        eng.z, eng.logw, eng.Q, places = self.state
        eng.restore(places)
        try:
            return eng.evaluate(self.tau, self.log_sigma, moments=True, G=G)
        finally:
            eng.z, eng.logw, eng.Q = keep
            eng.release()

    def along(self, g) -> None:
        """Take the posterior expectations of ``g`` in the pass, if it is still to be made."""
        self._g = g

    def evaluation(self):
        """The pass (an :class:`.mml_engine.Evaluation` with the patterns' posterior moments)."""
        if self.ev is None:
            G = None if self._g is None else np.asarray(self._g(self.theta()), dtype=np.float64)
            self.ev = self._pass(G)
            if G is not None:
                self._G, self._E = G, self.ev.posterior
            self._g = None
        return self.ev

    def papers(self):
        """(eap, eap_sd) of every paper (nan: no ratings), on the reported scale."""
        ev, eng = self.evaluation(), self.eng
        eap = np.full(self.n_papers, np.nan)
        eap_sd = np.full(self.n_papers, np.nan)
        eap[eng.papers] = ev.eap[eng.pattern] + self.shift
        eap_sd[eng.papers] = ev.eap_sd[eng.pattern]
        return eap, eap_sd

    def __call__(self, g):
        if self.ev is None:
            self.along(g)
            self.evaluation()
        G = np.asarray(g(self.theta()), dtype=np.float64)
        if self._G is None or G.shape != self._G.shape or not np.array_equal(G, self._G):
            self._G, self._E = G, self._pass(G).posterior
        return self._E


def _information(obj: _Objective, phi, final: _FinalPass):
    """:attr:`MMLFit.information` computed when asked for: every paper's at ``phi`` (on a grid chosen
    by the posteriors of the fit's last pass)."""
    return obj.information(phi, final.evaluation())


def _unused_notes(ratings, model, counts, seen, step_sd):
    """(J, K) unused categories and the notes naming them (by their scores on the file's scale: a 1-6
    file's category 0 is the score 1)."""
    Jall, K = ratings.n_raters, counts.shape[1]
    low = getattr(ratings, "scale_low", 0)
    unused = np.zeros((Jall, K), dtype=bool)
    notes = []
    prior = f"rest on the weak prior N(0, {step_sd:g}^2) on adjacent threshold differences"
    if model == "pcm":
        unused[seen] = counts == 0
        which = [f"{ratings.rater_ids[j]}: {','.join(f'{k + low:g}' for k in np.flatnonzero(counts[jj] == 0))}"
                 for jj, j in enumerate(seen) if (counts[jj] == 0).any()]
        if which:
            notes.append(f"categories never given by rater ({'; '.join(which)}): the thresholds next to them {prior}")
    else:
        none = counts.sum(axis=0) == 0
        unused[seen] = none[None, :]
        if none.any():
            ks = ",".join(f"{k + low:g}" for k in np.flatnonzero(none))
            notes.append(f"categories {ks} given by no rater: the shared thresholds next to them {prior}")
    return unused, notes


def _settled_engine(paper, item, score, U, K, tau, log_sigma, n_nodes=None):
    """An engine for fixed parameters, on ``n_nodes`` nodes or on a grid that resolves the
    posteriors there (refined until it does), and its evaluation with the posterior moments."""
    eng = GridEngine(paper, item, score, U, K, n_nodes or MIN_NODES)
    for _ in range(MAX_REGRIDS):
        ev = eng.evaluate(tau, log_sigma, moments=True)
        if n_nodes is not None or _grid_suffices(eng, ev):
            break
        eng.set_nodes(*required_grid(ev))
    return eng, ev


def marginal_loglik(ratings: Ratings, tau, sigma, n_nodes: int | None = None):
    """The marginal log-likelihood of ``ratings`` at rater parameters ``tau`` (n_raters, K)
    (cumulative, ``tau[:, 0] = 0``) and quality ``N(0, sigma^2)``, by the grid of the fit
    (``n_nodes`` nodes, or as many as resolve the posteriors)."""
    tau = np.asarray(tau, dtype=np.float64)
    return _settled_engine(ratings.paper, ratings.rater, ratings.score, ratings.n_raters, ratings.max_score + 1,
                           tau, float(np.log(sigma)), n_nodes)[1].ll


# ---------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------
#: :class:`MarginalRaterModel`'s fitted attributes at Warm's WLE, computed the first time one is read
#: (:class:`.base.DeferredFit`)
WLE_ATTRIBUTES = ("quality_wle_", "quality_wle_se_", "extreme_", "rating_expected_", "rating_variance_", "rater_fit_")


def _facet_codes(facet, n_ratings: int) -> np.ndarray:
    """``fit(ratings, facet=...)``: a level a rating (0, 1, ...; a column a facet), as int64; else an
    ArgumentError saying what it must be (it was numpy's reshape or int() error)."""
    from ..errors import ArgumentError

    arr = np.asarray(facet)
    if arr.ndim not in (1, 2) or arr.shape[0] != n_ratings:
        raise ArgumentError("facet", f"needs a level for each of the {n_ratings} ratings (an array of {n_ratings} "
                            f"rows, a column a facet), not shape {arr.shape}")
    if arr.dtype.kind not in "iub" or (arr.size and arr.min() < 0):
        raise ArgumentError("facet", "levels are codes 0, 1, ... (Ratings.from_frame(..., facet_cols=[...]) makes "
                            f"them: ratings.facet_levels()), not {arr.dtype} values")
    return arr.astype(np.int64)


def _own_facets(ratings: Ratings):
    """``(levels, {facet: labels})`` of the ratings' own facets (:meth:`Ratings.facet_levels`) where one of
    them has two or more levels among the ratings, else ``(None, {})`` (one criterion's ratings, as a rubric's
    methods within a cell take them: no effect to fit)."""
    if not any(np.unique(levels).size > 1 for levels, _ in ratings.facets.values()):
        return None, {}
    return ratings.facet_levels(), {name: tuple(labels) for name, (_, labels) in ratings.facets.items()}


def _facets_as_fitted(ratings: Ratings, fitted: dict, code: str):
    """The levels (codes of the fit's) of these ratings' facets that fit took from its ratings (``fitted``:
    ``{facet: labels}``), matched by label; a :class:`MethodError` where a facet or a level is missing."""
    cols = []
    for name, labels in fitted.items():
        if name not in ratings.facets:
            raise MethodError(f"{code}: the fit had the facet {name!r}, these ratings have none (give transform "
                              f"facet= levels, or ratings read with facet_cols=[{name!r}])")
        levels, own = ratings.facets[name]
        at = {v: k for k, v in enumerate(labels)}
        unknown = sorted({own[k] for k in np.unique(levels).tolist()} - set(at), key=str)
        if unknown:
            raise MethodError(f"{code}: {name} {', '.join(map(str, unknown[:5]))} not among the levels fitted "
                              f"({', '.join(map(str, labels))})")
        cols.append(np.array([at.get(v, -1) for v in own], dtype=np.int64)[levels])
    return cols[0] if len(cols) == 1 else np.column_stack(cols)


class MarginalRaterModel(DeferredFit, RaterAdjuster):
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

    ``clusters`` (a cluster 0..C-1 per paper: a school, or a group of papers found in the rater-paper
    network, :mod:`ratercal_cli.practice.assignment`) makes the model multi-group: each cluster's papers
    have their own mean quality (a normal distribution of common sd about each cluster's mean; TAM's
    ``tam.mml(group=)`` with equal variances, mirt's ``multipleGroup`` with free means).  Fitted as a
    further facet whose levels are the clusters (a paper is in one cluster, so its effect is the
    cluster's latent mean, negated; it sums to 0 over the clusters, the raters' scale unchanged),
    then each paper's quality is moved by its cluster's effect, so that qualities, EAPs and fair
    scores are on the one scale of the raters: where papers of different quality went to different
    raters (one school read by its own pair of raters), a single normal distribution takes a weak
    school's papers for a severe pair of raters; the cluster means take that difference instead.
    ``cluster_mean_``/``cluster_mean_se_`` (C,) the clusters' mean qualities.

    ``fair_raters`` (rater indices) restricts the mean-rater average to those raters: an anchored fit
    averages over the anchored raters, so its fair score is last year's average rater's, whoever
    else rated this year, and equals the free fit's when the anchors are the free fit's estimates.
    ``fair_shift`` ({rater index: logits}) moves those raters' severities in that average only: a
    rater freed from its anchor because it drifted enters last year's average rater at its anchor
    (``practice/anchors.py``), not at this year's measure, nor is it left out of it.

    Fitted attributes (a Facets-style report reads these; raters' rows nan where they have no
    ratings): ``severity_``/``severity_se_`` (logits, centred), ``steps_``/``steps_se_`` (J, M),
    ``thresholds_``/``thresholds_se_`` (PCM: (J, M) steps about the rater's severity; MFRM: (M,)
    shared), ``facet_``/``facet_se_``, ``sigma_``/``sigma_se_``, ``theta_mean_``, ``tau_`` (J, K),
    ``quality_eap_``/``quality_eap_se_`` (posterior sd), ``quality_wle_``/``quality_wle_se_``,
    ``extreme_`` (-1/0/+1 per paper), ``quality_``/``quality_se_`` (the one used),
    ``rating_expected_``/``rating_variance_`` (per rating, at the paper's WLE, as Facets' residuals
    use the paper's measure), ``rater_fit_`` (infit/outfit over non-extreme papers) (these six at the WLE,
    :data:`WLE_ATTRIBUTES`, are computed the first time one is read: the fair scores need none of them),
    ``loglik_``, ``converged_``, ``n_iter_``, ``n_nodes_`` (quadrature nodes at the end), ``notes_`` and
    ``warnings_`` (unused categories),
    ``result_`` (the :class:`MMLFit`).  ``step_sd``/``location_sd``: the weak priors' sds (module
    docstring; 1e6 turns them off).  :meth:`results` lays the estimates out as a
    :class:`.results.FitResults`; ``rater_frame()`` shows its rater rows.
    """

    needs_multiple_raters = True
    deferred_attributes = WLE_ATTRIBUTES
    steps_se_ = property(lambda est: est.result_.steps_se)
    thresholds_se_ = property(lambda est: est.result_.thresholds_se)
    severity_se_ = property(lambda est: est.result_.severity_se)
    facet_se_ = property(lambda est: est.result_.facet_se if est.facet_.size else np.zeros(0))
    sigma_se_ = property(lambda est: est.result_.sigma_se)
    cluster_mean_se_ = property(lambda est: est.result_.effects[est._cluster_block][1])
    #: the rows of the reported quantities (:func:`reported_rows`), for :mod:`.results`
    reported_rows = staticmethod(reported_rows)

    @property
    def code(self):
        return "MFRM" if self.model == "rsm" else "MML"

    def __init__(self, model: str = "pcm", quality: str = "eap", fair: str = "mean-rater", n_nodes: int | None = None,
                 threshold_facet: int | None = None, anchor=None, fair_raters=None, clusters=None,
                 fair_shift=None, step_sd: float = PRIOR_STEP_SD, location_sd: float = PRIOR_LOCATION_SD):
        self.model = model
        self.clusters = clusters
        self.step_sd = step_sd
        self.location_sd = location_sd
        self.quality = quality
        self.fair = fair
        self.fair_raters = fair_raters
        self.fair_shift = fair_shift
        self.n_nodes = n_nodes
        self.threshold_facet = threshold_facet
        self.anchor = anchor

    def _fit(self, ratings: Ratings, facet=None) -> None:
        check_quality(self.quality, ("eap", "wle"))
        for name in ("step_sd", "location_sd"):   # a bad sd is the caller's error, not a fit failing on its data
            check_positive(getattr(self, name), name)
        check_choice(self.fair, FAIR_RATERS, "fair")
        n_nodes = check_count(self.n_nodes, "n_nodes", 3, optional=True)   # (-3 was linspace's error; 0 taken as None)
        self.facet_labels_ = {}
        if facet is None:   # the ratings' own facets (``facet_cols``), as rc.fit and --facet-col fit them
            facet, self.facet_labels_ = _own_facets(ratings)
        elif ratings.facets and np.array_equal(facet, ratings.facet_levels()):   # (rc.fit's: transform finds them too)
            self.facet_labels_ = {name: tuple(labels) for name, (_, labels) in ratings.facets.items()}
        facet = None if facet is None else _facet_codes(facet, ratings.n_ratings)
        n_user = 0 if facet is None else facet.reshape(ratings.n_ratings, -1).shape[1]
        facet = self._with_clusters(ratings, facet)
        res = fit_mml(ratings, model=self.model, facet=facet, n_nodes=n_nodes,
                      threshold_facet=self.threshold_facet, anchor=self.anchor, step_sd=self.step_sd,
                      location_sd=self.location_sd)
        self.result_ = res
        for name in ("steps", "thresholds", "severity", "facet", "sigma", "theta_mean", "tau", "converged",
                     "n_iter", "n_nodes"):   # (the SEs: properties reading res when asked for)
            setattr(self, name + "_", getattr(res, name))
        self.notes_ = list(res.notes)
        self.warnings_ = [n for n in res.notes if n.startswith("categories ")]
        shift = np.zeros(ratings.n_papers)
        if self.clusters is not None:   # each paper's quality on the raters' scale: less its cluster's effect
            self._cluster_block = f"facet{n_user}"
            gam = res.estimates[self._cluster_block]
            if n_user == 0:
                self.facet_ = np.zeros(0)
            self.cluster_mean_ = self.theta_mean_ - gam
            shift = self._cluster_shift(ratings.n_papers)
        # the fit's last pass over every paper (log L, the EAPs) takes the paper SEs' moments along
        res.posterior.along(self._fair_and_square(ratings.n_papers)[0])
        self.loglik_ = res.loglik
        self.quality_eap_, self.quality_eap_se_ = res.eap - shift, res.eap_sd
        self._defer((ratings, facet, shift))
        if self.quality == "eap":
            self.quality_, self.quality_se_ = self.quality_eap_, res.eap_sd
        else:
            self.quality_, self.quality_se_ = self.quality_wle_, self.quality_wle_se_

    def _fit_deferred(self, state) -> None:
        """Warm's WLE of the papers just fitted, and at it each rating's expected score and variance and
        the raters' infit/outfit (Facets' residuals use the paper's measure): what the reports, ``check``
        and the shrinkage level ``none`` read, not the fair scores at the EAP, so they are computed the
        first time one of them is read (1.3-3 s of an ``adjust -m MML`` at 1M ratings, issue 32)."""
        from ..fit_stats import rater_fit

        ratings, facet, shift = state
        res = self.result_
        theta_w, se_w, extreme = self._wle_by_pattern(ratings.n_papers)
        self.quality_wle_, self.quality_wle_se_, self.extreme_ = theta_w - shift, se_w, extreme
        p = category_probabilities(theta_w[ratings.paper], res.item_tau[self._item_of(ratings, facet)])
        self.rating_expected_, self.rating_variance_ = moments(p)[:2]
        self.rater_fit_ = rater_fit(p, ratings.score, ratings.rater, ratings.n_raters,
                                    mask=extreme[ratings.paper] == 0)

    def _cluster_shift(self, n_papers):
        """Each paper's cluster effect (the multi-group model: its quality is the engine's less it; 0
        without clusters or for a paper in none)."""
        if self.clusters is None:
            return np.zeros(n_papers)
        cl = np.asarray(self.clusters, dtype=np.int64)
        return np.where(cl >= 0, self.result_.estimates[self._cluster_block][np.maximum(cl, 0)], 0.0)

    def fair_score_sd(self):
        """Each paper's posterior SD of its fair score (:meth:`fair_scores` of its quality): of the fair
        score at the nodes of the fit's grid under the paper's posterior there, as ``quality_eap_`` and
        ``quality_eap_se_`` are its quality's posterior mean and SD (nan: no ratings).  Computed once a
        pattern of ratings (:attr:`MMLFit.patterns`), the fair score at the nodes once a cluster."""
        res = self.result_
        papers, pattern = res.patterns[:2]
        g, which = self._fair_and_square(self.quality_eap_.size)
        E = res.posterior(g)   # (taken in the fit's last pass: :meth:`_fit`)
        out = np.full(self.quality_eap_.size, np.nan)
        if which is None:   # one cluster: once a pattern
            out[papers] = np.sqrt(np.maximum(E[:, 1] - E[:, 0] * E[:, 0], 0.0))[pattern]
            return out
        k = E.shape[1] // 2
        m1, m2 = E[pattern, which], E[pattern, k + which]
        out[papers] = np.sqrt(np.maximum(m2 - m1 * m1, 0.0))
        return out

    def _fair_and_square(self, n_papers):
        """(g, which): ``g`` of the quality at nodes (nodes x 2k) each cluster's fair score there, then its
        square (the paper's quality is the engine's less its cluster's effect), and each rated paper's
        cluster among the k (None: one, without clusters), for :meth:`fair_score_sd`."""
        if self.clusters is None:
            levels, which = np.zeros(1), None
        else:
            papers = self.result_.patterns[0]
            levels, which = np.unique(self._cluster_shift(n_papers)[papers], return_inverse=True)
            which = which.ravel()

        def fair_and_square(theta):
            f = np.column_stack([np.asarray(self.fair_scores(theta - c), dtype=np.float64) for c in levels])
            return np.hstack([f, f * f])
        return fair_and_square, which

    def _with_clusters(self, ratings: Ratings, facet):
        """``facet`` with each rating's paper's cluster as a further (last) facet column."""
        if self.clusters is None:
            return facet
        cl = np.asarray(self.clusters, dtype=np.int64)
        if cl.shape != (ratings.n_papers,):
            raise ValueError(f"clusters must give a cluster per paper ({ratings.n_papers}), not {cl.shape}")
        col = cl[ratings.paper]
        if ratings.n_ratings and col.min() < 0:
            raise ValueError("clusters: a rated paper has no cluster (-1)")
        if facet is None:
            return col
        return np.column_stack([facet.reshape(ratings.n_ratings, -1), col])

    def _wle_by_pattern(self, n_papers):
        """Warm's WLE, its SE and ``extreme`` of every paper of the ratings just fitted, solved once
        for each pattern of ratings (:attr:`MMLFit.patterns`; nan and 0 for papers without ratings)."""
        return quality_by_pattern(self.result_.patterns, n_papers, self.result_.item_tau, quality="wle")

    def _item_of(self, ratings: Ratings, facet):
        """Index into ``result_.item_tau`` of every rating ((rater, facet levels) of the fit)."""
        items = self.result_.items
        dims = (ratings.n_raters,) + tuple(int(x) for x in items[:, 1:].max(axis=0, initial=0) + 1)
        f = np.zeros((ratings.n_ratings, 0), dtype=np.int64) if facet is None else np.asarray(facet, dtype=np.int64)
        f = f.reshape(ratings.n_ratings, -1)
        if f.shape[1] != items.shape[1] - 1:
            raise MethodError(f"{self.code}: {f.shape[1]} facets given, the fit had {items.shape[1] - 1}: give "
                              "transform (and paper_quality) the facet= levels of these ratings, as fit had them")
        if f.size and (f.min() < 0 or (f >= np.array(dims[1:])).any()):
            raise MethodError(f"{self.code}: facet levels outside those fitted")
        fitted = np.ravel_multi_index(tuple(items.T), dims)
        order = np.argsort(fitted)
        key = np.ravel_multi_index((ratings.rater,) + tuple(f.T), dims)
        pos = np.minimum(np.searchsorted(fitted[order], key), fitted.size - 1)
        item = np.where(fitted[order][pos] == key, order[pos], -1)
        if (item < 0).any():
            raise MethodError(f"{self.code}: {int((item < 0).sum())} ratings by a rater in a facet level the fit "
                              "never saw")
        return item

    def average_tau(self):
        """Cumulative parameters (K,) of the average rater (severity 0, the mean steps)."""
        steps = np.atleast_2d(self.thresholds_).mean(axis=0) if self.model == "rsm" else np.nanmean(self.steps_, axis=0)
        return np.r_[0.0, np.cumsum(steps)]

    def fair_scores(self, theta):
        """Fair score at each quality ``theta`` (see the class docstring)."""
        theta = np.asarray(theta, dtype=np.float64)
        if self.fair == "average-rater":
            return expected_score(theta, self.average_tau())
        rows = np.arange(len(self.tau_)) if self.fair_raters is None else np.asarray(self.fair_raters, dtype=np.int64)
        tau = self.tau_[rows]
        if self.fair_shift:   # tau's row j is k * severity_j + the thresholds' sums: a shift adds k * shift
            d = np.array([float(self.fair_shift.get(int(j), 0.0)) for j in rows])
            tau = tau + d[:, None] * np.arange(tau.shape[1])[None, :]
        return mean_expected_score(theta, tau[np.isfinite(tau).all(axis=1)])

    def paper_quality(self, ratings: Ratings, facet=None):
        """(quality, se) of every paper of ``ratings`` under the fitted model (nan: no ratings); ``facet`` as
        fit had it, or (where fit took the ratings' own facets) these ratings' levels, matched by label."""
        if facet is None and getattr(self, "facet_labels_", None):
            facet = _facets_as_fitted(ratings, self.facet_labels_, self.code)
        if self.clusters is not None:
            facet = self._with_clusters(ratings, None if facet is None else np.asarray(facet, dtype=np.int64))
        item = self._item_of(ratings, facet)
        tau = self.result_.item_tau
        shift = self._cluster_shift(ratings.n_papers)
        if self.quality == "wle":
            theta, se, _ = estimate_quality(ratings.paper, item, ratings.score, ratings.n_papers, tau, quality="wle")
            return theta - shift, se
        theta = np.full(ratings.n_papers, np.nan)
        se = np.full(ratings.n_papers, np.nan)
        if ratings.n_ratings:
            K = tau.shape[1]
            # the engine's qualities have mean 0: shift the reported parameters back
            eng, ev = _settled_engine(ratings.paper, item, ratings.score, tau.shape[0], K,
                                      tau - self.theta_mean_ * np.arange(K), float(np.log(self.sigma_)), self.n_nodes_)
            theta[eng.papers] = ev.eap[eng.pattern] + self.theta_mean_
            se[eng.papers] = ev.eap_sd[eng.pattern]
        return theta - shift, se

    def paper_scores_by_shrinkage(self, ratings: Ratings) -> dict:
        """The study's two shrinkage levels of the papers' fair scores on the data just fitted
        (:mod:`.shrinkage`): ``none`` at Warm's WLE quality (unshrunk), ``kelley`` at the EAP
        (shrunk toward the mean by the fitted normal distribution), whatever ``quality`` says."""
        return {"none": fair_score_adjusted(ratings, self.fair_scores(self.quality_wle_)).paper,
                "kelley": fair_score_adjusted(ratings, self.fair_scores(self.quality_eap_)).paper}

    def _transform(self, ratings: Ratings, training: bool, facet=None) -> Adjusted:
        """Every rating of a paper gets the paper's fair score (the fit's qualities for its own data)."""
        theta = self.quality_ if training else self.paper_quality(ratings, facet)[0]
        return fair_score_adjusted(ratings, self.fair_scores(theta))
