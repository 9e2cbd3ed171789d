"""The dissertation's tables (7-14) from a run's score files, and published-vs-regenerated comparison.

Inputs are ``score/scores.csv`` (``set,method,variant,rmse,r,maxdiff``) and
``score/rater_rmse.csv`` (``set,method,variant,rater,n,rmse``).  Per-set criteria are averaged
by facet as Chapter 4 does (README "Criteria and rounding"):

- Tables 8, 13: arithmetic mean of the per-set RMSE / maximum difference over the multi-rater
  sets of each facet level; Table 14 the same over the one-rater sets, of RMSEs first rounded
  to three decimals (which reproduces it; unrounded values miss 7 of its 48 numbers).
- Tables 9, 10: per set and method, the mean of the RMSEs of the three raters of a type
  (``design.RATER_TYPES``); then the arithmetic mean over the sets of the facet level.
- Table 11: correlations averaged through Fisher's z, ``tanh(mean(atanh(r)))``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import criteria
from ..design import parse_code
from ..errors import InputError
from ..io import read_csv
from ..study.run import DESIGN_PATH, RunDesign
from ..vocabulary import (FACETS, ONE_RATER_METHODS, QUALITY_TABLE_LEVELS, RATER_TYPES, STUDY_METHODS,
                          cell_sort_key, level_key)
from ..vocabulary import facet_levels as cell_facet_levels


# ----------------------------------------------------------------------------- containers

@dataclass
class Table:
    """A table: rows ``index`` (tuples named by ``index_names``) x ``columns``; NaN = empty."""

    name: str
    title: str
    index_names: tuple
    columns: tuple
    index: list
    values: np.ndarray
    decimals: int = 2
    note: str = ""
    labels: dict = field(default_factory=dict)   # set code -> the tables' name (0551 -> 2+551)

    def get(self, key, column):
        return self.values[self.index.index(tuple(key)), self.columns.index(column)]

    def rounded(self):
        """Values as printed: :func:`table_round` for 2 decimals, half-up otherwise."""
        return round_table(self.values, self.decimals)


@dataclass
class Comparison:
    """A published table beside the regenerated one, aligned on the published rows/columns."""

    name: str
    published: Table
    regenerated: Table  # same index/columns as ``published``; NaN where not regenerated
    reproduced: np.ndarray  # bool, True where rounded regenerated == published
    present: np.ndarray  # bool, True where a published value exists
    extra: list = field(default_factory=list)

    @property
    def n_published(self) -> int:
        return int(self.present.sum())

    @property
    def n_reproduced(self) -> int:
        return int((self.reproduced & self.present).sum())

    def summary(self) -> str:
        return f"{self.n_reproduced} of {self.n_published} published values reproduced"


# ----------------------------------------------------------------------------- rounding

def round_table(values, decimals=2):
    """Round as the tables print: ``criteria.table_round`` (half-up to 3 then 2) for 2 decimals;
    ``criteria.round_half_up`` at ``decimals`` otherwise (Table 14 prints three)."""
    values = np.asarray(values, dtype=np.float64)
    out = np.full(values.shape, np.nan)
    ok = np.isfinite(values)
    fn = criteria.table_round if decimals == 2 else (lambda v: criteria.round_half_up(v, decimals))
    out[ok] = [float(fn(float(v))) for v in values[ok]]
    return out


# ----------------------------------------------------------------------------- reading

@dataclass
class ScoreData:
    """Criteria of one variant: ``crit[(set, method)] = {"rmse":, "r":, "maxdiff":}``,
    ``rater[(set, method)] = {rater: (n, rmse)}``; ``cells[set]`` the set's cell, as the run's
    design recorded it."""

    variant: str
    sets: list
    methods: list
    crit: dict
    rater: dict
    cells: dict = field(default_factory=dict)
    rater_types: str | None = "table3"   # the run's design's (:class:`.study.run.RunDesign`)


def order_methods(methods):
    known = [m for m in STUDY_METHODS if m in methods]
    return known + sorted(m for m in methods if m not in STUDY_METHODS)


def _float(v, path, lineno, name):
    try:
        return float(v) if v not in ("", "nan", "NaN") else float("nan")
    except ValueError:
        raise InputError(f"not a number: {v!r}", path, lineno, name) from None


def read_scores(run_dir):
    """Read ``RUN/score/scores.csv`` (and ``rater_rmse.csv`` if present) into ``{variant: ScoreData}``;
    the sets' cells come from the run's design (``RUN/rater/design.json``)."""
    run_dir = Path(run_dir)
    design = RunDesign.read(run_dir.joinpath(*DESIGN_PATH))
    cells = {c.code: c for c in design.cells}
    path = run_dir / "score" / "scores.csv"
    _, rows = read_csv(path, required=("set", "method", "variant", "rmse", "r", "maxdiff"))
    by_var = {}
    for lineno, row in rows:
        code = row["set"]
        if code not in cells:
            raise InputError(f"set {code!r} is not in the run's design ({run_dir.joinpath(*DESIGN_PATH)})",
                             path, lineno, "set")
        d = by_var.setdefault(row["variant"], ScoreData(row["variant"], [], [], {}, {}, cells, design.rater_types))
        d.crit[(code, row["method"])] = {k: _float(row[k], path, lineno, k) for k in ("rmse", "r", "maxdiff")}
        if code not in d.sets:
            d.sets.append(code)
        if row["method"] not in d.methods:
            d.methods.append(row["method"])
    rpath = run_dir / "score" / "rater_rmse.csv"
    if rpath.exists():
        _, rrows = read_csv(rpath, required=("set", "method", "variant", "rater", "n", "rmse"))
        for lineno, row in rrows:
            d = by_var.get(row["variant"])
            if d is None:
                continue
            n = _float(row["n"], rpath, lineno, "n")
            d.rater.setdefault((row["set"], row["method"]), {})[int(row["rater"])] = (
                n, _float(row["rmse"], rpath, lineno, "rmse"))
    for d in by_var.values():
        d.sets.sort(key=lambda code: cell_sort_key(cells[code]))
        d.methods = order_methods(d.methods)
    return dict(sorted(by_var.items()))


# ----------------------------------------------------------------------------- facets

def facet_levels(cell):
    """``[(facet, level), ...]`` a set belongs to, as the tables label them, e.g. 2+551 -> all,
    raters 2+, papers 500, scale 0-5, quality normal (the quality shapes as ``skew+``/``skew-``).
    Every set has a ``raters`` level here (Table 14 does not print it)."""
    levels = cell_facet_levels(cell, QUALITY_TABLE_LEVELS)
    return levels if cell.raters_per_paper != "1" else [levels[0], ("raters", "1"), *levels[1:]]


def facet_rows(cells, facets=FACETS):
    """The (facet, level) rows the cells cover, in the tables' order."""
    seen = {fl for c in cells for fl in facet_levels(c) if fl[0] in facets}
    return sorted(seen, key=lambda fl: level_key(*fl))


