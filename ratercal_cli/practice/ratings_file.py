"""A practitioner's ratings file: read, validate, resolve discrepancies, write adjusted.

Input: CSV or TSV (sniffed), one rating per line, with columns for the paper, the
rater and the score (names configurable), optionally a grouping column (e.g. grade)
whose groups are analysed separately, as Denny analysed each grade.  Other columns
are carried through to the output untouched.

Scores are whole numbers on a scale ``low..high`` (``--scale 0-5``); internally a
group's :class:`~ratercal_cli.ratings.Ratings` holds ``score - low`` on ``0..M``
with ``M = high - low``, and adjusted scores are shifted back on output.

A blank score (or ``NA``, ``N/A``, ``.``, ``NaN``) is a missing rating: skipped with
a warning.  Anything else that is not a whole number on the scale, a duplicate
(paper, rater) pair in a group, a blank paper or rater, a missing column or an
empty file is an :class:`~ratercal_cli.errors.InputError` naming file, line and
field.

Output (:func:`write_adjusted`): the input columns, then ``flag`` and, per method
``X``, ``X`` (the rating's adjusted score) and ``X_paper`` (its paper's adjusted
score).  ``flag`` is blank for an ordinary rating, ``resolved`` for a rating kept on
a paper whose discrepancy was resolved, ``dropped`` for the rating the resolution
removed (no adjusted score), ``unresolved`` for a rating on a paper with a third
rating that was not resolved (``--resolve-discrepancies`` not given), ``many``
for a rating on a paper with four or more ratings (the third-reading rule covers three:
all are used), ``missing`` for a rating without a usable score, ``thin`` for an otherwise
ordinary rating by a rater with fewer than :data:`~ratercal_cli.methods.base.MIN_RATINGS`
usable ratings (every corrected method leaves its ratings unadjusted), ``left out`` for a rating by a
rater named in ``--leave-out`` (no adjusted score; its paper scored from its other ratings).
"""

from __future__ import annotations

import codecs
import datetime
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..columnar import (_ASCII_SPACE, FIXED_FORMAT, Column, Rows, distinct_lower, first_seen, fixed_column,
                        labels_matching, read_columns, write_columns)
from ..design import keep_first, needs_third
from ..errors import ArgumentError, InputError, arg, mention
from ..guard import snippet
from ..io import FIELD_LIMIT, check_text, find_column, open_output, paused_gc, read_table, read_text, sniff_delimiter
from ..methods.base import MIN_RATINGS
from ..ratings import MAX_SCALE_POINTS, Adjusted, Ratings, Scale, checked_scale, natural_key, parse_scale  # noqa: F401
from ..ratings import FRAME_ARGS, frame_ratings, is_frame
from ..vocabulary import adjusted_columns
from .wide import CRITERION, melt_columns

#: a score's cell read as a rating not given (compared in lower case): blank, the usual codes, Excel's ``#N/A``
#: and the dashes a sheet shows for no value (they stopped a staff tester's run as "not a number")
MISSING_TOKENS = frozenset({"", "na", "n/a", "#n/a", ".", "nan", "null", "none", "-", "\u2013", "\u2014"})

#: Per-row flags written to the ``flag`` column.
FLAG_OK, FLAG_RESOLVED, FLAG_DROPPED, FLAG_UNRESOLVED, FLAG_MISSING, FLAG_MANY, FLAG_THIN, FLAG_LEFT_OUT = FLAGS = (
    "", "resolved", "dropped", "unresolved", "missing", "many", "thin", "left out")
#: The code of each flag in :attr:`RatingsTable.flag_codes` (its place in :data:`FLAGS`).
OK, RESOLVED, DROPPED, UNRESOLVED, MISSING, MANY, THIN, LEFT_OUT = range(len(FLAGS))


# -- what a file holds ---------------------------------------------------------------
@dataclass(frozen=True)
class Columns:
    """Names of the columns that matter (``group=None``: one group)."""

    paper: str = "paper"
    rater: str = "rater"
    score: str = "score"
    group: str | None = None
    #: the order in which a paper's ratings were given (the third-reading rule needs the
    #: first two); None: a column named ``order`` if the file has one, else file order
    order: str | None = None
    #: further facets of a rating (``--facet-col criterion``): a paper has one rating per rater in
    #: each combination of their levels
    facets: tuple = ()


#: The column read as the reading order when :attr:`Columns.order` is not given.
DEFAULT_ORDER_COLUMN = "order"


@dataclass
class RatingsGroup:
    """One group's ratings and where they came from.

    ``rows[i]`` is the index (into :attr:`RatingsTable.rows`) of rating ``i`` of
    ``ratings``; ``file_rows`` are all the group's rows (missing scores too), in file order;
    ``paper_at`` the paper (index into ``ratings.paper_ids``, -1: none) of each of ``file_rows``.
    """

    name: str | None
    ratings: Ratings
    rows: np.ndarray
    file_rows: np.ndarray | None = None
    paper_at: np.ndarray | None = None


@dataclass
class RatingsTable:
    """A read ratings file: the raw rows, the validated groups, flags and warnings."""

    path: Path
    header: list
    rows: Rows                       # the cells as read (``rows[i][column]``), held a column at a time
    lines: np.ndarray                # file line number of each row
    columns: Columns
    scale: Scale
    groups: list = field(default_factory=list)
    #: each row's flag as its code in :data:`FLAGS` (an int8 array: a list of a million texts took
    #: 0.1 s to fill and write); :attr:`flags` gives the texts
    flag_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    warnings: list = field(default_factory=list)
    delimiter: str = ","
    scale_inferred: bool = False
    order_column: str | None = None   # the column giving the order of reading, if any
    #: how the input was written, kept by the output: a UTF-8 byte-order mark, the line ends, and
    #: the decimal mark of a file separated by ';' or tabs (``--decimal comma``)
    bom: bool = False
    newline: str = "\n"
    decimal: str = "."
    #: lookalike labels: per column, groups of labels that differ only in case, spacing or
    #: Unicode form (:func:`lookalike_groups`); folded into one when read with ``fold_labels``
    lookalikes: dict = field(default_factory=dict)
    #: a wide input (:mod:`.wide`): ``(its header, the wide columns, "criterion" or "rater")``; the
    #: output keeps its layout (:mod:`.output`)
    wide: tuple | None = None
    #: the sheet of a workbook input (None: a text file)
    sheet: str | None = None

    @property
    def flags(self) -> list:
        """Each row's flag (:data:`FLAGS`), as a list of texts."""
        return np.array(FLAGS, dtype=object)[self.flag_codes].tolist()

    def flag_column(self) -> Column:
        """The ``flag`` column of the output."""
        return Column(self.flag_codes, list(FLAGS))

    @property
    def ratings(self) -> Ratings:
        """The groups' ratings as one :class:`Ratings` (``group`` per rating when the file has a group
        column; :meth:`Ratings.by_group` gives :attr:`groups`' ratings back), named after the file,
        with the warnings of reading as its ``notes``."""
        return Ratings.from_groups([(g.name, g.ratings) for g in self.groups], self.columns.group,
                                   scale_low=self.scale.low, source=str(self.path), notes=tuple(self.warnings))


#: The order of raters and groups (R1, R2, ..., R10), the one of :mod:`ratercal_cli.ratings`.
_natural_key = natural_key


# -- labels that look alike ----------------------------------------------------------
#: Characters that show as nothing: zero-width space, non-joiner, joiner, word joiner, BOM, soft hyphen.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)


#: Leading zeros of a number in a label (``007``, ``R07``; not ``1.05``'s): a spreadsheet's number cell 7
#: and text cell "007" name one rater.
_LEADING_ZEROS = re.compile(r"(?<![0-9.])0+(?=[0-9])")
#: ... and a whole number's decimal zeros (``3.0``, ``R3.00``; not ``2.50``'s): an integer column that had a
#: blank, exported by pandas as floats, wrote rater 3 as "3.0" (a tester's file: rater "3.0" of 3 papers,
#: apart from "3", stopped the adjustment of every paper, unwarned)
_POINT_ZEROS = re.compile(r"(?<=[0-9])\.0+(?![0-9])")


def label_key(label: str, confusables: bool = False, zeros: bool = False) -> str:
    """What a label looks like to a reader: Unicode compatibility form (NFKC: a precomposed and a
    decomposed "Zoë" are one), invisible characters removed, runs of whitespace as one space,
    case folded; with ``zeros``, a number's leading zeros and a whole number's decimal zeros dropped
    (``007``, ``7.0`` and ``7``); with
    ``confusables``, then Unicode's confusable skeleton (UTS #39, :func:`.skeleton.skeleton`: a
    Cyrillic "Аdams" and "Adams" are one).  Two labels with the same key are lookalikes."""
    if not label.isascii():
        label = unicodedata.normalize("NFKC", label).translate(_INVISIBLE)
    key = " ".join(label.split()).casefold()
    if zeros and "0" in key:
        key = _POINT_ZEROS.sub("", _LEADING_ZEROS.sub("", key))
    if confusables:
        from .skeleton import skeleton

        key = skeleton(key).casefold()
    return key


def lookalike_groups(labels) -> list:
    """Groups (lists, most used first, then first seen) of the distinct ``labels`` that share a
    :func:`label_key`; ``labels`` in file order, repeats counted.  Where some label is not ASCII,
    the keys are confusable skeletons (a column of ASCII labels keeps ``R1`` and ``Rl`` apart: they
    are typed, not pasted from another script).  Keys of the distinct labels only; counted only
    where there are lookalikes."""
    labels = list(labels)
    return _lookalikes(list(dict.fromkeys(labels)), lambda: Counter(labels))   # first seen first


def _lookalikes(distinct, counts, joined=None, arrow=None, confusable=False, zeros=False) -> list:
    """:func:`lookalike_groups` of the ``distinct`` labels (first seen first); ``counts()`` gives
    ``{label: rows}`` (called only where there are lookalikes).  Where every label is ASCII, the keys
    of the labels without a space are their lower case, made in one call over all of them (500k
    paper labels: 0.7 s a label at a time), and :func:`label_key` is called for the others.  ``arrow``:
    the labels as a pyarrow array, whose lower case is counted there where no label has a space."""
    joined = joined or "\0" + "\0".join(distinct)      # (no label holds a NUL: the file is refused)
    skel = confusable or not joined.isascii()
    if skel or zeros:
        keys = [label_key(lab, skel, zeros) for lab in distinct]
    else:
        spaced = labels_matching(distinct, _ASCII_SPACE, joined=joined)
        # (with no lower-case letter, or none in upper case, no two labels differ only in case)
        if not spaced and (joined.upper() == joined or joined.lower() == joined):
            return []
        if arrow is not None and not spaced and distinct_lower(arrow) == len(distinct):
            return []
        keys = joined.lower().split("\0")[1:] if distinct else []
        for k in spaced:
            keys[k] = label_key(distinct[k])
    if len(set(keys)) == len(keys):
        return []
    by_key: dict = {}
    for key, lab in zip(keys, distinct):
        by_key.setdefault(key, []).append(lab)
    return _most_used_first([g for g in by_key.values() if len(g) > 1], counts)


def _most_used_first(groups, counts) -> list:
    """Each group of lookalike labels sorted most used first (``counts()``: ``{label: rows}``, called only
    where there is a group): the spelling ``--fold-labels`` keeps first."""
    if not groups:
        return []
    n = counts()
    return [sorted(g, key=lambda lab: -n[lab]) for g in groups]


#: A label that is a whole number (``000123``, ``123.0``), in the NUL-joined labels: its leading zeros, digits
#: and decimal zeros
_WHOLE_NUMBER = re.compile(r"\x00(0*)([0-9]+)(\.0+)?(?=\x00|$)")


def _zero_led_numbers(distinct, counts, joined=None) -> list:
    """Groups (most used first) of the ``distinct`` labels that are one whole number with and without
    leading zeros or decimal zeros (``000123``, ``123.0`` and ``123``: a spreadsheet's number cell and a
    text cell of one student's id).  For a paper column, too long for :func:`label_key` a label: one scan of
    the joined labels, none at all where no label starts with 0 or has ``.0``."""
    joined = joined or "\0" + "\0".join(distinct)
    if "\x000" not in joined and ".0" not in joined:
        return []
    by_number: dict = {}
    for zeros, digits, point in _WHOLE_NUMBER.findall(joined):
        if zeros or point:
            by_number.setdefault(digits, []).append(zeros + digits + point)
    present = set(distinct)
    # (the zero-padded spelling first: kept on a tie by --fold-labels, the ids' own format, which a number
    # cell lost)
    groups = [g + ([d] if d in present else []) for d, g in by_number.items()]
    return _most_used_first([g for g in groups if len(g) > 1], counts)


def _show(label) -> str:
    """A label in quotes as it shows ('Müller, H.', accents and all), but for the characters that do
    not show plainly: invisible ones, unusual spaces and combining marks are written as escapes
    ('R1\\u200b', 'Zoe\\u0308'), so two lookalikes differ on the screen."""
    shown = "".join(ch if ch == " " or (ch.isprintable() and not unicodedata.category(ch).startswith("M")
                                        and not _looks_ascii(ch))
                    else ascii(ch)[1:-1] for ch in label)
    quote = '"' if "'" in shown and '"' not in shown else "'"
    return f"{quote}{shown}{quote}"


