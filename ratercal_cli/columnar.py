"""Text tables as columns, read and written by pyarrow's CSV engine (issue 32).

A :class:`Column` is a column of text cells held as its distinct texts (``labels``, in the order of
first appearance) and one code per row (``codes``, an integer array): a ratings file of a million
lines has a few hundred raters and a few distinct scores, so every check that looks at a cell's
text (a blank label, a score that does not parse, lookalike labels, formula-like cells) runs once
per distinct text, and the rest are array operations on the codes.  :class:`Rows` shows such
columns as the rows of dicts the row-by-row reader gives (``rows[i][column]``).

:func:`read_columns` reads a CSV/TSV text with pyarrow's C++ reader (1M ratings: 0.06 s, where
Python's ``csv`` and a dict per row took 1.7 s) where each record is one line of the file (no quote
character, no lone carriage return, no blank-looking line, no field over the csv module's limit);
anything else is left to :func:`ratercal_cli.io.read_table`, which reads every dialect and says which
line is wrong (the caller falls back to it on None).  :func:`write_columns` writes columns as
``csv.writer`` would (quotes only where a cell needs them), joining the cells in C.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Sequence

import numpy as np


#: The characters ``str.split`` and ``str.strip`` take for spaces among ASCII ones.
_ASCII_SPACE = "".join(ch for ch in map(chr, range(128)) if ch.isspace())


class Column:
    """A text column: ``labels`` (its distinct texts, first seen first) and ``codes`` (the label of
    each row, an integer array)."""

    __slots__ = ("codes", "labels", "arrow", "_joined")

    def __init__(self, codes, labels):
        self.codes = codes
        self.labels = labels
        self.arrow = None   # the labels as a pyarrow array, where the reader made one
        self._joined = None

    def joined(self) -> str:
        """The labels joined for :func:`labels_matching` (made once: the column is not changed in place)."""
        if self._joined is None:
            self._joined = _join(self.labels)
        return self._joined

    def matching(self, chars: str, start: bool = False) -> list:
        """:func:`labels_matching` of the labels."""
        return labels_matching(self.labels, chars, start, self.joined())

    @classmethod
    def from_values(cls, values) -> Column:
        """The column of a list of texts."""
        labels = list(dict.fromkeys(values))
        code = {v: k for k, v in enumerate(labels)}
        return cls(np.fromiter(map(code.__getitem__, values), dtype=np.int64, count=len(values)), labels)

    @classmethod
    def from_arrow(cls, array) -> Column:
        """The column of a pyarrow string array (dictionary-encoded in C)."""
        import pyarrow.compute as pc

        heads = _run_heads(array)
        if heads is None:
            enc = pc.dictionary_encode(array, memory_pool=_pool())
            codes = _ints(enc.indices)
        else:   # a paper's rows together: the first row of each run hashed, its code repeated
            enc = pc.dictionary_encode(pc.take(array, _index_array(heads), memory_pool=_pool()),
                                       memory_pool=_pool())
            codes = np.repeat(_ints(enc.indices), np.diff(np.append(heads, len(array))))
        column = cls(codes, _texts(enc.dictionary))
        column.arrow = enc.dictionary   # the labels as pyarrow has them, for writing them back
        return column

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i) -> str:
        return self.labels[self.codes[i]]

    def values(self, at=None) -> list:
        """The texts of the rows (``at``: of those rows), as a list."""
        codes = self.codes if at is None else self.codes[at]
        if not len(self.labels):
            return [""] * len(codes)
        return np.array(self.labels, dtype=object)[codes].tolist()

    def counts(self) -> np.ndarray:
        """How many rows have each label."""
        return np.bincount(self.codes, minlength=len(self.labels))

    def first_row(self, labels) -> int | None:
        """The first row whose text is one of ``labels`` (None: none is)."""
        if len(labels) == 1:   # (a blank: a scan of the labels, not a dict of them)
            if labels[0] not in self.labels:
                return None
            return int(np.argmax(self.codes == self.labels.index(labels[0])))
        wanted = np.zeros(len(self.labels), dtype=bool)
        index = {v: k for k, v in enumerate(self.labels)}
        wanted[[index[v] for v in labels if v in index]] = True
        rows = np.flatnonzero(wanted[self.codes]) if wanted.any() else ()
        return int(rows[0]) if len(rows) else None

    def mapped(self, to) -> Column:
        """The column with each label replaced by ``to(label)`` (labels that become one text merge;
        the order of first appearance is kept).  ``self`` where nothing changes."""
        new = [to(v) for v in self.labels]
        if new == self.labels:
            return self
        index: dict = {}
        remap = np.fromiter((index.setdefault(v, len(index)) for v in new), dtype=np.int64, count=len(new))
        return Column(remap[self.codes], list(index))

    def stripped(self) -> Column:
        """:meth:`mapped` by ``str.strip`` (``self`` where no label holds a space: ASCII labels are
        searched for ASCII spaces at once)."""
        if not self.matching(_ASCII_SPACE) and self.joined().isascii():
            return self
        return self.mapped(str.strip)

    def remapped(self, mapping: dict) -> Column:
        """:meth:`mapped` by a ``{label: new label}`` dict (labels not in it stay)."""
        return self.mapped(lambda v: mapping.get(v, v))


class Rows(Sequence):
    """The rows of ``columns`` (``{name: Column}``, in ``header``'s order) as the row-by-row reader
    gives them: ``rows[i]`` is a new dict ``{column: text}`` (changing it changes nothing),
    ``rows.column(name)`` the :class:`Column`."""

    def __init__(self, header, columns: dict, n: int):
        self.header = list(header)
        self.columns = columns
        self.n = n

    @classmethod
    def from_dicts(cls, header, rows) -> Rows:
        return cls(header, {c: Column.from_values([r[c] for r in rows]) for c in header}, len(rows))

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.n))]
        return {c: col[i] for c, col in self.columns.items()}

    def column(self, name) -> Column:
        return self.columns[name]

    def values(self, name, at=None) -> list:
        return self.columns[name].values(at)

    def __eq__(self, other):
        return list(self) == list(other)

    __hash__ = None   # type: ignore[assignment]


def _pool():
    """The memory pool of our pyarrow calls: the system's allocator (pyarrow's default, mimalloc,
    kept ~60 MB more of a 1M-rating file resident, and page faults doubled the system time)."""
    import pyarrow as pa

    return pa.system_memory_pool()


# -- arrays in and out of pyarrow without pandas: pyarrow's own conversions (``pa.array``,
# ``to_numpy``, ``to_pylist``, ``pa.scalar``) import pandas, 0.3-0.5 s of a run that needs none of it
def _ints(array) -> np.ndarray:
    """The values of a pyarrow integer array without nulls, as a numpy view."""
    dtype = np.dtype(f"int{array.type.bit_width}")
    return np.frombuffer(array.buffers()[1], dtype=dtype)[array.offset:array.offset + len(array)]


def _index_array(codes):
    """A pyarrow int32 or int64 array of the integer array ``codes`` (int32 ones as they are)."""
    import pyarrow as pa

    if codes.dtype == np.int32:
        return pa.Array.from_buffers(pa.int32(), len(codes), [None, pa.py_buffer(np.ascontiguousarray(codes))])
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(codes), [None, pa.py_buffer(codes)])


def _strings(labels):
    """A pyarrow large_string array of the texts ``labels``."""
    import pyarrow as pa

    data = "".join(labels)
    if data.isascii():   # a character a byte: the lengths are the texts'
        sizes, data_bytes = map(len, labels), data.encode("ascii")
    else:
        enc = [v.encode("utf-8") for v in labels]
        sizes, data_bytes = map(len, enc), b"".join(enc)
    offsets = np.zeros(len(labels) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(sizes, dtype=np.int64, count=len(labels)), out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(labels), [None, pa.py_buffer(offsets),
                                                                   pa.py_buffer(data_bytes)])


def _run_heads(array, sample: int = 1000):
    """The first row of each run of equal texts in a pyarrow string array, where runs are long enough
    to be worth it (a sample of the rows says: a third or more equal their neighbour); else None."""
    import pyarrow.compute as pc

    n = len(array)
    if n < 2 * sample:
        return None
    head = _texts(array.slice(0, sample))
    if sum(a == b for a, b in zip(head, head[1:])) * 3 < sample:
        return None
    same = pc.equal(array.slice(1), array.slice(0, n - 1), memory_pool=_pool())
    bits = np.unpackbits(np.frombuffer(same.buffers()[1], dtype=np.uint8), bitorder="little")
    return np.flatnonzero(np.concatenate([[True], ~bits[same.offset:same.offset + n - 1].astype(bool)]))


def first_seen(values):
    """``(codes, distinct)`` of an integer array: its distinct values in the order of first
    appearance and the place of each value among them (pyarrow's hash kernel, not a sort)."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(_index_array(values), memory_pool=_pool())
    return _ints(enc.indices), _ints(enc.dictionary)


def distinct_lower(array) -> int:
    """How many distinct texts the ASCII texts of a pyarrow array have in lower case (in C)."""
    import pyarrow.compute as pc

    return len(pc.unique(pc.ascii_lower(array, memory_pool=_pool()), memory_pool=_pool()))


def _texts(array) -> list:
    """The texts of a pyarrow string array without nulls or line ends, as a list: joined with a
    line end after each (in C), decoded and split."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(array) == 0:
        return []
    array = array.cast(pa.large_string())
    empty, end = _strings(["", "\n"])
    joined = pc.binary_join_element_wise(array, empty, end, memory_pool=_pool())
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int64)[joined.offset:joined.offset + len(joined) + 1]
    text = memoryview(joined.buffers()[2])[offsets[0]:offsets[-1]].tobytes().decode("utf-8")
    return text.split("\n")[:-1]


# -- reading -----------------------------------------------------------------------------
def _line_spans(data: bytes):
    """``(start, end)`` byte offsets of each line of ``data`` (without its ``\\n``)."""
    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    starts = np.concatenate([[0], nl + 1])
    ends = np.concatenate([nl, [len(data)]])
    if starts[-1] == len(data):   # the text ends with a line end: no further line
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends


#: Bytes that cannot start a line of a table whose records are its lines without a closer look: a
#: line end (an empty line), a space or control character, a byte of a non-ASCII character (a space of
#: another kind?); the separator is added (:func:`read_columns`).
_ODD_START = b"\n\t\x0b\x0c\r\x1c\x1d\x1e\x1f " + bytes(range(128, 256))


def read_columns(text: str, delimiter: str, field_limit: int):
    """``(header cells, header's line, Rows, line number of each row)`` of a CSV text where each record is one
    line, read by pyarrow; None where the text needs :func:`ratercal_cli.io.read_table`'s reader:
    a quote character, a lone carriage return, a line of only spaces and separators, a field over
    ``field_limit`` characters, rows of unequal length, unnamed columns right of the table.

    Where no line after the first is empty or starts with a space, a separator or a non-ASCII
    character (one search of the text), line k + 2 is row k; else the lines are found one by one
    (:func:`_lines_of`) and those of only spaces and separators, blank rows to csv's reader, are looked for."""
    cr = text.count("\r")
    if '"' in text or (cr and cr != text.count("\r\n")):
        return None
    if len(delimiter) != 1 or not delimiter.isascii():
        return None
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:   # pragma: no cover - a dependency
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:   # a lone surrogate: the row-by-row reader keeps it
        return None
    odd = re.compile(b"[\n][" + re.escape(_ODD_START + delimiter.encode()) + b"]")
    head_end = data.find(b"\n")
    if data[:1] and data[:1] not in _ODD_START + delimiter.encode() and not odd.search(data):
        head_at, first = 0, len(data) if head_end < 0 else head_end + 1
        head_line = data[:first].rstrip(b"\n").rstrip(b"\r").decode("utf-8")
        lines = None   # (each row's line: made from the rows' count)
    else:
        got = _lines_of(data, delimiter)
        if got is None:
            return None
        head_at, head_line, first, lines = got
    if len(head_line) > field_limit:
        return None
    header = next(csv.reader(io.StringIO(head_line, newline=""), delimiter=delimiter))
    names = [c.strip() for c in header]
    if len(names) > 1 and not names[-1]:   # unnamed columns right of the table
        return None
    if first >= len(data) or (lines is not None and not lines.size):
        return header, head_at + 1, Rows(names, {c: Column(np.zeros(0, dtype=np.int64), []) for c in names}, 0), \
            np.zeros(0, dtype=np.int64)
    keys = [f"c{k}" for k in range(len(header))]
    try:
        table = pcsv.read_csv(
            pa.py_buffer(data).slice(first), memory_pool=_pool(),
            read_options=pcsv.ReadOptions(column_names=keys, use_threads=False, block_size=max(1 << 20, len(data) + 1)),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                             escape_char=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys(keys, pa.string()),
                                                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowException):   # a row of another length: the loop says which
        return None
    del data
    n = table.num_rows
    if lines is None:
        lines = np.arange(2, n + 2, dtype=np.int64)
    if n != lines.size:
        return None
    arrays = []
    for k in keys:
        chunks = table.column(k)
        arrays.append(chunks.chunk(0) if chunks.num_chunks == 1 else chunks.combine_chunks())
        if _longest(arrays[-1]) > field_limit:   # (in bytes: a character is one or more)
            return None
    return header, head_at + 1, Rows(names, {name: Column.from_arrow(a) for name, a in zip(names, arrays)}, n), lines


def _longest(array) -> int:
    """The most bytes of a text in a pyarrow string (or large_string) array."""
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if str(array.type) == "large_string" else np.int32)
    offsets = offsets[array.offset:array.offset + len(array) + 1]
    block = 1 << 16   # (a block at a time: no array of a million lengths)
    return max((int(np.diff(offsets[a:a + block + 1]).max()) for a in range(0, len(array), block)), default=0)


def _lines_of(data: bytes, delimiter: str):
    """``(index of the header's line, its text, where the rows start, the line number of each row)`` of a
    text with empty lines or lines that start with a space, a separator or a non-ASCII character; None
    where a line is of only spaces and separators (a blank row to csv's reader, not a row of blanks)."""
    starts, ends = _line_spans(data)
    length = ends - starts
    if b"\r\n" in data:   # the line's length without its carriage return
        length = length - ((np.frombuffer(data, dtype=np.uint8)[np.maximum(ends - 1, 0)] == 13) & (length > 0))
    filled = np.flatnonzero(length > 0)
    if filled.size == 0:
        return None
    # each line must have a byte that is neither a space nor a separator (a byte of a non-ASCII
    # character might be a space of another kind: such a line is left to the reader too)
    content = np.ones(256, dtype=bool)
    content[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32, ord(delimiter)]] = False
    content[128:] = False
    raw = np.frombuffer(data, dtype=np.uint8)
    maybe = filled[~content[raw[starts[filled]]]]   # (a line that starts with a letter is not blank)
    if maybe.size > 1000:
        if not np.logical_or.reduceat(content[raw], starts[filled]).all():
            return None
    elif any(not content[raw[starts[k]:ends[k]]].any() for k in maybe.tolist()):
        return None
    head_at = int(filled[0])
    head_line = data[starts[head_at]:starts[head_at] + length[head_at]].decode("utf-8")
    body = filled[1:]
    return head_at, head_line, int(starts[body[0]]) if body.size else len(data), body.astype(np.int64) + 1


