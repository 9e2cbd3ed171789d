"""The study brought to a ratings file (issue 23): ``ratercal check FILE --simulate R``.

The corrected study ranks the methods on the 1990 factorial; a file's design is rarely one of its
cells.  :func:`simulate_design` fits the rater model to the file and replicates *that* design:

1. **Fit** the partial credit model with rater-specific steps by marginal maximum likelihood
   (:class:`~ratercal_cli.methods.mml.MarginalRaterModel`, ``MML``): each rater's cumulative
   category parameters ``tau_j`` (its severity and spread) and the papers' quality distribution
   ``N(mu, sigma^2)``; with further facets (``--facet-col``: a rubric's criteria, tasks) the
   many-facet form, each cell ``c`` (a combination of facet levels) with its effect ``e_c``, as
   ``adjust`` fits it (:mod:`.rubric`).
2. **Simulate** replication ``k`` from ``SeedSequence(seed, spawn_key=(group key, k))``: a quality
   ``theta_i ~ N(mu, sigma^2)`` per paper (about its cluster's fitted mean where the assignment is
   confounded with clusters: the multi-group MML), and for every rating of the file -- the same papers,
   raters and cells; third readings by the file's rule where it has one (:func:`reading_rule`; with
   facets a third reader reads every cell when the first two differ in any) -- a score drawn from
   ``P(x | theta_i - e_c, tau_j) = exp(x (theta_i - e_c) - tau_j[x]) / sum_h exp(h (theta_i - e_c) - tau_j[h])``,
   on the file's scale (``e = 0`` without facets).  A paper's true score in a cell is the mean over
   the fitted raters of their expected score at ``theta_i - e_c`` (the corrected study's definition).
3. **Apply** the methods at the study's shrinkage levels (:mod:`ratercal_cli.methods.shrinkage`: ``none``
   and ``kelley``, and ``linear_eb`` where the assignment was tested and found random,
   :func:`shrinkage_levels`) as
   ``adjust`` applies them -- with facets, the many-facet MML and MFRM on all the ratings and every
   other method within each cell (:mod:`.rubric`) -- and score each (paper, cell) score with the
   study's criteria (:func:`ratercal_cli.criteria.score_sets`): RMSE, the worst decile's
   conditional bias and the decision accuracy at the cut.
4. **Rank** the methods within each shrinkage level by mean RMSE with its Monte Carlo standard
   error, and give each one's paired difference from the best with its 95% interval
   (:mod:`ratercal_cli.montecarlo.statistics`); a method that failed on some replications is
   not ranked (its mean is over the replications it could fit).
5. **Warn** where the file's papers do not differ detectably (:func:`paper_signal`: the papers'
   one-way ANOVA, p >= :data:`SIGNAL_ALPHA`): the fitted quality SD may then be noise, and a
   ranking on a design without paper signal rewards putting every paper at the mean.

Methods: the study's ten and the model-based MML and MFRM (:data:`DEFAULT_METHODS`; MML and MFRM
are most of the time: about 0.3 and 0.15 s a replication of a 120-paper group against 0.1 s for
the ten; ``methods`` narrows them).  Replications run on the Monte Carlo machinery
(:func:`ratercal_cli.montecarlo.executors.run_tasks`): chunks of :data:`CHUNK` replications in
this process, in ``jobs`` processes or on a Dask cluster (``scheduler``), with the same numbers
wherever they run: each replication depends on its own seed only, and the results are put in
replication order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..criteria import score_sets
from ..errors import MethodError
from ..generators.modern import cell_key
from ..methods import make_method
from ..methods.base import FIT_FAILURES
from ..ratings import Ratings
from ..vocabulary import SHRINKAGES, STUDY_METHODS
from .agreement import (SIGNAL_ALPHA, clear_paper_signal, no_paper_signal, no_signal_text,  # noqa: F401 (its names)
                        paper_signal)

#: The criteria of the ranking table.
CRITERIA = ("rmse", "cbias_worst", "accuracy")
DEFAULT_SEED = 19900601
#: The methods ranked unless told: the study's ten and the model-based ones.
DEFAULT_METHODS = STUDY_METHODS + ("MML", "MFRM")
#: the stress scenario's correlation of a paper's quality with its raters' mean severity
STRESS = 0.5
#: Replications per task of the Monte Carlo machinery.
CHUNK = 10


@dataclass(frozen=True)
class DesignModel:
    """A file's design and the rater model fitted to it (picklable: the workers get it)."""

    ratings: Ratings         # the file's ratings (their papers, raters and cells; scores replaced)
    tau: np.ndarray          # (J, M+1) cumulative category parameters per rater
    mu: float                # quality distribution N(mu, sigma^2)
    sigma: float
    cell: np.ndarray         # each rating's cell (combination of facet levels; 0 without facets)
    effect: np.ndarray       # (C,) each cell's facet effect (logits; [0] without facets)
    #: a confounded design's clusters (per paper, from :mod:`.assignment`) and their fitted mean
    #: qualities (the multi-group MML): quality is drawn about its cluster's mean
    clusters: np.ndarray | None = None
    cluster_mean: np.ndarray | None = None
    #: the file's third-reading rule: ``(first, second, third, threshold)``, per paper the rating
    #: indices of its first two readings and of its third (-1: none); a third reading is drawn when the
    #: first two differ by more than ``threshold``, by the file's third reader or, for a paper the
    #: file did not read a third time, a rater drawn from the others
    rule: tuple | None = None
    #: the stress scenario: the correlation of a paper's quality with its raters' mean severity
    #: (0: none; 0.5: lenient raters see the weaker papers)
    stress: float = 0.0

    @property
    def paper(self):
        return self.ratings.paper

    @property
    def n_papers(self) -> int:
        return self.ratings.n_papers

    @property
    def facetted(self) -> bool:
        return bool(self.ratings.facets)

    @classmethod
    def fit(cls, ratings: Ratings, clusters=None, discrepancy: int | None = None) -> "DesignModel":
        """Fit MML (PCM; many-facet with facets) to ``ratings``; raises :class:`MethodError` where it
        cannot (one rater per paper, unlinked raters).  ``clusters`` (per paper): the multi-group MML,
        quality drawn about each cluster's mean; ``discrepancy``: the file's third-reading rule
        (:func:`reading_rule`)."""
        from .rubric import cell_effects, facet_levels_matrix

        est = make_method("MML", clusters=clusters)
        if ratings.facets:
            est.fit(ratings, facet=facet_levels_matrix(ratings))
            cell = ratings.facet_cells()[0]
            effect = np.asarray(cell_effects(est, ratings), dtype=np.float64)
        else:
            est.fit(ratings)
            cell, effect = np.zeros(ratings.n_ratings, dtype=np.int64), np.zeros(1)
        tau = np.asarray(est.tau_, dtype=np.float64)
        if not np.isfinite(tau).all():
            raise MethodError("the rater model has raters without parameters (no ratings)")
        mg = clusters is not None
        return cls(ratings, tau, float(est.theta_mean_), float(est.sigma_), cell, effect,
                   np.asarray(clusters, dtype=np.int64) if mg else None,
                   np.asarray(est.cluster_mean_, dtype=np.float64) if mg else None,
                   reading_rule(ratings, discrepancy))

    def quality(self, rng):
        """Each paper's quality for one replication: about its cluster's mean (multi-group) or the
        one mean, and under :attr:`stress` correlated with its raters' mean severity."""
        r = self.ratings
        z = rng.standard_normal(r.n_papers)
        if self.stress:
            K = self.tau.shape[1]
            sev = self.tau[:, K - 1] / (K - 1)                # each rater's mean step
            per = np.bincount(r.paper, weights=sev[r.rater], minlength=r.n_papers) / \
                np.maximum(r.ratings_per_paper(), 1)
            u = (per - per.mean()) / (per.std() or 1.0)
            z = self.stress * u + np.sqrt(1.0 - self.stress ** 2) * z
        base = self.mu if self.clusters is None else self.cluster_mean[np.maximum(self.clusters, 0)]
        return base + self.sigma * z

    def simulate(self, seed: int, key: int, replication: int):
        """``(ratings, true scores)`` of one replication (module docstring, step 2); the true scores
        are papers x cells (nan where a paper has no rating in a cell)."""
        from ..methods.quality import category_probabilities, mean_expected_score
        from ..models.pcm import inverse_cdf

        r = self.ratings
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key, replication)))
        theta = self.quality(rng)
        p = category_probabilities(theta[r.paper] - self.effect[self.cell], self.tau[r.rater])   # (n ratings, K)
        score = inverse_cdf(p.T, rng.random(r.paper.size))
        true = np.column_stack([mean_expected_score(theta - e, self.tau) for e in self.effect])
        has = np.zeros(true.shape, dtype=bool)
        has[r.paper, self.cell] = True
        true[~has] = np.nan
        if self.rule is None:
            return replace(r, score=score), true
        return self._third_readings(rng, theta, score), true

    def _third_readings(self, rng, theta, score):
        """The file's rule on one replication's first two readings (:attr:`rule`): a paper is read a third
        time when its first two readers differ by more than the threshold (with facets: in any cell),
        by the file's third reader or a rater drawn from the others, in every cell its first reader read."""
        from ..methods.quality import category_probabilities
        from ..models.pcm import inverse_cdf

        r = self.ratings
        first, second, third, threshold = self.rule
        both = (first >= 0) & (second >= 0)
        gap = np.where(both, np.abs(score[np.maximum(first, 0)] - score[np.maximum(second, 0)]), 0)
        need = (gap > threshold).any(axis=1)
        has_third = (third >= 0).any(axis=1)
        keep = np.ones(r.n_ratings, dtype=bool)
        drop = third[~need]
        keep[drop[drop >= 0]] = False                             # the file's third reading, not needed now
        new = np.flatnonzero(need & ~has_third)                   # papers that need one the file has not got
        active = np.flatnonzero(r.ratings_per_rater() > 0)
        u = rng.random(new.size)
        who = np.empty(new.size, dtype=np.int64)
        for k, p in enumerate(new):                               # a rater other than the paper's two
            a, b = r.rater[first[p][first[p] >= 0][0]], r.rater[second[p][second[p] >= 0][0]]
            others = active[(active != a) & (active != b)]
            who[k] = others[min(int(u[k] * others.size), others.size - 1)]
        src = first[new]                                          # the cells of each paper's first reading
        k_, c_ = np.nonzero(src >= 0)
        like = src[k_, c_]                                        # the rating whose paper and cell it copies
        paper, rater = r.paper[like], who[k_]
        q = category_probabilities(theta[paper] - self.effect[self.cell[like]], self.tau[rater])
        extra = inverse_cdf(q.T, rng.random(paper.size)) if paper.size else np.zeros(0, dtype=score.dtype)
        facets = {f: (np.r_[v[keep], v[like]], labels) for f, (v, labels) in r.facets.items()}
        return replace(r, paper=np.r_[r.paper[keep], paper], rater=np.r_[r.rater[keep], rater],
                       score=np.r_[score[keep], extra].astype(score.dtype), facets=facets, first_readings=None,
                       reading_order=None)


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
    signal: object = None              # the file's papers' one-way ANOVA (:func:`paper_signal`)
    #: the stress scenario's result (the same design, quality correlated with the raters' severity)
    stressed: object = None
    #: further warnings (``check``'s: a non-random assignment the simulation could not draw)
    caveats: list = field(default_factory=list)

    @property
    def warnings(self) -> list:
        """Why the ranking may mislead: the file's papers do not differ detectably."""
        if self.signal is None or not no_paper_signal(self.signal):
            return list(self.caveats)
        return [f"{no_signal_text(self.signal)}: the simulated design's quality SD "
                f"({self.model.sigma:.2f} logits) may be noise, and this ranking of the methods rests on a "
                "design with no paper signal, where a method ranks well by putting every paper near the mean, "
                "not by telling papers apart"] + list(self.caveats)

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
        from .text import json_clean

        return {"replications": self.replications, "seed": self.seed, "cut": self.cut,
                "model": {"quality_mean": self.model.mu, "quality_sd": self.model.sigma,
                          "papers": self.model.n_papers, "ratings": int(self.model.paper.size),
                          "cells": int(self.model.effect.size)},
                **({"paper_signal": json_clean(dict(self.signal.__dict__))} if self.signal is not None else {}),
                "warnings": self.warnings,
                "design": self.design_notes(),
                "methods": self.rows(),
                **({"stress": {"correlation": self.stressed.model.stress, "methods": self.stressed.rows(),
                               "changes": self.stress_changes()}} if self.stressed is not None else {})}

    def design_notes(self) -> list:
        """What of the file's design the simulation draws beyond its papers and raters."""
        m, out = self.model, []
        if m.clusters is not None:
            out.append(f"quality drawn about each of {m.cluster_mean.size} clusters' fitted means (the multi-group "
                       f"MML: {', '.join(f'{x:.2f}' for x in m.cluster_mean)}), MML and MFRM fitted multi-group")
        if m.rule is not None:
            first, second, third, d = m.rule
            sc = m.ratings.score
            both = (first >= 0) & (second >= 0)
            gap = np.where(both, np.abs(sc[np.maximum(first, 0)] - sc[np.maximum(second, 0)]), 0)
            agree = int(((gap > d).any(axis=1) == (third >= 0).any(axis=1)).sum())
            where = " in any cell" if m.facetted else ""
            out.append(f"third readings by the file's rule: when the first two readers differ by more than {d}{where} "
                       f"(the file's own third readings agree with it on {agree} of {first.shape[0]} papers)")
        return out

    def _ranking(self):
        v = self.values[:, :, 0]
        ok = [i for i in range(v.shape[1]) if np.isfinite(v[:, i]).all()]
        return sorted(ok, key=lambda i: (v[:, i].mean(), i))

    def stress_changes(self) -> list:
        """Where the stress scenario's ranking (over both shrinkage levels) differs from the fitted one:
        the best column, and each of the fitted top three's rank."""
        if self.stressed is None:
            return []
        a, b = self._ranking(), self.stressed._ranking()
        name = lambda i: column_name(self.columns[i])   # noqa: E731
        out = []
        if a and b and a[0] != b[0]:
            out.append(f"best {name(a[0])} -> {name(b[0])}")
        for i in a[:3]:
            ra, rb = a.index(i) + 1, (b.index(i) + 1 if i in b else None)
            if ra != rb:
                out.append(f"{name(i)} rank {ra} -> {rb if rb is not None else 'failed'}")
        return out

    def description(self) -> str:
        """What was simulated and how the table ranks it: the first line of :meth:`format_text`, the note
        above the HTML report's table."""
        cut = "" if self.cut is None else f", decision accuracy at {self.cut:g}"
        facets = "" if not self.model.facetted else (
            f" with the facets' effects (the many-facet model, {self.model.effect.size} cells); each paper's score "
            "in each cell it was rated in scored, MML and MFRM fitted to all the ratings, the other methods "
            "within each cell, as adjust does")
        return (f"Simulated study of this design: {self.replications} replications (seed {self.seed}) of the "
                f"file's {self.model.n_papers} papers and {self.model.paper.size} ratings, same papers-to-raters "
                f"assignment, each rater's steps and the quality distribution N({self.model.mu:.2f}, "
                f"{self.model.sigma:.2f}^2) fitted by MML{facets}{cut}; ranked by mean RMSE ± Monte Carlo SE within a "
                "shrinkage level; 'vs best': the paired RMSE difference with its 95% interval.")

    def table(self) -> tuple:
        """``(header, rows)`` of the ranking as text cells, a row a (shrinkage, method) of :meth:`rows`:
        shrinkage, method, RMSE ± MCSE, rank, vs best (95% CI), worst-decile bias ± MCSE, (accuracy ± MCSE,
        with a cut) and the failures (empty where none) -- the text report's table and the HTML report's."""
        header = ["shrinkage", "method", "RMSE", "rank", "vs best (95% CI)", "worst-decile bias",
                  *(["accuracy"] if self.cut is not None else []), "failed"]
        rows = []
        for r in self.rows():
            vs = "" if r["vs_best"] is None else (f"{r['vs_best']['diff']:+.4f} [{r['vs_best']['ci'][0]:+.4f}, "
                                                  f"{r['vs_best']['ci'][1]:+.4f}]")
            rows.append([r["shrinkage"], r["method"], f"{r['rmse']:.4f} ± {r['rmse_mcse']:.4f}",
                         "-" if r["rank"] is None else str(r["rank"]), vs,
                         f"{r['cbias_worst']:.3f} ± {r['cbias_worst_mcse']:.3f}",
                         *([f"{r['accuracy']:.4f} ± {r['accuracy_mcse']:.4f}"] if self.cut is not None else []),
                         f"{r['failed']} of {self.replications}: {r.get('error', '')}" if r["failed"] else ""])
        return header, rows

    def notes(self) -> list:
        """The lines under the table: the design's notes, the warnings and the stress scenario's ranking."""
        lines = [f"design: {d}" for d in self.design_notes()]
        lines += [f"warning: {w}" for w in self.warnings]
        if self.stressed is not None:
            ch = self.stress_changes()
            best = self.stressed._ranking()
            top = ", ".join(f"{column_name(self.columns[i])} "
                            f"{self.stressed.values[:, i, 0].mean():.4f}" for i in best[:3])
            lines.append(f"stress scenario (a plausible confound: each paper's quality correlated "
                         f"{self.stressed.model.stress:g} with its raters' mean severity, lenient raters reading the "
                         f"weaker papers; the same seeds): best {top}; "
                         + ("the ranking's top changes: " + "; ".join(ch) if ch else "the ranking's top stays"))
        return lines

    def format_text(self) -> str:
        header, rows = self.table()
        acc = self.cut is not None
        lines = [self.description(),
                 f"  {'shrinkage':<9} {'method':<8} {'RMSE':>16} {'rank':>4}  {'vs best (95% CI)':<30} "
                 f"{'worst-decile bias':>18}" + (f" {'accuracy':>16}" if acc else "")]
        for c in rows:
            line = f"  {c[0]:<9} {c[1]:<8} {c[2]:>16} {c[3]:>4}  {c[4]:<30} {c[5]:>18}"
            if acc:
                line += f" {c[6]:>17}"
            if c[-1]:
                line += f"  (failed {c[-1]})"
            lines.append(line)
        lines += [f"  {n}" for n in self.notes()]
        return "\n".join(lines)

