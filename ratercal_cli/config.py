"""The study config: YAML schema, validation, typed objects.

Every error is one line naming the file, line and key, e.g.
``configs/x.yaml:12: cells[0].raters_per_paper: 3 raters per paper, but only 2 raters``.

Schema (all keys optional except ``cells``)::

    name: denny1990
    generator: basic1990     # basic1990 | pcm | sequential | grm (graded response) | linear
    variant: faithful        # the methods' variant: faithful | corrected, or a list of both
    shrinkage: none          # paper scores: none | kelley | linear_eb, or a list (methods/shrinkage.py)
    true_score: model        # model: the generator's expected score; pcm: TRUEGEN's (1990 mismatch)
    cut: 3.25                # pass/fail cut for decision accuracy, on the 0-5 scale (0 to 5)
    methods: [NO, MN, ...]   # default: the study's ten; "module:Class" a method of your own, or
                             # {method: "module:Class", timeout: 60}: its fit and transform bounded
                             # to 60 s each (then recorded as failed on that data set)
    raters:
      steps: table3          # or {5: [[d11..d15], ...], 9: [...]} or one list for every scale
      count: 9               # implied by steps; with table3 any number (Table 3's nine in turn)
      effects: {severity: 0, slope: 1, centrality: 0, drift: 0}   # one number or one per rater;
                             # rater_task_sd: 0.3, tasks: 4 (a rater x task interaction);
                             # halo: 0.5 (0..1, with criteria)
    assignment: random       # or by_quality (rater_effects.py)
    criteria: {count: 4, correlation: 0.7, difficulty: 0}   # an analytic rubric (rater_effects.py)
    cells:                   # a list of factorial blocks; every combination is one data set
      - raters_per_paper: [1, 2, 3, "2+"]
        papers: [100]
        max_score: [5, 9]
        quality: [normal, positive, negative]
    chains:                  # basic1990: run order and each interpreter session's start
      - {start: fresh, sets: ["1152", "1153"]}
      - {start: 68, sets: ["0152"]}      # start: fresh, or the RND state's low byte
    seed: 20261202           # modern generators: root of the SeedSequence
    replications: 1
    linear: {true_mean: 3.5, true_sd: 1.0, effects: [.5, .5, .5, 0, 0, 0, -.5, -.5, -.5],
             error_sd: [1.0, .7, .4, 1.0, .7, .4, 1.0, .7, .4]}
    quality: basic           # modern: paper qualities from the BASIC shapes of a standard normal

A config is a program, as a Makefile or a Snakefile is: a method of your own, ``module:Class``,
is Python imported from the config's folder (first on the module search path, so a module there
shadows an installed one of the same name) and run with your rights.  Validating a config imports
nothing; the module is imported when a stage applies the methods (``adjust RUN``, ``score``,
``montecarlo``: :func:`import_user_methods`).  Run only configs and modules you trust.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .design import Cell, parse_code, table3_steps
from .errors import InputError
from .guard import snippet
from .methods import add_paths, is_user_method, load_class, method_codes
from .vocabulary import GENERATORS, QUALITY_CODES, STEP_GENERATORS, STUDY_METHODS, STUDY_SHRINKAGES, VARIANTS
TOP_KEYS = ("name", "generator", "variant", "methods", "raters", "cells", "chains", "seed",
            "replications", "linear", "quality", "true_score", "cut", "description", "shrinkage", "assignment",
            "criteria")
TRUE_SCORES = ("model", "pcm")

#: Memory a rating takes while its data set is made, adjusted and scored, rounded up from what
#: was measured (200,000 papers of 2+ raters: ``simulate`` 0.9 KiB a rating, ``adjust`` with the
#: study's ten methods 1.4 KiB).
RATING_BYTES = 1536
#: The same in a Monte Carlo chunk, whose replications are made and fitted as one batch
#: (measured: 25 replications of 20,000 papers of 2+ raters, 0.4 KiB a rating).
CHUNK_RATING_BYTES = 512
#: The same with a marginal-ML fit (:data:`MARGINAL_METHODS`), which holds every rating at every
#: quadrature node (README: 1,000,000 ratings in 6.6 GiB).
MARGINAL_RATING_BYTES = 8192
MARGINAL_METHODS = ("MML", "MFRM")
#: A paper's true scores by every rater (truegen's ``rater_true_scores.csv``) and their working copies.
PAPER_RATER_BYTES = 64
#: One replication of one set, variant, shrinkage and method in the Monte Carlo summary (its
#: criteria, ``criteria.SET_CRITERIA``, 8 bytes each).
REPLICATION_BYTES = 8 * 20


@dataclass(frozen=True)
class Chain:
    """One QuickBASIC session: its start state and the sets it ran, in order."""

    sets: tuple
    low_byte: int | None = None  # None: a fresh interpreter (seed &H50000)


@dataclass
class StudyConfig:
    name: str
    generator: str
    methods: tuple
    cells: list
    steps: dict  # max_score -> (n_raters, M) float array
    n_raters: int
    chains: list = field(default_factory=list)
    seed: int = 0
    replications: int = 1
    linear: dict = field(default_factory=dict)
    variants: tuple = ("faithful",)  # every one is a dimension of the run
    shrinkages: tuple = ("none",)    # a dimension of the Monte Carlo runs
    effects: object = None           # rater_effects.RaterEffects (raters.effects, assignment)
    rubric: object = None            # rater_effects.RubricDesign (criteria), or None
    true_score: str = "model"
    cut: float = 3.25
    source: str = "<config>"
    raw: dict = field(default_factory=dict)
    #: the raters are Table 3's nine (in turn, with raters.count): rater j is Table 3's rater (j - 1) mod 9 + 1,
    #: and Tables 9 and 10 (lenient/average/stringent, wide/medium/narrow) type them so
    table3_raters: bool = False

    @property
    def faithful_generator(self) -> bool:
        return self.generator == "basic1990"

    def cell(self, code: str) -> Cell:
        for c in self.cells:
            if c.code == code or c.label == code:
                return c
        raise InputError(f"no set {code!r} in this config (sets: {', '.join(c.code for c in self.cells)})",
                         self.source)

    def digest(self) -> str:
        """Hash of the normalised config: a stage reruns when it changes."""
        return hashlib.sha256(json.dumps(self.raw, sort_keys=True, default=str).encode()).hexdigest()

    def set_bytes(self, cell: Cell, at_once: int = 1) -> int:
        """About the memory that making, adjusting and scoring ``at_once`` replications of
        ``cell`` at a time takes (a Monte Carlo chunk makes its replications together)."""
        if set(self.methods) & set(MARGINAL_METHODS):
            per_rating = MARGINAL_RATING_BYTES
        else:
            per_rating = RATING_BYTES if at_once == 1 else CHUNK_RATING_BYTES
        per_reading = per_rating * (self.rubric.count if self.rubric is not None else 1)   # a rating per criterion
        return at_once * cell.papers * (cell.raters_drawn * per_reading + self.n_raters * PAPER_RATER_BYTES)

    def summary_bytes(self, replications: int) -> int:
        """About the memory of the Monte Carlo summary of ``replications`` of every set."""
        return (len(self.cells) * len(self.variants) * len(self.shrinkages) * len(self.methods) * replications
                * REPLICATION_BYTES)


def memory_available() -> int:
    """This machine's memory in bytes (what a design is bounded by)."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):   # pragma: no cover - not POSIX
        return 16 << 30


