"""``score``: criteria of every method on every set -> ``RUN/score/``.

``scores.csv``: ``set,method,variant,rmse,r,maxdiff`` — each method's paper
scores against the papers' true scores (Tables 7, 11, 12; :func:`ratercal_cli.criteria.score_set`),
for every variant the run has equated.
``rater_rmse.csv``: ``set,method,variant,rater,n,rmse`` — each rater's adjusted
scores against the true scores of the papers the rater scored (Tables 9, 10).

With a rubric's criteria (:mod:`ratercal_cli.rater_effects`) a paper's score in ``scores.csv`` is
its rubric mean (the mean of its criterion scores) against the mean of its criterion true
scores, a rater's ratings are each against the true score on its criterion, and
``criterion_scores.csv`` (``set,method,variant,criterion,rmse,r,maxdiff``) scores each criterion.
"""

from __future__ import annotations

import json

import numpy as np

from .. import criteria
from ..vocabulary import NEEDS_TWO_RATERS
from ..io import atomic_write
from ..parallel import default_jobs, ordered_map
from .pipeline import Runner, Stage
from .equate import EquateStage, equate_stages, run_equate
from ..methods.apply import mean_over_cells
from .files import ADJUSTED, fmt, read_adjusted, read_criterion_columns, read_true_scores
from .truegen import TruegenStage


class ScoreStage(Stage):
    name = "score"

    def __init__(self, run, cells, variants, methods=None):
        super().__init__(run, None)
        self.cells = cells
        self.variants = tuple(variants)
        self.methods = methods

    def deps(self):
        out = [TruegenStage(self.run, c) for c in self.cells]
        return out + equate_stages(self.run, self.cells, self.variants, self.methods)

    def params(self):
        return {"sets": [c.code for c in self.cells], "variants": list(self.variants)}

    def execute(self):
        sets = [(variant, cell) for variant in self.variants for cell in self.cells]
        jobs = default_jobs(len(sets), 8)
        score_rows, rater_rows, criterion_rows = [], [], []
        for rows, per_rater, per_criterion in ordered_map(self._score_one, sets, jobs):   # the sets in both cores
            score_rows += rows
            rater_rows += per_rater
            criterion_rows += per_criterion
        s_path = self.folder / "scores.csv"
        r_path = self.folder / "rater_rmse.csv"
        with atomic_write(s_path) as fh:
            fh.write("set,method,variant,rmse,r,maxdiff\n")
            fh.write("".join(",".join(r) + "\n" for r in score_rows))
        with atomic_write(r_path) as fh:
            fh.write("set,method,variant,rater,n,rmse\n")
            fh.write("".join(",".join(r) + "\n" for r in rater_rows))
        if not criterion_rows:
            return [s_path, r_path]
        c_path = self.folder / "criterion_scores.csv"
        with atomic_write(c_path) as fh:
            fh.write("set,method,variant,criterion,rmse,r,maxdiff\n")
            fh.write("".join(",".join(r) + "\n" for r in criterion_rows))
        return [s_path, r_path, c_path]

    def _score_one(self, variant_and_cell):
        """The rows of ``scores.csv`` and ``rater_rmse.csv`` of one set in one variant."""
        variant, cell = variant_and_cell
        n_raters = self.run.config.n_raters
        true = read_true_scores(TruegenStage(self.run, cell).folder / "true_scores.csv")
        folder = EquateStage(self.run, cell, variant, self.methods).folder
        meta = json.loads((folder / "methods.json").read_text())
        ratings, adjusted = read_adjusted(folder / ADJUSTED, meta["methods"], cell.max_score, cell.papers, n_raters)
        counts = ratings.ratings_per_rater()
        score_rows, rater_rows, criterion_rows = [], [], []
        if "criterion" in ratings.facets:   # a rubric: the rubric mean, and each criterion on its own
            labels = ratings.facets["criterion"][1]
            true_c = read_criterion_columns(TruegenStage(self.run, cell).folder / "true_scores.csv", "true_score",
                                            labels)
        for code, (adj, paper_scores) in adjusted.items():
            if "criterion" in ratings.facets:
                for k, label in enumerate(labels):
                    c = criteria.score_set(paper_scores[:, k], true_c[:, k])
                    criterion_rows.append([cell.code, code, variant, label, fmt(c["rmse"]), fmt(c["r"]),
                                           fmt(c["maxdiff"])])
                per = criteria.rater_rmse(ratings, adj, true_c)
                paper_scores = mean_over_cells(paper_scores)
            else:
                per = criteria.rater_rmse(ratings, adj, true)
            c = criteria.score_set(paper_scores, true)
            score_rows.append([cell.code, code, variant, fmt(c["rmse"]), fmt(c["r"]), fmt(c["maxdiff"])])
            for j in range(n_raters):
                rater_rows.append([cell.code, code, variant, str(j + 1), str(int(counts[j])),
                                   "" if not np.isfinite(per[j]) else fmt(per[j])])
        for code, why in meta.get("skipped", {}).items():
            if why != NEEDS_TWO_RATERS:   # it failed here: a row without criteria, so report names it
                score_rows.append([cell.code, code, variant, "", "", ""])
        return score_rows, rater_rows, criterion_rows


