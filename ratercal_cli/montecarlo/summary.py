"""Summaries of Monte Carlo replications, with Monte Carlo standard errors.

Input: the per-replication rows of :mod:`ratercal_cli.montecarlo.chunks` (``set, replication,
variant, shrinkage, method`` and the criteria of :data:`ratercal_cli.criteria.SET_CRITERIA`).
A *column* is one (variant, shrinkage, method); a *group* one (variant, shrinkage): methods are
ranked within a group, so a shrunk method is compared with shrunk ones.

Facets follow Chapter 4 (Tables 8 and 14): one-rater sets apart from the
multi-rater ones (the matrix methods and the PCM do not run on them), and within
each *scope* the levels ``all``, raters per paper, papers, scale and paper quality,
then every cell on its own (facet ``cell``: Table 7's shape).

For a facet level the unit is the replication: replication ``k``'s value of a
criterion is the mean over the level's cells of that criterion in replication
``k`` (cells are independent data sets); the summary is the mean over the ``n``
replications, its Monte Carlo standard error ``sd / sqrt(n)`` (``ddof=1``).
Correlations are averaged arithmetically (not through Fisher's z): the mean of
``r`` is what its MCSE describes.

Paired differences of two columns use the same data sets: per replication the
level mean of the per-set differences, then mean, MCSE and the 95% interval
``mean +- t(.975, n-1) * MCSE``; every pair within a group, each method's later -
earlier variant, and each method's later - earlier shrinkage level (kelley - none, linear_eb - none,
linear_eb - kelley; per cell: the RMSE only).
Ranks (1 = smallest mean RMSE) are per group and facet level; ``p_best`` is
the share of replications in which the method had the smallest RMSE of its
group at that level; ``tied_next`` says whether the 95% interval of the
difference from the next-ranked method contains 0.

A method that failed (no criteria) on some of a level's data sets is *not
ranked* there: its mean is over the data sets it could fit, which are not the
others', so its rank, ``p_best`` and ``tied_next`` are empty and the others are
ranked among the complete methods only (``failed`` counts its missing data sets
of ``sets``).  Paired differences always use the data sets both methods have.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..criteria import SET_CRITERIA
from ..design import Cell
from ..io import atomic_write
from ..vocabulary import SCOPES, facet_levels, level_key
from ..vocabulary import scope as cell_scope
from .render import render_markdown
from .statistics import mean_mcse_rows, t_interval

SUMMARY_CRITERIA = SET_CRITERIA
PAIRED_CRITERIA = ("rmse", "r", "maxdiff", "accuracy")
#: The facet of one cell on its own (Table 7's shape): its paired rows are the RMSE's only.
CELL_FACET = "cell"


def cell_levels(cell: Cell):
    """The (scope, facet, level) rows a cell belongs to: the facet levels and the cell itself."""
    sc = cell_scope(cell)
    return [(sc, facet, level) for facet, level in facet_levels(cell)] + [(sc, CELL_FACET, cell.label)]


def level_rows(cells):
    """Every (scope, facet, level) the cells cover, in table order: scope, the facets in their
    order of levels (:func:`ratercal_cli.vocabulary.level_key`), then the cells in config order."""
    position = {c.label: i for i, c in enumerate(cells)}

    def key(row):
        sc, facet, level = row
        if facet == CELL_FACET:
            return (SCOPES.index(sc), 1, (position[level],))
        return (SCOPES.index(sc), 0, level_key(facet, level))

    return sorted({r for c in cells for r in cell_levels(c)}, key=key)


@dataclass
class Cube:
    """Criteria as an array ``values[column, cell, replication, criterion]`` (nan: not run),
    where a column is one (variant, shrinkage, method)."""

    columns: list          # [(variant, shrinkage, method)]
    cells: list            # [Cell]
    replications: int
    values: np.ndarray
    failures: dict         # (variant, shrinkage, method) -> number of failed (set, replication)

    @classmethod
    def empty(cls, cells, variants, methods, replications, shrinkages=("none",)):
        columns = [(v, s, m) for v in variants for s in shrinkages for m in methods]
        values = np.full((len(columns), len(cells), replications, len(SUMMARY_CRITERIA)), np.nan)
        return cls(columns, list(cells), replications, values, {})

    @classmethod
    def from_rows(cls, data, cells, variants, methods, replications, shrinkages=("none",)):
        """``data``: :func:`ratercal_cli.montecarlo.chunks.parse_rows` output."""
        return cls.empty(cells, variants, methods, replications, shrinkages).add(data)

    def add(self, data):
        """Put parsed rows (:func:`ratercal_cli.montecarlo.chunks.parse_rows`) into the cube; returns self.
        Rows without a ``shrinkage`` are ``none``."""
        cidx = {c: i for i, c in enumerate(self.columns)}
        sidx = {c.code: i for i, c in enumerate(self.cells)}
        shrink = data.get("shrinkage")
        if shrink is None:
            shrink = ["none"] * len(data["method"])
        keys = list(zip(data["variant"], shrink, data["method"]))
        col = np.array([cidx[k] for k in keys], dtype=np.int64)
        cel = np.array([sidx[s] for s in data["set"]], dtype=np.int64)
        rep = np.asarray(data["replication"], dtype=np.int64)
        if col.size:
            self.values[col, cel, rep] = np.column_stack([data.get(k, np.full(col.size, np.nan))
                                                          for k in SUMMARY_CRITERIA])
        for k, e in zip(keys, data["error"]):
            if e:
                self.failures[k] = self.failures.get(k, 0) + 1
        return self


SUMMARY_HEADER = (["variant", "shrinkage", "method", "scope", "facet", "level", "n", "sets", "failed"]
                  + [f"{c}{s}" for c in SUMMARY_CRITERIA for s in ("", "_mcse")]
                  + ["rank", "p_best", "tied_next"])
PAIRED_HEADER = ["scope", "facet", "level", "criterion", "variant_a", "shrinkage_a", "method_a", "variant_b",
                 "shrinkage_b", "method_b", "n", "mean_diff", "mcse", "ci_low", "ci_high"]


def _f(x, digits=6):
    return "" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def _pairs(columns, present):
    """The paired differences (a, b) of column indices: every pair within a (variant, shrinkage)
    group; each method and shrinkage, later - earlier variant; each method and variant, later -
    earlier shrinkage (kelley - none, linear_eb - none, linear_eb - kelley)."""
    variants = list(dict.fromkeys(c[0] for c in columns))
    shrinkages = list(dict.fromkeys(c[1] for c in columns))
    pairs = [(a, b) for x, a in enumerate(present) for b in present[x + 1:] if columns[a][:2] == columns[b][:2]]
    pairs += [(a, b) for a in present for b in present
              if columns[a][1:] == columns[b][1:]
              and variants.index(columns[a][0]) > variants.index(columns[b][0])]
    pairs += [(a, b) for a in present for b in present
              if columns[a][0] == columns[b][0] and columns[a][2] == columns[b][2]
              and shrinkages.index(columns[a][1]) > shrinkages.index(columns[b][1])]
    return pairs


def summarise(cube: Cube):
    """(summary rows, paired rows) as lists of dicts (numbers, not strings)."""
    k_rmse = SUMMARY_CRITERIA.index("rmse")
    summary, paired = [], []
    groups = list(dict.fromkeys(c[:2] for c in cube.columns))
    for row in level_rows(cube.cells):
        mask = np.array([row in cell_levels(c) for c in cube.cells])
        vals = cube.values[:, mask]                        # [col, cell, rep, crit]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nanmean(vals, axis=1)               # [col, rep, crit]
        present = [i for i in range(len(cube.columns)) if np.isfinite(means[i, :, k_rmse]).any()]
        mu, se, n = mean_mcse_rows(np.moveaxis(means, 1, 2))   # [col, crit]
        # the level's data sets: (cell, replication) where some method of the group has an RMSE;
        # a method without one on any of them failed there and is not ranked at this level
        fin = np.isfinite(vals[:, :, :, k_rmse])           # [col, cell, rep]
        sets, missing = {}, {}
        for g in groups:
            gcols = [i for i in range(len(cube.columns)) if cube.columns[i][:2] == g]
            expected = fin[gcols].any(axis=0)
            for i in gcols:
                sets[i] = int(expected.sum())
                missing[i] = int((expected & ~fin[i]).sum())
        pairs = _pairs(cube.columns, present)
        pa = np.array([a for a, _ in pairs], dtype=np.int64)
        pb = np.array([b for _, b in pairs], dtype=np.int64)
        pres = {}
        criteria_here = ("rmse",) if row[1] == CELL_FACET else PAIRED_CRITERIA
        for c in criteria_here:
            k = SUMMARY_CRITERIA.index(c)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                # per replication, the mean over the cells where both have a value (common cells)
                d = np.nanmean(vals[pa, :, :, k] - vals[pb, :, :, k], axis=1)     # [pair, rep]
            dm, dse, dn = mean_mcse_rows(d)
            lo, hi = t_interval(dm, dse, dn)
            pres[c] = (dm, dse, dn, lo, hi)
        pair_index = {p: j for j, p in enumerate(pairs)}

        # within each group, among the methods complete at this level: rank, p_best, tied with the next
        rank, p_best, tied = {}, {}, {}
        for g in groups:
            cols = [i for i in present if cube.columns[i][:2] == g and missing[i] == 0]
            if not cols:
                continue
            order = sorted(cols, key=lambda i: (mu[i, k_rmse], i))
            for r, i in enumerate(order, 1):
                rank[i] = r
            block = means[cols, :, k_rmse]                 # [cols, rep]
            ok = np.isfinite(block).any(axis=0)
            best = np.argmin(np.where(np.isfinite(block), block, np.inf), axis=0)
            for j, i in enumerate(cols):
                p_best[i] = float(np.mean(best[ok] == j)) if ok.any() else math.nan
            for a, b in zip(order, order[1:]):
                j = pair_index.get((a, b), pair_index.get((b, a)))
                lo, hi = pres["rmse"][3][j], pres["rmse"][4][j]
                tied[a] = bool(lo <= 0 <= hi) if np.isfinite(lo) else None
        for i in present:
            v, sh, m = cube.columns[i]
            rec = {"variant": v, "shrinkage": sh, "method": m, "scope": row[0], "facet": row[1], "level": row[2],
                   "n": int(n[i, k_rmse]), "sets": sets[i], "failed": missing[i]}
            for k, c in enumerate(SUMMARY_CRITERIA):
                rec[c], rec[c + "_mcse"] = float(mu[i, k]), float(se[i, k])
            rec["rank"], rec["p_best"], rec["tied_next"] = rank.get(i), p_best.get(i), tied.get(i)
            summary.append(rec)
        for j, (a, b) in enumerate(pairs):
            for c in criteria_here:
                dm, dse, dn, lo, hi = pres[c]
                paired.append({"scope": row[0], "facet": row[1], "level": row[2], "criterion": c,
                               "variant_a": cube.columns[a][0], "shrinkage_a": cube.columns[a][1],
                               "method_a": cube.columns[a][2], "variant_b": cube.columns[b][0],
                               "shrinkage_b": cube.columns[b][1], "method_b": cube.columns[b][2],
                               "n": int(dn[j]), "mean_diff": float(dm[j]), "mcse": float(dse[j]),
                               "ci_low": float(lo[j]), "ci_high": float(hi[j])})
    return summary, paired


def _csv_value(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v is None:
        return ""
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return _f(v)
    return str(v)


def _write_csv(path, header, records):
    with atomic_write(path) as fh:
        fh.write(",".join(header) + "\n")
        for r in records:
            fh.write(",".join(_csv_value(r[h]) for h in header) + "\n")


def write_summaries(folder, cube: Cube, info: dict):
    """``summary.csv``, ``paired.csv`` and ``summary.md`` in ``folder``; returns their paths."""
    folder = Path(folder)
    summary, paired = summarise(cube)
    info = dict(info, failures=cube.failures)
    paths = [folder / "summary.csv", folder / "paired.csv", folder / "summary.md"]
    _write_csv(paths[0], SUMMARY_HEADER, summary)
    _write_csv(paths[1], PAIRED_HEADER, paired)
    with atomic_write(paths[2]) as fh:
        fh.write(render_markdown(summary, paired, info))
    return paths