def _looks_ascii(ch) -> bool:
    """A character not ASCII that Unicode's confusables take for an ASCII one (Cyrillic А for A):
    written as an escape, so "Аdams" and "Adams" differ on the screen."""
    if ch.isascii():
        return False
    from .skeleton import prototypes

    p = prototypes().get(ch)
    return p is not None and p.isascii()


WHY = "differ only in case, spacing, Unicode form or lookalike characters of another script"
#: ... raters whose ASCII labels differ only in characters that look alike (R1 and Rl)
WHY_ASCII = "differ only in characters that look alike (1 and l, 0 and O: a typing slip?)"
#: ... labels that differ only in a number's leading zeros
WHY_ZEROS = "differ only in leading zeros (7 and 007: a number cell and a text cell of a spreadsheet?)"
#: ... or in a whole number's decimal zeros
WHY_POINT = ("differ only in how a number is written (3 and 3.0: a column of whole numbers exported as decimals, as "
             "pandas writes one with a blank cell?)")


def _why(group) -> str:
    """:data:`WHY`, :data:`WHY_ZEROS` for labels that differ only in a number's leading zeros or :data:`WHY_POINT`
    in its decimal zeros too, or :data:`WHY_ASCII` for ASCII labels that differ by more than case and spacing."""
    if len({label_key(lab) for lab in group}) > 1 and len({label_key(lab, zeros=True) for lab in group}) == 1:
        leading = {_LEADING_ZEROS.sub("", label_key(lab)) for lab in group}
        return WHY_ZEROS if len(leading) == 1 else WHY_POINT
    ascii_only = all(lab.isascii() for lab in group)
    return WHY_ASCII if ascii_only and len({label_key(lab) for lab in group}) > 1 else WHY


def _lookalike_warnings(path, column, kind, groups, folded, limit=5):
    if not groups:
        return []
    why = {_why(g) for g in groups}
    why = why.pop() if len(why) == 1 else WHY
    if folded:
        text = "; ".join(f"{_show(g[0])} <- {', '.join(map(_show, g[1:]))}" for g in groups[:limit])
        more = f"; and {len(groups) - limit} more" if len(groups) > limit else ""
        return [f"{path}: {column}: {len(groups)} group(s) of {kind} labels that {why} folded into one label "
                f"each ({mention('fold_labels', True)}): {text}{more}"]
    if kind == "rater":
        return [f"{path}: {column}: raters {' and '.join(map(_show, g))} {_why(g)} and are counted as different "
                f"raters (give {mention('fold_labels', True)} to merge them)"
                for g in groups]
    text = "; ".join(" / ".join(map(_show, g)) for g in groups[:limit])
    more = f"; and {len(groups) - limit} more" if len(groups) > limit else ""
    return [f"{path}: {column}: {len(groups)} group(s) of {kind} labels {why} and are counted as different "
            f"{kind}s: {text}{more} (give {mention('fold_labels', True)} to merge them)"]


def _check_lookalikes(rows: Rows, columns, path, fold, warnings, lines=None):
    """Warn of (or, ``fold``, merge) lookalike labels in the paper, rater and group columns; in a
    facet's column (a rubric's criteria) they are an error unless folded: "voice" and "Voice" made a
    fifth criterion and rubric totals above the top of the rubric (issue 28).  On the columns'
    distinct labels."""
    found = {}
    for kind, col in (("rater", columns.rater), ("paper", columns.paper), ("group", columns.group),
                      *(("facet", f) for f in columns.facets)):
        if col is None:
            continue
        column = rows.column(col)
        # (raters, few, by their confusable skeletons even where ASCII: "Rl" typed for "R1" was a rater of its own,
        # unwarned; a paper column, of many labels, only where some label is not ASCII)
        # (raters and groups, few, also by a number's leading zeros: 7 and "007" from a workbook were two raters)
        counts = lambda: dict(zip(column.labels, column.counts().tolist()))   # noqa: E731
        groups = _lookalikes(column.labels, counts, column.joined(), column.arrow, confusable=kind == "rater",
                             zeros=kind in ("rater", "group"))
        if kind == "paper":   # (a student's id 000123 in a text cell and 123 in a number cell: one paper)
            seen = {lab for g in groups for lab in g}
            groups += [g for g in _zero_led_numbers(column.labels, counts, column.joined())
                       if not seen.intersection(g)]
        if not groups:
            continue
        found[col] = groups
        if kind == "facet" and not fold:
            g = groups[0]
            line = int(lines[column.first_row([g[1]])]) if lines is not None else None
            raise InputError(f"levels {' and '.join(map(_show, g))} {WHY}; as different levels they would "
                             f"make {len(groups)} extra level(s) and totals over more cells than the rubric has "
                             f"(give {arg('fold_labels')} to merge them, or correct the file)", path, line, col)
        if fold:
            rows.columns[col] = column.remapped({lab: g[0] for g in groups for lab in g[1:]})
        warnings += _lookalike_warnings(path, col, kind, groups, fold)
    return found


# -- reading the file ----------------------------------------------------------------
@dataclass
class Source:
    """A table as read: header, rows ``(line, {column: text})``, and how it was written."""

    header: list
    rows: list
    delimiter: str = ","
    bom: bool = False
    newline: str = "\n"
    #: the sheet read, for a workbook (None: a text file)
    sheet: str | None = None
    #: warnings of reading it (a sheet's hidden rows, :func:`hidden_rows`)
    notes: tuple = ()
    #: a workbook's formulas with no saved value, ``{column: (row, formula)}`` (the first of each column): read
    #: as blank; :func:`read_ratings_file` refuses those of a column it reads (:func:`_unsaved_formulas`)
    formulas: dict = field(default_factory=dict)


#: What a spreadsheet file starts with (a zip archive): read by openpyxl, not as text.
_ZIP_MAGIC = b"PK\x03\x04"


