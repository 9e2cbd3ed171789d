"""``rc.study``: run a simulation study from Python, as SimDesign has it: *generate* a data set for a
cell of the design, *analyse* it by every method, *summarise* the criteria over the replications.

Two ways in, one results object (:class:`StudyResults`: ``summary`` and ``paired`` as DataFrames):

* a **config** (a YAML file, or the same mapping as a dict): the study's own engine
  (:class:`~ratercal_cli.montecarlo.run.MonteCarloRun`, what ``ratercal montecarlo`` runs), its
  generators, the study's criteria and methods, a method of your own as ``module:Class``;
* a :class:`Spec`: cells as dicts of your design factors and your own pieces, each pluggable as a
  method is: a **generator** ``generate(cell, rng) -> (Ratings, true paper scores)``, **methods**
  (codes, ``module:Class``, estimator classes or instances: ``fit_transform(ratings).paper``) and
  **criteria** ``criterion(true, scores) -> float`` (the study's ``rmse``, ``bias``, ``r``, ``maxdiff``
  by name).

The run folder (``out``) is the cache: each replication's rows are written as they finish
(atomically), and a run asked again computes only what is missing; a folder of another spec is refused
(its ``manifest.json``: the cells, names, seed, an estimator's changed parameters and a digest of the
source of your generator, criteria and method classes, so an edited generator is not given the old
rows); the same spec and seed give the
same numbers, serially or in ``jobs`` processes (each replication has its own seed,
``SeedSequence(seed).spawn`` by cell and replication).

Examples
--------
>>> import ratercal_cli as rc                                                       # doctest: +SKIP
>>> res = rc.study.run("configs/corrected.yaml", replications=20, jobs=2, out="runs/c")  # doctest: +SKIP
>>> res.summary.head()                                                              # doctest: +SKIP
"""

from __future__ import annotations

import csv
import io
import json
import atexit
import math
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..arguments import check_count
from ..errors import ArgumentError, InputError
from ..ratings import Ratings

__all__ = ["run", "Spec", "StudyResults", "CRITERIA"]


# ---------------------------------------------------------------------------------------
# criteria: the study's, by name
# ---------------------------------------------------------------------------------------
def _study_criterion(name, true, scores):
    """The study's criterion ``name`` of :func:`ratercal_cli.criteria.score_set` (one formula for the
    study files, the Monte Carlo rows and a spec); ``partial(_study_criterion, name)`` is a
    ``criterion(true, scores)`` that pickles for ``jobs > 1``."""
    from ..criteria import score_set

    return score_set(scores, true)[name]


#: the built-in criteria a :class:`Spec` may name: RMSE, bias ``mean(scores - true)``, Pearson's r
#: (nan when either side is constant) and the maximum |difference|
CRITERIA = {name: partial(_study_criterion, name) for name in ("rmse", "bias", "r", "maxdiff")}