# -- writing -----------------------------------------------------------------------------
def csv_cells(labels, delimiter: str, newline: str, joined=None) -> list:
    """Each text as ``csv.writer`` writes it as one of several cells of a row: quoted (quotes
    doubled) only where it holds the separator, a quote or a line end; the writer itself decides,
    called only for the texts that hold one of them."""
    out = list(labels)
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator=newline)
    for k in labels_matching(out, delimiter + '"\r\n' + newline, joined=joined):
        buf.seek(0)
        buf.truncate()
        w.writerow([out[k]])
        out[k] = buf.getvalue()[:-len(newline)]
    return out


def _cells(column: Column, delimiter: str, newline: str, quoted: bool = False):
    """The labels of ``column`` as CSV cells (:func:`csv_cells`; ``quoted``: they are), a pyarrow
    array: the reader's own where quoting changes none."""
    cells = column.labels if quoted else csv_cells(column.labels, delimiter, newline, column.joined())
    if column.arrow is not None and cells == column.labels:
        return column.arrow.cast("large_string")
    return _strings(cells or [""])


def write_columns(fh, header, columns, delimiter: str = ",", newline: str = "\n") -> None:
    """Write ``header`` (texts) and ``columns`` (:class:`Column` s of equal length, labels as the
    cells' texts) as CSV to the binary file ``fh``, in UTF-8; cells quoted as ``csv.writer`` quotes
    them (:func:`csv_cells`).  Neighbouring columns of few labels are written as one (:func:`_merged`:
    a rating's flag and adjusted scores have a few hundred combinations); the rows are joined by
    pyarrow (C), a block of rows at a time."""
    import pyarrow.compute as pc

    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator=newline).writerow(header)
    fh.write(buf.getvalue().encode("utf-8"))
    if not columns:
        return
    n = len(columns[0])
    parts = _merged(columns, delimiter, newline)
    # the line end is the last column's: each row's cells joined by the separator are its line
    cells = [_cells(c, delimiter, newline, quoted) for c, quoted in parts[:-1]]
    last, quoted = parts[-1]
    last_cells = last.labels if quoted else csv_cells(last.labels, delimiter, newline)
    cells.append(_strings([v + newline for v in last_cells] or [""]))
    codes = [c.codes for c, _ in parts]
    sep = _strings([delimiter])[0]
    block = 1 << 18   # (a block's cells and lines: ~20 MB)
    for a in range(0, n, block):
        taken = [pc.take(lab, _index_array(c[a:a + block]), memory_pool=_pool()) for lab, c in zip(cells, codes)]
        lines = pc.binary_join_element_wise(*taken, sep, memory_pool=_pool()) if len(taken) > 1 else taken[0]
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset:lines.offset + len(lines) + 1]
        _write_all(fh, memoryview(lines.buffers()[2])[offsets[0]:offsets[-1]])