def column_name(column) -> str:
    """``TLI``, ``MML (shrunk)``, ``TLI (shrunk, linear EB)``: a ranked (shrinkage, method) as the text names it."""
    from .recommend import LEVEL_WORDS

    s, m = column
    return m if s == "none" else f"{m} ({LEVEL_WORDS.get(s, s)})"


def shrinkage_levels(found, facetted: bool = False) -> tuple:
    """The shrinkage levels a simulation ranks: the study's ``none`` and ``kelley``, and its like-for-like
    ``linear_eb`` where the file's assignment was tested (:mod:`.assignment`) and found random -- that
    level estimates the papers' true-score variance from rater-centred ratings, which under a confound
    removes the quality differences between the raters' papers and shrinks every method nearly to the
    mean (:mod:`ratercal_cli.methods.shrinkage`) -- and the design has no facets (a rubric's MML and
    MFRM score papers at their WLE and EAP only)."""
    from ..vocabulary import STUDY_SHRINKAGES

    tested_random = found is not None and found.confounded is False
    return STUDY_SHRINKAGES if tested_random and not facetted else SHRINKAGES


def reading_rule(ratings: Ratings, discrepancy: int | None):
    """The file's third-reading rule (:attr:`DesignModel.rule`), or None where it does not apply: no
    threshold given, discrepancies resolved already (two readings kept of three), or papers other
    than two readers and some three (the rule is the 2+ design's).  ``(first, second, third,
    threshold)``: papers x cells, the index of the rating of each paper's first, second and third
    reader (in the order of the file's lines) in each cell (-1: none); without facets one cell.  With
    facets every reader of a paper must have read it in the same cells, once each."""
    if discrepancy is None or getattr(ratings, "first_readings", None) is not None:
        return None
    cell, labels = ratings.facet_cells()
    P, C = ratings.n_papers, len(labels)
    order = np.argsort(ratings.paper, kind="stable")          # each paper's ratings in the file's order
    paper, rater = ratings.paper[order], ratings.rater[order]
    # each paper's readers numbered by first appearance: 0, 1, 2, ...
    key = paper * ratings.n_raters + rater
    uniq, first_at = np.unique(key, return_index=True)
    rank_of = np.zeros(uniq.size, dtype=np.int64)
    up = paper[first_at]
    ordered = np.lexsort((first_at, up))                      # by paper, then first appearance
    start = np.r_[0, np.flatnonzero(np.diff(up[ordered])) + 1]
    grp = np.repeat(start, np.diff(np.r_[start, ordered.size]))
    rank_of[ordered] = np.arange(ordered.size) - grp
    reader = rank_of[np.searchsorted(uniq, key)]
    readers = np.bincount(up, minlength=P)
    rated = readers > 0
    if not rated.all() or not ((readers == 3).any() and ((readers == 2) | (readers == 3)).all()):
        return None
    slots = np.full((3, P, C), -1, dtype=np.int64)
    counts = np.zeros((3, P, C), dtype=np.int64)
    np.add.at(counts, (reader, paper, cell[order]), 1)
    if counts.max() > 1:
        return None                                           # a reader twice in a cell: not the rule's design
    slots[reader, paper, cell[order]] = order
    seen = slots >= 0
    if not (np.array_equal(seen[0], seen[1]) and np.all(~seen[2] | seen[0])
            and np.all(seen[2].any(axis=1) == (readers == 3)) and np.all(seen[2][readers == 3] == seen[0][readers == 3])):
        return None
    return slots[0], slots[1], slots[2], int(discrepancy)


