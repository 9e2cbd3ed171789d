"""Modern, seeded generation with numpy's Generator.

Each stage of each data set (cell, replication) has its own ``SeedSequence(seed,
spawn_key=(cell_key(code), replication, stage))``, so any one replication can be
made again on its own, in any order, on any worker.

Generators:

* ``pcm``: scores sampled from the partial credit model; the true score (the mean
  over the raters of the PCM expected score) is then the expected score of the
  process that made the data.
* ``sequential``: the continuation-ratio process OBSGEN.BAS really used.
* ``grm``: the graded response model (:mod:`ratercal_cli.models.grm`), the raters' steps read as
  its ordered thresholds and their slopes ``raters.effects.slope``: a model none of the methods
  assumes; the true score its expected score, as for ``pcm``.
* ``linear``: Table 15's supplement: true score ~ N(3.5, 1); score =
  round(true + effect_j + N(0, sd_j)), clipped to the scale.

With ``criteria`` (an analytic rubric, :mod:`ratercal_cli.rater_effects`) the ``pcm`` and
``sequential`` generators score every reading on every criterion (:func:`generate_set`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..design import Cell, keep_first, needs_third, shape_quality
from ..models import grm as grm_model
from ..models import pcm as pcm_model
from ..models import sequential as seq_model
from .basic1990 import ObservedRatings

MODELS = {"pcm": pcm_model, "sequential": seq_model, "grm": grm_model}


def cell_key(code: str) -> int:
    """A stable 32-bit key for a set code (the SeedSequence spawn key)."""
    return int.from_bytes(hashlib.sha256(code.encode()).digest()[:4], "little")


@dataclass
class GeneratedSet:
    quality: np.ndarray          # per paper (the linear model: the true score itself)
    true_score: np.ndarray       # per paper
    rater_true: np.ndarray       # (papers, raters): each rater's expected score
    observed: ObservedRatings
    #: with criteria: each paper's quality and true score on each criterion (papers, C); ``quality``
    #: is then the overall (their mean), ``true_score`` the rubric mean, ``rater_true`` over criteria
    criterion_quality: np.ndarray | None = None
    criterion_true: np.ndarray | None = None


def draw_quality(rng, cell: Cell) -> np.ndarray:
    """The programs' shapes of a standard normal z: 3z + 2, 5|z| - 3, -5|z| + 7."""
    return shape_quality(rng.standard_normal(cell.papers), cell.quality)


def draw_raters(rng, n_papers: int, n_raters: int, k: int) -> np.ndarray:
    """k distinct raters per paper, uniformly: shape (papers, k)."""
    return np.argsort(rng.random((n_papers, n_raters)), axis=1)[:, :k]


def score_groups(cell: Cell):
    """The raters drawn for each paper as obsgen scores them, ``(start, stop)`` column ranges: the
    2+ design scores the first two raters of every paper, then the third."""
    k = cell.raters_drawn
    return ((0, 2), (2, 3)) if cell.raters_per_paper == "2+" else ((0, k),)


def draw_for_scores(rng, cell: Cell, generator: str) -> np.ndarray:
    """obsgen's random numbers behind the scores, one per rater drawn, ``(papers, raters
    drawn)``, group by group (:func:`score_groups`): uniforms (the PCM and the sequential
    process invert their CDFs), standard normals for the linear model."""
    draw = rng.standard_normal if generator == "linear" else rng.random
    return np.concatenate([draw((cell.papers, b - a)) for a, b in score_groups(cell)], axis=1)


def two_plus_kept(scores):
    """The 2+ design's bookkeeping: ``scores`` ``(..., 3)`` of the three raters drawn for each
    paper -> which ratings the file keeps ``(..., 3)``: the first two when they differ by at
    most a point, else the third with the nearer of the two (:func:`~ratercal_cli.design.keep_first`)."""
    s1, s2, s3 = scores[..., 0], scores[..., 1], scores[..., 2]
    third = needs_third(s1, s2)
    keep1 = keep_first(s1, s2, s3)
    return np.stack([~third | keep1, ~third | ~keep1, third], axis=-1)


class _Scorer:
    def __init__(self, generator, steps=None, linear=None):
        self.generator, self.steps, self.linear = generator, steps, linear

    def n_raters(self):
        return len(self.linear["effects"]) if self.generator == "linear" else self.steps.shape[0]

    def score(self, quality, raters, draws, max_score):
        """Scores of ``raters`` on papers of ``quality`` from their :func:`draw_for_scores`."""
        if self.generator == "linear":
            eff = np.asarray(self.linear["effects"])[raters]
            sd = np.asarray(self.linear["error_sd"])[raters]
            x = quality + eff + sd * draws
            return np.clip(np.floor(x + 0.5), 0, max_score).astype(np.int64)
        return MODELS[self.generator].scores_from_uniforms(quality, self.steps[raters], draws)


