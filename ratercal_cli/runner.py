"""Monte Carlo replications of a study: tasks in chunks, executors, resume.

A *replication* of a cell is one data set made by
:func:`ratercal_cli.generators.modern.generate_set` (its own SeedSequence, so any one
replication can be made again on its own) and adjusted by every method in every
variant of the config.  Each (replication, variant, method) gives one row of
criteria against the known true scores (:data:`COLUMNS`).

Work is cut into *chunks*: ``chunk_size`` consecutive replications of one cell.
A chunk's rows are a pure function of (config, cell, replication range), computed
by :func:`run_chunk` wherever it runs (this process, a process pool for
``--jobs N``, or the workers of a Dask cluster for ``--scheduler ADDR``) and
written by *this* process, atomically, to
``RUN/montecarlo/chunks/<cell>/r<start>-<stop>.csv``.  A chunk file that exists and
is valid (header naming the study digest, cell and range; one block of rows per
replication; closing ``# end`` line) is never computed again, so a run killed at
any moment resumes where it stopped.  The merge reads chunks in config order
(cells, then replications), never in completion order, so the merged files and
the summaries are byte-identical whatever the executor and the number of workers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import criteria
from .design import Cell
from .errors import InputError, RatercalError
from .generators.modern import generate_set
from .io import atomic_write, write_json
from .methods.apply import apply_methods
from .parallel import process_pool
from .progress import progress
from .ratings import Ratings
from .vocabulary import REPLICABLE_GENERATORS

#: Version of the chunk file layout: part of the digest, so old chunks are not reused.
CHUNK_FORMAT = 1
#: Per-replication criteria, one row per (set, replication, variant, method).
COLUMNS = ("set", "replication", "variant", "method", "rmse", "r", "maxdiff", "bias", "accuracy",
           "pass_adjusted", "pass_true", "error")
#: Numeric criteria among :data:`COLUMNS`.
CRITERIA = criteria.SET_CRITERIA
DEFAULT_CHUNK_SIZE = 25


#: What may change without invalidating a run's chunks: the command line and the report.
_NOT_IN_DIGEST = ("cli.py", "commands", "report")


def code_files(root=None) -> list:
    """The package sources a chunk's rows may depend on, as sorted relative paths: every ``.py``
    under ``ratercal_cli/`` except ``cli.py``, ``commands/`` and ``report/``.  All of them, not
    the modules a method imports at load time: imports inside functions (the registry, quality
    checks, fit statistics, this runner) count too."""
    root = Path(root) if root is not None else Path(__file__).resolve().parent
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")
                  if p.relative_to(root).parts[0] not in _NOT_IN_DIGEST and "__pycache__" not in p.parts)


def code_digest(root=None) -> str:
    """Hash of :func:`code_files` (each path and its bytes): a resumed run refuses to mix
    chunks from two versions of the code."""
    root = Path(root) if root is not None else Path(__file__).resolve().parent
    h = hashlib.sha256()
    for rel in code_files(root):
        h.update(rel.encode() + b"\0" + (root / rel).read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _num(x) -> str:
    """A float written so that it reads back as the same double ('' for nan)."""
    x = float(x)
    return repr(x) if math.isfinite(x) else ("" if math.isnan(x) else repr(x))


# ----------------------------------------------------------------------------- the study spec

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
    steps: dict = field(default_factory=dict)     # max_score -> (raters, M) list
    linear: dict = field(default_factory=dict)

    @classmethod
    def from_config(cls, cfg, variants=None, methods=None) -> "StudySpec":
        """Raises :class:`InputError` for a generator the replications cannot use (basic1990)."""
        if cfg.generator not in REPLICABLE_GENERATORS:
            raise InputError(f"montecarlo replicates the modern generators ({', '.join(REPLICABLE_GENERATORS)}), not "
                             f"'{cfg.generator}'; the 1990 sets are made by 'ratercal simulate'",
                             cfg.source, field="generator")
        return cls(generator=cfg.generator, seed=int(cfg.seed), true_score=cfg.true_score, cut=float(cfg.cut),
                   methods=tuple(methods or cfg.methods), variants=tuple(variants or cfg.variants),
                   n_raters=int(cfg.n_raters), steps={int(m): np.asarray(s, dtype=np.float64).tolist()
                                                      for m, s in cfg.steps.items()},
                   linear=dict(cfg.linear))

    def digest(self) -> str:
        """Hash of everything a chunk's rows depend on (not the number of replications)."""
        d = {"format": CHUNK_FORMAT, "generator": self.generator, "seed": self.seed,
             "true_score": self.true_score, "cut": self.cut, "methods": list(self.methods),
             "variants": list(self.variants), "n_raters": self.n_raters,
             "steps": {str(k): v for k, v in sorted(self.steps.items())}, "linear": self.linear}
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    def steps_for(self, max_score):
        return None if self.generator == "linear" else np.asarray(self.steps[int(max_score)], dtype=np.float64)