def _same(a: Column, b: Column) -> bool:
    """Do the columns hold the same texts on every row (the same labels, the same codes)?"""
    return a is b or (len(a.labels) == len(b.labels) and np.array_equal(a.codes, b.codes) and a.labels == b.labels)


def _write_all(fh, data) -> None:
    """Write all of the bytes ``data`` to ``fh``: a buffered writer may write only part of a write larger
    than its buffer and say so by its return value (into a pipe whose reader left, Python 3.11 returned
    65,536 of 600,000 bytes without an error: ``adjust -o - | head -1`` ended with status 0, the rest of
    the output lost without a word); the next write raises the error (BrokenPipeError)."""
    view = memoryview(data).cast("B")
    while view.nbytes:
        n = fh.write(view)
        if not n:   # (a non-blocking stream that would block: none of ours)
            raise BlockingIOError(f"the output took none of {view.nbytes} bytes")
        view = view[n:]


def _merged(columns, delimiter: str, newline: str, most: int = 1 << 16) -> list:
    """``[(column, quoted)]``: runs of neighbouring columns whose label counts multiply to at most
    ``most`` made one column (its labels the cells joined by ``delimiter``, already quoted), and so
    runs of a column written again as it is (:func:`_same`: a Rasch model's adjusted score of each
    rating and of its paper, 41,634 labels each at 1M ratings, 3 of 200 raters a paper), the others as
    they are (not yet quoted)."""
    runs: list = []
    repeats: list = []   # (each run: a column and its repeats)
    for c in columns:
        if runs and not repeats[-1] and len(c.labels) * math.prod(len(x.labels) for x in runs[-1]) <= most:
            runs[-1].append(c)
        elif runs and (len(runs[-1]) == 1 or repeats[-1]) and _same(runs[-1][0], c):
            runs[-1].append(c)
            repeats[-1] = True
        else:
            runs.append([c])
            repeats.append(False)
    out = []
    for run, repeated in zip(runs, repeats):
        if len(run) == 1:
            out.append((run[0], False))
            continue
        if repeated:   # its cells a few times over, on its codes
            cells = csv_cells(run[0].labels, delimiter, newline)
            out.append((Column(run[0].codes, [delimiter.join([t] * len(run)) for t in cells]), True))
            continue
        sizes = [max(len(c.labels), 1) for c in run]
        combined = np.zeros(len(run[0]), dtype=np.int64)
        for c, size in zip(run, sizes):
            combined = combined * size + c.codes
        used = np.flatnonzero(np.bincount(combined, minlength=math.prod(sizes)))
        at = np.zeros(math.prod(sizes), dtype=np.int64)
        at[used] = np.arange(used.size)
        texts = [csv_cells(c.labels, delimiter, newline) for c in run]
        digits = np.unravel_index(used, sizes)
        labels = [delimiter.join(t[k] for t, k in zip(texts, combo)) for combo in zip(*(d.tolist() for d in digits))]
        out.append((Column(at[combined], labels), True))
    return out


