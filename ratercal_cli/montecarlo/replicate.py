"""One replication, and a chunk of replications as one batch (the fast path).

:func:`replicate` makes replication ``k`` of a cell with its own seeds and applies every method of
every variant through :func:`ratercal_cli.methods.apply.apply_methods`; :func:`chunk_rows` gives the
same rows, byte for byte, for replications ``start..stop-1`` computed as one batch
(:mod:`ratercal_cli.generators.batched`, :mod:`ratercal_cli.methods.batched`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from .. import criteria
from ..design import Cell
from ..generators.batched import generate_batch, generate_rubric_batches
from ..generators.modern import generate_set
from ..methods import make_method
from ..methods.apply import (CellApplied, apply_methods, apply_within_cells, combined_scores, failure_reason,
                             mean_over_cells)
from ..methods.batched import flat_ratings, paper_scores_by_shrinkage
from ..methods.shrinkage import OPERATORS_BATCH, own_shrinkage, shrunk_papers
from ..ratings import Ratings
from .spec import CRITERIA, StudySpec, _num, _nums


@dataclass
class Replication:
    """One data set and what every method made of it (kept only on request)."""

    cell: Cell
    replication: int
    generated: object            # GeneratedSet
    ratings: Ratings
    adjusted: dict               # (variant, method) -> Adjusted
    rows: list                   # COLUMNS rows as strings
    #: with criteria: (variant, method) -> each rating's paper score on the rating's criterion
    paper_of_rating: dict = field(default_factory=dict)


def set_ratings(gen, cell: Cell, n_raters: int, rubric=None) -> Ratings:
    """The kept ratings of a generated set as the methods take them; with a rubric's criteria
    each rating's criterion is its facet ``criterion`` (``c1, c2, ...``)."""
    o = gen.observed
    k = o.kept
    facets = {} if rubric is None else {"criterion": (o.criterion[k], rubric.labels)}
    return Ratings(o.paper[k], o.rater[k], o.score[k], cell.max_score, cell.papers, n_raters, facets=facets)


def _cells_applied(ratings, methods, variant, rubric, timings):
    """The methods on the set (one cell) or within each criterion (:func:`apply_within_cells`)."""
    if rubric is None:
        return [CellApplied((), None, ratings, apply_methods(ratings, methods, variant, timings=timings))]
    return apply_within_cells(ratings, methods, variant, timings=timings)


def _skipped(parts, code):
    """Why ``code`` has no scores (the first criterion it failed on named), or None."""
    for p in parts:
        if code in p.applied.skipped:
            reason = p.applied.skipped[code]
            return f"{' x '.join(map(str, p.labels))}: {reason}" if p.labels else reason
    return None


def _paper_scores(parts, code, shrinkage, n_raters, rubric=None):
    """The paper scores at ``shrinkage``: the set's; with criteria scored ``each`` every paper's
    score on every criterion (papers x criteria, flat), each shrunk by its criterion's reliability;
    scored ``mean`` the rubric mean of the criteria's, shrunk (``kelley``, ``linear_eb``) as a whole
    (:func:`_rubric_shrunk`); MML's and MFRM's own shrinkage (EAP) is their mean over the criteria."""
    if len(parts) == 1 and parts[0].mask is None:
        p = parts[0]
        return shrunk_papers(p.applied.estimators[code], p.ratings, p.applied.adjusted[code].paper, (shrinkage,))[shrinkage]
    if rubric.score == "each":
        return np.stack([shrunk_papers(p.applied.estimators[code], p.ratings, p.applied.adjusted[code].paper,
                                       (shrinkage,))[shrinkage] for p in parts], axis=-1).ravel()
    own = own_shrinkage(parts[0].applied.estimators[code]) and shrinkage == "kelley"
    level = shrinkage if own else "none"
    means = mean_over_cells(np.stack([shrunk_papers(p.applied.estimators[code], p.ratings, p.applied.adjusted[code].paper,
                                                    (level,))[level] for p in parts], axis=-1))
    if shrinkage == "none" or own:
        return means
    r = parts[0].ratings
    return _rubric_shrunk(shrinkage, means[None], np.zeros(r.n_ratings, np.int64), r.paper, r.rater,
                          [p.ratings.score for p in parts], n_raters)[0]


