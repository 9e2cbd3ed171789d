"""One replication, and a chunk of replications as one batch (the fast path).

:func:`replicate` makes replication ``k`` of a cell with its own seeds and applies every method of
every variant through :func:`ratercal_cli.methods.apply.apply_methods`; :func:`chunk_rows` gives the
same rows, byte for byte, for replications ``start..stop-1`` computed as one batch
(:mod:`ratercal_cli.generators.batched`, :mod:`ratercal_cli.methods.batched`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass


from .. import criteria
from ..design import Cell
from ..generators.batched import generate_batch
from ..generators.modern import generate_set
from ..methods import make_method
from ..methods.apply import apply_methods, failure_reason
from ..methods.batched import paper_scores_by_shrinkage
from ..methods.shrinkage import shrunk_papers
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


def replicate(spec: StudySpec, cell: Cell, replication: int, keep: bool = False, timings=None):
    """Make replication ``replication`` of ``cell`` and score every (variant, method).

    Returns the rows (lists of strings in :data:`COLUMNS` order); with ``keep`` a
    :class:`Replication` holding the data as well.  Methods needing two raters are
    skipped on one-rater sets (no row, as the 1990 study skipped them); a method
    that fails on this data set gives a row with empty criteria and the error.
    ``timings``: a dict to which the seconds of the generation (key ``"generate"``)
    and of each (variant, method) fit are added (the benchmark's profile).
    """
    t0 = time.perf_counter() if timings is not None else 0.0
    spec.prepare()
    gen = generate_set(cell, spec.generator, spec.seed, replication, spec.steps_for(cell.max_score),
                       spec.linear or None, spec.true_score, spec.rater_effects())
    o = gen.observed
    k = o.kept
    ratings = Ratings(o.paper[k], o.rater[k], o.score[k], cell.max_score, cell.papers, spec.n_raters)
    true = gen.true_score
    cut = criteria.cut_for_scale(spec.cut, cell.max_score)
    if timings is not None:
        timings["generate"] = timings.get("generate", 0.0) + time.perf_counter() - t0
    rows, adjusted = [], {}
    one_rater = ratings.max_raters_per_paper() < 2
    for variant in spec.variants:
        applied = apply_methods(ratings, spec.methods, variant, timings=timings)
        for shrinkage in spec.shrinkages:
            if shrinkage != "none" and one_rater:   # no within-paper variance: no reliability
                continue
            for code in spec.methods:
                if code in applied.not_applicable:   # as the 1990 study: no row on one-rater sets
                    continue
                head = [cell.code, str(replication), variant, shrinkage, code]
                if code in applied.skipped:
                    rows.append(head + [""] * len(CRITERIA) + [applied.skipped[code].replace(",", ";")])
                    continue
                adj = applied.adjusted[code]
                if keep and shrinkage == "none":
                    adjusted[(variant, code)] = adj
                paper = shrunk_papers(applied.estimators[code], ratings, adj.paper, (shrinkage,))[shrinkage]
                c = criteria.score_set(paper, true, cut)
                rows.append(head + [_num(c[name]) for name in CRITERIA] + [""])
    if keep:
        return Replication(cell, replication, gen, ratings, adjusted, rows)
    return rows


def chunk_rows(spec, cell, start, stop):
    """Rows (lists of strings, :data:`~ratercal_cli.montecarlo.spec.COLUMNS`) of replications ``start..stop-1``,
    one list per replication."""

    reps = range(start, stop)
    batch = generate_batch(cell, spec.generator, spec.seed, reps, spec.steps_for(cell.max_score),
                           spec.linear or None, spec.true_score, spec.n_raters, spec.rater_effects())
    cut = criteria.cut_for_scale(spec.cut, cell.max_score)
    T = batch.true
    one_rater = batch.per_paper < 2
    out = [[] for _ in reps]
    for variant in spec.variants:
        for code in spec.methods:
            if one_rater and make_method(code, variant).needs_multiple_raters:
                continue
            levels = tuple(s for s in spec.shrinkages if s == "none" or not one_rater)
            by_level, failed = paper_scores_by_shrinkage(code, variant, batch, levels)
            for shrinkage in levels:
                crit = criteria.score_sets(by_level[shrinkage], T, cut)
                text = [_nums(crit[name]) for name in CRITERIA]
                for b, rep in enumerate(reps):
                    head = [cell.code, str(rep), variant, shrinkage, code]
                    if b in failed:
                        msg = failure_reason(failed[b]).replace(",", ";")
                        out[b].append(head + [""] * len(CRITERIA) + [msg])
                    else:
                        out[b].append(head + [t[b] for t in text] + [""])
    # the rows of a replication in replicate()'s order: variant, shrinkage, method
    order = {(v, s, m): i for i, (v, s, m) in enumerate((v, s, m) for v in spec.variants for s in spec.shrinkages
                                                          for m in spec.methods)}
    return [sorted(rows, key=lambda r: order[(r[2], r[3], r[4])]) for rows in out]