def memory_left() -> float | None:
    """Bytes this process can still have, as far as can be read: the least of the memory the machine has
    free (Linux's MemAvailable, else all of it), the address space left under the process's limit
    (``ulimit -v``) and the memory left under its cgroup's limit (Linux); None where none can be read.
    (Not :func:`memory_available`, the machine's memory that bounds a study's design: a fit
    (:func:`.methods.mml.fit_mml`) asks for its arrays now, beside what else runs.)"""
    import os

    try:
        page = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):   # pragma: no cover - not POSIX
        return None
    left = [float(memory_available())]
    try:
        with open("/proc/meminfo") as fh:
            free = next((line.split()[1:3] for line in fh if line.startswith("MemAvailable:")), None)
        if free is not None and free[1] == "kB":
            left.append(float(int(free[0]) * 1024))
    except (OSError, ValueError):
        pass
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as fh:
                left.append(float(soft - int(fh.read().split()[0]) * page))
    except (ImportError, OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as fh:
                left.append(float(int(limit) - int(fh.read().strip())))
    except (OSError, ValueError):
        pass
    return min(left)


def require_memory(need: float, what: str, advice: str) -> None:
    """A :class:`~ratercal_cli.errors.MethodError` (one line, before anything is allocated) where ``need`` bytes
    are more than this process can have (:func:`memory_left`): ``what`` needs them; ``advice``, what to do
    instead.  (Else numpy's MemoryError after a minute, or the kernel's kill with no word: 50,000 raters'
    pairs of raters, 18.6 GiB, a tester's file.)"""
    have = memory_left()
    if have is None or need <= have:
        return
    from .errors import MethodError

    raise MethodError(f"{what} needs {_size(int(need))}, more than the {_size(int(max(have, 0)))} this process can "
                      f"have; {advice}")


def _size(n: int) -> str:
    """``745 GiB``: a memory size as people read it."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024


def too_big(needed: int, what: str):
    """The message refusing a design that needs ``needed`` bytes, or None when it fits the
    machine's memory (:func:`memory_available`)."""
    have = memory_available()
    if needed <= have:
        return None
    return f"{what} would need about {_size(needed)} of memory; this machine has {_size(have)}"


#: The most raters a design may have (``raters.count``; 1,000,000,000 was a 37 GiB allocation
#: before the memory check could see it).
MAX_RATERS = 1_000_000
#: The largest seed (numpy's and the 1990 generators' seeds are at most 64 bits).
MAX_SEED = 2**64 - 1

#: The most values a config may hold, aliases expanded (a real one holds a few hundred): an
#: "alias bomb", aliases of aliases each multiplying the size, is refused as soon as it passes this.
MAX_VALUES = 100_000
#: The deepest a config's values may nest (a list of lists is 2); a recursive alias nests without end.
MAX_DEPTH = 50


@functools.lru_cache(maxsize=None)
def _loader():
    """The YAML loader: SafeLoader (on libyaml's parser where PyYAML has it: a config in 1.5 ms,
    not 15) with YAML 1.2 booleans: only true/false, so that the method code ``NO`` (and
    ``yes``/``on``/``off``) stay strings."""
    import yaml

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        pass

    Loader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                 list("tTfF"))
    # YAML 1.2 floats PyYAML misses: a signed leading dot (-.5) and exponents without a dot (1e-3)
    Loader.add_implicit_resolver("tag:yaml.org,2002:float",
                                 re.compile(r"^(?:[-+]?\.[0-9]+(?:[eE][-+]?[0-9]+)?|[-+]?[0-9]+[eE][-+]?[0-9]+)$"),
                                 list("-+.0123456789"))
    return Loader


