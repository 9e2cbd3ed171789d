"""The partial credit model (Masters 1982) for raters.

A rater ``j`` with step parameters ``delta[j, 1..M]`` gives a paper of quality
``theta`` the score ``x`` with probability

    P(x) = exp(sum_{k<=x} (theta - delta[j, k])) / sum_h exp(sum_{k<=h} (theta - delta[j, k]))

(the empty sum for x = 0 is 0).  ``delta`` arrays here have shape ``(..., M)``:
``delta[..., k-1]`` is step ``k``.
"""

from __future__ import annotations

import numpy as np


def category_log_numerators(theta, delta):
    """log of P(x)'s numerator, shape ``broadcast(theta, delta[..., 0]) + (M+1,)``."""
    theta = np.asarray(theta, dtype=np.float64)[..., None]
    delta = np.asarray(delta, dtype=np.float64)
    steps = theta - delta
    zero = np.zeros(steps.shape[:-1] + (1,))
    return np.concatenate([zero, np.cumsum(steps, axis=-1)], axis=-1)


def category_probabilities(theta, delta):
    """P(x), x = 0..M, for every theta and rater (broadcasting), last axis = category."""
    logn = category_log_numerators(theta, delta)
    logn -= logn.max(axis=-1, keepdims=True)
    p = np.exp(logn)
    return p / p.sum(axis=-1, keepdims=True)


def expected_score(theta, delta):
    """E[X | theta] = sum_x x P(x)."""
    p = category_probabilities(theta, delta)
    return p @ np.arange(p.shape[-1], dtype=np.float64)


def score_variance(theta, delta):
    """Var[X | theta], the derivative of the expected score in theta."""
    p = category_probabilities(theta, delta)
    x = np.arange(p.shape[-1], dtype=np.float64)
    m = p @ x
    return p @ (x * x) - m * m


def sample_scores(rng, theta, delta):
    """Draw a score per (theta, delta) pair from the PCM by inverting the CDF."""
    p = category_probabilities(theta, delta)
    cdf = np.cumsum(p, axis=-1)
    u = rng.random(cdf.shape[:-1] + (1,))
    return np.minimum((u > cdf).sum(axis=-1), p.shape[-1] - 1)