# ----------------------------------------------------------------------------- one replication

@dataclass
class Replication:
    """One data set and what every method made of it (kept only on request)."""

    cell: Cell
    replication: int
    generated: object            # GeneratedSet
    ratings: Ratings
    adjusted: dict               # (variant, method) -> Adjusted
    rows: list                   # COLUMNS rows as strings


def replicate(spec: StudySpec, cell: Cell, replication: int, keep: bool = False, timings=None):
    """Make replication ``replication`` of ``cell`` and score every (variant, method).

    Returns the rows (lists of strings in :data:`COLUMNS` order); with ``keep`` a
    :class:`Replication` holding the data as well.  Methods needing two raters are
    skipped on one-rater sets (no row, as the 1990 study skipped them); a method
    that fails on this data set gives a row with empty criteria and the error.
    ``timings``: a dict to which the seconds of the generation (key ``"generate"``)
    and of each (variant, method) fit are added (the benchmark's profile).
    """
    t0 = time.perf_counter() if timings is not None else 0.0
    gen = generate_set(cell, spec.generator, spec.seed, replication, spec.steps_for(cell.max_score),
                       spec.linear or None, spec.true_score)
    o = gen.observed
    k = o.kept
    ratings = Ratings(o.paper[k], o.rater[k], o.score[k], cell.max_score, cell.papers, spec.n_raters)
    true = gen.true_score
    cut = criteria.cut_for_scale(spec.cut, cell.max_score)
    if timings is not None:
        timings["generate"] = timings.get("generate", 0.0) + time.perf_counter() - t0
    rows, adjusted = [], {}
    for variant in spec.variants:
        applied = apply_methods(ratings, spec.methods, variant, timings=timings)
        for code in spec.methods:
            if code in applied.not_applicable:   # as the 1990 study: no row on one-rater sets
                continue
            head = [cell.code, str(replication), variant, code]
            if code in applied.skipped:
                rows.append(head + [""] * len(CRITERIA) + [applied.skipped[code].replace(",", ";")])
                continue
            adj = applied.adjusted[code]
            if keep:
                adjusted[(variant, code)] = adj
            c = criteria.score_set(adj.paper, true, cut)
            rows.append(head + [_num(c[name]) for name in CRITERIA] + [""])
    if keep:
        return Replication(cell, replication, gen, ratings, adjusted, rows)
    return rows


# ----------------------------------------------------------------------------- chunks

@dataclass(frozen=True)
class Chunk:
    """Replications ``start <= k < stop`` of one cell."""

    cell: Cell
    start: int
    stop: int

    @property
    def relpath(self) -> str:
        return f"{self.cell.code}/r{self.start:06d}-{self.stop:06d}.csv"

    @property
    def size(self) -> int:
        return self.stop - self.start


def chunk_header(spec_digest: str, chunk: Chunk) -> str:
    return f"# ratercal montecarlo chunk study={spec_digest} set={chunk.cell.code} reps={chunk.start}-{chunk.stop}\n"


def run_chunk(spec: StudySpec, cell: Cell, start: int, stop: int) -> str:
    """The rows of replications ``start..stop-1`` of ``cell`` as CSV lines (runs on a worker)."""
    from .replicate_batch import chunk_rows   # the same rows as replicate(), as one batch

    return "".join(",".join(r) + "\n" for rows in chunk_rows(spec, cell, start, stop) for r in rows)