def facet_average(per_set, sets, columns, cells, rows=None, mean="arithmetic"):
    """Average ``per_set[(set, column)]`` over the sets of each facet level (``cells[set]``: its cell).

    ``mean="arithmetic"`` (NaNs skipped) or ``"fisher"`` (correlations through Fisher's z, via
    ``criteria.fisher_z_mean``).  Returns ``(rows, values)``.
    """
    rows = facet_rows([cells[s] for s in sets]) if rows is None else list(rows)
    groups = defaultdict(list)
    for s in sets:
        for fl in facet_levels(cells[s]):
            groups[fl].append(s)
    values = np.full((len(rows), len(columns)), np.nan)
    for i, fl in enumerate(rows):
        for j, col in enumerate(columns):
            x = np.array([per_set.get((s, col), np.nan) for s in groups.get(fl, [])], dtype=np.float64)
            x = x[np.isfinite(x)]
            if x.size == 0:
                continue
            if mean == "fisher":
                values[i, j] = float(criteria.fisher_z_mean(x))
            else:
                values[i, j] = float(x.mean())
    return rows, values


# ----------------------------------------------------------------------------- the tables

_PER_SET = {"rmse": ("table07_rmse", "Table 7. Overall RMSE of the paper scores, by data set and method"),
            "maxdiff": ("table12_maxdiff", "Table 12. Maximum |adjusted - true| paper score, by data set and method"),
            "r": ("table_correlation_by_set", "Correlations of adjusted with true paper scores, by data set")}


