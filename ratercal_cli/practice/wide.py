"""Wide rubric exports read as ratings without the user reshaping them.

Two layouts are common:

* one row per reading with a column per criterion (``student,rater,style,org,conv,sent_form``):
  ``--score-cols style,org,conv,sent_form`` makes each of those cells a rating whose ``criterion``
  (a further facet, :data:`CRITERION`) is the column's name;
* one row per paper with a column per rater (``paper,rater_1,rater_2,...``, blank where the rater
  did not read the paper): ``--rater-cols rater_1,rater_2`` (or a pattern, ``rater_*``) makes each
  filled cell a rating by the rater the column names;
* one row per paper with a pair of columns per reading, who read it and the score
  (``paper,reader 1,score 1,reader 2,score 2,...``, a scoring system's export): ``--rater-cols
  'reader 1:score 1,reader 2:score 2'`` (or patterns, ``'reader *:score *'``, their columns paired in
  the header's order) makes each reading a rating by the rater its cell names, read in the pairs' order
  (a column ``order``: the first pair's reading is the first).

:func:`melt` turns the rows of such a file into long rows (``paper``, the rater column, a
``criterion`` column, the score column), each keeping its file line and the file's other columns, so
everything after reading (validation, duplicates, groups, facets, messages naming the line) is the
same as for a long file.  In the long output of ``adjust`` each rating is one line.
"""

from __future__ import annotations

import fnmatch

from ..errors import ArgumentError, InputError, arg

#: The facet a ``--score-cols`` file's columns become.
CRITERION = "criterion"


def expand_columns(spec, header, path, option) -> list:
    """Column names from ``a,b,c`` and/or patterns (``rater_*``), in the header's order for patterns;
    ArgumentError naming ``option`` (the argument, e.g. ``score_cols``) for a name not in the header or
    a pattern matching nothing."""
    if isinstance(spec, str):
        spec = [spec]
    out = []
    for item in spec:
        for name in (s.strip() for s in str(item).split(",")):
            if not name:
                continue
            if any(ch in name for ch in "*?["):
                hits = [c for c in header if fnmatch.fnmatchcase(c, name)]
                if not hits:
                    raise ArgumentError(option, f"pattern {name!r} matches no column (columns: "
                                                f"{', '.join(header)})", path, 1)
                out += hits
            elif name not in header:
                raise ArgumentError(option, f"no column {name!r} (columns: {', '.join(header)})", path, 1)
            else:
                out.append(name)
    out = list(dict.fromkeys(out))
    if len(out) < 1:
        raise ArgumentError(option, "names no column", path, 1)
    return out


#: the columns a file of a pair of columns per reading melts into besides the rater and the score: the
#: reading's score column (its name: what an error names) and its place in the order of reading
READING, ORDER = "reading", "order"


def expand_pairs(spec, header, path, option, keep=None) -> list | None:
    """``[(rater column, score column)]`` of ``a:b`` items (each side a name or a pattern, the two sides'
    columns paired in the header's order), or None where no item is a pair (a column per rater).  ``keep``:
    ``{column: its argument}``, the file's columns the analysis reads as they are, which no side may take in
    (refused before the sides' counts are compared: a pattern that took in the paper column said only that
    it had more columns than the other side)."""
    items = [spec] if isinstance(spec, str) else list(spec)
    parts = [x.strip() for item in items for x in str(item).split(",") if x.strip()]
    if not any(":" in x for x in parts):
        return None
    pairs = []
    for x in parts:
        if x.count(":") != 1 or not all(side.strip() for side in x.split(":")):
            raise ArgumentError(option, f"{x.rstrip(':')!r}: give each reading as RATER_COLUMN:SCORE_COLUMN (a pattern "
                                "on each side pairs their columns in the header's order)", path, 1)
        left, right = (expand_columns(side.strip(), header, path, option) for side in x.split(":"))
        taken = [c for c in left + right if c in (keep or {})]
        if taken:
            raise ArgumentError(option, f"{taken[0]!r} is the file's {keep[taken[0]]} column; name only the "
                                "readings' rater and score columns", path, 1)
        if len(left) != len(right):
            raise ArgumentError(option, f"{x!r}: {len(left)} rater column(s) ({', '.join(left)}) against {len(right)} "
                                f"score column(s) ({', '.join(right)})", path, 1)
        pairs += list(zip(left, right))
    flat = [c for pr in pairs for c in pr]
    twice = [c for c in flat if flat.count(c) > 1]
    if twice:
        raise ArgumentError(option, f"column {twice[0]!r} is named in two readings", path, 1)
    return pairs


