"""What the corrected Monte Carlo study supports for a ratings file's design.

Chapter 5's rule (``diagnostics.recommend``) comes from one data set per cell.  The corrected
study (``results/corrected/``: 1,000 replications of the 32 cells, scores from the PCM, true score
its expected score) and its beyond-1990 run (MML/MFRM/CML/RSM/WLS/... beside the ten) rank the
methods by mean RMSE with Monte Carlo standard errors per facet level: raters per paper (1, 2, 2+,
3), papers (100 or 500, shared by 9 raters), scale (0-5 or 0-9).  The ranking cited is of each
method's own, unshrunk paper scores (shrinkage ``none``); MML and MFRM are cited at their EAP
(``kelley``), which is what ``adjust --method MML`` gives.  The numbers ``check``
cites are copied into ``ratercal_cli/data/corrected/facet_rmse.csv`` by :func:`extract` (``python
-m ratercal_cli.practice.study_rule results/corrected ratercal_cli/data/corrected/facet_rmse.csv``; a test
checks that the copy agrees with the committed summaries), so ``check`` never reads ``results/``.

A file's design is matched to the nearest level of each facet: raters per paper from the most
common number of ratings per paper (``2+`` when that is 2 and some papers have a third);
papers from the papers per rater (the study's 100 and 500 papers give ``papers x raters per
paper / 9`` per rater), nearest on a log scale; scale 0-5 for up to 7 points, else 0-9.  The
method supported is the best-ranked (lowest mean RMSE, corrected variant) at the design's
raters-per-paper level -- the facet at whose levels the study's ranking changes (the PCM wins
at three raters per paper, TLI elsewhere); its RMSE, MCSE and rank at the design's papers and
scale levels are cited beside it.  Each facet level's RMSE is a mean over the other facets'
cells (the summaries also have every cell on its own, facet ``cell``).

Every paper of a study cell has the same number of readings (two, plus a third on the 2+ cells'
discrepant papers).  A file whose papers do not (most papers read once and a sample read twice
for reliability, the usual operational design; or more than three readings a paper) lies between
or beyond the cells: it is matched to the nearest level as above, and the advice says that it is
an extrapolation and which design it was read as (``design["exact"]`` is False, ``design["note"]``
says why), pointing to ``check --simulate``, which ranks the methods on the file's own design.
The study's one-rater cells have no ``raters`` facet (it is their scope): their level there is the
scope's ``all`` row.
"""

from __future__ import annotations

import csv
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["extract", "facet_table", "design_levels", "study_recommendation"]

FIELDS = ["study", "replications", "shrinkage", "method", "scope", "facet", "level", "sets", "failed", "rmse",
          "rmse_mcse", "rank"]
STUDY_RATERS = 9
STUDY_PAPERS = (100, 500)
#: the beyond-1990 run's model-based methods, cited beside the ranked ones
MODEL_METHODS = ("MML", "MFRM", "CML", "RSM")
#: the shrinkage level cited for each model-based method: what ``adjust --method X`` gives (MML and
#: MFRM score papers at the EAP, the study's ``kelley`` level; CML and RSM at Warm's WLE, ``none``)
MODEL_SHRINKAGE = {"MML": "kelley", "MFRM": "kelley", "CML": "none", "RSM": "none"}


def extract(results_dir) -> list:
    """Rows of :data:`FIELDS` from ``RESULTS/summary.csv`` (study "corrected") and
    ``RESULTS/beyond1990/summary.csv`` (study "beyond1990"): corrected variant, facets raters,
    papers, scale and all; and the "all" rows of ``RESULTS/rater_effects/summary.csv`` (study "rater_effects",
    assignment by quality: what the advice for a confounded file cites, :func:`cited_rmse`)."""
    out = []
    for study, path, facets in (("corrected", Path(results_dir) / "summary.csv", ("raters", "papers", "scale", "all")),
                                ("beyond1990", Path(results_dir) / "beyond1990" / "summary.csv",
                                 ("raters", "papers", "scale", "all")),
                                ("rater_effects", Path(results_dir) / "rater_effects" / "summary.csv", ("all",))):
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                if r["variant"] != "corrected" or r["facet"] not in facets:
                    continue
                out.append({"study": study, "replications": r["n"], "shrinkage": r.get("shrinkage", "none"),
                            "method": r["method"], "scope": r["scope"],
                            "facet": r["facet"], "level": r["level"], "sets": r["sets"], "failed": r["failed"],
                            "rmse": r["rmse"], "rmse_mcse": r["rmse_mcse"], "rank": r["rank"]})
    return out