def chunk_text(spec_digest: str, chunk: Chunk, body: str) -> str:
    return chunk_header(spec_digest, chunk) + ",".join(COLUMNS) + "\n" + body + "# end\n"


def read_chunk(path, spec_digest: str, chunk: Chunk):
    """The body lines of a valid chunk file, or None if missing, stale or damaged."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    head = chunk_header(spec_digest, chunk) + ",".join(COLUMNS) + "\n"
    if not text.startswith(head) or not text.endswith("# end\n"):
        return None
    body = text[len(head):-len("# end\n")]
    lines = body.splitlines(keepends=True)
    reps = set()
    for line in lines:
        parts = line.rstrip("\n").split(",")
        if len(parts) != len(COLUMNS) or parts[0] != chunk.cell.code:
            return None
        reps.add(parts[1])
    if reps != {str(k) for k in range(chunk.start, chunk.stop)}:
        return None
    return lines


# ----------------------------------------------------------------------------- executors

def _serial(tasks, spec):
    for ch in tasks:
        yield ch, run_chunk(spec, ch.cell, ch.start, ch.stop)


def _processes(tasks, spec, jobs):
    from concurrent.futures import as_completed

    pool = process_pool(jobs)
    futures = {pool.submit(run_chunk, spec, ch.cell, ch.start, ch.stop): ch for ch in tasks}
    with pool:
        try:
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        finally:
            for fut in futures:
                fut.cancel()


def _dask(tasks, spec, scheduler):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise RatercalError("--scheduler needs the 'distributed' package (pip install 'ratercal[dask]')") from None
    client = scheduler if hasattr(scheduler, "submit") else None
    own = client is None
    if own:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, ValueError, TypeError) as exc:   # unreachable; not an address ("garbage")
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RatercalError(f"--scheduler: cannot reach the Dask scheduler at {scheduler!r}: {msg}") from None
    try:
        remote_spec = client.scatter(spec, broadcast=True)
        futures = {}
        for ch in tasks:
            key = f"ratercal-chunk-{spec.digest()}-{ch.cell.code}-{ch.start}-{ch.stop}"
            futures[client.submit(run_chunk, remote_spec, ch.cell, ch.start, ch.stop, key=key, pure=False)] = ch
        for fut, body in as_completed(list(futures), with_results=True):
            yield futures[fut], body
    finally:
        if own:
            client.close()


# ----------------------------------------------------------------------------- a run

class MonteCarloRun:
    """The replications of a config under ``RUN/montecarlo/``.

    ``replications``: how many per cell (default: the config's); ``variants`` and
    ``methods`` narrow the config's.  ``chunk_size`` replications make one task
    and one file.
    """

    def __init__(self, config, out, replications=None, chunk_size=DEFAULT_CHUNK_SIZE, variants=None,
                 methods=None):
        self.config = config
        self.root = Path(out) / "montecarlo"
        self.replications = int(replications or config.replications)
        if self.replications < 1:
            raise InputError("must be 1 or more", field="--replications")
        if chunk_size < 1:
            raise InputError("must be 1 or more", field="chunk_size")
        self.chunk_size = int(chunk_size)
        self.spec = StudySpec.from_config(config, variants, methods)
        self.digest = self.spec.digest()
        self._locked = 0

    @contextlib.contextmanager
    def lock(self):
        """Hold ``RUN/montecarlo/.lock`` exclusively (``fcntl.flock``) for the block, so two runs
        into one folder cannot delete each other's temporary files or interleave their
        chunks; a second run gets :class:`RatercalError`.  Re-entrant within this object; the
        kernel drops the lock when the process dies, so a killed run leaves no stale lock."""
        if self._locked:
            self._locked += 1
            try:
                yield self
            finally:
                self._locked -= 1
            return
        import fcntl

        self.root.mkdir(parents=True, exist_ok=True)
        fh = open(self.root / ".lock", "a")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise RatercalError(f"another montecarlo run is using {self.root.parent}") from None
        self._locked = 1
        try:
            yield self
        finally:
            self._locked = 0
            fh.close()      # closing the file releases the lock

    @property
    def chunk_dir(self) -> Path:
        return self.root / "chunks"

    def chunks(self):
        """Every chunk, in task order: replication block by block, cells in config order."""
        out = []
        for start in range(0, self.replications, self.chunk_size):
            stop = min(start + self.chunk_size, self.replications)
            out.extend(Chunk(c, start, stop) for c in self.config.cells)
        return out

    def _check_manifest(self):
        path = self.root / "manifest.json"
        code = code_digest()
        if path.exists():
            try:
                old = json.loads(path.read_text())
            except ValueError:
                old = {}
            if old.get("study") not in (None, self.digest):
                raise InputError(f"{self.root} holds another study (config {old.get('config')}); "
                                 "use a new --out folder", path)
            if old.get("code") not in (None, code) and any(self.chunk_dir.glob("*/*.csv")):
                raise InputError(f"the methods' code changed since this run began (code {old['code']}, now "
                                 f"{code}): its chunks would mix two versions; use a new --out folder", path)
        write_json(path, {"study": self.digest, "code": code, "config": self.config.source, "name": self.config.name,
                          "generator": self.spec.generator, "true_score": self.spec.true_score,
                          "seed": self.spec.seed, "variants": list(self.spec.variants),
                          "methods": list(self.spec.methods), "cut": self.spec.cut,
                          "chunk_size": self.chunk_size})

    def pending(self):
        """Chunks without a valid file."""
        return [ch for ch in self.chunks()
                if read_chunk(self.chunk_dir / ch.relpath, self.digest, ch) is None]

    def run(self, jobs=1, scheduler=None, quiet=False):
        """Compute every pending chunk, holding :meth:`lock`; returns (chunks computed, chunks
        already there)."""
        with self.lock():
            return self._run(jobs, scheduler, quiet)

    def _run(self, jobs, scheduler, quiet):
        self._check_manifest()
        for tmp in self.chunk_dir.glob("*/.*.tmp"):   # left by a killed atomic write
            tmp.unlink(missing_ok=True)
        todo = self.pending()
        n_all = len(self.chunks())
        if not todo:
            return 0, n_all
        if scheduler is not None:
            results = _dask(todo, self.spec, scheduler)
        elif jobs and jobs > 1:
            results = _processes(todo, self.spec, min(jobs, len(todo)))
        else:
            results = _serial(todo, self.spec)
        # one unit: one replication of one cell (a data set); tqdm shows the rate and time left
        bar = progress(total=sum(ch.size for ch in todo), desc=f"montecarlo ({n_all - len(todo)} chunks resumed)",
                       quiet=quiet, unit="set")
        done = 0
        try:
            for ch, body in results:
                with atomic_write(self.chunk_dir / ch.relpath) as fh:
                    fh.write(chunk_text(self.digest, ch, body))
                bar.update(ch.size)
                done += 1
        finally:
            bar.close()
            if hasattr(results, "close"):
                results.close()
        return done, n_all - len(todo)

    # -- merge ------------------------------------------------------------------------
    def iter_chunk_rows(self):
        """Each chunk's rows (CSV lines), in config order: cells, then replications."""
        by_cell = {}
        for ch in self.chunks():
            by_cell.setdefault(ch.cell.code, []).append(ch)
        for cell in self.config.cells:
            for ch in by_cell[cell.code]:
                lines = read_chunk(self.chunk_dir / ch.relpath, self.digest, ch)
                if lines is None:
                    raise RatercalError(f"chunk {ch.relpath} is missing or damaged; run again to compute it")
                yield lines

    def summarise(self, folder=None, keep_replications=True):
        """Merge the chunks and write the summaries (``summary.csv``, ``paired.csv``,
        ``summary.md``, and ``replications.csv`` unless ``keep_replications`` is false)
        to ``folder`` (default ``RUN/montecarlo``); returns the paths."""
        from .summary import Cube, write_summaries

        folder = Path(folder or self.root)
        cube = Cube.empty(self.config.cells, self.spec.variants, self.spec.methods, self.replications)
        paths = []
        # one chunk in memory at a time: the cube is the only thing that grows with R
        with contextlib.ExitStack() as stack:
            fh = None
            if keep_replications:
                paths.append(folder / "replications.csv")
                fh = stack.enter_context(atomic_write(paths[0]))
                fh.write(",".join(COLUMNS) + "\n")
            for lines in self.iter_chunk_rows():
                if fh is not None:
                    fh.writelines(lines)
                cube.add(parse_rows(lines))
        info = {"name": self.config.name, "generator": self.spec.generator, "true_score": self.spec.true_score,
                "replications": self.replications, "cells": len(self.config.cells), "seed": self.spec.seed,
                "cut": self.spec.cut}
        return paths + write_summaries(folder, cube, info)


def parse_rows(lines):
    """Rows (CSV lines of :data:`COLUMNS`, no header) -> dict of numpy arrays."""
    sets, reps, variants, methods, errors = [], [], [], [], []
    vals = []
    for line in lines:
        p = line.rstrip("\n").split(",")
        sets.append(p[0])
        reps.append(int(p[1]))
        variants.append(p[2])
        methods.append(p[3])
        vals.append([float(x) if x else math.nan for x in p[4:4 + len(CRITERIA)]])
        errors.append(p[-1])
    out = {"set": np.array(sets, dtype=object), "replication": np.array(reps, dtype=np.int64),
           "variant": np.array(variants, dtype=object), "method": np.array(methods, dtype=object),
           "error": np.array(errors, dtype=object)}
    v = np.array(vals, dtype=np.float64).reshape(len(vals), len(CRITERIA))
    for i, c in enumerate(CRITERIA):
        out[c] = v[:, i]
    return out


def run_single(config, out, cell_code, replication, keep_data=False, variants=None, methods=None):
    """Make one replication on its own -> ``RUN/montecarlo/single/<set>_r<K>/``.

    Writes ``criteria.csv`` (the rows the full run has for it) and, with
    ``keep_data``, ``ratings.csv`` (paper, rater, score, kept, order: 1-based ids),
    ``true_scores.csv`` (paper, quality, true) and one
    ``adjusted_<variant>_<METHOD>.csv`` (paper, rater, score, adjusted, paper_adjusted)
    per method.
    """
    cell = config.cell(cell_code)
    if replication < 0:
        raise InputError("must be 0 or more", field="--replication")
    spec = StudySpec.from_config(config, variants, methods)
    rep = replicate(spec, cell, int(replication), keep=True)
    folder = Path(out) / "montecarlo" / "single" / f"{cell.code}_r{int(replication)}"
    with atomic_write(folder / "criteria.csv") as fh:
        fh.write(",".join(COLUMNS) + "\n")
        fh.writelines(",".join(r) + "\n" for r in rep.rows)
    if keep_data:
        o = rep.generated.observed
        with atomic_write(folder / "ratings.csv") as fh:
            fh.write("paper,rater,score,order,kept\n")
            fh.writelines(f"{p + 1},{r + 1},{s},{k},{int(c)}\n"
                          for p, r, s, k, c in zip(o.paper, o.rater, o.score, o.order, o.kept))
        with atomic_write(folder / "true_scores.csv") as fh:
            fh.write("paper,quality,true\n")
            fh.writelines(f"{i + 1},{_num(q)},{_num(t)}\n"
                          for i, (q, t) in enumerate(zip(rep.generated.quality, rep.generated.true_score)))
        rt = rep.ratings
        for (variant, code), adj in rep.adjusted.items():
            with atomic_write(folder / f"adjusted_{variant}_{code}.csv") as fh:
                fh.write("paper,rater,score,adjusted,paper_adjusted\n")
                fh.writelines(f"{p + 1},{r + 1},{s},{_num(a)},{_num(adj.paper[p])}\n"
                              for p, r, s, a in zip(rt.paper, rt.rater, rt.score, adj.rating))
    return folder, rep
