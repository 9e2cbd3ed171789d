"""``equate``: every method of the run, in every variant, on every set ->
``RUN/<code>/equate/<variant>/adjusted.csv``.

One row per kept rating: ``paper,rater,score``, then per method ``X``, the rating's adjusted
score, and ``X_paper``, its paper's (repeated on the paper's rows; the PCM's paper score is
not the mean of its ratings) - the columns of ``ratercal adjust FILE``'s output.
``methods.json`` lists the methods run, their fitted rater parameters, and those skipped
with the reason (the matrix methods and the PCM on one-rater sets, as OLS.BAS chained
straight to MORE.BAS when MJ = 1).  The variant is a dimension of the run: each has its
own folder and manifest, so adjusting one variant never overwrites another.
"""

from __future__ import annotations

import numpy as np

from ..io import write_json
from ..methods.apply import apply_methods, apply_within_cells, combined_scores
from .pipeline import Runner, Stage
from ..progress import progress
from .files import ADJUSTED, read_stage_ratings, write_adjusted
from .obsgen import ObsgenStage


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

    def __init__(self, run, cell, variant, methods=None):
        super().__init__(run, cell)
        self.methods = tuple(methods or run.config.methods)
        self.variant = self.part = variant

    def deps(self):
        return [ObsgenStage(self.run, self.cell)]

    def params(self):
        from ..methods.user import is_user_method, source_digest

        out = {"cell": self.cell.code, "methods": list(self.methods), "variant": self.variant}
        own = {m: _digest(m, source_digest) for m in self.methods if is_user_method(m)}
        if own:   # a method of the user's own: its module's source, so an edit redoes the stage
            out["sources"] = own
        from ..config import user_timeouts

        timeouts = {m: t for m, t in user_timeouts(self.run.config).items() if m in self.methods}
        if timeouts:
            out["timeouts"] = timeouts
        return out

    def is_fresh(self) -> bool:
        """Also stale when made by the code before ``adjusted.csv`` (a CSV per method)."""
        return self._rel(self.folder / ADJUSTED) in self.recorded_outputs() and super().is_fresh()

    def execute(self):
        cfg = self.run.config
        ratings = read_stage_ratings(ObsgenStage(self.run, self.cell).folder / "ratings.csv",
                                     self.cell.max_score, self.cell.papers, cfg.n_raters)
        if ratings.facets:   # a rubric's criteria: every method within each criterion on its own
            adjusted, of_rating, skipped, parameters = _within_criteria(ratings, self.methods, self.variant)
            outputs = [write_adjusted(self.folder / ADJUSTED, ratings, adjusted, of_rating)]
        else:
            applied = apply_methods(ratings, self.methods, self.variant)
            adjusted, skipped = applied.adjusted, applied.skipped
            parameters = {c: fitted_parameters(e, ratings) for c, e in applied.estimators.items()}
            outputs = [write_adjusted(self.folder / ADJUSTED, ratings, adjusted)]
        for old in self.folder.glob("*.csv"):   # a CSV per method, as the code before wrote them
            if old.name != ADJUSTED:
                old.unlink()
        meta = self.folder / "methods.json"
        write_json(meta, {"variant": self.variant, "methods": list(adjusted), "skipped": skipped,
                          "parameters": parameters}, indent=None)
        return outputs + [meta]


def _within_criteria(ratings, methods, variant):
    """The methods within each criterion (:func:`~ratercal_cli.methods.apply.apply_within_cells`):
    ``(adjusted, each rating's paper score on its criterion, skipped, parameters per criterion)``
    of the methods that ran on every criterion; the paper score of ``adjusted`` is the rubric mean."""
    parts = apply_within_cells(ratings, methods, variant)
    adjusted, of_rating, skipped, parameters = {}, {}, {}, {}
    for code in methods:
        why = [f"{' x '.join(p.labels)}: {p.applied.skipped[code]}" for p in parts if code in p.applied.skipped]
        if why:
            skipped[code] = why[0]
            continue
        adjusted[code], of_rating[code] = combined_scores(parts, code, ratings.n_ratings)
        parameters[code] = {" x ".join(p.labels): fitted_parameters(p.applied.estimators[code], p.ratings)
                            for p in parts}
    return adjusted, of_rating, skipped, parameters


def _digest(spec, source_digest):
    """The source hash of a user method's module; a module that cannot be imported has none (the
    stage then records the method's failure)."""
    try:
        return source_digest(spec)
    except Exception as exc:   # the user's module: whatever importing it raises
        return f"not importable: {type(exc).__name__}"


def equate_stages(run, cells, variants, methods=None):
    """The equate stage of every (set, variant)."""
    return [EquateStage(run, cell, v, methods) for cell in cells for v in variants]


def run_equate(run_dir, methods=None, variants=None, codes=None, force=False, quiet=False, runner=None,
               jobs=None, manifest=True):
    """``ratercal adjust RUN``: bring the equate stage of every set and variant (default: the
    config's variants) up to date (the sets in ``jobs`` processes; default: both cores when
    there are several; fewer where their sets would not fit in memory together).  Holds the run
    folder's lock (:meth:`~ratercal_cli.study.run.Run.lock`) unless ``run_dir`` is a run that
    holds it already."""
    from . import Run
    from .simulate import edited_outputs, jobs_within_memory, ordered_cells, say_edited, write_run_manifest

    from ..config import import_user_methods

    run = run_dir if not isinstance(run_dir, (str, bytes)) and hasattr(run_dir, "config") else Run(run_dir)
    import_user_methods(run.config, methods)   # the user's own methods' code runs from here on, not before
    with run.lock("adjust"):
        runner = runner or Runner(force=force)
        cells = ordered_cells(run, codes)
        stages = equate_stages(run, cells, tuple(variants or run.config.variants), methods)
        edited = [] if quiet else edited_outputs(run, cells)
        runner.ensure_many(stages, jobs=jobs_within_memory(run.config, cells, jobs),
                           progress=lambda it, total: progress(it, total=total, desc="equate", quiet=quiet,
                                                               unit="set"))
        say_edited(edited)
        if manifest:   # score writes it once itself, after scoring
            write_run_manifest(run)
        return runner
