"""``adjust``'s outputs in the input's format and layout: CSV or an ``.xlsx`` workbook, long or wide.

* **Format**: ``-o NAME.xlsx`` writes a workbook (openpyxl): numbers as numbers, every text cell as a
  string, never a formula (:func:`ratercal_cli.guard.text_cell`); an ``.xlsx`` input comes back as
  ``.xlsx`` by default, and as CSV (``-o NAME.csv``) with a UTF-8 byte-order mark, so Excel shows
  "Zoë" as it was in the workbook.
* **Layout**: a long input (a rating a line) comes back long (:func:`ratings_file.write_adjusted`'s
  columns).  A wide input stays wide, a line per input line: with a column per criterion
  (``--score-cols``) each criterion column is followed by the student's adjusted score on it per
  method (``style_TLI``: the ``X_paper`` of the long file), then ``flag`` and the rubric total
  (``TLI_total``); with a column per rater (``--rater-cols``) each rater column is followed by that
  rating adjusted (``rater_1_TLI``), then ``flag`` and the paper's adjusted score (``TLI_paper``, with
  ``_se`` and ``_pass`` where the method gives them).
* Labels a spreadsheet would run as formulas (``=HYPERLINK(...)``) are written inert (OWASP's CSV
  injection advice, :func:`ratercal_cli.guard.neutralise`) in every format.

:func:`write_table` writes any header and rows the same way (the change list).
"""

from __future__ import annotations

import csv
import math
import os
import re
import zipfile
from pathlib import Path

import numpy as np

from ..errors import ArgumentError, InputError

__all__ = ["WORKBOOK_SUFFIXES", "is_workbook", "adjusted_rows", "write_table", "write_adjusted_file"]

#: Output names written as an Excel workbook.
WORKBOOK_SUFFIXES = (".xlsx",)
#: Names refused: workbooks openpyxl cannot write.
_OTHER_WORKBOOKS = (".xlsm", ".xls", ".ods")

