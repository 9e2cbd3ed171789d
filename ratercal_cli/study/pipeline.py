"""A small make: stages that declare what they read and write, run only when stale.

Every stage of every data set writes its files under ``RUN/<code>/<stage>/`` (the
study-wide stages under ``RUN/<stage>/``) and a ``manifest.json`` recording the
ratercal version, the stage's parameters (the part of the config it uses, its
seeds), and the SHA-256 of every file it read and wrote.  A stage is redone only
when one of those changed or an output is missing; outputs are written under a
temporary name and renamed, and the manifest is written last, so a run killed at
any moment resumes where it stopped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import __version__
from ..io import sha256_file, write_json
from ..parallel import default_jobs, ordered_map

MANIFEST = "manifest.json"


class StageRegistry:
    """The stage classes by name (``STAGES["obsgen"]``), each from the module the table names,
    imported when first asked for.  How a stage names one that depends on it without importing
    its module: PARGEN of a chain's next set depends on OBSGEN of the set before, whose module
    imports PARGEN's."""

    def __init__(self, modules: dict):
        self._modules = dict(modules)   # name -> (module relative to this package, class name)

    def __getitem__(self, name: str):
        import importlib

        module, cls = self._modules[name]
        return getattr(importlib.import_module(module, __package__), cls)

    def names(self) -> tuple:
        return tuple(self._modules)


class Stage:
    """One step for one data set (``cell`` is None for study-wide stages)."""

    name = "?"
    #: A further dimension of the stage's outputs (the equate stage's variant): its files go
    #: to ``RUN/<code>/<name>/<part>/``.
    part = None

    def __init__(self, run, cell=None):
        self.run = run
        self.cell = cell

    # -- declared by subclasses --------------------------------------------------
    def deps(self) -> list:
        """Stages whose outputs this one reads."""
        return []

    def params(self) -> dict:
        """The config values (and seeds) this stage's outputs depend on."""
        return {}

    def execute(self) -> list:
        """Do the work, write the outputs; return their paths."""
        raise NotImplementedError

    # -- machinery ---------------------------------------------------------------
    @property
    def key(self):
        return (self.name, self.cell.code if self.cell is not None else None, self.part)

    @property
    def folder(self) -> Path:
        base = self.run.root if self.cell is None else self.run.root / self.cell.code
        return base / self.name if self.part is None else base / self.name / self.part

    @property
    def manifest_path(self) -> Path:
        return self.folder / MANIFEST

    def input_hashes(self) -> dict:
        """Outputs of the dependencies, as their manifests recorded them."""
        out = {}
        for dep in self.deps():
            out.update(dep.recorded_outputs())
        return dict(sorted(out.items()))

    def recorded_outputs(self) -> dict:
        return (read_manifest(self.manifest_path) or {}).get("outputs", {})

    def _rel(self, path) -> str:
        path, root = Path(path), self.run.root
        if ".." not in path.parts:
            try:  # a stage's outputs are built from the run's root: no need to ask the file system
                return path.relative_to(root).as_posix()
            except ValueError:
                pass
        return path.resolve().relative_to(root.resolve()).as_posix()

    def is_fresh(self) -> bool:
        man = read_manifest(self.manifest_path)
        if man is None:
            return False
        if man.get("version") != __version__ or man.get("params") != _jsonable(self.params()):
            return False
        if man.get("inputs") != self.input_hashes():
            return False
        for rel, digest in man.get("outputs", {}).items():
            try:
                if sha256_file(self.run.root / rel) != digest:
                    return False
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return False
        return True

    def write_manifest(self, outputs):
        """Write the manifest; returns what :func:`read_manifest` keeps of it (for the process
        that forked this one, see :func:`_execute_and_record`)."""
        man = {
            "stage": self.name,
            "set": self.cell.code if self.cell is not None else None,
            **({"part": self.part} if self.part is not None else {}),
            "version": __version__,
            "params": _jsonable(self.params()),
            "inputs": self.input_hashes(),
            "outputs": {self._rel(p): sha256_file(p) for p in sorted(map(str, outputs))},
        }
        write_json(self.manifest_path, man)
        return _remember(self.manifest_path, man)


#: Every stage of the study, in pipeline order.
STAGES = StageRegistry({"rater": (".rater", "RaterStage"), "pargen": (".pargen", "PargenStage"),
                        "truegen": (".truegen", "TruegenStage"), "obsgen": (".obsgen", "ObsgenStage"),
                        "equate": (".equate", "EquateStage"), "score": (".score", "ScoreStage")})


#: Manifests read by this process: path -> ((mtime_ns, size, inode), contents).  A stage's
#: manifest is read by its own freshness check and by every stage that depends on it; the
#: file's status says whether the copy is still the file's.
_manifests: dict = {}


def _status(key):
    """``(mtime_ns, size, inode)`` of the manifest at ``key``: whether a kept copy is still the
    file's; None (and the copy forgotten) when it cannot be stat'ed."""
    try:
        st = os.stat(key)
    except OSError:
        _manifests.pop(key, None)
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def read_manifest(path):
    """The manifest at ``path`` as a dict, None when it is missing or not a JSON object (a
    stage without a valid manifest is stale).  Read once per process while the file's
    modification time, size and inode stay the same."""
    key = str(path)
    status = _status(key)
    if status is None:
        return None
    known = _manifests.get(key)
    if known is not None and known[0] == status:
        return known[1]
    try:
        with open(key, "rb") as fh:
            man = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    if not isinstance(man, dict):
        return None
    _manifests[key] = (status, man)
    return man