def per_set_table(d: ScoreData, criterion="rmse"):
    """Tables 7 and 12: one row per data set (program code), one column per method."""
    name, title = _PER_SET[criterion]
    vals = np.array([[d.crit.get((s, m), {}).get(criterion, np.nan) for m in d.methods] for s in d.sets],
                    dtype=np.float64).reshape(len(d.sets), len(d.methods))
    return Table(name, title, ("set",), tuple(d.methods), [(s,) for s in d.sets], vals,
                 labels={s: d.cells[s].label for s in d.sets})


def _multi(d):
    return [s for s in d.sets if d.cells[s].raters_per_paper != "1"]


def _one(d):
    return [s for s in d.sets if d.cells[s].raters_per_paper == "1"]


def failed_note(d: ScoreData, sets, methods, criterion="rmse") -> str:
    """The note a facet table needs where a method has no value on some of ``sets`` (its fit failed
    there): its means are over the sets it could fit, not over all of them as the others' are."""
    out = []
    for m in methods:
        miss = [d.cells[s].label for s in sets if not np.isfinite(d.crit.get((s, m), {}).get(criterion, np.nan))]
        if miss:
            out.append(f"{m} has no value on {len(miss)} of the {len(sets)} data sets ({', '.join(miss)}): its "
                       "means are over the sets it could fit")
    return "".join(f" {x}." for x in out)


def facet_table(d: ScoreData, criterion="rmse"):
    """Table 8 (RMSE) or 13 (maximum difference): multi-rater sets averaged by facet."""
    sets = _multi(d)
    per_set = {(s, m): d.crit[(s, m)][criterion] for (s, m) in d.crit}
    rows, vals = facet_average(per_set, sets, d.methods, d.cells)
    name, title = {
        "rmse": ("table08_rmse_by_facet", "Table 8. Overall RMSE averaged by facet (one-rater sets omitted)"),
        "maxdiff": ("table13_maxdiff_by_facet", "Table 13. Maximum difference averaged by facet (one-rater sets omitted)"),
    }[criterion]
    return Table(name, title, ("facet", "level"), tuple(d.methods), rows, vals,
                 note=f"Means over {len(sets)} multi-rater data sets." + failed_note(d, sets, d.methods, criterion))


def one_rater_table(d: ScoreData, per_set_decimals=3):
    """Table 14: one-rater sets, RMSE averaged by facet, three decimals.

    The per-set RMSEs are first rounded half-up to ``per_set_decimals`` (None: not rounded):
    Table 14 was averaged from three-decimal values -- on the faithful run this reproduces 47 of
    its 48 values, against 41 from unrounded ones.
    """
    sets = _one(d)
    cols = tuple(m for m in d.methods if m in ONE_RATER_METHODS)
    per_set = {(s, m): d.crit[(s, m)]["rmse"] for (s, m) in d.crit}
    if per_set_decimals is not None:
        rhu = criteria.round_half_up
        per_set = {k: float(rhu(v, per_set_decimals)) for k, v in per_set.items()}
    rows, vals = facet_average(per_set, sets, cols, d.cells,
                               rows=facet_rows([d.cells[s] for s in sets], ("all", "papers", "scale", "quality")))
    failed = failed_note(d, sets, cols)
    return Table("table14_one_rater_rmse", "Table 14. RMSE of the one-rater data sets averaged by facet",
                 ("facet", "level"), cols, rows, vals, decimals=3,
                 note=f"Means over {len(sets)} one-rater data sets of the RMSEs rounded to "
                      f"{per_set_decimals} decimals." + failed if per_set_decimals is not None else
                      f"Means over {len(sets)} one-rater data sets." + failed)


