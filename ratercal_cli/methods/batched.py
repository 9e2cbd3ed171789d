"""Methods fitted to a whole batch of replications at once (the Monte Carlo fast path, issue 11).

:func:`paper_scores` gives, for a :class:`~ratercal_cli.generators.batched.CellBatch`
(``B`` replications of one cell, kept ratings as ``(B, n, k)`` arrays), every replication's
paper scores under one method and variant: exactly the numbers the estimator's
``fit_transform(ratings).paper`` gives replication by replication.  To be bit-identical the
batched code performs the same floating-point operations in the same order:

* the arithmetic is the estimators' own: NO..EQP fit and transform ``(B, L)`` stacks of
  per-rating arrays (their ``_fit_arrays``/``_adjust_arrays``), OLS/TLS/RAS and the PCM call
  the pieces of :mod:`.pairwise` and :mod:`.pcm` shaped for stacks; nothing is copied here;
* per-rater and per-paper sums are ``np.bincount`` over ``replication * size + index``
  (:func:`._single.sums_by`: ``bincount`` adds in input order, as it does for one
  replication) or the BASIC's left-to-right float32 accumulations;
* whole-replication sums (pairwise summation) reduce the contiguous last axis of a
  ``(B, L)`` array, which numpy sums exactly as the 1-d array of one replication;
* BLAS/LAPACK calls whose result could depend on the layout run per replication or
  stacked on identical per-matrix shapes.

A method without a batched form here, or a replication the batched form does not cover
(a rare branch such as a zero pivot), is fitted by its estimator, one replication at a time:
:func:`paper_scores` is always correct, and only faster where a batched form exists.
``tests/methods/test_batched.py`` compares both paths exactly on every kind of cell.
"""

from __future__ import annotations

import numpy as np

from ._single import batch_paper_mean


# ----------------------------------------------------------------------------- NO, MN, LI

def _no(batch, variant):
    return batch.score.astype(np.float64)


def _rating_method(code):
    """A rater adjuster that fits and transforms stacked arrays (``_fit_arrays`` and
    ``_adjust_arrays`` on ``(B, L)``): the estimator's own arithmetic, with its defaults,
    on every replication at once."""
    def fit(batch, variant):
        from . import make_method

        est = make_method(code, variant)
        B, n, k = batch.rater.shape
        rater, score = batch.rater.reshape(B, n * k), batch.score.reshape(B, n * k)
        est._fit_arrays(rater, score, batch.n_raters, batch.max_score)
        return est._adjust_arrays(rater, score, batch.max_score).reshape(B, n, k)
    return fit


# ----------------------------------------------------------------------------- dispatch

#: code -> function(batch, variant) giving the adjusted ratings ``(B, n, k)``
_RATING_FITS = {
    "NO": _no,
    "MN": _rating_method("MN"),
    "TMN": _rating_method("TMN"),
    "LI": _rating_method("LI"),
    "TLI": _rating_method("TLI"),
    "EQP": _rating_method("EQP"),
}


def _pcm(batch, variant):
    from .pcm_batched import corrected_pcm_papers, faithful_pcm_papers

    if variant == "faithful":
        return faithful_pcm_papers(batch), {}, None
    return corrected_pcm_papers(batch) + (None,)


def _pairwise(code):
    def fit(batch, variant):
        from .pairwise_batched import pairwise_papers

        P, ok = pairwise_papers(code, variant, batch)
        return P, {}, ~ok      # a rare branch: the estimator itself
    return fit


#: code -> function(batch, variant) giving ``(paper scores (B, n), {b: exception}, refit)``,
#: ``refit`` None or a ``(B,)`` mask of the replications the estimator is to fit alone
_PAPER_FITS = {"PCM": _pcm, "OLS": _pairwise("OLS"), "TLS": _pairwise("TLS"), "RAS": _pairwise("RAS")}


def batched_codes():
    """The method codes with a batched form."""
    return tuple(_RATING_FITS) + tuple(_PAPER_FITS)


def _one(code, variant, batch, b):
    """Replication ``b`` fitted by the estimator itself (through the one apply service): paper
    scores or the exception."""
    from .apply import apply_methods

    applied = apply_methods(batch.ratings(b), [code], variant)
    if code in applied.adjusted:
        return np.asarray(applied.adjusted[code].paper, dtype=np.float64)
    return applied.errors[code]


def _thin(code, variant, batch):
    """Replications with a rater the estimator leaves out of its fit (fewer ratings than its
    ``min_ratings_used()``; the base class then keeps that rater's ratings as given): off the
    batched path, fitted one by one."""
    from . import make_method

    est = make_method(code, variant)
    if est.handles_thin_raters or est.min_ratings_used() <= 1:
        return np.zeros(batch.size, dtype=bool)
    n = batch.ratings_per_rater
    return ((n > 0) & (n < est.min_ratings_used())).any(axis=1)


