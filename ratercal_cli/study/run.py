"""A run folder: the config it was made from, the design it recorded, where each stage writes.

The design (``RUN/rater/design.json``, written by the ``rater`` stage) is the run's one record
of its cells, their facets and the variants of the methods: ``score`` and ``report`` read the
cells and variants from there, never from set names or the config again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..config import config_text, load_config, parse_config
from ..design import Cell
from ..errors import InputError
from ..io import write_text
from ..vocabulary import VARIANTS

CONFIG_NAME = "config.yaml"
DESIGN_PATH = ("rater", "design.json")


@dataclass(frozen=True)
class RunDesign:
    """What ``RUN/rater/design.json`` records: the cells (in config order), the variants and
    methods of the config, the generator and the number of raters."""

    name: str
    generator: str
    methods: tuple
    variants: tuple
    n_raters: int
    cells: tuple

    def cell(self, code) -> Cell:
        for c in self.cells:
            if code in (c.code, c.label):
                return c
        raise KeyError(code)

    @classmethod
    def read(cls, path) -> "RunDesign":
        try:
            d = json.loads(Path(path).read_text(encoding="utf-8"))
            cells = tuple(Cell(s["raters_per_paper"], int(s["papers"]), int(s["max_score"]), s["quality"])
                          for s in d["sets"])
            return cls(d["name"], d["generator"], tuple(d["methods"]), tuple(d["variants"]),
                       int(d["n_raters"]), cells)
        except FileNotFoundError:
            raise InputError("no design: run `ratercal simulate` (or `ratercal rater`) on this run first",
                             path) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"not a design file written by ratercal ({type(exc).__name__}: {exc})", path) from None


class Run:
    """``RUN/config.yaml`` plus the stage folders ``RUN/<code>/<stage>/``."""

    def __init__(self, root):
        self.root = Path(root)
        cfg = self.root / CONFIG_NAME
        if not cfg.exists():
            raise InputError(f"not a run folder (no {CONFIG_NAME}); make one with "
                             "`ratercal simulate CONFIG --out RUN` or `ratercal rater CONFIG --out RUN`", self.root)
        self.config = load_config(cfg)

    @classmethod
    def create(cls, config_path, root) -> "Run":
        """Validate ``config_path`` and copy it into ``root`` (unchanged text: no rerun)."""
        text = config_text(config_path)
        parse_config(text, source=str(config_path))  # errors name the user's file, not the copy
        root = Path(root)
        target = root / CONFIG_NAME
        if not target.exists() or target.read_bytes() != text.encode("utf-8"):
            write_text(target, text)
        return cls(root)

    @property
    def design_path(self) -> Path:
        return self.root.joinpath(*DESIGN_PATH)

    def design(self) -> RunDesign:
        """The recorded design (the ``rater`` stage must have run)."""
        return RunDesign.read(self.design_path)

    def cells(self, codes=None):
        if not codes:
            return list(self.config.cells)
        return [self.config.cell(c) for c in codes]

    def equated_variants(self) -> tuple:
        """The variants the equate stage has results for (``RUN/<set>/equate/<variant>/``)."""
        found = {p.parent.name for p in self.root.glob("*/equate/*/manifest.json")}
        return tuple(v for v in VARIANTS if v in found)

    def chain_position(self, code):
        """(chain index, position, previous set or None, chain's start low byte)."""
        for i, chain in enumerate(self.config.chains):
            if code in chain.sets:
                pos = chain.sets.index(code)
                return i, pos, (chain.sets[pos - 1] if pos else None), chain.low_byte
        raise KeyError(code)