def melt(header, rows, lines, path, score_cols=None, rater_cols=None, score="score", rater="rater",
         criterion=CRITERION, keep=None):
    """Long ``(header, rows, lines, notes)`` from a wide file (module docstring): :func:`melt_columns` of
    rows as dicts ``{column: text}`` and a list of their lines, the long rows as dicts and their lines as a list."""
    import numpy as np

    from ..columnar import Rows

    wide = Rows.from_dicts(header, list(rows))
    out_header, out, out_lines, notes = melt_columns(header, wide, np.asarray(lines, dtype=np.int64), path, score_cols,
                                                     rater_cols, score, rater, criterion, keep)
    return out_header, list(out), out_lines.tolist(), notes


def melt_columns(header, rows, lines, path, score_cols=None, rater_cols=None, score="score", rater="rater",
                 criterion=CRITERION, keep=None):
    """Long ``(header, rows, lines, notes)`` from a wide file's rows (:class:`~ratercal_cli.columnar.Rows`)
    and their lines (an integer array), a column at a time (module docstring).

    ``score_cols``: the criterion columns (each becomes a rating with ``criterion`` = the column's
    name; a blank cell is a missing rating, as in a long file).  ``rater_cols``: the rater columns
    (each filled cell a rating by that column's rater; blank cells are readings that did not happen
    and are left out).  Not both at once.  ``keep``: ``{column: its argument (:func:`.errors.arg`)}``, the columns the analysis
    reads as they are (the papers', a group's...), which the wide columns may not take in.  The long
    rows are each wide row's cells in the order of the wide columns; each long column's labels are in the
    order they first appear, as :meth:`~ratercal_cli.columnar.Rows.from_dicts` makes them.
    """
    import numpy as np

    from ..columnar import Rows

    if score_cols and rater_cols:
        raise ArgumentError("rater_cols", f"give {arg('score_cols')} (a column per criterion) or "
                            f"{arg('rater_cols')} (a column per rater), not both", path)
    pairs = None if score_cols else expand_pairs(rater_cols, header, path, "rater_cols", keep)
    if pairs is not None:
        return _melt_readings(header, rows, lines, path, pairs, score, rater)
    if score_cols:
        cols, new, cell_name = expand_columns(score_cols, header, path, "score_cols"), criterion, "criterion"
        clash = [c for c in (criterion, score) if c in header and c not in cols]
        keep_blank = True
    else:
        cols, new, cell_name = expand_columns(rater_cols, header, path, "rater_cols"), rater, "rater"
        clash = [c for c in (rater, score) if c in header and c not in cols]
        keep_blank = False
    taken = [c for c in cols if c in (keep or {})]
    if taken:
        option = "score_cols" if score_cols else "rater_cols"
        raise ArgumentError(option, f"{taken[0]!r} is the file's {keep[taken[0]]} column; name only the "
                            f"{'criteria' if score_cols else 'raters'}' columns", path, 1)
    if clash:
        raise InputError(f"the file already has a column {clash[0]!r}, which the wide columns would make; "
                         "rename it", path, 1, clash[0])
    others = [c for c in header if c not in cols]
    wide = [rows.column(c) for c in cols]
    n, m = len(rows), len(cols)
    filled = np.ones((n, m), dtype=bool)
    if not keep_blank:   # a blank cell: no reading
        for j, col in enumerate(wide):
            blank = np.array([not v.strip() for v in col.labels], dtype=bool)
            if blank.any():
                filled[:, j] = ~blank[col.codes]
    at = np.flatnonzero(filled.ravel())   # (row, column) of each long row, row by row
    row, j = at // m, at % m

    out = _kept_columns(rows, others, row, filled.all())
    out[new] = _first_seen_first(j, cols)
    out[score] = _merged(wide, row, j)
    notes = [f"{path}: {n} wide row(s) read as {at.size} rating(s): a rating per "
             f"{cell_name} column ({', '.join(cols)})"]
    return others + [new, score], Rows(others + [new, score], out, int(at.size)), lines[row], notes


