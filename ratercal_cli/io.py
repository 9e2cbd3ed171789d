"""Files: atomic writes, CSV with line-numbered errors, content hashes.

Every output is written to a temporary name beside its target and renamed into
place, so an interrupted run never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import tempfile
from pathlib import Path

from .errors import InputError


@contextlib.contextmanager
def atomic_write(path, mode="w", newline=""):
    """Open a temporary file beside ``path``; rename it over ``path`` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        kwargs = {} if "b" in mode else {"newline": newline, "encoding": "utf-8"}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path, text: str) -> None:
    with atomic_write(path) as fh:
        fh.write(text)


def csv_text(header, rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def write_json(path, obj, indent=2) -> None:
    """Sorted keys; ``indent=None`` uses json's C encoder (indenting falls back to the
    pure-Python one, ten times slower on files of many numbers)."""
    write_text(path, json.dumps(obj, indent=indent, sort_keys=True) + "\n")


def sniff_delimiter(text: str) -> str:
    """Tab if the first non-blank line of ``text`` has more tabs than commas, else comma."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    return "\t" if first.count("\t") > first.count(",") else ","


def read_csv(path, required=(), delimiter=None):
    """Read a CSV/TSV into (header, rows-with-line-numbers).

    Returns ``header`` (list of names) and a list of ``(line_number, dict)``, the
    line number being the first file line of the record (a quoted field may span
    lines).  Raises :class:`InputError` naming the file (and line) for an empty
    file, a column named twice, a missing column or a short row.
    ``delimiter=None`` sniffs tab vs comma (:func:`sniff_delimiter`).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path) from None
    if not text.strip():
        raise InputError("empty file", path)
    if delimiter is None:
        delimiter = sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = None
    rows = []
    lineno = 1
    for row in reader:
        start, lineno = lineno, reader.line_num + 1   # this record's first line; the next one's
        if not row or not any(c.strip() for c in row):
            continue
        if header is None:
            header = [c.strip() for c in row]
            twice = next((c for k, c in enumerate(header) if c in header[:k]), None)
            if twice == "":
                raise InputError(f"more than one column has no name (field {header.index('', 1 + header.index('')) + 1} "
                                 "of the header); name them", path, start)
            if twice is not None:
                raise InputError(f"column {twice} appears twice", path, start, twice)
            missing = [c for c in required if c not in header]
            if missing:
                raise InputError(f"missing column(s) {', '.join(missing)} (found: {', '.join(header)})",
                                 path, start)
            continue
        if len(row) != len(header):
            raise InputError(f"expected {len(header)} fields, found {len(row)}", path, start)
        rows.append((start, dict(zip(header, (c.strip() for c in row)))))
    return header, rows


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