@lru_cache(maxsize=1)
def facet_table() -> tuple:
    """The packaged copy of :func:`extract`'s rows (dicts of strings)."""
    text = resources.files("ratercal_cli").joinpath("data/corrected/facet_rmse.csv").read_text()
    return tuple(csv.DictReader(text.splitlines()))


def cited_rmse(study: str, method: str, shrinkage: str = "none") -> float:
    """The mean RMSE of ``method`` at ``shrinkage`` over every multi-rater cell of ``study`` (the packaged copy:
    the confounded file's advice cited the rater-effects study's PCM 0.259 against NO 0.431, numbers of a run
    since replaced, which a staff tester could find nowhere)."""
    for r in facet_table():
        if (r["study"], r["method"], r["shrinkage"], r["scope"], r["facet"]) == (study, method, shrinkage,
                                                                                   "multi-rater", "all"):
            return float(r["rmse"])
    raise KeyError(f"{study}: no {method} at {shrinkage}")


def design_levels(ratings) -> dict:
    """The study's facet levels nearest to ``ratings``' design (module docstring).  Two readings a paper with
    some read three times are the cells of third readings on discrepant papers (however few: a district's rule
    with raters who seldom disagree); papers read four times or more alone, irregular, are not (a researcher
    tester's 299 papers read twice and one six times took the cells of thirds)."""
    per = ratings.ratings_per_paper()
    per = per[per > 0]
    mode = int(np.bincount(per).argmax()) if per.size else 0
    if mode <= 1:
        raters = "1"
    elif mode == 2:   # (a third reading: a paper read three times; one paper read six made the cells of thirds)
        raters = "2+" if (per == 3).any() else "2"
    else:
        raters = "3"
    rpp = {"1": 1, "2": 2, "2+": 2, "3": 3}[raters]
    nr = ratings.ratings_per_rater()
    ppr = float(np.median(nr[nr > 0])) if (nr > 0).any() else 0.0
    study_ppr = {p: p * rpp / STUDY_RATERS for p in STUDY_PAPERS}
    papers = min(STUDY_PAPERS, key=lambda p: abs(math.log(max(ppr, 1.0)) - math.log(study_ppr[p])))
    scale = "0-5" if ratings.max_score <= 7 else "0-9"
    counts = {int(k): int(n) for k, n in zip(*np.unique(per, return_counts=True))}
    study_counts = {"1": {1}, "2": {2}, "2+": {2, 3}, "3": {3}}[raters]
    exact = set(counts) <= study_counts
    note = ""
    if not exact:
        parts = ", ".join(f"{n:,} read {'once' if k == 1 else 'twice' if k == 2 else f'{k} times'}"
                          for k, n in sorted(counts.items()))
        cells = {"1": "one-rater cells (every paper read once, raters compared by their score distributions)",
                 "2": "cells with two readings on every paper",
                 "2+": "cells with two readings on every paper and a third on discrepant ones",
                 "3": "cells with three readings on every paper"}[raters]
        note = (f"no cell of the study has this design ({parts}); the nearest, by the most common number of "
                f"readings, is its {cells}: the advice below is an extrapolation from them (`check --simulate R` "
                "ranks the methods on this file's own design)")
    return {"raters": raters, "papers": str(papers), "scale": scale, "papers_per_rater": ppr,
            "study_papers_per_rater": study_ppr[papers], "scope": "one-rater" if raters == "1" else "multi-rater",
            "readings": counts, "exact": exact, "note": note}


def level_rows(scope, facet, level):
    """The study table's rows of a design's level: ``facet`` at ``level`` within ``scope``, where the
    one-rater scope's raters level is the scope itself (its rows are those of ``all``)."""
    if scope == "one-rater" and facet == "raters":   # one reading a paper is the scope itself
        facet, level = "all", "all"
    return [r for r in facet_table() if r["scope"] == scope and r["facet"] == facet and r["level"] == level]


def _rows(study, scope, facet, level, shrinkage="none"):
    return [r for r in level_rows(scope, facet, level) if r["study"] == study and r["shrinkage"] == shrinkage]


def _num(r):
    return dict(method=r["method"], rmse=float(r["rmse"]), mcse=float(r["rmse_mcse"]),
                rank=int(r["rank"]) if r["rank"] else None, sets=int(r["sets"]), failed=int(r["failed"]),
                replications=int(r["replications"]))


def _file_scale(ratings, d) -> str:
    """`` ~ this file's 1-6`` where the study's scale level is named otherwise (its 0-5 read as a 1-6 file's: "scale
    0-5" beside a file scored 1-6 read as a mistake, a staff tester)."""
    low = int(getattr(ratings, "scale_low", 0))
    mine = f"{low}-{low + int(ratings.max_score)}"
    return "" if mine == d["scale"] else f" ~ this file's {mine}"


