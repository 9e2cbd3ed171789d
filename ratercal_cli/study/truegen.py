"""``truegen``: rater steps and true scores.

Writes ``raters.csv`` (rater, step_1..step_M; the linear model: rater, effect,
error_sd), ``true_scores.csv`` (paper, true_score) and ``rater_true_scores.csv``
(paper, rater, true_score: each rater's expected score).

Faithful: TRUEGEN.BAS — the mean over the nine raters of the PCM expected score,
written with 7 significant digits (``PRINT #2, ave / nj``).
"""

from __future__ import annotations

import numpy as np

from ..generators import basic1990, modern
from .pipeline import Stage
from ..qbasic import print_singles
from .files import design_params, fmt, read_criterion_columns, read_papers, write_columns
from .pargen import PargenStage


def rater_steps(config, max_score):
    """The steps as the programs held them (singles) or as configured."""
    steps = config.steps[max_score]
    return steps.astype(np.float32) if config.faithful_generator else steps


class TruegenStage(Stage):
    name = "truegen"

    def deps(self):
        return [PargenStage(self.run, self.cell)]

    def params(self):
        cfg = self.run.config
        return {"cell": self.cell.code, "generator": cfg.generator,
                "steps": cfg.raw["steps"].get(self.cell.max_score), "linear": cfg.linear,
                "true_score": cfg.true_score, **design_params(cfg)}

    def execute(self):
        cfg = self.run.config
        quality = read_papers(PargenStage(self.run, self.cell).folder / "papers.csv")
        ids = np.arange(1, self.cell.papers + 1)
        f = self.folder
        if cfg.generator == "linear":
            nr = len(cfg.linear["effects"])
            raters = write_columns(f / "raters.csv", ["rater", "effect", "error_sd"],
                                   [np.arange(1, nr + 1), cfg.linear["effects"], cfg.linear["error_sd"]],
                                   [None, fmt, fmt])
            true, per_rater = modern.true_scores(quality, "linear", linear=cfg.linear)
            true_txt = [fmt(v) for v in true]
        else:
            steps = rater_steps(cfg, self.cell.max_score)
            nr = steps.shape[0]
            m = steps.shape[1]
            cols = [np.arange(1, nr + 1)] + [steps[:, k] for k in range(m)]
            step_fmt = (lambda v: format(v, ".7g")) if cfg.faithful_generator else fmt
            raters = write_columns(f / "raters.csv", ["rater"] + [f"step_{k}" for k in range(1, m + 1)],
                                   cols, [None] + [step_fmt] * m)
            if cfg.faithful_generator:
                true, per_rater = basic1990.truegen(quality.astype(np.float32), steps)
                true_txt = print_singles(true)
            elif cfg.rubric is not None:   # each criterion's true score; the paper's: their mean
                theta_c = read_criterion_columns(PargenStage(self.run, self.cell).folder / "papers.csv", "quality",
                                                 cfg.rubric.labels)
                crit_true, per_rater = modern.rubric_true_scores(theta_c, cfg.generator, steps, cfg.true_score,
                                                                 cfg.effects, cfg.rubric)
                tpath = write_columns(f / "true_scores.csv", ["paper", "true_score"] + [f"true_score_{c}" for c in
                                                                                       cfg.rubric.labels],
                                      [ids, crit_true.mean(axis=1), *crit_true.T], [None] + [fmt] * (1 + cfg.rubric.count))
                true_txt = None
            else:
                true, per_rater = modern.true_scores(quality, cfg.generator, steps, true_score=cfg.true_score,
                                                     effects=cfg.effects)
                true_txt = [fmt(v) for v in true]
        if true_txt is not None:
            tpath = write_columns(f / "true_scores.csv", ["paper", "true_score"], [ids, true_txt], [None, str])
        n, nr = per_rater.shape
        rpath = write_columns(f / "rater_true_scores.csv", ["paper", "rater", "true_score"],
                              [np.repeat(ids, nr), np.tile(np.arange(1, nr + 1), n), per_rater.ravel()],
                              [None, None, fmt])
        return [raters, tpath, rpath]
