"""A run folder: the config it was made from, the design it recorded, where each stage writes.

The design (``RUN/rater/design.json``, written by the ``rater`` stage) is the run's one record
of its cells, their facets and the variants of the methods: ``score`` and ``report`` read the
cells and variants from there, never from set names or the config again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..config import config_text, load_config, method_paths, parse_config
from ..design import Cell
from ..errors import InputError
from ..io import ReentrantFolderLock, folder_lock, write_json, write_text
from ..vocabulary import VARIANTS, own_report_files

CONFIG_NAME = "config.yaml"
#: Which config the run was made from (:meth:`Run.creating`).
SOURCE_NAME = ".config-source.json"
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
    #: "table3" where the raters are Table 3's nine in turn (Tables 9 and 10 type them), else None; a design
    #: written before it was recorded: Table 3's where it has nine raters
    rater_types: str | None = None

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
            n = int(d["n_raters"])
            return cls(d["name"], d["generator"], tuple(d["methods"]), tuple(d["variants"]), n, cells,
                       d.get("rater_types", "table3" if n == 9 else None))
        except FileNotFoundError:
            raise InputError("no design: run `ratercal simulate` (or `ratercal rater`) on this run first",
                             path) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"not a design file written by ratercal ({type(exc).__name__}: {exc})", path) from None


def _source(root) -> dict:
    """``RUN/.config-source.json``: the config the run was made from (its ``name`` and path),
    {} when unknown (a run made before it was recorded)."""
    try:
        d = json.loads((Path(root) / SOURCE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return d if isinstance(d, dict) else {}


def _refuse_foreign(root: Path, text: str, config_path=None) -> None:
    """An :class:`InputError` where ``root`` is a folder with files of its own and no run of ratercal's (no
    ``.config-source.json``, the mark :meth:`Run.creating` leaves, and not this config's ``config.yaml``): a
    tester's ``simulate --out .`` in a project folder wrote its ``config.yaml``, ``manifest.json`` and
    ``rater/design.json`` over the user's files of those names, silently.  Checked before the folder's lock
    file is made, so a refused folder is left as it was."""
    from ..io import LOCK_NAME

    if not root.is_dir() or (root / SOURCE_NAME).exists():
        return
    config = root / CONFIG_NAME
    if config_path is not None and config.is_file() and os.path.samefile(config_path, config):
        # (a researcher's project folder: `simulate config.yaml --out .` took its config.yaml for a run's copy, and
        # the next config simulated there wrote over it, the user's comments gone)
        raise InputError(f"is the folder of the config {config_path} itself, which the run would keep as its copy "
                         "and write over: give the run its own --out folder (e.g. --out run)", root)
    if config.is_file() and config.read_bytes() == text.encode("utf-8"):
        return   # (this config's run, killed before its mark was written: resumed)
    theirs = sorted(p.name for p in root.iterdir() if p.name != LOCK_NAME)
    if theirs:
        shown = ", ".join(theirs[:4]) + (f" and {len(theirs) - 4} more" if len(theirs) > 4 else "")
        raise InputError(f"is not empty ({shown}) and holds no ratercal run: give a new or empty --out folder, "
                         "so that no file of yours is written over", root)


def _stage_outputs(folder: Path) -> list:
    """The files a study stage's manifest (``folder/manifest.json``) records as its outputs, and the manifest."""
    from .pipeline import MANIFEST, read_manifest

    man = read_manifest(folder / MANIFEST) or {}
    root = folder.parent
    return [root / name for name in man.get("outputs", {})] + [folder / MANIFEST]


def _remove_own(folder: Path, files) -> None:
    """Remove ``files`` (ratercal's own, in ``folder``), then the folders they leave empty, up to ``folder``;
    anything else there is left alone (``simulate --force`` removed a hand-made ``report/`` whole)."""
    for f in files:
        with contextlib.suppress(FileNotFoundError):
            Path(f).unlink()
    if not folder.is_dir():
        return
    for d in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [folder]:
        with contextlib.suppress(OSError):
            d.rmdir()   # (only where empty)