def _key_name(path) -> str | None:
    """``cells[0].papers``: a key path as errors name it."""
    return "".join(f"[{k}]" if isinstance(k, int) else (f".{k}" if i else str(k))
                   for i, k in enumerate(path)) or None


class _Where:
    """The YAML line of every key path, for error messages.  Walking the node tree, it refuses
    what the loader would take silently or slowly: a key given twice in one mapping (naming both
    lines), a key that is not a plain value, and aliases that expand past :data:`MAX_VALUES`
    values or nest past :data:`MAX_DEPTH` levels (the walk stops there, so it takes
    milliseconds whatever the aliases would make)."""

    def __init__(self, source, node, method_dirs=()):
        self.source = source
        self.method_dirs = tuple(method_dirs)   # further folders a module:Class method is looked for in
        self.lines = {}
        self._values = 0
        if node is not None:
            self._walk(node, (), 0)

    def _walk(self, node, path, depth):
        import yaml

        self._values += 1
        if self._values > MAX_VALUES or depth > MAX_DEPTH:
            what = f"more than {MAX_VALUES:,} values" if depth <= MAX_DEPTH else f"more than {MAX_DEPTH} levels deep"
            raise InputError(f"the config expands to {what} (aliases of aliases, or an alias of "
                             "itself?); write the values out", self.source, node.start_mark.line + 1,
                             _key_name(path))
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            seen = {}
            for k, v in node.value:
                if not isinstance(k, yaml.ScalarNode):
                    raise InputError("a key must be a plain name or number, not a list or mapping",
                                     self.source, k.start_mark.line + 1, _key_name(path))
                if k.tag != "tag:yaml.org,2002:merge":
                    first = seen.setdefault(k.value, k)
                    if first is not k:
                        raise InputError(f"given twice, on lines {first.start_mark.line + 1} and "
                                         f"{k.start_mark.line + 1}; keep one", self.source,
                                         k.start_mark.line + 1, _key_name(path + (k.value,)))
                # a numeric key (the scale in raters.steps: {5: ...}) is looked up as an int
                names = [k.value] + ([int(k.value)] if str(k.value).isdigit() else [])
                for name in names:
                    key = path + (name,)
                    self._walk(v, key, depth + 1)
                    self.lines[key] = k.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                self._walk(v, path + (i,), depth + 1)

    def error(self, path, message):
        p = tuple(path)
        while p and p not in self.lines:
            p = p[:-1]
        return InputError(message, self.source, self.lines.get(p), _key_name(path))


