"""The ``ratercal`` command line: the group; its commands live in :mod:`ratercal_cli.commands`, one module
per group (study stages, practitioners' files, report, Monte Carlo)."""

from __future__ import annotations

import click

from . import __version__
from .commands import Group


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ratercal")
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
