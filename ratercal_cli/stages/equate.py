"""``equate``: every method of the run on every set -> ``RUN/<code>/equate/<METHOD>.csv``.

Columns ``paper,rater,score,adjusted,paper_adjusted``: one row per kept rating,
its adjusted score, and its paper's adjusted score (repeated on the paper's
rows; the PCM's paper score is not the mean of its ratings).  ``methods.json``
lists the methods run and those the study skipped (the matrix methods and the
PCM on one-rater sets, as OLS.BAS chained straight to MORE.BAS).
"""

from __future__ import annotations

import numpy as np

from ..errors import MethodError
from ..methods.base import FIT_FAILURES
from ..io import write_json
from ..methods import make_method
from ..pipeline import Runner, Stage
from ..progress import progress
from .files import fmt, read_stage_ratings, write_columns
from .obsgen import ObsgenStage


def adjust_all(ratings, methods, variant):
    """Fit and apply each method; returns ({code: Adjusted}, {code: reason skipped})."""
    done, skipped = {}, {}
    for code in methods:
        est = make_method(code, variant)
        if est.needs_multiple_raters and ratings.max_raters_per_paper() < 2:
            skipped[code] = "needs two or more raters per paper"
            continue
        try:
            done[code] = (est, est.fit_transform(ratings))
        except FIT_FAILURES as exc:
            skipped[code] = f"{type(exc).__name__}: {exc}" if not isinstance(exc, MethodError) else str(exc)
    return done, skipped


def fitted_parameters(est, ratings) -> dict:
    """The estimator's learned rater parameters (attributes ending in ``_``) as JSON
    values; per-paper and per-rating arrays are left to the CSVs."""
    out = {}
    per_item = {ratings.n_papers, ratings.n_ratings} - {ratings.n_raters}
    for k, v in vars(est).items():
        if k.endswith("_") and not k.startswith("_"):
            if isinstance(v, np.ndarray) and v.dtype.kind in "fiub" and not (v.ndim and v.shape[0] in per_item):
                out[k] = np.where(np.isfinite(v), v, None).tolist() if v.dtype.kind == "f" else v.tolist()
            elif isinstance(v, (int, float, str, bool, np.integer, np.floating)):
                out[k] = v.item() if hasattr(v, "item") else v
    return out


class EquateStage(Stage):
    name = "equate"

    def __init__(self, run, cell, methods=None, variant=None):
        super().__init__(run, cell)
        self.methods = tuple(methods or run.config.methods)
        self.variant = variant or run.config.variant

    def deps(self):
        return [ObsgenStage(self.run, self.cell)]

    def params(self):
        return {"cell": self.cell.code, "methods": list(self.methods), "variant": self.variant}

    def execute(self):
        cfg = self.run.config
        ratings = read_stage_ratings(ObsgenStage(self.run, self.cell).folder / "ratings.csv",
                                     self.cell.max_score, self.cell.papers, cfg.n_raters)
        done, skipped = adjust_all(ratings, self.methods, self.variant)
        outputs = []
        for code, (est, adj) in done.items():
            outputs.append(write_columns(
                self.folder / f"{code}.csv", ["paper", "rater", "score", "adjusted", "paper_adjusted"],
                [ratings.paper + 1, ratings.rater + 1, ratings.score, adj.rating, adj.paper[ratings.paper]],
                [None, None, None, fmt, fmt]))
        # files of methods no longer run would be stale: remove them
        for old in self.folder.glob("*.csv"):
            if old.stem not in done:
                old.unlink()
        meta = self.folder / "methods.json"
        write_json(meta, {"variant": self.variant, "methods": list(done), "skipped": skipped,
                          "parameters": {c: fitted_parameters(e, ratings) for c, (e, _) in done.items()}},
                   indent=None)
        return outputs + [meta]


def run_equate(run_dir, methods=None, variant=None, codes=None, force=False, quiet=False, runner=None,
               jobs=None):
    """``ratercal adjust RUN``: bring the equate stage of every set up to date (the
    sets in ``jobs`` processes; default: both cores when there are several)."""
    from . import Run
    from .simulate import ordered_cells, write_run_manifest

    run = run_dir if not isinstance(run_dir, (str, bytes)) and hasattr(run_dir, "config") else Run(run_dir)
    runner = runner or Runner(force=force)
    stages = [EquateStage(run, cell, methods, variant) for cell in ordered_cells(run, codes)]
    runner.ensure_many(stages, jobs=jobs, progress=lambda it, total: progress(it, total=total, desc="equate",
                                                                     quiet=quiet, unit="set"))
    write_run_manifest(run)
    return runner