@dataclass
class Spec:
    """A study of your own, SimDesign's way.

    Parameters
    ----------
    cells : list of dict
        The design: each cell a dict of factors (e.g. ``{"papers": 60, "spread": 0.5}``) handed to
        ``generate``; its ``name`` (default ``cell1``, ``cell2``, ...) labels the results.
    generate : callable
        ``generate(cell, rng) -> (ratings, true)``: one data set of the cell, drawn with the numpy
        Generator ``rng``: :class:`~ratercal_cli.ratings.Ratings` and the papers' true scores on the
        ratings' 0-based scale.
    methods : list
        Method codes (``"TLI"``), ``"module:Class"``, estimator classes or instances (anything with
        ``fit(ratings)`` and ``transform(ratings)`` giving ``.rating`` and ``.paper``, or a (rating, paper)
        pair: :mod:`ratercal_cli.methods.user`; an instance is copied afresh for each data set, and a
        class or instance of your own is given read-only data, its errors recorded as its failures), or
        ``(name, method)`` pairs.  Names (a cell's too) must
        differ: the run folder keeps rows by name, and records an instance's parameters that differ
        from its class's defaults, so a folder of other parameters is refused, not reused.
    criteria : dict or list
        ``{name: criterion(true, scores) -> float}``, or names of :data:`CRITERIA`.
    replications : int
    seed : int
    reference : str, optional
        The method the others are paired with (default the first).

    Examples
    --------
    >>> spec = Spec(cells=[{"papers": 60}], generate=my_generator, methods=["NO", "TLI"],   # doctest: +SKIP
    ...             criteria=["rmse"], replications=10, seed=1)
    """

    cells: list
    generate: Any
    methods: list
    criteria: Any = ("rmse", "bias")
    replications: int = 20
    seed: int = 20261205
    reference: str | None = None
    names: list = field(default_factory=list, init=False, repr=False)

    def __post_init__(self):
        if not callable(self.generate):
            raise ArgumentError("generate", f"expected a function generate(cell, rng) -> (ratings, true), not "
                                            f"{type(self.generate).__name__}")
        if isinstance(self.cells, dict) or not self.cells or not all(isinstance(c, dict) for c in self.cells):
            # (a dict of one cell was "dictionary update sequence element #0 has length 1", a researcher's)
            raise ArgumentError("cells", "give a list of cells, each a dict of the design's factors "
                                         "([{\"papers\": 60}, ...])")
        self.cells = [dict(c) for c in self.cells]
        for k, c in enumerate(self.cells):
            c.setdefault("name", f"cell{k + 1}")
            name = str(c["name"])
            if not name.strip() or name in (".", "..") or any(ch in name for ch in "/\\\0"):
                raise ArgumentError("cells", f"cell {k + 1}: its name {name!r} names the folder of its "
                                             "replications: give a name without / or \\ (and not . or ..)")
        _unique("cells", [str(c["name"]) for c in self.cells], "cell", "give each cell its own name")
        if isinstance(self.methods, str):   # ("TLI" was read a letter at a time: unknown method 'T'; rc.adjust
            self.methods = [m.strip() for m in self.methods.split(",") if m.strip()]   # takes "TLI,MN")
        if isinstance(self.criteria, str):
            self.criteria = [c.strip() for c in self.criteria.split(",") if c.strip()]
        self.methods = [_method_entry(m) for m in self.methods]
        if not self.methods:
            raise ArgumentError("methods", "give at least one method")
        _unique("methods", [n for n, _ in self.methods], "method",
                "name them apart with (name, method) pairs, e.g. (\"MML wle\", make_method(\"MML\", quality=\"wle\"))")
        crit = self.criteria
        if isinstance(crit, dict):
            self.criteria = dict(crit)
        else:
            crit = [c.strip().lower() if isinstance(c, str) and c.strip().lower() in CRITERIA else c for c in crit]
            unknown = [c for c in crit if not isinstance(c, str) or c not in CRITERIA]
            if unknown:
                raise ArgumentError("criteria", f"unknown criterion {unknown[0]!r} (the study's: "
                                                f"{', '.join(CRITERIA)}; or a dict name -> function)")
            self.criteria = {c: CRITERIA[c] for c in crit}
        for name, fn in self.criteria.items():
            if isinstance(fn, str):
                self.criteria[name] = CRITERIA[fn]
            elif not callable(fn):
                raise ArgumentError("criteria", f"{name}: expected a function criterion(true, scores) -> float")
        self.replications = check_count(self.replications, "replications", minimum=1)
        self.seed = check_count(self.seed, "seed")
        names = [n for n, _ in self.methods]
        if self.reference is not None and self.reference not in names:
            raise ArgumentError("reference", f"not among the methods ({', '.join(names)}): {self.reference!r}")

    def manifest(self) -> dict:
        """What the run folder records of the spec (a folder of another spec is refused)."""
        return {"cells": [{k: (v if isinstance(v, (int, float, str, bool)) or v is None else repr(v))
                           for k, v in c.items()} for c in self.cells],
                "generate": _generator_name(self.generate),
                "methods": [_method_record(n, m) for n, m in self.methods],
                "criteria": list(self.criteria), "seed": self.seed, "code": self.code_digests()}

    def code_digests(self) -> dict:
        """A digest of the source of each piece of the user's own code (the generator, a criterion or a
        method's class that is not ratercal's): a generator edited and run again into the same folder is
        another study, not a cache of the old one's rows."""
        out = {"generate": _source_digest(self.generate)}
        out.update({f"generate uses {k}": d for k, d in _reached(self.generate).items()})
        for name, fn in self.criteria.items():
            if not isinstance(fn, partial):   # (the study's criteria are partials of ours)
                out[f"criterion {name}"] = _source_digest(fn)
                out.update({f"criterion {name} uses {k}": d for k, d in _reached(fn).items()})
        for name, m in self.methods:
            if not isinstance(m, str):
                obj = m if isinstance(m, type) else type(m)
                if not str(getattr(obj, "__module__", "")).startswith("ratercal_cli"):
                    out[f"method {name}"] = _source_digest(obj)
                    out.update({f"method {name} uses {k}": d for k, d in _reached(obj).items()})
        return out


def _unique(argument, names, what, fix) -> None:
    """An ArgumentError naming the first of ``names`` given twice: two cells or methods of one name
    would share their rows in the run folder and in the summary."""
    seen = set()
    for name in names:
        if name in seen:
            raise ArgumentError(argument, f"two {what}s are named {name!r}: {fix}")
        seen.add(name)