def stage_seed(seed: int, code: str, replication: int, stage: int) -> np.random.SeedSequence:
    """The SeedSequence of one stage (0 papers, 1 ratings) of one data set."""
    return np.random.SeedSequence(seed, spawn_key=(cell_key(code), int(replication), int(stage)))


def draw_papers(cell: Cell, generator: str, seed_seq, linear=None) -> np.ndarray:
    """pargen: paper qualities (the linear model: true scores N(mean, sd))."""
    rng = np.random.default_rng(seed_seq)
    if generator == "linear":
        return linear["true_mean"] + linear["true_sd"] * rng.standard_normal(cell.papers)
    return draw_quality(rng, cell)


def draw_rubric_papers(cell: Cell, seed_seq, rubric) -> np.ndarray:
    """pargen with criteria: ``theta_ic`` (papers, C) from the paper's deviate ``z_i`` (the draws of
    :func:`draw_papers`) and then ``e_ic`` (:meth:`~ratercal_cli.rater_effects.RubricDesign.qualities`)."""
    rng = np.random.default_rng(seed_seq)
    z = rng.standard_normal(cell.papers)
    return rubric.qualities(z, rng.standard_normal((cell.papers, rubric.count)), cell.quality)


def rubric_true_scores(theta_c, generator: str, steps, true_score: str = "model", effects=None, rubric=None):
    """truegen with criteria: ``(criterion true scores (papers, C), per-rater expected scores over
    the criteria (papers, raters))``: criterion ``c`` as :func:`true_scores` at ``theta_ic`` with
    its difficulty on every step (halo, the rater's error, left out)."""
    steps = np.asarray(steps, dtype=np.float64)
    per = [true_scores(theta_c[:, c], generator, steps + b, None, true_score, effects)
           for c, b in enumerate(rubric.difficulty)]
    return np.column_stack([t for t, _ in per]), np.mean([r for _, r in per], axis=0)


def true_scores(quality, generator: str, steps=None, linear=None, true_score: str = "model", effects=None):
    """truegen: (paper true scores, per-rater expected scores).

    The model's expected score, averaged over the raters; ``true_score="pcm"``
    scores the truth as TRUEGEN did (PCM expected scores) whatever the generator,
    which reproduces the 1990 mismatch on purpose.  The linear model's true score
    is the drawn normal value itself.  ``effects`` (:class:`ratercal_cli.rater_effects.RaterEffects`): each rater
    at mid-session with its severity, slope and centrality.
    """
    quality = np.asarray(quality, dtype=np.float64)
    if generator == "linear":
        n_raters = len(linear["effects"])
        return quality.copy(), np.broadcast_to(quality[:, None], (quality.size, n_raters)).copy()
    steps = np.asarray(steps, dtype=np.float64)
    model = pcm_model if true_score == "pcm" else MODELS[generator]
    if effects is not None and not effects.neutral:
        slope, mid = effects.mid_session(steps)
        rater_true = model.expected_score(slope[None, :] * quality[:, None], mid[None, :, :])
        return rater_true.mean(axis=1), rater_true
    rater_true = model.expected_score(quality[:, None], steps[None, :, :])
    return rater_true.mean(axis=1), rater_true


def observe(cell: Cell, quality, generator: str, seed_seq, steps=None, linear=None, effects=None) -> ObservedRatings:
    """obsgen: draw each paper's raters and their scores (the 2+ design included); ``effects``
    (:class:`ratercal_cli.rater_effects.RaterEffects`): the raters' effects and the assignment."""
    rng = np.random.default_rng(seed_seq)
    scorer = _Scorer(generator, None if steps is None else np.asarray(steps, dtype=np.float64), linear)
    quality = np.asarray(quality, dtype=np.float64)
    n, nr, m = cell.papers, scorer.n_raters(), cell.max_score
    two_plus = cell.raters_per_paper == "2+"
    k = cell.raters_drawn
    if effects is None or effects.neutral:
        raters = draw_raters(rng, n, nr, k)
        draws = draw_for_scores(rng, cell, generator)
        scores = np.concatenate([scorer.score(quality[:, None], raters[:, a:b], draws[:, a:b], m)
                                 for a, b in score_groups(cell)], axis=1)
    else:
        from ..rater_effects import session_positions

        raters = effects.draw_raters(rng.random((n, nr)), quality, k)
        draws = draw_for_scores(rng, cell, generator)
        gamma = effects.task_interaction(seed_seq, nr)
        shift = gamma[raters, (np.arange(n) % effects.tasks)[:, None]]
        q, st = effects.rating_model(quality[:, None], raters, scorer.steps, session_positions(raters, nr), shift)
        scores = np.concatenate([MODELS[generator].scores_from_uniforms(q[:, a:b], st[:, a:b], draws[:, a:b])
                                 for a, b in score_groups(cell)], axis=1)
    if two_plus:
        kept = two_plus_kept(scores)
        present = np.column_stack([np.ones((n, 2), bool), kept[:, 2]])
    else:
        kept = present = np.ones((n, k), bool)
    order = np.broadcast_to(np.arange(1, k + 1), (n, k))
    paper = np.broadcast_to(np.arange(n)[:, None], (n, k))
    sel = present.ravel()
    return ObservedRatings(paper=paper.ravel()[sel].astype(np.int64), rater=raters.ravel()[sel].astype(np.int64),
                           score=scores.ravel()[sel].astype(np.int64), order=order.ravel()[sel].astype(np.int64),
                           kept=kept.ravel()[sel])