def study_recommendation(ratings, model_fits: bool, differ: bool, model_reason: str = "") -> dict:
    """The corrected study's method for this design, with the numbers that support it.

    Returns ``{"applies": False, "reason": ...}`` unless the rater model fits and the raters
    differ; else ``applies``, ``method``, ``design`` (:func:`design_levels`), ``levels`` (per
    facet: the method's and the best method's RMSE, MCSE, rank), ``model_based`` (MML, MFRM, CML and RSM
    of the beyond-1990 run at the design's raters level, with their failures) and ``lines``
    (the text ``check`` prints)."""
    if not model_fits:
        return {"applies": False, "reason": f"the rater model could not be fitted ({model_reason})",
                "lines": [f"corrected study: no design-specific advice (the rater model could not be fitted: "
                          f"{model_reason}); Chapter 5's rule stands"]}
    if not differ:
        return {"applies": False, "reason": "the raters do not differ significantly", "lines": []}
    d = design_levels(ratings)
    scope = d["scope"]
    ranked = [_num(r) for r in _rows("corrected", scope, "raters", d["raters"]) if r["rank"]]
    best = min(ranked, key=lambda r: r["rank"])
    method = best["method"]
    levels = {}
    for facet in ("raters", "papers", "scale"):
        rows = [_num(r) for r in _rows("corrected", scope, facet, d[facet])]
        mine = next(r for r in rows if r["method"] == method)
        top = [r for r in rows if r["rank"] is not None]
        top = sorted(top, key=lambda r: r["rank"])[:2]
        levels[facet] = {"level": d[facet], "method": mine, "best": top[0], "runner_up": top[1] if len(top) > 1 else None}
    model_based = [dict(_num(r), shrinkage=sh) for sh in ("none", "kelley")
                   for r in _rows("beyond1990", scope, "raters", d["raters"], sh)
                   if MODEL_SHRINKAGE.get(r["method"]) == sh]
    model_based.sort(key=lambda m: MODEL_METHODS.index(m["method"]))
    reps = best["replications"]
    names = {"raters": "raters per paper", "papers": "papers", "scale": "scale"}
    lines = [f"CORRECTED STUDY: {d['note']}"] if d["note"] else []
    lines += [f"CORRECTED STUDY supports {method} for {'this' if d['exact'] else 'the nearest'} design (read as {d['raters']} rater(s) per paper{'' if d['exact'] else ', nearest'}, "
             f"{d['papers_per_rater']:.0f} papers per rater ~ the study's {d['papers']} papers "
             f"({d['study_papers_per_rater']:.0f} per rater), scale {d['scale']}{_file_scale(ratings, d)}) among the "
             "methods unshrunk (the "
             f"RECOMMENDATION weighs their shrunk levels too); mean RMSE +- MCSE over {reps:,} replications of the "
             f"cells at each level:"]
    for facet, v in levels.items():
        m, b, nx = v["method"], v["best"], v["runner_up"]
        txt = f"  {names[facet]} {v['level']}: {method} {m['rmse']:.4f} +- {m['mcse']:.4f} (rank {m['rank']})"
        if b["method"] != method:
            txt += f"; best there {b['method']} {b['rmse']:.4f} +- {b['mcse']:.4f}"
        elif nx is not None:
            txt += f"; next {nx['method']} {nx['rmse']:.4f} +- {nx['mcse']:.4f}"
        lines.append(txt)
    for m in model_based:
        how = "EAP fair averages, ranked among the Kelley-shrunk methods" if m["shrinkage"] == "kelley" else "WLE"
        head = (f"  model-based {m['method']} (beyond-1990 run, {m['replications']} replications, {how}) at "
                f"{d['raters']} rater(s) per paper: {m['rmse']:.4f} +- {m['mcse']:.4f}")
        if m["failed"]:
            lines.append(f"{head} where it fitted; it failed on {m['failed']:,} of {m['sets']:,} data sets, so it "
                         "is not ranked")
        else:
            lines.append(f"{head}, fitted on all {m['sets']:,} data sets (rank {m['rank']} of that run's methods)")
    return {"applies": True, "method": method, "design": d, "levels": levels, "model_based": model_based,
            "lines": lines}


def _main(argv=None):  # pragma: no cover - maintenance entry point
    import sys

    from ..io import atomic_write

    src, dst = (argv or sys.argv[1:])[:2]
    with atomic_write(dst) as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(extract(src))


if __name__ == "__main__":  # pragma: no cover
    _main()