def _method_record(name, method) -> str:
    """How the manifest records a method: its name, and an estimator instance's parameters where they
    differ from its class's defaults (``MML {'quality': 'wle'}``), so that a folder of the same names with
    other parameters is another study, not a cache of this one's rows."""
    get = getattr(method, "get_params", None)
    if isinstance(method, (str, type)) or get is None:
        return name
    params = get()
    try:
        defaults = type(method)().get_params()
    except Exception:   # noqa: BLE001 - a class of the user's whose parameters have no defaults
        defaults = {}
    changed = {k: v for k, v in params.items() if k not in defaults or repr(defaults[k]) != repr(v)}
    return f"{name} {changed!r}" if changed else name


def _first_difference(old, new) -> str:
    """What differs first between two manifests, in words: ``seed``, ``code: generate`` (its source)."""
    if not isinstance(old, dict):
        return "not a study's"
    for key in new:
        if old.get(key) != new[key]:
            if key == "code" and isinstance(old.get(key), dict):
                what = [k for k in new[key] if old[key].get(k) != new[key][k]] or list(old[key])
                user, _, used = what[0].partition(" uses ")
                if not used:
                    return f"the source of {user}"
                kind, _, name = used.partition(" ")
                if kind == "value":
                    return (f"the value of {name}, which {user} uses (if {user} changes it as it runs, a cache or a "
                            "counter, keep that out of the module's globals)")
                return f"the source of {used}, which {user} uses"
            return key
    return next((k for k in old if k not in new), "?")


def _source_digest(obj) -> str:
    """sha256 of ``obj``'s source, its first 16 hex digits: a function's (its code object's where the
    source is not to be had), a class's functions' in name order (a function knows its file; a class
    only its module's name, ``__main__`` under runpy or a notebook); "" where there is none."""
    import hashlib

    if isinstance(obj, type):
        parts = [_function_source(f) for _, f in sorted(vars(obj).items()) if callable(f) or isinstance(f, property)]
        data = b"\0".join(parts)
    else:
        data = _function_source(obj)
    return hashlib.sha256(data).hexdigest()[:16] if data else ""


def _function_source(fn) -> bytes:
    import inspect
    import marshal

    fn = getattr(fn, "fget", fn)   # a property: its getter
    try:
        return inspect.getsource(fn).encode()
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        try:
            return marshal.dumps(code) if code is not None else b""
        except ValueError:
            return b""


def _qualname(obj) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def _generator_name(fn) -> str:
    """The generator as the manifest names it: its module and qualified name, the module of a script run as
    ``python study.py`` (``__main__``) named by its file (``study``), as the same script imported is: a study
    run as a script and then from a notebook that imports it is the same study."""
    name = _qualname(fn)
    if getattr(fn, "__module__", None) == "__main__":
        file = _source_file(fn)
        if file:
            name = f"{Path(file).stem}.{getattr(fn, '__qualname__', type(fn).__name__)}"
    return name


def _source_file(obj):
    import inspect

    try:
        return inspect.getsourcefile(obj)
    except (TypeError, OSError):   # (a built-in; a class of a module run by runpy, whose file is not known)
        return None


def _not_users_roots() -> tuple:
    """Folders whose files are not the user's own code: Python's (the standard library, the environment's
    packages) and ratercal's."""
    import sys
    import sysconfig

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    roots |= {v for k, v in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(os.path.realpath(r) + os.sep for r in roots if r)


def _users_file(path) -> bool:
    """Is ``path`` a Python file of the user's own (a generator's helper module), not Python's, an installed
    package's or ratercal's?"""
    if not path or not str(path).endswith(".py") or not os.path.isfile(path):
        return False
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    return not ("site-packages" in parts or "dist-packages" in parts or real.startswith(_not_users_roots()))


#: containers of more items than this are not digested as values (:func:`_value_text`)
VALUE_ITEMS = 10_000


def _value_text(v, depth: int = 0):
    """A text of the value ``v`` that is the same in every process for the same value (a set's items sorted,
    a numpy array's bytes digested, a pandas frame's rows, a dataclass's fields: a Ratings of real data a
    generator resamples), or None for an object that has none (another instance, a function)."""
    import dataclasses
    import hashlib

    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, np.generic)):
        return repr(v)
    if isinstance(v, np.ndarray):
        data = v.tobytes() if v.dtype != object else repr(v.tolist()).encode()
        return f"array {v.dtype} {v.shape} {hashlib.sha256(data).hexdigest()}"
    if type(v).__module__.startswith("pandas") and hasattr(v, "to_numpy"):   # a frame of real ratings resampled
        import pandas as pd

        rows = pd.util.hash_pandas_object(v, index=True).to_numpy()
        names = list(v.columns) if hasattr(v, "columns") else [getattr(v, "name", None)]
        return f"{type(v).__name__} {names!r} {hashlib.sha256(rows.tobytes()).hexdigest()}"
    if dataclasses.is_dataclass(v) and not isinstance(v, type) and depth <= 4:   # (ratercal's Ratings)
        fields = [(f.name, _value_text(getattr(v, f.name), depth + 1)) for f in dataclasses.fields(v)]
        return f"{type(v).__name__}({', '.join(f'{k}={t}' for k, t in fields)})"
    if depth > 4 or not isinstance(v, (list, tuple, dict, set, frozenset)) or len(v) > VALUE_ITEMS:
        return None
    if isinstance(v, dict):
        items = [(_value_text(k, depth + 1), _value_text(x, depth + 1)) for k, x in v.items()]
        return None if any(a is None or b is None for a, b in items) else \
            "{" + ", ".join(sorted(f"{a}: {b}" for a, b in items)) + "}"
    texts = [_value_text(x, depth + 1) for x in v]
    if any(t is None for t in texts):
        return None
    if isinstance(v, (set, frozenset)):
        texts.sort()
    return f"{type(v).__name__}({', '.join(texts)})"


