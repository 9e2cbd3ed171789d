"""``summary.md``: rankings with Monte Carlo standard errors, corrected beside faithful, paired
differences."""

from __future__ import annotations

import numpy as np

from ..vocabulary import SCOPES


def _pm(mu, se, d=3):
    if not np.isfinite(mu):
        return ""
    return f"{mu:.{d}f} ± {se:.{d}f}" if np.isfinite(se) else f"{mu:.{d}f}"


def _md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


def group_label(variant, shrinkage, shrinkages) -> str:
    """A (variant, shrinkage) group as the report names it: the variant alone when the study has
    one shrinkage level (``none``), else ``corrected/kelley``."""
    return variant if list(shrinkages) in (["none"], []) else f"{variant}/{shrinkage}"


def _grouped(summary, paired):
    """Summary and paired rows with ``variant`` replaced by the group label."""
    shrinkages = list(dict.fromkeys(r.get("shrinkage", "none") for r in summary))
    out_s = [dict(r, variant=group_label(r["variant"], r.get("shrinkage", "none"), shrinkages)) for r in summary]
    out_p = [dict(p, variant_a=group_label(p["variant_a"], p.get("shrinkage_a", "none"), shrinkages),
                  variant_b=group_label(p["variant_b"], p.get("shrinkage_b", "none"), shrinkages)) for p in paired]
    return out_s, out_p


def render_markdown(summary, paired, info) -> str:
    """The report: rankings with MCSEs, corrected beside faithful, paired differences."""
    summary, paired = _grouped(summary, paired)
    variants = list(dict.fromkeys(r["variant"] for r in summary))
    methods = list(dict.fromkeys(r["method"] for r in summary))
    idx = {(r["variant"], r["method"], r["scope"], r["facet"], r["level"]): r for r in summary}
    pidx = {(p["variant_a"], p["method_a"], p["variant_b"], p["method_b"], p["scope"], p["facet"], p["level"],
             p["criterion"]): p for p in paired}
    rows = list(dict.fromkeys((r["scope"], r["facet"], r["level"]) for r in summary if r["facet"] != "cell"))
    cell_rows = list(dict.fromkeys((r["scope"], r["facet"], r["level"]) for r in summary if r["facet"] == "cell"))
    lines = _preamble(info, variants)
    for scope in SCOPES:
        srows = [r for r in rows if r[0] == scope]
        if not srows:
            continue
        lines += _all_cells(scope, variants, methods, idx, pidx)
        for v in variants:
            lines += _by_facet(scope, v, methods, idx, srows)
        lines += _costs(scope, variants, methods, idx)
        for v in variants:
            lines += _per_cell(scope, v, methods, idx, pidx, [r for r in cell_rows if r[0] == scope])
        lines += _from_best(scope, variants[0], methods, summary, idx, pidx, srows)
    return "\n".join(lines).rstrip() + "\n"


def _preamble(info, variants):
    """The title, the study's description and the legend of the values, and the failed fits."""
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
              "shrinkage: `none` is each method's own paper score (the corrected PCM, CML, RSM, MML, MFRM: at "
              "the WLE quality), `kelley` the same shrunk toward the mean by Kelley's formula (those Rasch fits: "
              "at the EAP under a normal distribution of quality)"
              + ("; `linear_eb` every method's `none` scores shrunk by one empirical-Bayes linear operator, "
                 "the papers' true-score variance from a one-way ANOVA of the ratings and each method's error "
                 "variance from its scores' excess over it (`ratercal_cli/methods/shrinkage.py`)"
                 if "linear_eb" in info.get("shrinkages", ()) else "")
              + "; methods are ranked "
              "within a variant and shrinkage (`corrected/kelley`); "
              "a method that failed on some of a level's data sets is not ranked there (-): its mean is over "
              "the data sets it could fit, and the others are ranked among the complete methods",
              ""]
    fails = info.get("failures") or {}
    if fails:
        lines += ["Failed fits (rows with no criteria): "
                  + "; ".join(f"{' '.join(k[:-1])} {k[-1]}: {n}" for k, n in sorted(fails.items())), ""]
    return lines


def _ranked(idx, v, m, row):
    """A method's RMSE ± MCSE at a level and its rank (``-`` where it is not ranked)."""
    r = idx.get((v, m) + row)
    if r is None:
        return "", ""
    if r["rank"] is None:
        return _pm(r["rmse"], r["rmse_mcse"], 4), "-"
    mark = "=" if r["tied_next"] else ""
    return _pm(r["rmse"], r["rmse_mcse"], 4), f"{r['rank']}{mark}"


def _not_ranked(idx, v, ms, rows_):
    """Footnote naming where each method of ``ms`` failed and so is not ranked."""
    out = []
    for m in ms:
        where = [f"{'all cells' if row[1] == 'all' else row[1] + ' ' + row[2]} ({r['failed']:,} of {r['sets']:,})"
                 for row in rows_ for r in [idx.get((v, m) + row)] if r is not None and r["failed"]]
        if where:
            out.append(f"- {v} {m} failed on some data sets, so it is not ranked (-) at: " + "; ".join(where)
                       + ". Its mean there is over the data sets it could fit.")
    return out + [""] if out else []


