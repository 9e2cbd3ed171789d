"""``ratercal rater | pargen | truegen | obsgen | simulate | score``: the study's stages on a run folder.

``adjust RUN`` (the equate stage) shares its command with a practitioner's ratings file
(:mod:`ratercal_cli.commands.practice`), ``report RUN`` is :mod:`ratercal_cli.commands.report`.
"""

from __future__ import annotations

import click

from ..vocabulary import VARIANTS
from . import command

run_option = click.argument("run", type=click.Path(file_okay=False))
quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
force_option = click.option("--force", is_flag=True, help="Redo stages even when up to date (simulate, rater: "
                                                            "also replace the run of another config).")
sets_option = click.option("--set", "sets", multiple=True, metavar="CODE",
                           help="Only this set (e.g. 0551 or 2+551); repeatable.")


@command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", "-o", "out", required=True, type=click.Path(file_okay=False), help="The run folder.")
@force_option
def rater(config, out, force):
    """Resolve the design of CONFIG into RUN/rater/design.json."""
    from ..study import Run
    from ..study.simulate import run_stage

    with Run.creating(config, out, "rater", replace=force) as run:
        run_stage(run, "rater", force=force)


def _stage_command(name, doc):
    @command(name=name, help=doc)
    @run_option
    @sets_option
    @force_option
    @quiet_option
    def stage(run, sets, force, quiet):
        from ..study import Run
        from ..study.simulate import run_stage

        with Run.writing(run, name) as opened:
            r = run_stage(opened, name, codes=sets, force=force, quiet=quiet)
        if not quiet:
            click.echo(f"{name}: {len(r.ran)} stage(s) run, {len(r.done) - len(r.ran)} up to date", err=True)

    return stage


pargen = _stage_command("pargen", "Paper qualities: RUN/<set>/pargen/papers.csv (runs what it needs first).")
truegen = _stage_command("truegen", "Rater steps and true scores: RUN/<set>/truegen/.")
obsgen = _stage_command("obsgen", "Observed ratings: RUN/<set>/obsgen/ratings.csv.")


@command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", "-o", "out", required=True, type=click.Path(file_okay=False), help="The run folder.")
@sets_option
@force_option
@quiet_option
def simulate(config, out, sets, force, quiet):
    """Make every data set of CONFIG: rater, pargen, truegen, obsgen.

    A folder holding the run of another config is refused; --force replaces it."""
    from ..study import Run
    from ..study.simulate import run_stage, write_run_manifest

    with Run.creating(config, out, "simulate", replace=force) as run:
        r = run_stage(run, "obsgen", codes=sets, force=force, quiet=quiet)
        write_run_manifest(run)
    if not quiet:
        click.echo(f"simulate: {len(run.cells(sets))} set(s) in {out}; {len(r.ran)} stage(s) run", err=True)


@command()
@run_option
@sets_option
@click.option("--variant", "variants", multiple=True, type=click.Choice(VARIANTS),
              help="Score this variant (repeatable; default: every variant the run has adjusted).")
@force_option
@quiet_option
def score(run, sets, variants, force, quiet):
    """Criteria: RUN/score/scores.csv and RUN/score/rater_rmse.csv, for every variant adjusted."""
    from ..study import Run
    from ..study.score import run_score

    with Run.writing(run, "score") as opened:
        r = run_score(opened, codes=sets, variants=variants, force=force, quiet=quiet)
    if not quiet:
        click.echo(f"score: {len(r.ran)} stage(s) run", err=True)


COMMANDS = (rater, pargen, truegen, obsgen, simulate, score)