def _melt_readings(header, rows, lines, path, pairs, score, rater):
    """:func:`melt_columns` of a file of a pair of columns per reading (module docstring): a reading where
    its rater's cell is filled (a blank score then a missing rating, as in a long file; a score whose rater's
    cell is blank an error naming the line), the long columns the file's others, ``rater``, ``score``,
    :data:`READING` (the reading's score column) and :data:`ORDER` (its pair's place, from 1); ``pairs`` from
    :func:`expand_pairs` (which refuses the file's kept columns)."""
    import numpy as np

    from ..columnar import Rows

    flat = [c for pr in pairs for c in pr]
    clash = [c for c in (rater, score, READING, ORDER) if c in header and c not in flat]
    if clash:
        raise InputError(f"the file already has a column {clash[0]!r}, which the readings' columns would make; "
                         "rename it", path, 1, clash[0])
    others = [c for c in header if c not in flat]
    n, m = len(rows), len(pairs)
    cols = [(rows.column(a), rows.column(b)) for a, b in pairs]
    filled = np.zeros((n, m), dtype=bool)
    for k, (rc, sc) in enumerate(cols):
        r_blank = np.array([not v.strip() for v in rc.labels], dtype=bool)[rc.codes]
        s_blank = np.array([not v.strip() for v in sc.labels], dtype=bool)[sc.codes]
        filled[:, k] = ~r_blank
        orphan = np.flatnonzero(r_blank & ~s_blank)
        if orphan.size:
            i = int(orphan[0])
            raise InputError(f"a score ({sc[i]!r}) without its rater: {pairs[k][0]!r} is blank", path,
                             int(lines[i]), pairs[k][1])
    at = np.flatnonzero(filled.ravel())   # (row, pair) of each long row, row by row
    row, j = at // m, at % m

    out = _kept_columns(rows, others, row, filled.all())
    out[rater], out[score] = (_merged([pr[side] for pr in cols], row, j) for side in (0, 1))
    out[READING] = _first_seen_first(j, [b for _, b in pairs])
    out[ORDER] = _first_seen_first(j, [str(k + 1) for k in range(m)])
    new = others + [rater, score, READING, ORDER]
    notes = [f"{path}: {n} wide row(s) read as {at.size} rating(s): a reading per pair of columns "
             f"({', '.join(f'{a}:{b}' for a, b in pairs)}), read in that order"]
    return new, Rows(new, out, int(at.size)), lines[row], notes


def _merged(wide, row, j):
    """One long column of the wide columns ``wide`` (:class:`~ratercal_cli.columnar.Column` s), long row ``i``
    taking wide column ``j[i]``'s cell on wide row ``row[i]``: each wide column's labels one after another, one
    code per distinct text, in the order they first appear."""
    import numpy as np

    texts = [v for col in wide for v in col.labels]
    code: dict = {}
    merged = np.array([code.setdefault(v, len(code)) for v in texts], dtype=np.int64)
    offset = np.cumsum([0] + [len(col.labels) for col in wide])
    cell = np.empty(row.size, dtype=np.int64)
    for k, col in enumerate(wide):
        mine = j == k
        cell[mine] = offset[k] + col.codes[row[mine]]
    return _first_seen_first(merged[cell] if row.size else cell, list(code))


def _first_seen_first(codes, labels):
    """The column of ``codes`` into ``labels``, labels in the order they first appear (unused ones out)."""
    import numpy as np

    from ..columnar import Column, first_seen

    if not len(codes):
        return Column(np.zeros(0, dtype=np.int64), [])
    inverse, seen = first_seen(np.ascontiguousarray(codes, dtype=np.int64))
    return Column(inverse, [labels[k] for k in seen.tolist()])


def _kept_columns(rows, names, row, every: bool) -> dict:
    """The wide file's other columns ``names``, a cell per long row (``row``: each one's wide row); with ``every``
    (each wide row made as many long rows) their labels as they are, else those used, as they first appear."""
    from ..columnar import Column

    return {c: (Column(rows.column(c).codes[row], rows.column(c).labels) if every else
                _first_seen_first(rows.column(c).codes[row], rows.column(c).labels)) for c in names}