def _join(labels) -> str:
    return "\0" + "\0".join(labels)


def labels_matching(labels, chars: str, start: bool = False, joined=None) -> list:
    """The indices of the ``labels`` that hold one of the characters ``chars`` (``start``: that
    start with one), found by searches over all of them joined (no label may hold a NUL, which
    joins them): where none holds one, a search for each character; else one regular expression."""
    if not labels:
        return []
    joined = _join(labels) if joined is None else joined
    # one character is found at memchr's speed; "\0=" is not (its NUL is everywhere): only where "=" is
    if not any(c in joined and (not start or "\0" + c in joined) for c in chars):
        return []
    pattern = "[" + re.escape(chars) + "]"
    found = [m.start() for m in re.finditer("\0" + ("" if start else "[^\0]*?") + pattern, joined)]
    if not found:
        return []
    starts = np.zeros(len(labels), dtype=np.int64)
    np.cumsum(np.fromiter(map(len, labels), dtype=np.int64, count=len(labels))[:-1] + 1, out=starts[1:])
    return (np.searchsorted(starts, np.array(found, dtype=np.int64), side="right") - 1).tolist()


#: ``"{:.Nf}"``: the formats :func:`fixed_column` writes in C
FIXED_FORMAT = re.compile(r"\{:\.([0-9])f\}")


