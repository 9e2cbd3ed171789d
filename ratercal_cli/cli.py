"""The ``ratercal`` command line: the group; its commands live in :mod:`ratercal_cli.commands`, one module
per group (study stages, practitioners' files, report, Monte Carlo)."""

from __future__ import annotations

import click

from .commands import Group


def _print_version(ctx, param, value):
    """``--version``: as click's version option prints it, the version read only then."""
    if value and not ctx.resilient_parsing:
        from . import __version__

        click.echo(f"ratercal, version {__version__}")
        ctx.exit()


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def cli():
    """Rater calibration: regenerate Denny (1990) and adjust real ratings.

    \b
    The study:      ratercal simulate CONFIG --out RUN; ratercal adjust RUN;
                    ratercal score RUN; ratercal report RUN
    Stage by stage: rater -> pargen -> truegen -> obsgen -> adjust -> score
    Your data:      ratercal check FILE; ratercal adjust FILE; ratercal compare FILE
    In a browser:   ratercal app
    """


def _add_commands():
    from .commands import app, facets, montecarlo, practice, report, study

    for command in (*study.COMMANDS, practice.adjust, practice.check, practice.compare, report.report,
                    montecarlo.montecarlo, facets.import_facets, app.app):
        cli.add_command(command)


_add_commands()


def main():
    """The console script."""
    cli()


if __name__ == "__main__":
    main()
