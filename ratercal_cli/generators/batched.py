"""The replications of one cell as one array batch (the Monte Carlo fast path, issue 11).

:func:`generate_batch` makes replications ``reps`` of a cell with exactly the numbers
:func:`ratercal_cli.generators.modern.generate_set` makes one at a time: each replication
draws its random numbers from its own SeedSequences, in the same order and shapes; the
arithmetic on them (PCM probabilities, inverse-CDF sampling, the 2+ bookkeeping) runs once
over the whole batch, element by element, so every value is bit-identical.  The only
reductions whose result depends on the array layout (the BLAS dot of the expected score)
still run per replication on the same shapes as before.

A batch is regular: every paper of a cell keeps the same number of ratings (1, 2, 3; the
2+ design keeps two of its three), so the kept ratings form ``(B, papers, kept)`` arrays in
the .OBS order (paper by paper, rating order within a paper).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..design import Cell
from ..models.pcm import inverse_cdf
from ..ratings import Ratings
from .modern import generate_set, stage_seed

#: the rescaling threshold of :func:`ratercal_cli.models.pcm._probabilities_cm`
_RESCALE = 600


@dataclass
class CellBatch:
    """Replications ``reps`` of ``cell``: kept ratings as ``(B, n, k)`` arrays."""

    cell: Cell
    reps: tuple
    n_raters: int
    rater: np.ndarray            # (B, n, k) int64
    score: np.ndarray            # (B, n, k) int64
    true: np.ndarray             # (B, n) float64

    @property
    def size(self) -> int:
        return len(self.reps)

    @property
    def n_papers(self) -> int:
        return self.rater.shape[1]

    @property
    def per_paper(self) -> int:
        return self.rater.shape[2]

    @property
    def max_score(self) -> int:
        return int(self.cell.max_score)

    def ratings(self, b: int) -> Ratings:
        """Replication ``b`` of the batch as the :class:`Ratings` the runner builds."""
        n, k = self.rater.shape[1:]
        return Ratings(np.repeat(np.arange(n), k), self.rater[b].ravel(), self.score[b].ravel(),
                       self.max_score, n, self.n_raters)


def _probabilities(theta, delta):
    """``_probabilities_cm`` without its rescaling (the caller checks it is not needed):
    the same element-wise operations in the same order."""
    m = delta.shape[-1]
    shape = np.broadcast_shapes(theta.shape, delta.shape[:-1])
    p = np.zeros((m + 1,) + shape)
    for k in range(m):
        p[k + 1] = p[k] + (theta - delta[..., k])
    flat = p.reshape(m + 1, shape[0], -1)     # per replication: the largest |p| (max and -min)
    big = np.maximum(np.maximum.reduce(flat, axis=0).max(axis=1),
                     -np.minimum.reduce(flat, axis=0).min(axis=1)) > _RESCALE
    np.exp(p, out=p)
    p /= p.sum(axis=0)
    return p, big


def _from_sets(cell, reps, sets, n_raters):
    """A batch from :class:`GeneratedSet` objects (the generic path)."""
    raters, scores, trues = [], [], []
    for gen in sets:
        o = gen.observed
        k = o.kept
        per = int(np.bincount(o.paper[k], minlength=cell.papers).max()) if k.any() else 0
        raters.append(o.rater[k].reshape(cell.papers, per))
        scores.append(o.score[k].reshape(cell.papers, per))
        trues.append(gen.true_score)
    return CellBatch(cell, tuple(reps), n_raters, np.stack(raters), np.stack(scores), np.stack(trues))


def generate_batch(cell: Cell, generator: str, seed: int, reps, steps=None, linear=None,
                   true_score: str = "model", n_raters=None) -> CellBatch:
    """Replications ``reps`` of ``cell``, bit-identical to ``generate_set`` one by one.

    The PCM generator runs batched; the others (and any replication whose PCM
    log-numerators would need ``_probabilities_cm``'s rescaling) go through
    :func:`generate_set`.
    """
    reps = tuple(int(r) for r in reps)
    if generator != "pcm":
        sets = [generate_set(cell, generator, seed, r, steps, linear, true_score) for r in reps]
        nr = n_raters or (len(linear["effects"]) if generator == "linear" else np.asarray(steps).shape[0])
        return _from_sets(cell, reps, sets, nr)
    steps = np.asarray(steps, dtype=np.float64)
    nr, n, m = steps.shape[0], cell.papers, cell.max_score
    two_plus = cell.raters_per_paper == "2+"
    k = cell.raters_drawn
    B = len(reps)
    z = np.empty((B, n))
    order_u = np.empty((B, n, nr))
    u = np.empty((B, n, k))
    for b, r in enumerate(reps):   # each replication's draws, in generate_set's order
        z[b] = np.random.default_rng(stage_seed(seed, cell.code, r, 0)).standard_normal(n)
        rng = np.random.default_rng(stage_seed(seed, cell.code, r, 1))
        order_u[b] = rng.random((n, nr))
        if two_plus:
            u[b, :, :2] = rng.random((n, 2))
            u[b, :, 2:] = rng.random((n, 1))
        else:
            u[b] = rng.random((n, k))
    quality = draw_quality_batch(z, cell)
    # truegen: mean over the raters of the PCM expected score (tensordot: per replication)
    p_true, big_true = _probabilities(quality[:, :, None], steps[None, None, :, :])
    cats = np.arange(m + 1, dtype=np.float64)
    true = np.empty((B, n))
    for b in range(B):
        true[b] = np.tensordot(cats, np.ascontiguousarray(p_true[:, b]), axes=1).mean(axis=1)
    # obsgen
    raters = np.argsort(order_u, axis=2)[:, :, :k]
    p_obs, big_obs = _probabilities(quality[:, :, None], steps[raters])
    s = inverse_cdf(p_obs, u)
    big = big_true | big_obs   # some scoring call of generate_set would rescale
    if two_plus:
        third = np.abs(s[:, :, 0] - s[:, :, 1]) > 1
        d1, d2 = np.abs(s[:, :, 2] - s[:, :, 0]), np.abs(s[:, :, 2] - s[:, :, 1])
        keep1 = (d1 < d2) | ((d1 == d2) & (s[:, :, 0] > s[:, :, 1]))
        # kept ratings in file order: (r1, r2) without a third; (r1 or r2, r3) with one
        first = np.where(third & ~keep1, 1, 0)
        second = np.where(third, 2, 1)
        pick = np.stack([first, second], axis=2)
        r_kept = np.take_along_axis(raters, pick, axis=2)
        s_kept = np.take_along_axis(s, pick, axis=2)
    else:
        r_kept, s_kept = raters, s
    batch = CellBatch(cell, reps, nr, r_kept.astype(np.int64), s_kept.astype(np.int64), true)
    for b in np.flatnonzero(big):      # rescaled PCM numerators: the generic path
        one = _from_sets(cell, (reps[b],), [generate_set(cell, generator, seed, reps[b], steps, linear,
                                                         true_score)], nr)
        batch.rater[b], batch.score[b], batch.true[b] = one.rater[0], one.score[0], one.true[0]
    return batch


def draw_quality_batch(z, cell: Cell):
    """:func:`draw_quality`'s shapes of z, element-wise over a batch."""
    if cell.quality == "normal":
        return 3.0 * z + 2.0
    if cell.quality == "positive":
        return 5.0 * np.abs(z) - 3.0
    return -5.0 * np.abs(z) + 7.0

