"""The ``ratercal`` command line: parsing and calling, no logic of its own."""

from __future__ import annotations

import click

from . import __version__
from .vocabulary import VARIANTS


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ratercal")
def cli():
    """Rater calibration: regenerate Denny (1990) and adjust real ratings.

    \b
    The study:      ratercal simulate CONFIG --out RUN; ratercal adjust RUN;
                    ratercal score RUN; ratercal report RUN
    Stage by stage: rater -> pargen -> truegen -> obsgen -> adjust -> score
    Your data:      ratercal check FILE; ratercal adjust FILE; ratercal compare FILE
    """


run_option = click.argument("run", type=click.Path(file_okay=False))
quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
force_option = click.option("--force", is_flag=True, help="Redo stages even when up to date.")
sets_option = click.option("--set", "sets", multiple=True, metavar="CODE",
                           help="Only this set (e.g. 0551 or 2+551); repeatable.")


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", "-o", "out", required=True, type=click.Path(file_okay=False), help="The run folder.")
@force_option
def rater(config, out, force):
    """Resolve the design of CONFIG into RUN/rater/design.json."""
    from .stages import Run
    from .stages.simulate import run_stage

    run = Run.create(config, out)
    run_stage(run, "rater", force=force)


def _stage_command(name, doc):
    @cli.command(name=name, help=doc)
    @run_option
    @sets_option
    @force_option
    @quiet_option
    def command(run, sets, force, quiet):
        from .stages import Run
        from .stages.simulate import run_stage

        r = run_stage(Run(run), name, codes=sets, force=force, quiet=quiet)
        if not quiet:
            click.echo(f"{name}: {len(r.ran)} stage(s) run, {len(r.done) - len(r.ran)} up to date", err=True)

    return command


_stage_command("pargen", "Paper qualities: RUN/<set>/pargen/papers.csv (runs what it needs first).")
_stage_command("truegen", "Rater steps and true scores: RUN/<set>/truegen/.")
_stage_command("obsgen", "Observed ratings: RUN/<set>/obsgen/ratings.csv.")


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", "-o", "out", required=True, type=click.Path(file_okay=False), help="The run folder.")
@sets_option
@force_option
@quiet_option
def simulate(config, out, sets, force, quiet):
    """Make every data set of CONFIG: rater, pargen, truegen, obsgen."""
    from .stages import Run
    from .stages.simulate import run_stage

    from .stages.simulate import write_run_manifest

    run = Run.create(config, out)
    r = run_stage(run, "obsgen", codes=sets, force=force, quiet=quiet)
    write_run_manifest(run)
    if not quiet:
        click.echo(f"simulate: {len(run.cells(sets))} set(s) in {out}; {len(r.ran)} stage(s) run", err=True)


@cli.command()
@run_option
@sets_option
@click.option("--variant", "variants", multiple=True, type=click.Choice(VARIANTS),
              help="Score this variant (repeatable; default: every variant the run has adjusted).")
@force_option
@quiet_option
def score(run, sets, variants, force, quiet):
    """Criteria: RUN/score/scores.csv and RUN/score/rater_rmse.csv, for every variant adjusted."""
    from .stages import Run
    from .stages.score import run_score

    r = run_score(Run(run), codes=sets, variants=variants, force=force, quiet=quiet)
    if not quiet:
        click.echo(f"score: {len(r.ran)} stage(s) run", err=True)


def _add_commands():
    from .commands.montecarlo import montecarlo
    from .commands.practice import adjust, check, compare
    from .commands.report import report

    for command in (adjust, check, compare, report, montecarlo):
        cli.add_command(command)


_add_commands()


def main():
    cli()


if __name__ == "__main__":
    main()
