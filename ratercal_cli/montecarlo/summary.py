"""Summaries of Monte Carlo replications, with Monte Carlo standard errors.

Input: the per-replication rows of :mod:`ratercal_cli.montecarlo.chunks` (``set, replication,
variant, method, rmse, r, maxdiff, bias, accuracy, pass_adjusted, pass_true``).

Facets follow Chapter 4 (Tables 8 and 14): one-rater sets apart from the
multi-rater ones (the matrix methods and the PCM do not run on them), and within
each *scope* the levels ``all``, raters per paper, papers, scale and paper quality.

For a facet level the unit is the replication: replication ``k``'s value of a
criterion is the mean over the level's cells of that criterion in replication
``k`` (cells are independent data sets); the summary is the mean over the ``n``
replications, its Monte Carlo standard error ``sd / sqrt(n)`` (``ddof=1``).
Correlations are averaged arithmetically (not through Fisher's z): the mean of
``r`` is what its MCSE describes.

Paired differences of two (variant, method) columns use the same data sets:
per replication the level mean of the per-set differences, then mean, MCSE and
the 95% interval ``mean +- t(.975, n-1) * MCSE``.
Ranks (1 = smallest mean RMSE) are per variant and facet level; ``p_best`` is
the share of replications in which the method had the smallest RMSE of its
variant at that level; ``tied_next`` says whether the 95% interval of the
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

from ..design import Cell
from ..io import atomic_write
from ..vocabulary import SCOPES, facet_levels, level_key
from ..vocabulary import scope as cell_scope
from .render import render_markdown
from .statistics import mean_mcse_rows, t_interval

SUMMARY_CRITERIA = ("rmse", "r", "maxdiff", "bias", "accuracy", "pass_adjusted", "pass_true")
PAIRED_CRITERIA = ("rmse", "r", "maxdiff", "accuracy")


def cell_levels(cell: Cell):
    """The (scope, facet, level) rows a cell belongs to."""
    sc = cell_scope(cell)
    return [(sc, facet, level) for facet, level in facet_levels(cell)]


def _level_key(row):
    """Table order: scope, then the facet's order of levels (:func:`ratercal_cli.vocabulary.level_key`)."""
    sc, facet, level = row
    return (SCOPES.index(sc), *level_key(facet, level))


def level_rows(cells):
    """Every (scope, facet, level) the cells cover, in table order."""
    return sorted({r for c in cells for r in cell_levels(c)}, key=_level_key)


@dataclass
class Cube:
    """Criteria as an array ``values[column, cell, replication, criterion]`` (nan: not run),
    where a column is one (variant, method)."""

    columns: list          # [(variant, method)]
    cells: list            # [Cell]
    replications: int
    values: np.ndarray
    failures: dict         # (variant, method) -> number of failed (set, replication)

    @classmethod
    def empty(cls, cells, variants, methods, replications):
        columns = [(v, m) for v in variants for m in methods]
        values = np.full((len(columns), len(cells), replications, len(SUMMARY_CRITERIA)), np.nan)
        return cls(columns, list(cells), replications, values, {})

    @classmethod
    def from_rows(cls, data, cells, variants, methods, replications):
        """``data``: :func:`ratercal_cli.montecarlo.chunks.parse_rows` output."""
        return cls.empty(cells, variants, methods, replications).add(data)

    def add(self, data):
        """Put parsed rows (:func:`ratercal_cli.montecarlo.chunks.parse_rows`) into the cube; returns self."""
        cidx = {c: i for i, c in enumerate(self.columns)}
        sidx = {c.code: i for i, c in enumerate(self.cells)}
        col = np.array([cidx[(v, m)] for v, m in zip(data["variant"], data["method"])], dtype=np.int64)
        cel = np.array([sidx[s] for s in data["set"]], dtype=np.int64)
        rep = np.asarray(data["replication"], dtype=np.int64)
        if col.size:
            self.values[col, cel, rep] = np.column_stack([data[k] for k in SUMMARY_CRITERIA])
        for v, m, e in zip(data["variant"], data["method"], data["error"]):
            if e:
                self.failures[(v, m)] = self.failures.get((v, m), 0) + 1
        return self


