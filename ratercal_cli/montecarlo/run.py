"""A Monte Carlo run folder ``RUN/montecarlo/``: its chunks, computed or resumed, merged in config order,
and one replication on its own (``--cell C --replication K``)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np

from ..config import too_big
from ..errors import ArgumentError, InputError, RatercalError, arg
from ..io import ReentrantFolderLock, atomic_write, folder_lock, write_json
from ..progress import progress
from ..study.files import write_adjusted
from .chunks import Chunk, chunk_text, load_chunk, read_chunk, run_chunk_task
from .executors import run_tasks
from .replicate import replicate
from .spec import COLUMNS, DEFAULT_CHUNK_SIZE, StudySpec, _num, code_digest
from .summary import Cube, write_summaries


class MonteCarloRun:
    """The replications of a config under ``RUN/montecarlo/``.

    ``replications``: how many per cell (default: the config's); ``variants`` and
    ``methods`` narrow the config's.  ``chunk_size`` replications make one task
    and one file; ``jobs``: the local processes :meth:`run` will use (their chunks must fit
    in memory together: checked here, before anything is written).
    """

    def __init__(self, config, out, replications=None, chunk_size=DEFAULT_CHUNK_SIZE, variants=None,
                 methods=None, cells=None, jobs=1):
        self.config = config
        #: the cells run and summarised (``cells``: set codes or labels; default every cell of the config)
        self.cells = list(config.cells) if cells is None else [config.cell(c) for c in cells]
        self.root = Path(out) / "montecarlo"
        self.replications = int(replications or config.replications)
        if self.replications < 1:
            raise ArgumentError("replications", "must be 1 or more")
        if chunk_size < 1:
            raise ArgumentError("chunk_size", "must be 1 or more")
        self.chunk_size = int(chunk_size)
        self.jobs = int(jobs or 1)
        self._check_memory(self.jobs)
        self.spec = StudySpec.from_config(config, variants, methods)
        self.digest = self.spec.digest()
        self._lock = ReentrantFolderLock(self.root.parent)

    def _check_memory(self, jobs: int = 1) -> None:
        """The replications asked for fit this machine's memory (the config's own were checked
        when it was read): the largest chunk, in each of ``jobs`` local processes at once (the
        largest chunks of the cells run, one a process), and the summary of them all."""
        cfg = self.config
        cell = max(cfg.cells, key=lambda c: cfg.set_bytes(c, self.chunk_size))
        msg = too_big(cfg.set_bytes(cell, self.chunk_size), f"a chunk of {self.chunk_size} replications of "
                                                              f"set {cell.code}")
        if msg:
            raise ArgumentError("chunk_size", f"{msg}; give a smaller {arg('chunk_size')}", cfg.source)
        if jobs > 1:
            chunks = sorted((cfg.set_bytes(ch.cell, ch.size) for ch in self.chunks()), reverse=True)[:jobs]
            if len(chunks) > 1:
                msg = too_big(sum(chunks), f"{len(chunks)} processes, each with a chunk of up to {self.chunk_size} "
                                           f"replications (set {cell.code} the largest),")
                if msg:
                    raise ArgumentError("jobs", f"{msg}; give fewer {arg('jobs')} or a smaller "
                                                f"{arg('chunk_size')}", cfg.source)
        msg = too_big(cfg.summary_bytes(self.replications),
                      f"{self.replications:,} replications of {len(cfg.cells)} set(s)")
        if msg:
            raise ArgumentError("replications", msg, cfg.source)

    @contextlib.contextmanager
    def lock(self):
        """Hold the run folder's lock (:func:`~ratercal_cli.io.folder_lock`) for the block, so two
        runs into one folder cannot delete each other's temporary files or interleave their
        chunks; a second run gets :class:`RatercalError`.  Re-entrant within this object."""
        with self._lock.hold("montecarlo"):
            yield self

    @property
    def chunk_dir(self) -> Path:
        return self.root / "chunks"

    def chunks(self):
        """Every chunk, in task order: replication block by block, cells in config order."""
        out = []
        for start in range(0, self.replications, self.chunk_size):
            stop = min(start + self.chunk_size, self.replications)
            out.extend(Chunk(c, start, stop) for c in self.cells)
        return out

    def _check_manifest(self):
        path = self.root / "manifest.json"
        code = code_digest()
        if path.exists():
            try:
                old = json.loads(path.read_text())
            except ValueError:
                old = None
            if not isinstance(old, dict) or "study" not in old:
                self._refuse_foreign()
                old = {}
            if old.get("study") not in (None, self.digest):
                raise InputError(f"{self.root} holds another study (config {old.get('config')}); "
                                 f"use a new {arg('out')} folder", path)
            if old.get("code") not in (None, code) and any(self.chunk_dir.glob("*/*.csv")):
                raise InputError(f"the methods' code changed since this run began (code {old['code']}, now "
                                 f"{code}): its chunks would mix two versions; use a new {arg('out')} folder", path)
        else:
            self._refuse_foreign()
        write_json(path, {"study": self.digest, "code": code, "config": self.config.source, "name": self.config.name,
                          "generator": self.spec.generator, "true_score": self.spec.true_score,
                          "seed": self.spec.seed, "variants": list(self.spec.variants),
                          "shrinkages": list(self.spec.shrinkages),
                          "methods": list(self.spec.methods), "cut": self.spec.cut,
                          "chunk_size": self.chunk_size})

    def _refuse_foreign(self):
        """An :class:`InputError` where ``OUT/montecarlo`` holds files and no Monte Carlo run's manifest: a
        researcher's own ``montecarlo/summary.md`` there was written over without a word (``simulate``
        refuses such a folder)."""
        from ..io import LOCK_NAME

        ours = {LOCK_NAME, self.chunk_dir.name}   # (the chunks' folder: each chunk is checked by its digest)
        theirs = sorted(p.name for p in self.root.iterdir() if p.name not in ours) if self.root.is_dir() else []
        if theirs:
            shown = ", ".join(theirs[:4]) + (f" and {len(theirs) - 4} more" if len(theirs) > 4 else "")
            raise InputError(f"is not empty ({shown}) and holds no Monte Carlo run of ratercal's: give a new or "
                             f"empty {arg('out')} folder, so that no file of yours is written over", self.root)

    def pending(self):
        """Chunks without a valid file."""
        return [ch for ch in self.chunks()
                if read_chunk(self.chunk_dir / ch.relpath, self.digest, ch) is None]

    def run(self, jobs=None, scheduler=None, quiet=False):
        """Compute every pending chunk in ``jobs`` local processes (default: the constructor's),
        or on the Dask cluster at ``scheduler``, holding :meth:`lock`; returns (chunks computed,
        chunks already there)."""
        jobs = self.jobs if jobs is None else int(jobs)
        if scheduler is None and jobs > self.jobs:   # more processes than checked: their chunks at once
            self._check_memory(jobs)
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
        parallel = scheduler is not None or (jobs and jobs > 1)
        digest = self.digest
        results = run_tasks(run_chunk_task, self.spec, sorted(todo, key=lambda ch: -ch.cost) if parallel else todo,
                            jobs=jobs, scheduler=scheduler,
                            key=lambda ch: f"ratercal-chunk-{digest}-{ch.cell.code}-{ch.start}-{ch.stop}")
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
        """Each chunk's ``(lines, rows)`` (CSV lines, and as :func:`~.chunks.parse_rows` gives them), in
        config order: cells, then replications."""
        by_cell = {}
        for ch in self.chunks():
            by_cell.setdefault(ch.cell.code, []).append(ch)
        for cell in self.cells:
            for ch in by_cell[cell.code]:
                loaded = load_chunk(self.chunk_dir / ch.relpath, self.digest, ch)
                if loaded is None:
                    raise RatercalError(f"chunk {ch.relpath} is missing or damaged; run again to compute it")
                yield loaded

    def summarise(self, folder=None, keep_replications=True):
        """Merge the chunks and write the summaries (``summary.csv``, ``paired.csv``,
        ``summary.md``, and ``replications.csv`` unless ``keep_replications`` is false)
        to ``folder`` (default ``RUN/montecarlo``); returns the paths."""
        folder = Path(folder or self.root)
        cube = Cube.empty(self.cells, self.spec.variants, self.spec.methods, self.replications, self.spec.shrinkages)
        paths = []
        # one chunk in memory at a time: the cube is the only thing that grows with R
        with contextlib.ExitStack() as stack:
            fh = None
            if keep_replications:
                paths.append(folder / "replications.csv")
                fh = stack.enter_context(atomic_write(paths[0]))
                fh.write(",".join(COLUMNS) + "\n")
            for lines, rows in self.iter_chunk_rows():
                if fh is not None:
                    fh.writelines(lines)
                cube.add(rows)
        #: (variant, shrinkage, method) -> data sets it failed on, for the command's warning
        self.failures = dict(cube.failures)
        info = {"name": self.config.name, "generator": self.spec.generator, "true_score": self.spec.true_score,
                "replications": self.replications, "cells": len(self.cells), "seed": self.spec.seed,
                "cut": self.spec.cut, "shrinkages": list(self.spec.shrinkages)}
        return paths + write_summaries(folder, cube, info)


def run_single(config, out, cell_code, replication, keep_data=False, variants=None, methods=None):
    """Make one replication on its own -> ``RUN/montecarlo/single/<set>_r<K>/``.

    Writes ``criteria.csv`` (the rows the full run has for it) and, with
    ``keep_data``, ``ratings.csv`` (paper, rater, score, kept, order: 1-based ids),
    ``true_scores.csv`` (paper, quality, true) and, per variant, ``adjusted_<variant>.csv``
    (a run's ``equate/<variant>/adjusted.csv``: paper, rater, score, then ``X`` and
    ``X_paper`` per method).
    """
    cell = config.cell(cell_code)
    if replication < 0:
        raise ArgumentError("replication", "must be 0 or more")
    spec = StudySpec.from_config(config, variants, methods)
    rep = replicate(spec, cell, int(replication), keep=True)
    folder = Path(out) / "montecarlo" / "single" / f"{cell.code}_r{int(replication)}"
    with folder_lock(out, "montecarlo"):
        _write_single(folder, rep, keep_data)
    return folder, rep


def _write_single(folder, rep, keep_data) -> None:
    """:func:`run_single`'s files."""
    with atomic_write(folder / "criteria.csv") as fh:
        fh.write(",".join(COLUMNS) + "\n")
        fh.writelines(",".join(r) + "\n" for r in rep.rows)
    if keep_data:
        o = rep.generated.observed
        with atomic_write(folder / "ratings.csv") as fh:
            if o.criterion is None:
                fh.write("paper,rater,score,order,kept\n")
                fh.writelines(f"{p + 1},{r + 1},{s},{k},{int(c)}\n"
                              for p, r, s, k, c in zip(o.paper, o.rater, o.score, o.order, o.kept))
            else:   # a rubric's: each rating's criterion (1, 2, ...) after its rater
                fh.write("paper,rater,criterion,score,order,kept\n")
                fh.writelines(f"{p + 1},{r + 1},{x + 1},{s},{k},{int(c)}\n"
                              for p, r, x, s, k, c in zip(o.paper, o.rater, o.criterion, o.score, o.order, o.kept))
        g = rep.generated
        with atomic_write(folder / "true_scores.csv") as fh:   # with criteria: the overall and each criterion's
            crit = () if g.criterion_true is None else [f"{w}_c{c + 1}" for w in ("quality", "true")
                                                          for c in range(g.criterion_true.shape[1])]
            fh.write(",".join(["paper", "quality", "true", *crit]) + "\n")
            extra = (np.empty((g.quality.size, 0)) if g.criterion_true is None
                     else np.column_stack([g.criterion_quality, g.criterion_true]))
            fh.writelines(",".join([str(i + 1), _num(q), _num(t), *map(_num, x)]) + "\n"
                          for i, (q, t, x) in enumerate(zip(g.quality, g.true_score, extra)))
        for variant in dict.fromkeys(v for v, _ in rep.adjusted):
            write_adjusted(folder / f"adjusted_{variant}.csv", rep.ratings,
                           {code: adj for (v, code), adj in rep.adjusted.items() if v == variant},
                           {code: x for (v, code), x in rep.paper_of_rating.items() if v == variant})
