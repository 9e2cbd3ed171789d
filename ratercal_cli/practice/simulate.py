"""The study brought to a ratings file (issue 23): ``ratercal check FILE --simulate R``.

The corrected study ranks the methods on the 1990 factorial; a file's design is rarely one of its
cells.  :func:`simulate_design` fits the rater model to the file and replicates *that* design:

1. **Fit** the partial credit model with rater-specific steps by marginal maximum likelihood
   (:class:`~ratercal_cli.methods.mml.MarginalRaterModel`, ``MML``): each rater's cumulative
   category parameters ``tau_j`` (its severity and spread) and the papers' quality distribution
   ``N(mu, sigma^2)``.
2. **Simulate** replication ``k`` from ``SeedSequence(seed, spawn_key=(group key, k))``: a quality
   ``theta_i ~ N(mu, sigma^2)`` per paper, and for every (paper, rater) pair of the file -- the
   same assignment, third readings included -- a score drawn from
   ``P(x | theta_i, tau_j) = exp(x theta_i - tau_j[x]) / sum_h exp(h theta_i - tau_j[h])``, on the
   file's scale.  A paper's true score is the mean over the fitted raters of their expected score
   at its quality (the corrected study's definition).
3. **Apply** the methods (:func:`~ratercal_cli.methods.apply.apply_methods`) at both shrinkage
   levels (:mod:`ratercal_cli.methods.shrinkage`) and score them with the study's criteria
   (:func:`ratercal_cli.criteria.score_sets`): RMSE, the worst decile's conditional bias and the
   decision accuracy at the cut.
4. **Rank** the methods within each shrinkage level by mean RMSE with its Monte Carlo standard
   error, and give each one's paired difference from the best with its 95% interval
   (:mod:`ratercal_cli.montecarlo.statistics`); a method that failed on some replications is
   not ranked (its mean is over the replications it could fit).

Replications run in ``jobs`` processes (:func:`ratercal_cli.parallel.ordered_map`) with the same
numbers as in one: each depends on its own seed only.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ..criteria import score_sets
from ..errors import MethodError
from ..generators.modern import cell_key
from ..methods import make_method
from ..methods.base import FIT_FAILURES
from ..ratings import Ratings
from ..vocabulary import SHRINKAGES, STUDY_METHODS

#: The criteria of the ranking table.
CRITERIA = ("rmse", "cbias_worst", "accuracy")
DEFAULT_SEED = 19900601


@dataclass(frozen=True)
class DesignModel:
    """A file's design and the rater model fitted to it (picklable: the workers get it)."""

    paper: np.ndarray        # the file's (paper, rater) pairs, in its order
    rater: np.ndarray
    n_papers: int
    n_raters: int
    max_score: int
    tau: np.ndarray          # (J, M+1) cumulative category parameters per rater
    mu: float                # quality distribution N(mu, sigma^2)
    sigma: float

    @classmethod
    def fit(cls, ratings: Ratings) -> "DesignModel":
        """Fit MML (PCM) to ``ratings``; raises :class:`MethodError` where it cannot (one rater per
        paper, unlinked raters)."""
        est = make_method("MML").fit(ratings)
        tau = np.asarray(est.tau_, dtype=np.float64)
        if not np.isfinite(tau).all():
            raise MethodError("the rater model has raters without parameters (no ratings)")
        return cls(ratings.paper.copy(), ratings.rater.copy(), ratings.n_papers, ratings.n_raters,
                   ratings.max_score, tau, float(est.theta_mean_), float(est.sigma_))

    def simulate(self, seed: int, key: int, replication: int):
        """``(ratings, true scores)`` of one replication (module docstring, step 2)."""
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key, replication)))
        theta = self.mu + self.sigma * rng.standard_normal(self.n_papers)
        t = self.tau[self.rater]                                    # (n ratings, K)
        x = np.arange(t.shape[1], dtype=np.float64)
        logit = x * theta[self.paper][:, None] - t
        logit -= logit.max(axis=1, keepdims=True)
        p = np.exp(logit)
        p /= p.sum(axis=1, keepdims=True)
        u = rng.random(self.paper.size)
        score = (np.cumsum(p, axis=1)[:, :-1] < u[:, None]).sum(axis=1)
        from ..methods.quality import mean_expected_score

        true = mean_expected_score(theta, self.tau)
        return Ratings(self.paper, self.rater, score, self.max_score, self.n_papers, self.n_raters), true