def load_config(path, method_dirs=()) -> StudyConfig:
    """Read and validate a YAML config file (:func:`config_text`); a method of the user's own is
    imported from the file's folder, then ``method_dirs``."""
    return parse_config(config_text(path), source=str(path), method_dirs=method_dirs)


def config_text(path) -> str:
    """A config file's text.  It must be UTF-8: a byte that is not is an :class:`InputError`
    naming its line and byte offset."""
    from .io import read_text

    path = Path(path)
    if not path.exists():
        raise InputError("no such config file", path)
    return read_text(path, option=None)


def _parse_yaml(text: str, source: str, method_dirs=()):
    """``(data, where)``: the YAML's data and the line of every key path."""
    import yaml

    loader = _loader()(text)  # parsed once: the node tree gives the line numbers and the data
    try:
        node = loader.get_single_node()
        where = _Where(source, node, method_dirs)  # before construction, which flattens merge keys in place
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        msg = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"not valid YAML: {msg}", source, line) from None
    except RecursionError:   # brackets nested thousands deep, before the walk can count them
        raise InputError(f"not valid YAML: nested more than {MAX_DEPTH} levels deep", source) from None
    except ValueError as exc:   # Python's limit on the digits of a whole number (a 5,001-digit seed:)
        if isinstance(exc, InputError):
            raise
        long = re.search(r"\d{4000,}", text)
        line = text.count("\n", 0, long.start()) + 1 if long else None
        raise InputError(f"not a usable number: {str(exc).split(';')[0]}", source, line) from None
    finally:
        loader.dispose()
    return data, where


def parse_config(text: str, source: str = "<config>", method_dirs=()) -> StudyConfig:
    return _validated(*_parse_yaml(text, source, method_dirs))


def method_paths(source) -> tuple:
    """Where a config's own methods (``module:Class``) are imported from first: the config's folder."""
    if not source or source.startswith("<"):
        return ()
    return (str(Path(source).resolve().parent),)


def _validated(data, where) -> StudyConfig:
    if not isinstance(data, dict):
        raise where.error((), "the config must be a mapping of keys (name, generator, cells, ...)")
    return _validate(data, where)


# -- validation helpers -------------------------------------------------------------

def _check_keys(where, path, mapping, known):
    for k in mapping:
        if k not in known:
            raise where.error(path + (k,), f"unknown key (known: {', '.join(known)})")


def _choice(where, path, value, choices):
    if value not in choices:
        raise where.error(path, f"must be one of {', '.join(map(str, choices))}, not {snippet(value)}")
    return value


