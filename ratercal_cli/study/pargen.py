"""``pargen``: paper qualities -> ``RUN/<code>/pargen/papers.csv`` (paper, quality).

Faithful: PARGEN.BAS with the RND state carried from the previous set of the
chain (its ``obsgen/rng.json``); the qualities are written as ``PRINT #`` wrote
them (7 significant digits).  Modern: numpy with the set's SeedSequence.
"""

from __future__ import annotations

import json

import numpy as np

from ..generators import basic1990, modern
from ..io import write_json
from .pipeline import STAGES, Stage
from ..qbasic import QBasicRandom, print_singles
from .files import design_params, fmt, write_columns
from .rater import RaterStage, seeds_of


def start_state(run, cell) -> QBasicRandom:
    """The RND state PARGEN starts from: the chain's start, or the previous set's end."""
    _, _, prev, low = run.chain_position(cell.code)
    if prev is not None:
        prev_stage = STAGES["obsgen"](run, run.config.cell(prev))
        return QBasicRandom(json.loads((prev_stage.folder / "rng.json").read_text())["after"])
    return QBasicRandom() if low is None else QBasicRandom.with_low_byte(low)


class PargenStage(Stage):
    name = "pargen"

    def deps(self):
        deps = [RaterStage(self.run)]
        if self.run.config.faithful_generator:   # the RND chain: the previous set's OBSGEN state
            _, _, prev, _ = self.run.chain_position(self.cell.code)
            if prev is not None:
                deps.append(STAGES["obsgen"](self.run, self.run.config.cell(prev)))
        return deps

    def params(self):
        cfg = self.run.config
        return {"cell": self.cell.code, "generator": cfg.generator, "seeds": seeds_of(self.run, self.cell),
                "linear": cfg.linear, **design_params(cfg, effects=False)}

    def execute(self):
        cfg = self.run.config
        papers = self.folder / "papers.csv"
        ids = np.arange(1, self.cell.papers + 1)
        if cfg.faithful_generator:
            rng = start_state(self.run, self.cell)
            before = rng.seed
            quality = basic1990.pargen(rng, self.cell)
            write_columns(papers, ["paper", "quality"], [ids, print_singles(quality)], [None, str])
            rng_path = self.folder / "rng.json"
            write_json(rng_path, {"before": before, "after": rng.seed})
            return [papers, rng_path]
        seed = modern.stage_seed(cfg.seed, self.cell.code, 0, 0)
        if cfg.rubric is not None:   # the overall quality (the criteria's mean), then each criterion's
            theta_c = modern.draw_rubric_papers(self.cell, seed, cfg.rubric)
            write_columns(papers, ["paper", "quality"] + [f"quality_{c}" for c in cfg.rubric.labels],
                          [ids, theta_c.mean(axis=1), *theta_c.T], [None] + [fmt] * (1 + cfg.rubric.count))
            return [papers]
        quality = modern.draw_papers(self.cell, cfg.generator, seed, cfg.linear)
        write_columns(papers, ["paper", "quality"], [ids, quality], [None, fmt])
        return [papers]