@dataclass
class SimulationResult:
    """The ranking of the methods for one file's design."""

    replications: int
    seed: int
    cut: float | None                  # on the file's scale
    model: DesignModel
    columns: list                      # [(shrinkage, method)]
    values: np.ndarray                 # (replications, columns, criteria) nan: failed
    errors: dict = field(default_factory=dict)   # (shrinkage, method) -> (count, first reason)
    scale_low: int = 0                 # the file's lowest score (ratings hold score - scale_low)

    def rows(self) -> list:
        """Per column: means ± MCSE of :data:`CRITERIA`, rank within its shrinkage level, the
        paired RMSE difference from the level's best with its 95% interval, failures."""
        from ..montecarlo.statistics import mean_mcse_rows, t_interval

        mu, se, n = mean_mcse_rows(np.moveaxis(self.values, 0, -1))          # (columns, criteria)
        out = []
        for s in dict.fromkeys(c[0] for c in self.columns):
            idx = [i for i, c in enumerate(self.columns) if c[0] == s]
            ok = [i for i in idx if np.isfinite(self.values[:, i, 0]).all()]
            order = sorted(ok, key=lambda i: (mu[i, 0], i))
            best = order[0] if order else None
            for i in idx:
                rec = {"shrinkage": s, "method": self.columns[i][1], "n": int(n[i, 0]),
                       "failed": int(self.replications - n[i, 0]),
                       "rank": order.index(i) + 1 if i in order else None}
                for k, c in enumerate(CRITERIA):
                    rec[c], rec[c + "_mcse"] = float(mu[i, k]), float(se[i, k])
                if best is not None and i != best:
                    d = self.values[:, i, 0] - self.values[:, best, 0]
                    dm, dse, dn = mean_mcse_rows(d[None])
                    lo, hi = t_interval(dm, dse, dn)
                    rec["vs_best"] = {"method": self.columns[best][1], "diff": float(dm[0]),
                                      "ci": [float(lo[0]), float(hi[0])]}
                else:
                    rec["vs_best"] = None
                if self.columns[i] in self.errors:
                    rec["error"] = self.errors[self.columns[i]][1]
                out.append(rec)
        return out

    def to_dict(self) -> dict:
        return {"replications": self.replications, "seed": self.seed, "cut": self.cut,
                "model": {"quality_mean": self.model.mu, "quality_sd": self.model.sigma,
                          "papers": self.model.n_papers, "ratings": int(self.model.paper.size)},
                "methods": self.rows()}

    def format_text(self) -> str:
        cut = "" if self.cut is None else f", decision accuracy at {self.cut:g}"
        lines = [f"Simulated study of this design: {self.replications} replications (seed {self.seed}) of the "
                 f"file's {self.model.n_papers} papers and {self.model.paper.size} ratings, same papers-to-raters "
                 f"assignment, each rater's steps and the quality distribution N({self.model.mu:.2f}, "
                 f"{self.model.sigma:.2f}^2) fitted by MML{cut}; ranked by mean RMSE ± Monte Carlo SE within a "
                 "shrinkage level; 'vs best': the paired RMSE difference with its 95% interval.",
                 f"  {'shrinkage':<9} {'method':<8} {'RMSE':>16} {'rank':>4}  {'vs best (95% CI)':<30} "
                 f"{'worst-decile bias':>18}" + (f" {'accuracy':>16}" if self.cut is not None else "")]
        for r in self.rows():
            vs = "" if r["vs_best"] is None else (f"{r['vs_best']['diff']:+.4f} [{r['vs_best']['ci'][0]:+.4f}, "
                                                  f"{r['vs_best']['ci'][1]:+.4f}]")
            rank = "-" if r["rank"] is None else str(r["rank"])
            line = (f"  {r['shrinkage']:<9} {r['method']:<8} {r['rmse']:>7.4f} ± {r['rmse_mcse']:.4f} {rank:>4}  "
                    f"{vs:<30} {r['cbias_worst']:>10.3f} ± {r['cbias_worst_mcse']:.3f}")
            if self.cut is not None:
                line += f" {r['accuracy']:>8.4f} ± {r['accuracy_mcse']:.4f}"
            if r["failed"]:
                line += f"  (failed {r['failed']} of {self.replications}: {r.get('error', '')})"
            lines.append(line)
        return "\n".join(lines)


