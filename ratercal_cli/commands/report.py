"""``ratercal report RUN [--out DIR]``: tables and figures of a scored run."""

from __future__ import annotations

from pathlib import Path

import click

from . import command


@command("report")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="DIR",
              help="Output folder (default: RUN/report).  A stale file of the report's own in "
                   "DIR/tables, DIR/comparison or DIR/figures (named like table*.md/.csv/.tex, "
                   "fig*.png, *_by_facet.png, ...) that this build does not write is deleted; "
                   "other files are left alone.  Refused: the run folder, a folder holding it or one of its "
                   "stage folders, and a folder that is no report's (its mark, .ratercal-report, is written "
                   "first) holding a report.md or such a table or figure of another's.")
@click.option("--quiet", "-q", is_flag=True, help="No progress messages.")
def report(run, out, quiet):
    """Turn RUN/score/*.csv into the dissertation's tables (Markdown, CSV, LaTeX) and figures (PNG).

    A faithful run of the Denny (1990) design also gets each published table beside the
    regenerated one, differences marked, with "N of M published values reproduced".
    """
    from ..io import folder_lock
    from ..report import build_report
    from ..study.score import check_scores_current

    out = out if out is not None else run / "report"
    with folder_lock(run, "report"):   # no stage rewrites RUN while the report reads it (or writes into it)
        check_scores_current(run)       # the scores are score's, of the run's current files
        summary = build_report(run, out, quiet=quiet)
    for variant, s in summary.items():
        for name, (n, m) in s["comparisons"].items():
            click.echo(f"{variant} {name}: {n} of {m} published values reproduced")
    click.echo(f"report written to {out}")