def _rubric_shrunk(shrinkage, P, rep, paper, rater, criterion_scores, n_raters):
    """Rubric means ``P`` (B, papers) shrunk by the level's operator (Kelley's,
    :func:`~ratercal_cli.methods.shrinkage.kelley_batch`, or ``linear_eb``) with the one-way ANOVA
    of a reading's mean over the criteria: the readings ``(rep, paper, rater)`` scored by their
    criteria's mean (``criterion_scores``: each criterion's scores of the readings, in the readings'
    order).  Shrinking each criterion by its own reliability and averaging would shrink the mean by
    a criterion's reliability, lower than the mean's."""
    reading = np.stack([np.asarray(s, dtype=np.float64) for s in criterion_scores], axis=-1).mean(axis=-1)
    return OPERATORS_BATCH[shrinkage](P, rep, paper, rater, reading, n_raters)[0]


def replicate(spec: StudySpec, cell: Cell, replication: int, keep: bool = False, timings=None):
    """Make replication ``replication`` of ``cell`` and score every (variant, method).

    Returns the rows (lists of strings in :data:`COLUMNS` order); with ``keep`` a
    :class:`Replication` holding the data as well.  Methods needing two raters are
    skipped on one-rater sets (no row, as the 1990 study skipped them); a method
    that fails on this data set gives a row with empty criteria and the error.
    With a rubric's criteria every method is applied to each criterion's ratings on its own
    and a paper's score is the mean over the criteria (:mod:`ratercal_cli.rater_effects`).
    ``timings``: a dict to which the seconds of the generation (key ``"generate"``)
    and of each (variant, method) fit are added (the benchmark's profile).
    """
    t0 = time.perf_counter() if timings is not None else 0.0
    spec.prepare()
    rubric = spec.rubric_design()
    gen = generate_set(cell, spec.generator, spec.seed, replication, spec.steps_for(cell.max_score),
                       spec.linear or None, spec.true_score, spec.rater_effects(), rubric)
    ratings = set_ratings(gen, cell, spec.n_raters, rubric)
    true = gen.criterion_true.ravel() if rubric is not None and rubric.score == "each" else gen.true_score
    cut = criteria.cut_for_scale(spec.cut, cell.max_score)
    if timings is not None:
        timings["generate"] = timings.get("generate", 0.0) + time.perf_counter() - t0
    rows, adjusted, paper_of_rating = [], {}, {}
    one_rater = ratings.max_raters_per_paper() < 2 if rubric is None else cell.raters_per_paper == "1"
    for variant in spec.variants:
        parts = _cells_applied(ratings, spec.methods, variant, rubric, timings)
        for shrinkage in spec.shrinkages:
            if shrinkage != "none" and one_rater:   # no within-paper variance: no reliability
                continue
            for code in spec.methods:
                if code in parts[0].applied.not_applicable:   # as the 1990 study: no row on one-rater sets
                    continue
                head = [cell.code, str(replication), variant, shrinkage, code]
                reason = _skipped(parts, code)
                if reason is not None:
                    rows.append(head + [""] * len(CRITERIA) + [reason.replace(",", ";")])
                    continue
                paper = _paper_scores(parts, code, shrinkage, spec.n_raters, rubric)
                if keep and shrinkage == "none":
                    adjusted[(variant, code)], paper_of_rating[(variant, code)] = (
                        (parts[0].applied.adjusted[code], None) if rubric is None
                        else combined_scores(parts, code, ratings.n_ratings))
                    if rubric is not None and rubric.score == "each":   # a paper's: its rubric mean
                        paper = _paper_scores(parts, code, shrinkage, spec.n_raters, replace(rubric, score="mean"))
                c = criteria.score_set(paper, true, cut)
                rows.append(head + [_num(c[name]) for name in CRITERIA] + [""])
    if keep:
        return Replication(cell, replication, gen, ratings, adjusted, rows,
                           paper_of_rating if rubric is not None else {})
    return rows