def _all_cells(scope, variants, methods, idx, pidx):
    """The scope's headline table over all cells: RMSE, rank and P(best) per variant, the second
    variant's paired difference from the first, decision accuracy, r and maximum difference."""
    lines = [f"## {scope[0].upper() + scope[1:]} sets: all cells", ""]
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
            rm, rk = _ranked(idx, v, m, all_row)
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
        lines += _not_ranked(idx, v, methods, [all_row])
    return lines


def _by_facet(scope, v, methods, idx, srows):
    """One variant's RMSE (rank) and decision accuracy at every facet level."""
    ms = [m for m in methods if any((v, m) + r in idx for r in srows)]
    lines = [f"### {scope}: RMSE by facet, {v} (rank)", ""]
    body = []
    for row in srows:
        line = [row[1], row[2]]
        for m in ms:
            rm, rk = _ranked(idx, v, m, row)
            line.append(f"{rm} ({rk})" if rm else "")
        body.append(line)
    lines += [_md_table(["facet", "level"] + ms, body), ""]
    lines += _not_ranked(idx, v, ms, srows)
    lines += [f"### {scope}: decision accuracy by facet, {v}", ""]
    body = []
    for row in srows:
        line = [row[1], row[2]]
        for m in ms:
            r = idx.get((v, m) + row)
            line.append("" if r is None else _pm(r["accuracy"], r["accuracy_mcse"], 4))
        body.append(line)
    return lines + [_md_table(["facet", "level"] + ms, body), ""]


def _from_best(scope, v, methods, summary, idx, pidx, srows):
    """Every method's paired RMSE difference from the best method of variant ``v`` at each level."""
    lines = [f"### {scope}: RMSE difference from the best {v} method (95% CI)", ""]
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
    return lines + [_md_table(["facet", "level", "best"] + ms, body), ""]


def _costs(scope, groups, methods, idx):
    """What shrinkage costs, all cells: per group and method, RMSE beside the worst decile's
    conditional bias and the RMSE of the lowest and highest deciles of the true score."""
    row = (scope, "all", "all")
    body = []
    for g in groups:
        for m in methods:
            r = idx.get((g, m) + row)
            if r is not None:
                body.append([g, m, _pm(r["rmse"], r["rmse_mcse"], 4), _pm(r["cbias_worst"], r["cbias_worst_mcse"], 3),
                             _pm(r["cbias_d1"], r["cbias_d1_mcse"], 3), _pm(r["cbias_d10"], r["cbias_d10_mcse"], 3),
                             _pm(r["rmse_bottom"], r["rmse_bottom_mcse"], 3), _pm(r["rmse_top"], r["rmse_top_mcse"], 3)])
    if not body:
        return []
    head = ["group", "method", "RMSE", "worst-decile |bias|", "bias, lowest decile", "bias, highest decile",
            "RMSE, lowest decile", "RMSE, highest decile"]
    return [f"### {scope}: what shrinkage costs, all cells (conditional bias, mean adjusted - true, and RMSE by "
            "decile of the true score; summary.csv has every decile)", "", _md_table(head, body), ""]


def _per_cell(scope, v, methods, idx, pidx, cell_rows):
    """Table 7's shape: every cell x method, RMSE ± MCSE, and the cell's winner: the best-ranked
    method, joined by ``=`` with every method whose paired 95% interval with it contains 0."""
    if not cell_rows:
        return []
    ms = [m for m in methods if any((v, m) + r in idx for r in cell_rows)]
    body = []
    for row in cell_rows:
        recs = {m: idx.get((v, m) + row) for m in ms}
        line = [row[2]] + ["" if r is None else _pm(r["rmse"], r["rmse_mcse"], 4) + ("" if r["rank"] is not None
                                                                                     else " (-)")
                           for r in recs.values()]
        best = next((m for m, r in recs.items() if r is not None and r["rank"] == 1), None)
        if best is None:
            line.append("")
        else:
            ties = []
            for m, r in sorted(recs.items(), key=lambda kv: (kv[1] is None or kv[1]["rank"] is None,
                                                             kv[1]["rank"] if kv[1] and kv[1]["rank"] else 0)):
                if m == best or r is None or r["rank"] is None:
                    continue
                p = pidx.get((v, best, v, m) + row + ("rmse",)) or pidx.get((v, m, v, best) + row + ("rmse",))
                if p is not None and p["ci_low"] <= 0 <= p["ci_high"]:
                    ties.append(m)
            line.append(" = ".join([best] + ties))
        body.append(line)
    return [f"### {scope}: RMSE by cell, {v} (mean ± MCSE; winner: the best, = the methods whose paired 95% "
            "interval with it contains 0; (-): not ranked, failed on some replications)", "",
            _md_table(["cell"] + ms + ["winner"], body), ""]
