"""Modern, seeded generation with numpy's Generator.

Each stage of each data set (cell, replication) has its own ``SeedSequence(seed,
spawn_key=(cell_key(code), replication, stage))``, so any one replication can be
made again on its own, in any order, on any worker.

Generators:

* ``pcm``: scores sampled from the partial credit model; the true score (the mean
  over the raters of the PCM expected score) is then the expected score of the
  process that made the data.
* ``sequential``: the continuation-ratio process OBSGEN.BAS really used.
* ``linear``: Table 15's supplement: true score ~ N(3.5, 1); score =
  round(true + effect_j + N(0, sd_j)), clipped to the scale.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..design import Cell
from ..models import pcm as pcm_model
from ..models import sequential as seq_model
from .basic1990 import ObservedRatings

MODELS = {"pcm": pcm_model, "sequential": seq_model}


def cell_key(code: str) -> int:
    """A stable 32-bit key for a set code (the SeedSequence spawn key)."""
    return int.from_bytes(hashlib.sha256(code.encode()).digest()[:4], "little")


@dataclass
class GeneratedSet:
    quality: np.ndarray          # per paper (the linear model: the true score itself)
    true_score: np.ndarray       # per paper
    rater_true: np.ndarray       # (papers, raters): each rater's expected score
    observed: ObservedRatings


def draw_quality(rng, cell: Cell) -> np.ndarray:
    """The programs' shapes of a standard normal z: 3z + 2, 5|z| - 3, -5|z| + 7."""
    z = rng.standard_normal(cell.papers)
    if cell.quality == "normal":
        return 3.0 * z + 2.0
    if cell.quality == "positive":
        return 5.0 * np.abs(z) - 3.0
    return -5.0 * np.abs(z) + 7.0


def draw_raters(rng, n_papers: int, n_raters: int, k: int) -> np.ndarray:
    """k distinct raters per paper, uniformly: shape (papers, k)."""
    return np.argsort(rng.random((n_papers, n_raters)), axis=1)[:, :k]


class _Scorer:
    def __init__(self, generator, steps=None, linear=None):
        self.generator, self.steps, self.linear = generator, steps, linear

    def n_raters(self):
        return len(self.linear["effects"]) if self.generator == "linear" else self.steps.shape[0]

    def score(self, rng, quality, raters, max_score):
        if self.generator == "linear":
            eff = np.asarray(self.linear["effects"])[raters]
            sd = np.asarray(self.linear["error_sd"])[raters]
            x = quality + eff + sd * rng.standard_normal(np.shape(raters))
            return np.clip(np.floor(x + 0.5), 0, max_score).astype(np.int64)
        return MODELS[self.generator].sample_scores(rng, quality, self.steps[raters])


def stage_seed(seed: int, code: str, replication: int, stage: int) -> np.random.SeedSequence:
    """The SeedSequence of one stage (0 papers, 1 ratings) of one data set."""
    return np.random.SeedSequence(seed, spawn_key=(cell_key(code), int(replication), int(stage)))


def draw_papers(cell: Cell, generator: str, seed_seq, linear=None) -> np.ndarray:
    """pargen: paper qualities (the linear model: true scores N(mean, sd))."""
    rng = np.random.default_rng(seed_seq)
    if generator == "linear":
        return linear["true_mean"] + linear["true_sd"] * rng.standard_normal(cell.papers)
    return draw_quality(rng, cell)


def true_scores(quality, generator: str, steps=None, linear=None, true_score: str = "model"):
    """truegen: (paper true scores, per-rater expected scores).

    The model's expected score, averaged over the raters; ``true_score="pcm"``
    scores the truth as TRUEGEN did (PCM expected scores) whatever the generator,
    which reproduces the 1990 mismatch on purpose.  The linear model's true score
    is the drawn normal value itself.
    """
    quality = np.asarray(quality, dtype=np.float64)
    if generator == "linear":
        n_raters = len(linear["effects"])
        return quality.copy(), np.broadcast_to(quality[:, None], (quality.size, n_raters)).copy()
    steps = np.asarray(steps, dtype=np.float64)
    model = pcm_model if true_score == "pcm" else MODELS[generator]
    rater_true = model.expected_score(quality[:, None], steps[None, :, :])
    return rater_true.mean(axis=1), rater_true


def observe(cell: Cell, quality, generator: str, seed_seq, steps=None, linear=None) -> ObservedRatings:
    """obsgen: draw each paper's raters and their scores (the 2+ design included)."""
    rng = np.random.default_rng(seed_seq)
    scorer = _Scorer(generator, None if steps is None else np.asarray(steps, dtype=np.float64), linear)
    quality = np.asarray(quality, dtype=np.float64)
    n, nr, m = cell.papers, scorer.n_raters(), cell.max_score
    two_plus = cell.raters_per_paper == "2+"
    k = cell.raters_drawn
    raters = draw_raters(rng, n, nr, k)
    if two_plus:
        s12 = scorer.score(rng, quality[:, None], raters[:, :2], m)
        s3 = scorer.score(rng, quality[:, None], raters[:, 2:], m)[:, 0]
        third = np.abs(s12[:, 0] - s12[:, 1]) > 1
        d1, d2 = np.abs(s3 - s12[:, 0]), np.abs(s3 - s12[:, 1])
        keep1 = (d1 < d2) | ((d1 == d2) & (s12[:, 0] > s12[:, 1]))
        scores = np.column_stack([s12, s3])
        kept = np.column_stack([~third | keep1, ~third | ~keep1, third])
        present = np.column_stack([np.ones((n, 2), bool), third])
    else:
        scores = scorer.score(rng, quality[:, None], raters, m)
        kept = present = np.ones((n, k), bool)
    order = np.broadcast_to(np.arange(1, k + 1), (n, k))
    paper = np.broadcast_to(np.arange(n)[:, None], (n, k))
    sel = present.ravel()
    return ObservedRatings(paper=paper.ravel()[sel].astype(np.int64), rater=raters.ravel()[sel].astype(np.int64),
                           score=scores.ravel()[sel].astype(np.int64), order=order.ravel()[sel].astype(np.int64),
                           kept=kept.ravel()[sel])


def generate_set(cell: Cell, generator: str, seed: int, replication: int, steps=None, linear=None,
                 true_score: str = "model") -> GeneratedSet:
    """One data set in memory: the same numbers the pargen/truegen/obsgen stages write."""
    quality = draw_papers(cell, generator, stage_seed(seed, cell.code, replication, 0), linear)
    true, rater_true = true_scores(quality, generator, steps, linear, true_score)
    obs = observe(cell, quality, generator, stage_seed(seed, cell.code, replication, 1), steps, linear)
    return GeneratedSet(quality=quality, true_score=true, rater_true=rater_true, observed=obs)