def rater_type_means(d: ScoreData, kind="severity"):
    """``{(type, set, method): mean over the type's raters of the rater's RMSE}`` (raters with n > 0; rater
    ``r`` is Table 3's rater ``(r - 1) mod 9 + 1``, as the config's ``raters.count`` takes them in turn)."""
    out = {}
    for (s, m), by_rater in d.rater.items():
        for tname, raters in RATER_TYPES[kind].items():
            x = [rm for r, (n, rm) in by_rater.items() if (r - 1) % 9 + 1 in raters and n > 0 and np.isfinite(rm)]
            if x:
                out[(tname, s, m)] = float(np.mean(x))
    return out


def rater_type_table(d: ScoreData, kind="severity"):
    """Table 9 (``kind="severity"``: lenient 1-3 / average 4-6 / stringent 7-9) or Table 10
    (``"spread"``: wide 1,4,7 / medium 2,5,8 / narrow 3,6,9), overall and by facet."""
    sets = _multi(d)
    tm = rater_type_means(d, kind)
    index, blocks = [], []
    for tname in RATER_TYPES[kind]:
        per_set = {(s, m): v for (t, s, m), v in tm.items() if t == tname}
        if not per_set:   # (no rater of the type: fewer than Table 3's nine, e.g. raters.count 6 has no stringent)
            continue
        rows, vals = facet_average(per_set, sets, d.methods, d.cells)
        index += [(tname, *r) for r in rows]
        blocks.append(vals)
    vals = np.vstack(blocks) if blocks else np.empty((0, len(d.methods)))
    n = max((r for by_rater in d.rater.values() for r in by_rater), default=9)
    who = "three raters'" if n == 9 else "type's raters' (Table 3's nine in turn)"
    if kind == "severity":
        name, title = "table09_rater_level", "Table 9. Per-rater RMSE by rater level (lenient 1-3, average 4-6, stringent 7-9)"
    else:
        name, title = "table10_rater_spread", "Table 10. Per-rater RMSE by rater spread (wide 1,4,7, medium 2,5,8, narrow 3,6,9)"
    return Table(name, title, ("type", "facet", "level"), tuple(d.methods), index, vals,
                 note=f"Per set: mean of the {who} RMSEs (adjusted rating against the paper's true "
                      f"score); then the mean over the {len(sets)} multi-rater sets of the facet level."
                      + failed_note(d, sets, d.methods))


def correlation_tables(d: ScoreData):
    """Table 11: correlations averaged through Fisher's z, and the mean z values."""
    sets = _multi(d)
    per_set = {(s, m): d.crit[(s, m)]["r"] for (s, m) in d.crit}
    rows, r = facet_average(per_set, sets, d.methods, d.cells, mean="fisher")
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.arctanh(r)
    note = failed_note(d, sets, d.methods, "r").strip()
    return (Table("table11_correlation", "Table 11. Correlation with true scores, averaged through Fisher's z",
                  ("facet", "level"), tuple(d.methods), rows, r, note=note),
            Table("table11_fisher_z", "Table 11 (z). Mean Fisher z = atanh(r) by facet",
                  ("facet", "level"), tuple(d.methods), rows, z, note=note))