def chunk_rows(spec, cell, start, stop):
    """Rows (lists of strings, :data:`~ratercal_cli.montecarlo.spec.COLUMNS`) of replications ``start..stop-1``,
    one list per replication."""

    reps = range(start, stop)
    rubric = spec.rubric_design()
    if rubric is None:
        batches = [generate_batch(cell, spec.generator, spec.seed, reps, spec.steps_for(cell.max_score),
                                  spec.linear or None, spec.true_score, spec.n_raters, spec.rater_effects())]
        T = batches[0].true
    else:
        batches, T = generate_rubric_batches(cell, spec.generator, spec.seed, reps, spec.steps_for(cell.max_score),
                                             spec.true_score, spec.n_raters, spec.rater_effects(), rubric)
        if rubric.score == "each":   # every paper's criteria: (B, papers x criteria)
            T = np.stack([b.true for b in batches], axis=-1).reshape(len(reps), -1)
    cut = criteria.cut_for_scale(spec.cut, cell.max_score)
    one_rater = batches[0].per_paper < 2
    out = [[] for _ in reps]
    for variant in spec.variants:
        for code in spec.methods:
            if one_rater and make_method(code, variant).needs_multiple_raters:
                continue
            levels = tuple(s for s in spec.shrinkages if s == "none" or not one_rater)
            by_level, failed = _batch_scores(code, variant, batches, levels, rubric)
            for shrinkage in levels:
                crit = criteria.score_sets(by_level[shrinkage], T, cut)
                text = [_nums(crit[name]) for name in CRITERIA]
                for b, rep in enumerate(reps):
                    head = [cell.code, str(rep), variant, shrinkage, code]
                    if b in failed:
                        out[b].append(head + [""] * len(CRITERIA) + [failed[b].replace(",", ";")])
                    else:
                        out[b].append(head + [t[b] for t in text] + [""])
    # the rows of a replication in replicate()'s order: variant, shrinkage, method
    order = {(v, s, m): i for i, (v, s, m) in enumerate((v, s, m) for v in spec.variants for s in spec.shrinkages
                                                          for m in spec.methods)}
    return [sorted(rows, key=lambda r: order[(r[2], r[3], r[4])]) for rows in out]


def _batch_scores(code, variant, batches, levels, rubric):
    """``({level: paper scores (B, papers)}, {b: reason})`` of a method on the batch, or with a
    rubric on each criterion's batch, the rubric mean of the criteria's scores (a replication's
    reason names the first criterion it failed on, as :func:`replicate`'s rows)."""
    if rubric is None:
        by_level, failed = paper_scores_by_shrinkage(code, variant, batches[0], levels)
        return by_level, {b: failure_reason(exc) for b, exc in failed.items()}
    each = rubric.score == "each"
    own = own_shrinkage(make_method(code, variant))
    # the levels fitted on each criterion: every one scoring each criterion; for the rubric mean the
    # unshrunk scores and a Rasch fit's own EAP (kelley), the other levels shrinking the mean itself
    computed = levels if each else tuple(s for s in levels if s == "none" or (own and s == "kelley"))
    computed = computed if "none" in computed or each else ("none",) + computed
    per = [paper_scores_by_shrinkage(code, variant, batch, computed) for batch in batches]
    failed = {}
    for label, (_, f) in zip(rubric.labels, per):
        for b, exc in sorted(f.items()):
            failed.setdefault(b, f"{label}: {failure_reason(exc)}")
    if each:
        return {s: np.stack([by[s] for by, _ in per], axis=-1).reshape(len(per[0][0][s]), -1) for s in levels}, failed
    out = {s: mean_over_cells(np.stack([by[s] for by, _ in per], axis=-1)) for s in computed}
    rest = [s for s in levels if s not in out]
    if rest:
        rep, paper, rater, _ = flat_ratings(batches[0])
        for s in rest:
            out[s] = _rubric_shrunk(s, out["none"], rep, paper, rater, [b.score.ravel() for b in batches],
                                    batches[0].n_raters)
    return {s: out[s] for s in levels}, failed
