"""``score``: criteria of every method on every set -> ``RUN/score/``.

``scores.csv``: ``set,method,variant,rmse,r,maxdiff`` — each method's paper
scores against the papers' true scores (Tables 7, 11, 12).
``rater_rmse.csv``: ``set,method,variant,rater,n,rmse`` — each rater's adjusted
scores against the true scores of the papers the rater scored (Tables 9, 10).
"""

from __future__ import annotations

import json

import numpy as np

from .. import criteria
from ..io import atomic_write
from ..pipeline import Runner, Stage
from ..ratings import Ratings
from .equate import EquateStage
from .files import fmt, read_columns, read_true_scores
from .truegen import TruegenStage


class ScoreStage(Stage):
    name = "score"

    def __init__(self, run, cells, methods=None, variant=None):
        super().__init__(run, None)
        self.cells = cells
        self.methods, self.variant = methods, variant

    def deps(self):
        out = []
        for c in self.cells:
            out += [TruegenStage(self.run, c), EquateStage(self.run, c, self.methods, self.variant)]
        return out

    def params(self):
        return {"sets": [c.code for c in self.cells]}

    def execute(self):
        n_raters = self.run.config.n_raters
        score_rows, rater_rows = [], []
        for cell in self.cells:
            true = read_true_scores(TruegenStage(self.run, cell).folder / "true_scores.csv")
            eq = EquateStage(self.run, cell, self.methods, self.variant)
            meta = json.loads((eq.folder / "methods.json").read_text())
            for code in meta["methods"]:
                path = eq.folder / f"{code}.csv"
                paper, rater, score, adj, padj = read_columns(
                    path, ["paper", "rater", "score", "adjusted", "paper_adjusted"], [int, int, int, float, float])
                paper_scores = np.zeros(cell.papers)
                paper_scores[paper - 1] = padj
                c = criteria.paper_criteria(paper_scores, true)
                score_rows.append([cell.code, code, meta["variant"], fmt(c["rmse"]), fmt(c["r"]),
                                   fmt(c["max_abs_diff"])])
                ratings = Ratings(paper - 1, rater - 1, score, cell.max_score, cell.papers, n_raters)
                per = criteria.rater_rmse(ratings, adj, true)
                counts = ratings.ratings_per_rater()
                for j in range(n_raters):
                    rater_rows.append([cell.code, code, meta["variant"], str(j + 1), str(int(counts[j])),
                                       "" if not np.isfinite(per[j]) else fmt(per[j])])
        s_path = self.folder / "scores.csv"
        r_path = self.folder / "rater_rmse.csv"
        with atomic_write(s_path) as fh:
            fh.write("set,method,variant,rmse,r,maxdiff\n")
            fh.write("".join(",".join(r) + "\n" for r in score_rows))
        with atomic_write(r_path) as fh:
            fh.write("set,method,variant,rater,n,rmse\n")
            fh.write("".join(",".join(r) + "\n" for r in rater_rows))
        return [s_path, r_path]


def run_score(run, codes=None, methods=None, variant=None, force=False, quiet=False):
    from .simulate import ordered_cells, write_run_manifest

    from .equate import run_equate

    runner = Runner(force=force)
    cells = ordered_cells(run, codes)
    run_equate(run, methods, variant, codes, quiet=quiet, runner=runner)
    runner.ensure(ScoreStage(run, cells, methods, variant))
    write_run_manifest(run)
    return runner
