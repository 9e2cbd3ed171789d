"""What ratercal writes must not hurt: outputs never land on inputs, labels never run as formulas.

Two functions every command and writer calls, so there is one rule of each in one place:

- :func:`refuse_clashing_paths`: every output path of a command differs from each of its inputs
  and from each other output (compared by resolved path and by device and inode, so a symlink,
  a hard link or ``./x`` against ``x`` is caught).  ``adjust in.csv --html in.csv`` would
  otherwise replace the ratings with HTML, ``-o out.csv --html out.csv`` keep only the last.
- :func:`neutralise`: a text cell that a spreadsheet would run as a formula (OWASP's "CSV
  injection": a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, e.g.
  ``=HYPERLINK(...)`` or ``=cmd|' /C calc'!A0``) is written with a leading ``'``, which Excel and
  LibreOffice show as text; the label stays readable.  A plain number (``-1``, ``+2.5``, ``-3e2``)
  is left alone: it is a number, and runs nothing.  :func:`restore` undoes it where ratercal reads
  its own output back (a ratings file's labels, an anchor file's element labels);
  :func:`text_cell` writes an xlsx cell as a string, never a formula, marked as Excel marks text
  typed with a leading ``'`` (the cell style's ``quotePrefix``), so the workbook shows the label
  as it was, without a ``'``.

See OWASP, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import InputError

#: The first characters that make a spreadsheet read a cell as a formula (OWASP's list).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

#: A plain number as a CSV cell may hold it (point or comma decimal mark, exponent): inert.
_PLAIN_NUMBER = re.compile(r"[+-]?([0-9]+([.,][0-9]*)?|[.,][0-9]+)([eE][+-]?[0-9]+)?")


def neutralise(value):
    """``value`` as a spreadsheet shows it without running it: a string starting with one of
    :data:`FORMULA_START` gets a leading ``'`` (``=1+1`` -> ``'=1+1``) unless it is a plain number;
    anything else (other strings, numbers, None) is returned as it is."""
    if (isinstance(value, str) and value.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value)
            and value not in _SIGNS):
        return "'" + value
    return value


#: a sign alone, a sheet's mark for "none" (a missing score written ``-``): no formula, shown as it is (it came
#: back as ``'-`` in a staff tester's adjusted file)
_SIGNS = frozenset({"-", "+"})


def neutralise_row(cells) -> list:
    """:func:`neutralise` of each cell of a row."""
    return [neutralise(c) for c in cells]


def restore(value):
    """The label :func:`neutralise` was given: ``'=1+1`` -> ``=1+1`` (a ``'`` before anything else
    is kept: ``'quoted'`` stays)."""
    if isinstance(value, str) and value[:1] == "'" and neutralise(value[1:]) != value[1:]:
        return value[1:]
    return value


def text_cell(cell, value):
    """Set an openpyxl ``cell`` (a worksheet's or a write-only ``WriteOnlyCell``) to ``value``: a
    string is stored as a string (openpyxl makes any string starting with ``=`` a live formula
    otherwise), and one that :func:`neutralise` would change gets the ``quotePrefix`` style, Excel's
    own mark of text typed as ``'=1+1``: shown and read back as ``=1+1``, never run, also when the
    cell is edited; numbers and None as they are.  Returns the cell."""
    if isinstance(value, str):
        cell.value = value
        cell.data_type = "s"
        if neutralise(value) is not value:
            cell.quotePrefix = True
    else:
        cell.value = value
    return cell


def _identity(path: Path):
    """``(resolved path, (device, inode) or None)`` of ``path``."""
    real = Path(os.path.realpath(path))
    try:
        st = os.stat(path)
        return real, (st.st_dev, st.st_ino)
    except OSError:
        return real, None


def refuse_clashing_paths(inputs, outputs) -> None:
    """An :class:`InputError` when an output is one of the inputs or another output.

    ``inputs`` and ``outputs``: ``(what, path)`` pairs, ``what`` the option or argument as the user
    gave it (``--html``, ``RATINGS_FILE``, ``Data= of spec.txt``); a path of None or ``-``
    (standard output) is skipped.  Two paths clash when they resolve to the same name (links and
    ``..`` followed) or, existing, are the same file (device and inode: a hard link).  The message
    names both: ``--html in.csv: is the input RATINGS_FILE (in.csv); give another file name``.
    """
    seen = []   # (what, given, real, inode, is_input)
    for is_input, pairs in ((True, inputs), (False, outputs)):
        for what, path in pairs:
            if path is None or str(path) == "-":
                continue
            real, inode = _identity(Path(path))
            if not is_input:
                for other_what, other, o_real, o_inode, o_input in seen:
                    if real == o_real or (inode is not None and inode == o_inode):
                        role = "the input" if o_input else "also the output of"
                        raise InputError(f"is {role} {other_what} ({other}): ratercal would overwrite it; "
                                         "give another file name", path, field=what)
            seen.append((what, path, real, inode, is_input))


def regular_input(path, what: str | None = None) -> int:
    """The size of input ``path`` (links followed); an :class:`InputError` naming it when it is
    missing, a directory, or not a regular file: a device such as ``/dev/zero`` (read without end),
    a FIFO or a socket.  ``what`` names the option that gave it."""
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError("no such file", path, field=what) from None
    except NotADirectoryError:
        raise InputError("no such file (a part of the path is not a folder)", path, field=what) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError("is a directory, not a file", path, field=what)
    if not stat.S_ISREG(st.st_mode):
        raise InputError("is not a regular file (a device, FIFO or socket); ratercal reads files: save the "
                         "data to one", path, field=what)
    return st.st_size



#: The most characters of a file's text an error message quotes (:func:`snippet`).
SNIPPET_CHARS = 24


def snippet(text, limit: int = SNIPPET_CHARS) -> str:
    """``text`` quoted for an error message: its first ``limit`` characters, whitespace at the ends
    dropped, in Python's quoted form (a control character or other unprintable one shown escaped,
    ``'\\x00'``), ``...`` after it when there was more.  An error names the file and line; it need
    not, and must not, copy a line of an arbitrary file (a Facets ``Data = /etc/shadow``) into a log."""
    if not isinstance(text, str):   # a value parsed from the file (JSON): its repr, cut
        shown = repr(text)
        return shown[:limit] + ("..." if len(shown) > limit else "")
    text = text.strip()
    return repr(text[:limit]) + ("..." if len(text) > limit else "")