def paper_scores(code, variant, batch):
    """Paper scores of every replication of ``batch`` under ``code``/``variant``.

    Returns ``(P, failed)``: ``P`` ``(B, n)`` float64 (rows of failed replications are
    nan) and ``failed`` a dict ``{b: exception}`` of replications the method could not
    fit (the estimator's own exception and message)."""
    code = code if ":" in code else code.upper()   # module:Class (a user method) keeps its case
    if code in _RATING_FITS:
        P, failed, alone = batch_paper_mean(_RATING_FITS[code](batch, variant), variant), {}, None
    elif code in _PAPER_FITS:
        P, failed, alone = _PAPER_FITS[code](batch, variant)
    else:   # no batched form: every replication by the estimator
        P, failed, alone = np.full((batch.size, batch.n_papers), np.nan), {}, np.ones(batch.size, dtype=bool)
    if not (alone is not None and alone.all()):
        alone = _thin(code, variant, batch) | (False if alone is None else alone)
    for b in np.flatnonzero(alone):
        one = _one(code, variant, batch, b)
        failed.pop(b, None)
        if isinstance(one, BaseException):
            failed[b] = one
            P[b] = np.nan
        else:
            P[b] = one
    return P, failed


def flat_ratings(batch):
    """The kept ratings of a batch as flat arrays ``(rep, paper, rater, score)`` in rating order."""
    B, n, k = batch.rater.shape
    rep = np.repeat(np.arange(B), n * k)
    paper = np.tile(np.repeat(np.arange(n), k), B)
    return rep, paper, batch.rater.ravel(), batch.score.ravel()


def paper_scores_by_shrinkage(code, variant, batch, shrinkages=("none",)):
    """:func:`paper_scores` at each level of ``shrinkages`` (:mod:`.shrinkage`): ``({level: P},
    failed)``.  A method that scores ``kelley`` itself (MML, MFRM: WLE and EAP; the corrected PCM:
    WLE and EAP under a normal fitted with its steps held) does so: the corrected PCM in its
    batched form (a replication with a thin rater by the estimator), MML/MFRM fitted once per
    replication; for the others ``kelley`` is :func:`.shrinkage.kelley_batch` of the unshrunk
    scores (nan on one-rater data).  ``linear_eb`` is :func:`.shrinkage.linear_eb_batch` of every
    method's unshrunk scores."""
    from . import make_method
    from .shrinkage import OPERATORS_BATCH

    code = code if ":" in code else code.upper()   # module:Class (a user method) keeps its case
    if code == "PCM" and variant != "faithful" and "kelley" in shrinkages:
        from .pcm_batched import corrected_pcm_papers

        both, failed = corrected_pcm_papers(batch, eap=True)
        failed = _levels_alone(code, variant, batch, np.flatnonzero(_thin(code, variant, batch)), both, failed)
        if "linear_eb" in shrinkages:
            from .shrinkage import linear_eb_batch

            both["linear_eb"] = linear_eb_batch(both["none"], *flat_ratings(batch), batch.n_raters)[0]
        return {s: both[s] for s in shrinkages}, failed
    if code not in batched_codes() and callable(getattr(make_method(code, variant), "paper_scores_by_shrinkage", None)):
        out = {s: np.full((batch.size, batch.n_papers), np.nan) for s in shrinkages}
        return out, _levels_alone(code, variant, batch, range(batch.size), out, {})
    P, failed = paper_scores(code, variant, batch)
    out = {}
    for s in shrinkages:
        if s == "none":
            out[s] = P
        elif s in OPERATORS_BATCH:
            out[s] = OPERATORS_BATCH[s](P, *flat_ratings(batch), batch.n_raters)[0]
        else:
            raise ValueError(f"unknown shrinkage {s!r}")
    return out, failed


def _levels_alone(code, variant, batch, rows, out, failed):
    """Replications ``rows`` fitted by the estimator one at a time (through the one apply service),
    each level of ``out`` (``{level: (B, n)}``) filled in place by
    :func:`.shrinkage.shrunk_papers`; returns ``failed`` with theirs set."""
    from .apply import apply_methods
    from .shrinkage import shrunk_papers

    for b in rows:
        ratings = batch.ratings(b)
        applied = apply_methods(ratings, [code], variant)
        failed.pop(b, None)
        if code not in applied.adjusted:
            failed[b] = applied.errors[code]
            for s in out:
                out[s][b] = np.nan
            continue
        by = shrunk_papers(applied.estimators[code], ratings, applied.adjusted[code].paper, tuple(out))
        for s in out:
            out[s][b] = by[s]
    return failed
