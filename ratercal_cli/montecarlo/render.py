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