def run_score(run, codes=None, methods=None, variants=None, force=False, quiet=False):
    """``ratercal score RUN``: score every variant the run has equated (``variants``: those;
    none equated yet: the config's), equating first what is missing or stale.  The sets are
    the run's recorded design (``RUN/rater/design.json``).  Holds the run folder's lock unless
    ``run`` holds it already."""
    from .simulate import ordered_cells, write_run_manifest

    with run.lock("score"):
        variants = tuple(variants or run.equated_variants() or run.config.variants)
        runner = Runner(force=force)
        run_equate(run, methods, variants, codes, quiet=quiet, runner=runner, manifest=False)
        design = run.design()
        cells = [design.cell(c.code) for c in ordered_cells(run, codes)]
        runner.ensure(ScoreStage(run, cells, variants, methods))
        write_run_manifest(run)
        return runner


def check_scores_current(root) -> None:
    """What ``report`` checks before it reads ``RUN/score/``: the files there are the ones
    ``ratercal score`` wrote (their SHA-256 as its manifest recorded them), and the files it
    scored (each set's ``equate`` and ``truegen`` outputs) are still the ones the run holds.  An
    edited ``scores.csv``, or ``adjust RUN`` run again after a change of ``seed:`` without
    ``score``, is a one-line :class:`~ratercal_cli.errors.InputError` naming the file, not a
    report that mixes new and old numbers."""
    from pathlib import Path

    from ..errors import InputError
    from ..io import sha256_file
    from .pipeline import MANIFEST, read_manifest

    root = Path(root)
    man = read_manifest(root / "score" / MANIFEST)
    if man is None:
        raise InputError(f"no manifest of `ratercal score` in {root / 'score'}: run `ratercal score {root}` first",
                         root)
    for kind, files in (("outputs", man.get("outputs", {})), ("inputs", man.get("inputs", {}))):
        for rel, digest in sorted(files.items()):
            try:
                same = sha256_file(root / rel) == digest
            except OSError:
                same = False
            if not same:
                what = ("changed since `ratercal score` wrote it" if kind == "outputs" else
                        "changed after `ratercal score` read it (adjusted again, e.g. after a change of seed:)")
                raise InputError(f"{what}; run `ratercal score {root}` (--force to redo it)", root / rel)
    # ... and of the run's config as it is now: a config edited (its methods, its seed) or simulated again without
    # `adjust` and `score` left the files agreeing with each other, and a researcher's report showed the old
    # methods' columns (NO | MN | TLI | PCM where the config now named TMN) without a word
    from .pipeline import first_stale
    from .run import Run

    run = Run(root)
    params = man.get("params", {})
    try:
        design = run.design()
        cells = [design.cell(code) for code in params.get("sets", [])]
    except (InputError, KeyError, ValueError, OSError):
        cells = None
    stale = None if cells is None else first_stale(ScoreStage(run, cells, params.get("variants", ())))
    if cells is None or stale is not None:
        where = "" if stale is None or stale.cell is None else f" of set {stale.cell.code}"
        raise InputError(f"the scores are not of the run's config as it is now ({stale.name if stale else 'the design'}"
                         f"{where} is out of date with {root / 'config.yaml'}); run `ratercal score {root}`, which "
                         "redoes what changed", root / "score" / "scores.csv")