def _first_bytes(path) -> tuple[Path, bytes]:
    """``(path, its first 4 bytes)`` of a regular file that exists and, unless a workbook, whose rows
    fit in memory: /dev/zero or a FIFO is refused before reading (they had no end), a text file too
    big for the machine before its rows are read."""
    from ..guard import regular_input

    path = Path(path)
    size = regular_input(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    kind = next((k for magic, k in _NOT_RATINGS if head.startswith(magic)), None)
    if kind is not None:   # (a PDF was told "not UTF-8 ... give --encoding latin-1", then "missing column(s) (found: %PDF-1.4)")
        raise InputError(f"{kind}, not a text export or an .xlsx workbook: export the ratings as CSV or .xlsx", path)
    if head != _ZIP_MAGIC:
        refuse_too_big_to_read(path, size)
    return path, head


#: What other files start with, and what they are (a staff tester's report saved as .csv).
_NOT_RATINGS = ((b"%PDF", "a PDF document"), (b"\xd0\xcf\x11\xe0", "an old-format Office file (.xls or .doc)"),
                (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"))


def _is_workbook(path: Path, head: bytes) -> bool:
    return head == _ZIP_MAGIC or path.suffix.lower() in (".xlsx", ".xlsm")


def _how_written(text: str, head: bytes, encoding) -> tuple[bool, str]:
    """``(bom, newline)`` of a text file: a UTF-8 (or UTF-16, written back as UTF-8) file with a
    byte-order mark is written back with one; so is a file of another encoding (``--encoding latin-1``)
    with a character beyond ASCII, since the output is UTF-8 and without the mark Excel reads it in the
    system's code page ("JosÃ©" for "José"); CRLF where its first 64 KiB have one, CR where they have CRs and no
    LF (a classic Mac export: written back with LF, an edge tester)."""
    utf8 = encoding is None or codecs.lookup(encoding).name.startswith("utf-8")
    bom = utf8 and head[:3] == codecs.BOM_UTF8 \
        or encoding is None and head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) \
        or not utf8 and not text.isascii()
    head_text = text[:1 << 16]
    return bom, "\r\n" if "\r\n" in head_text else "\r" if "\r" in head_text and "\n" not in head_text else "\n"


def _text_source(path: Path, head: bytes, text: str, required, delimiter, encoding, hint) -> Source:
    header, rows, delimiter = read_table(path, required=required, delimiter=delimiter, encoding=encoding,
                                         strip=False, text=text, hint=hint)
    return Source(header, rows, delimiter, *_how_written(text, head, encoding))


def _refuse_sheet(path, sheet) -> None:
    if sheet is not None:
        raise ArgumentError("sheet", "applies to an .xlsx workbook, and this is a text file", path)


#: How many of a file's first lines (a sheet's first rows) are searched for the header when the first
#: one lacks the columns: a title, a date and a blank line above an export's header are common.
HEADER_SEARCH = 20


def _header_below(hint, rows, required, word="line"):
    """``hint`` (text, or a function of the missing columns giving it) followed, where a later one of
    ``rows()`` (``(number, cells)`` of the file's first :data:`HEADER_SEARCH` lines) holds every
    ``required`` column, by the advice to delete the lines above it: a title line above the header
    ("Spring writing 2026", a merged cell over the table) was told to name the columns with
    --paper-col, --rater-col and --score-col, which cannot help."""
    from ..io import find_column

    def below(missing) -> str:
        base = hint(missing) if callable(hint) else hint
        for n, cells in rows():
            names = [c.strip() for c in cells]
            if n > 1 and all(find_column(names, c) is not None for c in required):
                return (f"; {word} {n} holds the columns {', '.join(required)}: delete the {word}(s) above it "
                        "(a title?) and read the file again")
        return base
    return below


def _text_rows(text, delimiter):
    """``(line, cells)`` of ``text``'s first :data:`HEADER_SEARCH` lines, split by ``delimiter`` (None:
    each line by the separator it looks separated by)."""
    import csv

    for n, line in enumerate(text.splitlines()[:HEADER_SEARCH], start=1):
        line = line.lstrip("\ufeff")
        sep = delimiter or sniff_delimiter(line + "\n")
        yield n, next(csv.reader([line], delimiter=sep), [])


def read_source(path, required, delimiter=None, encoding=None, sheet=None, hint="") -> Source:
    """The rows of a CSV/TSV (:func:`ratercal_cli.io.read_table`) or of one sheet of an ``.xlsx``
    workbook (:func:`read_xlsx`), cells as text."""
    path, head = _first_bytes(path)
    if _is_workbook(path, head):
        return read_xlsx(path, required, sheet, hint)
    _refuse_sheet(path, sheet)
    text, delimiter = _excel_sep(read_text(path, encoding), delimiter)
    return _text_source(path, head, text, required, delimiter, encoding,
                        _header_below(hint, lambda: _text_rows(text, delimiter), required))


#: Excel's first line naming a CSV file's separator (``sep=;``), which it writes and reads.
_SEP_LINE = re.compile(r"sep=(.)\r?\n")


def _excel_sep(text: str, delimiter):
    """``(text, delimiter)`` with Excel's first line ``sep=;`` read as the separator (unless one is given) and
    left blank (the lines keep their numbers): it was refused as a title above the columns' names (a verifier)."""
    m = _SEP_LINE.match(text)
    if m is None:
        return text, delimiter
    return "\n" + text[m.end():], delimiter or m.group(1)


@dataclass
class ColumnSource:
    """A table as read, a column at a time: header, :class:`~ratercal_cli.columnar.Rows`, the file
    line of each row, and how it was written (as :class:`Source`)."""

    header: list
    rows: Rows
    lines: np.ndarray
    delimiter: str = ","
    bom: bool = False
    newline: str = "\n"
    sheet: str | None = None
    notes: tuple = ()
    formulas: dict = field(default_factory=dict)


def read_source_columns(path, required, delimiter=None, encoding=None, sheet=None, hint="") -> ColumnSource:
    """:func:`read_source` a column at a time: a CSV/TSV whose records are its lines by pyarrow's
    reader (:func:`ratercal_cli.columnar.read_columns`), any other (quotes, blank-looking lines, a
    row of the wrong length: the errors name the line) by :func:`ratercal_cli.io.read_table` on the
    text already read, a workbook by :func:`read_xlsx`; the same header checks and errors either way."""
    from ..io import _header

    path, head = _first_bytes(path)
    if _is_workbook(path, head):
        src = read_xlsx(path, required, sheet, hint)
    else:
        _refuse_sheet(path, sheet)
        text, delimiter = _excel_sep(read_text(path, encoding), delimiter)
        check_text(text, path)
        hint = _header_below(hint, lambda: _text_rows(text, delimiter), required)
        sep = delimiter or sniff_delimiter(text)
        got = read_columns(text, sep, FIELD_LIMIT)
        if got is None:
            src = _text_source(path, head, text, required, delimiter, encoding, hint)
        else:
            cells, line, rows, lines = got
            header = _header(cells, required, sep, path, line, hint)
            return ColumnSource(header, rows, lines, sep, *_how_written(text, head, encoding))
    lines = np.fromiter((ln for ln, _ in src.rows), dtype=np.int64, count=len(src.rows))
    return ColumnSource(src.header, Rows.from_dicts(src.header, [r for _, r in src.rows]), lines, src.delimiter,
                        src.bom, src.newline, src.sheet, src.notes, src.formulas)


#: About the memory reading and adjusting a ratings file takes per byte of the file (its rows as
#: text and the arrays made of them): adjust -m NO on 1M ratings (14.6 MB, 800 raters) peaked at
#: 849 MB resident, 58 bytes a byte (issue 30 measured 5.8-9.0 GiB at 10M ratings).
READ_BYTES_PER_FILE_BYTE = 60


def refuse_too_big_to_read(path, size: int, per_byte: int = READ_BYTES_PER_FILE_BYTE) -> None:
    """An :class:`InputError` naming ``path`` when reading its ``size`` bytes would need more memory
    than the machine has (:func:`ratercal_cli.config.too_big`, as a config's design is bounded),
    before anything is read."""
    from ..config import too_big

    message = too_big(size * per_byte, f"reading this {size / (1 << 20):,.1f} MiB file")
    if message is not None:
        raise InputError(message + "; split it (e.g. by group) or use a machine with more memory", path)


#: A number format of zeros alone (``00000``): Excel shows a whole number padded to its width.
_ZERO_PADDED = re.compile(r"0+")


def _cell_text(v, number_format: str | None = None) -> str:
    """A spreadsheet cell as the text a CSV export would hold: whole numbers without ``.0`` (padded with
    zeros to the width of a ``number_format`` of zeros alone, ``00000``, as Excel shows them and saves them
    as CSV: a school's paper ids ``00123`` typed as numbers, which came back ``123`` and matched no id of
    its other files), a date (openpyxl's datetime at midnight) as the date alone (``2026-05-01``, not
    ``2026-05-01 00:00:00``)."""
    if v is None:
        return ""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
        text = str(int(v))
        if number_format and v >= 0 and _ZERO_PADDED.fullmatch(number_format):
            return text.zfill(len(number_format))
        return text
    if isinstance(v, datetime.datetime) and v.time() == datetime.time():
        return v.date().isoformat()
    return str(v)


def _row_text(row) -> list[str]:
    """A sheet's row of cells (openpyxl's) as :func:`_cell_text`s, each by its number format."""
    return [_cell_text(c.value, getattr(c, "number_format", None)) for c in row]


def _not_a_workbook(path, exc) -> str:
    """Why a file that starts as a zip archive (as an .xlsx does) is not read as a workbook: a zip of other
    files (a staff tester's zip named .csv was told openpyxl's "does not support .csv file format ... save
    it as CSV"), or a workbook openpyxl cannot open (its reason, in one line)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (OSError, zipfile.BadZipFile):
        names = None
    if names is not None and "[Content_Types].xml" not in names:
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        return (f"a zip archive ({shown or 'empty'}), not a text export or an Excel workbook: unzip it and give the "
                "file of ratings")
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"not readable as an .xlsx workbook ({type(exc).__name__}: {reason}); save the sheet as CSV from Excel"


def read_xlsx(path, required, sheet=None, hint="") -> Source:
    """One sheet (``sheet``, or the only one) of an Excel workbook, by openpyxl, as rows of text;
    wholly empty rows skipped, line numbers the sheet's row numbers."""
    try:
        import openpyxl
    except ImportError:   # pragma: no cover - a dependency
        raise InputError("reading .xlsx needs the openpyxl package; or save the sheet as CSV", path) from None
    fh = open(path, "rb")   # (by its bytes: openpyxl refuses a path by its name, a workbook saved as .csv)
    try:
        wb = openpyxl.load_workbook(fh, read_only=True, data_only=True)
    except Exception as exc:   # openpyxl raises zipfile, KeyError and its own errors on a bad file
        fh.close()
        raise InputError(_not_a_workbook(path, exc), path) from None
    try:
        names = wb.sheetnames
        if sheet is None and len(names) > 1:
            raise InputError(f"the workbook has {len(names)} sheets ({', '.join(names)}); name one with "
                             f"{arg('sheet')}", path)
        if sheet is not None and sheet not in names:   # a name differing only in case or outer spaces, if one
            alike = [n for n in names if n.strip().casefold() == str(sheet).strip().casefold()]
            if len(alike) != 1:
                raise ArgumentError("sheet", f"no sheet {sheet!r} (sheets: {', '.join(names)})", path)
            sheet = alike[0]
        ws = wb[sheet if sheet is not None else names[0]]
        _real_extent(ws)
        header, head_row = None, 0
        rows: list = []

        def first_rows():
            for n, row in enumerate(ws.iter_rows(max_row=HEADER_SEARCH), start=1):
                yield n, _row_text(row)
        hint = _header_below(hint, first_rows, required, "row")
        for n, row in enumerate(ws.iter_rows(), start=1):
            cells = _row_text(row)
            if not "".join(cells).strip():
                continue
            nul = next((c for c in cells if "\0" in c), None)
            if nul is not None:
                raise InputError("a NUL byte in a cell", path, n)
            if header is None:
                from ..io import _header

                while cells and not cells[-1].strip():   # empty columns right of the table
                    cells.pop()
                header = _header(cells, required, ",", path, n, hint)
                head_row = n
                continue
            cells = (cells + [""] * len(header))[:len(header)] if not "".join(cells[len(header):]).strip() else cells
            if len(cells) != len(header):   # (one cell above a wider row: a title, a staff tester's dead end)
                title = (f": row {head_row} holds one cell ({header[0]!r}, a title?) and this row {len(cells)} cells; "
                         "delete the row(s) above the columns' names" if len(header) == 1 and not rows else "")
                raise InputError(f"expected {len(header)} field{'s' * (len(header) != 1)}, found {len(cells)}{title}",
                                 path, n)
            rows.append((n, dict(zip(header, cells))))
        member = getattr(ws, "_worksheet_path", None)
    finally:
        wb.close()
        fh.close()
    if header is None:
        raise InputError("empty sheet", path)
    formulas = _unsaved_formulas(path, sheet, header, {n for n, row in rows if "" in row.values()})
    if member:
        _refuse_merged_cells(path, member.lstrip("/"), header, rows, required)
    hidden = hidden_rows(path, member.lstrip("/"), {n for n, _ in rows}) if member else []
    notes = () if not hidden else (
        f"{path}: {len(hidden)} row(s) of the sheet {ws.title!r} are hidden (rows {_ranges(hidden)}; a filter?) and "
        "are read like the others: delete them, or copy the rows you mean to a sheet of their own, to leave them out",)
    return Source(header, rows, ",", False, "\n", ws.title, notes, formulas)


#: A row of a sheet's XML that Excel hides (filtered out, or hidden by hand): its number.
_HIDDEN_ROW = re.compile(rb'<(?:\w+:)?row\b[^>]*?\bhidden="(?:1|true)"[^>]*>')
_ROW_NUMBER = re.compile(rb'\br="(\d+)"')


def hidden_rows(path, member: str, read: set) -> list:
    """The numbers, among ``read``, of the rows the workbook's sheet ``member`` (its XML in the zip)
    hides: a sheet filtered in Excel and saved keeps the rows the filter hides, which openpyxl reads
    like the others.  Only where the XML says ``hidden``."""
    def numbers(text):
        if b"hidden" not in text:
            return []
        return [int(m.group(1)) for t in _HIDDEN_ROW.finditer(text) if (m := _ROW_NUMBER.search(t.group(0)))]

    return sorted(n for n in set(_sheet_scan(path, member, numbers)) if n in read)


def _sheet_scan(path, member: str, find) -> list:
    """``find(text)`` (a list) over the workbook's sheet ``member`` (its XML in the zip), read a MiB at a time,
    each tag whole in one block (one cut at a block's end is read with the next); [] where it cannot be read."""
    import zipfile

    found, tail = [], b""
    try:
        with zipfile.ZipFile(path) as z, z.open(member) as fh:
            while block := fh.read(1 << 20):
                text = tail + block
                cut = max(text.rfind(b"<"), 0)
                found += find(text[:cut])
                tail = text[cut:]
            found += find(tail)
    except (KeyError, OSError, zipfile.BadZipFile):
        return []
    return found


#: A merged range of a sheet's XML (``<mergeCell ref="C4:C5"/>``): its corners
_MERGED = re.compile(rb'<(?:\w+:)?mergeCell\b[^>]*?\bref="([A-Z]+)(\d+):([A-Z]+)(\d+)"')


def _column_number(letters: bytes) -> int:
    n = 0
    for c in letters:
        n = n * 26 + c - 64
    return n


def _refuse_merged_cells(path, member: str, header, rows, required) -> None:
    """An :class:`InputError` where a cell of a column read (``required``) is blank because it lies in merged
    cells (Excel keeps the value in the range's first cell, the others blank): a staff tester's export
    merged two ratings' equal scores, and the second rating was skipped as "without a usable score", exit 0
    (merged paper or grade cells said "blank").  The sheet's XML is scanned only where such a cell is blank."""
    cols = [k for k, h in enumerate(header) if h in set(required)]
    blank = [(n, k) for n, row in rows for k in cols if not row.get(header[k], "").strip()]
    if not blank:
        return
    ranges = _sheet_scan(path, member, lambda text: [(_column_number(a), int(r0), _column_number(b), int(r1))
                                                     for a, r0, b, r1 in _MERGED.findall(text)])
    from openpyxl.utils import get_column_letter

    for n, k in blank:
        for c0, r0, c1, r1 in ranges:
            if r0 <= n <= r1 and c0 <= k + 1 <= c1 and (n, k + 1) != (r0, c0):
                span = f"{get_column_letter(c0)}{r0}:{get_column_letter(c1)}{r1}"
                raise InputError(f"cell {get_column_letter(k + 1)}{n} is blank, part of the merged cells {span} (Excel "
                                 "keeps their value in the first cell alone): unmerge them and fill each row",
                                 path, n, header[k])


def _ranges(numbers, limit=5) -> str:
    """``2-39, 41, 50-52`` of sorted numbers (the first ``limit`` runs, then ``and N more``)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    shown = ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:limit])
    return shown + (f" and {len(runs) - limit} more" if len(runs) > limit else "")


def _real_extent(ws) -> None:
    """Read only the cells a sheet holds: a read-only sheet pads every row to the size its
    ``<dimension>`` declares, and a 6.5 KB file declaring ``A1:XFD1048576`` took ~8 minutes
    (issue 30); forgetting the declaration makes openpyxl go by the cells present."""
    if hasattr(ws, "reset_dimensions"):
        ws.reset_dimensions()


def _unsaved_formulas(path, sheet, header, rows_with_blanks) -> dict:
    """The formula cells among ``rows_with_blanks`` that have no saved value, ``{column: (row, formula)}`` (the
    first of each column): a workbook written by a program that does not compute formulas (a script's) holds
    none, and its cells read as blank -- a score computed by a formula would be skipped as missing
    (:func:`_refuse_formulas` refuses those of the columns read)."""
    if not rows_with_blanks:
        return {}
    import openpyxl

    found: dict = {}
    fh = open(path, "rb")
    wb = openpyxl.load_workbook(fh, read_only=True, data_only=False)
    try:
        ws = wb[sheet] if sheet is not None else wb[wb.sheetnames[0]]
        _real_extent(ws)
        last = max(rows_with_blanks)
        for n, cells in enumerate(ws.iter_rows(), start=1):
            if n > last:
                break
            if n not in rows_with_blanks:
                continue
            for name, cell in zip(header, cells):
                v = cell.value   # a formula's cell (type "f"), not a text cell that reads "=A" (a label)
                if getattr(cell, "data_type", None) == "f" and isinstance(v, str) and v.startswith("=") \
                        and name not in found:
                    found[name] = (n, v)
    finally:
        wb.close()
        fh.close()
    return found


def _refuse_formulas(path, formulas: dict, read, warnings: list) -> None:
    """An :class:`InputError` for a formula with no saved value (:func:`_unsaved_formulas`) in a column ``read``
    (the analysis's); of another column a warning: it reads as blank and nothing uses it (a staff tester's
    workbook of an unused ``Moyenne =AVERAGE(...)`` column stopped the run)."""
    for name, (n, v) in formulas.items():
        if name in read:
            raise InputError(f"a formula ({v}) with no saved value: the workbook was written by a program "
                             "that does not compute formulas; open and save it in Excel or LibreOffice, "
                             "or save it as CSV", path, n, name)
    unused = [name for name in formulas if name not in read]
    if unused:
        warnings.append(f"{path}: formulas with no saved value in column(s) {', '.join(map(repr, unused))} (from row "
                        f"{min(formulas[n][0] for n in unused)}), which is read as blank; no column the analysis uses")


#: A score as written: digits with an optional fraction and exponent (no "_", "0x", spaces).
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
#: A code in a score's cell, letters alone (``ABS``, ``NS``, ``X``, ``absent``): a rating not given.
_CODE = re.compile(r"[A-Za-z][A-Za-z /._-]*")
#: A score written with a decimal comma (``2,0``), which ``--decimal comma`` reads.
DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,[0-9]+")
#: ... and with a decimal point (``2.5``, ``.5``).
_DECIMAL_POINT = re.compile(r"[+-]?[0-9]*\.[0-9]+")


def _mark(comma: bool, point: bool, delimiter) -> str:
    """The decimal mark of a file separated by ``delimiter`` whose cells hold a number written with a decimal
    ``comma`` (``2,5``) and one with a ``point``: ``","`` where a comma and no point, or, with neither, where the
    fields are separated by semicolons (a spreadsheet's CSV where the decimal mark is a comma: the adjusted file's
    numbers are then written ``3,2500``, which it reads as numbers, where ``3.2500`` it read as text or a date);
    else ``"."``.  Only in a file separated by semicolons or tabs (a comma cannot be both)."""
    if delimiter not in (";", "\t"):
        return "."
    return "," if comma and not point or not (comma or point) and delimiter == ";" else "."


def sniff_decimal(path, delimiter=None, encoding=None) -> str:
    """``"point"`` or ``"comma"``: the decimal mark of a ratings file (``--decimal auto``, and the app's guess), by
    :func:`_mark`'s rule on every cell of a file separated by ``delimiter`` (None: as the reader finds it, Excel's
    ``sep=;`` line or :func:`~ratercal_cli.io.sniff_delimiter`), ';' or tabs (a file separated by commas has points); a
    workbook's ``point`` (its numbers are numbers).  The command line and the app decide alike (the app had
    written a ';' file's numbers ``3,2500``, the command line ``3.2500`` unless told ``--decimal comma``).
    Every cell, not the first 64 KiB: a file whose decimal points began further down got its adjusted numbers
    written with commas beside them (a verifier)."""
    path, head = _first_bytes(path)
    if _is_workbook(path, head):
        return "point"
    with open(path, "rb") as fh:
        first = fh.read(1 << 16)
    utf16 = encoding is None and head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    codec = "utf-16" if utf16 else encoding or "utf-8-sig"
    try:
        head_text, sep = _excel_sep(first.decode(codec, "replace"), delimiter)
    except LookupError:   # (an unknown --encoding: the reader names it)
        return "point"
    sep = sep or sniff_delimiter(head_text)
    if sep not in (";", "\t"):
        return "point"
    text = path.read_bytes().decode(codec, "replace")
    comma = _number_cell(text, sep, ",", DECIMAL_COMMA)
    point = _number_cell(text, sep, ".", _DECIMAL_POINT)
    return "comma" if _mark(comma, point, sep) == "," else "point"


def _number_cell(text: str, sep: str, mark: str, number) -> bool:
    """Whether a cell of ``text`` (fields separated by ``sep``) is a ``number`` written with the decimal ``mark``:
    each ``mark`` before a digit, the cell around it (a regular expression over every cell boundary took 0.6 s of
    a 13 MB file, and a file of whole numbers has no such mark at all)."""
    for m in re.finditer(re.escape(mark) + "[0-9]", text):
        i = m.start()
        start = max(text.rfind(sep, 0, i), text.rfind("\n", 0, i)) + 1
        ends = [e for e in (text.find(sep, i), text.find("\n", i)) if e >= 0]
        cell = text[start:min(ends) if ends else len(text)].strip().strip('"').strip()
        if number.fullmatch(cell):
            return True
    return False


def _parse_score(text, path, line, column, decimal="."):
    """Whole number or None (missing); InputError otherwise.  ``decimal=","``: ``2,0`` is 2."""
    shown = text = text.strip()     # errors quote the score as written ('3,5', not '3.5')
    if text.lower() in MISSING_TOKENS:
        return None
    if decimal == ",":
        text = text.replace(",", ".")
    if not _NUMBER.fullmatch(text):
        hint = (f" (give {arg('decimal', 'comma')} for scores written with a decimal comma)"
                if decimal != "," and DECIMAL_COMMA.fullmatch(text) else
                f" (a rating not given -- absent, not scorable -- is read as missing where its cell is blank or NA: "
                f"replace {snippet(shown)} with NA)" if _CODE.fullmatch(text) or not any(c.isdigit() for c in text)
                else "")
        raise InputError(f"{snippet(shown)} is not a number{hint}", path, line, column)
    value = float(text)
    if not np.isfinite(value):   # (1e400: "not a whole number" named the wrong fault)
        raise InputError(f"{snippet(shown)} is too large to be a score", path, line, column)
    if value != int(value):
        hint = (" (a score is one rating on a whole-point scale; a half point is often the mean of two readings: "
                "give each reading a line of its own)" if np.isfinite(value) and (2 * value).is_integer() else "")
        raise InputError(f"{snippet(shown)} is not a whole number{hint}", path, line, column)
    return int(value)


# -- discrepancy resolution ----------------------------------------------------------
def resolve_discrepancies(paper, score, threshold: int = 1, order=None):
    """Keep mask and per-rating flags for the district's third-reader rule.

    ``paper`` and ``score`` are per-rating arrays; ``order`` (per rating, sortable) gives
    the order in which a paper's ratings were read (None: the arrays' order).  On a paper with exactly three ratings whose first two differ by more
    than ``threshold``, the third is kept with whichever of the first two is nearer
    to it; on a tie (third midway) the lower of the two is dropped -- OBSGEN.BAS's
    rule and the district's (Denny 1990, p. 50: "the most discrepant rating was
    omitted, or if the third rating was midway between the other two then the lower
    rating was omitted"); the rule is :func:`~ratercal_cli.design.needs_third` and
    :func:`~ratercal_cli.design.keep_first`, which the generators use too.

    Returns ``(keep, resolved)``: ``keep`` false for the dropped rating,
    ``resolved`` true for every rating of a resolved paper.
    """
    paper = np.asarray(paper, dtype=np.int64)
    score = np.asarray(score, dtype=np.int64)
    keep = np.ones(paper.size, dtype=bool)
    resolved = np.zeros(paper.size, dtype=bool)
    if paper.size == 0:
        return keep, resolved
    if order is None:
        # file order within a paper (a file that lists each paper's ratings together is in it already)
        order = np.arange(paper.size) if (paper[1:] >= paper[:-1]).all() else np.argsort(paper, kind="stable")
    else:
        order = np.lexsort((np.asarray(order), paper))   # reading order within a paper, ties by file order
    counts = np.bincount(paper)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    three = np.flatnonzero(counts == 3)
    i1, i2, i3 = (order[starts[three] + k] for k in range(3))
    s1, s2, s3 = score[i1], score[i2], score[i3]
    disc = needs_third(s1, s2, threshold)
    i1, i2, i3, s1, s2, s3 = (a[disc] for a in (i1, i2, i3, s1, s2, s3))
    dropped = np.where(keep_first(s1, s2, s3), i2, i1)
    keep[dropped] = False
    resolved[np.concatenate([i1, i2, i3])] = True
    return keep, resolved


# -- reading -------------------------------------------------------------------------
#: The end of the error for a missing column of a ratings file.
COLUMN_HINT = f"; name the columns with {arg('paper_col')}, {arg('rater_col')} and {arg('score_col')}"


def _column_hint(columns: Columns, score_cols=None):
    """The end of the error for missing columns (``missing``): :data:`COLUMN_HINT` where the paper,
    rater or score column is missing (with ``score_cols`` given and the rater's missing, that a column a
    rater is :func:`.wide.melt`'s ``rater_cols``: a file of a column a rater, read as criteria, was told
    only to name the rater column), else the options that named the missing ones (``--group-col nope``
    was told to name the columns with --paper-col, --rater-col and --score-col)."""
    def hint(missing) -> str:
        if score_cols and columns.rater in missing:
            return (f"; with a column a criterion ({arg('score_cols')}), name the rater column with "
                    f"{arg('rater_col')}, or where each column is a rater's, give them as {arg('rater_cols')} instead")
        if {columns.paper, columns.rater, columns.score} & set(missing):
            return COLUMN_HINT
        named = [arg(o) for c, o in ((columns.group, "group_col"), (columns.order, "order_col")) if c in missing]
        if set(missing) & set(columns.facets):   # a cluster column is read as a facet
            named.append(f"{arg('facet_cols')} (or {arg('cluster', cli='--cluster-col')})")
        return f"; check the column name given to {' and '.join(named)}" if named else ""
    return hint


@paused_gc()
def read_ratings_file(path, scale=None, columns: Columns = Columns(), delimiter=None,
                      resolve: bool = False, threshold: int = 1, encoding=None, decimal: str = ".",
                      sheet=None, fold_labels: bool = False, score_cols=None, rater_cols=None,
                      leave_out=()) -> RatingsTable:
    """Read and validate a ratings CSV/TSV (or a sheet of an ``.xlsx`` workbook) into one
    :class:`Ratings` per group.

    ``scale``: a :class:`Scale`, a string for :func:`parse_scale`, or None to infer
    ``lowest..highest`` score found (with a loud warning).  ``decimal``: ``","`` reads ``2,0``
    as 2 (a file separated by ``;``).  ``sheet``: the sheet of a workbook.  ``fold_labels``:
    merge paper, rater and group labels that differ only in case, spacing or Unicode form
    (:func:`label_key`; without it they are warned of).  Column names match a header differing
    only in case when that is the only match.  ``columns.facets``: further facets (a duplicate is a
    duplicate only within one combination of their levels; the third-reading rule applies within it).
    ``score_cols`` / ``rater_cols``: a wide file, a column per criterion (which become the facet
    ``criterion``) or per rater (:func:`.wide.melt`).  ``resolve``: apply
    :func:`resolve_discrepancies` within each group, in the order of the
    ``columns.order`` column (or a column ``order``), else in file order (with a
    warning).  ``leave_out``: raters' labels whose ratings are read as not given (flag ``left out``):
    the remedy check names where a rater of few papers, every one read by another rater too, stops
    the adjustment of the rest.  ``encoding``: the file's text encoding (default UTF-8).  Cells of the
    columns that matter are read without surrounding whitespace; other columns are
    kept as they are.

    The steps: the options (:func:`_check_read_options`), the columns wanted
    (:func:`_wanted_columns`), the file and its header, a wide file melted, each field
    (:func:`_parse_fields`), the scale (:func:`_settle_scale`), the missing scores and the
    order of reading (:func:`_order_of_reading`), then each group (:func:`_build_group`).
    """
    path = Path(path)
    _check_read_options(path, delimiter, decimal)
    columns, made, required = _wanted_columns(columns, score_cols, rater_cols)
    source = read_source_columns(path, required, delimiter, encoding, sheet, _column_hint(columns, score_cols))
    header, rows, lines, delimiter = source.header, source.rows, source.lines, source.delimiter
    if decimal == "," and delimiter == ",":
        raise ArgumentError("decimal", "a decimal comma needs another field separator: the header looks "
                            f"separated by commas (give {arg('sep', 'semicolon')} or tab)", path, 1)
    columns = replace(columns, **{k: find_column(header, getattr(columns, k))
                                  for k in ("paper", "rater", "score", "group", "order")
                                  if getattr(columns, k) and getattr(columns, k) not in made},
                      facets=tuple(c if score_cols and c == CRITERION else find_column(header, c)
                                   for c in columns.facets))
    if not len(rows):
        raise InputError("no ratings below the header line", path, 2)
    warnings = list(source.notes)
    # the columns the analysis reads as they are, which the wide columns may not take in
    keep = {c: arg(o) for c, o in ((columns.paper, "paper_col"), (columns.group, "group_col"),
                                   (columns.order, "order_col"),
                                   *((f, "facet_cols") for f in columns.facets if not (score_cols and f == CRITERION)),
                                   *(((columns.rater, "rater_col"),) if score_cols else ())) if c}
    wide = None
    if score_cols or rater_cols:
        from .wide import READING, expand_columns, expand_pairs

        option = "score_cols" if score_cols else "rater_cols"
        pairs = None if score_cols else expand_pairs(rater_cols, header, path, option, keep)
        if pairs is not None and columns.order:
            raise ArgumentError("order_col", f"a file of a pair of columns per reading ({arg('rater_cols')} "
                                f"{pairs[0][0]}:{pairs[0][1]}, ...) is read in the pairs' order: give no "
                                f"{arg('order_col')}", path, 1)
        wide = ((list(header), [c for pr in pairs for c in pr], READING) if pairs is not None else
                (list(header), expand_columns(score_cols or rater_cols, header, path, option),
                 "criterion" if score_cols else "rater"))
    if source.formulas:   # (the columns read: those named, the wide ones, and a default order column)
        read = {c for c in (columns.paper, columns.rater, columns.score, columns.group, columns.order, *columns.facets,
                            DEFAULT_ORDER_COLUMN) if c} | set(wide[1] if wide is not None else ())
        _refuse_formulas(path, source.formulas, read, warnings)
    if wide is not None:
        header, rows, lines, notes = melt_columns(header, rows, lines, path, score_cols, rater_cols,
                                                  score=columns.score, rater=columns.rater, keep=keep)
        warnings += notes
    twice = [c for c in columns.facets if columns.facets.count(c) > 1 or c in (columns.paper, columns.rater,
                                                                                columns.score, columns.group)]
    if twice:
        raise ArgumentError("facet_cols", f"column {twice[0]} is named as a facet and as another column "
                            "(or twice)", path, 1)
    order_col = columns.order or (DEFAULT_ORDER_COLUMN if DEFAULT_ORDER_COLUMN in header else None)

    # the file's own column of each score, for errors: in a wide file the criterion's or the rater's
    wide_by = None if wide is None else columns.rater if wide[2] == "rater" else wide[2]   # ("criterion", "reading")
    fields = None if wide_by is None else rows.column(wide_by)
    scores = _parse_fields(rows, lines, columns, order_col, path, decimal, fields)
    if score_cols and fields is not None:   # a criterion with no score at all: totals over the others, which a cut set for all misreads
        used = np.bincount(fields.codes[~np.isnan(scores)], minlength=len(fields.labels))
        empty = [lab for lab, n in zip(fields.labels, used) if not n]
        if empty and len(empty) < len(fields.labels):
            rest = [lab for lab, n in zip(fields.labels, used) if n]
            warnings.append(f"{path}: {', '.join(empty)}: no score in any row (of {mention('score_cols')}): the rubric's "
                            f"totals are over the other {len(rest)} criteria ({', '.join(rest)}), a cut on them "
                            "too")
    lookalikes = _check_lookalikes(rows, columns, path, fold_labels, warnings, lines)
    left = _left_out(rows, columns, leave_out, scores, path, warnings, fold_labels, resolve, threshold)
    if left is not None:
        scores = np.where(left, np.nan, scores)
    scale_inferred = scale is None
    scale = _settle_scale(scale, scores, lines, columns, path, warnings, fields)
    flags = np.where(np.isnan(scores), MISSING, OK).astype(np.int8)
    if left is not None:
        flags[left] = LEFT_OUT
    reading_order, order_col = _order_of_reading(rows, lines, scores, columns, order_col, path, warnings, left, fields)

    table = RatingsTable(path=path, header=list(header), rows=rows, lines=lines, columns=columns,
                         scale=scale, flag_codes=flags, warnings=warnings, delimiter=delimiter,
                         scale_inferred=scale_inferred, order_column=order_col, bom=source.bom,
                         newline=source.newline, lookalikes=lookalikes, decimal=decimal,
                         wide=wide, sheet=source.sheet)
    members = _group_members(rows, columns.group)
    warnings += _stray_groups(rows, columns, members, lines, path)
    for g, rows_of in members:
        group = _build_group(table, g, rows_of, scores, resolve, threshold, reading_order)
        if group is not None:
            table.groups.append(group)
    if not table.groups:
        raise InputError("no usable rating in the file", path, None, columns.score)
    return table


def _left_out(rows, columns: Columns, leave_out, scores, path, warnings, fold_labels=False, resolve=False,
              threshold=1):
    """The rows of the raters named in ``leave_out`` (a bool mask; None where none is named), said in a
    warning.  Each item is a rater's label, or (where it is none) labels separated by commas; a string is one
    item; with ``fold_labels`` matched as the labels were folded.  A label that is no rater's is an
    ArgumentError naming the raters there are.  Where a paper keeps two readings further apart than
    ``threshold`` after its third was left out, and discrepancies are resolved, it says so (the resolution
    needs the third)."""
    items = [leave_out] if isinstance(leave_out, str) else list(leave_out or ())
    col = rows.column(columns.rater)
    labels = [str(x) for x in col.labels]
    key = label_key if fold_labels else (lambda x: x)
    by_key: dict[str, list[int]] = {}
    for k, label in enumerate(labels):
        by_key.setdefault(key(label), []).append(k)
    names, codes = [], []
    for item in (str(x).strip() for x in items):
        parts = [item] if not item or key(item) in by_key else [x.strip() for x in item.split(",")]
        for name in (x for x in parts if x):
            if key(name) not in by_key:
                known = sorted(labels, key=natural_key)
                raise ArgumentError("leave_out", f"no rater {name!r} in the file (raters: {', '.join(known[:12])}"
                                    f"{' ...' if len(known) > 12 else ''})", path)
            if name not in names:
                names.append(name)
                codes += by_key[key(name)]
    if not names:
        return None
    left = np.isin(col.codes, codes)
    n = int(np.count_nonzero(left & ~np.isnan(scores)))
    said = f"{path}: {len(names)} rater(s) left out as asked ({', '.join(names)}): {n} rating(s) not used; " \
        "their papers are scored from their other ratings"
    pcol = rows.column(columns.paper)
    kept = ~left & ~np.isnan(scores)
    theirs = np.unique(pcol.codes[left])
    n_kept = np.bincount(pcol.codes[kept], minlength=len(pcol.labels))
    alone = int(np.count_nonzero(n_kept[theirs] == 0))
    if alone:
        said += f"; {alone} paper(s) read by them alone get no adjusted score"
    if resolve:   # (a paper that kept two readings further apart than the threshold: its third was left out)
        two = theirs[n_kept[theirs] == 2]
        on = kept & np.isin(pcol.codes, two)
        lo = np.full(len(pcol.labels), np.inf)
        hi = np.full(len(pcol.labels), -np.inf)
        np.minimum.at(lo, pcol.codes[on], scores[on])
        np.maximum.at(hi, pcol.codes[on], scores[on])
        apart = int(np.count_nonzero(hi[two] - lo[two] > threshold))
        if apart:
            said += (f"; {apart} paper(s) keep two readings more than {threshold} apart, their third left out: both "
                     "are used, unresolved")
    warnings.append(said)
    return left


def _check_read_options(path: Path, delimiter, decimal: str) -> None:
    """Refuse a directory, an unknown decimal mark, and a decimal comma with ``--sep comma``."""
    if path.is_dir():
        raise InputError("is a directory, not a ratings file", path)
    if decimal not in (".", ","):
        raise ValueError("decimal must be '.' or ','")
    if decimal == "," and delimiter == ",":
        raise ArgumentError("decimal", f"a decimal comma needs another field separator ({arg('sep', 'semicolon')} "
                            "or tab)")


def _wanted_columns(columns: Columns, score_cols, rater_cols):
    """``(columns, made, required)``: ``columns`` with the facet ``criterion`` of a file with a
    column per criterion; the columns melting a wide file makes; the columns the file must have."""
    made = {columns.score} if score_cols else {columns.rater, columns.score} if rater_cols else set()   # by melting
    if score_cols and CRITERION not in columns.facets:
        columns = replace(columns, facets=tuple(columns.facets) + (CRITERION,))
    required = [c for c in [columns.paper, columns.rater, columns.score] + ([columns.group] if columns.group else [])
                + list(columns.facets) if c not in made and not (score_cols and c == CRITERION)]
    if columns.order:
        required.append(columns.order)
    return columns, made, required


#: A blank label on one of a table's last this many lines is likely a line of totals or notes below it.
TAIL_LINES = 3


def _parse_fields(rows: Rows, lines, columns: Columns, order_col, path, decimal: str, fields=None) -> np.ndarray:
    """Strip the cells that matter (their columns' labels), refuse a blank label, and parse each
    row's score (NaN: missing), each distinct text once.  The first wrong row in the file is the one
    named: a blank label (in the order paper, rater, group, facets) before its score.  ``fields``: the
    file's column of each row's score, where it is not the score column (a wide file's)."""
    keys = list(dict.fromkeys([columns.paper, columns.rater, columns.score]
                              + [c for c in (columns.group, order_col) if c] + list(columns.facets)))
    named = (columns.paper, columns.rater) + ((columns.group,) if columns.group else ()) + tuple(columns.facets)
    from ..guard import restore

    for c in keys:
        rows.columns[c] = rows.column(c).stripped()
    for c in named:   # a label as ratercal's own output neutralised it for spreadsheets ('+Bob) is the label (+Bob):
        if rows.column(c).matching("'", start=True):   # read back, '+Bob was a rater of its own beside the new +Bob
            rows.columns[c] = rows.column(c).mapped(restore)
    wrong = []   # (row, its place in the row, the error)
    for j, c in enumerate(named):
        k = rows.column(c).first_row([""])
        if k is not None:   # (among the last lines: a spreadsheet's line of totals or notes below the table)
            tail = " (a line of totals or notes below the table? delete it)" if len(rows) - k <= TAIL_LINES else ""
            wrong.append((k, j, InputError("blank" + tail, path, int(lines[k]), c)))
    score = rows.column(columns.score)
    values = np.full(len(score.labels), np.nan)
    bad = []
    for code, text in enumerate(score.labels):
        try:
            v = _parse_score(text, path, 0, columns.score, decimal)
        except InputError:
            bad.append(text)
            continue
        if v is not None:
            values[code] = v
    k = score.first_row(bad) if bad else None
    if k is not None:
        try:
            _parse_score(score[k], path, int(lines[k]), fields[k] if fields is not None else columns.score, decimal)
        except InputError as exc:
            wrong.append((k, len(named), exc))
    if wrong:
        raise min(wrong, key=lambda w: w[:2])[2]
    return values[score.codes]


#: a scale given with this many categories or more unused at one end is warned of (a typing slip, 0-9 for
#: 0-5?); one unused end category is common (no paper was a 1)
UNUSED_ENDS = 2


def _settle_scale(scale, scores, lines, columns: Columns, path, warnings: list, fields=None) -> Scale:
    """The scale given (every score checked to lie on it), or, with None, the lowest to the highest
    score found (with a warning)."""
    if scale is None:
        present = scores[~np.isnan(scores)]
        if not present.size:
            raise InputError("no usable score in the file", path, None, columns.score)
        low = int(present.min())
        scale = checked_scale(Scale(low, max(int(present.max()), low + 1)))
        found = ("the lowest to the highest score found" if present.max() > low else   # (a file of one score:
                 f"every score found is {low}, and a scale needs two")                 # "3-4, the lowest to the highest")
        warnings.append(f"{path}: NO --scale GIVEN: the scale is taken to be {scale}, {found}; if it is wider "
                        "(a score no rater gave), give it with --scale LOW-HIGH: the truncated methods keep scores "
                        "inside the scale and the category counts and models depend on it")
    else:
        scale = parse_scale(scale)
        outside = (scores < scale.low) | (scores > scale.high)   # (NaN, missing, is neither)
        if outside.any():
            k = int(np.argmax(outside))
            tail = " (a line of totals below the table? delete it)" if len(scores) - k <= TAIL_LINES else ""
            raise InputError(f"{int(scores[k])} is outside the scale {scale}{tail}", path, int(lines[k]),
                             fields[k] if fields is not None else columns.score)
        present = scores[~np.isnan(scores)]
        if present.size:
            lo, hi = int(present.min()), int(present.max())
            if max(lo - scale.low, scale.high - hi) >= UNUSED_ENDS:
                unused = [f"{a}" if b == a else f"{a}-{b}" if a >= 0 else f"{a} to {b}"
                          for a, b in ((scale.low, lo - 1), (hi + 1, scale.high)) if b >= a]
                warnings.append(f"{path}: {columns.score}: no rating is {' or '.join(unused)} on the scale {scale} "
                                f"given (the scores run {lo}-{hi}); if the scale is narrower, give it with "
                                f"{mention('scale', f'{lo}-{max(hi, lo + 1)}')}: the truncated methods keep "
                                "scores inside the scale and the category counts and models depend on it")
    return scale


def _order_of_reading(rows, lines, scores, columns: Columns, order_col, path, warnings: list, left=None, fields=None):
    """Warn of the missing scores (not the ratings ``left`` out as asked, said already; the first one's column
    ``fields`` names in a wide file, the file's own); ``(rank of each row in the order of reading or None, the
    order column used or None)``."""
    missing = np.isnan(scores) if left is None else np.isnan(scores) & ~left
    n_missing = int(missing.sum())
    if n_missing:
        k = int(np.argmax(missing))
        warnings.append(f"{path}:{int(lines[k])}: {fields[k] if fields is not None else columns.score}: {n_missing} "
                        "rating(s) without a usable score (blank or NA) skipped")
    reading_order = None
    if order_col:
        reading_order = _reading_order(rows, lines, order_col, path, strict=bool(columns.order))
        if reading_order is None:   # a column merely named "order", with blanks: not ours
            warnings.append(f"{path}: column {order_col} has blank cells; not used as the order "
                            f"of reading (give {mention('order_col')} to name the column that is)")
            order_col = None
        else:
            _warn_order_ties(rows, lines, columns, order_col, reading_order, ~missing, path, warnings)
    return reading_order, order_col


def _warn_order_ties(rows, lines, columns: Columns, order_col, rank, usable, path, warnings: list):
    """Warn where two usable ratings of one paper (in one group, in one combination of facet levels)
    on two lines share a place in the order of reading: which reading came first is then the file's
    order (the sorts by ``rank`` are stable), where the column was meant to say it (first two readings,
    the third-reading rule, the assignment test).  A rubric's rater gives every criterion at one place
    (one reading), and the ratings of one line of a wide file share its place: neither is a tie."""
    idx = np.flatnonzero(usable)
    pcol = rows.column(columns.paper)
    key = pcol.codes[idx].astype(np.int64)   # (a paper in a group: one number)
    if columns.group:
        key += len(pcol.labels) * rows.column(columns.group).codes[idx].astype(np.int64)
    cells = [rows.column(c).codes[idx] for c in columns.facets]   # (the third-reading rule's cells)
    by = np.lexsort((idx, rank[idx], *cells[::-1], key))   # (paper, cell, place, line)
    key, place, row = key[by], rank[idx][by], idx[by]
    same = (key[1:] == key[:-1]) & (place[1:] == place[:-1]) & (lines[row[1:]] != lines[row[:-1]])
    for c in cells:
        c = c[by]
        same &= c[1:] == c[:-1]
    tie = np.flatnonzero(same)
    if not tie.size:
        return
    first = tie[np.argmin(row[tie + 1])]   # (the tie whose later line comes first in the file)
    a, b = int(lines[row[first]]), int(lines[row[first + 1]])
    papers = 1 + int(np.count_nonzero(key[tie][1:] != key[tie][:-1]))   # (ties sorted by paper first)
    paper = pcol[row[first]]
    warnings.append(f"{path}:{b}: {order_col}: {papers} paper(s) with two ratings at one place in the order of "
                    f"reading (e.g. paper {paper}, lines {a} and {b}); the file's order decides which was read first")


#: a group is said to be a stray where it has at most this many papers, each also in another group
STRAY_GROUP = 3


def _stray_groups(rows: Rows, columns: Columns, members, lines, path) -> list:
    """Warnings of groups of at most STRAY_GROUP papers each of which is also in another group: a grade typed
    88 for 8 on one line made student G8-075 a paper of a group of its own, adjusted apart, with a second score,
    and only a rater of a single rating was warned of (a staff tester's file)."""
    if not columns.group or len(members) < 2:
        return []
    pcol = rows.column(columns.paper)
    papers = {g: set(np.unique(pcol.codes[idx]).tolist()) for g, idx in members}
    out = []
    for g, idx in members:
        if len(papers[g]) > STRAY_GROUP:
            continue
        elsewhere = [h for h, ps in papers.items() if h != g and papers[g] <= ps]
        if elsewhere:
            shown = ", ".join(str(pcol.labels[c]) for c in sorted(papers[g])[:STRAY_GROUP])
            out.append(f"{path}:{int(lines[idx[0]])}: {columns.group}: group {g!r} holds {idx.size} rating(s) of "
                       f"{shown}, which group {elsewhere[0]!r} holds too: a typo in the group column? (each group is "
                       "adjusted apart, so such a paper gets a score in each)")
    return out


def _group_members(rows: Rows, group_col) -> list:
    """``[(group name, its row indices)]`` in natural order of the names (one group ``None``
    without ``group_col``), the indices in file order."""
    if not group_col:
        return [(None, np.arange(len(rows)))]
    col = rows.column(group_col)
    by = np.argsort(col.codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(col.counts())])
    members = {g: by[bounds[k]:bounds[k + 1]] for k, g in enumerate(col.labels)}
    return [(g, members[g]) for g in sorted(col.labels, key=_natural_key) if members[g].size]


def _reading_order(rows: Rows, lines, col, path, strict=True):
    """Rank of each row's ``col`` value (numbers by value, then labels naturally); a blank
    is an error (``strict``) or makes the column unusable (None).  Numbers of one value ("1",
    "1.0", "01": a spreadsheet's export) are one place, a tie (:func:`_warn_order_ties`)."""
    column = rows.column(col)
    k = column.first_row([""])
    if k is not None:
        if not strict:
            return None
        raise InputError("blank (the order in which the paper's ratings were read)", path, int(lines[k]), col)
    keys = [_natural_key(label) for label in column.labels]
    keys = [key[:2] if key[0] == 0 else key for key in keys]   # (a number: its value, not its spelling)
    _refuse_unsorted_times(column, keys, lines, col, path)
    places = {key: place for place, key in enumerate(sorted(set(keys)))}
    rank = np.array([places[key] for key in keys], dtype=np.int64)
    return rank[column.codes]


#: Times and dates whose text does not sort in the order of time, naturally or otherwise: a 12-hour
#: clock (1:30 PM before 9:05 AM) and dates with the year last (day/month or month/day: 30/04 after
#: 02/05, 12/30/2025 after 1/2/2026), as spreadsheets export them in many locales.
_UNSORTED_TIME = re.compile(r"\d\s*(?:[AaPp]\.?\s?[Mm]\.?)(?![A-Za-z])|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b")


def _refuse_unsorted_times(column, keys, lines, col, path) -> None:
    """An :class:`InputError` where the order column holds times on a 12-hour clock or dates written
    with the year last, whose order as text is not their order in time: a paper read at 9:05 AM,
    10:15 AM and 1:30 PM had its 1:30 PM reading taken for its first, and the third-reading rule
    dropped a rating it should have kept.  Numbers (1, 2, 3) and ISO dates and times sort rightly."""
    for label, key in zip(column.labels, keys):
        if key[0] != 0 and _UNSORTED_TIME.search(label):
            k = column.first_row([label])
            raise InputError(f"{snippet(label)} is a time or date whose text does not sort in the order of time "
                             "(1:30 PM before 9:05 AM; a date written day/month or month/day across months): give "
                             "the order of reading as numbers (1, 2, 3), or times as ISO 8601 (2026-05-02 13:30; in "
                             "a spreadsheet, format the column as yyyy-mm-dd hh:mm before saving)", path,
                             int(lines[k]) if k is not None else None, col)


def _first_seen(codes, n_labels: int):
    """``(labels in the order of first appearance among codes, remap)``: ``remap[code]`` is the
    label's place in that order (-1: absent)."""
    counts = np.bincount(codes, minlength=n_labels)
    present = np.flatnonzero(counts)
    if codes.size and np.count_nonzero(np.diff(np.maximum.accumulate(codes))) + 1 == present.size:
        seen = present   # each label first seen as the largest yet: first seen is in the order of codes
    else:
        _, seen = first_seen(codes)
    remap = np.full(n_labels, -1, dtype=np.int64)
    remap[seen] = np.arange(seen.size)
    return seen, remap


def _build_group(table, name, idx, scores, resolve, threshold, reading_order=None):
    """One group's :class:`RatingsGroup` (None, with a warning, when it has no usable score): its
    duplicates refused (:func:`_refuse_duplicates`), the third-reading rule
    (:func:`_third_readings`), the papers without a usable rating warned of, the raters coded
    (:func:`_rater_codes`) and the facets coded (:func:`_facet_codes`).  Flags and warnings go to
    ``table``.  On the columns' codes: a label is looked at once, not once a row."""
    path, cols, lines, rows = table.path, table.columns, table.lines, table.rows
    where = "" if name is None else f" ({cols.group} {name})"
    idx = np.asarray(idx, dtype=np.int64)
    _refuse_duplicates(table, idx, where)

    pcol, rcol = rows.column(cols.paper), rows.column(cols.rater)
    usable = idx[~np.isnan(scores[idx])]
    if usable.size == 0:
        table.warnings.append(f"{path}: group{where or ' '}: no usable score; skipped")
        return None
    whole = usable.size == len(pcol.codes)   # (every row, in order: no copies of the columns)
    p_codes = pcol.codes if whole else pcol.codes[usable]
    seen, pidx = _first_seen(p_codes, len(pcol.labels))
    paper_ids = tuple(pcol.labels) if np.array_equal(seen, np.arange(len(pcol.labels))) else \
        tuple(np.array(pcol.labels, dtype=object)[seen].tolist())
    p_arr = pidx[p_codes]
    s_arr = (scores if whole else scores[usable]).astype(np.int64) - table.scale.low
    keep, first_two = _third_readings(table, usable, p_arr, s_arr, resolve, threshold, reading_order, where)

    paper_at = p_arr if whole else pidx[pcol.codes[idx]]
    if (paper_at < 0).any():
        none = paper_at < 0
        k = int(np.argmax(none))
        n_none = _n_distinct(pcol.codes[idx[none]])
        table.warnings.append(f"{path}:{int(lines[idx[k]])}: {cols.score}: {n_none} paper(s){where} with "
                              f"no usable rating (e.g. paper {pcol[idx[k]]}) get no adjusted score")

    used = usable if keep.all() else usable[keep]
    r_used, rater_ids_used = _rater_codes(table, used, usable, where)
    first = None
    if first_two is not None:   # resolved: agreement is reported on the first two readings (issue 28)
        read = usable[first_two]
        ids, code = _natural_codes(rcol, read)
        first = Ratings(paper=p_arr[first_two], rater=code[rcol.codes[read]], score=s_arr[first_two],
                        max_score=table.scale.max_score, n_papers=len(paper_ids), n_raters=len(ids),
                        paper_ids=paper_ids, rater_ids=ids, facets=_facet_codes(rows, read, cols.facets))
    kept = (p_arr, s_arr) if used is usable else (p_arr[keep], s_arr[keep])
    ratings = Ratings(paper=kept[0], rater=r_used, score=kept[1], max_score=table.scale.max_score,
                      n_papers=len(paper_ids), n_raters=len(rater_ids_used),
                      paper_ids=paper_ids, rater_ids=rater_ids_used, facets=_facet_codes(rows, used, cols.facets),
                      first_readings=first, reading_order=None if reading_order is None else reading_order[used])
    return RatingsGroup(name=name, ratings=ratings, rows=used, file_rows=idx, paper_at=paper_at)


def _n_distinct(codes) -> int:
    """How many distinct values an array of codes (integers from 0) holds: counted, not sorted or hashed
    (np.unique imports numpy.ma, 0.01-0.02 s of every adjust)."""
    return int(np.count_nonzero(np.bincount(codes))) if len(codes) else 0


def _natural_codes(column: Column, at):
    """``(labels, code)``: the labels of ``column`` at rows ``at`` in natural order, and ``code[c]``
    the place of the column's label ``c`` among them (-1: not among them)."""
    present = np.flatnonzero(np.bincount(column.codes[at], minlength=len(column.labels)))   # (not a sort of the rows)
    order = sorted(present.tolist(), key=lambda c: _natural_key(column.labels[c]))
    code = np.full(len(column.labels), -1, dtype=np.int64)
    code[order] = np.arange(len(order))
    return tuple(column.labels[c] for c in order), code


def _key_codes(table, idx):
    """The columns that make a rating's key (paper, rater, facets) as code arrays at rows ``idx``."""
    cols = table.columns
    return [table.rows.column(c).codes[idx] for c in (cols.paper, cols.rater) + tuple(cols.facets)]


def _no_repeat_near(keys, widest: int = 8) -> bool:
    """Whether the rows (``keys``: code arrays, the paper's first) have no key twice, shown cheaply
    where a file lists each paper's ratings together (as most do) and a paper has at most ``widest``:
    each row is then compared with the few before it.  False where that cannot show it."""
    paper = keys[0]
    if paper.size < 2 or (paper[1:] < paper[:-1]).any():   # papers not together (codes: first seen first)
        return False
    starts = np.flatnonzero(np.concatenate([[True], paper[1:] != paper[:-1]]))
    most = int(np.diff(np.append(starts, paper.size)).max())   # the most ratings of a paper
    if most > widest:
        return False
    for d in range(1, most):
        same = np.ones(paper.size - d, dtype=bool)
        for k in keys:
            same &= k[d:] == k[:-d]
        if same.any():
            return False
    return True


def _as_written(table, line: int, column: str, label) -> str:
    """`` (written 'R1 ')`` where a text file's cell ``column`` on ``line`` is not ``label`` as written (a
    trailing space stripped, a case folded by ``fold_labels``): the duplicate error named a label the line
    did not hold.  "" where they agree, or for a workbook, a wide file or a line not found (an error's
    aside, read again from the file only then)."""
    import csv
    import io

    if table.sheet is not None or table.wide is not None:
        return ""
    try:
        text = read_text(table.path)
        col = table.header.index(column)
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=table.delimiter)
        for row in reader:
            if reader.line_num == line:
                raw = row[col] if col < len(row) else None
                return "" if raw is None or raw == str(label) else f" (written {raw!r})"
            if reader.line_num > line:
                return ""
    except (InputError, OSError, ValueError, csv.Error):
        return ""
    return ""


def _refuse_duplicates(table, idx, where: str) -> None:
    """Refuse a second rating of one paper by one rater within one combination of facet levels
    (sorted codes; where two keys are equal, the first such row in the file is named)."""
    cols, lines = table.columns, table.lines
    fcols = tuple(cols.facets)
    keys = _key_codes(table, idx)
    if _no_repeat_near(keys):
        return
    sizes = [len(table.rows.column(c).labels) for c in (cols.paper, cols.rater) + fcols]
    if math.prod(sizes) < 1 << 62:   # one number a key: distinct keys counted, not sorted
        one = np.zeros(idx.size, dtype=np.int64)
        for k, size in zip(keys, sizes):
            one = one * size + k
        if math.prod(sizes) <= 16 * idx.size:   # marked in a table of every key, a byte each (a complete
            seen = np.zeros(math.prod(sizes), dtype=bool)   # panel, a rubric: 0.1 s less than hashing)
            seen[one] = True
            if np.count_nonzero(seen) == idx.size:
                return
        elif first_seen(one)[1].size == idx.size:   # (by hashing)
            return
    order = np.lexsort(tuple(reversed(keys)))   # stable: equal keys in file order
    same = np.ones(max(idx.size - 1, 0), dtype=bool)
    for k in keys:
        ks = k[order]
        same &= ks[1:] == ks[:-1]
    if not same.any():
        return
    # each row's first row with its key: the rows sorted by key, then by position (lexsort is stable)
    group_start = np.concatenate([[True], ~same])
    first_of = order[np.maximum.accumulate(np.where(group_start, np.arange(order.size), 0))]
    dup = np.empty(idx.size, dtype=np.int64)
    dup[order] = first_of
    later = np.flatnonzero(dup != np.arange(idx.size))
    j = int(later[0])
    key = [table.rows.column(c)[idx[j]] for c in (cols.paper, cols.rater) + fcols]   # the labels
    at = "".join(f", {c} {v}" for c, v in zip(fcols, key[2:]))
    key[1] = f"{key[1]}{_as_written(table, int(lines[idx[j]]), cols.rater, key[1])}"
    field, first = cols.rater, ""
    if table.wide is not None and table.wide[2] == "reading":   # (the file's own columns: a reading's rater's)
        from .wide import READING

        rater_of = dict(zip(table.wide[1][1::2], table.wide[1][0::2]))   # score column -> its rater column
        reading = table.rows.column(READING)
        field, first = rater_of[reading[idx[j]]], f", {rater_of[reading[idx[dup[j]]]]}"
    raise InputError(f"duplicate rating of paper {key[0]} by rater {key[1]}{at}{where} "
                     f"(first at line {int(lines[idx[dup[j]]])}{first}){_duplicates_in_all(table, idx, later, dup)}",
                     table.path, int(lines[idx[j]]), field)


def _duplicates_in_all(table, idx, later, dup) -> str:
    """How many duplicates the file holds (``later``: the rows of ``idx`` that repeat a key, ``dup``
    their first rows) and how many repeat their first line in every column, a line exported twice: the
    error named the first alone, and a file with eleven lines exported twice took eleven runs to mend."""
    a, b = idx[later], idx[dup[later]]
    lines = np.unique(table.lines[a])   # (a wide file's line holds several ratings)
    same = np.ones(later.size, dtype=bool)
    for name in table.rows.columns:
        codes = table.rows.column(name).codes
        same &= codes[a] == codes[b]
    exact = lines.size - np.unique(table.lines[a[~same]]).size
    if lines.size < 2:   # (one: the hint all the same, a staff tester's file of one line exported twice)
        return "; the same as the first in every column (exported twice? delete the repeat)" if exact else ""
    return (f"; {lines.size} duplicate line(s) in all" + (
        f", {exact} of them the same as the first in every column (exported twice? delete the repeats)"
        if exact else ""))


def _third_readings(table, usable, p_arr, s_arr, resolve, threshold, reading_order, where: str):
    """The third-reading rule within each paper (and combination of facet levels): flag the
    ratings it concerns, and those of a paper with four or more ratings, with warnings; return
    ``(keep, first_two)``: which usable ratings are kept (all, unless ``resolve``) and, when
    ``resolve`` resolved a paper, which are its papers' first two readings (else None)."""
    path, cols, lines, rows = table.path, table.columns, table.lines, table.rows
    fcols = tuple(cols.facets)
    order = None if reading_order is None else reading_order[usable]
    # the third-reading rule and the count of a paper's ratings: within one combination of facet levels
    pc_arr = p_arr
    if fcols:   # cells numbered in the order of first appearance (one number a cell, hashed)
        levels = [rows.column(c).codes[usable] for c in fcols]
        sizes = [int(p_arr.max(initial=0)) + 1] + [max(len(rows.column(c).labels), 1) for c in fcols]
        if math.prod(sizes) < 1 << 62:
            key = p_arr.astype(np.int64)
            for lv, size in zip(levels, sizes[1:]):
                key = key * size + lv
            pc_arr = first_seen(key)[0].astype(np.int64)
        else:
            cell = np.unique(np.stack([p_arr] + levels, axis=1), axis=0, return_index=True, return_inverse=True)
            rank = np.empty(cell[1].size, dtype=np.int64)
            rank[np.argsort(cell[1], kind="stable")] = np.arange(cell[1].size)
            pc_arr = rank[np.asarray(cell[2]).ravel()]
    keep, resolved = resolve_discrepancies(pc_arr, s_arr, threshold, order)
    first_two = None
    if resolve and resolved.any():   # the third reading of a resolved paper: its last read
        by = np.argsort(pc_arr, kind="stable") if order is None else np.lexsort((np.asarray(order), pc_arr))
        rank = np.empty(pc_arr.size, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(np.bincount(pc_arr))[:-1]])
        rank[by] = np.arange(pc_arr.size) - starts[pc_arr[by]]
        first_two = ~(resolved & (rank >= 2))
    table.flag_codes[usable[resolved]] = RESOLVED if resolve else UNRESOLVED
    n_res = _n_distinct(pc_arr[resolved])
    # papers, and with facets the paper x criterion cells too: a staff tester's rubric of 104 papers read a third
    # time was told "210 paper(s)", its cells
    papers = _n_distinct(p_arr[resolved])
    of_cells = f" ({n_res} paper x {' x '.join(fcols)} cells)" if fcols and n_res != papers else ""
    if resolve:
        table.flag_codes[usable[~keep]] = DROPPED
        if n_res:
            table.warnings.append(f"{path}: {papers} discrepant paper(s){of_cells}{where} resolved: the third "
                                  "rating kept with the nearer of the first two")
    else:
        keep = np.ones_like(keep)
        if n_res:
            table.warnings.append(
                f"{path}: {papers} paper(s){of_cells}{where} have a third rating after two more than "
                f"{threshold} point(s) apart; all three used (give {mention('resolve_discrepancies', True)} to "
                "keep the two nearest)")
    no_order = (f"{path}: no {DEFAULT_ORDER_COLUMN} column: the first two ratings of a paper are taken to "
                f"be its first two lines in the file (give {mention('order_col')} for the order of reading)")
    if n_res and reading_order is None and no_order not in table.warnings:   # once per file
        table.warnings.append(no_order)
    per_paper = np.bincount(pc_arr)
    # four or more readings are out of the ordinary only where papers are usually read at most three
    # times (the double scoring the third-reading rule is for); a design whose papers are usually read
    # four or more times (every rater every paper) has nothing to flag
    counts = per_paper[per_paper > 0]
    typical = int(np.bincount(counts).argmax()) if counts.size else 0
    # a third reading where the first two agree: no discrepancy the rule resolves, used as it is, unwarned
    # (a back-reading, or a wrong order of reading: the AM/PM order column made such papers); not on a
    # rubric, whose third reader reads every criterion of a paper discrepant on any
    calm = (per_paper[pc_arr] == 3) & ~resolved
    if typical == 2 and not fcols and calm.any():
        how = (f"the {table.columns.order or DEFAULT_ORDER_COLUMN} column" if reading_order is not None
               else "the lines' order in the file")
        table.warnings.append(
            f"{path}: {_n_distinct(pc_arr[calm])} paper(s){where} have a third rating though their first two "
            f"(by {how}) are within {threshold} point(s), so the third-reading rule does not apply: all three "
            f"used (back-readings? if the order of reading is another, give {mention('order_col')})")
    many = (per_paper[pc_arr] >= 4) & (typical < 4)
    if many.any():
        table.flag_codes[usable[many]] = MANY
        first = int(lines[int(usable[many][0])])
        n_papers = _n_distinct(p_arr[many])
        cells = _n_distinct(pc_arr[many])
        table.warnings.append(
            f"{path}:{first}: {n_papers} paper(s){where} have four or more ratings"
            + (f" (in {cells} paper x {', '.join(fcols)} cells)" if fcols and cells != n_papers else "")
            + f" where most have {typical}; the third-reading rule covers three, so all are used (flag {FLAG_MANY})")
    return keep, first_two


def _rater_codes(table, used, usable, where: str):
    """``(rater code of each kept rating, rater labels)``: the labels of the ``usable`` ratings in
    natural order, a rater whose every rating was dropped left out; a rater with fewer than
    ``MIN_RATINGS`` ratings warned of and its ordinary ratings flagged thin."""
    path, cols, lines, rows = table.path, table.columns, table.lines, table.rows
    rcol = rows.column(cols.rater)
    rater_ids, ridx = _natural_codes(rcol, usable)
    r_used = ridx[rcol.codes[used]]
    rater_ids_used = rater_ids
    counts = np.bincount(r_used, minlength=len(rater_ids))
    if (counts == 0).any():   # a rater whose every rating was dropped: leave them out
        present = np.flatnonzero(counts)
        remap = -np.ones(len(rater_ids), dtype=np.int64)
        remap[present] = np.arange(present.size)
        r_used = remap[r_used]
        rater_ids_used = tuple(rater_ids[k] for k in present)
        counts = counts[present]
    thin = np.flatnonzero(counts < MIN_RATINGS)
    if thin.size:
        _, first_at = np.unique(r_used, return_index=True)   # each rater's first rating
        first_of = np.zeros(counts.size, dtype=np.int64)
        first_of[np.unique(r_used)] = first_at
        for k in thin:
            i = used[first_of[k]]
            table.warnings.append(f"{path}:{int(lines[i])}: {cols.rater}: rater {rater_ids_used[k]}{where} has "
                                  f"only {'one rating' if counts[k] == 1 else f'{counts[k]} ratings'}; its level "
                                  "and spread cannot be estimated from it (flag thin)")
        at = used[np.isin(r_used, thin)]
        table.flag_codes[at[table.flag_codes[at] == OK]] = THIN
    return r_used, rater_ids_used


def _facet_codes(rows: Rows, used, fcols) -> dict:
    """``{facet column: (code of each kept rating, labels in natural order)}``."""
    facets = {}
    for c in fcols:
        labels, code = _natural_codes(rows.column(c), used)
        facets[c] = (code[rows.column(c).codes[used]], labels)
    return facets


# -- writing -------------------------------------------------------------------------
def _output_columns(table: RatingsTable, methods) -> list:
    """``X``, ``X_paper`` per method (:func:`~ratercal_cli.vocabulary.adjusted_columns`), and ``X_total``
    (the paper's rubric total) when the ratings have facets."""
    if not table.columns.facets:
        return adjusted_columns(methods)
    return [c for m in methods for c in adjusted_columns([m]) + [f"{m}_total"]]


def adjusted_header(table: RatingsTable, methods) -> list:
    """Output header: the input's, then ``flag``, then ``X``, ``X_paper`` per method (and
    ``X_total`` with facets)."""
    extra = ["flag"] + _output_columns(table, methods)
    clash = [c for c in extra if c in table.header]
    if clash:
        raise InputError(f"input already has column(s) {', '.join(clash)} that the output adds; "
                         "rename them", table.path, 1, clash[0])
    return table.header + extra


def write_adjusted(path, table: RatingsTable, results, methods, fmt: str = "{:.4f}",
                   chunk: int = 65536, uncertainty=None, applied=None, cells=None) -> None:
    """Write the input rows with adjusted scores, atomically (``path`` ``-``: standard output).

    ``results``: ``{group name: {method code: Adjusted}}`` (a method missing for a
    group leaves its cells blank).  Non-finite values are written blank.
    ``uncertainty``: ``{group name: {method code: PaperUncertainty}}``: after ``X_paper``, the
    columns ``X_paper_se`` and (with a cut) ``X_paper_pass``, the probability that the paper
    passes (:mod:`.uncertainty`).  ``applied``: ``{group name: method}`` of
    ``--method recommended``: the column ``recommended_method`` says which method each line got.
    With facets, ``cells``: ``{group name: {method code: (paper score in the rating's cell, paper
    total)}}`` per rating of the group (0..M and the file's scale): ``X_paper`` and ``X_total``.
    Delimiter: tab if ``path`` ends in ``.tsv``/``.tab``, else the input's ``;`` (a spreadsheet's CSV
    where the decimal mark is a comma) or a comma; with ``;`` or tabs, numbers keep the input's
    decimal mark (``--decimal comma``: ``3,2500``), so the spreadsheet reads them as numbers.  The adjusted
    values are held as one float array per column (:func:`_adjusted_values`); the text is made
    ``chunk`` rows at a time (:func:`_write_rows`), so memory stays a few arrays over the ratings.
    """
    methods = list(methods)
    values, shifted, extra, text = adjusted_output(table, results, methods, uncertainty, cells, applied)
    _write_rows(path, table, extra, values, text, shifted, fmt, chunk)


def adjusted_output(table: RatingsTable, results, methods, uncertainty=None, cells=None, applied=None):
    """What every writer of an adjusted file adds to the input's rows (:func:`write_adjusted` here,
    :func:`.output.write_adjusted_file` for workbooks and wide layouts): ``(values, shifted, extra,
    text)`` of :func:`_adjusted_values`, and ``text``'s ``recommended_method`` column where
    ``applied`` (``{group name: method}``) is given.  Refuses an input column the output would add."""
    methods = list(methods)
    values, shifted, extra = _adjusted_values(table, results, methods, uncertainty or {}, cells)
    text = {}
    if applied:
        text["recommended_method"] = [""] * len(table.rows)
        for group in table.groups:
            said = applied.get(group.name) or ""
            if not isinstance(said, str) and table.wide is not None:   # (a wide line holds every criterion)
                said = said[1]
            for i in group.file_rows:
                text["recommended_method"][i] = said if isinstance(said, str) else ""
            if not isinstance(said, str):   # a rubric's: each rating's criterion's; a line of several, the joined label
                each, joined = said
                seen: dict = {}
                for row, method in zip(np.asarray(group.rows).tolist(), each):
                    seen.setdefault(row, set()).add(method)
                for row, methods in seen.items():
                    text["recommended_method"][row] = next(iter(methods)) if len(methods) == 1 else joined
        extra.append("recommended_method")
    adjusted_header(table, methods)    # refuses an input column the output would add
    clash = [c for c in extra if c in table.header]
    if clash:
        raise InputError(f"input already has column(s) {', '.join(clash)} that the output adds; rename them",
                         table.path, 1, clash[0])
    return values, shifted, extra, text


def _adjusted_values(table: RatingsTable, results, methods, uncertainty, cells):
    """``(values, shifted, extra)``: ``{column: float per row (nan: blank)}``, the columns on the
    scale ``0..M`` (shifted by the scale's low end on output), and the added columns in order."""
    n = len(table.rows)
    low = table.scale.low
    values, shifted, extra = {}, set(), []
    paper_at = {}
    for group in table.groups:    # the group's lines with a paper and that paper (within the group), found once
        at = group.paper_at if group.paper_at is not None else _paper_at(table, group)
        on = at >= 0
        paper_at[group.name] = (group.file_rows, at) if on.all() else (group.file_rows[on], at[on])

    def per_paper(get):
        col = np.full(n, np.nan)
        for group in table.groups:
            v = get(group.name)
            if v is None:
                continue
            rows, at = paper_at[group.name]
            col[rows] = np.asarray(v)[at]
        return col

    for m in methods:
        rating = np.full(n, np.nan)
        for group in table.groups:
            adj: Adjusted | None = results.get(group.name, {}).get(m)
            if adj is not None:
                rating[group.rows] = adj.rating
        paper = per_paper(lambda g: getattr(results.get(g, {}).get(m), "paper", None))
        cols = adjusted_columns([m])
        if table.columns.facets:   # the paper's score in each line's cell, and its rubric total
            paper[:] = np.nan
            total = np.full(n, np.nan)
            for group in table.groups:
                got = (cells or {}).get(group.name, {}).get(m)
                if got is not None:
                    paper[group.rows], total[group.rows] = got[0], got[1] - low
            cols = cols + [f"{m}_total"]
            values[f"{m}_total"] = total
        values.update(zip(cols, (rating, paper)))
        shifted.update(cols)
        extra += cols
        us = [u.get(m) for u in uncertainty.values() if u.get(m) is not None]
        if us:
            values[f"{m}_paper_se"] = per_paper(lambda g: getattr(uncertainty.get(g, {}).get(m), "se", None))
            extra.append(f"{m}_paper_se")
            if any(u.pass_prob is not None for u in us):
                values[f"{m}_paper_pass"] = per_paper(
                    lambda g: getattr(uncertainty.get(g, {}).get(m), "pass_prob", None))
                extra.append(f"{m}_paper_pass")
    return values, shifted, extra


def _paper_at(table: RatingsTable, group: RatingsGroup) -> np.ndarray:
    """The paper (index into the group's ``paper_ids``, -1: none) of each of its ``file_rows``."""
    pid = {p: j for j, p in enumerate(group.ratings.paper_ids)}
    column = table.rows.column(table.columns.paper)
    at = np.array([pid.get(v, -1) for v in column.labels], dtype=np.int64)
    return at[column.codes[group.file_rows]]


def _write_rows(path, table: RatingsTable, extra, values, text, shifted, fmt: str, chunk: int) -> None:
    """Write the input's columns, ``flag`` and the ``extra`` columns (``text`` as it is, ``values``
    formatted with ``fmt`` in the input's decimal mark), a column at a time: each column's distinct
    texts are neutralised (:func:`_neutralised`), formatted (:func:`_formatted`; a column of the same
    numbers as the one before it, as a Rasch model's ``X_paper`` of its ``X`` at 2 raters a paper, takes
    that one's texts: 1M ratings, 0.02 s) and quoted once, and the lines joined by pyarrow
    (:func:`ratercal_cli.columnar.write_columns`; ``chunk`` is unused)."""
    import sys

    from ..guard import neutralise_row

    low = table.scale.low
    header = table.header + ["flag"] + extra
    # tabs where the name says so, or the input had them and the name does not say .csv (-o x.txt, -o -)
    name = str(path).lower()
    tabs = name.endswith((".tsv", ".tab")) or table.delimiter == "\t" and not name.endswith(".csv")
    delim = "\t" if tabs else ";" if table.delimiter == ";" else ","
    mark = "," if table.decimal == "," and delim != "," else "."
    # the input's cells as a spreadsheet shows them without running them ('=x; -1 stays a number)
    columns = [_neutralised(table.rows.column(c)) for c in table.header]
    columns.append(table.flag_column())
    last = None   # (the numbers of the column before, its texts): X_paper is often X's numbers again
    for c in extra:
        if c in text:
            columns.append(Column.from_values(text[c]))
            last = None
            continue
        v = values[c] + (low if c in shifted else 0)
        if last is not None and np.array_equal(v.view(np.int64), last[0].view(np.int64)):
            columns.append(last[1])
        else:
            columns.append(_formatted(v, fmt, mark))
        last = (v, columns[-1])
    if str(path) == "-":
        sys.stdout.flush()   # what was printed before goes first
    with open_output(path, "wb") as fh:
        if table.bom and str(path) != "-":   # as the input: Excel then reads the accents as they were
            fh.write(codecs.BOM_UTF8)
        write_columns(fh, neutralise_row(header), columns, delim, table.newline)


def _neutralised(column: Column) -> Column:
    """:func:`~ratercal_cli.guard.neutralise` of each label of a column: called on the labels that
    start as a formula would (:data:`~ratercal_cli.guard.FORMULA_START`, found by one search over
    all of them), which it leaves alone if they are plain numbers."""
    from ..guard import FORMULA_START, neutralise

    starts = column.matching("".join(FORMULA_START), start=True)
    if not starts:
        return column
    to = {column.labels[k]: neutralise(column.labels[k]) for k in starts}
    return column.remapped(to)


def _formatted(v, fmt: str, mark: str) -> Column:
    """``fmt`` of each value of the float array ``v`` in decimal mark ``mark`` ("" where not finite),
    as a :class:`~ratercal_cli.columnar.Column`: ``"{:.Nf}"`` by
    :func:`~ratercal_cli.columnar.fixed_column` (a text per rounded value), any other format once
    for each distinct value (a column of adjusted scores has few: 1M ratings, 2.0 s of str.format).
    Distinct by their bits, so that -0.0 stays "-0.0000" as ``str.format`` writes it (two values
    that format alike are two labels of one text)."""
    fixed = FIXED_FORMAT.fullmatch(fmt)
    if fixed:
        return fixed_column(v, int(fixed.group(1)), mark, nonfinite="")
    inv, u = first_seen(np.ascontiguousarray(v, dtype=np.float64).view(np.int64))
    u = u.view(np.float64)
    text = [fmt.format(x).replace(".", mark) for x in u.tolist()]
    for k in np.flatnonzero(~np.isfinite(u)).tolist():
        text[k] = ""
    return Column(inv, text)


# -- the public reader -----------------------------------------------------------------
#: ``--sep`` as the command line spells it -> the separator (None: from the header line).
SEPARATORS = {"auto": None, "comma": ",", ",": ",", "tab": "\t", "semicolon": ";", ";": ";"}


#: ``--decimal``: the decimal mark of the scores (auto: :func:`sniff_decimal`).
DECIMALS = {"auto": None, "point": ".", ".": ".", "comma": ",", ",": ","}


def resolve_decimal(path, sep="auto", decimal="auto", encoding=None) -> str:
    """``--decimal`` as ``"point"`` or ``"comma"``: ``auto`` by :func:`sniff_decimal` (before the cuts are
    read, whose decimal mark is the file's: ``--cut 3,5`` is 3.5 in a file of decimal commas); an
    :class:`ArgumentError` for an unknown separator or mark."""
    if sep not in SEPARATORS:
        raise ArgumentError("sep", f"expected one of {', '.join(SEPARATORS)}, not {sep!r}")
    if decimal not in DECIMALS:
        raise ArgumentError("decimal", f"expected auto, point or comma, not {decimal!r}")
    if DECIMALS[decimal] is not None:
        return "comma" if DECIMALS[decimal] == "," else "point"
    return sniff_decimal(path, SEPARATORS[sep], encoding)


def read_ratings_table(path, scale=None, paper_col="paper", rater_col="rater", score_col="score", group_col=None,
                       sep="auto", encoding=None, order_col=None, resolve_discrepancies=False,
                       discrepancy=1, decimal="auto", sheet=None, fold_labels=False, facet_cols=(),
                       score_cols=None, rater_cols=None, leave_out=()) -> RatingsTable:
    """:func:`read_ratings_file` with the command line's file options (``--paper-col`` ... as keywords)."""
    mark = "," if resolve_decimal(path, sep, decimal, encoding) == "comma" else "."
    return read_ratings_file(path, scale=scale, columns=Columns(paper_col, rater_col, score_col, group_col, order_col,
                                                                tuple(facet_cols or ())),
                             delimiter=SEPARATORS[sep], resolve=resolve_discrepancies, threshold=discrepancy,
                             encoding=encoding, decimal=mark, sheet=sheet, fold_labels=fold_labels,
                             score_cols=score_cols, rater_cols=rater_cols, leave_out=leave_out)


def read_ratings(path, scale=None, paper_col="paper", rater_col="rater", score_col="score", group_col=None,
                 sep="auto", encoding=None, order_col=None, resolve_discrepancies=False,
                 discrepancy=1, decimal="auto", sheet=None, fold_labels=False, facet_cols=(), score_cols=None,
                 rater_cols=None, leave_out=()) -> Ratings:
    """Read a ratings file (CSV, TSV or .xlsx, one rating per line) as ``ratercal check/adjust/compare``
    do, with their file options as keywords (``--paper-col`` is ``paper_col``, ...).

    Parameters
    ----------
    path : str, Path or pandas.DataFrame
        The file (a DataFrame, one rating a row, is read by :meth:`Ratings.from_frame`: the file-only
        keywords are refused for it).
    scale : str, optional
        ``"0-5"`` (``--scale``); default the lowest to the highest score found (with a warning).
    paper_col, rater_col, score_col : str
        The columns naming the paper and the rater and holding the score.
    group_col : str, optional
        A column (e.g. ``"grade"``) whose groups are analysed separately.
    sep : {"auto", "comma", "tab", "semicolon"}
        The separator (auto: tab, semicolon or comma, from the header line).
    encoding : str, optional
        The file's text encoding (default UTF-8).
    order_col : str, optional
        The order in which a paper's ratings were read (default: a column ``order``, else the lines).
    resolve_discrepancies : bool
        Apply the third-reading rule: on a paper whose first two ratings differ by more than
        ``discrepancy``, keep the third and the nearer of the first two.
    discrepancy : int
        The largest difference of the first two ratings that needs no third.
    decimal : {"auto", "point", "comma"}
        The decimal mark of the scores (``"comma"``: ``2,0`` in a file separated by ``;`` or tabs) and of
        the numbers written back; ``"auto"`` from the file's cells (:func:`sniff_decimal`: comma in a ``;`` file
        with no decimal point, or in a ``;`` or tab file with decimal commas and no point).
    sheet : str, optional
        The sheet of an .xlsx workbook (default: its only sheet).
    fold_labels : bool
        Merge paper, rater and group labels that differ only in case, spacing or Unicode form
        (without it they are warned of and kept apart).
    facet_cols : sequence of str
        Further facets of each rating (``["criterion"]``, ``--facet-col``): one rating per paper,
        rater and combination of their levels.
    leave_out : sequence of str, optional
        Raters (labels) whose ratings are read as not given (``--leave-out``): their papers are scored from
        their other ratings (the remedy ``check`` names where a rater of few papers stops the adjustment).
    score_cols, rater_cols : str or list, optional
        A wide file: a column per criterion (``"style,org,conv"``; they become the facet
        ``criterion``), a column per rater (``"rater_*"``), or a pair of columns per reading, its
        rater's and its score's (``"Reader *:Score *"``: read in the pairs' order).

    Returns
    -------
    Ratings
        Every usable rating (missing scores left out, dropped ones with ``resolve_discrepancies``),
        raters in natural order (R1, R2, ..., R10), groups in natural order, ``source`` the file's
        name; what reading found worth saying is in ``notes`` and issued as :class:`UserWarning`.
        Bad input raises :class:`~ratercal_cli.errors.InputError` naming the file, line and field.

    Examples
    --------
    >>> import ratercal_cli as rc
    >>> r = rc.read_ratings("examples/ratings.csv", scale="0-5", group_col="grade")   # doctest: +SKIP
    >>> r.group_ids, r.rater_ids[:3]                                                  # doctest: +SKIP
    (('5', '8', '11'), ('R1', 'R3', 'R4'))
    """
    given = dict(locals())   # (the keywords as called, before any other name is bound here)
    import inspect
    import warnings

    if is_frame(path):   # (as check, adjust and compare take one): a file's keyword set to other than its default
        defaults = inspect.signature(read_ratings).parameters   # (an empty one as its empty default) is refused
        return frame_ratings(path, **{k: v for k, v in given.items() if k in FRAME_ARGS or
                                      k != "path" and (v or None) != (defaults[k].default or None)})
    table = read_ratings_table(path, scale, paper_col, rater_col, score_col, group_col, sep, encoding, order_col,
                               resolve_discrepancies, discrepancy, decimal=decimal, sheet=sheet,
                               fold_labels=fold_labels, facet_cols=facet_cols, score_cols=score_cols,
                               rater_cols=rater_cols, leave_out=leave_out)
    level = _caller_level()
    for message in table.warnings:
        warnings.warn(message, UserWarning, stacklevel=level)
    return table.ratings


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside ratercal, for a warning of the function calling
    this one: ``rc.adjust(path)`` is reported at the user's line, not inside the library."""
    import sys
    import types

    package = str(Path(__file__).resolve().parent.parent)
    frame: types.FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(package):
        frame, level = frame.f_back, level + 1
    return level