_INT = re.compile(r"[+-]?(0|[1-9][0-9]*)")
_FLOAT = re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_COMMA_FLOAT = re.compile(r"[+-]?[0-9]+,[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: a whole number written with leading zeros (``03``): a sheet's number cell formatted ``00`` reads so
_PADDED = re.compile(r"0[0-9]+")


def is_workbook(path, option: str = "output") -> bool:
    """Whether ``path`` names an ``.xlsx`` workbook; an :class:`InputError` naming ``option`` (``-o``)
    for a spreadsheet format that cannot be written (``.xls``, ``.xlsm``, ``.ods``)."""
    suffix = Path(str(path)).suffix.lower()
    if suffix in _OTHER_WORKBOOKS:
        raise ArgumentError(option, f"ratercal writes .xlsx workbooks and CSV, not {suffix}; name it .xlsx or .csv",
                            path)
    return suffix in WORKBOOK_SUFFIXES


def _cell_value(text, label=False, decimal="."):
    """An input cell (text) for a workbook: a plain whole or decimal number as a number (a label with
    a leading zero, ``007``, stays text; with ``decimal`` ``","``, ``3,5`` is 3.5: a decimal-comma file's
    ``3,0`` beside ``3`` made a column of text and numbers, which Excel's SUM reads in part), a date as
    ratercal reads a workbook's date cell, ``2025-03-01``, as a date (it came back text), anything else as
    the text.  A ``label`` (a paper's, rater's, group's or criterion's) becomes a number only when it reads
    back as the same text (``12``; not ``+1``, ``1.50`` or ``1.0``), and never a date, so a label read from
    the workbook names the same paper or rater as in the input."""
    if isinstance(text, str):
        t = text.strip()
        if _INT.fullmatch(t):
            number = int(t)
        elif _FLOAT.fullmatch(t) and decimal != ",":   # (in a decimal-comma file 1.234 is a thousand, or text)
            number = float(t)
        elif decimal == "," and _COMMA_FLOAT.fullmatch(t):
            number = float(t.replace(",", "."))
        elif not label and _DATE.fullmatch(t):
            import datetime as dt

            try:
                return dt.date.fromisoformat(t)
            except ValueError:
                return text
        else:
            return text
        if label and (t != text or _cell_text(number) != t):
            return text
        return number
    return text


def _cell_text(number) -> str:
    """The text ratercal reads from a workbook's number (:func:`.ratings_file._cell_text`)."""
    from .ratings_file import _cell_text as cell_text

    return cell_text(number)


def _number(v, digits=4):
    return None if v is None or not math.isfinite(v) else round(float(v), digits)


def adjusted_rows(table, values, shifted, extra, text, methods=(), wide=None):
    """``(header, rows)`` of the adjusted file: each row a list of the input's cells (text), the flag
    and the added columns (floats on the file's scale, None for blank; ``text`` columns as text).

    ``values``, ``shifted``, ``extra``, ``text``: :func:`.ratings_file._adjusted_values`' columns per
    long row; ``methods`` the methods' codes.  ``wide``: ``(input header, wide columns, "criterion" | "rater" | "reading")`` of a wide input, or None.
    """
    from ..columnar import first_seen

    low = table.scale.low

    def added(c, at=None) -> list:
        """The added column ``c``, a cell per long row (``at``: of those rows): text as it is, a number on the
        file's scale rounded (:func:`_number`, None for blank) once per distinct value (a million cells have
        a few thousand)."""
        if c in text:
            return text[c] if at is None else [text[c][i] for i in at]
        v = values[c] if at is None else values[c][at]
        v = np.ascontiguousarray(v + (low if c in shifted else 0), dtype=np.float64)
        codes, distinct = first_seen(v.view(np.int64))   # (by their bits: -0.0 stays -0.0)
        cells = np.array([None] + [_number(x) for x in distinct.view(np.float64).tolist()], dtype=object)
        return cells[codes + 1].tolist()

    flags = table.flags   # (a list made once; the rows are held a column at a time: read a column at a time)
    if wide is None:
        header = table.header + ["flag"] + list(extra)
        rows = [list(r) for r in zip(*(table.rows.values(c) for c in table.header), flags,
                                     *(added(c) for c in extra))]
        return header, rows
    from ..vocabulary import adjusted_columns
    from .wide import READING

    in_header, cols, kind = wide
    # a pair of columns per reading (kind "reading": ``cols`` rater, score, rater, score...): each rater column its
    # reading's rater, each score column its score; a long row's wide column is its reading's score column
    pairs = dict(zip(cols[0::2], cols[1::2])) if kind == "reading" else None
    value_cols = set(pairs.values()) if pairs else set(cols)
    new_col = {"criterion": "criterion", "reading": READING}.get(kind, table.columns.rater)
    score_col = table.columns.score
    # beside each wide column: the student's adjusted score on the criterion (X_paper) or the rating
    # adjusted (X); a rubric's per-rating X is left out (its cell's X_paper says it); the rest at the end

    beside = {}
    for m in methods:
        rating_col, paper_col = adjusted_columns([m])
        key = paper_col if kind == "criterion" else rating_col
        if key in extra:
            beside[key] = m
    drop = {adjusted_columns([m])[0] for m in methods} if kind == "criterion" else set()
    tail = [c for c in extra if c not in beside and c not in drop]
    header = _wide_header(table, in_header, value_cols, beside, tail)
    by_line, firsts = _by_line(table)
    new_of, score_of = table.rows.values(new_col), table.rows.values(score_col)
    beside_of = [added(c) for c in beside]
    kept = {h: table.rows.values(h, firsts) for h in in_header if h not in set(cols)}   # a cell per line
    tail_of = [added(c) for c in tail]   # (a cell per long row: a line's is its first rated row's, _wide_lines)
    return header, _wide_lines(in_header, by_line, new_of, score_of, beside_of, kept, flags, tail_of, value_cols,
                               pairs, table.rows.values(table.columns.rater) if pairs else None,
                               table.rows.values(table.columns.paper) if kind == "criterion" else None)


def _wide_lines(in_header, by_line, key_of, score_of, beside_of, kept, flags, tail_of, value_cols, pairs=None,
                rater_of=None, paper_of=None) -> list:
    """A wide output's rows, a line per input line (``by_line``): each of ``value_cols`` its long row's score (the
    long row whose ``key_of`` is the column's name) and its adjusted cells (``beside_of``), each rater column of
    ``pairs`` (``{rater column: its score column}``) that reading's rater (``rater_of``), the other input columns
    as they were (``kept``), then the flags and ``tail_of`` (a cell per long row, the paper's: a line's is that of
    its first long row with one; a line's first cell blank, a rubric's student's total was blank on that line,
    a staff tester's file).  ``paper_of`` (a rubric's: each long row's paper): beside a blank cell, the student's
    adjusted score on that criterion from another line (it was blank beside the blank, the criterion's next columns
    the student's, a verifier)."""
    rows = []
    found: dict = {}

    def of_paper(b, paper, h):   # (made the first time a line's cell is blank)
        if b not in found:
            found[b] = {}
            for i, v in enumerate(beside_of[b]):
                if _filled(v):
                    found[b].setdefault((paper_of[i], key_of[i]), v)
        return found[b].get((paper, h))
    for k, idx in enumerate(by_line.values()):
        at = {key_of[i]: i for i in idx}
        row = []
        for h in in_header:
            if pairs and h in pairs:   # a reading's rater
                i = at.get(pairs[h])
                row.append(rater_of[i] if i is not None else "")
            elif h in value_cols:
                i = at.get(h)
                row.append(score_of[i] if i is not None else "")
                cells = [b[i] if i is not None else None for b in beside_of]
                if paper_of is not None and not all(map(_filled, cells)):
                    paper = paper_of[idx[0]]
                    cells = [c if _filled(c) else of_paper(b, paper, h) for b, c in enumerate(cells)]
                row += cells
            else:
                row.append(kept[h][k])
        row.append(" ".join(dict.fromkeys(flags[i] for i in idx if flags[i])))
        row += [next((t[i] for i in idx if _filled(t[i])), t[idx[0]]) for t in tail_of]
        rows.append(row)
    return rows


def _filled(cell) -> bool:
    """An added cell with a value (None and "" are blank)."""
    return cell is not None and cell != ""


def _wide_header(table, in_header, after, beside, tail) -> list:
    """A wide output's header: the input's columns, each of ``after`` followed by its adjusted columns (``h_X`` per
    method of ``beside``), then the flag and ``tail``; an :class:`InputError` where a name it adds is the input's."""
    header = []
    for h in in_header:
        header.append(h)
        if h in after:
            header += [f"{h}_{m}" for m in beside.values()]
    clash = [h for h in header + tail if (header + ["flag"] + tail).count(h) > 1]
    if clash:
        raise InputError(f"input already has a column {clash[0]!r} that the wide output adds; rename it",
                         table.path, 1, clash[0])
    return header + ["flag"] + tail


def _by_line(table) -> tuple:
    """``({input line: its long rows}, each line's first long row)`` of a wide input, in the lines' order."""
    by_line: dict = {}
    for i, ln in enumerate(table.lines.tolist()):
        by_line.setdefault(ln, []).append(i)
    return by_line, np.array([idx[0] for idx in by_line.values()], dtype=np.int64)


def like_input(table) -> dict:
    """:func:`write_table`'s ``delimiter``, ``decimal`` and ``newline`` for a table written beside an input ``table``
    (a :class:`.ratings_file.RatingsTable`): a ``;`` file's (a spreadsheet's CSV where the decimal mark is a comma)
    separator and decimal mark, so that the spreadsheet that read the input reads it (the adjusted file keeps
    them too), else commas and points; and the input's line ends (a CRLF file's change list had LF alone, a staff
    tester).  The command line's ``--changes`` and the app's change list both."""
    return {"delimiter": ";" if table.delimiter == ";" else ",", "decimal": table.decimal,
            "newline": getattr(table, "newline", "\n") or "\n"}


def write_table(path, header, rows, *, bom=False, delimiter=",", newline="\n", decimal=".", sheet="Sheet1",
                digits=4, labels=(), numbers=()) -> None:
    """Write ``header`` and ``rows`` (lists of text, numbers or None) atomically as CSV (``delimiter``,
    numbers with ``digits`` decimals in the ``decimal`` mark, a byte-order mark with ``bom``) or, for a
    name ending ``.xlsx``, as a workbook with one sheet ``sheet``: numbers as numbers (input cells that
    are plain numbers too), text as strings.  Text that a spreadsheet would run as a formula is
    neutralised (:func:`ratercal_cli.guard.neutralise`) either way; ``-`` is standard output (CSV).
    ``labels``: the names of columns of labels, whose cells a workbook keeps as text unless the number
    reads back as the same label (:func:`_cell_value`); ``numbers``: the names of columns of scores, whose
    whole numbers written with leading zeros (``03``: a sheet's number cell formatted ``00`` reads so) a
    workbook keeps as numbers so formatted, where another column's ``007`` (an id) stays text."""
    from ..guard import neutralise_row
    from ..io import open_output

    if str(path) != "-" and is_workbook(path):
        _write_xlsx(path, header, rows, sheet, digits, [h in set(labels) for h in header], decimal,
                    [h in set(numbers) for h in header])
        return
    fmt = f"{{:.{digits}f}}"

    def text(v):
        if v is None:
            return ""
        if isinstance(v, float):
            if not math.isfinite(v):
                return ""
            s = fmt.format(v)
            return s.replace(".", ",") if decimal == "," and delimiter != "," else s
        if isinstance(v, (int, np.integer)):
            return str(v)
        return v

    with open_output(path) as fh:
        if bom and str(path) != "-":
            fh.write("\ufeff")
        w = csv.writer(fh, delimiter=delimiter, lineterminator=newline)
        w.writerow(neutralise_row(header))
        for r in rows:
            w.writerow(neutralise_row([text(v) for v in r]))


def _write_xlsx(path, header, rows, sheet, digits, label, decimal=".", number=None) -> None:
    import openpyxl
    from openpyxl.cell import WriteOnlyCell

    from ..guard import text_cell

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet(title=_sheet_title(sheet))

    def cells(values, convert):
        out = []
        for v, is_label, is_number in zip(values, label, number or [False] * len(label)):
            # a score written with leading zeros (a cell formatted 00, read as the 03 it showed) comes back a
            # number so formatted: as text, Excel's SUM of the column skipped it
            padded = convert and is_number and not is_label and isinstance(v, str) and _PADDED.fullmatch(v) is not None
            width = len(v) if padded else 0
            if isinstance(v, float):
                v = round(v, digits) if math.isfinite(v) else None
            elif isinstance(v, np.integer):
                v = int(v)
            elif padded:
                v = int(v)
            elif convert:
                v = _cell_value(v, is_label, decimal)
            cell = text_cell(WriteOnlyCell(ws), v)
            if not isinstance(v, (str, int, float, type(None))):   # (a date: shown as one)
                cell.number_format = "yyyy-mm-dd"
            elif padded:
                cell.number_format = "0" * width
            out.append(cell)
        return out

    ws.append(cells(header, False))
    for r in rows:
        ws.append(cells(r, True))
    _save_workbook(wb, path)


def _save_workbook(wb, path) -> None:
    """``wb`` written to ``path`` (atomically, :func:`.io.open_output`) the same to the byte from run to run:
    openpyxl's save stamps the workbook's properties with the time of saving and each zip entry with the
    time it was written (a staff tester's two runs 1.5 s apart differed), so the properties carry
    ``SOURCE_DATE_EPOCH`` (the reproducible-builds convention, as the memo's date does) or else 1980-01-01,
    and every entry that time."""
    import datetime as dt

    from openpyxl.writer.excel import ExcelWriter

    from ..io import open_output

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    when = dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc) if epoch.isdigit() else \
        dt.datetime(1980, 1, 1, tzinfo=dt.timezone.utc)
    when = max(when, dt.datetime(1980, 1, 1, tzinfo=dt.timezone.utc)).replace(tzinfo=None)   # (a zip's earliest)
    wb.properties.created = wb.properties.modified = when
    with open_output(path, mode="wb") as fh:
        ExcelWriter(wb, _StampedZip(fh, when)).save()