def _level_scores(model, ratings, methods, shrinkages):
    """``({(shrinkage, method): papers x cells scores}, {(shrinkage, method): reason})`` of one
    simulated data set, the methods applied as ``adjust`` applies them (module docstring, step 3):
    every method within each cell (:func:`~ratercal_cli.methods.apply.apply_within_cells`; without
    facets one cell, all the ratings), but with facets MML and MFRM, fitted to all the ratings."""
    from ..methods.apply import apply_within_cells
    from ..methods.shrinkage import shrunk_papers
    from .rubric import MODEL_BASED, facet_levels_matrix, model_cell_scores

    scores, errors = {}, {}
    n_cells = model.effect.size
    within = [m for m in methods if not ((model.facetted or model.clusters is not None) and m in MODEL_BASED)]
    for c, part in enumerate(apply_within_cells(ratings, within, "corrected") if within else ()):
        applied, sub = part.applied, part.ratings
        has = sub.ratings_per_paper() > 0
        for code in within:
            try:
                if code not in applied.adjusted:
                    raise MethodError(applied.skipped.get(code, "failed"))
                by = shrunk_papers(applied.estimators[code], sub, applied.adjusted[code].paper, shrinkages,
                                   centring="additive")   # (as adjust shrinks the file: _at_level)
            except FIT_FAILURES as exc:
                reason = str(exc) if code not in applied.adjusted else f"{type(exc).__name__}: {exc}"
                for s in shrinkages:
                    errors.setdefault((s, code), reason)
                continue
            for s in shrinkages:
                out = scores.setdefault((s, code), np.full((ratings.n_papers, n_cells), np.nan))
                out[has, c] = by[s][has]
    for code in methods:
        if code in within or model.facetted:
            continue
        try:     # a confounded design's marginal models: multi-group, as adjust -m recommended fits them
            est = make_method(code, clusters=model.clusters)
            by = shrunk_papers(est, ratings, est.fit_transform(ratings).paper, shrinkages, centring="additive")
        except FIT_FAILURES as exc:
            for s in shrinkages:
                errors[(s, code)] = f"{type(exc).__name__}: {exc}"
            continue
        for s in shrinkages:
            scores[(s, code)] = by[s][:, None]
    for code in methods:
        if code in within or not model.facetted:
            continue
        try:     # the many-facet model on all the ratings (multi-group where the design is confounded)
            est = make_method(code, clusters=model.clusters).fit(ratings, facet=facet_levels_matrix(ratings))
        except FIT_FAILURES as exc:
            for s in shrinkages:
                errors[(s, code)] = f"{type(exc).__name__}: {exc}"
            continue
        for s in shrinkages:
            theta = est.quality_wle_ if s == "none" else est.quality_eap_
            scores[(s, code)] = model_cell_scores(est, ratings, theta)
    for key in errors:
        scores.pop(key, None)
    return scores, errors