def all_tables(d: ScoreData):
    """Every table of the report for one variant, in the dissertation's order."""
    tables = [per_set_table(d, "rmse")]
    multi, one = _multi(d), _one(d)
    if multi:
        tables.append(facet_table(d, "rmse"))
        if d.rater and d.rater_types == "table3":   # (raters of their own steps have no Table 3 type)
            tables += [rater_type_table(d, "severity"), rater_type_table(d, "spread")]
        tables += list(correlation_tables(d))
    tables.append(per_set_table(d, "maxdiff"))
    if multi:
        tables.append(facet_table(d, "maxdiff"))
    if one:
        tables.append(one_rater_table(d))
    return tables


# ----------------------------------------------------------------------------- comparison

def published_table(name):
    from .published import published_tables

    index_names, columns, rows = published_tables()[name]
    k = len(index_names)
    vals = np.array([[np.nan if v is None else v for v in row[k:]] for row in rows], dtype=np.float64)
    labels = {r[0]: parse_code(r[0]).label for r in rows} if index_names[0] == "set" else {}
    return Table(name, "", tuple(index_names), tuple(columns), [tuple(r[:k]) for r in rows], vals,
                 decimals=3 if name.startswith("table14") else 2, labels=labels)


def compare(regenerated: Table, published: Table) -> Comparison:
    """Align ``regenerated`` on the published rows and columns; a value is reproduced when the
    regenerated value, rounded as the tables print, equals the published one."""
    vals = np.full(published.values.shape, np.nan)
    for i, key in enumerate(published.index):
        if key not in regenerated.index:
            continue
        ri = regenerated.index.index(key)
        for j, col in enumerate(published.columns):
            if col in regenerated.columns:
                vals[i, j] = regenerated.values[ri, regenerated.columns.index(col)]
    regen = Table(regenerated.name, regenerated.title, published.index_names, published.columns,
                  list(published.index), vals, published.decimals, regenerated.note,
                  {**published.labels, **regenerated.labels})
    present = np.isfinite(published.values)
    rounded = regen.rounded()
    reproduced = present & np.isfinite(rounded) & (np.abs(rounded - np.nan_to_num(published.values)) < 1e-9)
    extra = [k for k in regenerated.index if k not in published.index]
    return Comparison(regenerated.name, published, regen, reproduced, present, extra)


def comparisons(tables):
    """Compare every regenerated table that has a published counterpart."""
    from .published import published_tables

    names = published_tables()
    return [compare(t, published_table(t.name)) for t in tables if t.name in names]


def is_denny_run(d: ScoreData) -> bool:
    """A faithful run covering at least half the published data sets (so the comparison means something)."""
    if d.variant != "faithful":
        return False
    pub = {row[0] for row in published_table("table07_rmse").index}
    return 2 * len(pub.intersection(d.sets)) >= len(pub)


def facet_tables_from_published():
    """Tables 8, 13 and 14 recomputed from the *published* per-set Tables 7 and 12.

    Separates the averaging rule from the per-set misses of a run: returns
    ``[(comparison, source_name), ...]``, each facet mean taken over the two-decimal published
    per-set values.
    """
    out = []
    for set_name, facet_name in (("table07_rmse", "table08_rmse_by_facet"),
                                 ("table12_maxdiff", "table13_maxdiff_by_facet"),
                                 ("table07_rmse", "table14_one_rater_rmse")):
        ps, pf = published_table(set_name), published_table(facet_name)
        one = facet_name.startswith("table14")
        cells = {k[0]: parse_code(k[0]) for k in ps.index}   # the published rows name the 1990 sets
        sets = [code for code, c in cells.items() if (c.raters_per_paper == "1") == one]
        per_set = {(k[0], m): ps.get(k, m) for k in ps.index for m in ps.columns}
        rows, vals = facet_average(per_set, sets, pf.columns, cells, rows=pf.index)
        t = Table(facet_name, f"{facet_name} from the published {set_name}", pf.index_names, pf.columns,
                  rows, vals, pf.decimals)
        out.append((compare(t, pf), set_name))
    return out
