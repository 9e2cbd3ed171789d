"""Chunks: ``chunk_size`` consecutive replications of one cell, one task and one file
``RUN/montecarlo/chunks/<cell>/r<start>-<stop>.csv`` (header naming the study digest, cell and range;
one block of rows per replication; a closing ``# end rows=N sha256=HEX`` line recording the rows'
count and hash), valid or computed again."""

from __future__ import annotations

import hashlib

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..design import Cell
from .replicate import chunk_rows
from .spec import COLUMNS, CRITERIA, KEYS, StudySpec


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

    @property
    def cost(self) -> int:
        """The work, roughly: ratings drawn (replications x papers x raters a paper); chunks
        computed side by side start with the largest, so the last to finish is small."""
        return self.size * self.cell.papers * self.cell.raters_drawn


def chunk_header(spec_digest: str, chunk: Chunk) -> str:
    return f"# ratercal montecarlo chunk study={spec_digest} set={chunk.cell.code} reps={chunk.start}-{chunk.stop}\n"


def run_chunk(spec: StudySpec, cell: Cell, start: int, stop: int) -> str:
    """The rows of replications ``start..stop-1`` of ``cell`` as CSV lines (runs on a worker)."""
    return "".join(",".join(r) + "\n" for rows in chunk_rows(spec.prepare(), cell, start, stop) for r in rows)


def run_chunk_task(spec: StudySpec, chunk: Chunk) -> str:
    """:func:`run_chunk` as a task of :func:`.executors.run_tasks` (``spec`` shared by all)."""
    return run_chunk(spec, chunk.cell, chunk.start, chunk.stop)


def chunk_end(body: str) -> str:
    """The closing line: the count of the rows and the SHA-256 of their text, as the pipeline's
    manifests record a stage's files, so that a chunk changed after it was written (a row
    deleted, a digit changed) is computed again instead of trusted."""
    return f"# end rows={body.count(chr(10))} sha256={hashlib.sha256(body.encode()).hexdigest()}\n"


def chunk_text(spec_digest: str, chunk: Chunk, body: str) -> str:
    return chunk_header(spec_digest, chunk) + ",".join(COLUMNS) + "\n" + body + chunk_end(body)


def read_chunk(path, spec_digest: str, chunk: Chunk):
    """The body lines of a valid chunk file, or None if missing, stale or damaged."""
    valid = _valid_chunk(path, spec_digest, chunk)
    return None if valid is None else valid[0]


def load_chunk(path, spec_digest: str, chunk: Chunk):
    """``(lines, rows)`` of a valid chunk file (``rows`` as :func:`parse_rows` gives them,
    from the fields its validation split), or None as :func:`read_chunk`."""
    valid = _valid_chunk(path, spec_digest, chunk)
    return None if valid is None else (valid[0], _columns(valid[1]))


def _valid_chunk(path, spec_digest: str, chunk: Chunk):
    """``(lines, fields)`` of a valid chunk file (:func:`_fields`), else None."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError, IsADirectoryError, NotADirectoryError):
        return None   # computed again (a folder in its place: writing it says so, one line)
    head = chunk_header(spec_digest, chunk) + ",".join(COLUMNS) + "\n"
    end = text.rfind("# end ", len(head) - 1)
    if not text.startswith(head) or end < len(head) or text[end:] != chunk_end(text[len(head):end]):
        return None
    body = text[len(head):end]
    lines = body.splitlines(keepends=True)
    commas = len(COLUMNS) - 1
    if any(line.count(",") != commas or not line.endswith("\n") for line in lines):
        return None
    fields = _fields(lines)
    if set(fields[0::len(COLUMNS)]) - {chunk.cell.code}:
        return None
    if set(fields[1::len(COLUMNS)]) != {str(k) for k in range(chunk.start, chunk.stop)}:
        return None
    return lines, fields


def _fields(lines):
    """The fields of CSV lines of :data:`COLUMNS` (no quoting: no field holds a comma), row
    after row, as one flat list."""
    if not lines:
        return []
    return "".join(lines).replace("\n", ",")[:-1].split(",")


def parse_rows(lines):
    """Rows (CSV lines of :data:`COLUMNS`, no header) -> dict of numpy arrays (an empty
    criterion is nan)."""
    return _columns(_fields(lines))


def _columns(fields):
    """:func:`parse_rows` of the flat fields of the rows."""
    C = len(COLUMNS)
    out = {"set": np.array(fields[0::C], dtype=object),
           "replication": np.array(fields[1::C], dtype=np.int64),
           "variant": np.array(fields[2::C], dtype=object), "shrinkage": np.array(fields[3::C], dtype=object),
           "method": np.array(fields[4::C], dtype=object), "error": np.array(fields[C - 1::C], dtype=object)}
    for i, c in enumerate(CRITERIA):
        column = fields[len(KEYS) + i::C]
        if "" in column:
            column = [x or "nan" for x in column]
        out[c] = np.array(column, dtype=np.float64)
    return out
