"""``ratercal report RUN``: the study's tables and figures, published beside regenerated.

:func:`build_report` reads ``RUN/score/scores.csv``, ``RUN/score/rater_rmse.csv`` and (for the
map of distances between methods) ``RUN/<code>/equate/<variant>/adjusted.csv`` with
``RUN/<code>/truegen/true_scores.csv``, and writes to ``out_dir``::

    report.md                      every table and figure, the reproduction counts first
    tables/<name>.{md,csv,tex}     Tables 7-14 regenerated (CSV: unrounded values, 6 decimals)
    comparison/<name>.{md,csv,tex} published beside regenerated, differences marked
    figures/*.png                  Figures 3, 4, 5, RMSE by facet, MDS map of methods

A run with several variants gets one such tree per variant under ``out_dir/<variant>/``, each with
the mark :data:`MARK` (written first) that tells a later build the folder is a report's
(:func:`_refuse_out`: a file of another's that the report would write over or remove stops it, and so does
a folder of the run's own).
Nothing written depends on the time or the machine's paths, so re-running gives identical files.
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import write_text
from ..vocabulary import REPORT_FILES as OWN_NAMES   # (the names the report writes, per subfolder)
from ..vocabulary import REPORT_MARK, own_report_files
from . import figures, render
from .mds import classical_mds, rmsd_matrix
from .tables import (Table, all_tables, comparisons, facet_table, facet_tables_from_published, is_denny_run,
                     read_scores)

__all__ = ["build_report", "method_distances"]

#: the mark of a report's folder, written before anything else in it (an interrupted build resumes there)
MARK = REPORT_MARK
#: the first line of every report's ``report.md`` (folders built before the mark was written have it)
INDEX_TITLE = "# ratercal report: "


def _read_paper_scores(path, columns):
    """``(papers, values)``: the paper numbers in ascending order and, per name of ``columns``,
    that column's value on each paper's first row, from a CSV with a ``paper`` column (numpy's
    C parser; errors name the file, line and field)."""
    from ..study.files import read_columns

    paper, *values = read_columns(path, ["paper", *columns], [int] + [float] * len(columns))
    papers, first = np.unique(paper, return_index=True)
    return papers, [v[first] for v in values]


def method_distances(run_dir, sets, methods, variant):
    """Mean over ``sets`` of the RMSDs between the methods' paper scores and the true scores.

    Per set: the paper scores of every method (``X_paper`` of ``equate/<variant>/adjusted.csv``)
    and ``TRUE`` (``truegen/true_scores.csv``) on the papers they share; the RMSD of each pair;
    then the arithmetic mean over the sets that have every method.  Returns
    ``(labels, matrix, n_sets)`` or ``None`` when no set has the files.
    """
    from ..study.files import ADJUSTED
    from ..vocabulary import adjusted_columns

    run_dir = Path(run_dir)
    labels = [*methods, "TRUE"]
    columns = adjusted_columns(methods)[1::2]   # X_paper
    total, n = np.zeros((len(labels), len(labels))), 0
    for code in sets:
        base = run_dir / code
        apath, tpath = base / "equate" / variant / ADJUSTED, base / "truegen" / "true_scores.csv"
        if not tpath.exists() or not apath.exists():
            continue
        with open(apath, encoding="utf-8") as fh:
            if not set(columns) <= set(fh.readline().strip().split(",")):
                continue   # a method not run on this set (the matrix methods on one-rater sets)
        papers_a, adjusted = _read_paper_scores(apath, columns)
        papers_t, (true,) = _read_paper_scores(tpath, ["true_score"])
        cols = [(papers_a, v) for v in adjusted] + [(papers_t, true)]
        papers = functools.reduce(np.intersect1d, (p for p, _ in cols))
        if not papers.size:
            continue
        # the papers in the order of their numbers as text (1, 10, 100, ...), the order the
        # sums have always run in, so the mean RMSDs keep their last bits
        papers = papers[np.argsort(papers.astype(str), kind="stable")]
        x = np.array([v[np.searchsorted(p, papers)] for p, v in cols])
        total += rmsd_matrix(x)
        n += 1
    if n == 0:
        return None
    return labels, total / n, n


_TABLE_EXTS = (".md", ".csv", ".tex")

def _prune(out, keep, subs):
    """Remove report files a previous build left that this one did not write (so a committed
    ``results/`` never keeps a stale table or figure).  Only files in the report's own
    subfolders whose names match :data:`OWN_NAMES` (names the report itself writes); any
    other file there is left alone."""
    for sub in subs:
        folder = out / sub
        if not folder.is_dir():
            continue
        for p in folder.iterdir():
            if p.is_file() and OWN_NAMES[sub].fullmatch(p.name) and f"{sub}/{p.name}" not in keep:
                p.unlink()


def _say(quiet, msg):
    if not quiet:
        print(msg, file=sys.stderr)


def _refuse_out(run_dir: Path, out_dir: Path, outs) -> None:
    """An :class:`InputError` where writing the report into ``out_dir`` (its variants' folders ``outs``) could
    change a file not the report's: ``out_dir`` the run folder, a folder holding it or one in a stage folder
    of the run (a tester's ``--out RUN/score`` wrote ``report.md`` and ``tables/`` among the score stage's
    files), or a file; or a variant's folder that is no report's (no :data:`MARK`, no ``report.md`` of a
    report's) and holds a file the report would write over or prune (:func:`.vocabulary.own_report_files`: a
    researcher's own ``report.md`` was written over, and files named like the report's tables pruned as
    stale).  Files of other names are left alone wherever they are."""
    run_r = run_dir.resolve()
    mine = f"give the report a folder of its own (the default is {run_dir / 'report'})"
    for out in [out_dir, *outs]:   # (a variant's folder too: a link there to RUN/score put the report into it)
        out_r = out.resolve()
        if out_r == run_r or out_r in run_r.parents:
            raise InputError(f"{'is the run folder' if out_r == run_r else 'holds the run'} {run_dir}"
                             f"{' itself' if out_r == run_r else ''}: {mine}", out)
        if run_r in out_r.parents:
            top = run_r / out_r.relative_to(run_r).parts[0]
            if top.name != "report" and (top.is_file() or next(top.rglob("manifest.json"), None) is not None):
                raise InputError(f"is in {top.name}/, a folder of the run's stages, whose files the stages write and "
                                 f"check: {mine}", out)
    for out in [out_dir, *outs]:
        if out.exists() and not out.is_dir():
            raise InputError(f"is a file, not a folder: {mine}", out)
    for out in outs:
        theirs = [] if _is_report(out) else [p for p in own_report_files(out) if p.name != MARK]
        if theirs:
            shown = ", ".join(p.relative_to(out).as_posix() for p in theirs[:4])
            more = f" and {len(theirs) - 4} more" if len(theirs) > 4 else ""
            raise InputError(f"holds {shown}{more}, which the report would write over or remove, and no report of "
                             "ratercal's: give a new or empty --out folder, so that no file of yours is lost", out)


def _is_report(out: Path) -> bool:
    """Whether the folder ``out`` is a report's: its :data:`MARK`, or a ``report.md`` a report wrote (before the
    mark was)."""
    if (out / MARK).is_file():
        return True
    try:
        with open(out / "report.md", encoding="utf-8") as fh:
            return re.match(rf"{re.escape(INDEX_TITLE)}variant `[^`]+`$", fh.readline().rstrip("\n")) is not None
    except (OSError, UnicodeDecodeError):
        return False


def _build_variant(run_dir, out, d, quiet, batch, draw=True, jobs=None):
    """One variant's report; its figures are noted in ``batch`` (a :class:`figures.FigureBatch`)
    and drawn together at the end."""
    figs = []
    if draw:   # the models' figures first: drawn in another process while the tables are built
        figs = _model_figures(out / "figures", d, batch, jobs)
    tables = all_tables(d)
    comps = comparisons(tables) if is_denny_run(d) else []
    md_tables = []
    for t in tables:
        md_tables.append(render.write_table(out / "tables", t))
    md_comps = [render.write_table(out / "comparison", c.regenerated, c) for c in comps]
    _say(quiet, f"report: {len(tables)} tables, {len(comps)} comparisons -> {out}")

    if not draw:  # tables only: earlier figures are left in place
        return _write_index(out, d, tables, comps, md_tables, md_comps, "", figs, drawn=False)
    fdir = out / "figures"
    multi = [s for s in d.sets if d.cells[s].raters_per_paper != "1"]
    if multi:
        for crit, label in (("rmse", "RMSE"), ("maxdiff", "maximum difference")):
            t = facet_table(d, crit)
            figs.append((f"{label} by facet and method",
                         batch.add(figures.facet_figure, fdir / f"{crit}_by_facet.png", t,
                                   f"{t.title.split('. ', 1)[1]}")))
    mds_md = ""
    dist = method_distances(run_dir, multi, d.methods, d.variant) if multi else None
    if dist is not None:
        labels, mat, n = dist
        t = Table("rmsd_between_methods", f"Mean RMSD between the methods' paper scores ({n} multi-rater sets)",
                  ("method",), tuple(labels), [(lab,) for lab in labels], mat)
        mds_md = render.write_table(out / "tables", t)
        k = len(labels) - 1  # the map leaves TRUE out, as Figures 7-10 (real data) had none
        coords, lam = classical_mds(mat[:k, :k])
        figs.append(("Map of the methods: classical MDS of the mean RMSDs (as Figures 7-10)",
                     batch.add(figures.mds_figure, fdir / "mds_methods.png", labels[:k], coords,
                               f"Classical MDS of mean RMSDs between the methods' paper scores "
                               f"({n} multi-rater sets)", lam)))
    if comps:
        figs.append(("Published against regenerated values",
                     batch.add(figures.published_vs_regenerated_figure, fdir / "published_vs_regenerated.png",
                               comps)))
    batch.draw(jobs)
    return _write_index(out, d, tables, comps, md_tables, md_comps, mds_md, figs)


def _model_figures(fdir, d, batch, jobs):
    """Note Figures 3-5 (the Rasch extension, the PCM's category probabilities and expected
    scores of the nine raters at the run's scales) in ``batch`` and start drawing Figures 4 and 5
    in another process (:meth:`figures.FigureBatch.start`): they need nothing the report computes.
    Figure 3, the smallest, is drawn here with the figures of the results, which evens out the
    two cores' work (:meth:`figures.FigureBatch.draw`).  Returns ``[(caption, path)]`` in the
    report's order."""
    scales = sorted({d.cells[s].max_score for s in d.sets}) or [5, 9]
    figs = []
    for m in scales:
        figs.append((f"Figure 4. PCM category probabilities of the nine raters, scores 0-{m}",
                     batch.add(figures.pcm_probability_figure, fdir / f"fig04_pcm_probabilities_M{m}.png", m)))
    figs.append(("Figure 5. Expected-score functions of the nine raters (PCM and sequential)",
                 batch.add(figures.expected_score_figure, fdir / "fig05_expected_scores.png", tuple(scales))))
    batch.start(jobs)
    return [("Figure 3. Rasch extension expected-score curves",
             batch.add(figures.rasch_extension_figure, fdir / "fig03_rasch_extension.png"))] + figs


def _write_index(out, d, tables, comps, md_tables, md_comps, mds_md, figs, drawn=True):
    by_name = {c.name: c for c in comps}
    lines = [f"{INDEX_TITLE}variant `{d.variant}`", "",
             f"{len(d.sets)} data sets, methods {', '.join(d.methods)}.", ""]
    if comps:
        n_rep = sum(c.n_reproduced for c in comps)
        n_pub = sum(c.n_published for c in comps)
        lines += ["## Reproduction of the published tables", "",
                  "| table | reproduced |", "|---|---|"]
        lines += [f"| {c.regenerated.title.split('.')[0]} (`{c.name}`) | {c.summary()} |" for c in comps]
        lines += ["", f"**All compared tables: {n_rep} of {n_pub} published values reproduced.**", ""]
        for key, what in ((("table07_rmse", "table12_maxdiff"), "Tables 7 and 12 (the study's result)"),
                          (("table07_rmse", "table12_maxdiff", "table14_one_rater_rmse"),
                           "Tables 7, 12 and 14 (typed from the data folder)")):
            n_k = sum(by_name[k].n_reproduced for k in key if k in by_name)
            m_k = sum(by_name[k].n_published for k in key if k in by_name)
            lines += [f"{what}: **{n_k} of {m_k} published values reproduced.**", ""]
        lines += ["Facet means of the *published* per-set tables (the averaging rule alone, without "
                  "the run's per-set misses):", ""]
        for c, src in facet_tables_from_published():
            lines.append(f"- {c.name} from the published {src}: {c.summary()}")
        lines += ["", "## Published beside regenerated", ""] + md_comps
    lines += ["## Regenerated tables", ""] + md_tables
    if mds_md:
        lines += [mds_md]
    lines += ["## Figures", ""]
    for caption, path in figs:
        lines += [f"### {caption}", "", f"![{caption}]({path.relative_to(out).as_posix()})", ""]
    write_text(out / "report.md", "\n".join(lines).rstrip() + "\n")
    keep = {f"tables/{t.name}{ext}" for t in tables for ext in _TABLE_EXTS}
    keep |= {f"tables/rmsd_between_methods{ext}" for ext in _TABLE_EXTS if mds_md}
    keep |= {f"comparison/{c.name}{ext}" for c in comps for ext in _TABLE_EXTS}
    keep |= {p.relative_to(out).as_posix() for _, p in figs}
    _prune(out, keep, ("tables", "comparison", "figures") if drawn else ("tables", "comparison"))
    return {"tables": [t.name for t in tables], "comparisons": {c.name: (c.n_reproduced, c.n_published)
                                                               for c in comps},
            "figures": [p.relative_to(out).as_posix() for _, p in figs]}


def build_report(run_dir, out_dir, quiet=False, draw=True, jobs=None):
    """Write the report of ``run_dir`` into ``out_dir`` (``draw=False``: tables only; the figures
    drawn in ``jobs`` processes, default one per core, at most 2); return a summary per variant:
    ``{variant: {"tables": [...], "comparisons": {name: (reproduced, published)}, "figures": [...]}}``.
    """
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    data = read_scores(run_dir)
    if not data:
        raise InputError("no rows", run_dir / "score" / "scores.csv")
    summary = {}
    outs = {variant: out_dir if len(data) == 1 else out_dir / variant for variant in data}
    _refuse_out(run_dir, out_dir, list(outs.values()))
    for out in outs.values():
        write_text(out / MARK, "ratercal report folder: `ratercal report` writes and prunes its files here\n")
    with figures.FigureBatch() as batch:   # a report failed half-way stops the figures it started
        for variant, d in data.items():
            out = outs[variant]
            summary[variant] = _build_variant(run_dir, out, d, quiet, batch, draw, jobs)
    return summary
