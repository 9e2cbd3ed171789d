"""The rows of a chunk of replications, computed as one batch (the Monte Carlo fast path).

:func:`chunk_rows` gives exactly the rows :func:`ratercal_cli.runner.replicate` gives for
each replication ``start..stop-1`` of a cell, in the same order (replication, variant,
method), with the same bytes: the data sets come from
:func:`~ratercal_cli.generators.batched.generate_batch`, the methods from
:func:`~ratercal_cli.methods.batched.paper_scores`, and the criteria are the runner's,
computed per replication with row-wise reductions that sum like the 1-d arrays of
:mod:`ratercal_cli.criteria`.
"""

from __future__ import annotations

import numpy as np

from . import criteria
from .generators.batched import generate_batch
from .methods import make_method
from .methods.apply import failure_reason
from .methods.batched import paper_scores


def batch_criteria(P, T, cut):
    """Per replication ``(rmse, r, maxdiff, bias, accuracy, pass_adjusted)`` of paper scores
    ``P`` against true scores ``T`` (both ``(B, n)``), as :func:`runner.replicate` computes
    them with :func:`criteria.paper_criteria`, ``decision_agreement`` and ``passes``."""
    D = P - T
    rmse = np.sqrt(np.mean(D ** 2, axis=1))
    maxdiff = np.max(np.abs(D), axis=1)
    bias = np.mean(D, axis=1)
    pp, pt = criteria.passes(P, cut), criteria.passes(T, cut)
    acc = np.mean(pp == pt, axis=1)
    pass_adj = np.mean(pp, axis=1)
    da = P - P.mean(axis=1, keepdims=True)
    db = T - T.mean(axis=1, keepdims=True)
    r = np.full(P.shape[0], np.nan)
    if P.shape[1] >= 2:
        for b in range(P.shape[0]):     # BLAS dot, on the same 1-d vectors as pearson_r
            denom = np.sqrt((da[b] @ da[b]) * (db[b] @ db[b]))
            if denom != 0:
                r[b] = float(np.clip((da[b] @ db[b]) / denom, -1.0, 1.0))
    return rmse, r, maxdiff, bias, acc, pass_adj


def chunk_rows(spec, cell, start, stop):
    """Rows (lists of strings, :data:`runner.COLUMNS`) of replications ``start..stop-1``,
    one list per replication."""
    from .runner import CRITERIA, _num

    reps = range(start, stop)
    batch = generate_batch(cell, spec.generator, spec.seed, reps, spec.steps_for(cell.max_score),
                           spec.linear or None, spec.true_score, spec.n_raters)
    cut = criteria.cut_for_scale(spec.cut, cell.max_score)
    T = batch.true
    pass_true = np.mean(criteria.passes(T, cut), axis=1)
    one_rater = batch.per_paper < 2
    out = [[] for _ in reps]
    for variant in spec.variants:
        for code in spec.methods:
            if one_rater and make_method(code, variant).needs_multiple_raters:
                continue
            P, failed = paper_scores(code, variant, batch)
            crit = batch_criteria(P, T, cut)
            for b, rep in enumerate(reps):
                head = [cell.code, str(rep), variant, code]
                if b in failed:
                    msg = failure_reason(failed[b]).replace(",", ";")
                    out[b].append(head + [""] * len(CRITERIA) + [msg])
                else:
                    vals = [c[b] for c in crit] + [pass_true[b]]
                    out[b].append(head + [_num(v) for v in vals] + [""])
    return out
