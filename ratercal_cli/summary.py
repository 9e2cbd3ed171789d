"""Summaries of Monte Carlo replications, with Monte Carlo standard errors.

Input: the per-replication rows of :mod:`ratercal_cli.runner` (``set, replication,
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
from scipy.special import stdtrit   # Student t quantile; scipy.stats takes seconds to import

from .design import Cell
from .io import atomic_write

SUMMARY_CRITERIA = ("rmse", "r", "maxdiff", "bias", "accuracy", "pass_adjusted", "pass_true")
PAIRED_CRITERIA = ("rmse", "r", "maxdiff", "accuracy")
FACETS = ("all", "raters", "papers", "scale", "quality")
SCOPES = ("multi-rater", "one-rater")
_RPP_ORDER = {"1": 0, "2": 1, "2+": 2, "3": 3}
_QUALITY_ORDER = {"normal": 0, "positive": 1, "negative": 2}


# ----------------------------------------------------------------------------- statistics

def mean_mcse(values):
    """(mean, MCSE, n) of the finite values: MCSE = sd(ddof=1) / sqrt(n); nan when n < 2."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    n = v.size
    if n == 0:
        return math.nan, math.nan, 0
    m = float(v.mean())
    se = float(v.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return m, se, n


def paired_difference(a, b, level: float = 0.95):
    """Mean of ``a - b`` over the pairs where both are finite, its MCSE and the
    ``level`` interval with Student's t on ``n - 1`` degrees of freedom.
    Returns (mean, se, lo, hi, n)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m, se, n = mean_mcse(a - b)
    if n < 2:
        return m, se, math.nan, math.nan, n
    half = float(stdtrit(n - 1, 0.5 + level / 2)) * se
    return m, se, m - half, m + half, n


def mean_mcse_rows(x):
    """:func:`mean_mcse` along the last axis of ``x``: arrays (mean, MCSE, n)."""
    x = np.asarray(x, dtype=np.float64)
    ok = np.isfinite(x)
    n = ok.sum(axis=-1)
    xs = np.where(ok, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = xs.sum(axis=-1) / n
        ss = np.where(ok, (x - m[..., None]) ** 2, 0.0).sum(axis=-1)
        se = np.sqrt(ss / (n - 1)) / np.sqrt(n)
    m = np.where(n > 0, m, np.nan)
    se = np.where(n > 1, se, np.nan)
    return m, se, n


def t_interval(mean, se, n, level: float = 0.95):
    """``mean +- t(0.5 + level/2, n - 1) * se`` (arrays; nan where n < 2)."""
    n = np.asarray(n)
    q = stdtrit(np.where(n > 1, n - 1, 1), 0.5 + level / 2)
    half = np.where(n > 1, q * se, np.nan)
    return mean - half, mean + half


# ----------------------------------------------------------------------------- facets

def cell_levels(cell: Cell):
    """The (scope, facet, level) rows a cell belongs to."""
    one = cell.raters_per_paper == "1"
    scope = "one-rater" if one else "multi-rater"
    out = [(scope, "all", "all")]
    if not one:
        out.append((scope, "raters", cell.raters_per_paper))
    out += [(scope, "papers", str(cell.papers)), (scope, "scale", f"0-{cell.max_score}"),
            (scope, "quality", cell.quality)]
    return out


def _int_or(text, default=math.inf):
    """The leading digits of ``text`` as an int ("2+" -> 2, "0-9" -> 0), else ``default``."""
    digits = text[:len(text) - len(text.lstrip("0123456789"))]
    return int(digits) if digits else default


def _level_key(row):
    """Table order: scope, facet, the level's known order, then its number, then its text
    (a total order, so the rows do not depend on set iteration, i.e. on the hash seed)."""
    scope, facet, level = row
    if facet == "raters":
        k = _RPP_ORDER.get(level, 9)
    elif facet == "papers":
        k = int(level)
    elif facet == "scale":
        k = int(level.split("-")[1])
    elif facet == "quality":
        k = _QUALITY_ORDER.get(level, 9)
    else:
        k = 0
    return SCOPES.index(scope), FACETS.index(facet), k, _int_or(level), level


def level_rows(cells):
    """Every (scope, facet, level) the cells cover, in table order."""
    return sorted({r for c in cells for r in cell_levels(c)}, key=_level_key)


# ----------------------------------------------------------------------------- the cube

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
        """``data``: :func:`ratercal_cli.runner.parse_rows` output."""
        return cls.empty(cells, variants, methods, replications).add(data)

    def add(self, data):
        """Put parsed rows (:func:`ratercal_cli.runner.parse_rows`) into the cube; returns self."""
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


# ----------------------------------------------------------------------------- summaries

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


# ----------------------------------------------------------------------------- Markdown

def _pm(mu, se, d=3):
    if not np.isfinite(mu):
        return ""
    return f"{mu:.{d}f} ± {se:.{d}f}" if np.isfinite(se) else f"{mu:.{d}f}"


def _md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


def render_markdown(summary, paired, info) -> str:
    """The report: rankings with MCSEs, corrected beside faithful, paired differences."""
    variants = list(dict.fromkeys(r["variant"] for r in summary))
    methods = list(dict.fromkeys(r["method"] for r in summary))
    idx = {(r["variant"], r["method"], r["scope"], r["facet"], r["level"]): r for r in summary}
    pidx = {(p["variant_a"], p["method_a"], p["variant_b"], p["method_b"], p["scope"], p["facet"], p["level"],
             p["criterion"]): p for p in paired}
    rows = list(dict.fromkeys((r["scope"], r["facet"], r["level"]) for r in summary))
    lines = [f"# Monte Carlo study: {info['name']}", ""]
    lines += [f"- generator: `{info['generator']}`; true score: "
              + ("the generating model's expected score" if info["true_score"] == "model"
                 else "TRUEGEN's partial credit expected score (the 1990 mismatch)"),
              f"- {info['replications']} replications of {info['cells']} cells "
              f"({info['replications'] * info['cells']} data sets), seed {info['seed']}; variants: "
              + ", ".join(variants),
              f"- decision accuracy: pass when the paper score >= {info['cut']:g} on a 0-5 scale "
              "(the district's mean of 3.5, reached by 3.25 after rounding), cut x M/5 on a 0-M scale",
              "- values: mean over replications ± Monte Carlo standard error; a replication's value at a "
              "facet level is the mean over the level's cells; rank 1 = smallest mean RMSE within the variant; "
              "= marks a method whose 95% paired interval with the next-ranked one contains 0; "
              "a method that failed on some of a level's data sets is not ranked there (-): its mean is over "
              "the data sets it could fit, and the others are ranked among the complete methods",
              ""]
    fails = info.get("failures") or {}
    if fails:
        lines += ["Failed fits (rows with no criteria): "
                  + "; ".join(f"{v} {m}: {n}" for (v, m), n in sorted(fails.items())), ""]

    def ranked(v, m, row):
        r = idx.get((v, m) + row)
        if r is None:
            return "", ""
        if r["rank"] is None:
            return _pm(r["rmse"], r["rmse_mcse"], 4), "-"
        mark = "=" if r["tied_next"] else ""
        return _pm(r["rmse"], r["rmse_mcse"], 4), f"{r['rank']}{mark}"

    def not_ranked(v, ms, rows_):
        """Footnote naming where each method of ``ms`` failed and so is not ranked."""
        out = []
        for m in ms:
            where = [f"{'all cells' if row[1] == 'all' else row[1] + ' ' + row[2]} ({r['failed']:,} of {r['sets']:,})"
                     for row in rows_ for r in [idx.get((v, m) + row)] if r is not None and r["failed"]]
            if where:
                out.append(f"- {v} {m} failed on some data sets, so it is not ranked (-) at: " + "; ".join(where)
                           + ". Its mean there is over the data sets it could fit.")
        return out + [""] if out else []

    for scope in SCOPES:
        srows = [r for r in rows if r[0] == scope]
        if not srows:
            continue
        lines += [f"## {scope[0].upper() + scope[1:]} sets: all cells", ""]
        head = ["method"]
        for v in variants:
            head += [f"{v} RMSE", "rank", "P(best)"]
        if len(variants) > 1:
            head += [f"{variants[1]} - {variants[0]} RMSE (95% CI)"]
        head += [f"{v} accuracy" for v in variants] + [f"{variants[0]} r", f"{variants[0]} max diff"]
        body = []
        all_row = (scope, "all", "all")
        for m in methods:
            if not any((v, m) + all_row in idx for v in variants):
                continue
            line = [m]
            for v in variants:
                rm, rk = ranked(v, m, all_row)
                r = idx.get((v, m) + all_row)
                line += [rm, rk, "" if r is None else "-" if r["p_best"] is None else f"{r['p_best']:.2f}"]
            if len(variants) > 1:
                p = pidx.get((variants[1], m, variants[0], m) + all_row + ("rmse",))
                line.append("" if p is None else f"{p['mean_diff']:+.4f} [{p['ci_low']:+.4f}, {p['ci_high']:+.4f}]")
            for v in variants:
                r = idx.get((v, m) + all_row)
                line.append("" if r is None else _pm(r["accuracy"], r["accuracy_mcse"], 4))
            r = idx.get((variants[0], m) + all_row)
            line += ["", ""] if r is None else [_pm(r["r"], r["r_mcse"], 4), _pm(r["maxdiff"], r["maxdiff_mcse"], 3)]
            body.append(line)
        lines += [_md_table(head, body), ""]
        for v in variants:
            lines += not_ranked(v, methods, [all_row])

        for v in variants:
            ms = [m for m in methods if any((v, m) + r in idx for r in srows)]
            lines += [f"### {scope}: RMSE by facet, {v} (rank)", ""]
            body = []
            for row in srows:
                line = [row[1], row[2]]
                for m in ms:
                    rm, rk = ranked(v, m, row)
                    line.append(f"{rm} ({rk})" if rm else "")
                body.append(line)
            lines += [_md_table(["facet", "level"] + ms, body), ""]
            lines += not_ranked(v, ms, srows)
            lines += [f"### {scope}: decision accuracy by facet, {v}", ""]
            body = []
            for row in srows:
                line = [row[1], row[2]]
                for m in ms:
                    r = idx.get((v, m) + row)
                    line.append("" if r is None else _pm(r["accuracy"], r["accuracy_mcse"], 4))
                body.append(line)
            lines += [_md_table(["facet", "level"] + ms, body), ""]

        v = variants[0]
        lines += [f"### {scope}: RMSE difference from the best {v} method (95% CI)", ""]
        body = []
        ms = [m for m in methods if any((v, m) + r in idx for r in srows)]
        for row in srows:
            best = next((r for r in summary if (r["variant"], r["scope"], r["facet"], r["level"]) == (v,) + row
                         and r["rank"] == 1), None)
            if best is None:
                continue
            line = [row[1], row[2], best["method"]]
            for m in ms:
                if m == best["method"] or (v, m) + row not in idx:
                    line.append("" if m != best["method"] else "best")
                    continue
                p = pidx.get((v, best["method"], v, m) + row + ("rmse",))
                sign = -1
                if p is None:
                    p, sign = pidx.get((v, m, v, best["method"]) + row + ("rmse",)), 1
                if p is None:
                    line.append("")
                    continue
                lo, hi = sorted((sign * p["ci_low"], sign * p["ci_high"]))
                line.append(f"{sign * p['mean_diff']:+.4f} [{lo:+.4f}, {hi:+.4f}]")
            body.append(line)
        lines += [_md_table(["facet", "level", "best"] + ms, body), ""]
    return "\n".join(lines).rstrip() + "\n"


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
