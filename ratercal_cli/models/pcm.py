"""The partial credit model (Masters 1982) for raters.

A rater ``j`` with step parameters ``delta[j, 1..M]`` gives a paper of quality
``theta`` the score ``x`` with probability

    P(x) = exp(sum_{k<=x} (theta - delta[j, k])) / sum_h exp(sum_{k<=h} (theta - delta[j, k]))

(the empty sum for x = 0 is 0).  ``delta`` arrays here have shape ``(..., M)``:
``delta[..., k-1]`` is step ``k``.

This is the generators' evaluation of the formula (category-major, the log numerators as a running
sum of ``theta - delta``, ``exp`` less the maximum only where it could overflow, the categories
added one after the other).  The estimators evaluate the same formula from cumulative parameters
``tau`` (:func:`ratercal_cli.methods.quality.category_probabilities`: ``x theta - tau[x]`` less its
maximum, numpy's pairwise sum from 8 categories on).  The two agree to 2e-14 (relative;
``tests/methods/test_quality.py``) but only about a third of their values to the bit, and every
generated true score and every estimate is written at full precision: one evaluation for both
would change the bytes of every run folder and committed Monte Carlo result.  They stay two, each
used by one side only (a simulation from fitted parameters, :mod:`ratercal_cli.practice.simulate`,
takes the estimators' probabilities and this module's :func:`inverse_cdf`).
"""

from __future__ import annotations

import numpy as np


#: Where a log numerator's absolute value exceeds this, ``exp`` could overflow: the
#: probabilities are then computed from numerators less their maximum (the same to rounding).
RESCALE_ABOVE = 600


def log_numerators_cm(theta, delta):
    """Category-major log numerators ``sum_{k<=x} (theta - delta[..., k])``, shape ``(M+1,) +
    broadcast``: a loop over the few categories beats ``cumsum`` along a short last axis."""
    theta = np.asarray(theta, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    shape = np.broadcast_shapes(theta.shape, delta.shape[:-1])
    m = delta.shape[-1]
    out = np.zeros((m + 1,) + shape)
    for k in range(m):
        out[k + 1] = out[k] + (theta - delta[..., k])
    return out


def needs_rescale(log_num, per_batch=False):
    """Whether any ``|log numerator|`` exceeds :data:`RESCALE_ABOVE`: one flag for the whole
    array, or with ``per_batch`` one per index of its second axis (a batch of replications
    behind the category axis, each of which one call of :func:`probabilities_cm` would make)."""
    if log_num.size == 0:
        return np.zeros(log_num.shape[1], dtype=bool) if per_batch else False
    flat = log_num.reshape(log_num.shape[0], log_num.shape[1] if per_batch else 1, -1)
    top = np.maximum.reduce(flat, axis=0).max(axis=1)
    low = np.minimum.reduce(flat, axis=0).min(axis=1)
    big = np.maximum(top, -low) > RESCALE_ABOVE
    return big if per_batch else bool(big[0])


def normalise_cm(log_num, rescale):
    """Category-major probabilities from log numerators, in place: ``exp`` (less the maximum
    over the categories first where ``rescale``), divided by the sum over the categories."""
    if rescale:
        log_num -= log_num.max(axis=0, keepdims=True)
    np.exp(log_num, out=log_num)
    log_num /= log_num.sum(axis=0)
    return log_num


def probabilities_cm(theta, delta):
    """P(x), category-major ``(M+1,) + broadcast``, rescaled only where exp could overflow."""
    p = log_numerators_cm(theta, delta)
    return normalise_cm(p, needs_rescale(p))


def category_probabilities(theta, delta):
    """P(x), x = 0..M, for every theta and rater (broadcasting), last axis = category."""
    return np.moveaxis(probabilities_cm(theta, delta), 0, -1)


def expected_score(theta, delta):
    """E[X | theta] = sum_x x P(x)."""
    return expected_cm(probabilities_cm(theta, delta))


def expected_cm(p):
    """``sum_x x P(x)`` of category-major probabilities ``p`` (one BLAS product)."""
    return np.tensordot(np.arange(p.shape[0], dtype=np.float64), p, axes=1)


def score_variance(theta, delta):
    """Var[X | theta], the derivative of the expected score in theta."""
    p = category_probabilities(theta, delta)
    x = np.arange(p.shape[-1], dtype=np.float64)
    m = p @ x
    return p @ (x * x) - m * m


def sample_scores(rng, theta, delta):
    """Draw a score per (theta, delta) pair from the PCM by inverting the CDF."""
    p = probabilities_cm(theta, delta)
    return inverse_cdf(p, rng.random(p.shape[1:]))


def scores_from_uniforms(theta, delta, u):
    """:func:`sample_scores` with its uniform draws ``u`` (the broadcast shape) given."""
    return inverse_cdf(probabilities_cm(theta, delta), u)


def inverse_cdf(p, u):
    """The category whose cumulative probability first reaches ``u``: ``p`` category-major
    ``(K,) + shape``, ``u`` uniform draws of ``shape`` (added up category by category)."""
    cdf = np.zeros_like(u)
    score = np.zeros(u.shape, dtype=np.int64)
    for k in range(p.shape[0] - 1):
        cdf += p[k]
        score += u > cdf
    return score
