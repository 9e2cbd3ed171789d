"""The partial credit model (Masters 1982) for raters.

A rater ``j`` with step parameters ``delta[j, 1..M]`` gives a paper of quality
``theta`` the score ``x`` with probability

    P(x) = exp(sum_{k<=x} (theta - delta[j, k])) / sum_h exp(sum_{k<=h} (theta - delta[j, k]))

(the empty sum for x = 0 is 0).  ``delta`` arrays here have shape ``(..., M)``:
``delta[..., k-1]`` is step ``k``.
"""

from __future__ import annotations

import numpy as np


def _log_numerators_cm(theta, delta):
    """Category-major log numerators, shape ``(M+1,) + broadcast``: a loop over the
    few categories beats ``cumsum`` along a short last axis."""
    theta = np.asarray(theta, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    shape = np.broadcast_shapes(theta.shape, delta.shape[:-1])
    m = delta.shape[-1]
    out = np.zeros((m + 1,) + shape)
    for k in range(m):
        out[k + 1] = out[k] + (theta - delta[..., k])
    return out


def _probabilities_cm(theta, delta):
    p = _log_numerators_cm(theta, delta)
    if p.size and np.abs(p).max() > 600:  # rescale only where exp could overflow
        p -= p.max(axis=0, keepdims=True)
    np.exp(p, out=p)
    p /= p.sum(axis=0)
    return p


def category_probabilities(theta, delta):
    """P(x), x = 0..M, for every theta and rater (broadcasting), last axis = category."""
    return np.moveaxis(_probabilities_cm(theta, delta), 0, -1)


def expected_score(theta, delta):
    """E[X | theta] = sum_x x P(x)."""
    p = _probabilities_cm(theta, delta)
    return np.tensordot(np.arange(p.shape[0], dtype=np.float64), p, axes=1)


def score_variance(theta, delta):
    """Var[X | theta], the derivative of the expected score in theta."""
    p = category_probabilities(theta, delta)
    x = np.arange(p.shape[-1], dtype=np.float64)
    m = p @ x
    return p @ (x * x) - m * m


def sample_scores(rng, theta, delta):
    """Draw a score per (theta, delta) pair from the PCM by inverting the CDF."""
    p = _probabilities_cm(theta, delta)
    return inverse_cdf(p, rng.random(p.shape[1:]))


def inverse_cdf(p, u):
    """The category whose cumulative probability first reaches ``u``: ``p`` category-major
    ``(K,) + shape``, ``u`` uniform draws of ``shape`` (added up category by category)."""
    cdf = np.zeros_like(u)
    score = np.zeros(u.shape, dtype=np.int64)
    for k in range(p.shape[0] - 1):
        cdf += p[k]
        score += u > cdf
    return score
