"""``ratercal montecarlo CONFIG --out RUN``: the replicated study, resumable, serial or parallel."""

from __future__ import annotations

from pathlib import Path

import click

from . import command


@command("montecarlo")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", "-o", "out", required=True, type=click.Path(file_okay=False), help="The run folder.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Local worker processes.")
@click.option("--scheduler", metavar="ADDR", default=None,
              help="Run on an existing Dask cluster, e.g. tcp://HOST:8786 (needs 'distributed').")
@click.option("--replications", "-r", type=click.IntRange(min=1), default=None,
              help="Replications per cell (default: the config's).")
@click.option("--chunk-size", type=click.IntRange(min=1), default=None,
              help="Replications per task and chunk file (default 25).")
@click.option("--cell", "cell", metavar="CODE", default=None,
              help="Run this set alone (e.g. 2551; with -r R its R replications); with --replication: make "
                   "that one replication alone.")
@click.option("--replication", type=click.IntRange(min=0), default=None, help="The replication number (0-based).")
@click.option("--keep-data", is_flag=True, help="With --cell/--replication: also write the ratings, true and "
                                                "adjusted scores.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def montecarlo(config, out, jobs, scheduler, replications, chunk_size, cell, replication, keep_data, quiet):
    """R replications of every cell of CONFIG, every method and variant, scored against the truth.

    \b
    Writes RUN/montecarlo/: chunks/<set>/r<start>-<stop>.csv (per replication,
    written as each task finishes: a killed run resumes without redoing them),
    replications.csv, summary.csv (means with Monte Carlo standard errors, ranks,
    decision accuracy), paired.csv (paired differences with 95% intervals) and
    summary.md.  Serial, --jobs N or --scheduler ADDR give byte-identical files.
    """
    from ..config import load_config
    from ..errors import InputError
    from ..montecarlo.run import MonteCarloRun, run_single
    from ..montecarlo.spec import DEFAULT_CHUNK_SIZE

    cfg = load_config(config)
    if replication is not None and cell is None:
        raise InputError("--replication needs --cell", field="--replication")
    if keep_data and replication is None:
        raise InputError("--keep-data needs --cell and --replication (only one data set is kept)",
                         field="--keep-data")
    if replication is not None:
        folder, rep = run_single(cfg, out, cell, replication, keep_data=keep_data)
        if not quiet:
            click.echo(f"montecarlo: set {cfg.cell(cell).code} replication {replication}: "
                       f"{len(rep.rows)} method rows in {folder}", err=True)
        return
    run = MonteCarloRun(cfg, out, replications=replications, chunk_size=chunk_size or DEFAULT_CHUNK_SIZE,
                        cells=None if cell is None else [cell], jobs=1 if scheduler else jobs)
    with run.lock():        # one run at a time in RUN, from the first chunk to the last summary
        done, resumed = run.run(jobs=jobs, scheduler=scheduler, quiet=quiet)
        paths = run.summarise()
    total = run.replications * len(run.cells)
    for (variant, shrinkage, method), n in sorted(run.failures.items()):   # said even with --quiet
        if shrinkage == "none":   # a shrunk level fails where its method did
            click.echo(f"warning: montecarlo: {method} ({variant}) failed on {n} of {total} data set(s)"
                       f"{': it has no results' if n >= total else ''}; the reasons are in the replications' "
                       "error column, the counts under 'Failed fits' in summary.md", err=True)
    if not quiet:
        click.echo(f"montecarlo: {run.replications} replication(s) x {len(run.cells)} set(s); "
                   f"{done} chunk(s) computed, {resumed} resumed; summaries in {Path(out) / 'montecarlo'}",
                   err=True)
    return paths


if __name__ == "__main__":  # ``python -m ratercal_cli.commands.montecarlo`` (tests run it in a subprocess)
    montecarlo()
