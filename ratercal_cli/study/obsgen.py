"""``obsgen``: observed ratings -> ``RUN/<code>/obsgen/ratings.csv``.

Columns ``paper,rater,score,order,kept``: one row per rating in the order made;
``order`` is the rating's place on its paper (1, 2; 3 for a 2+ discrepancy) and
``kept`` is 0 for the rating the 2+ design dropped (the methods use kept ones).

Faithful: OBSGEN.BAS, the RND state continuing from PARGEN's.
"""

from __future__ import annotations

import json

import numpy as np

from ..generators import basic1990, modern
from ..io import write_json
from .pipeline import Stage
from ..qbasic import QBasicRandom
from .files import design_params, read_criterion_columns, read_papers, write_columns
from .pargen import PargenStage
from .truegen import TruegenStage, rater_steps


class ObsgenStage(Stage):
    name = "obsgen"

    def deps(self):
        return [PargenStage(self.run, self.cell), TruegenStage(self.run, self.cell)]

    def params(self):
        cfg = self.run.config
        return {"cell": self.cell.code, "generator": cfg.generator,
                "steps": cfg.raw["steps"].get(self.cell.max_score), "linear": cfg.linear, **design_params(cfg)}

    def execute(self):
        cfg = self.run.config
        pstage = PargenStage(self.run, self.cell)
        quality = read_papers(pstage.folder / "papers.csv")
        outputs = []
        if cfg.faithful_generator:
            rng = QBasicRandom(json.loads((pstage.folder / "rng.json").read_text())["after"])
            before = rng.seed  # TRUEGEN draws nothing
            obs = basic1990.obsgen(rng, self.cell, quality.astype(np.float32), rater_steps(cfg, self.cell.max_score))
            rng_path = self.folder / "rng.json"
            write_json(rng_path, {"before": before, "after": rng.seed})
            outputs.append(rng_path)
        elif cfg.rubric is not None:
            theta_c = read_criterion_columns(pstage.folder / "papers.csv", "quality", cfg.rubric.labels)
            obs = modern.observe_rubric(self.cell, theta_c, cfg.generator, modern.stage_seed(cfg.seed, self.cell.code, 0, 1),
                                        cfg.steps[self.cell.max_score], cfg.effects, cfg.rubric)
            path = write_columns(self.folder / "ratings.csv", ["paper", "rater", "criterion", "score", "order", "kept"],
                                 [obs.paper + 1, obs.rater + 1, obs.criterion + 1, obs.score, obs.order,
                                  obs.kept.astype(int)], [None] * 6)
            return [path]
        else:
            steps = None if cfg.generator == "linear" else cfg.steps[self.cell.max_score]
            obs = modern.observe(self.cell, quality, cfg.generator, modern.stage_seed(cfg.seed, self.cell.code, 0, 1),
                                 steps, cfg.linear, cfg.effects)
        path = write_columns(self.folder / "ratings.csv", ["paper", "rater", "score", "order", "kept"],
                             [obs.paper + 1, obs.rater + 1, obs.score, obs.order, obs.kept.astype(int)],
                             [None] * 5)
        return [path] + outputs
