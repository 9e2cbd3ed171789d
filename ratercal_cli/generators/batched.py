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
from functools import cached_property

import numpy as np

from ..design import Cell
from ..models import pcm as pcm_model
from ..ratings import Ratings
from .modern import draw_for_scores, draw_papers, draw_raters, generate_set, stage_seed, two_plus_kept


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

    @cached_property
    def ratings_per_rater(self) -> np.ndarray:
        """``(B, n_raters)``: each replication's :meth:`Ratings.ratings_per_rater`."""
        key = np.arange(self.size)[:, None] * self.n_raters + self.rater.reshape(self.size, -1)
        return np.bincount(key.ravel(), minlength=self.size * self.n_raters).reshape(self.size, self.n_raters)

    def ratings(self, b: int) -> Ratings:
        """Replication ``b`` of the batch as the :class:`Ratings` the runner builds."""
        n, k = self.rater.shape[1:]
        return Ratings(np.repeat(np.arange(n), k), self.rater[b].ravel(), self.score[b].ravel(),
                       self.max_score, n, self.n_raters)


def _probabilities(theta, delta):
    """:func:`~ratercal_cli.models.pcm.probabilities_cm` of every replication (the second axis of
    the result) at once, without its rescaling: also which replications would have needed it
    (the caller makes those one by one)."""
    p = pcm_model.log_numerators_cm(theta, delta)
    big = pcm_model.needs_rescale(p, per_batch=True)
    return pcm_model.normalise_cm(p, rescale=False), big


def _from_sets(cell, reps, sets, n_raters, criterion=None):
    """A batch from :class:`GeneratedSet` objects (the generic path); ``criterion``: the ratings
    of that criterion of a rubric's, against the papers' true scores on it."""
    raters, scores, trues = [], [], []
    for gen in sets:
        o = gen.observed
        k = o.kept if criterion is None else o.kept & (o.criterion == criterion)
        per = int(np.bincount(o.paper[k], minlength=cell.papers).max()) if k.any() else 0
        raters.append(o.rater[k].reshape(cell.papers, per))
        scores.append(o.score[k].reshape(cell.papers, per))
        trues.append(gen.true_score if criterion is None else gen.criterion_true[:, criterion])
    return CellBatch(cell, tuple(reps), n_raters, np.stack(raters), np.stack(scores), np.stack(trues))


def generate_batch(cell: Cell, generator: str, seed: int, reps, steps=None, linear=None,
                   true_score: str = "model", n_raters=None, effects=None) -> CellBatch:
    """Replications ``reps`` of ``cell``, bit-identical to ``generate_set`` one by one.

    The PCM generator runs batched; the others, rater effects or a non-random assignment
    (``effects``, :mod:`.effects`), and any replication whose PCM log-numerators would need
    ``_probabilities_cm``'s rescaling go through :func:`generate_set`.
    """
    reps = tuple(int(r) for r in reps)
    if generator != "pcm" or (effects is not None and not effects.neutral):
        sets = [generate_set(cell, generator, seed, r, steps, linear, true_score, effects) for r in reps]
        nr = n_raters or (len(linear["effects"]) if generator == "linear" else np.asarray(steps).shape[0])
        return _from_sets(cell, reps, sets, nr)
    steps = np.asarray(steps, dtype=np.float64)
    nr, n, k = steps.shape[0], cell.papers, cell.raters_drawn
    B = len(reps)
    quality = np.empty((B, n))
    raters = np.empty((B, n, k), dtype=np.int64)
    u = np.empty((B, n, k))
    for b, r in enumerate(reps):   # each replication's draws, by generate_set's own functions
        quality[b] = draw_papers(cell, generator, stage_seed(seed, cell.code, r, 0))
        rng = np.random.default_rng(stage_seed(seed, cell.code, r, 1))
        raters[b] = draw_raters(rng, n, nr, k)
        u[b] = draw_for_scores(rng, cell, generator)
    # truegen: mean over the raters of the PCM expected score (its BLAS product per replication)
    p_true, big_true = _probabilities(quality[:, :, None], steps[None, None, :, :])
    true = np.empty((B, n))
    for b in range(B):
        true[b] = pcm_model.expected_cm(np.ascontiguousarray(p_true[:, b])).mean(axis=1)
    # obsgen
    p_obs, big_obs = _probabilities(quality[:, :, None], steps[raters])
    s = pcm_model.inverse_cdf(p_obs, u)
    big = big_true | big_obs   # some scoring call of generate_set would rescale
    if cell.raters_per_paper == "2+":
        # kept ratings in file order: (r1, r2) without a third; (r1 or r2, r3) with one
        kept = two_plus_kept(s)
        pick = np.stack([np.where(kept[..., 0], 0, 1), np.where(kept[..., 2], 2, 1)], axis=2)
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


def generate_rubric_batches(cell: Cell, generator: str, seed: int, reps, steps, true_score: str, n_raters,
                            effects, rubric):
    """Replications ``reps`` of ``cell`` with an analytic rubric (:func:`generate_set` one by one):
    ``(one CellBatch per criterion, its ratings against the true scores on it; the rubric
    means of the true scores (B, papers))``."""
    reps = tuple(int(r) for r in reps)
    sets = [generate_set(cell, generator, seed, r, steps, None, true_score, effects, rubric) for r in reps]
    batches = [_from_sets(cell, reps, sets, n_raters, c) for c in range(rubric.count)]
    return batches, np.stack([g.true_score for g in sets])
