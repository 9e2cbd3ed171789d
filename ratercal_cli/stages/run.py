"""A run folder: the config it was made from and where each stage writes."""

from __future__ import annotations

from pathlib import Path

from ..config import load_config
from ..errors import InputError
from ..io import write_text

CONFIG_NAME = "config.yaml"


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
        load_config(config_path)  # errors name the user's file, not the copy
        root = Path(root)
        text = Path(config_path).read_text(encoding="utf-8")
        target = root / CONFIG_NAME
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            write_text(target, text)
        return cls(root)

    def cells(self, codes=None):
        if not codes:
            return list(self.config.cells)
        return [self.config.cell(c) for c in codes]

    def chain_position(self, code):
        """(chain index, position, previous set or None, chain's start low byte)."""
        for i, chain in enumerate(self.config.chains):
            if code in chain.sets:
                pos = chain.sets.index(code)
                return i, pos, (chain.sets[pos - 1] if pos else None), chain.low_byte
        raise KeyError(code)
