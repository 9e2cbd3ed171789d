"""Classical (Torgerson) multidimensional scaling, for maps of distances between methods.

The dissertation drew Figures 7-10 with SPSS-X ALSCAL (non-metric); classical MDS is the
closed-form metric analogue: ``B = -1/2 J D^2 J`` (``J`` the centring matrix), coordinates
``X = V_k sqrt(L_k)`` from the ``k`` largest eigenvalues of ``B``.
"""

from __future__ import annotations

import numpy as np


def classical_mds(distances, k=2):
    """Coordinates ``(n, k)`` and all eigenvalues of ``B`` (descending) for a distance matrix.

    Signs are fixed so the output is deterministic: on each axis the point farthest from the
    origin (the first of equals) has a positive coordinate.  Axes with a non-positive
    eigenvalue get zero coordinates.
    """
    d = np.asarray(distances, dtype=np.float64)
    if d.ndim != 2 or d.shape[0] != d.shape[1]:
        raise ValueError(f"distances must be a square matrix, got shape {d.shape}")
    if not np.all(np.isfinite(d)):
        raise ValueError("distances must be finite")
    d = (d + d.T) / 2.0
    n = d.shape[0]
    j = np.eye(n) - 1.0 / n
    b = -0.5 * j @ (d * d) @ j
    lam, vec = np.linalg.eigh((b + b.T) / 2.0)
    order = np.argsort(-lam, kind="stable")
    lam, vec = lam[order], vec[:, order]
    coords = np.zeros((n, k))
    for a in range(min(k, n)):
        if lam[a] <= 1e-12 * max(1.0, abs(lam[0])):
            continue
        v = vec[:, a]
        big = int(np.argmax(np.round(np.abs(v), 12)))
        if v[big] < 0:
            v = -v
        coords[:, a] = v * np.sqrt(lam[a])
    return coords, lam


#: Largest methods x methods x papers for which :func:`rmsd_matrix` forms every difference
#: at once (64 MB; the study and the report stay far below it, a million-rating file above).
DENSE_DIFFERENCES = 1 << 23


def rmsd_matrix(scores):
    """Root-mean-square differences between the rows of ``scores`` (methods x papers)."""
    x = np.asarray(scores, dtype=np.float64)
    if x.shape[0] ** 2 * x.shape[-1] <= DENSE_DIFFERENCES:
        diff = x[:, None, :] - x[None, :, :]
        return np.sqrt(np.mean(diff * diff, axis=-1))
    out = np.empty((x.shape[0], x.shape[0]))
    for a in range(x.shape[0]):   # a method at a time: memory methods x papers (equal to rounding)
        diff = x[a] - x
        out[a] = np.mean(diff * diff, axis=-1)
    return np.sqrt(out)
