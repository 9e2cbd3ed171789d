"""Chunks: ``chunk_size`` consecutive replications of one cell, one task and one file
``RUN/montecarlo/chunks/<cell>/r<start>-<stop>.csv`` (header naming the study digest, cell and range;
one block of rows per replication; a closing ``# end`` line), valid or computed again."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..design import Cell
from .replicate import chunk_rows
from .spec import COLUMNS, CRITERIA, StudySpec


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
