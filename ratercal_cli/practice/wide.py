"""Wide rubric exports read as ratings without the user reshaping them.

Two layouts are common:

* one row per reading with a column per criterion (``student,rater,style,org,conv,sent_form``):
  ``--score-cols style,org,conv,sent_form`` makes each of those cells a rating whose ``criterion``
  (a further facet, :data:`CRITERION`) is the column's name;
* one row per paper with a column per rater (``paper,rater_1,rater_2,...``, blank where the rater
  did not read the paper): ``--rater-cols rater_1,rater_2`` (or a pattern, ``rater_*``) makes each
  filled cell a rating by the rater the column names.

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


def melt(header, rows, lines, path, score_cols=None, rater_cols=None, score="score", rater="rater",
         criterion=CRITERION, keep=None):
    """Long ``(header, rows, lines, notes)`` from a wide file (module docstring).

    ``score_cols``: the criterion columns (each becomes a rating with ``criterion`` = the column's
    name; a blank cell is a missing rating, as in a long file).  ``rater_cols``: the rater columns
    (each filled cell a rating by that column's rater; blank cells are readings that did not happen
    and are left out).  Not both at once.  ``keep``: ``{column: its argument (:func:`.errors.arg`)}``, the columns the analysis
    reads as they are (the papers', a group's...), which the wide columns may not take in.
    """
    if score_cols and rater_cols:
        raise ArgumentError("rater_cols", f"give {arg('score_cols')} (a column per criterion) or "
                            f"{arg('rater_cols')} (a column per rater), not both", path)
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
    out_header = others + [new, score]
    out_rows, out_lines = [], []
    for ln, r in zip(lines, rows):
        base = {c: r[c] for c in others}
        for c in cols:
            text = r[c]
            if not keep_blank and not text.strip():
                continue
            out_rows.append({**base, new: c, score: text})
            out_lines.append(ln)
    notes = [f"{path}: {len(rows)} wide row(s) read as {len(out_rows)} rating(s): a rating per "
             f"{cell_name} column ({', '.join(cols)})"]
    return out_header, out_rows, out_lines, notes