SUMMARY_HEADER = (["variant", "method", "scope", "facet", "level", "n", "sets", "failed"]
                  + [f"{c}{s}" for c in SUMMARY_CRITERIA for s in ("", "_mcse")]
                  + ["rank", "p_best", "tied_next"])
PAIRED_HEADER = ["scope", "facet", "level", "criterion", "variant_a", "method_a", "variant_b", "method_b",
                 "n", "mean_diff", "mcse", "ci_low", "ci_high"]


def _f(x, digits=6):
    return "" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def summarise(cube: Cube):
    """(summary rows, paired rows) as lists of dicts (numbers, not strings)."""
    k_rmse = SUMMARY_CRITERIA.index("rmse")
    summary, paired = [], []
    variants = list(dict.fromkeys(v for v, _ in cube.columns))
    for row in level_rows(cube.cells):
        mask = np.array([row in cell_levels(c) for c in cube.cells])
        vals = cube.values[:, mask]                        # [col, cell, rep, crit]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nanmean(vals, axis=1)               # [col, rep, crit]
        present = [i for i in range(len(cube.columns)) if np.isfinite(means[i, :, k_rmse]).any()]
        mu, se, n = mean_mcse_rows(np.moveaxis(means, 1, 2))   # [col, crit]
        # the level's data sets: (cell, replication) where some method of the variant has an RMSE;
        # a method without one on any of them failed there and is not ranked at this level
        fin = np.isfinite(vals[:, :, :, k_rmse])           # [col, cell, rep]
        sets, missing = {}, {}
        for v in variants:
            vcols = [i for i in range(len(cube.columns)) if cube.columns[i][0] == v]
            expected = fin[vcols].any(axis=0)
            for i in vcols:
                sets[i] = int(expected.sum())
                missing[i] = int((expected & ~fin[i]).sum())
        # paired differences: every pair within a variant, and later - earlier variant of each method
        pairs = [(a, b) for x, a in enumerate(present) for b in present[x + 1:]
                 if cube.columns[a][0] == cube.columns[b][0]]
        pairs += [(a, b) for a in present for b in present
                  if cube.columns[a][1] == cube.columns[b][1] and cube.columns[a][0] != cube.columns[b][0]
                  and variants.index(cube.columns[a][0]) > variants.index(cube.columns[b][0])]
        pa = np.array([a for a, _ in pairs], dtype=np.int64)
        pb = np.array([b for _, b in pairs], dtype=np.int64)
        pres = {}
        for c in PAIRED_CRITERIA:
            k = SUMMARY_CRITERIA.index(c)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                # per replication, the mean over the cells where both have a value (common cells)
                d = np.nanmean(vals[pa, :, :, k] - vals[pb, :, :, k], axis=1)     # [pair, rep]
            dm, dse, dn = mean_mcse_rows(d)
            lo, hi = t_interval(dm, dse, dn)
            pres[c] = (dm, dse, dn, lo, hi)
        pair_index = {p: j for j, p in enumerate(pairs)}

        # within each variant, among the methods complete at this level: rank, p_best, tied with the next
        rank, p_best, tied = {}, {}, {}
        for v in variants:
            cols = [i for i in present if cube.columns[i][0] == v and missing[i] == 0]
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
            v, m = cube.columns[i]
            rec = {"variant": v, "method": m, "scope": row[0], "facet": row[1], "level": row[2],
                   "n": int(n[i, k_rmse]), "sets": sets[i], "failed": missing[i]}
            for k, c in enumerate(SUMMARY_CRITERIA):
                rec[c], rec[c + "_mcse"] = float(mu[i, k]), float(se[i, k])
            rec["rank"], rec["p_best"], rec["tied_next"] = rank.get(i), p_best.get(i), tied.get(i)
            summary.append(rec)
        for j, (a, b) in enumerate(pairs):
            for c in PAIRED_CRITERIA:
                dm, dse, dn, lo, hi = pres[c]
                paired.append({"scope": row[0], "facet": row[1], "level": row[2], "criterion": c,
                               "variant_a": cube.columns[a][0], "method_a": cube.columns[a][1],
                               "variant_b": cube.columns[b][0], "method_b": cube.columns[b][1],
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
