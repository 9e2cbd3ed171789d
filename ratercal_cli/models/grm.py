"""The graded response model (Samejima 1969, Psychometrika Monograph 17) for raters: a model none
of the study's methods assumes (they are additive, linear or partial-credit models).

Rater ``j`` with slope ``a_j`` and ordered thresholds ``b_j1 < ... < b_jM`` gives a paper of quality
``theta`` a score of at least ``k`` with the cumulative logistic probability

    P(X >= k) = 1 / (1 + exp(-(a_j theta - a_j b_jk))),   k = 1..M;   P(X >= 0) = 1, P(X >= M+1) = 0

and ``P(x) = P(X >= x) - P(X >= x + 1)`` (Samejima's eq. 2.9; Embretson & Reise 2000, *Item
Response Theory for Psychologists*, sec. 5.2).  The generators pass ``theta`` and ``delta`` already
multiplied by the slope (:meth:`ratercal_cli.rater_effects.RaterEffects.rating_model`), as for the
PCM: here ``P(X >= k) = logistic(theta - delta[..., k-1])``, ``delta`` of shape ``(..., M)`` and
increasing along its last axis (a rater whose thresholds are out of order has negative
probabilities: the config refuses it).  The expected score is ``sum_k P(X >= k)``.
"""

from __future__ import annotations

import numpy as np

from .pcm import expected_cm, inverse_cdf


def cumulative_cm(theta, delta):
    """``P(X >= k)``, ``k = 1..M``, category-major ``(M,) + broadcast``."""
    theta = np.asarray(theta, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    shape = np.broadcast_shapes(theta.shape, delta.shape[:-1])
    z = np.broadcast_to(theta, shape)[None] - np.moveaxis(np.broadcast_to(delta, shape + delta.shape[-1:]), -1, 0)
    return 0.5 * (1.0 + np.tanh(0.5 * z))        # the logistic, without overflow at any z


def probabilities_cm(theta, delta):
    """``P(x)``, ``x = 0..M``, category-major ``(M+1,) + broadcast``."""
    c = cumulative_cm(theta, delta)
    one = np.ones((1,) + c.shape[1:])
    upper = np.concatenate([one, c], axis=0)
    lower = np.concatenate([c, np.zeros_like(one)], axis=0)
    return upper - lower


def category_probabilities(theta, delta):
    """``P(x)`` for every theta and rater (broadcasting), last axis = category."""
    return np.moveaxis(probabilities_cm(theta, delta), 0, -1)


def expected_score(theta, delta):
    """``E[X | theta] = sum_x x P(x)``."""
    return expected_cm(probabilities_cm(theta, delta))


def scores_from_uniforms(theta, delta, u):
    """Scores drawn by inverting the CDF with the uniforms ``u`` (the broadcast shape)."""
    return inverse_cdf(probabilities_cm(theta, delta), u)