class _StampedZip:
    """A ``zipfile.ZipFile`` for writing whose every entry carries the time ``when`` (:func:`_save_workbook`):
    ``writestr`` of a name and ``write`` of a file (openpyxl's write-only sheets) as ZipFile makes them,
    but for their time."""

    def __init__(self, fh, when):
        self._zip = zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED, allowZip64=True)   # (as openpyxl's save)
        self._when = when.timetuple()[:6]

    def _info(self, name):
        info = zipfile.ZipInfo(name, date_time=self._when)
        info.compress_type = self._zip.compression
        info.external_attr = 0o600 << 16   # (what ZipFile.writestr gives an entry of a name)
        return info

    def writestr(self, name, data, *args, **kwargs):
        return self._zip.writestr(name if isinstance(name, zipfile.ZipInfo) else self._info(name), data, *args, **kwargs)

    def write(self, filename, arcname=None, *args, **kwargs):
        import shutil

        info = self._info(arcname or os.path.basename(filename))
        info.file_size = os.path.getsize(filename)
        with open(filename, "rb") as src, self._zip.open(info, "w", force_zip64=info.file_size > 2 ** 31) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)

    def __getattr__(self, name):
        return getattr(self._zip, name)


def _sheet_title(name) -> str:
    """A sheet title Excel accepts: at most 31 characters, none of ``[]:*?/\\``."""
    t = re.sub(r"[\[\]:*?/\\]", "_", str(name or "Sheet1"))[:31].strip("'")
    return t or "Sheet1"


