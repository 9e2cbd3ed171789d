"""The ``ratercal`` command line: the group; its commands live in :mod:`ratercal_cli.commands`, one module
per group (study stages, practitioners' files, report, Monte Carlo)."""

from __future__ import annotations

import sys

import click

from . import __version__


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


def _add_commands():
    from .commands import facets, montecarlo, practice, report, study

    for command in (*study.COMMANDS, practice.adjust, practice.check, practice.compare, report.report,
                    montecarlo.montecarlo, facets.import_facets):
        cli.add_command(command)


_add_commands()


def main():
    """The console script: runs the command, then leaves the process at once (:func:`_leave`)."""
    try:
        cli()
    except SystemExit as exc:
        _leave(exc.code)
    _leave(0)


def _leave(code):
    """End the process with exit status ``code``.  When the command's work is over and nothing else
    runs (one thread), the exit handlers run, the standard streams are flushed and the process
    ends without Python tearing down numpy's, scipy's and matplotlib's modules one by one, which
    takes 20-40 ms a command on a 2-core machine; every file ratercal writes is closed (and
    renamed into place) by then.  Otherwise (threads alive, a status that is not a number)
    the usual exit."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1 or not (code is None or isinstance(code, int)):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe (ratercal ... | head) or stream
            pass
    os._exit(code or 0)


if __name__ == "__main__":
    main()