def _code_names(code) -> set:
    """The global names a code object (and the functions, classes and comprehensions inside it) loads."""
    names = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names |= _code_names(c)
    return names


def _reached(obj) -> dict:
    """What the user's function or class ``obj`` (a generator, a criterion, a method) reaches beyond its own
    source, each with a digest: the modules of the user's own it uses (their files: ``import helper`` and
    ``helper.QUALITY_SD``), the functions and classes of the user's it calls (their source, and what they reach
    in turn), and the values of the globals, defaults and closure variables they read (``N_RATERS = 8``).  An
    edited helper module or constant made another generator, whose old rows the run folder served as this
    one's (a new user's ``QUALITY_SD`` 1.0 -> 0.05 in a helper: the old RMSE, 0.5279, where a fresh folder gave
    0.5495).  Python's own modules and installed packages are left out (their versions are not the study)."""
    import hashlib
    import types

    def digest(data) -> str:
        return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()[:16]

    out: dict = {}
    home = _source_file(obj)
    seen: set = set()
    todo = [obj]
    while todo and len(seen) < 1000:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if isinstance(f, type):   # a class: its functions
            todo.extend(x for _, x in sorted(vars(f).items()) if isinstance(x, types.FunctionType))
            continue
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        where = _generator_name(f).rpartition(".")[0] or "?"   # (a script's module named by its file, as imported)
        g = getattr(f, "__globals__", {})
        values = [(f"{where}.{n}", g[n]) for n in sorted(_code_names(code)) if n in g]
        values += [(f"{f.__qualname__} closure {n}", c.cell_contents)
                   for n, c in zip(code.co_freevars, f.__closure__ or ()) if _filled(c)]
        values += [(f"{f.__qualname__} defaults", f.__defaults__), (f"{f.__qualname__} keyword defaults",
                                                                    f.__kwdefaults__)]
        # (the values as they are, not as the source writes them: a dict built from a constant, filled by later
        # lines, returned by a function or loaded from a file changes where its assignment's source does not, and a
        # verifier's five such edits were served the old rows; a cache or counter the generator fills as it runs
        # makes the same study run again in one session "another study", which the refusal says)
        for key, v in values:
            if isinstance(v, types.ModuleType):
                file = getattr(v, "__file__", None)
                if file and _users_file(file):
                    out[f"module {v.__name__}"] = digest(Path(file).read_bytes())
                    todo.extend(x for x in vars(v).values() if isinstance(x, types.ModuleType | types.FunctionType | type))
            elif isinstance(v, (types.FunctionType, type)):
                file = _source_file(v)
                if not file or not _users_file(file):
                    continue
                if file != home:   # another file of the user's: the whole of it
                    out[f"module {Path(file).stem}"] = digest(Path(file).read_bytes())
                else:
                    out[f"{'class' if isinstance(v, type) else 'function'} {v.__qualname__}"] = _source_digest(v)
                todo.append(v)
            elif v is not None or not key.endswith("defaults"):
                text = _value_text(v)
                if text is not None:
                    out[f"value {key}"] = digest(text)
    out.pop(f"{'class' if isinstance(obj, type) else 'function'} {getattr(obj, '__qualname__', '')}", None)
    return dict(sorted(out.items()))


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:   # (a closure variable not yet assigned)
        return False
    return True