def fixed_column(values, digits: int, mark: str = ".", nonfinite: str | None = None) -> Column:
    """``"{:.{digits}f}".format(v)`` of each float of ``values`` (decimal mark ``mark``) as a
    :class:`Column`, the same texts byte for byte, made in C where that is sure to give them:
    ``|v| 10^digits`` rounded to the nearest integer by numpy and its digits written by pyarrow.
    ``str.format`` rounds the value's exact binary expansion; the product ``y`` is within ``y 2^-53``
    of the exact one, so the nearest integer is the same wherever ``y`` lies farther than ``y 2^-50``
    from a half (ties such as 0.03125 at 4 digits, round half to even, and values past 2^42) — the
    rest, and non-finite values, go through ``str.format`` itself (``nonfinite``: the text of a
    non-finite value instead).  A text is made once for each rounded integer and sign, not for each
    distinct value: a million-rating MML's adjusted scores are a paper's each, 333,000 distinct
    values at 3 of 200 raters a paper but 49,000 texts at 4 digits (0.14 -> 0.02 s a column, where
    each distinct value was found by hashing and formatted), and a run of equal values (a paper's
    lines) is looked at once (0.012 -> 0.005 s a column at 21 lines a paper)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    v = np.asarray(values, dtype=np.float64).ravel()
    bits = v.view(np.int64)
    starts = np.flatnonzero(np.r_[True, bits[1:] != bits[:-1]]) if v.size else np.zeros(0, dtype=np.int64)
    if 2 * starts.size <= v.size:   # runs of equal values (a paper's lines together): each run's value once
        runs = fixed_column(v[starts], digits, mark, nonfinite)
        return Column(np.repeat(runs.codes, np.diff(np.r_[starts, v.size])), runs.labels)
    with np.errstate(invalid="ignore", over="ignore"):
        y = np.abs(v) * 10.0 ** digits
        frac = y - np.floor(y)
        sure = np.isfinite(y) & (y < 2.0 ** 42) & (np.abs(frac - 0.5) > y * 2.0 ** -50)
    every = bool(sure.all())
    # a text per (rounded |v| 10^digits, sign): twice the integer, plus one where negative
    key = np.rint(y if every else np.where(sure, y, 0.0)).astype(np.int64) * 2 + np.signbit(v)
    if not every:
        key = key[sure]
    top = int(key.max(initial=0))
    if top < 4 * key.size + 1024:   # (as a rating's scores are: a count per integer, no sort)
        present = np.bincount(key, minlength=top + 1) > 0
        distinct = np.flatnonzero(present)
        codes = (np.cumsum(present) - 1)[key]
    else:
        distinct, codes = np.unique(key, return_inverse=True)
    whole, part = np.divmod(distinct >> 1, 10 ** digits)
    signs = _strings(["", "-"])
    nothing, point = _strings(["", mark])
    text = pc.binary_join_element_wise(pc.take(signs, _index_array(distinct & 1)),
                                       pc.cast(_index_array(whole), pa.large_string()), nothing)
    if digits:
        part_text = pc.utf8_lpad(pc.cast(_index_array(part), pa.large_string()), digits, "0")
        text = pc.binary_join_element_wise(text, part_text, point)
    labels = _texts(text)
    if every:
        return Column(codes.ravel(), labels)
    # the rest: each distinct value (by its bits: -0.0 is not 0.0) by str.format
    odd, where = np.unique(v[~sure].view(np.int64), return_inverse=True)
    out = np.empty(v.size, dtype=np.int64)
    out[sure] = codes.ravel()
    out[~sure] = len(labels) + where.ravel()
    fmt = "{:.%df}" % digits
    labels += [fmt.format(x).replace(".", mark) if nonfinite is None or np.isfinite(x) else nonfinite
               for x in odd.view(np.float64).tolist()]
    return Column(out, labels)


def fixed_texts(values, digits: int, mark: str = ".") -> list:
    """The texts of :func:`fixed_column`, one per value, as a list."""
    return fixed_column(values, digits, mark).values()
