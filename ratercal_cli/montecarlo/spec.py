"""What a Monte Carlo study is: the :class:`StudySpec` every worker gets, the rows it makes
(:data:`COLUMNS`), and the digest of the code the rows depend on (a resumed run never mixes two
versions)."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import criteria
from ..config import method_paths, user_timeouts
from ..errors import InputError
from ..methods.user import add_paths, is_user_method, source_digest
from ..vocabulary import REPLICABLE_GENERATORS

#: Version of the chunk file layout: part of the digest, so old chunks are not reused.
CHUNK_FORMAT = 2
#: Numeric criteria of a row (:data:`ratercal_cli.criteria.SET_CRITERIA`).
CRITERIA = criteria.SET_CRITERIA
#: The fields naming a row before its criteria.
KEYS = ("set", "replication", "variant", "shrinkage", "method")
#: Per-replication criteria, one row per (set, replication, variant, shrinkage, method).
COLUMNS = KEYS + CRITERIA + ("error",)
DEFAULT_CHUNK_SIZE = 25

#: What may change without invalidating a run's chunks: the command line and the report.
_NOT_IN_DIGEST = ("cli.py", "commands", "report")


def code_files(root=None) -> list:
    """The package sources a chunk's rows may depend on, as sorted relative paths: every ``.py``
    under ``ratercal_cli/`` except ``cli.py``, ``commands/`` and ``report/``.  All of them, not
    the modules a method imports at load time: imports inside functions (the registry, quality
    checks, fit statistics, this runner) count too."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[1]
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")
                  if p.relative_to(root).parts[0] not in _NOT_IN_DIGEST and "__pycache__" not in p.parts)


def code_digest(root=None) -> str:
    """Hash of :func:`code_files` (each path and its bytes): a resumed run refuses to mix
    chunks from two versions of the code."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for rel in code_files(root):
        h.update(rel.encode() + b"\0" + (root / rel).read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _num(x) -> str:
    """A float written so that it reads back as the same double ('' for nan)."""
    x = float(x)
    return repr(x) if math.isfinite(x) else ("" if math.isnan(x) else repr(x))


def _nums(values) -> list:
    """:func:`_num` of every number of a 1-d array."""
    return ["" if x != x else repr(x) for x in np.asarray(values, dtype=np.float64).tolist()]


def _user_code(methods, paths) -> dict:
    """``{module:Class: source hash}`` of the user's own methods among ``methods``."""
    specs = [m for m in methods if is_user_method(m)]
    if not specs:
        return {}
    add_paths(paths)
    return {m: source_digest(m) for m in specs}


@dataclass(frozen=True)
class StudySpec:
    """What a worker needs to make and score any replication (picklable, small)."""

    generator: str
    seed: int
    true_score: str
    cut: float
    methods: tuple
    variants: tuple
    n_raters: int
    shrinkages: tuple = ("none",)
    #: where the user's own methods (``module:Class``) are imported from (the config's folder; not
    #: in the digest: the rows do not depend on where the files are)
    paths: tuple = ()
    #: ``module:Class`` -> hash of its module's source (in the digest)
    user_code: dict = field(default_factory=dict)
    #: ``module:Class`` -> seconds its fit and transform may take (a config's ``timeout``; in the digest)
    timeouts: dict = field(default_factory=dict)
    #: rater effects and assignment (:meth:`RaterEffects.to_dict`; empty: none, random assignment)
    effects: dict = field(default_factory=dict)
    #: an analytic rubric's criteria (:meth:`RubricDesign.to_dict`; empty: none)
    rubric: dict = field(default_factory=dict)
    steps: dict = field(default_factory=dict)     # max_score -> (raters, M) list
    linear: dict = field(default_factory=dict)

    @classmethod
    def from_config(cls, cfg, variants=None, methods=None) -> "StudySpec":
        """Raises :class:`InputError` for a generator the replications cannot use (basic1990)."""
        from ..config import import_user_methods

        if cfg.generator not in REPLICABLE_GENERATORS:
            raise InputError(f"montecarlo replicates the modern generators ({', '.join(REPLICABLE_GENERATORS)}), not "
                             f"'{cfg.generator}'; the 1990 sets are made by 'ratercal simulate'",
                             cfg.source, field="generator")
        import_user_methods(cfg, methods)   # the user's own methods' code runs from here on, not before
        return cls(generator=cfg.generator, seed=int(cfg.seed), true_score=cfg.true_score, cut=float(cfg.cut),
                   methods=tuple(methods or cfg.methods), variants=tuple(variants or cfg.variants),
                   n_raters=int(cfg.n_raters), steps={int(m): np.asarray(s, dtype=np.float64).tolist()
                                                      for m, s in cfg.steps.items()},
                   linear=dict(cfg.linear), shrinkages=tuple(cfg.shrinkages),
                   paths=method_paths(cfg.source), user_code=_user_code(methods or cfg.methods, method_paths(cfg.source)),
                   timeouts=user_timeouts(cfg),
                   effects={} if cfg.effects is None or cfg.effects.neutral else cfg.effects.to_dict(),
                   rubric={} if cfg.rubric is None else cfg.rubric.to_dict())

    def digest(self) -> str:
        """Hash of everything a chunk's rows depend on (not the number of replications)."""
        d = {"format": CHUNK_FORMAT, "generator": self.generator, "seed": self.seed,
             "true_score": self.true_score, "cut": self.cut, "methods": list(self.methods),
             "variants": list(self.variants), "shrinkages": list(self.shrinkages), "n_raters": self.n_raters,
             "steps": {str(k): v for k, v in sorted(self.steps.items())}, "linear": self.linear,
             **({"user_code": self.user_code} if self.user_code else {}),
             **({"timeouts": self.timeouts} if self.timeouts else {}),
             **({"effects": self.effects} if self.effects else {}),
             **({"criteria": self.rubric} if self.rubric else {})}
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    def prepare(self) -> "StudySpec":
        """Make the user's own methods importable in this process (a worker calls it first)."""
        if self.paths:
            add_paths(self.paths)
        if self.timeouts:
            from ..methods.user import set_timeouts

            set_timeouts(self.timeouts)
        return self

    def rater_effects(self):
        """The :class:`~ratercal_cli.rater_effects.RaterEffects`, or None (none, random assignment)."""
        if not self.effects:
            return None
        from ..rater_effects import RaterEffects

        return RaterEffects(**{k: tuple(v) if isinstance(v, list) else v for k, v in self.effects.items()})

    def rubric_design(self):
        """The :class:`~ratercal_cli.rater_effects.RubricDesign`, or None (no criteria)."""
        if not self.rubric:
            return None
        from ..rater_effects import RubricDesign

        return RubricDesign(**{**self.rubric, "difficulty": tuple(self.rubric["difficulty"])})

    def steps_for(self, max_score):
        return None if self.generator == "linear" else np.asarray(self.steps[int(max_score)], dtype=np.float64)