def _method_entry(m):
    """``(name, method)``: a code or ``module:Class`` (made by make_method at use), a class or an instance."""
    if isinstance(m, tuple) and len(m) == 2:
        return str(m[0]), (_method_entry(m[1])[1] if isinstance(m[1], str) else m[1])   # (a code checked now)
    if isinstance(m, str):
        if ":" in m:   # module:Class
            return m, m
        from ..methods import method_codes

        code = m.strip().upper()   # ("mml" beside "MML" were two methods of one fit, a researcher's)
        if code == "RECOMMENDED":
            raise ArgumentError("methods", "'recommended' is check's pick for each data set, which a study does not "
                                           "apply yet: name the methods to compare (the pick is among "
                                           f"{', '.join(c for c in method_codes() if c != 'USER')})")
        if code not in method_codes():
            raise ArgumentError("methods", f"unknown method {m!r} (the codes: "
                                           f"{', '.join(c for c in method_codes() if c != 'USER')})")
        return code, code
    if isinstance(m, type):
        return getattr(m, "code", None) if isinstance(getattr(m, "code", None), str) and m.code != "?" \
            else m.__name__, m
    if hasattr(m, "fit_transform") or (callable(getattr(m, "fit", None)) and callable(getattr(m, "transform", None))):
        code = getattr(m, "code", None)
        return (code if isinstance(code, str) and code != "?" else type(m).__name__), m
    raise ArgumentError("methods", f"expected a method code, 'module:Class', an estimator class or instance, not "
                                   f"{m!r}")


def _estimator(method):
    from ..methods import make_method
    from ..methods.base import RaterAdjuster

    if isinstance(method, str):
        return make_method(method)
    if isinstance(method, type):
        if issubclass(method, RaterAdjuster):
            return method()
        from ..methods.user import ClassMethod   # a class of the estimator interface: its failures recorded

        return ClassMethod(method)
    if isinstance(method, RaterAdjuster):   # a fresh copy each data set, as sklearn's clone
        return type(method)(**method.get_params())
    from ..methods.user import InstanceMethod   # the user's instance: a fresh copy, read-only data, failures recorded

    return InstanceMethod(method)


# ---------------------------------------------------------------------------------------
# one replication: generate, analyse, score
# ---------------------------------------------------------------------------------------
def _replicate(spec: Spec, cell_index: int, rep: int) -> list:
    """The rows ``[method, criterion, value, error]`` of replication ``rep`` of a cell."""
    seq = np.random.SeedSequence([spec.seed, cell_index, rep])
    rng = np.random.default_rng(seq)
    cell = spec.cells[cell_index]
    try:
        made = spec.generate(dict(cell), rng)
    except Exception as exc:   # (a researcher's "RuntimeError: boom" named no cell nor replication)
        where = f"{_qualname(spec.generate)} failed on cell {cell['name']!r}, replication {rep + 1}"
        if hasattr(exc, "add_note"):   # (Python 3.11: the error as it is, with where it happened)
            exc.add_note(where)
            raise
        raise RuntimeError(f"{where}: {type(exc).__name__}: {exc}") from exc
    if not (isinstance(made, tuple) and len(made) == 2):
        got = f"a tuple of {len(made)}" if isinstance(made, tuple) else type(made).__name__
        raise InputError(f"{_qualname(spec.generate)} returned {got}: expected (ratings, true paper scores)",
                         field="generate")
    ratings, true = made
    if not isinstance(ratings, Ratings):
        raise InputError(f"{_qualname(spec.generate)} returned {type(ratings).__name__} first: expected a Ratings "
                         "(rc.Ratings.from_labels or .from_frame)", field="generate")
    true = np.asarray(true, dtype=np.float64)
    if true.shape != (ratings.n_papers,):
        raise InputError(f"{_qualname(spec.generate)} gave {true.shape} true scores for {ratings.n_papers} papers "
                         "(one per paper)", field="generate")
    rows = []
    from ..methods.base import FIT_FAILURES

    for name, method in spec.methods:
        try:
            scores = np.asarray(_estimator(method).fit_transform(ratings).paper, dtype=np.float64)
        except FIT_FAILURES as exc:   # the method cannot be applied to this data set: recorded, as the study does
            rows += [[name, c, math.nan, str(exc).splitlines()[0] if str(exc) else type(exc).__name__]
                     for c in spec.criteria]
            continue
        ok = np.isfinite(scores) & np.isfinite(true)
        for c, fn in spec.criteria.items():
            rows.append([name, c, float(fn(true[ok], scores[ok])), ""])
    return rows


def _task(args):
    spec, cell_index, rep = args
    return cell_index, rep, _replicate(spec, cell_index, rep)


def _rows_path(out: Path, cell: dict, rep: int) -> Path:
    return out / "replications" / str(cell["name"]) / f"r{rep}.csv"


def _write_rows(path: Path, rows) -> None:
    from ..io import atomic_write

    with atomic_write(path) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["method", "criterion", "value", "error"])
        w.writerows([m, c, "" if v != v else repr(v), e] for m, c, v, e in rows)