def rubric_level_scores(ratings, methods, shrinkages, clusters=None):
    """:func:`_level_scores` of a rubric's own ratings (``adjust -m recommended`` applies a rubric's
    decision so, as the simulation ranks it): MML and MFRM fitted to all the criteria at once (multi-group
    about ``clusters``, each paper's cluster, where given), the others within each criterion."""
    from types import SimpleNamespace

    model = SimpleNamespace(effect=np.zeros(len(ratings.facet_cells()[1])), facetted=True, clusters=clusters)
    return _level_scores(model, ratings, methods, shrinkages)


def _replicate(model, methods, shrinkages, cut, seed, key, replication):
    """Criteria ``(columns, criteria)`` of one replication and ``{column: reason}`` of its failures."""
    ratings, true = model.simulate(seed, key, replication)
    scores, errors = _level_scores(model, ratings, methods, shrinkages)
    values = np.full((len(shrinkages) * len(methods), len(CRITERIA)), np.nan)
    has = np.isfinite(true)
    for a, s in enumerate(shrinkages):
        for b, code in enumerate(methods):
            if (s, code) not in scores:
                continue
            c = score_sets(scores[(s, code)][has][None], true[has][None], cut)
            values[a * len(methods) + b] = [c[k][0] if k in c else np.nan for k in CRITERIA]
    return values, errors


