"""Single-precision helpers shared by the faithful classical methods (EZEQ.BAS, EQPEQ.BAS).

QuickBASIC variables without a type suffix are singles.  The faithful variants
round every arithmetic step to float32, as the BASIC stores each intermediate;
these helpers do the per-rater sums and the per-paper ``adj / mj`` that way.
"""

from __future__ import annotations

import numpy as np


F32 = np.float32


def _stack_key(index, size):
    """``index`` ``(L,)`` as it is; a stack ``(B, L)`` as ``b * size + index``, flattened: the
    index of row ``b``'s entries in a ``(B, size)`` array."""
    index = np.asarray(index)
    if index.ndim == 1:
        return index
    rows = index.shape[0]
    return (np.arange(rows)[:, None] * size + index.reshape(rows, -1)).ravel()


def sums_by(index, size, values=None, key=None):
    """Sums of ``values`` (default: counts) per index ``0..size-1`` (a rater, a team), float64,
    added in input order like ``np.bincount(index, values, size)``.  ``index`` and ``values``
    are ``(L,)`` (one data set) or ``(B, L)`` (a stack of replications, the Monte Carlo fast
    path): the result is ``(size,)`` or ``(B, size)``, each row the sums of its replication
    alone.  ``key``: :func:`_stack_key` of ``index``, if the caller has it."""
    index = np.asarray(index)
    lead = index.shape[:-1]
    key = _stack_key(index, size) if key is None else key
    w = None if values is None else np.asarray(values, dtype=np.float64).ravel()
    sums = np.bincount(key, weights=w, minlength=int(np.prod(lead)) * size)
    return sums.astype(np.float64).reshape(lead + (size,))


def at_rater(per_rater, rater):
    """Each rating's value of a per-rater array: ``per_rater[rater]``, row by row for stacks."""
    rater = np.asarray(rater)
    if rater.ndim == 1:
        return per_rater[rater]
    return per_rater.reshape(-1)[_stack_key(rater, per_rater.shape[-1])].reshape(rater.shape)


def rater_sums(rater, score, n_raters, dtype=np.float64):
    """Per-rater ``n(j), s(j), ss(j)`` and the totals (EZEQ.BAS's loading loop), of one data
    set or of each replication of a stack (see :func:`sums_by`; totals then ``(B,)``).

    Scores are integers, so the sums are exact in float64; callers round them to
    float32 (exact up to 2**24, far beyond any data set here).
    """
    x = np.asarray(score).astype(np.float64)
    key = _stack_key(rater, n_raters)
    n = sums_by(rater, n_raters, key=key)
    s = sums_by(rater, n_raters, x, key=key)
    ss = sums_by(rater, n_raters, x * x, key=key)
    return (n.astype(dtype), s.astype(dtype), ss.astype(dtype),
            dtype(x.shape[-1]), dtype(x.sum(axis=-1)), dtype((x * x).sum(axis=-1)))


def paper_mean_single(ratings, values) -> np.ndarray:
    """EZEQ/EQPEQ paper score: ``adj = adj + sc`` over the paper's ratings in file
    order, each sum rounded to single, then ``adj / mj`` in single.

    ``mj`` is taken as the paper's number of ratings (the BASIC's ``mj`` equals it:
    2+ sets keep two ratings per paper).  Papers without ratings get 0, like
    :meth:`Ratings.paper_mean` (the base class's double-precision mean); the estimators' transform
    makes their score nan.
    """
    values = np.asarray(values, dtype=F32)
    paper = ratings.paper
    counts = np.bincount(paper, minlength=ratings.n_papers)
    acc = np.zeros(ratings.n_papers, dtype=F32)
    if values.size:
        order = np.argsort(paper, kind="stable")
        p_sorted = paper[order]
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pos = np.arange(order.size) - starts[p_sorted]
        for k in range(int(counts.max())):
            sel = pos == k
            idx = p_sorted[sel]
            acc[idx] = (acc[idx] + values[order[sel]]).astype(F32)
    out = (acc / np.maximum(counts, 1).astype(F32)).astype(F32)
    return out.astype(np.float64)


def batch_paper_mean(values, variant):
    """Paper score as the mean of its adjusted ratings, for a batch of replications: ``values``
    ``(B, n, k)``, ``k`` ratings of each paper.

    Faithful: ``adj = adj + sc`` in singles, left to right, then ``adj / mj`` in single
    (:func:`~ratercal_cli.methods._single.paper_mean_single`); corrected: the float64 sum in
    rating order divided by the count (:meth:`Ratings.paper_mean`)."""
    k = values.shape[2]
    if variant == "faithful":
        v = np.asarray(values, dtype=F32)
        acc = np.zeros(v.shape[:2], dtype=F32)
        for j in range(k):
            acc = (acc + v[:, :, j]).astype(F32)
        return (acc / F32(k)).astype(F32).astype(np.float64)
    v = np.asarray(values, dtype=np.float64)
    acc = np.zeros(v.shape[:2])
    for j in range(k):
        acc = acc + v[:, :, j]
    return acc / k