def _read_rows(path: Path):
    try:
        with open(path, newline="") as fh:
            body = list(csv.reader(fh))
    except FileNotFoundError:
        return None
    if not body or body[0] != ["method", "criterion", "value", "error"]:
        return None
    return [[m, c, float(v) if v else math.nan, e] for m, c, v, e in body[1:]]


def _run_spec(spec: Spec, out: Path, jobs: int, quiet: bool):
    from ..io import write_json
    from ..progress import progress

    manifest = spec.manifest()
    path = out / "manifest.json"
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError:
            old = None
        if isinstance(old, dict) and "code" not in old:   # a folder of a version that kept no digests
            old["code"] = manifest["code"]
        if isinstance(old, dict) and str(old.get("generate", "")).startswith("__main__.") and \
                old["generate"].partition(".")[2] == manifest["generate"].partition(".")[2]:
            old["generate"] = manifest["generate"]   # (a script's generator, recorded before it was named by its file)
        if old is not None and old != manifest:
            raise ArgumentError("out", f"{out} holds another study (its manifest.json differs: "
                                       f"{_first_difference(old, manifest)}); give another folder", out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(path, manifest)
    tasks = [(spec, k, r) for k in range(len(spec.cells)) for r in range(spec.replications)
             if _read_rows(_rows_path(out, spec.cells[k], r)) is None]
    bar = progress(total=len(tasks), desc=f"study ({len(spec.cells) * spec.replications - len(tasks)} resumed)",
                   quiet=quiet, unit="set")
    try:
        if jobs > 1 and len(tasks) > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            ctx = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
            with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
                futures = [pool.submit(_task, t) for t in tasks]
                for fut in as_completed(futures):
                    k, r, rows = fut.result()
                    _write_rows(_rows_path(out, spec.cells[k], r), rows)
                    bar.update(1)
        else:
            for t in tasks:
                k, r, rows = _task(t)
                _write_rows(_rows_path(out, spec.cells[k], r), rows)
                bar.update(1)
    finally:
        bar.close()
    return len(tasks)


# ---------------------------------------------------------------------------------------
# summarise
# ---------------------------------------------------------------------------------------
def _summarise(spec: Spec, out: Path):
    """(replications, summary, paired) DataFrames of the rows in ``out``."""
    import pandas as pd

    from .statistics import mean_mcse

    records = []
    for k, cell in enumerate(spec.cells):
        for r in range(spec.replications):
            rows = _read_rows(_rows_path(out, cell, r))
            if rows is None:
                raise InputError(f"replication {r} of {cell['name']} is missing or damaged; run again", out)
            records += [{"cell": cell["name"], "replication": r, "method": m, "criterion": c, "value": v,
                         "error": e} for m, c, v, e in rows]
    reps = pd.DataFrame.from_records(records, columns=["cell", "replication", "method", "criterion", "value", "error"])
    order = {"cell": [c["name"] for c in spec.cells], "method": [n for n, _ in spec.methods],
             "criterion": list(spec.criteria)}
    summary = []
    for (cell, method, crit), g in reps.groupby(["cell", "method", "criterion"], sort=False):
        mean, mcse, n = mean_mcse(g["value"].to_numpy())
        summary.append({"cell": cell, "method": method, "criterion": crit, "replications": n,
                        "failed": int(len(g) - n), "mean": mean, "sd": mcse * math.sqrt(n), "mcse": mcse})
    summary = _ordered(pd.DataFrame(summary), order)
    ref = spec.reference or spec.methods[0][0]
    paired = []
    wide = reps.pivot_table(index=["cell", "criterion", "replication"], columns="method", values="value",
                            aggfunc="first", dropna=False)
    for (cell, crit), g in wide.groupby(level=["cell", "criterion"], sort=False):
        for method, _ in spec.methods:
            if method == ref:
                continue
            mean, se, n = mean_mcse((g[method] - g[ref]).to_numpy(dtype=np.float64))
            q = _t_quantile(n)
            paired.append({"cell": cell, "criterion": crit, "method": method, "reference": ref, "pairs": n,
                           "difference": mean, "mcse": se, "lower": mean - q * se, "upper": mean + q * se})
    paired = _ordered(pd.DataFrame(paired), order)
    return reps, summary, paired


def _t_quantile(n: int) -> float:
    """The two-sided 95% quantile of Student's t with ``n - 1`` degrees of freedom (nan under 2 pairs): the
    paired differences' intervals, which decide ties, were the normal's (1.96) whatever ``n``, a third too
    narrow at 5 replications (2.78)."""
    if n < 2:
        return math.nan
    from scipy.stats import t

    return float(t.ppf(0.975, n - 1))


def _ordered(df, order):
    if df.empty:
        return df
    import pandas as pd

    keys = [k for k in ("cell", "criterion", "method") if k in df.columns]
    for k in keys:
        df[k] = pd.Categorical(df[k], categories=list(dict.fromkeys(order[k])), ordered=True)
    df = df.sort_values(keys, kind="stable").reset_index(drop=True)
    for k in keys:
        df[k] = df[k].astype(str)
    return df


# ---------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------
class StudyResults:
    """A study's results: ``summary`` (per cell, method and criterion: replications, mean, sd and its
    Monte Carlo SE), ``paired`` (each method against the reference, per cell and criterion: the mean
    paired difference with its MCSE and 95% interval, Student's t with pairs - 1 df) and ``replications`` (every row), DataFrames;
    ``folder`` the run folder they were read from.

    Attributes
    ----------
    summary, paired, replications : pandas.DataFrame
    folder : Path
    computed : int
        Replications (a spec) or chunks (a config) computed by this call; 0: all from the cache.

    Examples
    --------
    >>> res = rc.study.run(spec, out="runs/mine")          # doctest: +SKIP
    >>> res.summary.query("criterion == 'rmse'")            # doctest: +SKIP
    >>> res.to_frame("paired")                              # doctest: +SKIP

    ``to_frame(table)`` gives the same tables by name, as the other results objects' ``to_frame`` do;
    ``to_dict()`` them as plain Python (JSON-ready) and ``summary_text()`` as text (``summary`` is the
    table, as SimDesign's result is a data frame).
    """

    TABLES = ("summary", "paired", "replications")

    def __init__(self, summary, paired, replications, folder, computed: int, kind: str):
        self.summary = summary
        self.paired = paired
        self.replications = replications
        self.folder = Path(folder)
        self.computed = int(computed)
        self.kind = kind

    def to_frame(self, table: str = "summary"):
        """The ``table`` (``"summary"``, ``"paired"`` or ``"replications"``) as a pandas DataFrame (a copy:
        editing it leaves the results as they are)."""
        if table not in self.TABLES:
            raise ArgumentError("table", f"must be one of {', '.join(self.TABLES)}, not {table!r}")
        return getattr(self, table).copy()

    def to_dict(self, replications: bool = False) -> dict:
        """The results as plain Python (JSON-ready): the kind, folder and replications computed, the ``summary``
        and ``paired`` tables as lists of records (nan as None) and, with ``replications``, every row."""
        def records(df):
            return [{k: (None if isinstance(v, float) and not math.isfinite(v) else
                         v.item() if hasattr(v, "item") else v) for k, v in row.items()}
                    for row in df.to_dict(orient="records")]

        out = {"kind": self.kind, "folder": str(self.folder), "computed": self.computed,
               "summary": records(self.summary), "paired": records(self.paired)}
        if replications:
            out["replications"] = records(self.replications)
        return out

    def summary_text(self, digits: int = 4) -> str:
        """The summary and the paired differences as text tables (what ``ratercal report`` puts first):
        per cell, criterion and method the mean, sd and Monte Carlo SE over the replications, then each
        method against the reference with its 95% interval (``summary`` itself is the DataFrame)."""
        def table(df, cols):
            if df.empty:
                return "(none)"
            return df[[c for c in cols if c in df.columns]].round(digits).to_string(index=False)

        if self.kind == "config":   # (its tables are wide, a column a criterion, and broken down by each factor's
            # levels: the fixed columns below left 'method' and 'failed' of them, over ~28,000 lines)
            overall = self.summary[self.summary["facet"] == "all"] if "facet" in self.summary else self.summary
            pairs = self.paired
            if {"facet", "criterion"} <= set(pairs.columns):
                pairs = pairs[(pairs["facet"] == "all") & (pairs["criterion"] == "rmse")]
            return "\n".join([
                f"{self!r}", "", "Summary over all the cells (mean and Monte Carlo SE over the replications; the "
                "breakdown by each factor's levels is in .summary):",
                table(overall, ["scope", "variant", "shrinkage", "method", "n", "failed", "rmse", "rmse_mcse", "r",
                                "r_mcse", "bias", "bias_mcse", "accuracy", "accuracy_mcse", "rank", "p_best"]),
                "", "Paired differences of RMSE over all the cells (95% interval; every criterion and level in .paired):",
                table(pairs, ["scope", "method_a", "method_b", "n", "mean_diff", "mcse", "ci_low", "ci_high"])])
        return "\n".join([f"{self!r}", "", "Summary (mean, sd and Monte Carlo SE over the replications):",
                          table(self.summary, ["cell", "criterion", "method", "replications", "failed", "mean", "sd",
                                               "mcse"]),
                          "", "Paired differences against the reference (95% interval, t with pairs - 1 df):",
                          table(self.paired, ["cell", "criterion", "method", "reference", "pairs", "difference",
                                              "mcse", "lower", "upper"])])

    def __repr__(self) -> str:
        if "cell" in self.summary:
            over = f"over {self.summary['cell'].nunique()} cell(s)"
        else:   # a config's: its rows are scopes x factor levels, not cells (it said "over 2 cell(s)" of 32)
            over = f"in {self.summary['scope'].nunique() if 'scope' in self.summary else 1} scope(s)"
        return (f"<StudyResults ({self.kind}): {len(self.summary)} summary rows {over}, "
                f"{len(self.paired)} paired rows; folder {self.folder}; see .summary, .paired, .replications, "
                f".to_frame(table), .to_dict(), .summary_text()>")

    def _repr_html_(self) -> str:
        import html

        head = html.escape(repr(self))
        return f"<div><p>{head}</p>{self.summary.head(20).to_html(index=False)}</div>"


def run(config_or_spec, replications: int | None = None, jobs: int = 1, scheduler=None, out=None,
        quiet: bool = True) -> StudyResults:
    """Run a simulation study from Python and return its results as DataFrames.

    Parameters
    ----------
    config_or_spec : str, os.PathLike, dict or Spec
        A study config (a YAML file as ``ratercal montecarlo`` takes, or its mapping as a dict) or a
        :class:`Spec` with your own generator, methods and criteria.
    replications : int, optional
        Replications of each cell (default: the config's or the spec's).
    jobs : int
        Local processes; the results do not depend on it.
    scheduler : str, optional
        A config's study only: the address of a Dask scheduler to run the chunks on.
    out : str or os.PathLike, optional
        The run folder, which is the cache: what it holds is not computed again (default: a new
        temporary folder, removed when the interpreter ends).  A file there is an error.
    quiet : bool
        No progress bar.

    Returns
    -------
    StudyResults
        ``summary``, ``paired`` and ``replications`` as DataFrames, ``folder`` the run folder.

    Examples
    --------
    >>> import ratercal_cli as rc                                                          # doctest: +SKIP
    >>> rc.study.run("configs/corrected.yaml", replications=10, out="runs/c").summary      # doctest: +SKIP
    """
    jobs = check_count(jobs, "jobs", minimum=1)
    if replications is not None:
        replications = check_count(replications, "replications", minimum=1)
    if isinstance(config_or_spec, Spec):
        if scheduler is not None:
            raise ArgumentError("scheduler", "runs a config's study; a Spec runs in local processes (jobs)")
        spec = config_or_spec
        if replications is not None and replications != spec.replications:
            from dataclasses import replace

            spec = replace(spec, replications=replications)

        def study(folder):
            computed = _run_spec(spec, folder, jobs, quiet)
            reps, summary, paired = _summarise(spec, folder)
            return StudyResults(summary, paired, reps, folder, computed, "spec")
    else:
        cfg = _parse_study_config(config_or_spec)

        def study(folder):
            return _run_config(cfg, replications, jobs, scheduler, folder, quiet)
    if out is not None:
        blocked = next((p for p in (Path(out), *Path(out).parents) if p.exists() and not p.is_dir()), None)
        if blocked is not None:   # (a FileExistsError or NotADirectoryError traceback, a researcher's)
            raise ArgumentError("out", f"{'is' if blocked == Path(out) else f'is under {blocked},'} a file, not a "
                                       f"folder: {out}")
        return study(Path(out))
    # a folder of our own: its name is in the results only, so a call that fails leaves none behind
    folder = Path(tempfile.mkdtemp(prefix="ratercal-study-"))
    try:
        result = study(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    # removed when the interpreter ends (the results name it, to be read while it runs; a researcher's machine held
    # 315 of them): give out= to keep one
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return result


def _parse_study_config(config):
    """A config file's or a dict's study (:class:`.config.Config`), checked before any folder is made."""
    from ..config import load_config, parse_config

    if isinstance(config, dict):
        import yaml

        text = yaml.safe_dump(config, sort_keys=False)
        return parse_config(text, source="<dict>")
    if isinstance(config, (str, os.PathLike)):
        return load_config(config)
    raise ArgumentError("config_or_spec", f"expected a config file, a config dict or a Spec, not "
                                          f"{type(config).__name__}")


def _run_config(cfg, replications, jobs, scheduler, folder: Path, quiet: bool) -> StudyResults:
    import pandas as pd

    from .run import MonteCarloRun

    mc = MonteCarloRun(cfg, folder, replications=replications, jobs=1 if scheduler else jobs)
    with mc.lock():
        computed, _ = mc.run(jobs=jobs, scheduler=scheduler, quiet=quiet)
        mc.summarise()
    root = folder / "montecarlo"

    def read(name):
        return pd.read_csv(io.StringIO((root / name).read_text(encoding="utf-8")))

    return StudyResults(read("summary.csv"), read("paired.csv"), read("replications.csv"), folder, computed,
                        "config")

