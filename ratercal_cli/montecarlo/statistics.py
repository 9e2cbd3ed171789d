"""Means with Monte Carlo standard errors and Student-t intervals, over replications."""

from __future__ import annotations

import math

import numpy as np


def mean_mcse(values):
    """(mean, MCSE, n) of the finite values: MCSE = sd(ddof=1) / sqrt(n); nan when n < 2."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    n = v.size
    if n == 0:
        return math.nan, math.nan, 0
    m = float(v.mean())
    se = float(v.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return m, se, n


def mean_mcse_rows(x):
    """:func:`mean_mcse` along the last axis of ``x``: arrays (mean, MCSE, n)."""
    x = np.asarray(x, dtype=np.float64)
    ok = np.isfinite(x)
    n = ok.sum(axis=-1)
    xs = np.where(ok, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = xs.sum(axis=-1) / n
        ss = np.where(ok, (x - m[..., None]) ** 2, 0.0).sum(axis=-1)
        se = np.sqrt(ss / (n - 1)) / np.sqrt(n)
    m = np.where(n > 0, m, np.nan)
    se = np.where(n > 1, se, np.nan)
    return m, se, n


def t_interval(mean, se, n, level: float = 0.95):
    """``mean +- t(0.5 + level/2, n - 1) * se`` (arrays; nan where n < 2)."""
    n = np.asarray(n)
    from scipy.special import stdtrit   # Student t quantile, imported where used (scipy is slow to load)

    q = stdtrit(np.where(n > 1, n - 1, 1), 0.5 + level / 2)
    half = np.where(n > 1, q * se, np.nan)
    return mean - half, mean + half
