"""``rater``: resolve the design (RATER.BAS asked for it at the keyboard).

Writes ``RUN/rater/design.json``, the run's record of its design (read back by
:meth:`ratercal_cli.study.run.Run.design`): the generator, the variants and methods, and every
set with its code, its facets (raters per paper, papers, scale, quality) and where its random
numbers come from (the QuickBASIC chain and RANDOMIZE values, or the
SeedSequence keys of the modern generators).
"""

from __future__ import annotations

from ..generators import basic1990
from ..generators.modern import cell_key
from ..io import write_json
from .pipeline import Stage


def seeds_of(run, cell) -> dict:
    cfg = run.config
    if cfg.faithful_generator:
        chain, pos, prev, low = run.chain_position(cell.code)
        return {"chain": chain + 1, "position": pos + 1, "after": prev,
                "start": ("fresh" if low is None else low) if prev is None else f"state after {prev}",
                "pargen_randomize": basic1990.pargen_seed(cell), "obsgen_randomize": basic1990.obsgen_seed(cell)}
    return {"seed": cfg.seed, "spawn_key_papers": [cell_key(cell.code), 0, 0],
            "spawn_key_ratings": [cell_key(cell.code), 0, 1]}


class RaterStage(Stage):
    name = "rater"

    def params(self):
        return {"config": self.run.config.raw}

    def execute(self):
        cfg = self.run.config
        sets = []
        for c in cfg.cells:
            sets.append({"code": c.code, "label": c.label, "raters_per_paper": c.raters_per_paper,
                         "papers": c.papers, "max_score": c.max_score, "quality": c.quality,
                         "seeds": seeds_of(self.run, c)})
        path = self.folder / "design.json"
        write_json(path, {"name": cfg.name, "generator": cfg.generator, "variants": list(cfg.variants),
                          "methods": list(cfg.methods), "n_raters": cfg.n_raters,
                          "rater_types": "table3" if cfg.table3_raters else None, "sets": sets})
        return [path]