def observe_rubric(cell: Cell, theta_c, generator: str, seed_seq, steps, effects, rubric) -> ObservedRatings:
    """obsgen with criteria: each paper's raters (as :func:`observe` with effects, by the overall
    quality), then every reading's score on every criterion at the halo's quality against the
    rater's steps plus the criterion's difficulty (:mod:`ratercal_cli.rater_effects`); the 2+
    design's third reading by the readings' means over the criteria.  Ratings reading by reading,
    each reading's criteria in order."""
    from ..rater_effects import RaterEffects, halo_qualities, session_positions

    rng = np.random.default_rng(seed_seq)
    steps = np.asarray(steps, dtype=np.float64)
    theta_c = np.asarray(theta_c, dtype=np.float64)
    n, nr, k, C = cell.papers, steps.shape[0], cell.raters_drawn, rubric.count
    effects = effects if effects is not None else RaterEffects.none(nr)
    raters = effects.draw_raters(rng.random((n, nr)), theta_c.mean(axis=1), k)
    u = rng.random((n, k, C))
    gamma = effects.task_interaction(seed_seq, nr)
    shift = gamma[raters, (np.arange(n) % effects.tasks)[:, None]]
    shape = (n, k, C)
    q, st = effects.rating_model(halo_qualities(theta_c, raters, effects.halo_weights(nr),
                                                effects.impression_error(seed_seq, raters)),
                                 np.broadcast_to(raters[..., None], shape), steps,
                                 np.broadcast_to(session_positions(raters, nr)[..., None], shape),
                                 shift[..., None] + np.asarray(rubric.difficulty)[None, None, :])
    scores = MODELS[generator].scores_from_uniforms(q, st, u)
    if cell.raters_per_paper == "2+":
        kept = two_plus_kept(scores.mean(axis=2))
        present = np.column_stack([np.ones((n, 2), bool), kept[:, 2]])
    else:
        kept = present = np.ones((n, k), bool)
    per_reading = {"paper": np.broadcast_to(np.arange(n)[:, None], (n, k)), "rater": raters,
                   "order": np.broadcast_to(np.arange(1, k + 1), (n, k)), "kept": kept}
    sel = np.broadcast_to(present[..., None], shape).ravel()
    flat = {name: np.broadcast_to(v[..., None], shape).ravel()[sel] for name, v in per_reading.items()}
    return ObservedRatings(paper=flat["paper"].astype(np.int64), rater=flat["rater"].astype(np.int64),
                           score=scores.ravel()[sel].astype(np.int64), order=flat["order"].astype(np.int64),
                           kept=flat["kept"], criterion=np.broadcast_to(np.arange(C), shape).ravel()[sel].astype(np.int64))


def generate_set(cell: Cell, generator: str, seed: int, replication: int, steps=None, linear=None,
                 true_score: str = "model", effects=None, rubric=None) -> GeneratedSet:
    """One data set in memory: the same numbers the pargen/truegen/obsgen stages write; ``rubric``
    (:class:`~ratercal_cli.rater_effects.RubricDesign`): every reading scores every criterion."""
    if rubric is not None:
        theta_c = draw_rubric_papers(cell, stage_seed(seed, cell.code, replication, 0), rubric)
        crit_true, rater_true = rubric_true_scores(theta_c, generator, steps, true_score, effects, rubric)
        obs = observe_rubric(cell, theta_c, generator, stage_seed(seed, cell.code, replication, 1), steps, effects,
                             rubric)
        return GeneratedSet(quality=theta_c.mean(axis=1), true_score=crit_true.mean(axis=1), rater_true=rater_true,
                            observed=obs, criterion_quality=theta_c, criterion_true=crit_true)
    quality = draw_papers(cell, generator, stage_seed(seed, cell.code, replication, 0), linear)
    true, rater_true = true_scores(quality, generator, steps, linear, true_score, effects)
    obs = observe(cell, quality, generator, stage_seed(seed, cell.code, replication, 1), steps, linear, effects)
    return GeneratedSet(quality=quality, true_score=true, rater_true=rater_true, observed=obs)
