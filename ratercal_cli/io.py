"""Files: atomic writes, CSV with line-numbered errors, content hashes.

Every output is written to a temporary name beside its target and renamed into
place, so an interrupted run never leaves a half-written file.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import csv
import errno
import gc
import hashlib
import io
import json
import os
import re
import signal
import stat
import sys
import threading
from itertools import compress, repeat
from pathlib import Path

from .errors import ArgumentError, InputError, arg


#: Our temporary names: ``.NAME.PID.XXXXXXXX.tmp`` beside the target (PID: the writer's
#: process, so that a later run can tell a stale one from one being written).
_TMP_RE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[A-Za-z0-9_]{8}\.tmp$")


def output_target(path, make_dirs=False) -> Path:
    """Where writing ``path`` really goes: symlinks resolved (a link is written through,
    not replaced).  Refuses, naming ``path`` as the user gave it, a directory, a device or
    anything else that is not a regular file, and (unless ``make_dirs``: the writer creates
    it) a folder that does not exist."""
    given = Path(path)
    real = Path(os.path.realpath(given))
    try:   # the given path: /dev/stdout on a pipe resolves to a name (pipe:[N]) that cannot be opened
        mode = os.stat(given).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError("is a directory; give a file name to write", given)
    if mode is not None and not stat.S_ISREG(mode):
        raise InputError("is not a regular file (a device, pipe or socket); give a file name, "
                         "or - for standard output", given)
    if mode is None and not make_dirs and not real.parent.is_dir():
        raise InputError(f"folder {real.parent} does not exist; create it first", given)
    return real


def _write_target(path, make_dirs) -> Path:
    """:func:`output_target`, with one ``lstat`` instead for a run folder's file (``make_dirs``)
    that is new or a regular file: written where it is (a linked folder on the way leads the
    temporary file and the rename to the same place); a link, a folder or a device get the full
    checks and their messages."""
    given = Path(path)
    if make_dirs:
        try:
            mode = os.lstat(given).st_mode
        except FileNotFoundError:
            return given                  # new: its folders are made if missing
        except OSError:
            mode = None
        if mode is not None and stat.S_ISREG(mode):
            return given
    return output_target(given, make_dirs)


def remove_stale_temporaries(folder, name=None) -> list:
    """Delete our temporary files in ``folder`` (of target ``name``, or any) whose writing
    process is gone: left by a run that was killed.  Returns the paths removed."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    start = "." if name is None else f".{name}."
    for entry in entries:
        if not entry.name.startswith(start) or not entry.name.endswith(".tmp"):
            continue
        m = _TMP_RE.match(entry.name)
        if not m or (name is not None and m.group("name") != name) or not entry.is_file(follow_symlinks=False):
            continue
        if _alive(int(m.group("pid"))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False   # our own leftovers: this process writes a target one at a time
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


class _Terminated(BaseException):
    """SIGTERM during an atomic write: unwinds so that ``finally`` blocks run."""


#: The temporary files this process is writing (:func:`atomic_write`): name -> the writer's pid (a
#: forked worker inherits its parent's entries, which are not its own to remove).
_WRITING: dict = {}
#: The real ``os.unlink``, for the SIGTERM handler (a test may replace this module's ``os``).
_unlink = os.unlink


def _remove_ours() -> None:
    """Remove the temporary files this process is writing (SIGTERM's handler)."""
    me = os.getpid()
    for tmp, pid in list(_WRITING.items()):
        if pid == me:
            _WRITING.pop(tmp, None)
            with contextlib.suppress(OSError):
                _unlink(tmp)


@contextlib.contextmanager
def _term_unwinds():
    """While writing, SIGTERM removes the temporary files being written, then raises (so
    ``finally`` blocks run) instead of killing outright; SIGINT already raises KeyboardInterrupt.
    Only in the main thread, only where SIGTERM has its default action; the process still ends by
    SIGTERM afterwards.

    The handler removes the temporaries itself, before anything unwinds: an exception raised by a
    signal can land anywhere, e.g. between a failed write and the ``except`` that removes its
    temporary, or as SIGTERM is unblocked after the file is made (a worker stopped by its parent
    just then left ``.manifest.json.PID.XXXX.tmp`` or ``.ratings.csv...tmp`` behind)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)   # a second SIGTERM cannot cut this short
        _remove_ours()
        raise _Terminated()

    try:
        signal.signal(signal.SIGTERM, handler)   # in the try: a SIGTERM as it returns is handled below
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def atomic_write(path, mode="w", newline="", make_dirs=True, stage=False):
    """Open a temporary file beside ``path``'s real target; rename it over the target on success
    (``stage``: a user's output, at the end of the open :func:`output_set` where there is one; not the
    files a command reads back, such as a report's figures).

    A symlink is written through (the file it points to is replaced, the link stays);
    a directory or device as ``path`` is refused (:func:`output_target`).  ``make_dirs``:
    create missing folders (run folders); False refuses them.  Temporary files of ours
    left by a killed run are removed first; an error or an interrupt (SIGINT, SIGTERM:
    :func:`_term_unwinds`) removes this one.
    """
    path = _write_target(path, make_dirs)
    remove_stale_temporaries(path.parent, path.name)
    with _term_unwinds(), _naming_write_errors(path):
        tmp = None
        try:
            try:
                fd, tmp = _create_temporary(path)
            except FileNotFoundError:
                if not make_dirs:
                    raise
                path.parent.mkdir(parents=True, exist_ok=True)   # the folder first when it is missing
                fd, tmp = _create_temporary(path)
            kwargs = {} if "b" in mode else {"newline": newline, "encoding": "utf-8"}
            with os.fdopen(fd, mode, **kwargs) as fh:
                yield fh
                fh.flush()
            staged = _STAGED.get() if stage else None
            if staged is not None:   # renamed with the others of its set (:func:`output_set`)
                staged.append((tmp, path))
                tmp = None
            else:
                os.replace(tmp, path)
        except BaseException:
            if tmp is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            raise
        finally:
            _WRITING.pop(tmp, None)


#: The temporary files of the open :func:`output_set` and their targets, in the order written (None: no set)
_STAGED: contextvars.ContextVar = contextvars.ContextVar("ratercal_staged", default=None)


@contextlib.contextmanager
def output_set():
    """The user's outputs written inside (:func:`open_output`, :func:`atomic_write` ``stage=True``) are
    renamed over their targets together, at the end
    of the block, and removed if it fails or is interrupted: a command's outputs (``adjust -o``, its
    ``--changes``, ``--memo`` and ``--html``) are all of this run or all as they were, never a new
    adjusted file beside an old memo.  (A SIGKILL between two renames still can; they follow each other
    at once.)  Nested sets join the outer one."""
    if _STAGED.get() is not None:
        yield
        return
    staged: list = []
    token = _STAGED.set(staged)
    try:
        yield
        _STAGED.reset(token)
        token = None
        while staged:
            tmp, path = staged[0]
            os.replace(tmp, path)
            staged.pop(0)
            _WRITING.pop(tmp, None)
    finally:
        if token is not None:
            _STAGED.reset(token)
        for tmp, _ in staged:   # (an error, an interrupt, or a failed rename: the rest left as they were)
            _WRITING.pop(tmp, None)
            with contextlib.suppress(OSError):
                os.unlink(tmp)


#: Why a file cannot be written that the user can act on: a full disk, a quota, a file too large,
#: a read-only or forbidden folder.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM})


@contextlib.contextmanager
def _naming_write_errors(path):
    """Such an error while ``path`` is written (:data:`_WRITE_ERRNOS`) becomes one line naming
    it, ``PATH: cannot write: No space left on device`` (exit status 2), wherever it happens: in
    this process or a worker, which sends it back."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _WRITE_ERRNOS:
            raise
        from .errors import RatercalError

        other = exc.filename is not None and Path(exc.filename).parent != path.parent
        raise RatercalError(f"{exc.filename if other else path}: cannot write: {exc.strerror}") from None


@contextlib.contextmanager
def open_output(path, mode="w", newline=""):
    """:func:`atomic_write` for a user's ``-o`` path, which must be in an existing folder;
    ``-`` is standard output."""
    if str(path) == "-":
        out = sys.stdout.buffer if "b" in mode else sys.stdout
        yield out
        out.flush()
        return
    with atomic_write(path, mode=mode, newline=newline, make_dirs=False, stage=True) as fh:
        yield fh


def _create_temporary(path):
    """``(fd, name)`` of a new file ``.NAME.PID.XXXXXXXX.tmp`` beside ``path`` (``O_EXCL``: never
    one that exists), with the permissions a new file gets (0666 less the umask), as the
    target will have."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        _WRITING[tmp] = os.getpid()   # before it exists: a SIGTERM from here on removes it
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            _WRITING.pop(tmp, None)   # another's file, not ours to remove
            continue
        except BaseException:
            _WRITING.pop(tmp, None)
            raise
    raise FileExistsError(f"no free temporary name beside {path}")


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


class paused_gc(contextlib.ContextDecorator):
    """Python's cyclic garbage collector paused for a block (or a function): reading a file makes a
    dict and strings per row, no cycles, and the collector went over the growing rows again and
    again (1M ratings: 2.3 s of a 6.6 s read).  Re-entrant; the collector is on again after the
    outermost block if it was before."""

    _depth = 0
    _was = True

    def __enter__(self):
        if paused_gc._depth == 0:
            paused_gc._was = gc.isenabled()
            gc.disable()
        paused_gc._depth += 1
        return self

    def __exit__(self, *exc):
        paused_gc._depth -= 1
        if paused_gc._depth == 0 and paused_gc._was:
            gc.enable()
        return False


def sniff_delimiter(text: str) -> str:
    """The separator of the first non-blank line of ``text`` (the header): ``;`` where it has more
    semicolons than commas and tabs (a spreadsheet's CSV where the decimal mark is a comma, which the
    command line had refused asking for ``--sep semicolon`` though the app and the anchor reader read
    it), tab where more tabs than commas, else comma."""
    first, at = "", 0
    while at < len(text) and not first.strip():   # line by line: not a split of the whole text
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        first, at = text[at:end], end + 1
    first = re.sub(r'"[^"]*"', "", first)   # (the marks inside quoted names: "Student, ID";"Marker, name" is ';')
    commas, tabs, semicolons = first.count(","), first.count("\t"), first.count(";")
    return ";" if semicolons > max(commas, tabs) else "\t" if tabs > commas else ","


def read_text(path, encoding=None, option="encoding") -> str:
    """A text file's contents; ``encoding=None`` is UTF-8 (a byte-order mark skipped), or UTF-16
    when the file starts with UTF-16's byte-order mark.
    A byte that does not decode is an :class:`InputError` naming its line and byte offset (and,
    for UTF-8, the argument ``option`` that names another encoding, if there is one)."""
    from .guard import regular_input

    path = Path(path)
    regular_input(path)   # not /dev/zero, a FIFO or a folder: read to the end, they never end
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path) from None
    codec = encoding or "utf-8-sig"
    if encoding is None and data[:4] in (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE):
        codec = "utf-32"   # (its mark starts as UTF-16's: an edge tester's file was read as UTF-16, NULs and all)
    elif encoding is None and data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        codec = "utf-16"   # Excel's "Unicode Text" (tab-separated UTF-16): its byte-order mark says so
        # 8-bit text after the mark (a tool that wrote it, then UTF-8) decodes as UTF-16 into CJK look-alikes,
        # refused as "missing column(s) paper ... (found: 慰数Ⱳ...)": a line end or a comma in UTF-16 is half NUL
        if len(data) > 2 and b"\0" not in data[2:]:
            raise InputError("starts with a UTF-16 byte-order mark but is not UTF-16 text (no byte of it is NUL, "
                             "as half of a line end's and a comma's are); save it again as UTF-8", path, 1)
    try:
        return data.decode(codec)
    except LookupError:
        raise ArgumentError(option or "encoding", f"unknown encoding {encoding!r} (e.g. utf-8, latin-1, "
                            "cp1252)") from None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        name = "UTF-8" if encoding is None else encoding
        hint = f"; give {arg(option)} (e.g. latin-1 or cp1252) if the file is not UTF-8" \
            if encoding is None and option else ""
        if encoding is None and codec != "utf-8-sig":   # (read as its byte-order mark said: it was "not UTF-8 text")
            line = data[:exc.start].decode(codec, errors="replace").count("\n") + 1
            raise InputError(f"starts with a {codec.upper()} byte-order mark but is not {codec.upper()} text "
                             f"(byte 0x{data[exc.start]:02x} at byte offset {exc.start}: {exc.reason}); save it "
                             "again as UTF-8", path, line) from None
        raise InputError(f"not {name} text: byte 0x{data[exc.start]:02x} at byte offset {exc.start} "
                         f"({exc.reason}){hint}", path, line) from None


#: csv's longest field (its default, 128 KiB): longer means a broken quote or a wrong file.
FIELD_LIMIT = csv.field_size_limit()


def read_csv(path, required=(), delimiter=None):
    """Read a CSV/TSV into (header, rows-with-line-numbers); see :func:`read_table`."""
    header, rows, _ = read_table(path, required, delimiter)
    return header, rows


def find_column(header, name):
    """The column of ``header`` called ``name``: itself, else the one name equal to it ignoring case
    (``Score`` for ``score``); None when absent or when several names match."""
    if name in header:
        return name
    same = [h for h in header if h.casefold() == name.casefold()]
    return same[0] if len(same) == 1 else None


def read_table(path, required=(), delimiter=None, encoding=None, strip=True, text=None, hint=""):
    """Read a CSV/TSV into ``(header, rows, delimiter)``.

    ``header`` is the list of names, ``rows`` a list of ``(line_number, dict)``, the
    line number being the first file line of the record (a quoted field may span
    lines).  Raises :class:`InputError` naming the file (and line) for an empty
    file, a NUL byte, a column named twice, a missing column (a name differing only in case
    counts when it is the only one: :func:`find_column`; ``hint`` ends the message, or a function of the
    missing names giving its end), a short row, a field over
    :data:`FIELD_LIMIT` (an unterminated quote swallowing the file) or bytes that do not
    decode.  ``delimiter=None`` sniffs tab, semicolon or comma (:func:`sniff_delimiter`);
    ``strip=False`` keeps the cells' surrounding whitespace (header names are always
    stripped).
    """
    path = Path(path)
    if text is None:
        text = read_text(path, encoding)
    check_text(text, path)
    if delimiter is None:
        delimiter = sniff_delimiter(text)
    if not strip:
        fast = _read_unquoted(text, required, delimiter, path, hint)
        if fast is not None:
            return fast
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = None
    rows = []
    lineno = 1
    unnamed = 0   # empty columns right of the table, as a spreadsheet exports them ("a,b,c,,")
    try:
        for row in reader:
            start, lineno = lineno, reader.line_num + 1   # this record's first line; the next one's
            if not row or not "".join(row).strip():
                continue
            if header is None:
                names = [c.strip() for c in row]
                while len(names) - unnamed > 1 and not names[len(names) - unnamed - 1]:
                    unnamed += 1
                unnamed = unnamed if unnamed >= 2 else 0   # one unnamed column stays a column, named ""
                header = _header(row[:len(row) - unnamed], required, delimiter, path, start, hint)
                width = len(header)
                continue
            if unnamed and len(row) > width:
                spill = next((k for k in range(width, len(row)) if row[k].strip()), None)
                if spill is not None:
                    raise InputError(f"field {spill + 1} has a value, and its column no name", path, start)
                row = row[:width]
            if len(row) != width and any("\n" in c or "\r" in c for c in row):   # (a quoted field across lines)
                raise InputError("a double quote opened on this line is never closed on it: the lines after it "
                                 f"were read into one field (lines {start}-{reader.line_num}); close it, or remove it",
                                 path, start)
            if len(row) != width:
                mark = {",": "comma", "\t": "tab", ";": "semicolon"}.get(delimiter, repr(delimiter))
                more = (f" (a {mark} inside a field -- a name such as 'Smith{delimiter} J.' or a decimal comma -- "
                        "needs the field in double quotes)" if len(row) > width and delimiter in ",;" else "")
                if width == 1 and not rows and len(row) > 2:   # (a title line above the columns' names)
                    more = (f": the line above holds one field ({header[0]!r}, a title?) and this one {len(row)} "
                            "fields; delete the line(s) above the columns' names")
                raise InputError(f"expected {width} field{'s' * (width != 1)}, found {len(row)}{more}", path, start)
            rows.append((start, dict(zip(header, [c.strip() for c in row] if strip else row))))
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise _long_field(text, delimiter, header, path, lineno) from None
        raise InputError(f"not readable as CSV ({exc})", path, lineno) from None
    if header and len(header) > 1 and header[-1] == "" and not any(r[""].strip() for _, r in rows):
        # one unnamed column right of the table, empty throughout: a separator at the end of every line (it was
        # written back as a column named "", an edge tester's file); one with a value stays a column
        header = header[:-1]
        for _, r in rows:
            del r[""]
    return header, rows, delimiter


def _long_field(text, delimiter, header, path, lineno) -> InputError:
    """The error of a field over FIELD_LIMIT on line ``lineno``: where the line has no quote, which column holds it and
    how long it is (it said "an unterminated quote?" of a 1 MB label with no quote, naming no column, an edge tester);
    else the quote that may have swallowed the lines after it."""
    limit = f"longer than the {FIELD_LIMIT // 1024} KiB a field may hold"
    at = 0
    for _ in range(lineno - 1):   # (the line's text: found only on this error)
        at = text.find("\n", at) + 1
        if at <= 0:
            break
    end = text.find("\n", at)
    line = text[at:] if end < 0 else text[at:end]
    if '"' in line or at <= 0:
        return InputError(f"a field {limit} (an unterminated quote?)", path, lineno)
    cells = line.rstrip("\r").split(delimiter)
    k = max(range(len(cells)), key=lambda i: len(cells[i]))
    column = header[k] if header is not None and k < len(header) else f"field {k + 1}"
    return InputError(f"a field of {len(cells[k]):,} characters, {limit}", path, lineno, column)


def check_text(text: str, path) -> None:
    """:class:`InputError` for an empty text and for a NUL byte (naming its line and character)."""
    if not text.strip():
        raise InputError("empty file", path)
    if "\0" in text:   # no character of a text export: a label would carry it into the output
        at = text.index("\0")
        head = text[:200]
        if len(head) >= 4 and head.count("\0") >= len(head) // 2 - 1 and ("\0" not in head[0::2] or "\0" not in head[1::2]):
            from .errors import mention   # (every other character a NUL: ASCII text in two bytes a character)
            order = "le" if "\0" not in head[0::2] else "be"
            raise InputError(f"every other byte is NUL: UTF-16 text without a byte-order mark? give "
                             f"{mention('encoding', 'utf-16-' + order)}", path, 1)
        raise InputError(f"a NUL byte at character {at - text.rfind(chr(10), 0, at)} of the line: "
                         "not a text export, or a damaged one", path, text.count("\n", 0, at) + 1)


def _read_unquoted(text, required, delimiter, path, hint=""):
    """:func:`read_table` (``strip=False``) of a text without a quote character, where each line
    is one record: the records parsed by csv in one call and the rows made by ``map`` (1M ratings:
    the loop a record at a time was most of reading the file).  None where anything is out of
    the ordinary (a quote, a short row, unnamed columns, a field too long): the loop, which says
    where, reads it."""
    if '"' in text:
        return None
    try:
        records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error:
        return None
    filled = list(compress(range(len(records)), map(str.strip, map("".join, records))))   # not blank
    if not filled:
        return None
    head = records[filled[0]]
    names = [c.strip() for c in head]
    if len(names) > 1 and not names[-1]:   # unnamed columns right of the table
        return None
    header = _header(head, required, delimiter, path, filled[0] + 1, hint)
    body = [records[k] for k in filled[1:]]
    if set(map(len, body)) - {len(header)}:
        return None
    rows = list(zip([k + 1 for k in filled[1:]], map(dict, map(zip, repeat(header), body))))
    return header, rows, delimiter


def _header(row, required, delimiter, path, line, hint=""):
    """Column names of a header row; InputError for a name used twice or a missing column."""
    header = [c.strip() for c in row]
    twice = next((c for k, c in enumerate(header) if c in header[:k]), None)
    if twice == "":
        raise InputError(f"more than one column has no name (field {header.index('', 1 + header.index('')) + 1} "
                         "of the header); name them", path, line)
    if twice is not None:
        raise InputError(f"column {twice} appears twice", path, line, twice)
    missing = [c for c in required if find_column(header, c) is None]
    if missing:
        hint = hint(missing) if callable(hint) else hint
        if delimiter != ";" and any(";" in c for c in header):
            hint = f"; the fields look separated by ';': give {arg('sep', 'semicolon')}"
        elif len(header) == 1:   # (--sep tab on a CSV, --sep comma on a TSV: the whole header one name)
            for mark, name, shown in ((",", "comma", "','"), ("\t", "tab", "tabs")):
                if delimiter != mark and mark in header[0]:
                    hint = f"; the fields look separated by {shown}: give {arg('sep', name)}"
        raise InputError(f"missing column(s) {', '.join(missing)} (found: {', '.join(header)}){hint}",
                         path, line)
    return header


def sha256_file(path) -> str:
    """The file's SHA-256 (hex), read in 1 MiB blocks through the bare descriptor (a run's
    freshness checks hash ~300 small files: a buffered file object per file doubled the time)."""
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY)
    try:
        while True:
            block = os.read(fd, 1 << 20)
            if not block:
                break
            h.update(block)
    finally:
        os.close(fd)
    return h.hexdigest()


#: The lock file of a run folder (:func:`folder_lock`).
LOCK_NAME = ".lock"


def _open_lock_file(path: Path):
    """``path`` opened for reading and writing, made if missing, as a regular file only: a symlink
    is not followed (``O_NOFOLLOW``: a ``.lock`` linked to another file would have it truncated),
    and a directory, FIFO or device is a one-line :class:`RatercalError` (``O_NONBLOCK``: a FIFO
    does not hang the open)."""
    from .errors import RatercalError

    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RatercalError(f"{path}: is a symbolic link; ratercal's lock file must be a plain file "
                                "(remove the link)") from None
        if exc.errno == errno.EISDIR:
            raise RatercalError(f"{path}: is a directory, not ratercal's lock file (remove it)") from None
        if exc.errno in _WRITE_ERRNOS:
            raise
        raise RatercalError(f"{path}: cannot open ratercal's lock file: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RatercalError(f"{path}: is not a regular file (a FIFO, socket or device), not ratercal's lock "
                            "file (remove it)")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "r+", encoding="utf-8")


@contextlib.contextmanager
def folder_lock(folder, command: str):
    """Hold ``FOLDER/.lock`` exclusively (``fcntl.flock``) for the block: one ratercal command
    writing a run folder at a time.  A second writer gets a one-line :class:`RatercalError`
    naming the folder and the command holding it (the file says which, and its process id).
    The kernel drops the lock when the holder and the workers it forked have ended, so a killed
    run leaves no stale lock.  Not re-entrant: each holder takes it once (the folder is made if
    missing)."""
    import fcntl

    from .errors import RatercalError

    folder = Path(folder)
    with _naming_write_errors(folder / LOCK_NAME):   # a read-only folder, a full disk: one line
        folder.mkdir(parents=True, exist_ok=True)
        fh = _open_lock_file(folder / LOCK_NAME)
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.seek(0)
        holder = fh.read().strip() or "another ratercal command"
        fh.close()
        raise RatercalError(f"{folder}: in use by {holder}; wait for it to end, or give another folder") from None
    try:
        with contextlib.suppress(OSError):   # only a note for the next writer: a full disk may refuse it
            fh.seek(0)
            fh.truncate(0)
            fh.write(f"ratercal {command} (process {os.getpid()})\n")
            fh.flush()
        yield
    finally:
        fh.close()      # closing the file releases the lock


class ReentrantFolderLock:
    """:func:`folder_lock` of one folder for an object that may ask for it again inside its own
    block (a run's library stages called by a command that holds the run's folder): the first
    :meth:`hold` takes the lock, nested ones only count."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self._depth = 0

    @contextlib.contextmanager
    def held(self):
        """Count the lock as held for the block: the caller holds ``folder_lock(self.folder)``."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    @contextlib.contextmanager
    def hold(self, command: str):
        """Hold the folder's lock for the block, unless this object holds it already."""
        if self._depth:
            with self.held():
                yield
            return
        with folder_lock(self.folder, command), self.held():
            yield