@dataclass(frozen=True)
class _Job:
    """What every task of one simulated study shares (sent to each worker once)."""

    model: DesignModel
    methods: tuple
    shrinkages: tuple
    cut: float | None
    seed: int
    key: int


def _replicate_chunk(job: _Job, reps: range):
    """The replications ``reps`` of ``job``: a task of :func:`~ratercal_cli.montecarlo.executors.run_tasks`."""
    return [_replicate(job.model, job.methods, job.shrinkages, job.cut, job.seed, job.key, k) for k in reps]


def simulate_design(ratings: Ratings, replications: int, cut: float | None = None, methods=None,
                    seed: int = DEFAULT_SEED, group=None, jobs: int = 1, scale_low: int = 0,
                    shrinkages=SHRINKAGES, scheduler=None, clusters=None, discrepancy: int | None = None,
                    stress: float = 0.0, model: DesignModel | None = None) -> SimulationResult:
    """Fit, simulate, apply and rank (module docstring).  ``cut`` is on the file's scale, whose
    lowest score ``scale_low`` is the ratings' 0; ``jobs`` processes, or the Dask cluster at
    ``scheduler``, compute the replications (the same numbers).  ``clusters`` (per paper: a
    confounded design's, :mod:`.assignment`): quality drawn about each cluster's fitted mean and MML
    and MFRM fitted multi-group; ``discrepancy``: the file's third-reading threshold (the rule
    drawn, :func:`reading_rule`); ``stress``: the stress scenario's correlation of quality with
    the raters' severity; ``model``: a :class:`DesignModel` fitted already.  Raises
    :class:`MethodError` when the rater model cannot be fitted."""
    from ..montecarlo.executors import run_tasks

    model = model or DesignModel.fit(ratings, clusters=clusters, discrepancy=discrepancy)
    if stress:
        model = replace(model, stress=float(stress))
    one_rater = ratings.max_raters_per_paper() < 2
    methods = [m for m in (methods or DEFAULT_METHODS) if not (one_rater and make_method(m).needs_multiple_raters)]
    key = cell_key("" if group is None else str(group))
    inner = None if cut is None else float(cut) - scale_low
    job = _Job(model, tuple(methods), tuple(shrinkages), inner, int(seed), key)
    tasks = [range(a, min(a + CHUNK, int(replications))) for a in range(0, int(replications), CHUNK)]
    from ..progress import progress

    done = dict(progress(run_tasks(_replicate_chunk, job, tasks, jobs=jobs, scheduler=scheduler,
                                   key=lambda reps: f"ratercal-simulate-{key}-{seed}-{reps.start}-{reps.stop}"),
                         total=len(tasks), desc="simulate" + ("" if group is None else f" {group}"), unit="chunk"))
    results = [one for reps in tasks for one in done[reps]]
    columns = [(s, m) for s in shrinkages for m in methods]
    values = np.stack([v for v, _ in results])
    errors = {}
    for _, errs in results:
        for col, reason in errs.items():
            count, first = errors.get(col, (0, reason))
            errors[col] = (count + 1, first)
    return SimulationResult(int(replications), int(seed), None if cut is None else float(cut), model, columns, values,
                            errors, scale_low, paper_signal(ratings))


