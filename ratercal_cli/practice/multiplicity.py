"""Adjusting p-values for many tests at once."""

from __future__ import annotations

import numpy as np


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaNs kept, not counted)."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out
