"""The sequential (continuation-ratio) process OBSGEN.BAS really samples from.

Starting at 0, the rater passes step ``k`` (``k = score + 1``) with probability
``1 / (1 + exp(delta[k] - theta))`` and stops at the first failure or at M:

    sc = 0: DO UNTIL RND > 1 / (1 + EXP(J(r, sc + 1) - ab)): sc = sc + 1: IF sc = mp THEN EXIT DO: LOOP

So P(X >= k | X >= k-1) = logistic(theta - delta[k]), which is not the PCM's
adjacent-category probability.
"""

from __future__ import annotations

import numpy as np


def pass_probabilities(theta, delta):
    """logistic(theta - delta[k]) for every step, shape ``broadcast + (M,)``."""
    theta = np.asarray(theta, dtype=np.float64)[..., None]
    return 1.0 / (1.0 + np.exp(np.asarray(delta, dtype=np.float64) - theta))


def category_probabilities(theta, delta):
    """P(x) = prod_{k<=x} q_k * (1 - q_{x+1}), with q_{M+1} = 0."""
    q = pass_probabilities(theta, delta)
    reach = np.concatenate([np.ones(q.shape[:-1] + (1,)), np.cumprod(q, axis=-1)], axis=-1)
    stop = np.concatenate([1.0 - q, np.ones(q.shape[:-1] + (1,))], axis=-1)
    return reach * stop


def expected_score(theta, delta):
    p = category_probabilities(theta, delta)
    return p @ np.arange(p.shape[-1], dtype=np.float64)


def sample_scores(rng, theta, delta):
    """Draw a score per (theta, delta) pair from the process's category probabilities
    (one uniform per score, inverting the CDF; OBSGEN drew one per step attempted)."""
    p = category_probabilities(theta, delta)
    return _inverse_cdf(p, rng.random(p.shape[:-1]))


def scores_from_uniforms(theta, delta, u):
    """:func:`sample_scores` with its uniform draws ``u`` (the broadcast shape) given."""
    return _inverse_cdf(category_probabilities(theta, delta), u)


def _inverse_cdf(p, u):
    """The first category whose cumulative probability reaches ``u`` (``p``'s last axis)."""
    cdf = np.cumsum(p, axis=-1)
    return np.minimum((u[..., None] > cdf).sum(axis=-1), p.shape[-1] - 1)