def write_adjusted_file(path, table, result, total="sum", layout="input", bom=None, sheet=None) -> int:
    """Write ``result`` (an :class:`~.adjust.AdjustResults` of ``table``'s ratings) to ``path`` in the
    layout of :func:`adjusted_rows` (``layout="long"``: a line per rating even for a wide input) and the
    format of :func:`write_table`; ``bom`` (default: the
    input's, or True for a workbook read as CSV) and ``sheet`` (default: the input's sheet's name).
    Returns the number of lines written below the header."""
    from .ratings_file import adjusted_output

    methods = list(result.methods)
    values, shifted, extra, text = adjusted_output(table, result.by_group(), methods, result.uncertainty_by_group(),
                                                   result.cells_by_group(total), result.recommended_lines() or None)
    header, rows = adjusted_rows(table, values, shifted, extra, text, methods,
                                 table.wide if layout == "input" else None)
    workbook_in = getattr(table, "sheet", None) is not None
    write_table(path, header, rows, bom=(table.bom or workbook_in) if bom is None else bom,
                delimiter="\t" if str(path).lower().endswith((".tsv", ".tab")) else
                ";" if table.delimiter == ";" else ",", newline=table.newline, decimal=table.decimal,
                sheet=sheet or getattr(table, "sheet", None) or "adjusted",
                labels=[c for c in (table.columns.paper, table.columns.rater, table.columns.group,
                                    *table.columns.facets) if c],
                numbers=[table.columns.score, *(table.wide[1] if table.wide else ())])
    return len(rows)