def _replicate(model, methods, shrinkages, cut, seed, key, replication):
    """Criteria ``(columns, criteria)`` of one replication and ``{column: reason}`` of its failures."""
    from ..methods.apply import apply_methods
    from ..methods.shrinkage import shrunk_papers

    ratings, true = model.simulate(seed, key, replication)
    values = np.full((len(shrinkages) * len(methods), len(CRITERIA)), np.nan)
    errors = {}
    applied = apply_methods(ratings, methods, "corrected")
    for a, s in enumerate(shrinkages):
        for b, code in enumerate(methods):
            if code not in applied.adjusted:
                errors[(s, code)] = applied.skipped.get(code, "failed")
                continue
            try:
                paper = shrunk_papers(applied.estimators[code], ratings, applied.adjusted[code].paper, (s,))[s]
            except FIT_FAILURES as exc:
                errors[(s, code)] = f"{type(exc).__name__}: {exc}"
                continue
            c = score_sets(paper[None], true[None], cut)
            values[a * len(methods) + b] = [c[k][0] if k in c else np.nan for k in CRITERIA]
    return values, errors


def simulate_design(ratings: Ratings, replications: int, cut: float | None = None, methods=None,
                    seed: int = DEFAULT_SEED, group=None, jobs: int = 1, scale_low: int = 0,
                    shrinkages=SHRINKAGES) -> SimulationResult:
    """Fit, simulate, apply and rank (module docstring).  ``cut`` is on the file's scale, whose
    lowest score ``scale_low`` is the ratings' 0.  Raises :class:`MethodError` when the rater model
    cannot be fitted."""
    from ..parallel import ordered_map

    model = DesignModel.fit(ratings)
    one_rater = ratings.max_raters_per_paper() < 2
    methods = [m for m in (methods or STUDY_METHODS) if not (one_rater and make_method(m).needs_multiple_raters)]
    key = cell_key("" if group is None else str(group))
    inner = None if cut is None else float(cut) - scale_low
    fn = functools.partial(_replicate, model, tuple(methods), tuple(shrinkages), inner, int(seed), key)
    results = ordered_map(fn, range(int(replications)), jobs)
    columns = [(s, m) for s in shrinkages for m in methods]
    values = np.stack([v for v, _ in results])
    errors = {}
    for _, errs in results:
        for col, reason in errs.items():
            count, first = errors.get(col, (0, reason))
            errors[col] = (count + 1, first)
    return SimulationResult(int(replications), int(seed), None if cut is None else float(cut), model, columns, values,
                            errors, scale_low)


def simulate_groups(ratings: Ratings, replications, cut=None, seed=None, jobs=1, methods=None) -> list:
    """:func:`simulate_design` of every group of ``ratings`` (:meth:`Ratings.by_group`): per group the
    :class:`SimulationResult`, or the one-line reason it could not run (the rater model could not be
    fitted).  Each group has its own seeds (its label is part of them)."""
    out = []
    for name, g in ratings.by_group():
        try:
            out.append(simulate_design(g, replications, cut=cut, methods=methods,
                                       seed=DEFAULT_SEED if seed is None else seed, group=name, jobs=jobs,
                                       scale_low=ratings.scale_low))
        except FIT_FAILURES as exc:
            out.append(f"Simulated study of this design: not run, the rater model (MML) cannot be fitted: {exc}")
    return out