def simulate_groups(ratings: Ratings, replications, cut=None, seed=None, jobs=1, methods=None,
                    scheduler=None, clusters=None, discrepancy=None, stress: float = 0.0, shrinkages=None) -> list:
    """:func:`simulate_design` of every group of ``ratings`` (:meth:`Ratings.by_group`): per group the
    :class:`SimulationResult`, or the one-line reason it could not run (the rater model could not be
    fitted).  Each group has its own seeds (its label is part of them).  ``clusters``: per group a
    confounded design's clusters or None; ``stress``: also the stress scenario
    (:attr:`SimulationResult.stressed`, the same seeds); ``shrinkages``: per group the levels ranked
    (:func:`shrinkage_levels`; None: ``none`` and ``kelley``)."""
    out = []
    for k, (name, g) in enumerate(ratings.by_group()):
        kw = dict(cut=cut, methods=methods, seed=DEFAULT_SEED if seed is None else seed, group=name, jobs=jobs,
                  scale_low=ratings.scale_low, scheduler=scheduler,
                  shrinkages=SHRINKAGES if shrinkages is None or shrinkages[k] is None else tuple(shrinkages[k]))
        try:
            res = simulate_design(g, replications, clusters=None if clusters is None else clusters[k],
                                  discrepancy=discrepancy, **kw)
            if stress:
                res.stressed = simulate_design(g, replications, stress=stress, model=res.model, **kw)
            out.append(res)
        except FIT_FAILURES as exc:
            out.append(f"Simulated study of this design: not run, the rater model (MML) cannot be fitted: {exc}")
    return out