class Run:
    """``RUN/config.yaml`` plus the stage folders ``RUN/<code>/<stage>/``."""

    def __init__(self, root):
        self.root = Path(root)
        cfg = self.root / CONFIG_NAME
        if not cfg.exists():
            raise InputError(f"not a run folder (no {CONFIG_NAME}); make one with "
                             "`ratercal simulate CONFIG --out RUN` or `ratercal rater CONFIG --out RUN`", self.root)
        # a config's own methods (module:Class) are imported from the folder of the config the run was
        # made from, not only from the run folder that holds its copy
        self.config = load_config(cfg, method_dirs=method_paths(_source(self.root).get("config")))
        self._lock = ReentrantFolderLock(self.root)   # held by writing, creating and lock

    @contextlib.contextmanager
    def lock(self, command: str):
        """Hold the run folder's lock (:func:`~ratercal_cli.io.folder_lock`) for the block, unless this
        run holds it already (opened by :meth:`writing` or :meth:`creating`, or inside another
        ``lock``): the library's run_stage, run_equate and run_score take it, so a call from Python
        is refused while a command writes the folder, as a second command is."""
        with self._lock.hold(command):
            yield self

    @classmethod
    @contextlib.contextmanager
    def creating(cls, config_path, root, command: str, replace: bool = False):
        """Validate ``config_path`` (its errors name it, and nothing is written), then hold the
        folder ``root``'s lock (:func:`~ratercal_cli.io.folder_lock`) for the block and copy the
        config in (unchanged text: no rerun); yields the :class:`Run`.

        A folder holding the run of another config (another ``name``: the config's key, else
        its file's name) is refused unless ``replace``, which also removes the sets of the
        other config's design that this one does not have, and its scores and report.
        """
        text = config_text(config_path)
        cfg = parse_config(text, source=str(config_path))
        root = Path(root)
        _refuse_foreign(root, text, config_path)
        with folder_lock(root, command):
            target = root / CONFIG_NAME
            if not target.exists() or target.read_bytes() != text.encode("utf-8"):
                cls._make_way(root, cfg, replace)
                write_text(target, text)
            if _source(root).get("name") != cfg.name:
                write_json(root / SOURCE_NAME, {"config": str(Path(config_path).resolve()), "name": cfg.name})
            run = cls(root)
            with run._lock.held():
                yield run

    @classmethod
    def create(cls, config_path, root, replace: bool = False) -> "Run":
        """:meth:`creating`, the lock held only while the config is copied in."""
        with cls.creating(config_path, root, "create", replace) as run:
            return run

    @staticmethod
    def _make_way(root, cfg, replace) -> None:
        """Before another config is copied into ``root``: refuse, unless ``replace``, a run of a
        config of another name; on replacing it, remove its sets that ``cfg`` does not have, and
        its scores and report (``RUN/score``, ``RUN/report``)."""
        previous = _source(root)
        if previous.get("name") in (None, cfg.name):
            return
        if not replace:
            raise InputError(f"holds the run of another config, {previous['name']!r} ({previous.get('config')}); "
                             "give --force to replace it, or another --out folder", root)
        try:
            old = {c.code for c in RunDesign.read(root.joinpath(*DESIGN_PATH)).cells}
        except InputError:
            old = set()
        for name in sorted(old - {c.code for c in cfg.cells}):   # and what was made of them: its own files alone
            shutil.rmtree(root / name, ignore_errors=True)
        _remove_own(root / "score", _stage_outputs(root / "score"))
        _remove_own(root / "report", own_report_files(root / "report"))

    @classmethod
    @contextlib.contextmanager
    def writing(cls, root, command: str):
        """The existing run folder ``root`` for the block, its lock held by ``command``
        (:func:`~ratercal_cli.io.folder_lock`: one writer at a time)."""
        root = Path(root)
        if not (root / CONFIG_NAME).exists():
            cls(root)   # the error naming what is missing, before the folder gets a lock file
        with folder_lock(root, command):
            run = cls(root)
            with run._lock.held():
                yield run

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