def _remember(path, man):
    """Keep ``man``, just written to ``path``, as :func:`read_manifest` would read it; returns
    ``(path, status, man)`` for :func:`remember` in another process (None if it cannot stat)."""
    key = str(path)
    status = _status(key)
    if status is None:
        return None
    _manifests[key] = (status, man)
    return key, status, man


def remember(entries) -> None:
    """Keep the manifests a worker process wrote (its :func:`_remember` results), so this process
    does not read them again (the run manifest gathers every stage's outputs)."""
    for entry in entries:
        if entry is not None:
            _manifests[entry[0]] = entry[1:]


def _jsonable(obj):
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def first_stale(stage: Stage, seen: dict | None = None):
    """The first stage of ``stage``'s chain, dependencies first, that :meth:`Stage.is_fresh` finds out of date
    (its config values, its inputs or its outputs changed since it ran), or None: what :class:`Runner` would
    redo, found without doing it."""
    seen = {} if seen is None else seen
    if stage.key in seen:
        return seen[stage.key]
    found = None
    for dep in stage.deps():
        found = first_stale(dep, seen)
        if found is not None:
            break
    if found is None and not stage.is_fresh():
        found = stage
    seen[stage.key] = found
    return found


class Runner:
    """Brings stages up to date, dependencies first, each at most once."""

    def __init__(self, force: bool = False):
        self.force = force
        self.done = {}
        self.ran = []
        self.written = []   # what the manifests written here are (a worker returns them)

    def ensure(self, stage: Stage) -> bool:
        """Make ``stage`` fresh; return True if it (re)ran."""
        if stage.key in self.done:
            return self.done[stage.key]
        for dep in stage.deps():
            self.ensure(dep)
        if self.force or not stage.is_fresh():
            _forget(stage)
            self._record(stage, stage.execute())
            return True
        self.done[stage.key] = False
        return False

    def _record(self, stage, outputs) -> None:
        """The manifest is written last: a stage without one is redone."""
        self.written.append(stage.write_manifest(outputs))
        self.done[stage.key] = True
        self.ran.append(stage.key)

    def ensure_many(self, stages, jobs=None, progress=None) -> None:
        """Make every stage fresh; the stale ones run in ``jobs`` processes (:mod:`ratercal_cli.parallel`).

        Dependencies are brought up to date first, in order, in this process; the
        stages themselves must not depend on each other.  Each writes only its own
        files and then its manifest (in the process that ran it; a manifest holds only the
        stage's parameters and the hashes of what it read and wrote), so the files are the
        same whatever ``jobs`` is.  ``jobs=None``: one per core (at most 2) when at least
        four stages are stale, else 1.  ``progress`` wraps the iterable of results.
        """
        stages = [s for s in stages if s.key not in self.done]
        for stage in stages:
            for dep in stage.deps():
                self.ensure(dep)
        stale = [s for s in stages if self.force or not s.is_fresh()]
        for stage in stages:
            if stage not in stale:
                self.done[stage.key] = False
        if jobs is None:
            jobs = default_jobs(len(stale))
        for stage in stale:
            _forget(stage)
        for key, entry in ordered_map(_execute_and_record, stale, jobs, progress):
            self.done[key] = True
            self.ran.append(key)
            remember([entry])

    def ensure_sequences(self, sequences, jobs=None, bar=None) -> None:
        """Make the stages of every sequence fresh, in order within a sequence; the
        sequences run in ``jobs`` processes (:mod:`ratercal_cli.parallel`).

        A sequence's stages may depend on the ones before them (a chain of the faithful
        generator: each set starts from the RND state the set before it left), never on a
        stale stage of another sequence; what they share (the design) the caller brings up
        to date first.  Each stage writes only its own files and manifest, so the files are
        the same whatever ``jobs`` is.  ``jobs=None``: one per core (at most 2) when there
        are at least four stages, else 1.  ``bar.update(n)`` counts the stages done.
        """
        sequences = [list(s) for s in sequences if s]
        if jobs is None:
            jobs = default_jobs(sum(map(len, sequences)))
        jobs = min(jobs, len(sequences))
        if jobs < 2:
            for seq in sequences:
                for stage in seq:
                    self.ensure(stage)
                    if bar is not None:
                        bar.update(1)
            return
        # longest first, each to the emptiest process (the 1990 design: 15 sets and 17)
        buckets = [[] for _ in range(jobs)]
        for seq in sorted(sequences, key=len, reverse=True):
            min(buckets, key=lambda b: sum(map(len, b))).append(seq)
        for done, ran, written, n in ordered_map(_ensure_bucket, [(self, b) for b in buckets], jobs):
            self.done.update(done)
            self.ran.extend(ran)
            remember(written)
            if bar is not None:
                bar.update(n)


def _ensure_bucket(runner_and_bucket):
    """In a worker process: ensure the sequences of a bucket; what this process ran."""
    runner, bucket = runner_and_bucket
    runner.ran, runner.written = [], []
    for seq in bucket:
        for stage in seq:
            runner.ensure(stage)
    return runner.done, runner.ran, runner.written, sum(map(len, bucket))


def _forget(stage) -> None:
    """Drop a stale stage's manifest before redoing it (a kill mid-way then redoes it)."""
    if stage.manifest_path.exists():
        stage.manifest_path.unlink()


def _execute_and_record(stage):
    """Run one stage (in a worker process) and write its manifest, last; the stage's key and
    the manifest as written (:func:`remember`)."""
    return stage.key, stage.write_manifest(stage.execute())