def _int(where, path, value, lo=None, hi=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(path, f"expected an integer, got {snippet(value)}")
    if lo is not None and value < lo or hi is not None and value > hi:
        rng = f">= {lo}" if hi is None else f"between {lo} and {hi}"
        raise where.error(path, f"must be {rng}, got {value}")
    return value


def _number(where, path, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise where.error(path, f"expected a number, got {snippet(value)}")
    if not math.isfinite(value):
        raise where.error(path, f"expected a finite number, got {snippet(value)}")
    return float(value)


def _list(where, path, value):
    if not isinstance(value, list):
        value = [value]
    if not value:
        raise where.error(path, "must not be empty")
    return value


def _validate(data: dict, where: _Where) -> StudyConfig:
    """The config's data, checked key by key, as a :class:`StudyConfig`."""
    _check_keys(where, (), data, TOP_KEYS)
    name = str(data.get("name", Path(where.source).stem))
    generator = _choice(where, ("generator",), data.get("generator", "basic1990"), GENERATORS)
    variants = _one_or_list(data, where, "variant", VARIANTS, "faithful")
    shrinkages = _one_or_list(data, where, "shrinkage", STUDY_SHRINKAGES, "none")
    methods = _methods(data, where)
    cells, blocks = _cells(data, where)
    steps, linear, n_raters = _raters(data, where, generator, sorted({c.max_score for c in cells}))
    _check_design(where, generator, cells, blocks, n_raters)
    chains = _chains(data, where, generator, [c.code for c in cells])
    effects = _effects(data, where, generator, n_raters)
    rubric = _rubric(data, where, generator)
    true_score = _choice(where, ("true_score",), data.get("true_score", "model"), TRUE_SCORES)
    if true_score == "pcm" and generator == "linear":
        raise where.error(("true_score",), "the linear model's true score is its own; 'pcm' needs step parameters")
    cut = _number(where, ("cut",), data.get("cut", 3.25))
    if not 0 <= cut <= 5:   # on the 0-5 scale (a 0-M scale uses cut * M / 5): outside, every paper passes or fails
        raise where.error(("cut",), f"{cut:g} is outside the 0-5 scale the cut is given on (a 0-M scale uses "
                          "cut x M / 5)")
    seed = _int(where, ("seed",), data.get("seed", 0), 0, MAX_SEED)
    reps = _int(where, ("replications",), data.get("replications", 1), 1)
    if "quality" in data and data["quality"] != "basic":
        raise where.error(("quality",), "only 'basic' (the programs' shapes of a standard normal) is supported")
    cfg = StudyConfig(name=name, generator=generator, methods=tuple(methods), cells=cells,
                      steps=steps, n_raters=n_raters, chains=chains, seed=seed, replications=reps,
                      linear=linear, variants=variants, shrinkages=shrinkages, true_score=true_score, cut=cut,
                      source=where.source, effects=effects, rubric=rubric,
                      table3_raters=_table3_raters(data, generator, linear))
    _check_memory(where, cfg, blocks)
    timeouts = {c: USER_TIMEOUTS[(where.source, c)] for c in methods if (where.source, c) in USER_TIMEOUTS}
    cfg.raw = {"name": name, "generator": generator, "variant": list(variants), "methods": methods,
           **({"timeouts": timeouts} if timeouts else {}),
           **({"shrinkage": list(shrinkages)} if shrinkages != ("none",) else {}),
           **({"effects": effects.to_dict()} if not effects.neutral else {}),
           **({"criteria": rubric.to_dict()} if rubric is not None else {}),
           "true_score": true_score, "cut": cut,
           "cells": [c.code for c in cells], "steps": {m: s.tolist() for m, s in steps.items()}, "linear": linear,
           "chains": [[list(c.sets), c.low_byte] for c in chains], "seed": seed, "replications": reps}
    return cfg


def _check_memory(where, cfg, blocks) -> None:
    """The design fits this machine's memory (:func:`too_big`): its largest set, and the Monte
    Carlo summary of its replications; checked before anything is written or allocated."""
    for b, c in zip(blocks, cfg.cells):
        msg = too_big(cfg.set_bytes(c), f"set {c.code} ({c.papers:,} papers, {c.raters_drawn} ratings each)")
        if msg:
            raise where.error(("cells", b, "papers"), msg)
    msg = too_big(cfg.summary_bytes(cfg.replications),
                  f"{cfg.replications:,} replications of {len(cfg.cells)} set(s)")
    if msg:
        raise where.error(("replications",), msg)


def _one_or_list(data, where, key, allowed, default) -> tuple:
    """``key``: one of ``allowed`` or a list of them, none twice (``default`` when absent): the
    ``variant`` and ``shrinkage`` keys."""
    listed = isinstance(data.get(key), list)
    values = tuple(_choice(where, (key, i) if listed else (key,), v, allowed)
                   for i, v in enumerate(_list(where, (key,), data.get(key, default))))
    if len(set(values)) < len(values):
        raise where.error((key,), f"a {key} is listed twice")
    return values


def _generators_text():
    """``pcm, sequential or grm``: the generators with raters' steps, for an error message."""
    return ", ".join(STEP_GENERATORS[:-1]) + " or " + STEP_GENERATORS[-1]


def _effects(data, where, generator, n_raters):
    """``raters.effects`` and ``assignment`` (:mod:`.rater_effects`), for the pcm and sequential
    generators."""
    from .rater_effects import RaterEffects, parse_effects

    given = [k for k in ("assignment",) if k in data] + (["raters.effects"] if (data.get("raters") or {}).get(
        "effects") else [])
    if given and generator not in STEP_GENERATORS:
        raise where.error(("assignment",) if "assignment" in given else ("raters", "effects"),
                          f"rater effects and assignment need the {_generators_text()} generator, not {generator}")
    if not given:
        return RaterEffects.none(n_raters)
    return parse_effects(where, data, n_raters)


def _rubric(data, where, generator):
    """``criteria`` (:func:`.rater_effects.parse_criteria`), for the pcm and sequential generators."""
    from .rater_effects import parse_criteria

    if "criteria" in data and generator not in STEP_GENERATORS:
        raise where.error(("criteria",), f"criteria need the {_generators_text()} generator, not {generator}")
    return parse_criteria(where, data)


def _methods(data, where) -> list:
    """``methods``: known method codes (any case, written upper case) or ``module:Class`` (a method of
    the user's own, imported with the config's folder first), none twice."""
    known = method_codes()
    methods = []
    for i, m in enumerate(_list(where, ("methods",), data.get("methods", list(STUDY_METHODS)))):
        if isinstance(m, dict):   # {method: module:Class, timeout: SECONDS}: a method of your own, bounded
            _check_keys(where, ("methods", i), m, ("method", "timeout"))
            if not is_user_method(m.get("method", "")):
                raise where.error(("methods", i, "method"), "a timeout is given to a method of your own, "
                                  "module:Class")
            seconds = _number(where, ("methods", i, "timeout"), m.get("timeout"))
            if seconds <= 0:
                raise where.error(("methods", i, "timeout"), f"must be a number of seconds > 0, got {seconds:g}")
            USER_TIMEOUTS[(where.source, str(m["method"]).strip())] = seconds
            m = m["method"]
        if is_user_method(m):   # module:Class, a method of the user's own (methods/user.py)
            code = str(m).strip()
            module, _, name = code.partition(":")
            if not all(part.isidentifier() for part in module.split(".") + name.split(".")):
                raise where.error(("methods", i), f"{code!r}: a method of your own is named module:Class "
                                  "(Python names, e.g. my_methods:MedianEquating)")
            # not imported here: its module is the user's code, run only by a stage that applies the
            # methods (import_user_methods); a config is validated without running anything
            at = where.error(("methods", i), "")
            USER_METHODS_AT[(where.source, code)] = (at.line, at.field,
                                                     method_paths(where.source) + tuple(where.method_dirs))
            if code in methods:
                raise where.error(("methods", i), f"method {code} is listed twice")
            methods.append(code)
            continue
        code = str(m).upper()
        if code not in known:
            raise where.error(("methods", i), f"unknown method {snippet(m)} (known: {', '.join(known)})")
        if code in methods:
            raise where.error(("methods", i), f"method {code} is listed twice")
        methods.append(code)
    return methods


#: ``(config source, module:Class)`` -> ``(line, key, folders to import from)``: where each method of
#: the user's own was named (:func:`import_user_methods`' errors name it).
USER_METHODS_AT: dict = {}


#: ``(config source, module:Class)`` -> seconds: a method of the user's own given a ``timeout``.
USER_TIMEOUTS: dict = {}


def user_timeouts(cfg) -> dict:
    """``{module:Class: seconds}`` of the config's methods of the user's own that have a ``timeout``."""
    return {code: USER_TIMEOUTS[(cfg.source, code)] for code in cfg.methods if (cfg.source, code) in USER_TIMEOUTS}


def import_user_methods(cfg, methods=None) -> None:
    """Import the config's methods of the user's own (``module:Class``; of ``methods``, default the
    config's), with the config's folder (then the run's) first on the module search path.  Called by
    the stages that apply methods (``adjust RUN``, ``score``, ``montecarlo``), never by a config's
    validation: naming a module in a config runs nothing until then (README, Security).  A module
    that cannot be imported, or raises on import, is a one-line :class:`InputError` naming the config
    line."""
    from .methods import set_user_timeouts

    set_user_timeouts(user_timeouts(cfg))
    for code in methods or cfg.methods:
        if not is_user_method(code):
            continue
        line, key, paths = USER_METHODS_AT.get((cfg.source, code), (None, "methods", method_paths(cfg.source)))
        add_paths(paths)
        try:
            load_class(code)
        except Exception as exc:   # the user's module: whatever importing it raises
            raise InputError(f"cannot use {code}: {type(exc).__name__}: {exc}", cfg.source, line, key) from None


def _cells(data, where):
    """``cells``: every combination of each factorial block, as ``(cells, block of each cell)``;
    no set twice."""
    if "cells" not in data:
        raise where.error(("cells",), "missing: the list of data sets to simulate")
    cells, blocks = [], []
    for b, block in enumerate(_list(where, ("cells",), data["cells"])):
        made = _block_cells(where, ("cells", b), block)
        cells += made
        blocks += [b] * len(made)
    codes = [c.code for c in cells]
    dup = sorted({c for c in codes if codes.count(c) > 1})
    if dup:
        raise where.error(("cells",), f"set(s) listed twice: {', '.join(dup)}")
    return cells, blocks


def _block_cells(where, bp, block) -> list:
    """The cells of one factorial block of ``cells`` (at ``bp``)."""
    if not isinstance(block, dict):
        raise where.error(bp, "expected a mapping with raters_per_paper, papers, max_score, quality")
    _check_keys(where, bp, block, ("raters_per_paper", "papers", "max_score", "quality"))
    for k in ("raters_per_paper", "papers", "max_score"):
        if k not in block:
            raise where.error(bp, f"missing key {k}")
    rpps = []
    for i, v in enumerate(_list(where, bp + ("raters_per_paper",), block["raters_per_paper"])):
        s = str(v).strip()
        if s != "2+" and not (s.isdigit() and int(s) >= 1):
            raise where.error(bp + ("raters_per_paper", i), f"expected a count >= 1 or \"2+\", got {snippet(v)}")
        rpps.append(s)
    papers = [_int(where, bp + ("papers", i), v, 1)
              for i, v in enumerate(_list(where, bp + ("papers",), block["papers"]))]
    scales = [_int(where, bp + ("max_score", i), v, 1, 99)
              for i, v in enumerate(_list(where, bp + ("max_score",), block["max_score"]))]
    quals = [_choice(where, bp + ("quality", i), v, tuple(QUALITY_CODES))
             for i, v in enumerate(_list(where, bp + ("quality",), block.get("quality", "normal")))]
    return [Cell(r, p, m, q) for r in rpps for p in papers for m in scales for q in quals]


def _raters(data, where, generator, scales):
    """``(steps, linear, n_raters)``: the raters of the linear model (``linear``), or their step
    parameters on each of ``scales`` (``raters.steps``; ``table3`` with a ``raters.count`` takes
    Table 3's nine raters in turn, so any number of raters); ``raters.count`` must agree."""
    raters = data.get("raters", {}) or {}
    if not isinstance(raters, dict):
        raise where.error(("raters",), "expected a mapping with steps (and count)")
    _check_keys(where, ("raters",), raters, ("steps", "count", "effects"))
    steps, linear = {}, {}
    if generator == "linear":
        linear = _linear(data, where)
        n_raters = len(linear["effects"])
    else:
        steps = _steps(where, raters.get("steps", "table3"), scales)
        if generator == "grm":   # the graded response model's thresholds must be ordered
            for m, s in steps.items():
                for i in np.flatnonzero((np.diff(s, axis=1) <= 0).any(axis=1)):
                    p = ("raters", "steps") + ((m,) if isinstance(raters.get("steps"), dict) else ()) + (int(i),)
                    raise where.error(p, f"rater {i + 1}'s thresholds are not increasing: the graded response "
                                      "model needs b_1 < b_2 < ... < b_M")
        if raters.get("steps", "table3") == "table3" and "count" in raters:
            # any number of raters: Table 3's nine in turn (rater j is Table 3's rater j mod 9 + 1)
            count = _int(where, ("raters", "count"), raters["count"], 1, MAX_RATERS)   # before the arrays are made
            steps = {m: np.resize(s, (count, s.shape[1])) for m, s in steps.items()}
        counts = {s.shape[0] for s in steps.values()}
        if len(counts) > 1:
            raise where.error(("raters", "steps"), "every scale must have the same number of raters")
        n_raters = counts.pop()
    if "count" in raters and _int(where, ("raters", "count"), raters["count"], 1) != n_raters:
        raise where.error(("raters", "count"), f"count is {raters['count']} but the steps give {n_raters} raters")
    return steps, linear, n_raters


#: the linear model's raters that follow Table 3's pattern (its default): lenient, average, stringent by
#: three (effects), wide, medium, narrow in turn (error SDs)
LINEAR_TABLE3 = {"effects": [0.5] * 3 + [0.0] * 3 + [-0.5] * 3, "error_sd": [1.0, 0.7, 0.4] * 3}


def _table3_raters(data, generator, linear) -> bool:
    """Are the raters Table 3's nine (in turn): its steps (``raters.steps: table3``, the default), or the
    linear model's effects and error SDs of its pattern (:data:`LINEAR_TABLE3`)?"""
    if generator == "linear":
        return all(list(map(float, linear[k])) == v for k, v in LINEAR_TABLE3.items())
    return (data.get("raters") or {}).get("steps", "table3") == "table3"


def _linear(data, where) -> dict:
    """``linear``: the linear model's true-score mean and SD, rater effects and error SDs."""
    lin = data.get("linear", {}) or {}
    _check_keys(where, ("linear",), lin, ("true_mean", "true_sd", "effects", "error_sd"))
    eff = [_number(where, ("linear", "effects", i), v) for i, v in
           enumerate(_list(where, ("linear", "effects"), lin.get("effects", LINEAR_TABLE3["effects"])))]
    esd = [_number(where, ("linear", "error_sd", i), v) for i, v in
           enumerate(_list(where, ("linear", "error_sd"), lin.get("error_sd", LINEAR_TABLE3["error_sd"])))]
    if len(eff) != len(esd):
        raise where.error(("linear", "error_sd"), f"{len(esd)} error SDs for {len(eff)} rater effects")
    return {"true_mean": _number(where, ("linear", "true_mean"), lin.get("true_mean", 3.5)),
            "true_sd": _number(where, ("linear", "true_sd"), lin.get("true_sd", 1.0)),
            "effects": eff, "error_sd": esd}


def _steps(where, spec, scales) -> dict:
    """``raters.steps``: ``table3``, one list of raters' step parameters for every scale, or a
    mapping scale -> list; ``{max_score: (raters, max_score) array}``."""
    steps = {}
    if spec == "table3":
        for m in scales:
            if m < 2:
                raise where.error(("raters", "steps"), "the Table 3 formula needs a scale maximum of 2 or more")
            steps[m] = table3_steps(m)
        return steps
    per_scale = spec if isinstance(spec, dict) else {m: spec for m in scales}
    for m in scales:
        if m not in per_scale:
            raise where.error(("raters", "steps"), f"no step parameters for the 0-{m} scale")
        rows = per_scale[m]
        p = ("raters", "steps") + ((m,) if isinstance(spec, dict) else ())
        if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
            raise where.error(p, "expected a list of raters, each a list of step parameters")
        for i, r in enumerate(rows):
            if len(r) != m:
                raise where.error(p + (i,), f"rater {i + 1} has {len(r)} steps; the 0-{m} scale needs {m}")
        steps[m] = np.array([[_number(where, p + (i, k), v) for k, v in enumerate(r)]
                             for i, r in enumerate(rows)])
    return steps


def _check_design(where, generator, cells, blocks, n_raters) -> None:
    """Every cell has the raters it draws; the basic1990 generator makes only the programs' designs."""
    for b, c in zip(blocks, cells):
        need = 3 if c.raters_per_paper == "2+" else int(c.raters_per_paper)
        if need > n_raters:
            raise where.error(("cells", b, "raters_per_paper"), f"set {c.code}: {c.raters_per_paper} raters per paper, but only "
                                          f"{n_raters} raters")
    if generator == "basic1990":
        for b, c in zip(blocks, cells):
            if c.raters_per_paper not in ("1", "2", "3", "2+") or c.papers % 100 or c.papers > 900 or c.max_score > 9:
                raise where.error(("cells", b), f"set {c.code}: the basic1990 generator only makes the programs' "
                                              "designs (1, 2, 3 or 2+ raters; 100..900 papers; scale maximum <= 9)")


def _chains(data, where, generator, codes) -> list:
    """``chains`` (basic1990 only): each QuickBASIC session's start and sets; every set in
    exactly one chain (default: one fresh session running the sets in config order)."""
    if generator != "basic1990":
        if "chains" in data:
            raise where.error(("chains",), "chains apply only to the basic1990 generator")
        return []
    raw_chains = data.get("chains")
    if raw_chains is None:
        raw_chains = [{"start": "fresh", "sets": list(codes)}]
    chains, seen = [], {}
    for i, ch in enumerate(_list(where, ("chains",), raw_chains)):
        cp = ("chains", i)
        if not isinstance(ch, dict):
            raise where.error(cp, "expected a mapping with start and sets")
        _check_keys(where, cp, ch, ("start", "sets"))
        start = ch.get("start", "fresh")
        low = None if start == "fresh" else _int(where, cp + ("start",), start, 0, 255)
        sets = []
        for j, s in enumerate(_list(where, cp + ("sets",), ch.get("sets", []))):
            try:
                code = parse_code(str(s)).code
            except ValueError as exc:
                raise where.error(cp + ("sets", j), str(exc)) from None
            if code not in codes:
                raise where.error(cp + ("sets", j), f"set {code} is not among the cells")
            if code in seen:
                raise where.error(cp + ("sets", j), f"set {code} is already in chain {seen[code] + 1}")
            seen[code] = i
            sets.append(code)
        chains.append(Chain(tuple(sets), low))
    missing = [c for c in codes if c not in seen]
    if missing:
        raise where.error(("chains",), f"set(s) in no chain: {', '.join(missing)}")
    return chains
